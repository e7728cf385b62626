// The roofline lesson's kernels in CUDA C: the twins of kernels-gpu/src/roofline.rs.
//
// Same algorithms, same launch shapes, same arguments (and the same exported
// names, through extern "C"), so `cargo xtask compare roofline` can launch
// either on the same buffers. Compiled at run time by NVRTC for the GPU at
// hand with nvcc's default code generation: FMA contraction is on, so
// `a * b + c` becomes one fma here while the Rust side writes fma explicitly.
// The constants are the lesson's (kernels-gpu/src/roofline.rs); the host
// prepends them as #defines so the two sides cannot drift apart.

#ifndef THREADS_PER_BLOCK
#error "the host defines the lesson's constants before this file"
#endif

extern "C" {

// out[i] = in[i] over n4 float4 elements; one 16-byte element per thread.
// Memory: a warp reads and writes 512 contiguous bytes; loads take the
// read-only path (const __restrict__). Launch: gridDim.x * blockDim.x >= n4.
__global__ void copy_coalesced(const float4* __restrict__ in, float4* __restrict__ out,
                               unsigned long long n4) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) out[i] = in[i];
}

// The bandwidth ceiling's three streams, each written grid-stride so the
// host can launch it with one float4 a thread or a grid that fits the GPU.

// Read-only: each block's share of sum(a[i] . b[i]) over n4 float4 pairs
// into partials[blockIdx.x]. Memory: two coalesced 128-bit read streams;
// a warp-shuffle tree, then one float per warp in shared memory. Launch:
// THREADS_PER_BLOCK threads a block; any grid.
__global__ void stream_dot(const float4* __restrict__ a, const float4* __restrict__ b,
                           float* __restrict__ partials, unsigned long long n4) {
    __shared__ float warps[THREADS_PER_BLOCK / 32];
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += step) {
        const float4 x = a[i], y = b[i];
        acc = fmaf(x.x, y.x, acc);
        acc = fmaf(x.y, y.y, acc);
        acc = fmaf(x.z, y.z, acc);
        acc = fmaf(x.w, y.w, acc);
    }
    for (int lanes = 16; lanes > 0; lanes >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, lanes);
    if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float sum = warps[0];
        for (int w = 1; w < THREADS_PER_BLOCK / 32; ++w) sum += warps[w];
        partials[blockIdx.x] = sum;
    }
}

// Copy: out[i] = in[i] over n4 float4s. Memory: a 128-bit read and write
// a float4. Launch: any grid.
__global__ void stream_copy(const float4* __restrict__ in, float4* __restrict__ out,
                            unsigned long long n4) {
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += step)
        out[i] = in[i];
}

// Two reads, one write (STREAM's triad): out[i] = a[i] + s * b[i]. Memory:
// 48 bytes a float4. Launch: any grid.
__global__ void stream_triad(const float4* __restrict__ a, const float4* __restrict__ b,
                             float4* __restrict__ out, unsigned long long n4, float s) {
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += step) {
        const float4 x = a[i], y = b[i];
        out[i] = make_float4(fmaf(s, y.x, x.x), fmaf(s, y.y, x.y), fmaf(s, y.z, x.z),
                             fmaf(s, y.w, x.w));
    }
}

// ANCHOR: vector_add
// out[i] = a[i] + b[i], one element per thread. Memory: three coalesced
// streams, 12 bytes per add. Launch: gridDim.x * blockDim.x >= n.
__global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                           float* __restrict__ out, unsigned long long n) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
// ANCHOR_END: vector_add

// The same add in stride order: j = col * stride + blockIdx.y. Memory: lanes
// sit `stride` floats apart, one sector each. Launch: x covers m columns
// (guarded), y is exactly `stride` rows.
__global__ void vector_add_permuted(const float* __restrict__ a, const float* __restrict__ b,
                                    float* __restrict__ out, unsigned long long m,
                                    unsigned int stride) {
    const unsigned long long col = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (col < m) {
        const unsigned long long j = col * stride + blockIdx.y;
        out[j] = a[j] + b[j];
    }
}

// out[col * side + row] = in[row * side + col]. Memory: coalesced read,
// 32-sector write. Launch: TRANSPOSE_TILE^2 blocks tiling the matrix exactly.
__global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out,
                                unsigned long long side) {
    const unsigned long long row = (unsigned long long)blockIdx.y * blockDim.y + threadIdx.y;
    const unsigned long long col = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    out[col * side + row] = in[row * side + col];
}

