// The softmax lesson's kernels in CUDA C: the twins of kernels-gpu/src/softmax.rs.
// Same names (extern "C"), arguments, launch shapes and arithmetic order, so the
// outputs can be compared bit for bit: the exponential is ex2.approx.ftz of
// (x - m) * s * log2(e) on both sides (inline PTX here, as Rust's device layer
// emits it), sums of squares are FMAs (nvcc contracts v * v + ss; Rust asks for
// fma), division and square root are IEEE (nvcc's defaults). The row barrier is
// the same inline PTX as kernels-gpu/src/device/atomic.rs, so NVRTC needs no
// libcu++ headers. The host prepends the lesson's constants as #defines.

#ifndef SCRATCH_FLOATS
#error "the host defines the lesson's constants before this file"
#endif

struct Tile {
    unsigned row, t, slot, len;
    unsigned long long base;
};

__device__ __forceinline__ Tile tileOf(unsigned slot, unsigned n, unsigned w, unsigned tiles) {
    Tile tl;
    tl.row = slot / tiles;
    tl.t = slot % tiles;
    tl.slot = slot;
    unsigned first = tl.t * w;
    tl.base = (unsigned long long)tl.row * n + first;
    tl.len = (n - first < w) ? n - first : w;
    return tl;
}

__device__ __forceinline__ float ex2Approx(float u) {
    float v;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(v) : "f"(u));
    return v;
}

__device__ __forceinline__ float scaledExp(float x, float m, float scale) { return ex2Approx((x - m) * scale * LOG2E); }

__device__ __forceinline__ float rowScaleOf(float sumsq, unsigned n) { return 1.0f / sqrtf(sumsq / (float)n + EPS); }

// ANCHOR: block_reduce
// Butterfly within each warp, one partial per warp in scratch, partials added in
// warp order by every thread: the same order as the Rust block_reduce.
template <bool MAX>
__device__ __forceinline__ float blockReduce(float v, float* scratch) {
    for (int mask = 16; mask > 0; mask >>= 1) {
        float other = __shfl_xor_sync(0xffffffffu, v, mask);
        v = MAX ? fmaxf(v, other) : v + other;
    }
    if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
    __syncthreads();
    float r = scratch[0];
    for (unsigned i = 1; i < blockDim.x / 32; ++i) r = MAX ? fmaxf(r, scratch[i]) : r + scratch[i];
    __syncthreads();
    return r;
}
// ANCHOR_END: block_reduce

template <bool MAX>
__device__ __forceinline__ float rowReduce(const float* values, unsigned count, float* scratch) {
    float acc = MAX ? __int_as_float(0xff800000) : 0.0f;
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) acc = MAX ? fmaxf(acc, values[i]) : acc + values[i];
    return blockReduce<MAX>(acc, scratch);
}

// ANCHOR: phase_stats
__device__ __forceinline__ void phaseStats(const float* x, Tile tl, float* tileMax, float* tileSumsq, float* kept,
                                           float* scratch) {
    float m = __int_as_float(0xff800000), ss = 0.0f;
    for (unsigned j = threadIdx.x; j < tl.len; j += blockDim.x) {
        float v = __ldg(x + tl.base + j);
        if (kept) kept[j] = v;
        m = fmaxf(m, v);
        ss = v * v + ss;
    }
    m = blockReduce<true>(m, scratch);
    ss = blockReduce<false>(ss, scratch);
    if (threadIdx.x == 0) {
        tileMax[tl.slot] = m;
        tileSumsq[tl.slot] = ss;
    }
}
// ANCHOR_END: phase_stats

struct RowStats {
    float *tileMax, *tileSumsq, *tileSum, *rowMax, *rowScale, *rowSum;
};

