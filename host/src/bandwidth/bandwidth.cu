// The bandwidth lesson's CUDA C twin: the device-to-device copy kernel of
// kernels-gpu/src/bandwidth.rs, written as a CUDA C programmer would and
// compiled by NVRTC for the GPU at hand. VECTOR_BYTES (16) comes in as a
// #define from the host.
//
// The lesson's other copies (host <-> device, pageable and pinned, and the
// copy engine's device-to-device) are driver calls, not kernels: they have
// no twin, and are the same calls from Rust as from C.

// ANCHOR: copy_vec16
// dst[i] = src[i] for i < n bytes: thread t < n / 16 copies bytes
// [16 t, 16 t + 16) with one 16-byte load and one 16-byte store; the first
// n % 16 threads also copy one tail byte each.
// Memory: coalesced 128-bit accesses (const __restrict__ source:
// LDG.E.128.CONSTANT; STG.E.128); each byte read once, written once: 2n
// bytes of DRAM traffic.
// Launch assumption: gridDim.x * blockDim.x >= max(n / 16, n % 16).
extern "C" __global__ void copy_vec16(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst,
                                      unsigned long long n) {
    unsigned long long vectors = n / VECTOR_BYTES;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < vectors) reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
    unsigned long long tail = n - vectors * VECTOR_BYTES;
    if (i < tail) {
        unsigned long long j = vectors * VECTOR_BYTES + i;
        dst[j] = src[j];
    }
}
// ANCHOR_END: copy_vec16
