//! Hopper's warpgroup tensor cores (compute capability 9.0, `sm_90a`
//! only): `wgmma.mma_async` with both operands read from shared memory
//! through matrix descriptors, its fence, commit and wait, and the proxy
//! fence that makes ordinary shared-memory writes (`st.shared`,
//! `cp.async`) visible to it. For the kernels of the sm_90a module (`--cfg
//! lab_hopper`, built with `-Ctarget-cpu=sm_90a`: the architecture-specific
//! target these instructions need, and PTX ISA 8.0 or later).
//!
//! A warpgroup is four consecutive warps whose first warp's index is a
//! multiple of 4 (threads 128 g to 128 g + 127 of a block). Its 128 threads
//! issue each `wgmma` together; the instruction runs asynchronously, and
//! its accumulator registers may be read only after a `wgmma.wait_group`
//! that covers it.
//!
//! Layouts are the PTX ISA's ("Asynchronous Warpgroup Level Matrix Multiply
//! -Accumulate Instructions": register fragments, shared memory matrix
//! layout, matrix descriptor):
//! - D (64 x N, f32): thread `t` of the warpgroup, warp `w = t / 32`,
//!   lane `l`, `group = l / 4`, `pair = l % 4`, holds for each 8-column
//!   block `j` the registers `4 j .. 4 j + 3`: row `16 w + group + 8 (r /
//!   2)`, column `8 j + 2 pair + r % 2` for register `4 j + r`. Each warp's
//!   16 rows are laid out as `N / 8` `mma.m16n8` C fragments side by side.
//! - A (64 x 16, "K-major": k contiguous) and B (16 x N, "N-major": n
//!   contiguous, `imm-trans-b = 1`) in shared memory, in the 128-byte
//!   swizzle: rows of 128 bytes, 8 rows (1024 bytes, 1024-aligned) to a
//!   swizzle atom, and the 16-byte chunk `c` of row `r` of an atom stored at
//!   chunk `c ^ (r % 8)` ([`swizzle_128b`]).
//!
//! `tests/cpu_gemm.rs` checks that each instruction appears in the sm_90a
//! PTX as written here, and that ptxas assembles the kernels for sm_90a
//! without spills and without serializing their `wgmma`s.

pub use crate::wgmma_layout::{descriptor_128b, descriptor_advance, swizzle_128b};

/// `wgmma.fence.sync.aligned`: orders this warpgroup's earlier register
/// writes (the zeroed accumulators, or a read of them) before the next
/// `wgmma.mma_async` that uses those registers. Issued by every thread of
/// the warpgroup before the first `wgmma` of a batch.
#[inline(always)]
pub fn wgmma_fence() {
    // SAFETY: an ordering instruction; it reads and writes no memory of the
    // program's. Not `nomem`: LLVM must keep shared-memory writes before it.
    unsafe {
        core::arch::asm!(
            "wgmma.fence.sync.aligned;",
            options(nostack, preserves_flags)
        )
    };
}

/// `wgmma.commit_group.sync.aligned`: closes the group of this warpgroup's
/// `wgmma`s issued since the last commit.
#[inline(always)]
pub fn wgmma_commit() {
    // SAFETY: bookkeeping of the warpgroup's own wgmmas.
    unsafe {
        core::arch::asm!(
            "wgmma.commit_group.sync.aligned;",
            options(nostack, preserves_flags)
        )
    };
}

/// `fence.proxy.async.shared::cta`: makes this thread's earlier writes to
/// shared memory through the generic proxy (`st.shared`, and `cp.async`
/// copies it has waited for) visible to the async proxy, through which
/// `wgmma` reads its shared operands. Every thread that wrote a tile issues
/// it, then a barrier, before any `wgmma` reads the tile.
#[inline(always)]
pub fn fence_proxy_async_shared() {
    // SAFETY: a memory fence; it must stay between the writes and the
    // barrier (not `nomem`).
    unsafe {
        core::arch::asm!(
            "fence.proxy.async.shared::cta;",
            options(nostack, preserves_flags)
        )
    };
}

/// A warpgroup's f32 accumulators for `wgmma` with `N = 128 H` columns, as
/// `H` halves of 128 columns: a thread's `64 H` f32 as `16 H` `mma.m16n8` C
/// fragments of 4 (layout in the module's docs; fragment `acc[h][j]` is
/// columns `128 h + 8 j .. + 7` of the thread's warp's 16 rows). The
/// array's length picks the instruction's shape: `[[[f32; 4]; 16]; 1]` is
/// m64n128k16, `[[[f32; 4]; 16]; 2]` m64n256k16. (Halves, so an epilogue
/// can take them one at a time with constant indices.)
pub trait WgmmaAcc {
    /// `self += A * B` on the tensor cores for one warpgroup
    /// (`wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16`): A 64 x 16
    /// and B 16 x N in bf16 from shared memory, A K-major and B N-major
    /// (`imm-trans-b = 1`), described by `desc_a` and `desc_b`
    /// ([`descriptor_128b`]); `2 * 64 * N * 16` FLOP. Asynchronous: the sums
    /// land in `self` by the [`WgmmaAcc::wait`] that covers its group.
    ///
    /// # Safety
    /// Called by all 128 threads of a converged warpgroup with the same
    /// descriptors, after [`wgmma_fence`]; the descriptors describe tiles
    /// written and fenced ([`fence_proxy_async_shared`]) before a barrier,
    /// which nothing writes until the wait that covers this `wgmma`; `self`
    /// is neither read nor written until that wait.
    unsafe fn mma_bf16(&mut self, desc_a: u64, desc_b: u64);

