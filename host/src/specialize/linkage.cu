// The weak-symbol point of the specialize lesson (chapter 19.3): one
// translation unit of a pair. The host compiles this source twice with
// relocatable device code (-rdc), once with UNIT_KERNEL defined as unit_a
// and once as unit_b, so both units instantiate dot_linked<4> and
// dot_linked<2>; then links the two. With PLAIN_IN_EVERY_UNIT defined, each
// unit also defines the ordinary (non-template) function dot4_plain: the
// control, which the linker must refuse as defined twice.

// ANCHOR: units
// A dot of fixed length N, kept a function of its own (__noinline__) so its
// instantiations appear as symbols. Reads N floats of a and of b.
template <int N>
__device__ __noinline__ float dot_linked(const float* a, const float* b) {
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < N; ++k) sum += a[k] * b[k];
    return sum;
}

#ifdef PLAIN_IN_EVERY_UNIT
// The same dot at N = 4 without a template: an ordinary external function.
__device__ __noinline__ float dot4_plain(const float* a, const float* b) {
    float sum = 0.0f;
    for (int k = 0; k < 4; ++k) sum += a[k] * b[k];
    return sum;
}
#endif

// This unit's kernel: out[0] = a[0..4].b[0..4], out[1] = a[0..2].b[0..2]
// (and out[2] = out[0] again through dot4_plain in the control).
// Memory: reads 4 floats of a and of b, writes 2 or 3 floats.
// Launch assumption: one thread (a <<<1, 1>>> launch).
extern "C" __global__ void UNIT_KERNEL(const float* a, const float* b, float* out) {
    out[0] = dot_linked<4>(a, b);
    out[1] = dot_linked<2>(a, b);
#ifdef PLAIN_IN_EVERY_UNIT
    out[2] = dot4_plain(a, b);
#endif
}
// ANCHOR_END: units
