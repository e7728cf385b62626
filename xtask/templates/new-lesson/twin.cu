// The __name__ lesson's CUDA C twin: the kernel of
// kernels-gpu/src/__name__.rs as a CUDA C programmer writes it, compiled by
// NVRTC for the GPU at hand when `lab __name__ --compare` runs. The host
// (host/src/__name__/mod.rs) puts the lesson's constants in front of this
// file as #defines (THREADS_PER_BLOCK). Each kernel here is extern "C", so
// its exported name is the Rust kernel's: the comparison pairs them by it.

// ANCHOR: __name__
// out[i] = a * x[i] + y[i], one element per thread. NVRTC contracts the
// multiply and the add into one FMA by default; the Rust kernel asks for the
// same instruction with the device layer's fma, so both round once.
// Memory: three coalesced streams, x and y on the read-only path
// (const __restrict__), out written; 12 bytes and 2 FLOP per element.
// Launch assumption: gridDim.x * blockDim.x >= n.
extern "C" __global__ void __name__(
    float a, const float* __restrict__ x, const float* __restrict__ y,
    float* __restrict__ out, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
// ANCHOR_END: __name__