__device__ __forceinline__ void phaseExponentials(const float* x, float* e, Tile tl, RowStats s, unsigned n,
                                                  unsigned tiles, const float* inputKept, float* outputKept,
                                                  bool writeE, float* scratch) {
    unsigned first = tl.row * tiles;
    float m = rowReduce<true>(s.tileMax + first, tiles, scratch);
    float ss = rowReduce<false>(s.tileSumsq + first, tiles, scratch);
    float scale = rowScaleOf(ss, n);
    float mass = 0.0f;
    for (unsigned j = threadIdx.x; j < tl.len; j += blockDim.x) {
        unsigned long long i = tl.base + j;
        float v = inputKept ? inputKept[j] : __ldg(x + i);
        v = scaledExp(v, m, scale);
        if (outputKept) outputKept[j] = v;
        if (writeE) e[i] = v;
        mass += v;
    }
    mass = blockReduce<false>(mass, scratch);
    if (threadIdx.x == 0) {
        s.tileSum[tl.slot] = mass;
        if (tl.t == 0) {
            s.rowMax[tl.row] = m;
            s.rowScale[tl.row] = scale;
        }
    }
}

// Source of phase 3's exponentials: 0 global e (plain loads), 1 global e through the
// read-only path, 2 recomputed from x, 3 kept in shared memory.
template <int SOURCE>
__device__ __forceinline__ void phaseNormalize(float* y, Tile tl, RowStats s, unsigned tiles, const float* src,
                                               const float* kept, float* scratch) {
    float z = rowReduce<false>(s.tileSum + tl.row * tiles, tiles, scratch);
    float m = s.rowMax[tl.row], scale = s.rowScale[tl.row];
    if (threadIdx.x == 0 && tl.t == 0) s.rowSum[tl.row] = z;
    for (unsigned j = threadIdx.x; j < tl.len; j += blockDim.x) {
        unsigned long long i = tl.base + j;
        float v;
        if (SOURCE == 0) v = src[i];
        else if (SOURCE == 1) v = __ldg(src + i);
        else if (SOURCE == 2) v = scaledExp(__ldg(src + i), m, scale);
        else v = kept[j];
        y[i] = v / z;
    }
}

// One block per tile: gridDim.x = rows * tiles, blockDim.x a multiple of 32.
extern "C" __global__ void softmax_tile_stats(const float* x, float* tileMax, float* tileSumsq, unsigned n, unsigned w,
                                              unsigned tiles) {
    __shared__ __align__(16) float scratch[SCRATCH_FLOATS];
    phaseStats(x, tileOf(blockIdx.x, n, w, tiles), tileMax, tileSumsq, nullptr, scratch);
}

// As softmax_tile_stats; writeE != 0 stores the exponentials (staged).
extern "C" __global__ void softmax_tile_exp(const float* x, float* e, float* tileMax, float* tileSumsq, float* tileSum,
                                            float* rowMax, float* rowScale, unsigned n, unsigned w, unsigned tiles,
                                            unsigned writeE) {
    __shared__ __align__(16) float scratch[SCRATCH_FLOATS];
    RowStats s = {tileMax, tileSumsq, tileSum, rowMax, rowScale, nullptr};
    phaseExponentials(x, e, tileOf(blockIdx.x, n, w, tiles), s, n, tiles, nullptr, nullptr, writeE != 0, scratch);
}

// As softmax_tile_stats; src is e (staged) or x (recompute != 0).
extern "C" __global__ void softmax_tile_normalize(const float* src, float* y, float* tileSum, float* rowMax,
                                                  float* rowScale, float* rowSum, unsigned n, unsigned w,
                                                  unsigned tiles, unsigned recompute) {
    __shared__ __align__(16) float scratch[SCRATCH_FLOATS];
    RowStats s = {nullptr, nullptr, tileSum, rowMax, rowScale, rowSum};
    Tile tl = tileOf(blockIdx.x, n, w, tiles);
    if (recompute) phaseNormalize<2>(y, tl, s, tiles, src, nullptr, scratch);
    else phaseNormalize<1>(y, tl, s, tiles, src, nullptr, scratch);
}

// ANCHOR: row_barrier
// The device-scope release/acquire row barrier of kernels-gpu/src/device/atomic.rs.
__device__ __forceinline__ void rowBarrier(unsigned* arrivals, unsigned* epochs, unsigned participants) {
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned before, prior, now;
        asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(before) : "l"(epochs) : "memory");
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(prior) : "l"(arrivals) : "memory");
        if (prior == participants - 1) {
            asm volatile("st.relaxed.gpu.global.u32 [%0], 0;" ::"l"(arrivals) : "memory");
            asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(epochs), "r"(before + 1) : "memory");
        } else {
            while (true) {
                asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(now) : "l"(epochs) : "memory");
                if (now != before) break;
                __nanosleep(32);
            }
        }
    }
    __syncthreads();
}
// ANCHOR_END: row_barrier

