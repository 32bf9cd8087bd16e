//! Safe Rust API of libfusedquant: a gated activation (SiLU-and-mul, ...) fused with FP8 / INT8
//! quantization, writing the scales in the layout the next GEMM reads. The C header
//! `include/fusedquant/fusedquant.h` is the contract; this crate wraps it one to one:
//!
//! - [`Handle`], [`QuantDesc`] and [`TensorLayout`] own the C objects and destroy them on drop;
//! - every C enum is a Rust enum ([`enums`]) with an `Unknown(i32)` variant for values it does not know;
//! - every failure is an [`Error`] carrying the [`Status`] and the library's message;
//! - [`Handle::quantize`] runs over slices on the host backend, after checking their lengths against the
//!   layouts and the scale-buffer query. Slices hold plain bits (`u16` for bf16, `u8` for fp8, ...) or typed
//!   elements, checked against the layout's type: `half::bf16` / `half::f16` inputs (the default `half`
//!   feature), [`Fp8E4m3fn`], [`Fp8E5m2`], [`E8m0`], ... outputs and scales with `to_f32` ([`Element`]);
//! - [`Handle::quantize_device`] runs on a CUDA handle over device buffers the caller holds through its own
//!   safe type, for which it implements [`DevicePtr`] / [`DevicePtrMut`]; [`Handle::quantize_raw`] takes raw
//!   pointers and a stream;
//! - [`Handle::repack_scales`] rewrites a scale buffer from one layout to another ([`ScaleRepack`]);
//! - [`Handle::grouped_gemm`] runs the grouped FP8 GEMM with the fused epilogue ([`GroupedGemmDesc`]).
//!
//! Every object is `Send + Sync`: the C API lets several threads use one handle and one descriptor at once
//! (docs/api.md, "Threads"), and setters take `&mut self`.
//!
//! ```no_run
//! use fusedquant::*;
//! # fn main() -> Result<()> {
//! let (tokens, hidden) = (4, 256);
//! let handle = Handle::new(Backend::Host, 0)?;
//! let mut desc = QuantDesc::new()?;
//! desc.set_activation(Activation::Silu)?.set_gate_layout(GateLayout::Split)?.set_group_size(128)?;
//! let input_layout = TensorLayout::new(DataType::Bf16, tokens, 2 * hidden, 2 * hidden)?;
//! let output_layout = TensorLayout::new(DataType::Fp8E4m3fn, tokens, hidden, hidden)?;
//! let input = vec![half::bf16::ZERO; (tokens * 2 * hidden) as usize]; // or u16 bit patterns
//! let mut output = vec![Fp8E4m3fn::default(); (tokens * hidden) as usize]; // or u8
//! let mut scales = vec![0f32; desc.scale_buffer_size(tokens, hidden, Output::Rowwise)? / 4];
//! handle.quantize(&desc, &input_layout, &input, &output_layout, &mut output, &mut scales)?;
//! # Ok(()) }
//! ```
use fusedquant_sys as sys;
use std::ffi::CStr;
use std::fmt;

pub mod bits;
mod device;
mod elements;
pub mod enums;
mod gemm;
mod objects;
mod plan;
mod repack;

pub use device::{DevicePtr, DevicePtrMut};
pub use elements::{E8m0, Element, Fp4E2m1x2, Fp8E4m3fn, Fp8E4m3fnuz, Fp8E5m2};
pub use enums::*;
/// The raw bindings, for what this crate does not wrap.
pub use fusedquant_sys as ffi;
pub use gemm::{GemmBuffers, GemmGroups};
/// The `half` crate whose `bf16` / `f16` slices the safe calls take (the default `half` feature).
#[cfg(feature = "half")]
pub use half;
pub use objects::{GroupedGemmDesc, Handle, QuantDesc, ScaleBuffer, TensorLayout};
pub use plan::{Plan, PlanCache};
pub use repack::{scale_repack_size, ScaleRepack};

/// The version of the header this crate was built against (MAJOR*10000 + MINOR*100 + PATCH).
pub const HEADER_VERSION: u32 = sys::FQ_VERSION_NUMBER;

/// The version of the library loaded at run time (compare with [`HEADER_VERSION`]).
pub fn version() -> u32 {
    unsafe { sys::fqGetVersion() }
}

/// A failed call: the library's status and its message naming the argument and the rule it broke.
/// Checks this crate makes itself (slice lengths) use the same statuses the C library would.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub status: Status,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn new(status: Status, message: impl Into<String>) -> Self {
        Error { status, message: message.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = unsafe { c_str(sys::fqGetStatusString(self.status.into())) };
        write!(f, "{name}: {}", self.message)
    }
}

impl std::error::Error for Error {}

/// Turns a status into a `Result`, reading the thread-local message of a failure right away.
pub(crate) fn check(status: sys::fqStatus_t) -> Result<()> {
    match Status::from(status) {
        Status::Success => Ok(()),
        status => Err(Error::new(status, unsafe { c_str(sys::fqGetLastErrorMessage()) })),
    }
}

/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn c_str(p: *const std::os::raw::c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}
