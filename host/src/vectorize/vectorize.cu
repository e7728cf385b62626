// The vectorize lesson's CUDA C twins: the same adds as
// kernels-gpu/src/vectorize.rs, written as a CUDA C programmer would, and
// compiled by NVRTC for the GPU at hand. THREADS_PER_BLOCK comes in as a
// #define from the host.
//
// Halves: NVRTC as shipped on PyPI has no cuda_fp16.h on its include path,
// so a half here is its 16 bits, and the adds are the PTX instructions that
// cuda_fp16.h's __hadd and __hadd2 compile to (add.rn.f16, add.rn.f16x2).
typedef unsigned short half_bits;

__device__ __forceinline__ unsigned int hadd2(unsigned int a, unsigned int b) {
    unsigned int r;
    asm("add.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ half_bits hadd(half_bits a, half_bits b) {
    half_bits r;
    asm("add.rn.f16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b));
    return r;
}

// ANCHOR: vector_types
// A 16-byte vector of T: its width is derived from the types, so a kernel
// retyped from float4 to double2 gets width 2, not a stale 4.
template <typename V, typename T>
struct Width {
    static constexpr unsigned long long value = sizeof(V) / sizeof(T);
};

// Eight halves as four half2 words, CUDA's packing (element 2k low).
struct __align__(16) half8 {
    unsigned int h[4];
};
// ANCHOR_END: vector_types

__device__ __forceinline__ float4 add(float4 a, float4 b) {
    return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}
__device__ __forceinline__ double2 add(double2 a, double2 b) {
    return make_double2(a.x + b.x, a.y + b.y);
}
__device__ __forceinline__ half8 add(half8 a, half8 b) {
    half8 r;
    for (int k = 0; k < 4; ++k) r.h[k] = hadd2(a.h[k], b.h[k]);
    return r;
}
__device__ __forceinline__ float add1(float a, float b) { return a + b; }
__device__ __forceinline__ double add1(double a, double b) { return a + b; }
__device__ __forceinline__ half_bits add1(half_bits a, half_bits b) { return hadd(a, b); }

// out[i] = a[i] + b[i]: thread t < n / W adds one 16-byte vector (one
// 128-bit load per input, one 128-bit store); the first n % W threads
// also add one leftover element each.
// Memory: coalesced LDG.E.128 / STG.E.128; 3 * sizeof(T) bytes per element.
// Launch assumption: gridDim.x * blockDim.x >= max(n / W, n % W).
// ANCHOR: add_vec16
template <typename V, typename T>
__device__ void add_vec16(const T* a, const T* b, T* out, unsigned long long n) {
    const unsigned long long w = Width<V, T>::value;
    unsigned long long vectors = n / w;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < vectors)
        reinterpret_cast<V*>(out)[i] = add(reinterpret_cast<const V*>(a)[i], reinterpret_cast<const V*>(b)[i]);
    unsigned long long tail = n - vectors * w;
    if (i < tail) {
        unsigned long long j = vectors * w + i;
        out[j] = add1(a[j], b[j]);
    }
}
// ANCHOR_END: add_vec16

// out[i] = a[i] + b[i], one element per thread.
// Memory: coalesced element-wide loads and stores.
// Launch assumption: gridDim.x * blockDim.x >= n.
// ANCHOR: add_scalar
template <typename T>
__device__ void add_scalar(const T* a, const T* b, T* out, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = add1(a[i], b[i]);
}
// ANCHOR_END: add_scalar

extern "C" __global__ void add_vec16_f32(const float* a, const float* b, float* out, unsigned long long n) {
    add_vec16<float4, float>(a, b, out, n);
}
extern "C" __global__ void add_vec16_f64(const double* a, const double* b, double* out, unsigned long long n) {
    add_vec16<double2, double>(a, b, out, n);
}
extern "C" __global__ void add_vec16_f16(const half_bits* a, const half_bits* b, half_bits* out, unsigned long long n) {
    add_vec16<half8, half_bits>(a, b, out, n);
}
extern "C" __global__ void add_scalar_f32(const float* a, const float* b, float* out, unsigned long long n) {
    add_scalar<float>(a, b, out, n);
}
extern "C" __global__ void add_scalar_f64(const double* a, const double* b, double* out, unsigned long long n) {
    add_scalar<double>(a, b, out, n);
}
extern "C" __global__ void add_scalar_f16(const half_bits* a, const half_bits* b, half_bits* out, unsigned long long n) {
    add_scalar<half_bits>(a, b, out, n);
}
