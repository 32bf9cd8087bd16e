//! The three C objects (handle, quantization descriptor, tensor layout), their attributes and the calls
//! that use them.
use crate::elements::Element;
use crate::{check, enums::*, Error, Result};
use fusedquant_sys as sys;
use std::ffi::c_void;
use std::mem::{size_of, size_of_val, MaybeUninit};
use std::os::raw::c_char;
use std::ptr;

/// A value an attribute holds, and the C type (`Raw`) it crosses the ABI as.
trait Value: Copy {
    type Raw: Copy;
    fn to_raw(self) -> Self::Raw;
    fn from_raw(raw: Self::Raw) -> Self;
}

macro_rules! plain_values {
    ($($t:ty),*) => {$(impl Value for $t {
        type Raw = $t;
        fn to_raw(self) -> $t { self }
        fn from_raw(raw: $t) -> $t { raw }
    })*};
}
plain_values!(i32, i64, f32, *const f32, *const i32, *mut c_void);

impl Value for bool {
    type Raw = i32;
    fn to_raw(self) -> i32 {
        self as i32
    }
    fn from_raw(raw: i32) -> bool {
        raw != 0
    }
}

/// An index, or none: -1 in C.
impl Value for Option<usize> {
    type Raw = i32;
    fn to_raw(self) -> i32 {
        self.map_or(-1, |i| i32::try_from(i).unwrap_or(i32::MAX))
    }
    fn from_raw(raw: i32) -> Self {
        usize::try_from(raw).ok()
    }
}

impl<E: CEnum> Value for E {
    type Raw = i32;
    fn to_raw(self) -> i32 {
        self.into()
    }
    fn from_raw(raw: i32) -> E {
        raw.into()
    }
}

/// Reads a fixed-size attribute with one of the fq*GetAttribute functions (called as `get(buf, size,
/// written)`).
fn get_attr<V: Value>(get: impl FnOnce(*mut c_void, usize, *mut usize) -> sys::fqStatus_t) -> Result<V> {
    // Raw is an integer, a float or a pointer: all zero bits are a valid value of each.
    let mut raw = MaybeUninit::<V::Raw>::zeroed();
    let mut written = 0;
    check(get(raw.as_mut_ptr().cast(), size_of::<V::Raw>(), &mut written))?;
    if written != size_of::<V::Raw>() {
        let msg = format!("attribute of {written} bytes read into {} bytes", size_of::<V::Raw>());
        return Err(Error::new(Status::InternalError, msg));
    }
    Ok(V::from_raw(unsafe { raw.assume_init() }))
}

/// Writes a fixed-size attribute with one of the fq*SetAttribute functions (called as `set(buf, size)`).
fn set_attr<V: Value>(value: V, set: impl FnOnce(*const c_void, usize) -> sys::fqStatus_t) -> Result<()> {
    let raw = value.to_raw();
    check(set(&raw as *const V::Raw as *const c_void, size_of::<V::Raw>()))
}