// transpose_naive with an edge guard, for any side. Memory: as
// transpose_naive. Launch: TRANSPOSE_TILE^2 blocks, ceil(side / TRANSPOSE_TILE)^2
// of them; the threads past the last row or column do nothing.
__global__ void transpose_naive_guarded(const float* __restrict__ in, float* __restrict__ out,
                                        unsigned long long side) {
    const unsigned long long row = (unsigned long long)blockIdx.y * blockDim.y + threadIdx.y;
    const unsigned long long col = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (row < side && col < side) out[col * side + row] = in[row * side + col];
}

// ANCHOR: transpose_tiled
// The transpose through a shared tile padded to 33 columns. Memory: both
// sides coalesced, no bank conflicts. Launch: as transpose_naive; every
// thread reaches the barrier.
__global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out,
                                unsigned long long side) {
    __shared__ float tile[TRANSPOSE_TILE][TRANSPOSE_TILE + 1];
    const unsigned long long tx = threadIdx.x, ty = threadIdx.y;
    const unsigned long long inCol = (unsigned long long)blockIdx.x * TRANSPOSE_TILE + tx;
    const unsigned long long inRow = (unsigned long long)blockIdx.y * TRANSPOSE_TILE + ty;
    tile[ty][tx] = in[inRow * side + inCol];
    __syncthreads();
    const unsigned long long outCol = (unsigned long long)blockIdx.y * TRANSPOSE_TILE + tx;
    const unsigned long long outRow = (unsigned long long)blockIdx.x * TRANSPOSE_TILE + ty;
    out[outRow * side + outCol] = tile[tx][ty];
}
// ANCHOR_END: transpose_tiled

