// The conv2d lesson's CUDA C twins: the same two convolutions as
// kernels-gpu/src/conv2d.rs, written as a CUDA C programmer would and
// compiled by NVRTC for the GPU at hand. BLOCK_X and BLOCK_Y come in as
// #defines from the host (the launch uses them; the kernels read blockDim).
//
// `sum += x * w` is left to nvcc, which contracts it into one FMA per tap
// (--fmad=true is its default); the Rust kernels call fma explicitly, so
// both compute the same nine FMAs in the same order and agree bit for bit.

// The 3 x 3 weights, row-major, passed by value: 36 bytes in the kernel's
// parameter space, read by every thread without touching global memory.
// ANCHOR: taps
struct Taps3x3 {
    float w[9];
};
// ANCHOR_END: taps

// Valid ("basic") convolution: out[row][col] = sum over r, c < 3 of
// input[row + r][col + c] * w[r][c], for row, col < n - 2.
// Memory: coalesced read-only loads (const __restrict__: LDG.E.CONSTANT),
// each input reused by 9 outputs through the caches; about 4 bytes in and
// 4 bytes out of DRAM per output.
// Launch assumption: a 2D grid of BLOCK_X x BLOCK_Y blocks covering
// (n - 2) x (n - 2) outputs; threads past the edge return.
// ANCHOR: conv2d_valid
extern "C" __global__ void conv2d_valid(const float* __restrict__ input, float* __restrict__ out,
                                        unsigned int n, Taps3x3 taps) {
    unsigned int col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int row = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned int m = n - 2;
    if (row >= m || col >= m) return;
    float sum = 0.0f;
#pragma unroll
    for (unsigned int r = 0; r < 3; ++r) {
        const float* line = input + (size_t)(row + r) * n + col;
#pragma unroll
        for (unsigned int c = 0; c < 3; ++c) sum += line[c] * taps.w[r * 3 + c];
    }
    out[(size_t)row * m + col] = sum;
}
// ANCHOR_END: conv2d_valid

// Same (zero-padded) convolution: out[row][col] = sum over r, c < 3 of
// x(row + r - 1, col + c - 1) * w[r][c], x being 0 outside the image, for
// row, col < n. Row or column -1 wraps to a huge unsigned value, so one
// test per coordinate covers both edges.
// Memory: as conv2d_valid; padding is a bounds test, not a padded copy.
// Launch assumption: a 2D grid of BLOCK_X x BLOCK_Y blocks covering n x n
// outputs; threads past the edge return.
// ANCHOR: conv2d_same
extern "C" __global__ void conv2d_same(const float* __restrict__ input, float* __restrict__ out,
                                       unsigned int n, Taps3x3 taps) {
    unsigned int col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= n || col >= n) return;
    float sum = 0.0f;
#pragma unroll
    for (unsigned int r = 0; r < 3; ++r) {
        unsigned int y = row + r - 1;
#pragma unroll
        for (unsigned int c = 0; c < 3; ++c) {
            unsigned int x = col + c - 1;
            float v = (y < n && x < n) ? input[(size_t)y * n + x] : 0.0f;
            sum += v * taps.w[r * 3 + c];
        }
    }
    out[(size_t)row * n + col] = sum;
}
// ANCHOR_END: conv2d_same