/// Typed getters (and setters where named) over an object's private `get` / `set`.
macro_rules! accessors {
    ($obj:ty, $attrs:ident { $($(#[$doc:meta])* $get:ident $(/ $set:ident)?: $ty:ty = $attr:ident;)+ }) => {
        impl $obj {$(
            $(#[$doc])*
            pub fn $get(&self) -> Result<$ty> { self.get($attrs::$attr) }
            $(
                #[doc = concat!("Sets [`Self::", stringify!($get), "`].")]
                pub fn $set(&mut self, value: $ty) -> Result<&mut Self> {
                    self.set($attrs::$attr, value)?;
                    Ok(self)
                }
            )?
        )+}
    };
}

/// Owns a C object: `$destroy` runs on drop (it accepts any live object and never fails on one).
macro_rules! owned {
    ($(#[$doc:meta])* $name:ident($raw:ty), $destroy:ident, $get_fn:ident, $set_fn:ident, $attrs:ident) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name($raw);
        impl $name {
            /// The C object, for calls through [`crate::ffi`]; it stays owned by `self`.
            pub fn as_raw(&self) -> $raw { self.0 }
            fn get<V: Value>(&self, attr: $attrs) -> Result<V> {
                get_attr(|buf, size, written| unsafe { sys::$get_fn(self.0, attr.into(), buf, size, written) })
            }
            fn set<V: Value>(&mut self, attr: $attrs, value: V) -> Result<()> {
                set_attr(value, |buf, size| unsafe { sys::$set_fn(self.0, attr.into(), buf, size) })
            }
        }
        // The C objects have no thread affinity, and the C API lets several threads use one at once
        // (docs/api.md "Threads": each call copies the objects it reads at entry, under the lock attribute
        // writes take). Setters take `&mut self`, so safe code cannot change an object another thread uses;
        // the thread-local error message is read right after the failing call, on the same thread.
        unsafe impl Send for $name {}
        unsafe impl Sync for $name {}
        impl Drop for $name {
            fn drop(&mut self) { unsafe { sys::$destroy(self.0) }; }
        }
    };
}

owned!(
    /// A handle for one backend (`fqHandle_t`): the host reference, or one CUDA device.
    Handle(sys::fqHandle_t), fqDestroy, fqHandleGetAttribute, fqHandleSetAttribute, HandleAttr
);
owned!(
    /// A row-major 2-D tensor: element type, rows, columns and row stride, in elements (`fqTensorLayout_t`).
    TensorLayout(sys::fqTensorLayout_t), fqTensorLayoutDestroy, fqTensorLayoutGetAttribute,
    fqTensorLayoutSetAttribute, TensorLayoutAttr
);
owned!(
    /// What to compute and how to quantize it (`fqQuantDesc_t`). Attributes are checked against each
    /// other when the descriptor is used (queries, [`Handle::quantize`]), so they can be set in any order.
    QuantDesc(sys::fqQuantDesc_t), fqQuantDescDestroy, fqQuantDescGetAttribute, fqQuantDescSetAttribute,
    QuantDescAttr
);

owned!(
    /// What a grouped GEMM computes besides its operands (`fqGroupedGemmDesc_t`): the groups, per-group alphas,
    /// the layout of A's scales and which outputs it writes; see [`Handle::grouped_gemm`].
    GroupedGemmDesc(sys::fqGroupedGemmDesc_t), fqGroupedGemmDescDestroy, fqGroupedGemmDescGetAttribute,
    fqGroupedGemmDescSetAttribute, GemmDescAttr
);

accessors!(GroupedGemmDesc, GemmDescAttr {
    /// NUM_GROUPS: E weights [N, K] stacked in B (default 1).
    num_groups / set_num_groups: i32 = NumGroups;
    /// A_SCALE_LAYOUT of A's 1x128 fp32 scales: ColMajorTma (default) or ColMajor.
    a_scale_layout / set_a_scale_layout: ScaleLayout = AScaleLayout;
    /// QUANTIZE: write the quantized output (default true).
    quantize / set_quantize: bool = Quantize;
    /// GROUP_OFFSETS_POINTER (default NULL: one group of all rows).
    group_offsets_pointer: *const i32 = GroupOffsetsPointer;
    /// GROUP_COUNTS_POINTER (default NULL).
    group_counts_pointer: *const i32 = GroupCountsPointer;
    /// ALPHA_POINTER (default NULL: 1).
    alpha_pointer: *const f32 = AlphaPointer;
    /// C_OUTPUT_POINTER (default NULL).
    c_output_pointer: *mut c_void = COutputPointer;
    /// D_OUTPUT_POINTER (default NULL).
    d_output_pointer: *mut c_void = DOutputPointer;
});

impl GroupedGemmDesc {
    /// A descriptor with the defaults: one group of all rows, COL_MAJOR_TMA A scales, quantized output only.
    pub fn new() -> Result<Self> {
        let mut desc = ptr::null_mut();
        check(unsafe { sys::fqGroupedGemmDescCreate(&mut desc) })?;
        Ok(GroupedGemmDesc(desc))
    }

    /// Bytes of the scale buffer a grouped GEMM with this descriptor's groups and `epilogue` writes for an
    /// output of `rows` x `cols` (the columnwise one included: size it with this, the call cannot check it).
    pub fn scale_buffer_size(&self, epilogue: &QuantDesc, rows: i64, cols: i64, which: Output) -> Result<usize> {
        let mut bytes = 0;
        check(unsafe {
            sys::fqGroupedGemmGetScaleBufferSize(self.0, epilogue.0, rows, cols, which.into(), &mut bytes)
        })?;
        Ok(bytes)
    }
}

accessors!(Handle, HandleAttr {
    /// The backend (read-only).
    backend: Backend = Backend;
    /// The CUDA ordinal, -1 on the host backend (read-only).
    device: i32 = Device;
    /// Compute capability * 10 (90 = sm_90), 0 on the host (read-only).
    arch: i32 = Arch;
    /// Multiprocessors (host: hardware threads) (read-only).
    sm_count: i32 = SmCount;
    /// Launch with programmatic dependent launch on sm_90+ (default true; fq waits for the previous kernel itself).
    allow_pdl / set_allow_pdl: bool = AllowPdl;
    /// The variant (an index of [`Self::variants`]) every call runs, or `None` (the default): the
    /// dispatcher chooses.
    variant / set_variant: Option<usize> = Variant;
    /// From how many tiles of 2048 outputs a plain CUDA problem runs 16 outputs a thread instead of 8, or
    /// `None` (the default): one wave (SMs x 12). `Some(0)` always runs 16.
    wide_tile_min / set_wide_tile_min: Option<usize> = WideTileMin;
});

accessors!(TensorLayout, TensorLayoutAttr {
    /// Element type.
    dtype / set_dtype: DataType = Type;
    /// Rows.
    rows / set_rows: i64 = Rows;
    /// Columns, in elements.
    cols / set_cols: i64 = Cols;
    /// Row stride, in elements.
    ld / set_ld: i64 = Ld;
});

accessors!(QuantDesc, QuantDescAttr {
    /// ACTIVATION (default Identity).
    activation / set_activation: Activation = Activation;
    /// GATE_LAYOUT (default None: not gated).
    gate_layout / set_gate_layout: GateLayout = GateLayout;
    /// GATE_ORDER (default GateFirst).
    gate_order / set_gate_order: GateOrder = GateOrder;
    /// GATE_BLOCK_WIDTH of BlockInterleaved: a multiple of 32 (default 32).
    gate_block_width / set_gate_block_width: i32 = GateBlockWidth;
    /// INTERMEDIATE_ROUNDING (default Fp32).
    intermediate_rounding / set_intermediate_rounding: IntermediateRounding = IntermediateRounding;
    /// SCHEME (default PerGroup).
    scheme / set_scheme: QuantScheme = Scheme;
    /// GROUP_SIZE of PerGroup: 32, 64 or 128 (default 128); 0 unsets it. Other schemes refuse a value other than
    /// their own block (MXFP8/MXFP4 32, NVFP4 16, BLOCK_2D 128; none for per-token and per-tensor).
    group_size / set_group_size: i32 = GroupSize;
    /// OUTPUT_TYPE of the values (default Fp8E4m3fn).
    output_type / set_output_type: DataType = OutputType;
    /// SCALE_TYPE (default Fp32).
    scale_type / set_scale_type: DataType = ScaleType;
    /// SCALE_LAYOUT (default RowMajor).
    scale_layout / set_scale_layout: ScaleLayout = ScaleLayout;
    /// SCALE_ROUNDING (default None).
    scale_rounding / set_scale_rounding: ScaleRounding = ScaleRounding;
    /// MX_SCALE_RULE (default Rceil).
    mx_scale_rule / set_mx_scale_rule: MxScaleRule = MxScaleRule;
    /// SCALE_APPLY (default Divide).
    scale_apply / set_scale_apply: ScaleApply = ScaleApply;
    /// QMAX; 0 = the output type's largest finite value.
    qmax / set_qmax: f32 = Qmax;
    /// MIN_SCALE; 0 = the default (1/(qmax*512) for fp8, FLT_EPSILON for int8).
    min_scale / set_min_scale: f32 = MinScale;
    /// SWIGLU_ALPHA (default 1.702).
    swiglu_alpha / set_swiglu_alpha: f32 = SwigluAlpha;
    /// SWIGLU_BETA (default 1.0).
    swiglu_beta / set_swiglu_beta: f32 = SwigluBeta;
    /// SWIGLU_LIMIT (default 7.0; +inf = no clamp).
    swiglu_limit / set_swiglu_limit: f32 = SwigluLimit;
    /// MOE_LAYOUT (default None).
    moe_layout / set_moe_layout: MoeLayout = MoeLayout;
    /// MOE_NUM_EXPERTS (default 0).
    moe_num_experts / set_moe_num_experts: i32 = MoeNumExperts;
    /// COLUMNWISE_BLOCK: 32 or 128 rows per columnwise block (default 32).
    columnwise_block / set_columnwise_block: i32 = ColumnwiseBlock;
    /// COLUMNWISE_TRANSPOSE: columnwise data written as [H, M] (default false).
    columnwise_transpose / set_columnwise_transpose: bool = ColumnwiseTranspose;
    /// STATIC_SCALE_POINTER (set with the unsafe [`Self::set_static_scale_pointer`]).
    static_scale_pointer: *const f32 = StaticScalePointer;
    /// SCALE_UB_POINTER (default NULL).
    scale_ub_pointer: *const f32 = ScaleUbPointer;
    /// ROW_PROB_POINTER (default NULL).
    row_prob_pointer: *const f32 = RowProbPointer;
    /// MOE_OFFSETS_POINTER.
    moe_offsets_pointer: *const i32 = MoeOffsetsPointer;
    /// MOE_COUNTS_POINTER.
    moe_counts_pointer: *const i32 = MoeCountsPointer;
    /// COLUMNWISE_OUTPUT_POINTER.
    columnwise_output_pointer: *mut c_void = ColumnwiseOutputPointer;
    /// COLUMNWISE_SCALE_POINTER.
    columnwise_scale_pointer: *mut c_void = ColumnwiseScalePointer;
    /// GLOBAL_AMAX_POINTER (default NULL: computed by the library).
    global_amax_pointer: *const f32 = GlobalAmaxPointer;
});

/// Setters of the pointer attributes: the library dereferences them when work runs, so they are unsafe.
macro_rules! pointer_setters {
    ($obj:ident, $attrs:ident { $($set:ident: $ty:ty = $attr:ident, $what:literal;)+ }) => {
        impl $obj {$(
            #[doc = concat!("Sets `", stringify!($attr), "`: ", $what, ".")]
            ///
            /// # Safety
            /// Until it is replaced, the pointer must be NULL where the header allows it, or valid for every
            /// run with this descriptor ([`Handle::quantize`], [`Handle::grouped_gemm`] and their `_raw`
            /// forms): memory of that handle's kind (host memory on the host backend, device memory on a CUDA
            /// handle), holding (or, for outputs, with room for) what the attribute describes.
            pub unsafe fn $set(&mut self, value: $ty) -> Result<&mut Self> {
                self.set($attrs::$attr, value)?;
                Ok(self)
            }
        )+}
    };
}

pointer_setters! { QuantDesc, QuantDescAttr {
    set_static_scale_pointer: *const f32 = StaticScalePointer, "the fp32 scale of PerTensorStatic";
    set_scale_ub_pointer: *const f32 = ScaleUbPointer, "an fp32 upper bound of the scale (fp8 outputs)";
    set_row_prob_pointer: *const f32 = RowProbPointer, "fp32 per-row probabilities (`y *= prob[row]`)";
    set_moe_offsets_pointer: *const i32 = MoeOffsetsPointer, "E+1 int32 row offsets (MoE Contiguous)";
    set_moe_counts_pointer: *const i32 = MoeCountsPointer, "E int32 valid row counts (MoE Masked)";
    set_columnwise_output_pointer: *mut c_void = ColumnwiseOutputPointer, "the columnwise values";
    set_columnwise_scale_pointer: *mut c_void = ColumnwiseScalePointer, "the columnwise scales";
    set_global_amax_pointer: *const f32 = GlobalAmaxPointer, "the fp32 NVFP4 global amax";
}}

pointer_setters! { GroupedGemmDesc, GemmDescAttr {
    set_group_offsets_pointer: *const i32 = GroupOffsetsPointer, "E+1 int32 row offsets of the groups";
    set_group_counts_pointer: *const i32 = GroupCountsPointer, "E int32 valid-row counts of the groups' slots";
    set_alpha_pointer: *const f32 = AlphaPointer, "E fp32 per-group alphas";
    set_c_output_pointer: *mut c_void = COutputPointer, "C, bf16 [M, N]";
    set_d_output_pointer: *mut c_void = DOutputPointer, "y, bf16 [M, H]";
}}

/// Every fact [`QuantDesc::scale_buffer_info`] gives about one scale buffer (strides in bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaleBuffer {
    pub bytes: i64,
    pub rows: i64,
    pub cols: i64,
    pub padded_rows: i64,
    pub padded_cols: i64,
    pub row_stride: i64,
    pub col_stride: i64,
    pub element_bytes: i64,
    pub dtype: DataType,
    pub batch: i64,
    pub batch_stride: i64,
}

impl QuantDesc {
    /// A descriptor with the defaults: identity activation, not gated, per-group 128, e4m3fn values,
    /// fp32 scales, row-major.
    pub fn new() -> Result<Self> {
        let mut desc = ptr::null_mut();
        check(unsafe { sys::fqQuantDescCreate(&mut desc) })?;
        Ok(QuantDesc(desc))
    }

    /// OUTPUTS: which quantized outputs are written (default `[Rowwise]`).
    pub fn outputs(&self) -> Result<Vec<Output>> {
        let mask: i32 = self.get(QuantDescAttr::Outputs)?;
        Ok((0..32).map(|bit| 1i32 << bit).filter(|b| mask & b != 0).map(Output::from).collect())
    }

    /// Sets [`Self::outputs`].
    pub fn set_outputs(&mut self, outputs: &[Output]) -> Result<&mut Self> {
        self.set(QuantDescAttr::Outputs, outputs.iter().fold(0, |mask, &o| mask | i32::from(o)))?;
        Ok(self)
    }

    /// Bytes of the scale buffer for an output of `rows` x `cols` values, padding included.
    pub fn scale_buffer_size(&self, rows: i64, cols: i64, which: Output) -> Result<usize> {
        let mut bytes = 0;
        check(unsafe { sys::fqGetScaleBufferSize(self.0, rows, cols, which.into(), &mut bytes) })?;
        Ok(bytes)
    }

    /// One fact about the scale buffer for an output of `rows` x `cols` values.
    pub fn scale_buffer_info(&self, rows: i64, cols: i64, which: Output, info: ScaleInfo) -> Result<i64> {
        let mut value = 0;
        check(unsafe { sys::fqGetScaleBufferInfo(self.0, rows, cols, which.into(), info.into(), &mut value) })?;
        Ok(value)
    }

    /// Every fact about the scale buffer for an output of `rows` x `cols` values.
    pub fn scale_buffer(&self, rows: i64, cols: i64, which: Output) -> Result<ScaleBuffer> {
        let info = |i| self.scale_buffer_info(rows, cols, which, i);
        Ok(ScaleBuffer {
            bytes: info(ScaleInfo::Bytes)?,
            rows: info(ScaleInfo::Rows)?,
            cols: info(ScaleInfo::Cols)?,
            padded_rows: info(ScaleInfo::PaddedRows)?,
            padded_cols: info(ScaleInfo::PaddedCols)?,
            row_stride: info(ScaleInfo::RowStride)?,
            col_stride: info(ScaleInfo::ColStride)?,
            element_bytes: info(ScaleInfo::ElementBytes)?,
            dtype: DataType::from(info(ScaleInfo::Dtype)? as i32),
            batch: info(ScaleInfo::Batch)?,
            batch_stride: info(ScaleInfo::BatchStride)?,
        })
    }
}

impl TensorLayout {
    /// A `rows` x `cols` row-major tensor of `dtype` whose rows start `ld` elements apart.
    pub fn new(dtype: DataType, rows: i64, cols: i64, ld: i64) -> Result<Self> {
        let mut layout = ptr::null_mut();
        check(unsafe { sys::fqTensorLayoutCreate(&mut layout, dtype.into(), rows, cols, ld) })?;
        Ok(TensorLayout(layout))
    }

    /// Bytes from the first element to the end of the last: `(rows - 1) * ld + cols` elements.
    pub fn span_bytes(&self) -> Result<usize> {
        let dtype = self.dtype()?;
        let bits = dtype.bits().ok_or_else(|| invalid(format!("layout: unknown data type {dtype:?}")))?;
        let (rows, cols, ld) = (self.rows()? as i128, self.cols()? as i128, self.ld()? as i128);
        let elements = if rows > 0 && cols > 0 { (rows - 1) * ld + cols } else { 0 };
        usize::try_from((elements * bits as i128 + 7) / 8)
            .map_err(|_| invalid(format!("layout: {rows}x{cols} (ld {ld}) does not fit in memory")))
    }
}

pub(crate) fn invalid(message: String) -> Error {
    Error::new(Status::InvalidValue, message)
}

/// Checks that a slice of typed elements (`half::bf16`, [`crate::Fp8E4m3fn`], ...) has the type it is used as.
pub(crate) fn check_type(what: &str, element: Option<DataType>, dtype: DataType) -> Result<()> {
    match element {
        Some(element) if element != dtype => {
            Err(invalid(format!("{what}: slice of {element:?} elements for {dtype:?} data")))
        }
        _ => Ok(()),
    }
}

/// Checks that `data`'s elements have the size of `layout`'s and that it holds every element addressed.
pub(crate) fn check_slice<T: Element>(what: &str, layout: &TensorLayout, data: &[T]) -> Result<()> {
    let dtype = layout.dtype()?;
    check_type(what, T::DTYPE, dtype)?;
    let element_bytes = dtype.bits().map_or(0, |bits| (bits as usize / 8).max(1));
    if size_of::<T>() != element_bytes {
        let msg = format!("{what}: slice elements of {} bytes for {dtype:?} elements", size_of::<T>());
        return Err(invalid(msg));
    }
    let (need, have) = (layout.span_bytes()?, size_of_val(data));
    if have < need {
        let msg = format!("{what}: slice of {have} bytes is smaller than the {need} bytes its layout spans");
        return Err(Error::new(Status::InsufficientBuffer, msg));
    }
    Ok(())
}

/// Checks a host scale slice against the scale-buffer query of `which` for a `rows` x `cols` output.
fn check_scales<S: Element>(
    what: &str,
    desc: &QuantDesc,
    rows: i64,
    cols: i64,
    which: Output,
    data: &[S],
) -> Result<()> {
    let need = desc.scale_buffer_size(rows, cols, which)?;
    let element = desc.scale_buffer_info(rows, cols, which, ScaleInfo::ElementBytes)?;
    if need > 0 {
        check_type(
            what,
            S::DTYPE,
            DataType::from(desc.scale_buffer_info(rows, cols, which, ScaleInfo::Dtype)? as i32),
        )?;
    }
    if need > 0 && size_of::<S>() as i64 != element {
        return Err(invalid(format!("{what}: slice elements of {} bytes for {element}-byte scales", size_of::<S>())));
    }
    let have = size_of_val(data);
    if have < need {
        let msg = format!("{what}: slice of {have} bytes is smaller than the {need} the scale layout needs");
        return Err(Error::new(Status::InsufficientBuffer, msg));
    }
    Ok(())
}

/// Reads a NUL-terminated name the library writes into a caller's buffer (`fill(buf, capacity)`),
/// growing the buffer while the name fills it.
pub(crate) fn read_name(mut fill: impl FnMut(*mut c_char, usize) -> sys::fqStatus_t) -> Result<String> {
    let mut capacity = 256;
    loop {
        let mut buf = vec![0u8; capacity];
        check(fill(buf.as_mut_ptr().cast(), capacity))?;
        let len = buf.iter().position(|&b| b == 0).unwrap_or(capacity);
        if len + 1 < capacity || capacity >= 1 << 16 {
            return Ok(String::from_utf8_lossy(&buf[..len]).into_owned());
        }
        capacity *= 4;
    }
}

impl Handle {
    /// A handle for `backend`: for Cuda, `device` is the CUDA ordinal (-1: the current device); for Host
    /// it must be -1 or 0.
    pub fn new(backend: Backend, device: i32) -> Result<Self> {
        let mut handle = ptr::null_mut();
        check(unsafe { sys::fqCreate(&mut handle, backend.into(), device) })?;
        Ok(Handle(handle))
    }

    /// Workspace bytes [`Self::quantize_raw`] needs for this problem: 0, except for NVFP4 on a CUDA handle
    /// without [`QuantDesc::global_amax_pointer`]: 4 bytes of device memory per expert (4 without a MoE
    /// layout), where the global amax is reduced and left for decoding ([`Handle::quantize`] allocates it).
    pub fn workspace_size(&self, desc: &QuantDesc, input: &TensorLayout, output: &TensorLayout) -> Result<usize> {
        let mut bytes = 0;
        check(unsafe { sys::fqGetWorkspaceSize(self.0, desc.0, input.0, output.0, &mut bytes) })?;
        Ok(bytes)
    }

    /// Would this problem run on this handle? The name of the kernel variant that would run it, or the
    /// error execution would give.
    pub fn query_support(&self, desc: &QuantDesc, input: &TensorLayout, output: &TensorLayout) -> Result<String> {
        read_name(|buf, cap| unsafe { sys::fqQuerySupport(self.0, desc.0, input.0, output.0, buf, cap) })
    }

    /// Number of kernel variants registered for this handle's backend.
    pub fn variant_count(&self) -> Result<usize> {
        let mut count = 0;
        check(unsafe { sys::fqGetVariantCount(self.0, &mut count) })?;
        Ok(count.max(0) as usize)
    }

    /// The description ("name: what it covers") of every kernel variant of this handle's backend.
    pub fn variants(&self) -> Result<Vec<String>> {
        (0..self.variant_count()? as i32)
            .map(|i| read_name(|buf, cap| unsafe { sys::fqGetVariantName(self.0, i, buf, cap) }))
            .collect()
    }

    /// Applies the activation and quantizes `input` into `output` and its `scales`, on the host backend.
    /// Checks first that each slice's element size matches its layout's type (the scale slice's, the
    /// scale layout's storage element), and a typed element's type that type and that each holds what its layout (for the scales: the
    /// scale-buffer query for the output's shape) needs; any workspace is allocated here.
    pub fn quantize<I: Element, O: Element, S: Element>(
        &self,
        desc: &QuantDesc,
        input_layout: &TensorLayout,
        input: &[I],
        output_layout: &TensorLayout,
        output: &mut [O],
        scales: &mut [S],
    ) -> Result<()> {
        if self.backend()? != Backend::Host {
            return Err(invalid("handle: quantize takes host slices; on a CUDA handle use quantize_raw".into()));
        }
        check_slice("input", input_layout, input)?;
        let (rows, cols) = (output_layout.rows()?, output_layout.cols()?);
        // With the columnwise output alone, `output` and `scales` are unused (and may be empty).
        let rowwise = desc.outputs()?.contains(&Output::Rowwise);
        if rowwise {
            check_slice("output", output_layout, output)?;
            check_scales("scales", desc, rows, cols, Output::Rowwise, scales)?;
        }
        let have = size_of_val(scales);
        let mut workspace = vec![0u8; self.workspace_size(desc, input_layout, output_layout)?];
        // SAFETY: host memory, sizes checked above; the slices outlive this synchronous call.
        unsafe {
            self.quantize_raw(
                desc,
                input_layout,
                input.as_ptr().cast(),
                output_layout,
                output.as_mut_ptr().cast(),
                scales.as_mut_ptr().cast(),
                have,
                workspace.as_mut_ptr().cast(),
                workspace.len(),
                ptr::null_mut(),
            )
        }
    }

    /// [`Self::quantize`] writing the columnwise output too, which `desc` must ask for
    /// ([`QuantDesc::set_outputs`] with [`Output::Columnwise`]): its values go to `col_output` (the output's
    /// `rows x cols` elements, dense: `[M, H]`, or `[H, M]` with `columnwise_transpose`) and its scales to
    /// `col_scales` ([`QuantDesc::scale_buffer_size`] with [`Output::Columnwise`]). The descriptor's columnwise
    /// pointers are set for this call and cleared after it.
    #[allow(clippy::too_many_arguments)]
    pub fn quantize_with_columnwise<I: Element, O: Element, S: Element>(
        &self,
        desc: &mut QuantDesc,
        input_layout: &TensorLayout,
        input: &[I],
        output_layout: &TensorLayout,
        output: &mut [O],
        scales: &mut [S],
        col_output: &mut [O],
        col_scales: &mut [S],
    ) -> Result<()> {
        if !desc.outputs()?.contains(&Output::Columnwise) {
            return Err(invalid("desc: OUTPUTS does not ask for Output::Columnwise".into()));
        }
        let (rows, cols) = (output_layout.rows()?, output_layout.cols()?);
        let dense = TensorLayout::new(output_layout.dtype()?, rows, cols, cols)?;
        check_slice("col_output", &dense, col_output)?;
        check_scales("col_scales", desc, rows, cols, Output::Columnwise, col_scales)?;
        let col_scales_ptr =
            if size_of_val(col_scales) == 0 { ptr::null_mut() } else { col_scales.as_mut_ptr().cast() };
        // SAFETY: host slices checked above, borrowed for this synchronous call; cleared before returning.
        unsafe {
            desc.set_columnwise_output_pointer(col_output.as_mut_ptr().cast())?;
            desc.set_columnwise_scale_pointer(col_scales_ptr)?;
        }
        let result = self.quantize(desc, input_layout, input, output_layout, output, scales);
        // SAFETY: NULL pointers are what a descriptor without columnwise buffers holds.
        unsafe {
            desc.set_columnwise_output_pointer(ptr::null_mut())?;
            desc.set_columnwise_scale_pointer(ptr::null_mut())?;
        }
        result
    }

    /// `fqQuantize` on raw pointers: on a CUDA handle, device pointers and work enqueued on `stream`
    /// (a `cudaStream_t`, or NULL for the legacy default stream); synchronous on the host backend.
    ///
    /// # Safety
    /// `input` and `output` point to memory of the handle's kind holding the tensors their layouts
    /// describe, `scales` to `scales_bytes` bytes and `workspace` to `workspace_bytes` bytes (both may be
    /// NULL with a size of 0), none of the outputs overlapping an input; on a CUDA handle they stay valid
    /// until the work on `stream` completes, and `stream` is a live stream of the handle's device.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn quantize_raw(
        &self,
        desc: &QuantDesc,
        input_layout: &TensorLayout,
        input: *const c_void,
        output_layout: &TensorLayout,
        output: *mut c_void,
        scales: *mut c_void,
        scales_bytes: usize,
        workspace: *mut c_void,
        workspace_bytes: usize,
        stream: *mut c_void,
    ) -> Result<()> {
        check(sys::fqQuantize(
            self.0,
            desc.0,
            input_layout.0,
            input,
            output_layout.0,
            output,
            scales,
            scales_bytes,
            workspace,
            workspace_bytes,
            stream.cast(),
        ))
    }
}
