//! Rust enums for the enums of fusedquant.h. The C ABI passes every enum as `int32_t`; each Rust enum
//! converts to and from `i32`, and a value this crate does not know (from a newer library, say) becomes
//! `Unknown(value)` instead of undefined behaviour (bindgen issue 667). The variants are defined by the
//! bindgen constants, so a renamed or removed constant fails to compile, and the test
//! `every_header_enum_constant_is_mapped` fails when the header gains one.
use fusedquant_sys as sys;

/// Implemented by every enum of this module (tests use it to compare them with the header).
pub trait CEnum: Copy + Eq + From<i32> + Into<i32> + 'static {
    /// The name of the C enum in fusedquant.h.
    const C_NAME: &'static str;
    /// Every value this crate knows, in header order.
    const KNOWN: &'static [Self];
}

macro_rules! c_enums {
    ($($(#[$doc:meta])* $name:ident = $c_name:literal { $($variant:ident = $constant:ident,)+ })+) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $(#[doc = concat!("`", stringify!($constant), "`")] $variant,)+
            /// A value this version of the crate does not know.
            Unknown(i32),
        }
        impl CEnum for $name {
            const C_NAME: &'static str = $c_name;
            const KNOWN: &'static [Self] = &[$(Self::$variant),+];
        }
        impl From<i32> for $name {
            fn from(value: i32) -> Self {
                $(if value == sys::$constant as i32 { return Self::$variant; })+
                Self::Unknown(value)
            }
        }
        impl From<$name> for i32 {
            fn from(value: $name) -> i32 {
                match value { $($name::$variant => sys::$constant as i32,)+ $name::Unknown(v) => v }
            }
        }
    )+};
}

