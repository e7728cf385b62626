// The unroll lesson's CUDA C twins: the same four adds as
// kernels-gpu/src/unroll.rs, written as a CUDA C programmer would and
// compiled by NVRTC for the GPU at hand. UNROLL and VEC_WIDTH come in as
// #defines from the host, from the constants the Rust kernels use.

// out[i] = a[i] + b[i], one element per thread.
// Memory: three coalesced 4-byte streams; 12 bytes per element.
// Launch assumption: gridDim.x * blockDim.x >= n.
extern "C" __global__ void add_one_per_thread(const float* a, const float* b, float* out,
                                              unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

// ANCHOR: add_unrolled_4
// out[i] = a[i] + b[i], UNROLL consecutive elements per thread, each behind
// its own guard; #pragma unroll leaves no loop in the compiled body.
// Memory: a warp's k-th access reads floats 16 bytes apart (512 bytes
// spanned for 128 used); 12 bytes per element.
// Launch assumption: gridDim.x * blockDim.x * UNROLL >= n.
extern "C" __global__ void add_unrolled_4(const float* a, const float* b, float* out,
                                          unsigned long long n) {
    unsigned long long base =
        ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
#pragma unroll
    for (int lane = 0; lane < UNROLL; ++lane) {
        unsigned long long i = base + lane;
        if (i < n) out[i] = a[i] + b[i];
    }
}
// ANCHOR_END: add_unrolled_4

// ANCHOR: add_unrolled_4_coalesced
// out[i] = a[i] + b[i], UNROLL elements per thread one block width apart
// inside the block's chunk of blockDim.x * UNROLL elements.
// Memory: every warp access covers 128 contiguous bytes; 12 bytes per
// element.
// Launch assumption: gridDim.x * blockDim.x * UNROLL >= n.
extern "C" __global__ void add_unrolled_4_coalesced(const float* a, const float* b, float* out,
                                                    unsigned long long n) {
    unsigned long long width = blockDim.x;
    unsigned long long first = (unsigned long long)blockIdx.x * width * UNROLL + threadIdx.x;
#pragma unroll
    for (int lane = 0; lane < UNROLL; ++lane) {
        unsigned long long i = first + lane * width;
        if (i < n) out[i] = a[i] + b[i];
    }
}
// ANCHOR_END: add_unrolled_4_coalesced

// out[i] = a[i] + b[i], unrolled and vectorized: the buffers read as
// float4s, UNROLL float4s per thread one block width apart inside the
// block's chunk of blockDim.x * UNROLL float4s, each behind a guard against
// the n / VEC_WIDTH whole float4s; then the n % VEC_WIDTH floats left over,
// one per grid thread.
// Memory: coalesced 16-byte accesses (LDG.E.128 / STG.E.128), 512
// contiguous bytes per warp access; 12 bytes per element.
// Launch assumption: gridDim.x * blockDim.x * UNROLL >= n / VEC_WIDTH and
// gridDim.x * blockDim.x >= n % VEC_WIDTH.
// ANCHOR: add_unrolled_4_vec4
extern "C" __global__ void add_unrolled_4_vec4(const float* a, const float* b, float* out,
                                               unsigned long long n) {
    unsigned long long vectors = n / VEC_WIDTH;
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float4* out4 = reinterpret_cast<float4*>(out);
    unsigned long long width = blockDim.x;
    unsigned long long first = (unsigned long long)blockIdx.x * width * UNROLL + threadIdx.x;
#pragma unroll
    for (int lane = 0; lane < UNROLL; ++lane) {
        unsigned long long v = first + lane * width;
        if (v < vectors) {
            float4 x = a4[v];
            float4 y = b4[v];
            out4[v] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
        }
    }
    unsigned long long tail = n - vectors * VEC_WIDTH;
    unsigned long long g = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (g < tail) {
        unsigned long long i = vectors * VEC_WIDTH + g;
        out[i] = a[i] + b[i];
    }
}
// ANCHOR_END: add_unrolled_4_vec4
