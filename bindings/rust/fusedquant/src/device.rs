//! The GPU path without `unsafe`: the caller holds device memory through a wrapper type of its own (a CUDA
//! crate's buffer, a framework's tensor) and implements [`DevicePtr`] / [`DevicePtrMut`] for it, once, in
//! an `unsafe impl` that states what the wrapper guarantees; [`Handle::quantize_device`] and
//! [`Handle::repack_scales_device`] are then safe calls. The CUDA backend itself refuses a pointer that is
//! not memory of the handle's device (docs/api.md "Devices"); these calls check the sizes the C layer
//! trusts, and that every buffer of a call is ordered on one stream, on which the work is enqueued.
use crate::objects::invalid;
use crate::{enums::*, Error, Handle, QuantDesc, Result, ScaleRepack, TensorLayout};
use std::ffi::c_void;
use std::ptr;

/// Device memory read by a call: `byte_len()` bytes at `device_ptr()`, whose uses are ordered on `stream()`.
///
/// # Safety
/// An implementation guarantees, for as long as the value lives:
/// - `device_ptr()` addresses `byte_len()` bytes the device reads at that address (device, managed or
///   mapped page-locked memory of one device), or is NULL with `byte_len()` 0;
/// - `stream()` is a live `cudaStream_t` of that device (NULL: the legacy default stream) on which the
///   wrapper orders the memory's release and every use its own safe API makes of it (copies, frees): work
///   this crate enqueues on that stream may still run after the call returns, so the memory must stay
///   allocated, and no host code may access it, until that work completes (as a stream-ordered allocator's
///   `cudaFreeAsync` on the same stream ensures);
/// - the same values are returned on every call.
pub unsafe trait DevicePtr {
    /// The device address of the first byte.
    fn device_ptr(&self) -> *const c_void;
    /// Bytes from that address that belong to the buffer.
    fn byte_len(&self) -> usize;
    /// The `cudaStream_t` the buffer's uses are ordered on.
    fn stream(&self) -> *mut c_void;
}

/// Device memory written by a call.
///
/// # Safety
/// As for [`DevicePtr`]; in addition, while the `&mut self` borrow lasts, nothing else (another buffer,
/// another stream's work the wrapper knows of) writes or reads these bytes.
pub unsafe trait DevicePtrMut: DevicePtr {
    /// The device address of the first byte, for writing.
    fn device_ptr_mut(&mut self) -> *mut c_void;
}

/// Checks that `buffer` holds at least `need` bytes.
fn check_len(what: &str, buffer: &dyn DevicePtr, need: usize) -> Result<()> {
    if buffer.byte_len() < need {
        let msg =
            format!("{what}: device buffer of {} bytes is smaller than the {need} bytes needed", buffer.byte_len());
        return Err(Error::new(Status::InsufficientBuffer, msg));
    }
    Ok(())
}

/// The one stream all `buffers` are ordered on (the work is enqueued there), or an error naming the first
/// that differs.
fn common_stream(buffers: &[(&str, &dyn DevicePtr)]) -> Result<*mut c_void> {
    let (first, stream) = (buffers[0].0, buffers[0].1.stream());
    for &(what, buffer) in &buffers[1..] {
        if buffer.stream() != stream {
            let msg = format!(
                "{what}: ordered on stream {:p}, {first} on {stream:p}; the buffers of one call share one stream",
                buffer.stream()
            );
            return Err(invalid(msg));
        }
    }
    Ok(stream)
}

fn check_cuda(handle: &Handle, call: &str, host_call: &str) -> Result<()> {
    match handle.backend()? {
        Backend::Cuda => Ok(()),
        b => Err(invalid(format!("handle: {call} takes device buffers and a {b:?} handle; use {host_call}"))),
    }
}

impl Handle {
    /// [`Self::quantize`] on device buffers of a CUDA handle: enqueued on the stream the buffers share, and
    /// asynchronous like every CUDA call. `input` and `output` must hold what their layouts span, `scales`
    /// the scale-buffer query's bytes and `workspace` [`Self::workspace_size`]'s (`None` where that is 0).
    /// Columnwise outputs and the descriptor's other pointers are set through its unsafe setters.
    #[allow(clippy::too_many_arguments)]
    pub fn quantize_device(
        &self,
        desc: &QuantDesc,
        input_layout: &TensorLayout,
        input: &dyn DevicePtr,
        output_layout: &TensorLayout,
        output: &mut dyn DevicePtrMut,
        scales: &mut dyn DevicePtrMut,
        workspace: Option<&mut dyn DevicePtrMut>,
    ) -> Result<()> {
        check_len("input", input, input_layout.span_bytes()?)?;
        if desc.outputs()?.contains(&Output::Rowwise) {
            check_len("output", &*output, output_layout.span_bytes()?)?;
        }
        let mut buffers: Vec<(&str, &dyn DevicePtr)> =
            vec![("input", input), ("output", &*output), ("scales", &*scales)];
        if let Some(w) = &workspace {
            buffers.push(("workspace", &**w));
        }
        let stream = common_stream(&buffers)?;
        check_cuda(self, "quantize_device", "quantize")?;
        // The library checks the scale and workspace sizes it is given, and that each pointer is memory of
        // the handle's device.
        let (workspace, workspace_bytes) =
            workspace.map_or((ptr::null_mut(), 0), |w| (w.device_ptr_mut(), w.byte_len()));
        // SAFETY: sizes checked above or by the library; the DevicePtr contract keeps the memory valid and
        // unaliased until the work on `stream` completes.
        unsafe {
            self.quantize_raw(
                desc,
                input_layout,
                input.device_ptr(),
                output_layout,
                output.device_ptr_mut(),
                scales.device_ptr_mut(),
                scales.byte_len(),
                workspace,
                workspace_bytes,
                stream,
            )
        }
    }

    /// [`Self::repack_scales`] on device buffers of a CUDA handle, enqueued on the stream the buffers share.
    /// `row_offsets` holds `r.batch + 1` int32 values when one side is stacked, and is `None` otherwise.
    pub fn repack_scales_device(
        &self,
        r: &ScaleRepack,
        row_offsets: Option<&dyn DevicePtr>,
        src: &dyn DevicePtr,
        dst: &mut dyn DevicePtrMut,
    ) -> Result<()> {
        let mut buffers: Vec<(&str, &dyn DevicePtr)> = vec![("src", src), ("dst", &*dst)];
        if let Some(o) = row_offsets {
            let entries = usize::try_from(r.batch.max(0)).unwrap_or(usize::MAX).saturating_add(1);
            check_len("row_offsets", o, entries.saturating_mul(4))?;
            buffers.push(("row_offsets", o));
        }
        let stream = common_stream(&buffers)?;
        check_cuda(self, "repack_scales_device", "repack_scales")?;
        let offsets = row_offsets.map_or(ptr::null(), |o| o.device_ptr().cast());
        // SAFETY: the library checks src and dst against the sizes given; the offsets hold batch + 1 entries;
        // the DevicePtr contract keeps the memory valid and unaliased until the work on `stream` completes.
        unsafe {
            self.repack_scales_raw(
                r,
                offsets,
                src.device_ptr(),
                src.byte_len(),
                dst.device_ptr_mut(),
                dst.byte_len(),
                stream,
            )
        }
    }
}
