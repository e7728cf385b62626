// The fuse lesson's CUDA C twins: the same five kernels as
// kernels-gpu/src/fuse.rs, written as a CUDA C programmer would and
// compiled by NVRTC for the GPU at hand.
//
// Contraction: nvcc and NVRTC fuse a * b + c into one FMA by default
// (--fmad=true). The unfused pipeline rounds the product when it stores t1,
// so a fused kernel that must give the same bits cannot be contracted: it
// multiplies with __fmul_rn, an intrinsic the compiler never merges into an
// FMA. The _fma kernel asks for the single rounding explicitly.

// ANCHOR: helpers
__device__ __forceinline__ float relu(float z) { return z > 0.0f ? z : 0.0f; }

__device__ __forceinline__ bool element(unsigned long long n, unsigned long long* i) {
    *i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    return *i < n;
}
// ANCHOR_END: helpers

// ANCHOR: stage_mul
// Stage 1 of 3: t1[i] = a[i] * b[i].
// Memory: coalesced; two 4-byte reads and one write per element (12 bytes).
// Launch assumption: gridDim.x * blockDim.x >= n.
extern "C" __global__ void unfused_mul(const float* a, const float* b, float* t1,
                                       unsigned long long n) {
    unsigned long long i;
    if (element(n, &i)) t1[i] = a[i] * b[i];
}
// ANCHOR_END: stage_mul

// Stage 2 of 3: t2[i] = t1[i] + c[i].
// Memory: coalesced; two 4-byte reads and one write per element (12 bytes).
// Launch assumption: gridDim.x * blockDim.x >= n.
extern "C" __global__ void unfused_add(const float* t1, const float* c, float* t2,
                                       unsigned long long n) {
    unsigned long long i;
    if (element(n, &i)) t2[i] = t1[i] + c[i];
}

// Stage 3 of 3: y[i] = relu(t2[i]).
// Memory: coalesced; one 4-byte read and one write per element (8 bytes).
// Launch assumption: gridDim.x * blockDim.x >= n.
extern "C" __global__ void unfused_relu(const float* t2, float* y, unsigned long long n) {
    unsigned long long i;
    if (element(n, &i)) y[i] = relu(t2[i]);
}

// ANCHOR: fused
// y[i] = relu(a[i] * b[i] + c[i]) in one pass, the product rounded before
// the add (see the note on contraction above): the unfused result, bit for
// bit.
// Memory: coalesced; three 4-byte reads and one write per element (16 bytes).
// Launch assumption: gridDim.x * blockDim.x >= n.
extern "C" __global__ void fused_mul_add_relu(const float* a, const float* b, const float* c,
                                              float* y, unsigned long long n) {
    unsigned long long i;
    if (element(n, &i)) y[i] = relu(__fmul_rn(a[i], b[i]) + c[i]);
}
// ANCHOR_END: fused

// ANCHOR: fused_fma
// y[i] = relu(fma(a[i], b[i], c[i])): one rounding, a different result
// from the pipeline's wherever the exact product needs more than 24 bits.
// Memory: as fused_mul_add_relu, 16 bytes per element.
// Launch assumption: gridDim.x * blockDim.x >= n.
extern "C" __global__ void fused_mul_add_relu_fma(const float* a, const float* b, const float* c,
                                                  float* y, unsigned long long n) {
    unsigned long long i;
    if (element(n, &i)) y[i] = relu(__fmaf_rn(a[i], b[i], c[i]));
}
// ANCHOR_END: fused_fma
