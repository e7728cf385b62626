// The specialize lesson's CUDA C twins: the same dots as
// kernels-gpu/src/specialize.rs, written as a CUDA C programmer would, and
// compiled by NVRTC for the GPU at hand. THREADS_PER_BLOCK comes in as a
// #define from the host.
//
// Layout: `count` dots of length N; element k of dot v is x[k * count + v],
// so for each k a warp reads 32 consecutive floats of each input.

// ANCHOR: dot_specialized
// One dot, its length a template parameter: every N used below becomes a
// separate body with the loop fully unrolled. `sum += a * b` is contracted
// to one fma.rn.f32 per term (NVRTC's default --fmad=true), the order the
// Rust kernels write out with device::math::fma.
// Memory: coalesced 4-byte loads on the read-only path; 8 N + 4 bytes per dot.
// Launch assumption: gridDim.x * blockDim.x >= count.
template <int N>
__device__ __forceinline__ void dot_specialized(const float* __restrict__ x,
                                                const float* __restrict__ y,
                                                float* __restrict__ out,
                                                unsigned long long count) {
    unsigned long long v = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= count) return;
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < N; ++k) {
        unsigned long long i = (unsigned long long)k * count + v;
        sum += x[i] * y[i];
    }
    out[v] = sum;
}
// ANCHOR_END: dot_specialized

// ANCHOR: exports
// One exported twin per length; the host defines SPECIALIZED_INSTANCES as
// SPECIALIZED(2) SPECIALIZED(4) ... from the one list of lengths.
#define SPECIALIZED(N)                                                                              \
    extern "C" __global__ void dot_specialized_##N(const float* __restrict__ x,                   \
                                                   const float* __restrict__ y,                   \
                                                   float* __restrict__ out, unsigned long long count) { \
        dot_specialized<N>(x, y, out, count);                                                     \
    }
SPECIALIZED_INSTANCES
// ANCHOR_END: exports

// The same dot with its length a kernel argument: one body for every n.
// Unrolled by 8 with a remainder loop, the shape rustc's LLVM gives the
// Rust twin on its own, so the two compare like for like.
// Memory: as above, 8 n + 4 bytes per dot.
// Launch assumption: gridDim.x * blockDim.x >= count.
// ANCHOR: dot_runtime
extern "C" __global__ void dot_runtime(const float* __restrict__ x, const float* __restrict__ y,
                                       float* __restrict__ out, unsigned long long count,
                                       unsigned int n) {
    unsigned long long v = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= count) return;
    float sum = 0.0f;
#pragma unroll 8
    for (unsigned int k = 0; k < n; ++k) {
        unsigned long long i = (unsigned long long)k * count + v;
        sum += x[i] * y[i];
    }
    out[v] = sum;
}
// ANCHOR_END: dot_runtime