// Each block sums its 256-element slice into out[blockIdx.x] with the
// sequential-addressing tree. Memory: one coalesced read per thread.
// Launch: exactly THREADS_PER_BLOCK threads; the guard covers the load only.
__global__ void reduce_sequential_addressing(const float* __restrict__ in,
                                             float* __restrict__ out, unsigned long long n) {
    __shared__ float tile[THREADS_PER_BLOCK];
    const unsigned int tid = threadIdx.x;
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + tid;
    tile[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = THREADS_PER_BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) tile[tid] += tile[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = tile[0];
}

// ANCHOR: matmul_naive
// c = a * b, one thread per output; acc += a[row][p] * b[p][col] (contracted
// to an fma by NVRTC). Memory: 2d loads per output, mostly cache hits.
// Launch: MAT_TILE^2 blocks tiling the matrix exactly.
__global__ void matmul_naive(const float* __restrict__ a, const float* __restrict__ b,
                             float* __restrict__ c, unsigned long long d) {
    const unsigned long long row = (unsigned long long)blockIdx.y * blockDim.y + threadIdx.y;
    const unsigned long long col = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (unsigned long long p = 0; p < d; ++p) acc += a[row * d + p] * b[p * d + col];
    c[row * d + col] = acc;
}
// ANCHOR_END: matmul_naive

// The same product through two MAT_TILE^2 shared tiles. Memory: two loads
// per tile step instead of per k step. Launch: exactly MAT_TILE^2 threads a
// block, exact tiling; every thread reaches both barriers.
__global__ void matmul_tiled(const float* __restrict__ a, const float* __restrict__ b,
                             float* __restrict__ c, unsigned long long d) {
    __shared__ float tileA[MAT_TILE][MAT_TILE];
    __shared__ float tileB[MAT_TILE][MAT_TILE];
    const unsigned int tx = threadIdx.x, ty = threadIdx.y;
    const unsigned long long row = (unsigned long long)blockIdx.y * MAT_TILE + ty;
    const unsigned long long col = (unsigned long long)blockIdx.x * MAT_TILE + tx;
    float acc = 0.0f;
    for (unsigned long long step = 0; step < d / MAT_TILE; ++step) {
        tileA[ty][tx] = a[row * d + step * MAT_TILE + tx];
        tileB[ty][tx] = b[(step * MAT_TILE + ty) * d + col];
        __syncthreads();
        for (unsigned int p = 0; p < MAT_TILE; ++p) acc += tileA[ty][p] * tileB[p][tx];
        __syncthreads();
    }
    c[row * d + col] = acc;
}

// One heat step from global memory: out = c + r * (w + e + n + s - 4c) on
// interior cells. Memory: five reads and a write per cell. Launch:
// STENCIL_BLOCK_X x STENCIL_BLOCK_Y blocks over the interior; guarded store.
__global__ void heat_step_global(const float* __restrict__ in, float* __restrict__ out, int n,
                                 float r) {
    const int col = (int)(blockIdx.x * blockDim.x + threadIdx.x) + 1;
    const int row = (int)(blockIdx.y * blockDim.y + threadIdx.y) + 1;
    if (col < n - 1 && row < n - 1) {
        const size_t stride = (size_t)n;
        const size_t c = (size_t)row * stride + col;
        const float centre = in[c];
        out[c] = centre + r * (in[c - 1] + in[c + 1] + in[c - stride] + in[c + stride] - 4.0f * centre);
    }
}

// The same step through a shared tile with a HALO-cell apron; 256 threads
// fill 340 cells, cells outside the grid read as STENCIL_COLD. Launch: the
// grid of heat_step_global; guards never cover the barrier.
__global__ void heat_step_tiled(const float* __restrict__ in, float* __restrict__ out, int n,
                                float r) {
    __shared__ float tile[STENCIL_SHARED_Y][STENCIL_SHARED_X];
    const int tileCol = (int)blockIdx.x * STENCIL_BLOCK_X + 1;
    const int tileRow = (int)blockIdx.y * STENCIL_BLOCK_Y + 1;
    const int threads = (int)(blockDim.x * blockDim.y);
    for (int s = (int)(threadIdx.y * blockDim.x + threadIdx.x); s < STENCIL_SHARED_X * STENCIL_SHARED_Y;
         s += threads) {
        const int sy = s / STENCIL_SHARED_X;
        const int sx = s - sy * STENCIL_SHARED_X;
        const int gy = tileRow - HALO + sy;
        const int gx = tileCol - HALO + sx;
        const bool inside = gx >= 0 && gx < n && gy >= 0 && gy < n;
        tile[sy][sx] = inside ? in[(size_t)gy * (size_t)n + gx] : STENCIL_COLD;
    }
    __syncthreads();
    const int sx = (int)threadIdx.x + HALO;
    const int sy = (int)threadIdx.y + HALO;
    const int col = tileCol + (int)threadIdx.x;
    const int row = tileRow + (int)threadIdx.y;
    if (col < n - 1 && row < n - 1) {
        const float centre = tile[sy][sx];
        out[(size_t)row * (size_t)n + col] =
            centre + r * (tile[sy][sx - 1] + tile[sy][sx + 1] + tile[sy - 1][sx] + tile[sy + 1][sx] -
                          4.0f * centre);
    }
}

// ANCHOR: polynomial_horner
// A Horner chain of POLY_DEGREE fmas on one loaded float. Memory: 8 bytes
// per element for 513 FLOP. Launch: gridDim.x * blockDim.x >= n.
__global__ void polynomial_horner(const float* __restrict__ in, float* __restrict__ out,
                                  unsigned long long n) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float x = in[i] * POLY_SCALE;
        float acc = x;
#pragma unroll 16
        for (int k = 0; k < POLY_DEGREE; ++k) acc = fmaf(acc, x, POLY_ADD);
        out[i] = acc;
    }
}
// ANCHOR_END: polynomial_horner

// The FP32 ceiling: FMA_CHAINS independent chains of `iters` fmas, FMA_UNROLL
// steps a trip of the run-time loop, then the rest. Memory: one store per
// thread. Launch: `out` holds one float per thread.
__global__ void fma_peak(float* __restrict__ out, int iters) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    float acc[FMA_CHAINS];
#pragma unroll
    for (int q = 0; q < FMA_CHAINS; ++q) acc[q] = (float)q * 0.125f;
    // ANCHOR: fma_loop
    for (int k = 0; k < iters / FMA_UNROLL; ++k) {
#pragma unroll
        for (int u = 0; u < FMA_UNROLL; ++u) {
#pragma unroll
            for (int q = 0; q < FMA_CHAINS; ++q) acc[q] = fmaf(acc[q], FMA_MUL, FMA_ADD);
        }
    }
    for (int k = 0; k < iters % FMA_UNROLL; ++k) {
#pragma unroll
        for (int q = 0; q < FMA_CHAINS; ++q) acc[q] = fmaf(acc[q], FMA_MUL, FMA_ADD);
    }
    // ANCHOR_END: fma_loop
    float sum = 0.0f;
#pragma unroll
    for (int q = 0; q < FMA_CHAINS; ++q) sum += acc[q];
    out[i] = sum;
}

}  // extern "C"
