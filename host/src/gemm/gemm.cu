// The GEMM lesson's CUDA C twins: each kernel of kernels-gpu/src/gemm.rs as
// a CUDA C programmer writes it, compiled by NVRTC for the GPU at hand when
// `lab gemm --compare` runs. The host (host/src/gemm/mod.rs) puts the
// lesson's constants in front of this file as #defines. Each kernel is
// extern "C", so its exported name is the Rust kernel's.
//
// All of them compute D = alpha * A * B + beta * C (row-major A m x k, B k x n,
// C and D m x n), adding the k products of an output in ascending k with one
// FMA each (NVRTC contracts acc + a * b) and finishing with
// fmaf(alpha, acc, beta * c): written out, because NVRTC could contract
// alpha * acc + beta * c around either product.

// A row-major matrix's element, or 0 outside rows x cols.
__device__ __forceinline__ float load_or_zero(const float* __restrict__ a, unsigned row, unsigned col,
                                              unsigned rows, unsigned cols) {
    return (row < rows && col < cols) ? a[(size_t)row * cols + col] : 0.0f;
}

__device__ __forceinline__ void store_d(float* __restrict__ d, const float* __restrict__ c, unsigned row,
                                        unsigned col, unsigned m, unsigned n, float alpha, float beta,
                                        float acc) {
    if (row < m && col < n) {
        const size_t i = (size_t)row * n + col;
        d[i] = fmaf(alpha, acc, beta * c[i]);
    }
}

// The tensor-core instructions as a CUDA C programmer writes them: inline
// PTX, as CUTLASS does below its templates. Each wraps one instruction.
__device__ __forceinline__ void cp_async_16(unsigned dst, const void* src, unsigned src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}

// The same copy of a chunk known to be inside its matrix: no source size.
__device__ __forceinline__ void cp_async_16_whole(unsigned dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x2_trans(unsigned (&r)[2], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// acc = A B + acc for one warp: A 16 x 16, B 16 x 8 in bf16, acc 16 x 8 in f32.
__device__ __forceinline__ void mma_bf16_m16n8k16(float (&acc)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// acc = A B + acc for one warp: A 16 x 16, B 16 x 8 in f16 from m16n8k16's
// fragments, as compute capability 7.5's two m16n8k8: k 0-7 (a[0], a[1], b[0])
// then k 8-15 (a[2], a[3], b[1]).
__device__ __forceinline__ void mma_f16_m16n8k16_as_two_k8(float (&acc)[4], const unsigned (&a)[4],
                                                           const unsigned (&b)[2]) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
        : "r"(a[0]), "r"(a[1]), "r"(b[0]));
    asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
        : "r"(a[2]), "r"(a[3]), "r"(b[1]));
}

struct MmaBf16 {
    static __device__ __forceinline__ void run(float (&acc)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
        mma_bf16_m16n8k16(acc, a, b);
    }
};

struct MmaF16 {
    static __device__ __forceinline__ void run(float (&acc)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
        mma_f16_m16n8k16_as_two_k8(acc, a, b);
    }
};

// One TC_BLOCK_K step of a warp's 64 x 32 tile from the stage at shared
// address aTile (A rows TC_A_STRIDE apart, then B rows TC_B_STRIDE apart): per
// 16 of k, ldmatrix the 4 A and 4 B fragments (B transposed on the way), then
// the 4 x 4 mma tiles by Mma::run, in ascending k, then after(index of the 16).
template <typename Mma, typename After>
__device__ __forceinline__ void mma_warp_tile(float (&acc)[4][4][4], unsigned aTile, unsigned warpRow,
                                              unsigned warpCol, unsigned lane, After after) {
    const unsigned bTile = aTile + 2 * TC_BLOCK_M * TC_A_STRIDE;
#pragma unroll
    for (unsigned kk = 0; kk < TC_BLOCK_K; kk += 16) {
        unsigned fa[4][4], fb[4][2];
#pragma unroll
        for (unsigned i = 0; i < 4; ++i) {
            const unsigned row = warpRow + i * 16 + (lane / 8 % 2) * 8 + lane % 8;
            ldmatrix_x4(fa[i], aTile + 2 * (row * TC_A_STRIDE + kk + (lane / 16) * 8));
        }
#pragma unroll
        for (unsigned j = 0; j < 4; ++j)
            ldmatrix_x2_trans(fb[j], bTile + 2 * ((kk + lane % 16) * TC_B_STRIDE + warpCol + j * 8));
#pragma unroll
        for (unsigned i = 0; i < 4; ++i)
#pragma unroll
            for (unsigned j = 0; j < 4; ++j) Mma::run(acc[i][j], fa[i], fb[j]);
        after(kk / 16);
    }
}

// Queues one step's A tile (TC_BLOCK_M x TC_BLOCK_K from blockRow, p0) and B
// tile (TC_BLOCK_K x TC_BLOCK_N from p0, blockCol) into the stage at shared
// address `stage`, 16-byte chunks, zeros outside the matrices.
__device__ __forceinline__ void load_stage(unsigned stage, const unsigned short* __restrict__ a,
                                           const unsigned short* __restrict__ b, unsigned m, unsigned n,
                                           unsigned k, unsigned blockRow, unsigned blockCol, unsigned p0) {
    const unsigned tid = threadIdx.x;
    const unsigned aTile = stage, bTile = stage + 2 * TC_BLOCK_M * TC_A_STRIDE;
#pragma unroll
    for (unsigned s = 0; s < TC_BLOCK_M * TC_BLOCK_K / 8 / TC_THREADS; ++s) {
        const unsigned chunk = tid + s * TC_THREADS;
        const unsigned row = chunk / (TC_BLOCK_K / 8), col = (chunk % (TC_BLOCK_K / 8)) * 8;
        const bool inside = blockRow + row < m && p0 + col < k;
        const unsigned short* src = inside ? a + (size_t)(blockRow + row) * k + p0 + col : a;
        cp_async_16(aTile + 2 * (row * TC_A_STRIDE + col), src, inside ? 16 : 0);
    }
#pragma unroll
    for (unsigned s = 0; s < TC_BLOCK_K * TC_BLOCK_N / 8 / TC_THREADS; ++s) {
        const unsigned chunk = tid + s * TC_THREADS;
        const unsigned row = chunk / (TC_BLOCK_N / 8), col = (chunk % (TC_BLOCK_N / 8)) * 8;
        const bool inside = p0 + row < k && blockCol + col < n;
        const unsigned short* src = inside ? b + (size_t)(p0 + row) * n + blockCol + col : b;
        cp_async_16(bTile + 2 * (row * TC_B_STRIDE + col), src, inside ? 16 : 0);
    }
}

// One row of a warp's mma tiles: NJ tiles of 16 x 8 from (row0, col0), D =
// alpha acc + beta C inside m x n only. A lane's two neighbours (c0, c1 and c2,
// c3) go 8 bytes at a time: their column is even and n a multiple of 8, so a
// pair is inside or wholly outside, and 8-byte aligned. The row's C pairs are
// all loaded first, then its D pairs stored. Every lane loads, a pair outside
// from c itself (n >= 8, so c holds the pair), and keeps zeros there. A load
// written `inside ? __ldg(p) : 0` sits in a branch of its own, which ptxas
// merged with the branch of its pair's store (same predicate): one load in
// flight at a time. The TMA twin at 3374c3e read 32 of its 64 loads within 12
// instructions and took 3 to 11% longer than before on one H100; the twins of
// 4 x 4 mma tiles a warp had it all along.
template <unsigned NJ>
__device__ __forceinline__ void store_tile_row(const float (&acc)[NJ][4], unsigned row0, unsigned col0, unsigned lane,
                                               unsigned m, unsigned n, float alpha, float beta,
                                               const float* __restrict__ c, float* __restrict__ d) {
    const unsigned group = lane / 4, pair = lane % 4;
    float2 cv[NJ][2];
#pragma unroll
    for (unsigned j = 0; j < NJ; ++j)
#pragma unroll
        for (unsigned h = 0; h < 2; ++h) {
            const unsigned row = row0 + group + 8 * h, col = col0 + j * 8 + 2 * pair;
            const bool inside = row < m && col < n;
            const float2 v = __ldg(reinterpret_cast<const float2*>(inside ? c + (size_t)row * n + col : c));
            cv[j][h] = inside ? v : make_float2(0.f, 0.f);
        }
#pragma unroll
    for (unsigned j = 0; j < NJ; ++j)
#pragma unroll
        for (unsigned h = 0; h < 2; ++h) {
            const unsigned row = row0 + group + 8 * h, col = col0 + j * 8 + 2 * pair;
            if (row < m && col < n)
                *reinterpret_cast<float2*>(d + (size_t)row * n + col) =
                    make_float2(fmaf(alpha, acc[j][2 * h], beta * cv[j][h].x), fmaf(alpha, acc[j][2 * h + 1], beta * cv[j][h].y));
        }
}

