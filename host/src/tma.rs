//! Tensor maps for Hopper's tensor memory accelerator: the 128-byte
//! descriptor (`CUtensorMap`) a `cp.async.bulk.tensor` copy reads to find a
//! box of a matrix in global memory, encoded by the driver
//! (`cuTensorMapEncodeTiled`, CUDA Driver API, "Tensor Map Object
//! Management") and uploaded to device memory, where the kernel reads it
//! through a pointer.

use cudarc::driver::CudaSlice;
use cudarc::driver::sys;

use crate::error::{Error, Result};
use crate::gpu::Gpu;

/// Bytes of a tensor map.
pub const TENSOR_MAP_BYTES: usize = 128;

/// The tensor map of a row-major `rows x cols` matrix of bf16 at the
/// device address `base` (16-byte aligned), copied in boxes of `box_dims =
/// [columns, rows]` elements written to shared memory in the 128-byte
/// swizzle (so `box_dims[0]` is at most 64: 128 bytes), elements outside
/// the matrix read as zeros.
///
/// # Errors
/// [`Error::Size`] where a row is not a multiple of 16 bytes (`cols` not a
/// multiple of 8: the map's row stride must be) or a dimension does not fit
/// the map; [`Error::Driver`] where the driver refuses the encoding.
pub fn bf16_tensor_map_128b(
    base: u64,
    rows: usize,
    cols: usize,
    box_dims: [u32; 2],
) -> Result<[u8; TENSOR_MAP_BYTES]> {
    if !cols.is_multiple_of(8) || box_dims[0] * 2 > 128 || rows == 0 || cols == 0 {
        return Err(Error::Size(format!(
            "a tensor map of {rows} x {cols} bf16 with boxes of {} x {}: rows must be multiples of 16 bytes and boxes at \
             most 128 bytes wide",
            box_dims[1], box_dims[0]
        )));
    }
    let dims = [cols as u64, rows as u64];
    // The stride of every dimension but the first, in bytes.
    let strides = [2 * cols as u64];
    let element_strides = [1u32, 1];
    let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::uninit();
    // SAFETY: every pointer is to a live array of the rank's length (the
    // strides one shorter) or to the map being written; the driver reads
    // nothing at `base`, it only records the address.
    let status = unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            2,
            base as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            box_dims.as_ptr(),
            element_strides.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    status.result().map_err(|source| Error::Driver {
        call: "cuTensorMapEncodeTiled",
        source,
    })?;
    // SAFETY: the driver wrote the whole map on success.
    let map = unsafe { map.assume_init() };
    let mut bytes = [0u8; TENSOR_MAP_BYTES];
    for (chunk, word) in bytes.chunks_exact_mut(8).zip(map.opaque) {
        chunk.copy_from_slice(&word.to_ne_bytes());
    }
    Ok(bytes)
}

/// `map` in a device buffer of its own (128 bytes, aligned as every
/// allocation is, past the 64 bytes a tensor map needs), copied on `gpu`'s
/// stream.
///
/// # Errors
/// The allocation's or the copy's.
pub fn upload_map(gpu: &Gpu, map: &[u8; TENSOR_MAP_BYTES]) -> Result<CudaSlice<u8>> {
    // SAFETY: every bit pattern is a valid u8; the copy below writes the
    // buffer before anything reads it.
    let mut buf = unsafe { gpu.alloc::<u8>(TENSOR_MAP_BYTES) }?;
    gpu.stream
        .memcpy_htod(map, &mut buf)
        .map_err(|source| Error::Driver {
            call: "cuMemcpyHtoDAsync (a tensor map)",
            source,
        })?;
    Ok(buf)
}
