// The unroll lesson's CUDA C twins: the same three adds as
// kernels-gpu/src/unroll.rs, written as a CUDA C programmer would and
// compiled by NVRTC for the GPU at hand. UNROLL comes in as a #define from
// the host, from the constant the Rust kernels use.

// out[i] = a[i] + b[i], one element per thread.
// Memory: three coalesced 4-byte streams; 12 bytes per element.
// Launch assumption: gridDim.x * blockDim.x >= n.
extern "C" __global__ void add_one_per_thread(const float* a, const float* b, float* out,
                                              unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

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