// The body the three megakernels share. GRID: every block of the launch meets at one
// barrier (the slot pair of row rowBase, gridDim.x participants); otherwise each
// block waits only for its row's tiles (its row's pair). Callers without controls
// pass 0, so the flag branches fold away.
template <bool GRID>
__device__ __forceinline__ void retainedBody(const float* x, float* e, float* y, RowStats s, unsigned* arrivals,
                                             unsigned* epochs, unsigned n, unsigned w, unsigned tiles,
                                             unsigned rowBase, unsigned controls) {
    // ANCHOR: retained_body
    extern __shared__ __align__(16) float kept[];
    float* scratch = kept + w;
    Tile tl = tileOf(rowBase * tiles + blockIdx.x, n, w, tiles);
    bool reload = controls & RELOAD_INPUT, roundtrip = controls & ROUNDTRIP_EXPONENTIALS;
    unsigned slot = GRID ? rowBase * 2 : tl.row * 2;
    unsigned participants = GRID ? gridDim.x : tiles;
    phaseStats(x, tl, s.tileMax, s.tileSumsq, reload ? nullptr : kept, scratch);
    rowBarrier(arrivals + slot, epochs + slot, participants);
    phaseExponentials(x, e, tl, s, n, tiles, reload ? nullptr : kept, roundtrip ? nullptr : kept, roundtrip, scratch);
    rowBarrier(arrivals + slot + 1, epochs + slot + 1, participants);
    if (roundtrip) phaseNormalize<0>(y, tl, s, tiles, e, nullptr, scratch);
    else phaseNormalize<3>(y, tl, s, tiles, nullptr, kept, scratch);
    // ANCHOR_END: retained_body
}

// Cooperative: gridDim.x = groupRows * tiles, all resident; dynamic shared memory
// (w + SCRATCH_FLOATS) floats. Grid barrier, no flags (controls ignored).
extern "C" __global__ void softmax_retained(const float* x, float* e, float* y, float* tileMax, float* tileSumsq,
                                            float* tileSum, float* rowMax, float* rowScale, float* rowSum,
                                            unsigned* arrivals, unsigned* epochs, unsigned n, unsigned w,
                                            unsigned tiles, unsigned rowBase, unsigned controls) {
    RowStats s = {tileMax, tileSumsq, tileSum, rowMax, rowScale, rowSum};
    retainedBody<true>(x, e, y, s, arrivals, epochs, n, w, tiles, rowBase, 0u);
}

// As softmax_retained, carrying the runtime flags RELOAD_INPUT | ROUNDTRIP_EXPONENTIALS.
extern "C" __global__ void softmax_retained_control(const float* x, float* e, float* y, float* tileMax,
                                                    float* tileSumsq, float* tileSum, float* rowMax, float* rowScale,
                                                    float* rowSum, unsigned* arrivals, unsigned* epochs, unsigned n,
                                                    unsigned w, unsigned tiles, unsigned rowBase, unsigned controls) {
    RowStats s = {tileMax, tileSumsq, tileSum, rowMax, rowScale, rowSum};
    retainedBody<true>(x, e, y, s, arrivals, epochs, n, w, tiles, rowBase, controls);
}

// As softmax_retained, with row barriers: a block waits only for its own row's tiles.
extern "C" __global__ void softmax_row_retained(const float* x, float* e, float* y, float* tileMax, float* tileSumsq,
                                                float* tileSum, float* rowMax, float* rowScale, float* rowSum,
                                                unsigned* arrivals, unsigned* epochs, unsigned n, unsigned w,
                                                unsigned tiles, unsigned rowBase, unsigned controls) {
    RowStats s = {tileMax, tileSumsq, tileSum, rowMax, rowScale, rowSum};
    retainedBody<false>(x, e, y, s, arrivals, epochs, n, w, tiles, rowBase, 0u);
}
