//! Scale repack (`fqScaleRepack`): a scale buffer rewritten from one layout to another, batched, with an
//! optional stacked side whose batches are delimited by row offsets (MoE experts stacked contiguously).
use crate::objects::check_type;
use crate::{check, enums::*, Element, Error, Handle, Result};
use fusedquant_sys as sys;
use std::ffi::c_void;
use std::mem::size_of_val;
use std::ptr;

/// Bytes of `batch` blocks of `rows` x `groups` scales of `scale_type` in `layout`, padding included
/// (`fqGetScaleRepackSize`).
pub fn scale_repack_size(
    scale_type: DataType,
    batch: i64,
    rows: i64,
    groups: i64,
    layout: ScaleLayout,
) -> Result<usize> {
    let mut bytes = 0;
    check(unsafe { sys::fqGetScaleRepackSize(scale_type.into(), batch, rows, groups, layout.into(), &mut bytes) })?;
    Ok(bytes)
}

/// What a repack moves: `batch` blocks of `rows` x `groups` scales of `scale_type` (Fp32, E8m0, or Fp8E4m3fn
/// for NVFP4 block scales) from `src_layout` to `dst_layout`; with a stacked [`ScaleRepackBatching`], one
/// side is a single block of `stacked_rows` rows in which batch b is rows `[off[b], off[b+1])`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaleRepack {
    pub scale_type: DataType,
    pub batch: i64,
    pub rows: i64,
    pub groups: i64,
    pub batching: ScaleRepackBatching,
    pub stacked_rows: i64,
    pub src_layout: ScaleLayout,
    pub dst_layout: ScaleLayout,
}

impl ScaleRepack {
    /// One block of `rows` x `groups` scales from `src_layout` to `dst_layout`.
    pub fn new(scale_type: DataType, rows: i64, groups: i64, src_layout: ScaleLayout, dst_layout: ScaleLayout) -> Self {
        ScaleRepack {
            scale_type,
            batch: 1,
            rows,
            groups,
            batching: ScaleRepackBatching::Blocks,
            stacked_rows: 0,
            src_layout,
            dst_layout,
        }
    }

    /// `batch` blocks on each side (or `batch` batches of a stacked side).
    pub fn with_batch(mut self, batch: i64) -> Self {
        self.batch = batch;
        self
    }

    /// One side stacked: `batching` says which, `stacked_rows` how many rows it has; the row offsets are
    /// given when running.
    pub fn with_stacked(mut self, batching: ScaleRepackBatching, stacked_rows: i64) -> Self {
        self.batching = batching;
        self.stacked_rows = stacked_rows;
        self
    }

    fn side_bytes(&self, stacked: bool, layout: ScaleLayout) -> Result<usize> {
        let (blocks, rows) = if stacked { (1, self.stacked_rows) } else { (self.batch, self.rows) };
        scale_repack_size(self.scale_type, blocks, rows, self.groups, layout)
    }

    /// Bytes the source must hold.
    pub fn src_bytes(&self) -> Result<usize> {
        self.side_bytes(self.batching == ScaleRepackBatching::StackedToBlocks, self.src_layout)
    }

    /// Bytes the destination must hold (all of them are written).
    pub fn dst_bytes(&self) -> Result<usize> {
        self.side_bytes(self.batching == ScaleRepackBatching::BlocksToStacked, self.dst_layout)
    }
}

impl Handle {
    /// Repacks host slices on the host backend: `src` read in `r.src_layout`'s storage order, every byte of
    /// `r.dst_bytes()` of `dst` written (padding and rows of no batch with 0). `row_offsets` holds
    /// `r.batch + 1` entries when one side is stacked, and is `None` otherwise. Slices of any [`Element`]
    /// type: sizes are checked in bytes (fp32 scales need 4-byte aligned slices).
    pub fn repack_scales<S: Element, D: Element>(
        &self,
        r: &ScaleRepack,
        row_offsets: Option<&[i32]>,
        src: &[S],
        dst: &mut [D],
    ) -> Result<()> {
        if self.backend()? != Backend::Host {
            let msg = "handle: repack_scales takes host slices; on a CUDA handle use repack_scales_raw";
            return Err(Error::new(Status::InvalidValue, msg));
        }
        check_type("src", S::DTYPE, r.scale_type)?;
        check_type("dst", D::DTYPE, r.scale_type)?;
        let offsets = match row_offsets {
            None => ptr::null(),
            Some(o) => {
                // The library reads batch + 1 entries: a shorter slice would be read past its end.
                if i64::try_from(o.len()).ok() != r.batch.checked_add(1) {
                    let msg = format!("row_offsets: {} entries, batch + 1 = {} expected", o.len(), r.batch as i128 + 1);
                    return Err(Error::new(Status::InvalidValue, msg));
                }
                o.as_ptr()
            }
        };
        // SAFETY: host memory whose sizes are passed; the offsets slice holds batch + 1 entries; the call is
        // synchronous and the library never reads or writes past the sizes it is given.
        unsafe {
            self.repack_scales_raw(
                r,
                offsets,
                src.as_ptr().cast(),
                size_of_val(src),
                dst.as_mut_ptr().cast(),
                size_of_val(dst),
                ptr::null_mut(),
            )
        }
    }

    /// `fqScaleRepack` on raw pointers: on a CUDA handle, device pointers and work enqueued on `stream`
    /// (a `cudaStream_t`, or NULL for the legacy default stream; capturable in a CUDA graph); synchronous on
    /// the host backend.
    ///
    /// # Safety
    /// `src` points to `src_bytes` readable bytes and `dst` to `dst_bytes` writable bytes, not overlapping;
    /// `row_offsets` is NULL or points to `r.batch + 1` int32 values; all in memory of the handle's kind and,
    /// on a CUDA handle, valid until the work on `stream` completes, `stream` a live stream of its device.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn repack_scales_raw(
        &self,
        r: &ScaleRepack,
        row_offsets: *const i32,
        src: *const c_void,
        src_bytes: usize,
        dst: *mut c_void,
        dst_bytes: usize,
        stream: *mut c_void,
    ) -> Result<()> {
        check(sys::fqScaleRepack(
            self.as_raw(),
            r.scale_type.into(),
            r.batch,
            r.rows,
            r.groups,
            r.batching.into(),
            row_offsets,
            r.stacked_rows,
            r.src_layout.into(),
            src,
            src_bytes,
            r.dst_layout.into(),
            dst,
            dst_bytes,
            stream.cast(),
        ))
    }
}