// D = alpha acc + beta C for a warp's 4 x NJ mma tiles (C/D fragment layout)
// whose first element is at (row0, col0), inside m x n only, a row of tiles
// at a time.
template <unsigned NJ>
__device__ __forceinline__ void store_tiles(const float (&acc)[4][NJ][4], unsigned row0, unsigned col0, unsigned lane,
                                            unsigned m, unsigned n, float alpha, float beta,
                                            const float* __restrict__ c, float* __restrict__ d) {
#pragma unroll
    for (unsigned i = 0; i < 4; ++i) store_tile_row(acc[i], row0 + i * 16, col0, lane, m, n, alpha, beta, c, d);
}

// Hopper's warpgroup tensor cores, for the twin of gemm_bf16_wgmma: present
// only where NVRTC compiles for the architecture-specific sm_90a (which
// defines __CUDA_ARCH_FEAT_SM90_ALL); elsewhere that kernel's body is empty.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Byte `offset` of a 128-byte-swizzled region as stored: the 16-byte chunk
// within a 128-byte row XOR the row within its 8-row (1024-byte) atom.
__device__ __forceinline__ unsigned swizzle_128b(unsigned offset) { return offset ^ (((offset >> 7) & 7) << 4); }

// A shared-memory matrix descriptor in the 128-byte swizzle (mode 1), base
// offset 0: start address, leading and stride byte offsets in 16-byte units.
__device__ __forceinline__ unsigned long long descriptor_128b(unsigned start, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((start & 0x3FFFF) >> 4) | ((unsigned long long)((lbo & 0x3FFFF) >> 4) << 16) |
           ((unsigned long long)((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void fence_proxy_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

static_assert(WG_BLOCK_N == 256, "the twin issues m64n256k16: two warpgroups of 64 x 256");

// The accumulators as H halves of 128 columns, a thread's 64 H floats as
// 16 H mma.m16n8 C fragments: d[h][j] is columns 128 h + 8 j .. + 7.
#define WG_ACC4(h, j) "+f"(d[h][j][0]), "+f"(d[h][j][1]), "+f"(d[h][j][2]), "+f"(d[h][j][3])
#define WG_ACC64(h)                                                                                               \
    WG_ACC4(h, 0), WG_ACC4(h, 1), WG_ACC4(h, 2), WG_ACC4(h, 3), WG_ACC4(h, 4), WG_ACC4(h, 5), WG_ACC4(h, 6),      \
        WG_ACC4(h, 7), WG_ACC4(h, 8), WG_ACC4(h, 9), WG_ACC4(h, 10), WG_ACC4(h, 11), WG_ACC4(h, 12),             \
        WG_ACC4(h, 13), WG_ACC4(h, 14), WG_ACC4(h, 15)

// Waits until at most N of the warpgroup's wgmma groups are pending; each
// accumulator passes through an empty asm after it, so no read of it moves
// above the wait (CUTLASS's warpgroup_fence_operand).
template <int N, int H>
__device__ __forceinline__ void wgmma_wait(float (&d)[H][16][4]) {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#pragma unroll
    for (int h = 0; h < H; ++h)
#pragma unroll
        for (int j = 0; j < 16; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) asm volatile("" : "+f"(d[h][j][r])::"memory");
}

// d += A B for one warpgroup: A 64 x 16 (K-major) and B 16 x 256 (N-major,
// imm-trans-b = 1) in bf16 from shared memory through their descriptors, d
// 64 x 256 in f32. The immediates: scale-d 1 (accumulate), A and B
// unscaled, B transposed.
__device__ __forceinline__ void wgmma_bf16_m64n256k16(float (&d)[2][16][4], unsigned long long descA,
                                                      unsigned long long descB) {
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, 1, 1, 1, 0, 1;\n"
        : WG_ACC64(0), WG_ACC64(1)
        : "l"(descA), "l"(descB));
}

// One step's tiles into the stage at shared address `stage` (1024-aligned):
// A (WG_BLOCK_M x WG_BLOCK_K from blockRow, p0) K-major, B (WG_BLOCK_K x
// WG_BLOCK_N from p0, blockCol) N-major in blocks of 64 columns WG_B_LBO
// apart, both 128-byte swizzled; 16-byte chunks, zeros outside the matrices.
__device__ __forceinline__ void load_wg_stage(unsigned stage, const unsigned short* __restrict__ a,
                                              const unsigned short* __restrict__ b, unsigned m, unsigned n,
                                              unsigned k, unsigned blockRow, unsigned blockCol, unsigned p0) {
    const unsigned tid = threadIdx.x;
#pragma unroll
    for (unsigned s = 0; s < WG_BLOCK_M * WG_BLOCK_K / 8 / WG_THREADS; ++s) {
        const unsigned chunk = tid + s * WG_THREADS;
        const unsigned row = chunk / (WG_BLOCK_K / 8), col = (chunk % (WG_BLOCK_K / 8)) * 8;
        const bool inside = blockRow + row < m && p0 + col < k;
        const unsigned short* src = inside ? a + (size_t)(blockRow + row) * k + p0 + col : a;
        cp_async_16(stage + swizzle_128b(row * 128 + col * 2), src, inside ? 16 : 0);
    }
#pragma unroll
    for (unsigned s = 0; s < WG_BLOCK_K * WG_BLOCK_N / 8 / WG_THREADS; ++s) {
        const unsigned chunk = tid + s * WG_THREADS;
        const unsigned row = chunk / (WG_BLOCK_N / 8), col = (chunk % (WG_BLOCK_N / 8)) * 8;
        const bool inside = p0 + row < k && blockCol + col < n;
        const unsigned short* src = inside ? b + (size_t)(p0 + row) * n + blockCol + col : b;
        cp_async_16(stage + WG_A_BYTES + swizzle_128b((col / 64) * WG_B_LBO + row * 128 + (col % 64) * 2), src,
                    inside ? 16 : 0);
    }
}

// One step of k for a warpgroup: its 4 wgmmas (the descriptors advanced 32
// bytes along A's rows and 2048 bytes down B's) on the stage at `stage`,
// between a fence and a commit, then the wait for all but this group.
__device__ __forceinline__ void wgmma_step(float (&acc)[2][16][4], unsigned stage, unsigned warpgroup) {
    const unsigned long long descA = descriptor_128b(stage + warpgroup * 64 * 128, 16, WG_A_SBO);
    const unsigned long long descB = descriptor_128b(stage + WG_A_BYTES, WG_B_LBO, WG_B_SBO);
    wgmma_fence();
#pragma unroll
    for (unsigned kk = 0; kk < WG_BLOCK_K / 16; ++kk)
        wgmma_bf16_m64n256k16(acc, descA + ((32 * kk) >> 4), descB + ((16 * 128 * kk) >> 4));
    wgmma_commit();
    wgmma_wait<1>(acc);
}

// D = alpha acc + beta C for a warp's 16 rows from row0 and WG_BLOCK_N
// columns from col0 (the C/D fragment layout), inside m x n only.
__device__ __forceinline__ void store_wg(const float (&acc)[2][16][4], unsigned row0, unsigned col0, unsigned lane,
                                         unsigned m, unsigned n, float alpha, float beta,
                                         const float* __restrict__ c, float* __restrict__ d) {
#pragma unroll
    for (unsigned h = 0; h < 2; ++h) store_tile_row(acc[h], row0, col0 + h * 128, lane, m, n, alpha, beta, c, d);
}

// The tensor memory accelerator and its barriers (inline PTX, as CUTLASS's
// cute/arch/copy_sm90_tma.hpp and barrier.h write them).
__device__ __forceinline__ void mbarrier_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void fence_mbarrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
}
// Waits until the phase of `bar` with parity `parity` has completed; traps
// after MBARRIER_TIMEOUT_NS (a phase that takes that long never completes),
// so the launch fails instead of hanging.
__device__ __forceinline__ void mbarrier_wait_parity(unsigned bar, unsigned parity) {
    const unsigned long long start = global_timer_ns();
    for (;;) {
        unsigned done;
        asm volatile(
            "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
        if (done) return;
        if (global_timer_ns() - start > MBARRIER_TIMEOUT_NS) {
            __trap();
            // The launch ends here: nothing after it waits on the wgmmas.
            __builtin_unreachable();
        }
    }
}
// The tensor map at `map` (copied from the host before the launch) made
// visible to this thread's copies, which read it through the tensor-map proxy.
__device__ __forceinline__ void fence_tensormap_acquire(const void* map) {
    asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;\n" ::"l"(map) : "memory");
}
// The 2D box at element (x, y) of the tensor map at `map` to shared `dst`,
// its bytes completing on `bar`.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const void* map, int x, int y, unsigned bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
        ::"r"(dst), "l"(map), "r"(x), "r"(y), "r"(bar)
        : "memory");
}
#endif

extern "C" {

// ANCHOR: gemm_naive
// One thread per output: a row of A times a column of B. Memory: 2k loads per
// output, B and D coalesced along a warp's row, A one broadcast address.
// Launch: NAIVE_BLOCK_X x NAIVE_BLOCK_Y blocks covering n x m; threads outside
// return.
__global__ void gemm_naive(unsigned m, unsigned n, unsigned k, float alpha, const float* __restrict__ a,
                           const float* __restrict__ b, float beta, const float* __restrict__ c,
                           float* __restrict__ d) {
    const unsigned col = blockIdx.x * NAIVE_BLOCK_X + threadIdx.x;
    const unsigned row = blockIdx.y * NAIVE_BLOCK_Y + threadIdx.y;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (unsigned p = 0; p < k; ++p) acc += a[(size_t)row * k + p] * b[(size_t)p * n + col];
    store_d(d, c, row, col, m, n, alpha, beta, acc);
}
// ANCHOR_END: gemm_naive

// ANCHOR: gemm_tiled
// The same output per thread, A and B staged through TILE x TILE shared tiles
// (0 outside the matrices). Memory: 2k / TILE global loads per output.
// Launch: TILE x TILE blocks covering n x m; every thread reaches every barrier.
__global__ void gemm_tiled(unsigned m, unsigned n, unsigned k, float alpha, const float* __restrict__ a,
                           const float* __restrict__ b, float beta, const float* __restrict__ c,
                           float* __restrict__ d) {
    __shared__ float tileA[TILE][TILE];
    __shared__ float tileB[TILE][TILE];
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const unsigned col = blockIdx.x * TILE + tx;
    const unsigned row = blockIdx.y * TILE + ty;
    float acc = 0.0f;
    for (unsigned p0 = 0; p0 < k; p0 += TILE) {
        tileA[ty][tx] = load_or_zero(a, row, p0 + tx, m, k);
        tileB[ty][tx] = load_or_zero(b, p0 + ty, col, k, n);
        __syncthreads();
#pragma unroll
        for (int q = 0; q < TILE; ++q) acc += tileA[ty][q] * tileB[q][tx];
        __syncthreads();
    }
    store_d(d, c, row, col, m, n, alpha, beta, acc);
}
// ANCHOR_END: gemm_tiled

// ANCHOR: gemm_regblock_1d
// 1D register blocking: a block computes an R1_BLOCK_M x R1_BLOCK_N tile of
// D, each thread R1_THREAD_M consecutive rows of one column of it in
// registers. Per step of depth R1_BLOCK_K every thread stages one element of
// A's tile (tileA[r][q]) and one of B's, then for each k reads one value of
// B and its R1_THREAD_M values of A (a warp's threads share their rows: one
// broadcast). Memory: 9 shared reads per 8 FMAs. Launch: R1_THREADS threads
// in x, a grid of ceil(n / R1_BLOCK_N) x ceil(m / R1_BLOCK_M); every thread
// reaches every barrier.
__global__ void gemm_regblock_1d(unsigned m, unsigned n, unsigned k, float alpha, const float* __restrict__ a,
                                 const float* __restrict__ b, float beta, const float* __restrict__ c,
                                 float* __restrict__ d) {
    __shared__ float tileA[R1_BLOCK_M][R1_BLOCK_K];
    __shared__ float tileB[R1_BLOCK_K][R1_BLOCK_N];
    const unsigned tid = threadIdx.x;
    const unsigned blockRow = blockIdx.y * R1_BLOCK_M, blockCol = blockIdx.x * R1_BLOCK_N;
    const unsigned firstRow = (tid / R1_BLOCK_N) * R1_THREAD_M, col = tid % R1_BLOCK_N;
    const unsigned r = tid / R1_BLOCK_K, q = tid % R1_BLOCK_K;
    const unsigned qb = tid / R1_BLOCK_N, cb = tid % R1_BLOCK_N;
    float acc[R1_THREAD_M] = {};
    for (unsigned p0 = 0; p0 < k; p0 += R1_BLOCK_K) {
        tileA[r][q] = load_or_zero(a, blockRow + r, p0 + q, m, k);
        tileB[qb][cb] = load_or_zero(b, p0 + qb, blockCol + cb, k, n);
        __syncthreads();
#pragma unroll
        for (unsigned kk = 0; kk < R1_BLOCK_K; ++kk) {
            const float bValue = tileB[kk][col];
#pragma unroll
            for (unsigned i = 0; i < R1_THREAD_M; ++i) acc[i] += tileA[firstRow + i][kk] * bValue;
        }
        __syncthreads();
    }
#pragma unroll
    for (unsigned i = 0; i < R1_THREAD_M; ++i)
        store_d(d, c, blockRow + firstRow + i, blockCol + col, m, n, alpha, beta, acc[i]);
}
// ANCHOR_END: gemm_regblock_1d

// ANCHOR: gemm_regblock
// 2D register blocking: a block computes a BLOCK_M x BLOCK_N tile of D, each
// thread a THREAD_M x THREAD_N block of it in registers. Per step of depth
// BLOCK_K the block stages A's tile transposed (tileA[q][r]) and B's tile,
// and each thread multiplies THREAD_M values of A by THREAD_N values of B.
// Memory: 16 shared reads per 64 FMAs. Launch: REG_THREADS threads in x, a
// grid of ceil(n / BLOCK_N) x ceil(m / BLOCK_M); every thread reaches every
// barrier.
__global__ void gemm_regblock(unsigned m, unsigned n, unsigned k, float alpha, const float* __restrict__ a,
                              const float* __restrict__ b, float beta, const float* __restrict__ c,
                              float* __restrict__ d) {
    __shared__ float tileA[BLOCK_K][BLOCK_M];
    __shared__ float tileB[BLOCK_K][BLOCK_N];
    const unsigned tid = threadIdx.x;
    const unsigned blockRow = blockIdx.y * BLOCK_M, blockCol = blockIdx.x * BLOCK_N;
    const unsigned firstRow = (tid / (BLOCK_N / THREAD_N)) * THREAD_M;
    const unsigned firstCol = (tid % (BLOCK_N / THREAD_N)) * THREAD_N;
    float acc[THREAD_M][THREAD_N] = {};
    for (unsigned p0 = 0; p0 < k; p0 += BLOCK_K) {
#pragma unroll
        for (unsigned s = 0; s < REG_LOADS; ++s) {
            const unsigned e = tid + s * REG_THREADS;
            tileA[e % BLOCK_K][e / BLOCK_K] = load_or_zero(a, blockRow + e / BLOCK_K, p0 + e % BLOCK_K, m, k);
            tileB[e / BLOCK_N][e % BLOCK_N] = load_or_zero(b, p0 + e / BLOCK_N, blockCol + e % BLOCK_N, k, n);
        }
        __syncthreads();
#pragma unroll
        for (unsigned q = 0; q < BLOCK_K; ++q) {
            float colA[THREAD_M], rowB[THREAD_N];
#pragma unroll
            for (unsigned i = 0; i < THREAD_M; ++i) colA[i] = tileA[q][firstRow + i];
#pragma unroll
            for (unsigned j = 0; j < THREAD_N; ++j) rowB[j] = tileB[q][firstCol + j];
#pragma unroll
            for (unsigned i = 0; i < THREAD_M; ++i)
#pragma unroll
                for (unsigned j = 0; j < THREAD_N; ++j) acc[i][j] += colA[i] * rowB[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (unsigned i = 0; i < THREAD_M; ++i)
#pragma unroll
        for (unsigned j = 0; j < THREAD_N; ++j)
            store_d(d, c, blockRow + firstRow + i, blockCol + firstCol + j, m, n, alpha, beta, acc[i][j]);
}
// ANCHOR_END: gemm_regblock

// The float4 p[row][col..col + 4] of a row-major rows x cols matrix: one
// 16-byte load where vec (cols a multiple of 4: aligned) and all four are
// inside, else four guarded floats (0 outside).
__device__ __forceinline__ float4 load4_or_zero(const float* __restrict__ p, unsigned row, unsigned col,
                                                unsigned rows, unsigned cols, bool vec) {
    if (vec && row < rows && col + 3 < cols) return __ldg(reinterpret_cast<const float4*>(p + (size_t)row * cols + col));
    return make_float4(load_or_zero(p, row, col, rows, cols), load_or_zero(p, row, col + 1, rows, cols),
                       load_or_zero(p, row, col + 2, rows, cols), load_or_zero(p, row, col + 3, rows, cols));
}

// A thread's float4 of each tile into a step's shared tiles (BLOCK_K rows of
// BLOCK_M = BLOCK_N floats): va (A row aRow, k aK..aK + 4) transposed, vb (B row
// bRow, columns bCol..bCol + 4) as one float4.
__device__ __forceinline__ void stage_float4s(float (*tileA)[BLOCK_M], float (*tileB)[BLOCK_N], unsigned aRow,
                                              unsigned aK, float4 va, unsigned bRow, unsigned bCol, float4 vb) {
    tileA[aK][aRow] = va.x;
    tileA[aK + 1][aRow] = va.y;
    tileA[aK + 2][aRow] = va.z;
    tileA[aK + 3][aRow] = va.w;
    *reinterpret_cast<float4*>(&tileB[bRow][bCol]) = vb;
}

// One k of an 8 x 8 thread tile: acc[i][j] += a[i] * b[j], A's 8 values as two
// float4s and B's as two.
__device__ __forceinline__ void fma_outer(float (&acc)[THREAD_M][THREAD_N], float4 a0, float4 a1, float4 b0,
                                          float4 b1) {
    const float colA[THREAD_M] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
    const float rowB[THREAD_N] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
    for (unsigned i = 0; i < THREAD_M; ++i)
#pragma unroll
        for (unsigned j = 0; j < THREAD_N; ++j) acc[i][j] += colA[i] * rowB[j];
}

// ANCHOR: gemm_vectorized
// gemm_regblock's tiles with 16-byte accesses: each thread loads one float4 of
// the A tile (stored transposed) and one of the B tile a step, and reads its A
// column and B row from shared memory as float4s; its 8 x 8 outputs are four 4 x
// 4 blocks 64 rows and columns apart (thread (tx, ty) of a 16 x 16 grid), so a
// warp's float4 reads of a B row do not conflict. A float4 load needs its row
// and four columns inside and k (A) or n (B) a multiple of 4; elsewhere four
// guarded floats. Launch: as gemm_regblock.
__global__ void gemm_vectorized(unsigned m, unsigned n, unsigned k, float alpha, const float* __restrict__ a,
                                const float* __restrict__ b, float beta, const float* __restrict__ c,
                                float* __restrict__ d) {
    __shared__ __align__(16) float tileA[BLOCK_K][BLOCK_M];
    __shared__ __align__(16) float tileB[BLOCK_K][BLOCK_N];
    const unsigned tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const unsigned blockRow = blockIdx.y * BLOCK_M, blockCol = blockIdx.x * BLOCK_N;
    const unsigned aRow = tid / 2, aK = (tid % 2) * 4, bRow = tid / 32, bCol = (tid % 32) * 4;
    const bool aVec = k % 4 == 0, bVec = n % 4 == 0;
    float acc[THREAD_M][THREAD_N] = {};
    for (unsigned p0 = 0; p0 < k; p0 += BLOCK_K) {
        const float4 va = load4_or_zero(a, blockRow + aRow, p0 + aK, m, k, aVec);
        const float4 vb = load4_or_zero(b, p0 + bRow, blockCol + bCol, k, n, bVec);
        stage_float4s(tileA, tileB, aRow, aK, va, bRow, bCol, vb);
        __syncthreads();
#pragma unroll
        for (unsigned q = 0; q < BLOCK_K; ++q) {
            const float4 a0 = *reinterpret_cast<const float4*>(&tileA[q][4 * ty]);
            const float4 a1 = *reinterpret_cast<const float4*>(&tileA[q][64 + 4 * ty]);
            const float4 b0 = *reinterpret_cast<const float4*>(&tileB[q][4 * tx]);
            const float4 b1 = *reinterpret_cast<const float4*>(&tileB[q][64 + 4 * tx]);
            fma_outer(acc, a0, a1, b0, b1);
        }
        __syncthreads();
    }
#pragma unroll
    for (unsigned i = 0; i < THREAD_M; ++i)
#pragma unroll
        for (unsigned j = 0; j < THREAD_N; ++j)
            store_d(d, c, blockRow + (i / 4) * 64 + 4 * ty + i % 4, blockCol + (j / 4) * 64 + 4 * tx + j % 4, m, n,
                    alpha, beta, acc[i][j]);
}
// ANCHOR_END: gemm_vectorized

// ANCHOR: gemm_warptiled
// gemm_vectorized's float4 tiles arranged by warp, double-buffered and fetched
// a step ahead. The 8 warps (2 x 4) each own a 64 x 32 tile of D; lane l
// computes rows 4 (l / 4) and 32 + 4 (l / 4) (4 each) and columns 4 (l % 4) and
// 16 + 4 (l % 4) (4 each) of it. A warp's float4 reads of an A column are 8
// consecutive float4s, of a B row 4, each broadcast to 8 lanes. While the FMAs
// of step s run from one pair of shared tiles, the global loads of step s + 1
// are in flight into registers, written to the other pair after the FMAs: one
// barrier a step. __launch_bounds__ keeps 2 blocks of 256 an SM (128
// registers). Launch: as gemm_regblock.
__global__ void __launch_bounds__(REG_THREADS, WARP_MIN_BLOCKS)
    gemm_warptiled(unsigned m, unsigned n, unsigned k, float alpha, const float* __restrict__ a,
                   const float* __restrict__ b, float beta, const float* __restrict__ c, float* __restrict__ d) {
    __shared__ __align__(16) float tileA[2][BLOCK_K][BLOCK_M];
    __shared__ __align__(16) float tileB[2][BLOCK_K][BLOCK_N];
    const unsigned tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const unsigned row0 = (warp / 4) * 64 + 4 * (lane / 4), col0 = (warp % 4) * 32 + 4 * (lane % 4);
    const unsigned blockRow = blockIdx.y * BLOCK_M, blockCol = blockIdx.x * BLOCK_N;
    const unsigned aRow = tid / 2, aK = (tid % 2) * 4, bRow = tid / 32, bCol = (tid % 32) * 4;
    const bool aVec = k % 4 == 0, bVec = n % 4 == 0;
    float acc[THREAD_M][THREAD_N] = {};
    auto stage = [&](unsigned buf, float4 va, float4 vb) { stage_float4s(tileA[buf], tileB[buf], aRow, aK, va, bRow, bCol, vb); };
    auto compute = [&](unsigned buf) {
#pragma unroll
        for (unsigned q = 0; q < BLOCK_K; ++q) {
            const float4 a0 = *reinterpret_cast<const float4*>(&tileA[buf][q][row0]);
            const float4 a1 = *reinterpret_cast<const float4*>(&tileA[buf][q][row0 + 32]);
            const float4 b0 = *reinterpret_cast<const float4*>(&tileB[buf][q][col0]);
            const float4 b1 = *reinterpret_cast<const float4*>(&tileB[buf][q][col0 + 16]);
            fma_outer(acc, a0, a1, b0, b1);
        }
    };
    stage(0, load4_or_zero(a, blockRow + aRow, aK, m, k, aVec), load4_or_zero(b, bRow, blockCol + bCol, k, n, bVec));
    __syncthreads();
    unsigned buf = 0;
    for (unsigned p0 = 0; p0 < k; p0 += BLOCK_K, buf ^= 1) {
        const unsigned next = p0 + BLOCK_K;
        if (next < k) {
            const float4 va = load4_or_zero(a, blockRow + aRow, next + aK, m, k, aVec);
            const float4 vb = load4_or_zero(b, next + bRow, blockCol + bCol, k, n, bVec);
            compute(buf);
            stage(buf ^ 1, va, vb);
        } else {
            compute(buf);
        }
        __syncthreads();
    }
#pragma unroll
    for (unsigned i = 0; i < THREAD_M; ++i)
#pragma unroll
        for (unsigned j = 0; j < THREAD_N; ++j)
            store_d(d, c, blockRow + row0 + (i / 4) * 32 + i % 4, blockCol + col0 + (j / 4) * 16 + j % 4, m, n, alpha,
                    beta, acc[i][j]);
}
// ANCHOR_END: gemm_warptiled

// ANCHOR: gemm_bf16_mma
// BF16 A and B, f32 sums on the tensor cores (mma.sync m16n8k16). A block
// computes a TC_BLOCK_M x TC_BLOCK_N tile of D; its 8 warps (2 x 4) a 64 x 32
// tile each as 4 x 4 mma tiles. Memory: cp.async copies each step's tiles into
// one of TC_STAGES shared stages (rows padded by TC_PAD), the next step's copy
// overlapping this step's mma; ldmatrix reads the fragments (B transposed on
// the way). Launch: TC_THREADS threads in x, a grid of ceil(n / TC_BLOCK_N) x
// ceil(m / TC_BLOCK_M); k and n multiples of 8. Below compute capability 8.0
// the body is empty (the instructions do not exist there; the host never
// launches it).
__global__ void gemm_bf16_mma(unsigned m, unsigned n, unsigned k, float alpha, const unsigned short* __restrict__ a,
                              const unsigned short* __restrict__ b, float beta, const float* __restrict__ c,
                              float* __restrict__ d) {
#if __CUDA_ARCH__ >= 800
    __shared__ __align__(16) unsigned stages[TC_STAGES * TC_STAGE_BYTES / 4];
    const unsigned base = (unsigned)__cvta_generic_to_shared(stages);
    const unsigned tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const unsigned warpRow = (warp / 4) * 64, warpCol = (warp % 4) * 32;
    const unsigned blockRow = blockIdx.y * TC_BLOCK_M, blockCol = blockIdx.x * TC_BLOCK_N;
    const unsigned steps = (k + TC_BLOCK_K - 1) / TC_BLOCK_K;
    float acc[4][4][4] = {};

    load_stage(base, a, b, m, n, k, blockRow, blockCol, 0);
    cp_async_commit();
    for (unsigned step = 0; step < steps; ++step) {
        if (step + 1 < steps)
            load_stage(base + ((step + 1) % TC_STAGES) * TC_STAGE_BYTES, a, b, m, n, k, blockRow, blockCol,
                       (step + 1) * TC_BLOCK_K);
        cp_async_commit();
        cp_async_wait<1>();
        __syncthreads();
        mma_warp_tile<MmaBf16>(acc, base + (step % TC_STAGES) * TC_STAGE_BYTES, warpRow, warpCol, lane, [](unsigned) {});
        __syncthreads();
    }
    cp_async_wait<0>();

    store_tiles(acc, blockRow + warpRow, blockCol + warpCol, lane, m, n, alpha, beta, c, d);
#endif
}
// ANCHOR_END: gemm_bf16_mma

// The (row, column) of chunk s of thread tid in a tile `width` 16-bit elements
// wide: 16-byte chunks (8 elements) in row-major order, TC_THREADS threads.
__device__ __forceinline__ uint2 chunk_place(unsigned tid, unsigned s, unsigned width) {
    const unsigned chunk = tid + s * TC_THREADS;
    return make_uint2(chunk / (width / 8), (chunk % (width / 8)) * 8);
}

// ANCHOR: gemm_f16_mma
// F16 A and B, f32 sums on the tensor cores of compute capability 7.5 and up:
// gemm_bf16_mma's tiles and fragments, each 16 of k as two mma.sync m16n8k8.
// Memory: no cp.async before 8.0, so each thread loads its 4 chunks of the
// next step into registers (16-byte __ldg) before this step's mma and stores
// them into the other of two shared stages after the step's first 16 of k;
// one barrier a step. Launch:
// as gemm_bf16_mma (launch bounds: F16_MIN_BLOCKS blocks of TC_THREADS an SM).
// Below compute capability 7.5 the body is empty.
__global__ void __launch_bounds__(TC_THREADS, F16_MIN_BLOCKS) gemm_f16_mma(unsigned m, unsigned n, unsigned k, float alpha, const unsigned short* __restrict__ a,
                             const unsigned short* __restrict__ b, float beta, const float* __restrict__ c,
                             float* __restrict__ d) {
#if __CUDA_ARCH__ >= 750
    __shared__ uint4 stages[TC_STAGES * TC_STAGE_BYTES / 16];
    const unsigned base = (unsigned)__cvta_generic_to_shared(stages);
    const unsigned tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const unsigned warpRow = (warp / 4) * 64, warpCol = (warp % 4) * 32;
    const unsigned blockRow = blockIdx.y * TC_BLOCK_M, blockCol = blockIdx.x * TC_BLOCK_N;
    const unsigned steps = (k + TC_BLOCK_K - 1) / TC_BLOCK_K;
    constexpr unsigned CHUNKS = TC_BLOCK_M * TC_BLOCK_K / 8 / TC_THREADS;
    float acc[4][4][4] = {};
    uint4 staged[2 * CHUNKS];

    // This thread's chunks of the step at p0 into registers (zeros outside),
    // and from registers into a stage.
    auto fetch = [&](unsigned p0) {
#pragma unroll
        for (unsigned s = 0; s < CHUNKS; ++s) {
            const uint2 pa = chunk_place(tid, s, TC_BLOCK_K), pb = chunk_place(tid, s, TC_BLOCK_N);
            staged[s] = blockRow + pa.x < m && p0 + pa.y < k
                            ? __ldg((const uint4*)(a + (size_t)(blockRow + pa.x) * k + p0 + pa.y))
                            : make_uint4(0, 0, 0, 0);
            staged[CHUNKS + s] = p0 + pb.x < k && blockCol + pb.y < n
                                     ? __ldg((const uint4*)(b + (size_t)(p0 + pb.x) * n + blockCol + pb.y))
                                     : make_uint4(0, 0, 0, 0);
        }
    };
    auto store = [&](uint4* stage) {
#pragma unroll
        for (unsigned s = 0; s < CHUNKS; ++s) {
            const uint2 pa = chunk_place(tid, s, TC_BLOCK_K), pb = chunk_place(tid, s, TC_BLOCK_N);
            stage[(pa.x * TC_A_STRIDE + pa.y) / 8] = staged[s];
            stage[(TC_BLOCK_M * TC_A_STRIDE + pb.x * TC_B_STRIDE + pb.y) / 8] = staged[CHUNKS + s];
        }
    };

    fetch(0);
    store(stages);
    __syncthreads();
    for (unsigned step = 0; step < steps; ++step) {
        const bool more = step + 1 < steps;
        if (more) fetch((step + 1) * TC_BLOCK_K);
        // The next step's chunks go into the other stage after the first 16
        // of k: half a step for the loads to land, and their 16 registers
        // free for the second half.
        mma_warp_tile<MmaF16>(acc, base + (step % TC_STAGES) * TC_STAGE_BYTES, warpRow, warpCol, lane,
                              [&](unsigned k16) {
                                  if (more && k16 == 0) store(stages + ((step + 1) % TC_STAGES) * (TC_STAGE_BYTES / 16));
                              });
        __syncthreads();
    }

    store_tiles(acc, blockRow + warpRow, blockCol + warpCol, lane, m, n, alpha, beta, c, d);
#endif
}
// ANCHOR_END: gemm_f16_mma

// ANCHOR: gemm_bf16_pipelined
// gemm_bf16_mma through a TC_PIPE_STAGES-stage cp.async pipeline in dynamic
// shared memory, one barrier a step: step s waits for its own copy (at most
// TC_PIPE_STAGES - 2 newer groups in flight), then after the barrier copies
// step s + TC_PIPE_STAGES - 1 into the stage step s - 1 used. Every thread
// commits one group a step (empty past the end). B fragments two 8-column
// tiles at a time (ldmatrix .x4.trans). Same tiles and sums as gemm_bf16_mma.
// Launch: as gemm_bf16_mma, with TC_PIPE_STAGES * TC_STAGE_BYTES bytes of
// dynamic shared memory.
__global__ void gemm_bf16_pipelined(unsigned m, unsigned n, unsigned k, float alpha,
                                    const unsigned short* __restrict__ a, const unsigned short* __restrict__ b,
                                    float beta, const float* __restrict__ c, float* __restrict__ d) {
#if __CUDA_ARCH__ >= 800
    extern __shared__ __align__(16) unsigned char pipeline[];
    const unsigned base = (unsigned)__cvta_generic_to_shared(pipeline);
    const unsigned tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const unsigned warpRow = (warp / 4) * 64, warpCol = (warp % 4) * 32;
    const unsigned blockRow = blockIdx.y * TC_BLOCK_M, blockCol = blockIdx.x * TC_BLOCK_N;
    const unsigned steps = (k + TC_BLOCK_K - 1) / TC_BLOCK_K;
    float acc[4][4][4] = {};

#pragma unroll
    for (unsigned s = 0; s + 1 < TC_PIPE_STAGES; ++s) {
        if (s < steps) load_stage(base + s * TC_STAGE_BYTES, a, b, m, n, k, blockRow, blockCol, s * TC_BLOCK_K);
        cp_async_commit();
    }
    for (unsigned step = 0; step < steps; ++step) {
        cp_async_wait<TC_PIPE_STAGES - 2>();
        __syncthreads();
        const unsigned next = step + TC_PIPE_STAGES - 1;
        if (next < steps)
            load_stage(base + (next % TC_PIPE_STAGES) * TC_STAGE_BYTES, a, b, m, n, k, blockRow, blockCol,
                       next * TC_BLOCK_K);
        cp_async_commit();
        const unsigned aTile = base + (step % TC_PIPE_STAGES) * TC_STAGE_BYTES;
        const unsigned bTile = aTile + 2 * TC_BLOCK_M * TC_A_STRIDE;
#pragma unroll
        for (unsigned kk = 0; kk < TC_BLOCK_K; kk += 16) {
            unsigned fa[4][4], fb[4][2];
#pragma unroll
            for (unsigned i = 0; i < 4; ++i) {
                const unsigned row = warpRow + i * 16 + (lane / 8 % 2) * 8 + lane % 8;
                ldmatrix_x4(fa[i], aTile + 2 * (row * TC_A_STRIDE + kk + (lane / 16) * 8));
            }
#pragma unroll
            for (unsigned jj = 0; jj < 2; ++jj) {
                unsigned r[4];
                ldmatrix_x4_trans(r, bTile + 2 * ((kk + lane % 16) * TC_B_STRIDE + warpCol + jj * 16 + (lane / 16) * 8));
                fb[2 * jj][0] = r[0];
                fb[2 * jj][1] = r[1];
                fb[2 * jj + 1][0] = r[2];
                fb[2 * jj + 1][1] = r[3];
            }
#pragma unroll
            for (unsigned i = 0; i < 4; ++i)
#pragma unroll
                for (unsigned j = 0; j < 4; ++j) mma_bf16_m16n8k16(acc[i][j], fa[i], fb[j]);
        }
    }
    cp_async_wait<0>();
    store_tiles(acc, blockRow + warpRow, blockCol + warpCol, lane, m, n, alpha, beta, c, d);
#endif
}
// ANCHOR_END: gemm_bf16_pipelined

// ANCHOR: gemm_bf16_swizzled
// Byte offset of 16-byte chunk `chunk` of row `row` in a shared tile `width`
// chunks wide, XOR-swizzled: rows of 8 chunks or more XOR the chunk's low 3
// bits with the row's, rows of 4 chunks (two to a 128-byte line) with bits 1-2
// of the row, so 8 rows at one chunk hit 8 different 16-byte bank groups.
__device__ __forceinline__ unsigned sw_offset(unsigned row, unsigned chunk, unsigned width) {
    const unsigned slot = width >= 8 ? chunk ^ (row & 7) : chunk ^ ((row >> 1) & 3);
    return (row * width + slot) * 16;
}

// cp.async of the 16-byte chunk at (row, col) of a row-major rows x cols
// matrix to shared address dst; zeros where outside (nothing read).
__device__ __forceinline__ void copy_chunk_or_zero(unsigned dst, const unsigned short* __restrict__ p, unsigned row,
                                                   unsigned col, unsigned rows, unsigned cols) {
    const bool inside = row < rows && col < cols;
    cp_async_16(dst, inside ? p + (size_t)row * cols + col : p, inside ? 16 : 0);
}

// The (block row, block column) of block `id` of a rows x cols grid walked in
// groups of `group` block rows, down each column of a group.
__device__ __forceinline__ uint2 grouped_block(unsigned id, unsigned rows, unsigned cols, unsigned group) {
    const unsigned perGroup = group * cols, first = id / perGroup * group;
    const unsigned size = rows - first < group ? rows - first : group, within = id % perGroup;
    return make_uint2(first + within % size, within / size);
}

#if __CUDA_ARCH__ >= 800
// The main loop and epilogue of a swizzled kernel for the block tile at
// (blockRow, blockCol): BN threads as 2 x BN / 64 warps of 64 x 64, STAGES
// stages of BK of k; with GUARDED false every chunk of every step is inside
// the matrices and copied without a source size (no compare, no zero fill).
// `base`: the shared address of the stages, which rotate: `stage` is this
// step's, the one after the last wraps to `base`. (C++ linkage: the file is
// extern "C", and a template cannot be.)
extern "C++" {
template <bool GUARDED, unsigned BN, unsigned BK, unsigned STAGES>
__device__ __forceinline__ void swizzled_steps(unsigned base, unsigned blockRow, unsigned blockCol, unsigned m, unsigned n, unsigned k,
                                               float alpha, const unsigned short* __restrict__ a,
                                               const unsigned short* __restrict__ b, float beta,
                                               const float* __restrict__ c, float* __restrict__ d) {
    constexpr unsigned AW = BK / 8, BW = BN / 8, KS = BK / 16, A_BYTES = SW_BLOCK_M * BK * 2;
    constexpr unsigned BYTES = A_BYTES + BK * BN * 2;
    static_assert(KS % 2 == 0 && BN % 64 == 0, "the two fragment sets alternate within a step; 64 x 64 warps");
    static_assert(STAGES >= 2 && SW_BLOCK_M * AW % BN == 0 && BK * BW % BN == 0,
                  "two stages or more; a block of BN threads copies each tile's chunks in whole rounds");
    const unsigned tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const unsigned warpRow = (warp / (BN / 64)) * 64, warpCol = (warp % (BN / 64)) * 64;
    const unsigned steps = (k + BK - 1) / BK;
    const unsigned lastStage = base + (STAGES - 1) * BYTES;
    auto copy = [&](unsigned dst, const unsigned short* p, unsigned row, unsigned col, unsigned rows, unsigned cols) {
        if (GUARDED) copy_chunk_or_zero(dst, p, row, col, rows, cols);
        else cp_async_16_whole(dst, p + (size_t)row * cols + col);
    };
    auto load = [&](unsigned st, unsigned s) {
        const unsigned p0 = s * BK;
#pragma unroll
        for (unsigned i = 0; i < SW_BLOCK_M * AW / BN; ++i) {
            const unsigned chunk = tid + i * BN, row = chunk / AW, ch = chunk % AW;
            copy(st + sw_offset(row, ch, AW), a, blockRow + row, p0 + ch * 8, m, k);
        }
#pragma unroll
        for (unsigned i = 0; i < BK * BW / BN; ++i) {
            const unsigned chunk = tid + i * BN, row = chunk / BW, ch = chunk % BW;
            copy(st + A_BYTES + sw_offset(row, ch, BW), b, p0 + row, blockCol + ch * 8, k, n);
        }
    };
    unsigned fa[2][4][4], fb[2][8][2];
    auto fragments = [&](unsigned set, unsigned st, unsigned kk) {
#pragma unroll
        for (unsigned i = 0; i < 4; ++i)
            ldmatrix_x4(fa[set][i], st + sw_offset(warpRow + i * 16 + lane % 16, kk / 8 + lane / 16, AW));
#pragma unroll
        for (unsigned jj = 0; jj < 4; ++jj) {
            unsigned r[4];
            ldmatrix_x4_trans(r, st + A_BYTES + sw_offset(kk + lane % 16, (warpCol + jj * 16) / 8 + lane / 16, BW));
            fb[set][2 * jj][0] = r[0];
            fb[set][2 * jj][1] = r[1];
            fb[set][2 * jj + 1][0] = r[2];
            fb[set][2 * jj + 1][1] = r[3];
        }
    };
    float acc[4][8][4] = {};

#pragma unroll
    for (unsigned s = 0; s + 1 < STAGES; ++s) {
        if (s < steps) load(base + s * BYTES, s);
        cp_async_commit();
    }
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    fragments(0, base, 0);
    unsigned stage = base, previous = lastStage;
    for (unsigned step = 0; step < steps; ++step) {
        const unsigned following = stage == lastStage ? base : stage + BYTES;
#pragma unroll
        for (unsigned kk = 0; kk < KS; ++kk) {
            const bool last = kk == KS - 1;
            if (last) {
                cp_async_wait<STAGES - 2>();
                __syncthreads();
            }
            fragments((kk + 1) % 2, last ? following : stage, last ? 0 : (kk + 1) * 16);
            if (kk == 0) {
                // Step step + STAGES - 1 goes where step step - 1 was.
                if (step + STAGES - 1 < steps) load(previous, step + STAGES - 1);
                cp_async_commit();
            }
#pragma unroll
            for (unsigned i = 0; i < 4; ++i)
#pragma unroll
                for (unsigned j = 0; j < 8; ++j) mma_bf16_m16n8k16(acc[i][j], fa[kk % 2][i], fb[kk % 2][j]);
        }
        previous = stage;
        stage = following;
    }
    cp_async_wait<0>();
    store_tiles(acc, blockRow + warpRow, blockCol + warpCol, lane, m, n, alpha, beta, c, d);
}

// A swizzled kernel's block: its tile of D (grouped_block over SW_BLOCK_M x BN
// tiles), then its steps, unguarded where the block's tiles are whole at every
// step. (Written as differences: a sum could wrap for n near 2^32.)
template <unsigned BN, unsigned BK, unsigned STAGES>
__device__ __forceinline__ void swizzled_block(unsigned m, unsigned n, unsigned k, float alpha, const unsigned short* __restrict__ a,
                                               const unsigned short* __restrict__ b, float beta, const float* __restrict__ c,
                                               float* __restrict__ d) {
    extern __shared__ __align__(16) unsigned char pipeline[];
    const unsigned base = (unsigned)__cvta_generic_to_shared(pipeline);
    const uint2 blk = grouped_block(blockIdx.y * gridDim.x + blockIdx.x, gridDim.y, gridDim.x, SW_GROUP);
    const unsigned blockRow = blk.x * SW_BLOCK_M, blockCol = blk.y * BN;
    if (m > blockRow && m - blockRow >= SW_BLOCK_M && n > blockCol && n - blockCol >= BN && k % BK == 0)
        swizzled_steps<false, BN, BK, STAGES>(base, blockRow, blockCol, m, n, k, alpha, a, b, beta, c, d);
    else
        swizzled_steps<true, BN, BK, STAGES>(base, blockRow, blockCol, m, n, k, alpha, a, b, beta, c, d);
}
}
#endif

// gemm_bf16_pipelined's sums from 4 warps of 64 x 64 (4 x 8 mma tiles each)
// over a SW_BLOCK_M x SW_BLOCK_N block tile. Memory: SW_STAGES cp.async stages
// in dynamic shared memory, rows XOR-swizzled (no padding, no bank conflict on
// either side); the next 16 of k's fragments are loaded into the other of two
// register sets before this 16's mma, across the step's end too (step s + 1's
// wait and barrier come before step s's last 16 of k); step s copies step s +
// SW_STAGES - 1 into the stage step s - 1 used. Blocks walk the grid in groups
// of SW_GROUP block rows. Launch: SW_THREADS threads in x, a grid of ceil(n /
// SW_BLOCK_N) x ceil(m / SW_BLOCK_M), SW_STAGES stages of SW_BLOCK_M x
// SW_BLOCK_K and SW_BLOCK_K x SW_BLOCK_N bf16 (64 KiB) of dynamic shared memory;
// k and n multiples of 8.
__global__ void __launch_bounds__(SW_THREADS, SW_MIN_BLOCKS)
    gemm_bf16_swizzled(unsigned m, unsigned n, unsigned k, float alpha, const unsigned short* __restrict__ a,
                       const unsigned short* __restrict__ b, float beta, const float* __restrict__ c,
                       float* __restrict__ d) {
#if __CUDA_ARCH__ >= 800
    swizzled_block<SW_BLOCK_N, SW_BLOCK_K, SW_STAGES>(m, n, k, alpha, a, b, beta, c, d);
#endif
}
// ANCHOR_END: gemm_bf16_swizzled

// ANCHOR: gemm_bf16_swizzled_wide
// gemm_bf16_swizzled over SW_BLOCK_M x SWW_BLOCK_N blocks of 8 warps (2 x 4),
// SWW_BLOCK_K of k a step through SWW_STAGES stages, one block an SM. Launch:
// SWW_THREADS threads in x, a grid of ceil(n / SWW_BLOCK_N) x ceil(m /
// SW_BLOCK_M), SWW_STAGES stages of SW_BLOCK_M x SWW_BLOCK_K and SWW_BLOCK_K x
// SWW_BLOCK_N bf16 (147456 bytes) of dynamic shared memory; k and n multiples of 8.
__global__ void __launch_bounds__(SWW_THREADS, SWW_MIN_BLOCKS)
    gemm_bf16_swizzled_wide(unsigned m, unsigned n, unsigned k, float alpha, const unsigned short* __restrict__ a,
                            const unsigned short* __restrict__ b, float beta, const float* __restrict__ c,
                            float* __restrict__ d) {
#if __CUDA_ARCH__ >= 800
    swizzled_block<SWW_BLOCK_N, SWW_BLOCK_K, SWW_STAGES>(m, n, k, alpha, a, b, beta, c, d);
#endif
}
// ANCHOR_END: gemm_bf16_swizzled_wide


// ANCHOR: gemm_bf16_wgmma
// BF16 A and B, f32 sums on Hopper's warpgroup tensor cores (wgmma
// m64n256k16, both operands read from shared memory through descriptors). A
// block of 2 warpgroups computes a WG_BLOCK_M x WG_BLOCK_N tile of D, each
// warpgroup 64 rows. Memory: cp.async copies each step's tiles (64 deep) in
// the 128-byte swizzle through WG_STAGES stages; step s waits for its copy,
// fences it to the async proxy, passes the barrier, copies step s +
// WG_STAGES - 2 into the stage step s - 2 used, and leaves its 4 wgmmas in
// flight (wait for all but the newest group). Blocks walk the grid in groups of
// WG_GROUP block rows (grouped_block). Launch: WG_THREADS threads, a
// ceil(n / WG_BLOCK_N) x ceil(m / WG_BLOCK_M) grid, WG_SHARED_BYTES of dynamic
// shared memory; k and n multiples of 8.
__global__ void gemm_bf16_wgmma(unsigned m, unsigned n, unsigned k, float alpha, const unsigned short* __restrict__ a,
                                const unsigned short* __restrict__ b, float beta, const float* __restrict__ c,
                                float* __restrict__ d) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(16) unsigned char wgPipeline[];
    const unsigned base =
        ((unsigned)__cvta_generic_to_shared(wgPipeline) + WG_TILE_ALIGN - 1) & ~(unsigned)(WG_TILE_ALIGN - 1);
    const unsigned tid = threadIdx.x, warpgroup = tid / 128, warp = tid % 128 / 32, lane = tid % 32;
    const uint2 tile = grouped_block(blockIdx.y * gridDim.x + blockIdx.x, gridDim.y, gridDim.x, WG_GROUP);
    const unsigned blockRow = tile.x * WG_BLOCK_M, blockCol = tile.y * WG_BLOCK_N;
    const unsigned steps = (k + WG_BLOCK_K - 1) / WG_BLOCK_K;
    float acc[WG_BLOCK_N / 128][16][4] = {};

#pragma unroll
    for (unsigned s = 0; s + 2 < WG_STAGES; ++s) {
        if (s < steps) load_wg_stage(base + s * WG_STAGE_BYTES, a, b, m, n, k, blockRow, blockCol, s * WG_BLOCK_K);
        cp_async_commit();
    }
    for (unsigned step = 0; step < steps; ++step) {
        cp_async_wait<WG_STAGES - 3>();
        fence_proxy_async_shared();
        __syncthreads();
        const unsigned next = step + WG_STAGES - 2;
        if (next < steps)
            load_wg_stage(base + (next % WG_STAGES) * WG_STAGE_BYTES, a, b, m, n, k, blockRow, blockCol,
                          next * WG_BLOCK_K);
        cp_async_commit();
        wgmma_step(acc, base + (step % WG_STAGES) * WG_STAGE_BYTES, warpgroup);
    }
    wgmma_wait<0>(acc);
    cp_async_wait<0>();
    store_wg(acc, blockRow + warpgroup * 64 + warp * 16, blockCol, lane, m, n, alpha, beta, c, d);
#endif
}
// ANCHOR_END: gemm_bf16_wgmma

// ANCHOR: gemm_bf16_tma
// gemm_bf16_wgmma fed by the tensor memory accelerator: the same tiles,
// stages, wgmmas and sums; each step's tiles are copied by thread 0's TMA
// copies (A's 64 x 128 box, B's four 64 x 64 boxes, zeros outside the
// matrices) onto the stage's mbarrier, for which every thread waits. Step s
// waits for its stage's phase, passes the block barrier (every warpgroup is
// then past its wgmmas of step s - 2), then thread 0 refills that stage with
// step s + WG_STAGES - 2. Launch: as gemm_bf16_wgmma with WG_TMA_SHARED_BYTES
// of dynamic shared memory; mapA and mapB the global addresses of A's and
// B's tensor maps (128-byte swizzle).
__global__ void gemm_bf16_tma(unsigned m, unsigned n, unsigned k, float alpha, const unsigned char* __restrict__ mapA,
                              const unsigned char* __restrict__ mapB, float beta, const float* __restrict__ c,
                              float* __restrict__ d) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(16) unsigned char wgPipeline[];
    const unsigned base =
        ((unsigned)__cvta_generic_to_shared(wgPipeline) + WG_TILE_ALIGN - 1) & ~(unsigned)(WG_TILE_ALIGN - 1);
    const unsigned bars = base + WG_STAGES * WG_STAGE_BYTES;
    const unsigned tid = threadIdx.x, warpgroup = tid / 128, warp = tid % 128 / 32, lane = tid % 32;
    const uint2 tile = grouped_block(blockIdx.y * gridDim.x + blockIdx.x, gridDim.y, gridDim.x, WG_GROUP);
    const unsigned blockRow = tile.x * WG_BLOCK_M, blockCol = tile.y * WG_BLOCK_N;
    const unsigned steps = (k + WG_BLOCK_K - 1) / WG_BLOCK_K;
    float acc[WG_BLOCK_N / 128][16][4] = {};
    auto issue = [&](unsigned step) {
        const unsigned stage = base + (step % WG_STAGES) * WG_STAGE_BYTES, bar = bars + 8 * (step % WG_STAGES);
        const int p0 = (int)(step * WG_BLOCK_K);
        mbarrier_arrive_expect_tx(bar, WG_STAGE_BYTES);
        tma_load_2d(stage, mapA, p0, (int)blockRow, bar);
#pragma unroll
        for (unsigned blk = 0; blk < WG_BLOCK_N / 64; ++blk)
            tma_load_2d(stage + WG_A_BYTES + blk * WG_B_LBO, mapB, (int)(blockCol + 64 * blk), p0, bar);
    };

    // Thread 0 sets up the barriers and issues the first steps' copies, then
    // the one barrier publishes the barriers to the other threads.
    if (tid == 0) {
        for (unsigned s = 0; s < WG_STAGES; ++s) mbarrier_init(bars + 8 * s, 1);
        fence_mbarrier_init();
        fence_tensormap_acquire(mapA);
        fence_tensormap_acquire(mapB);
#pragma unroll
        for (unsigned s = 0; s + 2 < WG_STAGES; ++s)
            if (s < steps) issue(s);
    }
    __syncthreads();
    for (unsigned step = 0; step < steps; ++step) {
        mbarrier_wait_parity(bars + 8 * (step % WG_STAGES), (step / WG_STAGES) % 2);
        __syncthreads();
        const unsigned next = step + WG_STAGES - 2;
        if (tid == 0 && next < steps) issue(next);
        wgmma_step(acc, base + (step % WG_STAGES) * WG_STAGE_BYTES, warpgroup);
    }
    wgmma_wait<0>(acc);
    store_wg(acc, blockRow + warpgroup * 64 + warp * 16, blockCol, lane, m, n, alpha, beta, c, d);
#endif
}
// ANCHOR_END: gemm_bf16_tma

}
