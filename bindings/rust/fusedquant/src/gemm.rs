//! The grouped FP8 GEMM with the fused activation + quantization epilogue (`fqGroupedGemm`, docs/gemm.md).
use crate::objects::{check_slice, invalid};
use crate::{check, enums::*, Element, Error, GroupedGemmDesc, Handle, QuantDesc, Result, TensorLayout};
use fusedquant_sys as sys;
use std::ffi::c_void;
use std::mem::size_of_val;
use std::ptr;

/// The groups of a host grouped GEMM: `offsets` (E+1 row offsets; `None`: one group of all rows), optional
/// `counts` (E valid rows of each slot) and `alpha` (E per-group alphas). E is the descriptor's
/// [`GroupedGemmDesc::num_groups`].
#[derive(Clone, Copy, Debug, Default)]
pub struct GemmGroups<'a> {
    pub offsets: Option<&'a [i32]>,
    pub counts: Option<&'a [i32]>,
    pub alpha: Option<&'a [f32]>,
}

/// What a host grouped GEMM writes, each optional: `c` (bf16 bits [M, N]), `d` (bf16 bits of y [M, H]) and
/// the quantized output (`output` in `output_layout` with its `scales`, as [`Handle::quantize`] writes them).
/// Without `output` the call runs with QUANTIZE = 0 (then `c` or `d` must be given).
pub struct GemmBuffers<'a, O: Element, S: Element> {
    pub c: Option<&'a mut [u16]>,
    pub d: Option<&'a mut [u16]>,
    pub output: Option<(&'a TensorLayout, &'a mut [O], &'a mut [S])>,
}

fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// Checks that `data` holds at least `need` elements.
fn check_len<T>(what: &str, data: &[T], need: i64) -> Result<()> {
    if (data.len() as i128) < need as i128 {
        let msg =
            format!("{what}: slice of {} elements is shorter than the {need} the problem reads or writes", data.len());
        return Err(Error::new(Status::InsufficientBuffer, msg));
    }
    Ok(())
}

fn opt_ptr<T>(s: Option<&[T]>) -> *const T {
    s.map_or(ptr::null(), |s| s.as_ptr())
}

