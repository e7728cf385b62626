//! The shared-memory layout Hopper's `wgmma` reads its operands in, as
//! plain arithmetic: the 128-byte swizzle and the matrix descriptor (PTX
//! ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
//! Instructions": "Shared Memory Matrix Layout", "Matrix Descriptor
//! Format"). Built for the host as well as the GPU, so that CPU tests can
//! hold the kernels' copies against what a descriptor describes; the
//! device layer (`device::wgmma`) re-exports it.

// ANCHOR: layout
/// Byte `offset` of a region in the 128-byte swizzle (its start 1024-byte
/// aligned) as stored: the 16-byte chunk within a 128-byte row (bits 4-6)
/// XOR the row within its 8-row atom (bits 7-9). This is the PTX ISA's
/// `Swizzle<3, 4, 3>`, which `wgmma` applies to the addresses a descriptor
/// in swizzle mode 1 describes (and what TMA's `SWIZZLE_128B` writes): the
/// 8 rows of a column of chunks fall in 8 different groups of banks.
pub const fn swizzle_128b(offset: u32) -> u32 {
    offset ^ (((offset >> 7) & 7) << 4)
}

/// A shared-memory matrix descriptor in the 128-byte swizzle (mode 1,
/// bits 62-63), base offset 0 (bits 49-51): the start address, the
/// leading-dimension byte offset (LBO) and the stride-dimension byte offset
/// (SBO), each as `(bytes & 0x3FFFF) >> 4` in bits 0-13, 16-29 and 32-45.
/// For a K-major operand in this swizzle the LBO is not used (1 by
/// convention, 16 bytes) and the SBO is the step between 8-row atoms; for an
/// MN-major operand the LBO is the step between 64-element (128-byte) blocks
/// of the M or N extent, the SBO the step between groups of 8 k rows.
///
/// `start` is a 32-bit shared address whose atom starts on a 1024-byte
/// boundary (so the base offset is 0); `lbo` and `sbo` are in bytes,
/// multiples of 16 below 256 KiB.
pub const fn descriptor_128b(start: u32, lbo: u32, sbo: u32) -> u64 {
    const fn field(bytes: u32) -> u64 {
        ((bytes & 0x3FFFF) >> 4) as u64
    }
    field(start) | (field(lbo) << 16) | (field(sbo) << 32) | (1u64 << 62)
}

/// The same descriptor `bytes` further on (its start address field moved
/// by `bytes / 16`; the field does not carry into the LBO while the start
/// stays below 256 KiB, as every address of a block's shared memory does):
/// the next k slice of an operand.
pub const fn descriptor_advance(desc: u64, bytes: u32) -> u64 {
    desc + (bytes >> 4) as u64
}
// ANCHOR_END: layout