c_enums! {
    /// Status of a call (`fqStatus`); failures arrive as [`crate::Error`].
    Status = "fqStatus" {
        Success = FQ_STATUS_SUCCESS, InvalidValue = FQ_STATUS_INVALID_VALUE,
        NullPointer = FQ_STATUS_NULL_POINTER, InvalidHandle = FQ_STATUS_INVALID_HANDLE,
        NotSupported = FQ_STATUS_NOT_SUPPORTED, Misaligned = FQ_STATUS_MISALIGNED,
        InsufficientBuffer = FQ_STATUS_INSUFFICIENT_BUFFER,
        InsufficientWorkspace = FQ_STATUS_INSUFFICIENT_WORKSPACE, AllocFailed = FQ_STATUS_ALLOC_FAILED,
        CudaError = FQ_STATUS_CUDA_ERROR, NoDevice = FQ_STATUS_NO_DEVICE,
        InternalError = FQ_STATUS_INTERNAL_ERROR,
    }
    /// Element type of tensors and scales (`fqDataType`).
    DataType = "fqDataType" {
        Fp32 = FQ_TYPE_FP32, Fp16 = FQ_TYPE_FP16, Bf16 = FQ_TYPE_BF16, Fp8E4m3fn = FQ_TYPE_FP8_E4M3FN,
        Fp8E4m3fnuz = FQ_TYPE_FP8_E4M3FNUZ, Fp8E5m2 = FQ_TYPE_FP8_E5M2, Int8 = FQ_TYPE_INT8,
        Fp4E2m1 = FQ_TYPE_FP4_E2M1, E8m0 = FQ_TYPE_E8M0, Int32 = FQ_TYPE_INT32,
    }
    /// Compute backend of a handle (`fqBackend`).
    Backend = "fqBackend" { Host = FQ_BACKEND_HOST, Cuda = FQ_BACKEND_CUDA, }
    /// Activation applied before quantization (`fqActivation`, docs/spec.md §2).
    Activation = "fqActivation" {
        Identity = FQ_ACTIVATION_IDENTITY, Silu = FQ_ACTIVATION_SILU, GeluErf = FQ_ACTIVATION_GELU_ERF,
        GeluTanh = FQ_ACTIVATION_GELU_TANH, Relu = FQ_ACTIVATION_RELU,
        ReluSquared = FQ_ACTIVATION_RELU_SQUARED, SwigluOai = FQ_ACTIVATION_SWIGLU_OAI,
    }
    /// How a gated input row holds gate and up (`fqGateLayout`).
    GateLayout = "fqGateLayout" {
        None = FQ_GATE_LAYOUT_NONE, Split = FQ_GATE_LAYOUT_SPLIT, Interleaved = FQ_GATE_LAYOUT_INTERLEAVED,
        BlockInterleaved = FQ_GATE_LAYOUT_BLOCK_INTERLEAVED,
    }
    /// Which of gate and up comes first (`fqGateOrder`).
    GateOrder = "fqGateOrder" { GateFirst = FQ_GATE_ORDER_GATE_FIRST, UpFirst = FQ_GATE_ORDER_UP_FIRST, }
    /// Rounding of the activation's intermediates (`fqIntermediateRounding`).
    IntermediateRounding = "fqIntermediateRounding" {
        Fp32 = FQ_ROUNDING_FP32, RoundProduct = FQ_ROUNDING_ROUND_PRODUCT, RoundBoth = FQ_ROUNDING_ROUND_BOTH,
    }
    /// Quantization scheme (`fqQuantScheme`, docs/spec.md §3.1).
    QuantScheme = "fqQuantScheme" {
        PerTensorStatic = FQ_SCHEME_PER_TENSOR_STATIC, PerTensorDynamic = FQ_SCHEME_PER_TENSOR_DYNAMIC,
        PerToken = FQ_SCHEME_PER_TOKEN, PerGroup = FQ_SCHEME_PER_GROUP, Block2d = FQ_SCHEME_BLOCK_2D,
        Mxfp8 = FQ_SCHEME_MXFP8, Mxfp4 = FQ_SCHEME_MXFP4, Nvfp4 = FQ_SCHEME_NVFP4,
    }
    /// Where scale S[m, k] lives in the scale buffer (`fqScaleLayout`, docs/spec.md §4).
    ScaleLayout = "fqScaleLayout" {
        RowMajor = FQ_SCALE_LAYOUT_ROW_MAJOR, ColMajor = FQ_SCALE_LAYOUT_COL_MAJOR,
        ColMajorTma = FQ_SCALE_LAYOUT_COL_MAJOR_TMA, Swizzled128x4 = FQ_SCALE_LAYOUT_SWIZZLED_128X4,
        PackedUe8m0 = FQ_SCALE_LAYOUT_PACKED_UE8M0,
    }
    /// Rounding of an fp32 scale (`fqScaleRounding`).
    ScaleRounding = "fqScaleRounding" { None = FQ_SCALE_ROUNDING_NONE, Pow2Ceil = FQ_SCALE_ROUNDING_POW2_CEIL, }
    /// E8M0 scale rule of the microscaling schemes (`fqMxScaleRule`).
    MxScaleRule = "fqMxScaleRule" { Rceil = FQ_MX_SCALE_RULE_RCEIL, Floor = FQ_MX_SCALE_RULE_FLOOR, }
    /// How a scale is applied to the elements (`fqScaleApply`).
    ScaleApply = "fqScaleApply" {
        Divide = FQ_SCALE_APPLY_DIVIDE, MultiplyReciprocal = FQ_SCALE_APPLY_MULTIPLY_RECIPROCAL,
    }
    /// MoE input arrangement (`fqMoeLayout`, docs/spec.md §5).
    MoeLayout = "fqMoeLayout" {
        None = FQ_MOE_LAYOUT_NONE, Contiguous = FQ_MOE_LAYOUT_CONTIGUOUS, Masked = FQ_MOE_LAYOUT_MASKED,
    }
    /// One quantized output (`fqOutputs`; the descriptor's OUTPUTS attribute is a set of these).
    Output = "fqOutputs" { Rowwise = FQ_OUTPUT_ROWWISE, Columnwise = FQ_OUTPUT_COLUMNWISE, }
    /// Handle attributes (`fqHandleAttribute`); [`crate::Handle`] has a typed accessor for each.
    HandleAttr = "fqHandleAttribute" {
        Backend = FQ_HANDLE_BACKEND, Device = FQ_HANDLE_DEVICE, Arch = FQ_HANDLE_ARCH,
        SmCount = FQ_HANDLE_SM_COUNT, AllowPdl = FQ_HANDLE_ALLOW_PDL,
        Variant = FQ_HANDLE_VARIANT, WideTileMin = FQ_HANDLE_WIDE_TILE_MIN,
    }
    /// Tensor layout attributes (`fqTensorLayoutAttribute`); [`crate::TensorLayout`] has an accessor for each.
    TensorLayoutAttr = "fqTensorLayoutAttribute" {
        Type = FQ_TENSOR_LAYOUT_TYPE, Rows = FQ_TENSOR_LAYOUT_ROWS, Cols = FQ_TENSOR_LAYOUT_COLS,
        Ld = FQ_TENSOR_LAYOUT_LD,
    }
    /// Descriptor attributes (`fqQuantDescAttribute`); [`crate::QuantDesc`] has typed accessors for each.
    QuantDescAttr = "fqQuantDescAttribute" {
        Activation = FQ_QUANT_DESC_ACTIVATION, GateLayout = FQ_QUANT_DESC_GATE_LAYOUT,
        GateOrder = FQ_QUANT_DESC_GATE_ORDER, GateBlockWidth = FQ_QUANT_DESC_GATE_BLOCK_WIDTH,
        IntermediateRounding = FQ_QUANT_DESC_INTERMEDIATE_ROUNDING, Scheme = FQ_QUANT_DESC_SCHEME,
        GroupSize = FQ_QUANT_DESC_GROUP_SIZE, OutputType = FQ_QUANT_DESC_OUTPUT_TYPE,
        ScaleType = FQ_QUANT_DESC_SCALE_TYPE, ScaleLayout = FQ_QUANT_DESC_SCALE_LAYOUT,
        ScaleRounding = FQ_QUANT_DESC_SCALE_ROUNDING, MxScaleRule = FQ_QUANT_DESC_MX_SCALE_RULE,
        ScaleApply = FQ_QUANT_DESC_SCALE_APPLY, Qmax = FQ_QUANT_DESC_QMAX, MinScale = FQ_QUANT_DESC_MIN_SCALE,
        SwigluAlpha = FQ_QUANT_DESC_SWIGLU_ALPHA, SwigluBeta = FQ_QUANT_DESC_SWIGLU_BETA,
        SwigluLimit = FQ_QUANT_DESC_SWIGLU_LIMIT, StaticScalePointer = FQ_QUANT_DESC_STATIC_SCALE_POINTER,
        ScaleUbPointer = FQ_QUANT_DESC_SCALE_UB_POINTER, RowProbPointer = FQ_QUANT_DESC_ROW_PROB_POINTER,
        MoeLayout = FQ_QUANT_DESC_MOE_LAYOUT, MoeNumExperts = FQ_QUANT_DESC_MOE_NUM_EXPERTS,
        MoeOffsetsPointer = FQ_QUANT_DESC_MOE_OFFSETS_POINTER,
        MoeCountsPointer = FQ_QUANT_DESC_MOE_COUNTS_POINTER, Outputs = FQ_QUANT_DESC_OUTPUTS,
        ColumnwiseBlock = FQ_QUANT_DESC_COLUMNWISE_BLOCK,
        ColumnwiseTranspose = FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE,
        ColumnwiseOutputPointer = FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER,
        ColumnwiseScalePointer = FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER,
        GlobalAmaxPointer = FQ_QUANT_DESC_GLOBAL_AMAX_POINTER,
    }
    /// Grouped GEMM descriptor attributes (`fqGroupedGemmDescAttribute`); [`crate::GroupedGemmDesc`] has an
    /// accessor for each.
    GemmDescAttr = "fqGroupedGemmDescAttribute" {
        NumGroups = FQ_GEMM_DESC_NUM_GROUPS, GroupOffsetsPointer = FQ_GEMM_DESC_GROUP_OFFSETS_POINTER,
        GroupCountsPointer = FQ_GEMM_DESC_GROUP_COUNTS_POINTER, AlphaPointer = FQ_GEMM_DESC_ALPHA_POINTER,
        AScaleLayout = FQ_GEMM_DESC_A_SCALE_LAYOUT, COutputPointer = FQ_GEMM_DESC_C_OUTPUT_POINTER,
        DOutputPointer = FQ_GEMM_DESC_D_OUTPUT_POINTER, Quantize = FQ_GEMM_DESC_QUANTIZE,
    }
    /// Where the batches of a scale repack lie in its source and destination (`fqScaleRepackBatching`);
    /// see [`crate::ScaleRepack`].
    ScaleRepackBatching = "fqScaleRepackBatching" {
        Blocks = FQ_SCALE_REPACK_BLOCKS, StackedToBlocks = FQ_SCALE_REPACK_STACKED_TO_BLOCKS,
        BlocksToStacked = FQ_SCALE_REPACK_BLOCKS_TO_STACKED,
    }
    /// Facts of a plan (`fqPlanAttribute`); [`crate::Plan`] reads them at creation.
    PlanAttr = "fqPlanAttribute" {
        WorkspaceSize = FQ_PLAN_WORKSPACE_SIZE, ScaleBufferSize = FQ_PLAN_SCALE_BUFFER_SIZE,
        ColumnwiseScaleBufferSize = FQ_PLAN_COLUMNWISE_SCALE_BUFFER_SIZE,
    }
    /// Facts about a scale buffer (`fqScaleInfo`); see [`crate::QuantDesc::scale_buffer_info`].
    ScaleInfo = "fqScaleInfo" {
        Bytes = FQ_SCALE_INFO_BYTES, Rows = FQ_SCALE_INFO_ROWS, Cols = FQ_SCALE_INFO_COLS,
        PaddedRows = FQ_SCALE_INFO_PADDED_ROWS, PaddedCols = FQ_SCALE_INFO_PADDED_COLS,
        RowStride = FQ_SCALE_INFO_ROW_STRIDE, ColStride = FQ_SCALE_INFO_COL_STRIDE,
        ElementBytes = FQ_SCALE_INFO_ELEMENT_BYTES, Dtype = FQ_SCALE_INFO_DTYPE, Batch = FQ_SCALE_INFO_BATCH,
        BatchStride = FQ_SCALE_INFO_BATCH_STRIDE,
    }
}

impl DataType {
    /// Bits of one element (4 for FP4_E2M1), `None` for an unknown type.
    pub fn bits(self) -> Option<u32> {
        use DataType::*;
        match self {
            Fp32 | Int32 => Some(32),
            Fp16 | Bf16 => Some(16),
            Fp8E4m3fn | Fp8E4m3fnuz | Fp8E5m2 | Int8 | E8m0 => Some(8),
            Fp4E2m1 => Some(4),
            Unknown(_) => None,
        }
    }
}
