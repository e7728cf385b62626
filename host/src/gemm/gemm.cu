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

}
