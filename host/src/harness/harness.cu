// The harness lesson's CUDA C twin: the vector add the lesson times, as in
// kernels-gpu/src/harness.rs, compiled by NVRTC for the GPU at hand.
// THREADS_PER_BLOCK comes in as a #define from the host.

// ANCHOR: harness_add
// out[i] = a[i] + b[i], one element per thread.
// Memory: three coalesced 4-byte streams, the inputs on the read-only path
// (const __restrict__); 12 bytes per element.
// Launch assumption: gridDim.x * blockDim.x >= n.
extern "C" __global__ void harness_add(const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ out, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
// ANCHOR_END: harness_add