impl Handle {
    /// Runs the grouped FP8 GEMM and its epilogue on host slices (host backend): `a` [M, K] and `b` [E*N, K]
    /// e4m3fn bytes in their layouts, `a_scales` A's 1x128 fp32 scales in the descriptor's A_SCALE_LAYOUT,
    /// `b_scales` B's 128x128 block scales (E blocks of ceil(N/128) x ceil(K/128), row-major). Every slice is
    /// checked against what the problem reads or writes first; the descriptor's group and output pointers are
    /// set from `groups` and `out` for the call and cleared after it, QUANTIZE is set to whether `out.output`
    /// is given (NUM_GROUPS and A_SCALE_LAYOUT are the caller's). The epilogue's own pointers (row probabilities, columnwise outputs) are the caller's, set
    /// through its unsafe setters.
    #[allow(clippy::too_many_arguments)]
    pub fn grouped_gemm<O: Element, S: Element>(
        &self,
        gemm: &mut GroupedGemmDesc,
        epilogue: &QuantDesc,
        groups: GemmGroups<'_>,
        a_layout: &TensorLayout,
        a: &[u8],
        a_scales: &[f32],
        b_layout: &TensorLayout,
        b: &[u8],
        b_scales: &[f32],
        out: GemmBuffers<'_, O, S>,
    ) -> Result<()> {
        if self.backend()? != Backend::Host {
            return Err(invalid(
                "handle: grouped_gemm takes host slices; on a CUDA handle use grouped_gemm_raw".into(),
            ));
        }
        check_slice("a", a_layout, a)?;
        check_slice("b", b_layout, b)?;
        let (m, k, e) = (a_layout.rows()?, a_layout.cols()?, i64::from(gemm.num_groups()?));
        let n = b_layout.rows()? / e.max(1);
        let h = if epilogue.gate_layout()? == GateLayout::None { n } else { n / 2 };
        let a_ld = if gemm.a_scale_layout()? == ScaleLayout::ColMajorTma { ceil_div(m, 4) * 4 } else { m };
        if m > 0 {
            check_len("a_scales", a_scales, ceil_div(k, 128) * a_ld)?;
            check_len("b_scales", b_scales, e * ceil_div(n, 128) * ceil_div(k, 128))?;
        }
        if let Some(o) = groups.offsets {
            check_len("groups.offsets", o, e + 1)?;
        }
        if let Some(c) = groups.counts {
            check_len("groups.counts", c, e)?;
        }
        if let Some(al) = groups.alpha {
            check_len("groups.alpha", al, e)?;
        }
        let GemmBuffers { c, d, output } = out;
        if let Some(c) = c.as_deref() {
            check_len("c", c, m * n)?;
        }
        if let Some(d) = d.as_deref() {
            check_len("d", d, m * h)?;
        }
        let c_ptr = c.map_or(ptr::null_mut(), |c| c.as_mut_ptr().cast());
        let d_ptr = d.map_or(ptr::null_mut(), |d| d.as_mut_ptr().cast());
        let (layout, values, scales, scale_bytes) = match output {
            Some((layout, values, scales)) => {
                check_slice("output", layout, values)?;
                (Some(layout), values.as_mut_ptr().cast(), scales.as_mut_ptr().cast(), size_of_val(scales))
            }
            None => (None, ptr::null_mut(), ptr::null_mut(), 0),
        };
        gemm.set_quantize(layout.is_some())?;
        // SAFETY: host slices checked above, borrowed for this synchronous call; cleared before returning.
        let result = unsafe {
            gemm.set_group_offsets_pointer(opt_ptr(groups.offsets))?;
            gemm.set_group_counts_pointer(opt_ptr(groups.counts))?;
            gemm.set_alpha_pointer(opt_ptr(groups.alpha))?;
            gemm.set_c_output_pointer(c_ptr)?;
            gemm.set_d_output_pointer(d_ptr)?;
            self.grouped_gemm_raw(
                gemm,
                epilogue,
                a_layout,
                a.as_ptr().cast(),
                a_scales.as_ptr().cast(),
                b_layout,
                b.as_ptr().cast(),
                b_scales.as_ptr().cast(),
                layout,
                values,
                scales,
                scale_bytes,
                ptr::null_mut(),
            )
        };
        // SAFETY: NULL pointers are the descriptor's defaults.
        unsafe {
            gemm.set_group_offsets_pointer(ptr::null())?;
            gemm.set_group_counts_pointer(ptr::null())?;
            gemm.set_alpha_pointer(ptr::null())?;
            gemm.set_c_output_pointer(ptr::null_mut())?;
            gemm.set_d_output_pointer(ptr::null_mut())?;
        }
        result
    }

    /// `fqGroupedGemm` on raw pointers: on a CUDA handle, device pointers and work enqueued on `stream` (a
    /// `cudaStream_t`, or NULL for the legacy default stream); synchronous on the host backend.
    ///
    /// # Safety
    /// `a`, `a_scales`, `b`, `b_scales` point to memory of the handle's kind holding what their layouts and the
    /// descriptor describe (docs/gemm.md), `output` to the tensor `output_layout` describes and `scales` to
    /// `scales_bytes` bytes (both may be NULL with QUANTIZE = 0), no output overlapping an input; the
    /// descriptors' pointers are valid likewise; on a CUDA handle everything stays valid until the work on
    /// `stream` completes, and `stream` is a live stream of the handle's device.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn grouped_gemm_raw(
        &self,
        gemm: &GroupedGemmDesc,
        epilogue: &QuantDesc,
        a_layout: &TensorLayout,
        a: *const c_void,
        a_scales: *const c_void,
        b_layout: &TensorLayout,
        b: *const c_void,
        b_scales: *const c_void,
        output_layout: Option<&TensorLayout>,
        output: *mut c_void,
        scales: *mut c_void,
        scales_bytes: usize,
        stream: *mut c_void,
    ) -> Result<()> {
        check(sys::fqGroupedGemm(
            self.as_raw(),
            gemm.as_raw(),
            epilogue.as_raw(),
            a_layout.as_raw(),
            a,
            a_scales,
            b_layout.as_raw(),
            b,
            b_scales,
            output_layout.map_or(ptr::null_mut(), |l| l.as_raw()),
            output,
            scales,
            scales_bytes,
            stream.cast(),
        ))
    }
}