    /// `wgmma.wait_group.sync.aligned PENDING`: waits until at most
    /// `PENDING` of this warpgroup's committed `wgmma` groups are pending.
    /// Every accumulator register is passed through the instruction (an
    /// in-out operand named only in a PTX comment), so the compiler keeps
    /// every read of them after the wait and moves none while a `wgmma` may
    /// still write them (CUTLASS's `warpgroup_fence_operand`).
    fn wait<const PENDING: u32>(&mut self);
}

/// `asm!` with the template pieces, then every register of the
/// accumulator array `acc` (fragments `($h $j)`, in order) as
/// `inout(reg32)` positional operands in `wgmma`'s D order (`{0}` is
/// `acc[0][0][0]`, `{64 h + 4 j + r}` is `acc[h][j][r]`), then the given
/// named operands and options.
macro_rules! with_acc {
    ($acc:ident [$(($h:literal $j:literal))*]; $($template:expr),+; $($named:tt)*) => {
        core::arch::asm!(
            $($template),+,
            $(inout(reg32) $acc[$h][$j][0], inout(reg32) $acc[$h][$j][1],
              inout(reg32) $acc[$h][$j][2], inout(reg32) $acc[$h][$j][3],)*
            $($named)*
        )
    };
}

/// [`WgmmaAcc`] for `[[[f32; 4]; 16]; $halves]`, the `$shape` instruction,
/// whose D list is `$list` (`{0}, {1}, ...`, one per register).
macro_rules! wgmma_shape {
    ($halves:literal, $shape:literal, $list:expr, $frags:tt) => {
        impl WgmmaAcc for [[[f32; 4]; 16]; $halves] {
            #[inline(always)]
            unsafe fn mma_bf16(&mut self, desc_a: u64, desc_b: u64) {
                let acc = self;
                // SAFETY: the caller's contract. The immediates after the
                // descriptors: scale-d 1 (D = A B + D), the scales of A and
                // B 1, A not transposed (K-major), B transposed (N-major).
                unsafe {
                    with_acc!(acc $frags;
                        concat!("wgmma.mma_async.sync.aligned.", $shape, ".f32.bf16.bf16 {{", $list, "}}, {da}, {db}, 1, 1, 1, 0, 1;");
                        da = in(reg64) desc_a,
                        db = in(reg64) desc_b,
                        options(nostack, preserves_flags)
                    )
                };
            }

            #[inline(always)]
            fn wait<const PENDING: u32>(&mut self) {
                let acc = self;
                // SAFETY: waits on the warpgroup's own wgmmas.
                unsafe {
                    with_acc!(acc $frags;
                        "wgmma.wait_group.sync.aligned {n};",
                        concat!("// accumulators: ", $list);
                        n = const PENDING,
                        options(nostack, preserves_flags)
                    )
                };
            }
        }
    };
}

// ANCHOR: wgmma_bf16
wgmma_shape!(1, "m64n128k16",
    "{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, \
     {16}, {17}, {18}, {19}, {20}, {21}, {22}, {23}, {24}, {25}, {26}, {27}, {28}, {29}, {30}, {31}, \
     {32}, {33}, {34}, {35}, {36}, {37}, {38}, {39}, {40}, {41}, {42}, {43}, {44}, {45}, {46}, {47}, \
     {48}, {49}, {50}, {51}, {52}, {53}, {54}, {55}, {56}, {57}, {58}, {59}, {60}, {61}, {62}, {63}",
    [(0 0) (0 1) (0 2) (0 3) (0 4) (0 5) (0 6) (0 7) (0 8) (0 9) (0 10) (0 11) (0 12) (0 13) (0 14) (0 15)]);
wgmma_shape!(2, "m64n256k16",
    "{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, \
     {16}, {17}, {18}, {19}, {20}, {21}, {22}, {23}, {24}, {25}, {26}, {27}, {28}, {29}, {30}, {31}, \
     {32}, {33}, {34}, {35}, {36}, {37}, {38}, {39}, {40}, {41}, {42}, {43}, {44}, {45}, {46}, {47}, \
     {48}, {49}, {50}, {51}, {52}, {53}, {54}, {55}, {56}, {57}, {58}, {59}, {60}, {61}, {62}, {63}, \
     {64}, {65}, {66}, {67}, {68}, {69}, {70}, {71}, {72}, {73}, {74}, {75}, {76}, {77}, {78}, {79}, \
     {80}, {81}, {82}, {83}, {84}, {85}, {86}, {87}, {88}, {89}, {90}, {91}, {92}, {93}, {94}, {95}, \
     {96}, {97}, {98}, {99}, {100}, {101}, {102}, {103}, {104}, {105}, {106}, {107}, {108}, {109}, {110}, {111}, \
     {112}, {113}, {114}, {115}, {116}, {117}, {118}, {119}, {120}, {121}, {122}, {123}, {124}, {125}, {126}, {127}",
    [(0 0) (0 1) (0 2) (0 3) (0 4) (0 5) (0 6) (0 7) (0 8) (0 9) (0 10) (0 11) (0 12) (0 13) (0 14) (0 15) (1 0) (1 1) (1 2) (1 3) (1 4) (1 5) (1 6) (1 7) (1 8) (1 9) (1 10) (1 11) (1 12) (1 13) (1 14) (1 15)]);
// ANCHOR_END: wgmma_bf16
