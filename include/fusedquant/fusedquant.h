/*
 * libfusedquant — fused gated activation + quantization for LLM MLP / MoE layers.
 *
 * One read of a bf16/fp16 activation, one write of its FP8 / INT8 / MX / NVFP4 quantization, with the
 * scale factors written directly in the layout the consuming GEMM reads. The numerics every backend
 * follows, bit for bit, are specified in docs/spec.md (installed with this header under share/doc), which
 * the comments below cite by section ("docs/spec.md §3.2").
 *
 * Usage, in the manner of cuBLASLt:
 *
 *     fqHandle_t h;          fqCreate(&h, FQ_BACKEND_CUDA, 0);
 *     fqQuantDesc_t d;       fqQuantDescCreate(&d);
 *     int32_t act = FQ_ACTIVATION_SILU, gate = FQ_GATE_LAYOUT_SPLIT, g = 128;
 *     fqQuantDescSetAttribute(d, FQ_QUANT_DESC_ACTIVATION, &act, sizeof act);
 *     fqQuantDescSetAttribute(d, FQ_QUANT_DESC_GATE_LAYOUT, &gate, sizeof gate);
 *     fqQuantDescSetAttribute(d, FQ_QUANT_DESC_GROUP_SIZE, &g, sizeof g);
 *     fqTensorLayout_t in, out;
 *     fqTensorLayoutCreate(&in,  FQ_TYPE_BF16,       tokens, 2 * hidden, 2 * hidden);
 *     fqTensorLayoutCreate(&out, FQ_TYPE_FP8_E4M3FN, tokens, hidden, hidden);
 *     size_t scale_bytes;    fqGetScaleBufferSize(d, tokens, hidden, FQ_OUTPUT_ROWWISE, &scale_bytes);
 *     fqQuantize(h, d, in, x, out, y, scales, scale_bytes, NULL, 0, stream);
 *
 * ABI rules (kept for every 0.x release; see docs/abi.md):
 *   - Every enum-typed value crosses the ABI as int32_t. Enum values are explicit and append-only.
 *   - No public struct: objects are opaque and configured through sized attribute buffers, so adding an
 *     attribute never changes the size or meaning of anything a built binary uses.
 *   - A new behaviour is a new attribute or a new function, never a changed signature.
 *   - No function lets a C++ exception escape; every failure is an fqStatus_t plus a thread-local
 *     message from fqGetLastErrorMessage() naming the argument and the rule it broke.
 *
 * FQ_EXPERIMENTAL: what is declared only under `#define FQ_EXPERIMENTAL_API` (before including this header;
 * in the manner of zstd's ZSTD_STATIC_LINKING_ONLY) is outside that promise: the tuning and test knobs of the
 * handle and the grouped GEMM. They may change or go in any release (docs/abi.md).
 *
 * This header is C99 and includes no CUDA header. A stream crosses the ABI as fqStream_t, which is
 * layout-compatible with cudaStream_t (both are a pointer to an opaque struct): pass a cudaStream_t cast
 * to fqStream_t, or NULL for the legacy default stream.
 */
#ifndef FUSEDQUANT_H
#define FUSEDQUANT_H

#include <stddef.h>
#include <stdint.h>

/* Marks the exported functions. Binding generators that parse this header may define FQ_API empty. */
#ifndef FQ_API
#  if defined(__GNUC__)
#    define FQ_API __attribute__((visibility("default")))
#  else
#    define FQ_API
#  endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Version                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

#define FQ_VERSION_MAJOR 0
#define FQ_VERSION_MINOR 1
#define FQ_VERSION_PATCH 0
/** MAJOR*10000 + MINOR*100 + PATCH, as fqGetVersion() returns it. */
#define FQ_VERSION_NUMBER (FQ_VERSION_MAJOR * 10000 + FQ_VERSION_MINOR * 100 + FQ_VERSION_PATCH)

/** The version of the library loaded at run time (compare with FQ_VERSION_NUMBER of the header). */
FQ_API uint32_t fqGetVersion(void);

/* ---------------------------------------------------------------------------------------------- */
/* Status and errors                                                                                */
/* ---------------------------------------------------------------------------------------------- */

/** Every function returns an fqStatus_t (values of fqStatus below). */
typedef int32_t fqStatus_t;
enum fqStatus {
    FQ_STATUS_SUCCESS = 0,
    FQ_STATUS_INVALID_VALUE = 1,          /**< an argument is out of range or inconsistent with another */
    FQ_STATUS_NULL_POINTER = 2,           /**< a required pointer argument is NULL */
    FQ_STATUS_INVALID_HANDLE = 3,         /**< a handle/descriptor/layout is NULL, destroyed or of another kind */
    FQ_STATUS_NOT_SUPPORTED = 4,          /**< valid, but no kernel variant runs this on this handle */
    FQ_STATUS_MISALIGNED = 5,             /**< a pointer or stride breaks the alignment the kernels need */
    FQ_STATUS_INSUFFICIENT_BUFFER = 6,    /**< a declared buffer is smaller than the query says it must be */
    FQ_STATUS_INSUFFICIENT_WORKSPACE = 7, /**< workspace smaller than fqGetWorkspaceSize() returned */
    FQ_STATUS_ALLOC_FAILED = 8,           /**< host or device memory could not be allocated */
    FQ_STATUS_CUDA_ERROR = 9,             /**< the CUDA runtime reported an error (the message has it) */
    FQ_STATUS_NO_DEVICE = 10,             /**< a CUDA handle was asked for and no usable device exists */
    FQ_STATUS_INTERNAL_ERROR = 11         /**< a bug in the library; please report the message */
};

/** A static English name of the status, e.g. "FQ_STATUS_INVALID_VALUE". Never NULL. */
FQ_API const char* fqGetStatusString(fqStatus_t status);

/** The message of the last failing call on this thread ("" after a success). Valid until the next call
 *  on this thread. It names the argument and the rule it broke; at most 1023 bytes (a longer message is cut
 *  and ends in "..."). */
FQ_API const char* fqGetLastErrorMessage(void);

/* ---------------------------------------------------------------------------------------------- */
/* Enumerations (all cross the ABI as int32_t)                                                     */
/* ---------------------------------------------------------------------------------------------- */

/** Element types of tensors and scales. */
enum fqDataType {
    FQ_TYPE_FP32 = 0,
    FQ_TYPE_FP16 = 1,
    FQ_TYPE_BF16 = 2,
    FQ_TYPE_FP8_E4M3FN = 3,   /**< OCP e4m3, qmax 448, no Inf */
    FQ_TYPE_FP8_E4M3FNUZ = 4, /**< AMD e4m3, qmax 240, NaN = 0x80 */
    FQ_TYPE_FP8_E5M2 = 5,     /**< OCP e5m2, qmax 57344 */
    FQ_TYPE_INT8 = 6,
    FQ_TYPE_FP4_E2M1 = 7,     /**< two per byte, element 2i in the low nibble */
    FQ_TYPE_E8M0 = 8,         /**< unsigned power-of-two scale, 2^(byte-127) */
    FQ_TYPE_INT32 = 9
};

/** Compute backend of a handle. */
enum fqBackend {
    FQ_BACKEND_HOST = 0, /**< the reference implementation on the CPU; pointers are host memory */
    FQ_BACKEND_CUDA = 1  /**< a CUDA device; pointers are device memory, execution is stream-ordered */
};

/** Activation applied before quantization (docs/spec.md §2). */
enum fqActivation {
    FQ_ACTIVATION_IDENTITY = 0,     /**< y = x (plain quantization) */
    FQ_ACTIVATION_SILU = 1,         /**< x / (1 + exp(-x)) */
    FQ_ACTIVATION_GELU_ERF = 2,     /**< 0.5 x (1 + erf(x / sqrt 2)) */
    FQ_ACTIVATION_GELU_TANH = 3,    /**< 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
    FQ_ACTIVATION_RELU = 4,         /**< max(x, 0) */
    FQ_ACTIVATION_RELU_SQUARED = 5, /**< max(x, 0)^2 */
    FQ_ACTIVATION_SWIGLU_OAI = 6    /**< gated only: min(g,limit) * sigmoid(alpha g') * (clamp(u,+-limit) + beta) */
};

/** How a gated input row of width 2H holds gate g and up u (docs/spec.md §2). */
enum fqGateLayout {
    FQ_GATE_LAYOUT_NONE = 0,             /**< not gated: input width = output width */
    FQ_GATE_LAYOUT_SPLIT = 1,            /**< [gate(H) | up(H)] (or [up | gate], see GATE_ORDER) */
    FQ_GATE_LAYOUT_INTERLEAVED = 2,      /**< g0 u0 g1 u1 ... (gpt-oss) */
    FQ_GATE_LAYOUT_BLOCK_INTERLEAVED = 3 /**< blocks of GATE_BLOCK_WIDTH columns alternate */
};

enum fqGateOrder {
    FQ_GATE_ORDER_GATE_FIRST = 0,
    FQ_GATE_ORDER_UP_FIRST = 1
};

/** Rounding of the activation's intermediates, for bit-compatibility with unfused chains (docs/spec.md §2). */
enum fqIntermediateRounding {
    FQ_ROUNDING_FP32 = 0,          /**< no rounding (fused kernels) */
    FQ_ROUNDING_ROUND_PRODUCT = 1, /**< y rounded to the input type once (TransformerEngine) */
    FQ_ROUNDING_ROUND_BOTH = 2     /**< act(g) rounded, then the product rounded (PyTorch eager) */
};

/** Quantization scheme (docs/spec.md §3.1). */
enum fqQuantScheme {
    FQ_SCHEME_PER_TENSOR_STATIC = 0,  /**< caller's fp32 scale at STATIC_SCALE_POINTER */
    FQ_SCHEME_PER_TENSOR_DYNAMIC = 1, /**< one fp32 scale computed on the device, written to the scales */
    FQ_SCHEME_PER_TOKEN = 2,          /**< one fp32 scale per row */
    FQ_SCHEME_PER_GROUP = 3,          /**< one scale per GROUP_SIZE consecutive elements of a row */
    FQ_SCHEME_BLOCK_2D = 4,           /**< one fp32 scale per 128x128 tile (weights): grid [ceil(M/128),
                                           ceil(K/128)]; ROW_MAJOR is cuBLASLt's BLK128x128_32F
                                           when ceil(K/128) % 4 == 0 (it reads a row stride
                                           of round_up(ceil(K/128), 4)) */
    FQ_SCHEME_MXFP8 = 5,              /**< blocks of 32, E8M0 scales, fp8 values */
    FQ_SCHEME_MXFP4 = 6,              /**< blocks of 32, E8M0 scales, e2m1 values */
    FQ_SCHEME_NVFP4 = 7               /**< blocks of 16, e4m3 block scales + fp32 tensor scale */
};

/** Where scale S[m, k] (row m, group k) lives in the scale buffer (docs/spec.md §4). */
enum fqScaleLayout {
    FQ_SCALE_LAYOUT_ROW_MAJOR = 0,      /**< m * K_g + k */
    FQ_SCALE_LAYOUT_COL_MAJOR = 1,      /**< k * M + m */
    FQ_SCALE_LAYOUT_COL_MAJOR_TMA = 2,  /**< k * round_up(M, 16 / sizeof(scale)) + m */
    FQ_SCALE_LAYOUT_SWIZZLED_128X4 = 3, /**< Blackwell / cuBLASLt VEC32_UE8M0, VEC16_UE4M3 */
    FQ_SCALE_LAYOUT_PACKED_UE8M0 = 4    /**< DeepGEMM sm100: four E8M0 per int32, MN-major */
};

/** Rounding of an fp32 scale (docs/spec.md §3.2). */
enum fqScaleRounding {
    FQ_SCALE_ROUNDING_NONE = 0,
    FQ_SCALE_ROUNDING_POW2_CEIL = 1 /**< 2^ceil(log2 s) (DeepSeek ue8m0, DeepGEMM) */
};

/** E8M0 scale rule of the microscaling schemes (docs/spec.md §3.3). */
enum fqMxScaleRule {
    FQ_MX_SCALE_RULE_RCEIL = 0, /**< round amax/qmax up to a power of two: no element saturates */
    FQ_MX_SCALE_RULE_FLOOR = 1  /**< OCP MX v1.0: floor(log2 amax) - emax_elem */
};

/** How a scale is applied to the elements (docs/spec.md §3.2). */
enum fqScaleApply {
    FQ_SCALE_APPLY_DIVIDE = 0,             /**< q = enc(y / s) (vLLM) */
    FQ_SCALE_APPLY_MULTIPLY_RECIPROCAL = 1 /**< q = enc(y * (1 / s)) (TransformerEngine, DeepGEMM) */
};

/** MoE input arrangement (docs/spec.md §5, docs/moe.md). Rows no expert owns are neither read nor written (values,
 *  and the scale slots of their row); device arrays are clamped into the buffers, never trusted. */
enum fqMoeLayout {
    FQ_MOE_LAYOUT_NONE = 0,
    FQ_MOE_LAYOUT_CONTIGUOUS = 1, /**< stacked rows [M, W]: expert e owns rows [offsets[e], offsets[e+1]) (int32
                                       offsets[E+1] on the device, non-decreasing, clamped to [0, M]); with
                                       counts[E] also given, only the first counts[e] rows of that slot. Scales
                                       use the layout of all M rows (one block), indexed by the stacked row */
    FQ_MOE_LAYOUT_MASKED = 2      /**< [E, max_m, W] as E*max_m rows: expert e owns its first counts[e] rows
                                       (int32 counts[E] on the device, clamped to [0, max_m]). Scales are E
                                       blocks, each the layout of max_m rows (FQ_SCALE_INFO_BATCH_STRIDE apart) */
};

/** Which quantized outputs to write (bit mask; both = one pass over the input). */
enum fqOutputs {
    FQ_OUTPUT_ROWWISE = 1,   /**< blocks along the row (the usual activation operand): `output`, `scales` */
    FQ_OUTPUT_COLUMNWISE = 2 /**< blocks of COLUMNWISE_BLOCK rows down each column (the weight-gradient operand):
                                  scales S_col[h, b] (column h, row block b) in the scale layout with the roles
                                  of rows and columns swapped; to the COLUMNWISE_* pointers */
};

/* ---------------------------------------------------------------------------------------------- */
/* Handle                                                                                           */
/* ---------------------------------------------------------------------------------------------- */

/** Object lifetime (fqHandle_t, fqQuantDesc_t, fqTensorLayout_t, fqGroupedGemmDesc_t).
 *  - The value a Create function returns is opaque: it names the object (its kind, a slot of the library's
 *    and the slot's generation) and is not the object's address; never dereference it. NULL is never
 *    returned for a live object.
 *  - Destroying an object retires its slot; a later object may reuse the slot, but with the next generation,
 *    so the destroyed object's value is refused by every function with FQ_STATUS_INVALID_HANDLE (a second
 *    destroy included) and never names the new object. A value of one kind passed as another, or any value
 *    the library did not return, is refused the same way. (A slot is retired for good once 2^32 objects
 *    have used it, so a value is never accepted again after its object was destroyed.)
 *  - The library's memory for objects is never returned to the system while the process runs; it is reused
 *    for new objects of the same kind.
 *  - Every function, Destroy included, may be called from the caller's atexit handlers and static or
 *    thread_local destructors: the library's state is never torn down, and reporting an error allocates
 *    nothing. Objects live until destroyed or the process ends.
 *  - Using an object on one thread while another thread destroys it is the caller's data race. */
typedef struct fqContext* fqHandle_t;
/** Layout-compatible with cudaStream_t. */
typedef struct fqStreamOpaque* fqStream_t;

/** Creates a handle for `backend`. For FQ_BACKEND_CUDA, `device` is the CUDA ordinal (-1: the current
 *  device); the handle records its architecture and selects kernels for it. For FQ_BACKEND_HOST,
 *  `device` must be -1 or 0.
 *  A CUDA handle is bound to its device, as a cuBLAS handle is: fqQuantize, fqScaleRepack and fqGroupedGemm
 *  need that device current on the calling thread (fq never calls cudaSetDevice) and every pointer in memory it
 *  addresses as given (its device memory, managed memory, page-locked host memory mapped at the same address);
 *  otherwise FQ_STATUS_INVALID_VALUE naming the argument and both devices. A launch's error is its own
 *  (FQ_STATUS_CUDA_ERROR); fq never reads or clears an error the caller has pending (docs/api.md). */
FQ_API fqStatus_t fqCreate(fqHandle_t* handle, int32_t backend, int32_t device);
/** Destroys a handle. NULL is accepted and ignored. A destroyed handle is refused with INVALID_HANDLE
 *  (see "Object lifetime" above), also once its slot holds a new handle. */
FQ_API fqStatus_t fqDestroy(fqHandle_t handle);

enum fqHandleAttribute {
    FQ_HANDLE_BACKEND = 0,      /**< int32_t, read-only: fqBackend */
    FQ_HANDLE_DEVICE = 1,       /**< int32_t, read-only: CUDA ordinal, -1 on the host backend */
    FQ_HANDLE_ARCH = 2,         /**< int32_t, read-only: compute capability * 10 (90 = sm_90), 0 on host */
    FQ_HANDLE_SM_COUNT = 3,     /**< int32_t, read-only: multiprocessors (host: hardware threads) */
    FQ_HANDLE_ALLOW_PDL = 4,    /**< int32_t, read-write, default 1: launch with programmatic dependent
                                     launch on sm_90+ (fq's kernels wait for the previous kernel's writes
                                     themselves); 0: plain stream order */
#ifdef FQ_EXPERIMENTAL_API
    /* FQ_EXPERIMENTAL: tuning and test knobs, not covered by the ABI promise (docs/abi.md). */
    FQ_HANDLE_VARIANT = 5,      /**< int32_t, read-write, default -1 (the dispatcher chooses): pin execution
                                     to entry `index` of fqGetVariantName (the selection order; `fq info`
                                     lists it), which then runs every problem its kernel runs, whatever
                                     FQ_HANDLE_WIDE_TILE_MIN; for `fq check` and tests */
    FQ_HANDLE_WIDE_TILE_MIN = 6 /**< int32_t, read-write, default -1 (one wave: SMs x 12): CUDA problems with
                                     FP32 intermediates and no MoE layout (routing probability or not) run 16
                                     outputs a thread (the faster kernel once the GPU is full) where they
                                     have at least this many tiles of 2048 outputs, else 8 outputs a thread
                                     (half the latency for small batches); 0: always 16, and COL_MAJOR(_TMA)
                                     per-group scales always through the kernel that stores whole 8-row
                                     runs (otherwise only for scale buffers past 6 MB). For tuning and tests */
#endif
};
FQ_API fqStatus_t fqHandleSetAttribute(fqHandle_t handle, int32_t attr, const void* buf, size_t sizeInBytes);
FQ_API fqStatus_t fqHandleGetAttribute(fqHandle_t handle, int32_t attr, void* buf, size_t sizeInBytes,
                                       size_t* sizeWritten);

/* ---------------------------------------------------------------------------------------------- */
/* Tensor layout: element type, rows, columns (elements), row stride (elements)                     */
/* ---------------------------------------------------------------------------------------------- */

typedef struct fqTensorLayoutOpaque* fqTensorLayout_t;

/** A row-major 2-D tensor. `ld` is the distance between rows in elements (>= cols; for FP4 the elements
 *  are nibbles and ld must be even). A row of `ld` elements and the whole extent (rows x ld) must each be
 *  a byte count that fits int64_t, whatever the rows (checked here and by fqTensorLayoutSetAttribute). */
FQ_API fqStatus_t fqTensorLayoutCreate(fqTensorLayout_t* layout, int32_t dtype, int64_t rows, int64_t cols,
                                       int64_t ld);
FQ_API fqStatus_t fqTensorLayoutDestroy(fqTensorLayout_t layout);

enum fqTensorLayoutAttribute {
    FQ_TENSOR_LAYOUT_TYPE = 0, /**< int32_t: fqDataType */
    FQ_TENSOR_LAYOUT_ROWS = 1, /**< int64_t */
    FQ_TENSOR_LAYOUT_COLS = 2, /**< int64_t */
    FQ_TENSOR_LAYOUT_LD = 3    /**< int64_t, row stride in elements */
};
FQ_API fqStatus_t fqTensorLayoutSetAttribute(fqTensorLayout_t layout, int32_t attr, const void* buf,
                                             size_t sizeInBytes);
FQ_API fqStatus_t fqTensorLayoutGetAttribute(fqTensorLayout_t layout, int32_t attr, void* buf,
                                             size_t sizeInBytes, size_t* sizeWritten);

/* ---------------------------------------------------------------------------------------------- */
/* Quantization descriptor                                                                          */
/* ---------------------------------------------------------------------------------------------- */

typedef struct fqQuantDescOpaque* fqQuantDesc_t;

/** A descriptor with the defaults below: identity activation, not gated, per-group 128, e4m3fn values,
 *  fp32 scales, row-major. */
FQ_API fqStatus_t fqQuantDescCreate(fqQuantDesc_t* desc);
FQ_API fqStatus_t fqQuantDescDestroy(fqQuantDesc_t desc);

/** Descriptor attributes. Each is set from a buffer of exactly its type's size; a wrong size or an
 *  unknown attribute gives FQ_STATUS_INVALID_VALUE. Values are checked against each other at execution
 *  and query time, so they can be set in any order. Pointers are device pointers on a CUDA handle and
 *  host pointers on the host backend; they are read when the work runs, so a captured CUDA graph sees
 *  new values written at the same addresses. */
enum fqQuantDescAttribute {
    FQ_QUANT_DESC_ACTIVATION = 0,             /**< int32_t fqActivation, default IDENTITY */
    FQ_QUANT_DESC_GATE_LAYOUT = 1,            /**< int32_t fqGateLayout, default NONE */
    FQ_QUANT_DESC_GATE_ORDER = 2,             /**< int32_t fqGateOrder, default GATE_FIRST */
    FQ_QUANT_DESC_GATE_BLOCK_WIDTH = 3,       /**< int32_t, multiple of 32, default 32 (BLOCK_INTERLEAVED) */
    FQ_QUANT_DESC_INTERMEDIATE_ROUNDING = 4,  /**< int32_t fqIntermediateRounding, default FP32 */
    FQ_QUANT_DESC_SCHEME = 5,                 /**< int32_t fqQuantScheme, default PER_GROUP */
    FQ_QUANT_DESC_GROUP_SIZE = 6,             /**< int32_t: 32, 64 or 128 for PER_GROUP, default 128; under another
                                                   scheme refused unless unset (0) or its own block: MXFP8/MXFP4
                                                   32, NVFP4 16, BLOCK_2D 128. Setting 0 restores the
                                                   default: it reads back as 128 */
    FQ_QUANT_DESC_OUTPUT_TYPE = 7,            /**< int32_t fqDataType of the values, default FP8_E4M3FN */
    FQ_QUANT_DESC_SCALE_TYPE = 8,             /**< int32_t fqDataType of the scales, default FP32 */
    FQ_QUANT_DESC_SCALE_LAYOUT = 9,           /**< int32_t fqScaleLayout, default ROW_MAJOR */
    FQ_QUANT_DESC_SCALE_ROUNDING = 10,        /**< int32_t fqScaleRounding, default NONE */
    FQ_QUANT_DESC_MX_SCALE_RULE = 11,         /**< int32_t fqMxScaleRule, default RCEIL */
    FQ_QUANT_DESC_SCALE_APPLY = 12,           /**< int32_t fqScaleApply, default DIVIDE */
    FQ_QUANT_DESC_QMAX = 13,                  /**< float, a normal positive fp32; 0 = the output type's largest
                                                   finite value; also the saturation bound of the codes
                                                   (docs/spec.md §1, §3.4) */
    FQ_QUANT_DESC_MIN_SCALE = 14,             /**< float, 0 = default (1/(qmax*512) fp8, FLT_EPSILON int8) */
    FQ_QUANT_DESC_SWIGLU_ALPHA = 15,          /**< float, default 1.702 */
    FQ_QUANT_DESC_SWIGLU_BETA = 16,           /**< float, default 1.0 */
    FQ_QUANT_DESC_SWIGLU_LIMIT = 17,          /**< float, default 7.0; +inf = no clamp */
    FQ_QUANT_DESC_STATIC_SCALE_POINTER = 18,  /**< const float*: PER_TENSOR_STATIC scale (E floats, one per
                                                   expert, under a MoE layout) */
    FQ_QUANT_DESC_SCALE_UB_POINTER = 19,      /**< const float*, default NULL: scale upper bound (fp8) */
    FQ_QUANT_DESC_ROW_PROB_POINTER = 20,      /**< const float*, default NULL: y *= prob[row], row of the 2-D
                                                   input (MASKED: e*max_m + i) */
    FQ_QUANT_DESC_MOE_LAYOUT = 21,            /**< int32_t fqMoeLayout, default NONE */
    FQ_QUANT_DESC_MOE_NUM_EXPERTS = 22,       /**< int32_t E >= 1 with a MoE layout, else 0 (default) */
    FQ_QUANT_DESC_MOE_OFFSETS_POINTER = 23,   /**< const int32_t*: E+1 row offsets (CONTIGUOUS only) */
    FQ_QUANT_DESC_MOE_COUNTS_POINTER = 24,    /**< const int32_t*: E valid row counts (MASKED; optional for
                                                   CONTIGUOUS) */
    FQ_QUANT_DESC_OUTPUTS = 25,               /**< int32_t fqOutputs mask, default ROWWISE */
    FQ_QUANT_DESC_COLUMNWISE_BLOCK = 26,      /**< int32_t: 32 or 128 rows per columnwise block (fp32-scale
                                                   schemes, PER_TOKEN included), default 32; MXFP8/MXFP4 use
                                                   32 and NVFP4 16, with this left at 32 */
    FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE = 27,  /**< int32_t 0/1, default 0: columnwise data [H, M] (row stride
                                                   M; MASKED [E, H, max_m]) instead of the output layout's
                                                   [M, H]. Transposed FP4 packs rows 2i, 2i+1 per byte */
    FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER = 28, /**< void*: columnwise values, as many bytes as the output */
    FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER = 29,  /**< void*: columnwise scales, fqGetScaleBufferSize(...,
                                                       FQ_OUTPUT_COLUMNWISE) bytes (fp32: 4-byte aligned) */
    FQ_QUANT_DESC_GLOBAL_AMAX_POINTER = 30    /**< const float*, default NULL: NVFP4 global amax, one per
                                                   expert under a MoE layout (NULL: the amax of the tensor's,
                                                   or the expert's, valid rows, computed on the device) */
};
FQ_API fqStatus_t fqQuantDescSetAttribute(fqQuantDesc_t desc, int32_t attr, const void* buf,
                                          size_t sizeInBytes);
/** Copies the attribute into buf. With buf NULL and sizeInBytes 0, only *sizeWritten (the attribute's
 *  size) is returned. */
FQ_API fqStatus_t fqQuantDescGetAttribute(fqQuantDesc_t desc, int32_t attr, void* buf, size_t sizeInBytes,
                                          size_t* sizeWritten);

/* ---------------------------------------------------------------------------------------------- */
/* Queries                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

/** Facts about the scale buffer for an output of `rows` x `cols` quantized values (docs/spec.md §4). Strides are
 *  in bytes, of the storage element (a float, a byte, or for PACKED_UE8M0 an int32 of four scales). The
 *  shape facts describe one block; the buffer holds BATCH blocks, BATCH_STRIDE bytes apart. Columnwise:
 *  the logical scales are S_col[h, b], so ROWS = cols (H) and COLS = ceil(rows / block). */
enum fqScaleInfo {
    FQ_SCALE_INFO_BYTES = 0,          /**< total bytes the buffer needs, padding and every block included */
    FQ_SCALE_INFO_ROWS = 1,           /**< logical scale rows of a block (M; ceil(M/128) for BLOCK_2D; MASKED
                                           max_m; columnwise H; 1 for per-tensor dynamic, 0 for static) */
    FQ_SCALE_INFO_COLS = 2,           /**< logical scale columns (groups per row, ceil(cols / G); columnwise
                                           ceil(M / block)) */
    FQ_SCALE_INFO_PADDED_ROWS = 3,    /**< rows including layout padding */
    FQ_SCALE_INFO_PADDED_COLS = 4,    /**< scale columns including layout padding */
    FQ_SCALE_INFO_ROW_STRIDE = 5,     /**< bytes between scales of consecutive rows (0: not affine) */
    FQ_SCALE_INFO_COL_STRIDE = 6,     /**< bytes between consecutive storage columns (0: not affine) */
    FQ_SCALE_INFO_ELEMENT_BYTES = 7,  /**< bytes of one storage element */
    FQ_SCALE_INFO_DTYPE = 8,          /**< fqDataType of one scale */
    FQ_SCALE_INFO_BATCH = 9,          /**< scale blocks: E for MASKED MoE and for per-tensor schemes under either
                                           MoE layout (one scale per expert), else 1 */
    FQ_SCALE_INFO_BATCH_STRIDE = 10   /**< bytes between consecutive blocks (a block's bytes) */
};

/** The bytes the scale buffer needs for an output of `rows` x `cols` values (the output layout's rows, so
 *  E*max_m for MASKED); `which` is FQ_OUTPUT_ROWWISE or FQ_OUTPUT_COLUMNWISE. */
FQ_API fqStatus_t fqGetScaleBufferSize(fqQuantDesc_t desc, int64_t rows, int64_t cols, int32_t which,
                                       size_t* sizeInBytes);
/** One fact (fqScaleInfo) about the scale buffer. */
FQ_API fqStatus_t fqGetScaleBufferInfo(fqQuantDesc_t desc, int64_t rows, int64_t cols, int32_t which,
                                       int32_t info, int64_t* value);

/** Workspace fqQuantize needs for this problem on this handle, or the status and message fqQuerySupport
 *  gives for a problem no variant runs. 0 except for NVFP4 on a CUDA handle without
 *  FQ_QUANT_DESC_GLOBAL_AMAX_POINTER: 4 bytes (device memory, 4-byte aligned), where the global amax is
 *  reduced on the device; after the call it holds that fp32 amax, which decoding needs (S_enc = 2688 / amax). */
FQ_API fqStatus_t fqGetWorkspaceSize(fqHandle_t handle, fqQuantDesc_t desc, fqTensorLayout_t input,
                                     fqTensorLayout_t output, size_t* sizeInBytes);

/** Would fqQuantize run this problem on this handle? SUCCESS and the name of the kernel that runs it (the
 *  dispatch entry, e.g. "sm90.plain.swizzled") in `variantName` (NUL-terminated, truncated to `nameCapacity`;
 *  may be NULL), or the status and message execution would give. Pointers are not checked (there are none
 *  yet): the answer is for 16-byte aligned ones (others run an ".unaligned" entry, or for a scale pointer
 *  off 16 bytes "smXX.plain" instead of "smXX.plain.swizzled"). */
FQ_API fqStatus_t fqQuerySupport(fqHandle_t handle, fqQuantDesc_t desc, fqTensorLayout_t input,
                                 fqTensorLayout_t output, char* variantName, size_t nameCapacity);

/** The dispatch table: the number of entries (one per kernel skeleton and form) for this handle's backend
 *  and architecture, in the order the dispatcher tries them. */
FQ_API fqStatus_t fqGetVariantCount(fqHandle_t handle, int32_t* count);
/** The description of variant `index` ("name: what it covers"), NUL-terminated and truncated to
 *  `nameCapacity` (which must be at least 1). */
FQ_API fqStatus_t fqGetVariantName(fqHandle_t handle, int32_t index, char* name, size_t nameCapacity);

/* ---------------------------------------------------------------------------------------------- */
/* Execution                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

/** Applies the activation and quantizes: input [M, W] (W = 2H gated, H otherwise) -> output [M, H] and
 *  its scales, in the layout the descriptor names. Asynchronous on `stream` for a CUDA handle (no
 *  allocation, no host synchronisation, capturable in a CUDA graph); synchronous on the host backend.
 *  `scales` holds `scalesSizeInBytes` bytes, at least fqGetScaleBufferSize(); padding is written with 0.
 *  Columnwise outputs, when asked for, go to the descriptor's COLUMNWISE_* pointers; `output` and `scales`
 *  are unused (may be NULL) when FQ_QUANT_DESC_OUTPUTS is COLUMNWISE alone. Under a MoE layout only the
 *  experts' valid rows are read and written (docs/moe.md). On every backend the input must be 2-byte
 *  aligned, fp32 scales and the descriptor's float and int32 pointers 4-byte aligned (else
 *  FQ_STATUS_MISALIGNED). The input and every output written (output, scales, the columnwise values and
 *  scales) each lie in memory of their own: two that share a byte give FQ_STATUS_INVALID_VALUE naming both.
 *  Zero rows are valid and write only what the layout defines without rows (a per-tensor dynamic scale).
 *  Each object is read once, at entry: another thread changing it during the call gives the call the old or
 *  the new value of each attribute, never an access outside the buffers (docs/api.md, "Threads").
 *  A failing call writes nothing. */
FQ_API fqStatus_t fqQuantize(fqHandle_t handle, fqQuantDesc_t desc, fqTensorLayout_t inputLayout,
                             const void* input, fqTensorLayout_t outputLayout, void* output, void* scales,
                             size_t scalesSizeInBytes, void* workspace, size_t workspaceSizeInBytes,
                             fqStream_t stream);

/* ---------------------------------------------------------------------------------------------- */
/* Plans: a problem validated once, executed many times                                            */
/* ---------------------------------------------------------------------------------------------- */

/** A quantization problem resolved once (in the manner of a cuFFT plan): fqPlanCreate checks the handle,
 *  descriptor and layouts as fqQuantize does, resolves the defaults and chooses the kernel variant; each
 *  fqPlanExecute then checks only what can change per call. fqQuantize is fqPlanCreate followed by
 *  fqPlanExecute without the object: the same checks, and for a call with one fault the same status and
 *  message (with several, the plan meets those of its objects first); the same bytes.
 *
 *      fqPlan_t p;  fqPlanCreate(&p, h, d, in, out);
 *      int64_t scale_bytes;  fqPlanGetAttribute(p, FQ_PLAN_SCALE_BUFFER_SIZE, &scale_bytes, sizeof scale_bytes, NULL);
 *      for (...) fqPlanExecute(p, x, y, scales, scale_bytes, NULL, 0, stream);
 *      fqPlanDestroy(p);
 *
 *  A plan keeps copies of what it needs: the handle's attributes, the descriptor's (its pointers included) and
 *  both layouts, as they were at fqPlanCreate. It borrows nothing: it stays valid after the handle, descriptor
 *  and layouts are changed or destroyed, and later changes to them do not reach it. A plan is never changed
 *  after creation, so several threads may execute one plan at once (each on its own buffers). Plans follow
 *  the "Object lifetime" rules above (fqPlanDestroy retires the value). */
typedef struct fqPlanOpaque* fqPlan_t;

/** Validates the problem and chooses its variant: the status and message fqQuantize would give for these
 *  objects before it looks at a buffer (INVALID_HANDLE, INVALID_VALUE, NULL_POINTER, NOT_SUPPORTED, as
 *  fqQuerySupport gives them). The descriptor's pointers (static scale, scale bound, routing probability,
 *  global amax, MoE offsets and counts, columnwise outputs) are part of the plan and are checked here, once:
 *  their alignment and, on a CUDA handle, that the handle's device is current and addresses each of them
 *  (INVALID_VALUE / MISALIGNED naming the attribute). `*plan` is NULL after a failure. */
FQ_API fqStatus_t fqPlanCreate(fqPlan_t* plan, fqHandle_t handle, fqQuantDesc_t desc, fqTensorLayout_t inputLayout,
                               fqTensorLayout_t outputLayout);
/** Destroys a plan. NULL is accepted and ignored. */
FQ_API fqStatus_t fqPlanDestroy(fqPlan_t plan);

/** Facts of a plan (read-only; fqPlanGetAttribute). */
enum fqPlanAttribute {
    FQ_PLAN_WORKSPACE_SIZE = 0,              /**< int64_t: fqGetWorkspaceSize for the plan's problem */
    FQ_PLAN_SCALE_BUFFER_SIZE = 1,           /**< int64_t: the bytes fqPlanExecute writes to `scales` (0 when
                                                  FQ_QUANT_DESC_OUTPUTS is COLUMNWISE alone) */
    FQ_PLAN_COLUMNWISE_SCALE_BUFFER_SIZE = 2 /**< int64_t: the bytes written to the columnwise scales (0
                                                  without the columnwise output) */
};
/** As fqQuantDescGetAttribute: with buf NULL and sizeInBytes 0 only *sizeWritten is returned. */
FQ_API fqStatus_t fqPlanGetAttribute(fqPlan_t plan, int32_t attr, void* buf, size_t sizeInBytes,
                                     size_t* sizeWritten);
/** The name of the variant the plan runs for 16-byte-aligned buffers (fqQuerySupport's), NUL-terminated and
 *  truncated to `nameCapacity` (at least 1). */
FQ_API fqStatus_t fqPlanGetVariantName(fqPlan_t plan, char* name, size_t nameCapacity);

/** Runs the plan: fqQuantize's buffer arguments, checked as fqQuantize checks them on every call (NULL,
 *  alignment, sizes, aliasing with each other and with the plan's columnwise outputs, and on a CUDA handle the
 *  current device and the device each buffer belongs to), with fqQuantize's statuses and messages. Buffers
 *  that are not 16-byte aligned (or row strides that are not) run the variant chosen for them at creation.
 *  Asynchronous on `stream` for a CUDA handle (no allocation, no lock, capturable in a CUDA graph);
 *  synchronous on the host backend. A failing call writes nothing. */
FQ_API fqStatus_t fqPlanExecute(fqPlan_t plan, const void* input, void* output, void* scales,
                                size_t scalesSizeInBytes, void* workspace, size_t workspaceSizeInBytes,
                                fqStream_t stream);

/* ---------------------------------------------------------------------------------------------- */
/* One call: the common case without descriptor or layout objects                                  */
/* ---------------------------------------------------------------------------------------------- */

/** fqQuantize of a packed [rows, W] input (W = 2 * cols gated, cols otherwise; row stride W) to a packed
 *  [rows, cols] output (row stride cols; FP4: cols / 2 bytes) in one call, in the manner of zstd's simple API:
 *
 *      fqQuantizeSimple(h, FQ_ACTIVATION_SILU, FQ_GATE_LAYOUT_SPLIT, FQ_SCHEME_PER_GROUP, FQ_TYPE_BF16,
 *                       FQ_TYPE_FP8_E4M3FN, FQ_SCALE_LAYOUT_COL_MAJOR_TMA, tokens, hidden, x, y, s,
 *                       scale_bytes, NULL, 0, stream);
 *
 *  It is exactly the descriptor route below, run by the library: a descriptor whose ACTIVATION, GATE_LAYOUT,
 *  SCHEME, OUTPUT_TYPE and SCALE_LAYOUT are these arguments, SCALE_TYPE the scheme's own (E8M0 for MXFP8 and
 *  MXFP4, FP8_E4M3FN for NVFP4, FP32 otherwise) and every other attribute its default (PER_GROUP: groups of 128;
 *  gate first; DIVIDE; the MX rule RCEIL; NVFP4's global amax computed); fqTensorLayoutCreate of the output
 *  (outputType, rows, cols, cols), then of the input (inputType, rows, W, W); then fqQuantize. A bad argument
 *  gets the status and message that route gives at the step that refuses it (fqQuantDescSetAttribute,
 *  fqTensorLayoutCreate or fqQuantize: the message names the attribute or layout argument it sets), and a
 *  good one writes the same bytes. What needs another attribute (PER_TENSOR_STATIC's scale, MoE layouts,
 *  columnwise outputs, a routing probability, a row stride) takes the descriptor API.
 *  `scalesSizeInBytes` is at least fqGetScaleBufferSizeSimple's; `workspace` is fqQuantize's (4 bytes for
 *  NVFP4 on a CUDA handle, where the global amax is reduced and left; else NULL and 0). */
FQ_API fqStatus_t fqQuantizeSimple(fqHandle_t handle, int32_t activation, int32_t gateLayout, int32_t scheme,
                                   int32_t inputType, int32_t outputType, int32_t scaleLayout, int64_t rows,
                                   int64_t cols, const void* input, void* output, void* scales,
                                   size_t scalesSizeInBytes, void* workspace, size_t workspaceSizeInBytes,
                                   fqStream_t stream);

/** The bytes fqQuantizeSimple (and fqQuantizeDLPack) write to `scales` for an output of `rows` x `cols`: what
 *  fqGetScaleBufferSize returns for the descriptor fqQuantizeSimple builds, checked the same way. */
FQ_API fqStatus_t fqGetScaleBufferSizeSimple(int32_t scheme, int32_t outputType, int32_t scaleLayout, int64_t rows,
                                             int64_t cols, size_t* sizeInBytes);

/* fqQuantizeDLPack, the one call on DLPack tensors (DLTensor* in and out), is declared in
 * <fusedquant/fusedquant_dlpack.h>, which includes <dlpack/dlpack.h>; this header needs neither. */

/* ---------------------------------------------------------------------------------------------- */
/* Scale repack: one scale layout to another                                                        */
/* ---------------------------------------------------------------------------------------------- */

/** How the `batch` scale blocks of a repack lie in its source and destination (fqScaleRepack). A block is
 *  one whole scale buffer of `rows` x `groups` logical scales in its layout (padding included, docs/spec.md §4);
 *  the blocks of a buffer follow each other without gaps, block b at b x fqGetScaleRepackSize(.., 1, ..).
 *  A stacked buffer is one block of `stackedRows` rows holding every batch's rows (MoE CONTIGUOUS, docs/spec.md §5):
 *  batch b is rows [rowOffsets[b], rowOffsets[b+1]) of it. */
enum fqScaleRepackBatching {
    FQ_SCALE_REPACK_BLOCKS = 0,            /**< src and dst: `batch` blocks; rowOffsets NULL, stackedRows 0 */
    FQ_SCALE_REPACK_STACKED_TO_BLOCKS = 1, /**< src: stacked; dst: `batch` blocks (each expert padded as
                                                its layout pads `rows` rows, e.g. to 128 for SWIZZLED_128X4) */
    FQ_SCALE_REPACK_BLOCKS_TO_STACKED = 2  /**< src: `batch` blocks; dst: stacked */
};

/** The bytes of `batch` consecutive blocks of `rows` x `groups` scales of `scaleType` in `layout`, padding
 *  included: the size fqScaleRepack checks each buffer against (a stacked buffer: batch 1, stackedRows
 *  rows). scaleType is FQ_TYPE_FP32, FQ_TYPE_E8M0 or FQ_TYPE_FP8_E4M3FN (NVFP4 block scales);
 *  SWIZZLED_128X4 holds byte scales only, PACKED_UE8M0 E8M0 only (else FQ_STATUS_INVALID_VALUE). For one
 *  block this equals fqGetScaleBufferSize of a descriptor with the same scale type and layout. */
FQ_API fqStatus_t fqGetScaleRepackSize(int32_t scaleType, int64_t batch, int64_t rows, int64_t groups,
                                       int32_t layout, size_t* sizeInBytes);

/** Rewrites scales from one layout (fqScaleLayout) to another: logical scale S_b[r, k] of batch b, row r,
 *  group k is copied bit for bit from where `srcLayout` stores it in `src` to where `dstLayout` stores it
 *  in `dst`; every other byte of dst's fqGetScaleRepackSize bytes (layout padding, a block's rows past its
 *  batch's row count, stacked rows in no batch) is written with 0. Nothing past that size is written.
 *
 *  scaleType   FQ_TYPE_FP32, FQ_TYPE_E8M0 or FQ_TYPE_FP8_E4M3FN; both layouts must hold it (see
 *              fqGetScaleRepackSize).
 *  batch       blocks (experts), >= 0; rows: rows of one block, >= 0; groups: scale columns, >= 1.
 *  batching    fqScaleRepackBatching: where the batches lie in src and dst.
 *  rowOffsets  NULL for FQ_SCALE_REPACK_BLOCKS; otherwise batch+1 int32 row offsets into the stacked side,
 *              4-byte aligned, in device memory on a CUDA handle (host memory on the host backend), read
 *              when the work runs (a captured CUDA graph sees new offsets at the same address). They are
 *              not checked on the host: batch b holds min(off[b+1] - off[b], rows) rows (none when
 *              negative); a row outside [0, stackedRows) counts as absent (0 in dst); where offsets are not
 *              non-decreasing, which batch a stacked destination row belongs to is unspecified. No
 *              offsets make the library read or write outside src and dst.
 *  stackedRows rows of the stacked side (>= 0); 0 for FQ_SCALE_REPACK_BLOCKS.
 *  src, dst    the buffers, of srcSizeInBytes / dstSizeInBytes bytes, at least fqGetScaleRepackSize
 *              (else FQ_STATUS_INSUFFICIENT_BUFFER); they must not overlap. FP32 scales: 4-byte aligned
 *              (else FQ_STATUS_MISALIGNED); byte scales and PACKED_UE8M0 words: any address. NULL only
 *              where the size needed is 0.
 *  stream      CUDA handle: the work is enqueued on it (no allocation, no host synchronisation, capturable
 *              in a CUDA graph); host backend: ignored, the call is synchronous.
 *  A failing call writes nothing. Every backend writes the same bytes. */
FQ_API fqStatus_t fqScaleRepack(fqHandle_t handle, int32_t scaleType, int64_t batch, int64_t rows, int64_t groups,
                                int32_t batching, const int32_t* rowOffsets, int64_t stackedRows,
                                int32_t srcLayout, const void* src, size_t srcSizeInBytes, int32_t dstLayout,
                                void* dst, size_t dstSizeInBytes, fqStream_t stream);

#ifdef FQ_EXPERIMENTAL_API
/* ---------------------------------------------------------------------------------------------- */
/* FQ_EXPERIMENTAL: grouped FP8 GEMM with the activation + quantization epilogue fused             */
/* (docs/gemm.md). Not covered by the ABI promise (docs/abi.md): declared only under               */
/* FQ_EXPERIMENTAL_API, and its functions, attributes and their values may change in any release.  */
/* ---------------------------------------------------------------------------------------------- */

/** What a grouped GEMM computes besides its operands: the groups, per-group alphas, the layout of A's scales
 *  and which outputs it writes. Its epilogue (activation, gate layout, routing probability, quantization,
 *  columnwise outputs) is an fqQuantDesc_t, so the GEMM's quantized output equals fqQuantize of that
 *  descriptor applied to the GEMM's bf16 C, byte for byte. */
typedef struct fqGroupedGemmDescOpaque* fqGroupedGemmDesc_t;

FQ_API fqStatus_t fqGroupedGemmDescCreate(fqGroupedGemmDesc_t* desc);
/** NULL is accepted and ignored. */
FQ_API fqStatus_t fqGroupedGemmDescDestroy(fqGroupedGemmDesc_t desc);

/** Attributes of a grouped GEMM descriptor (sizes as noted). Pointers are device pointers on a CUDA handle
 *  and host pointers on the host backend; they are read when the work runs (a captured CUDA graph sees new
 *  values written at the same addresses). */
enum fqGroupedGemmDescAttribute {
    FQ_GEMM_DESC_NUM_GROUPS = 0,             /**< int32_t E >= 1, default 1: B holds E weights [N, K] */
    FQ_GEMM_DESC_GROUP_OFFSETS_POINTER = 1,  /**< const int32_t*: E+1 row offsets, group g owns rows
                                                  [offsets[g], offsets[g+1]) of A (clamped as MoE CONTIGUOUS,
                                                  docs/spec.md §5); NULL (default) only with E = 1: all M rows */
    FQ_GEMM_DESC_GROUP_COUNTS_POINTER = 2,   /**< const int32_t*, default NULL: E valid-row counts, only the
                                                  first counts[g] rows of group g's slot are valid (cuDNN's
                                                  aligned groups); the rest is padding, never written */
    FQ_GEMM_DESC_ALPHA_POINTER = 3,          /**< const float*, default NULL (1.0): E per-group alphas */
    FQ_GEMM_DESC_A_SCALE_LAYOUT = 4,         /**< int32_t fqScaleLayout of A's 1x128 fp32 scales:
                                                  COL_MAJOR_TMA (default, ld round_up(M, 4)) or COL_MAJOR
                                                  (ld M) */
    FQ_GEMM_DESC_C_OUTPUT_POINTER = 5,       /**< void*, default NULL: C as bf16 [M, N], row stride N */
    FQ_GEMM_DESC_D_OUTPUT_POINTER = 6,       /**< void*, default NULL: y = prob * act(C) as bf16 [M, H]
                                                  (H = N/2 gated, else N), row stride H */
    FQ_GEMM_DESC_QUANTIZE = 7                /**< int32_t 0/1, default 1: write y quantized per the epilogue
                                                  descriptor to `output` and `scales` (and its columnwise
                                                  pointers); 0: no quantized output (outputLayout, output,
                                                  scales may be NULL) */
};
FQ_API fqStatus_t fqGroupedGemmDescSetAttribute(fqGroupedGemmDesc_t desc, int32_t attr, const void* buf,
                                                size_t sizeInBytes);
/** As fqQuantDescGetAttribute: with buf NULL and sizeInBytes 0 only *sizeWritten is returned. */
FQ_API fqStatus_t fqGroupedGemmDescGetAttribute(fqGroupedGemmDesc_t desc, int32_t attr, void* buf,
                                                size_t sizeInBytes, size_t* sizeWritten);

/** The bytes fqGroupedGemm writes to `scales` (`which` = FQ_OUTPUT_ROWWISE) or to the epilogue's columnwise
 *  scales (FQ_OUTPUT_COLUMNWISE) for an output of `rows` x `cols` (M x H) with this GEMM descriptor's
 *  FQ_GEMM_DESC_NUM_GROUPS E: fqGetScaleBufferSize of the epilogue run as MoE CONTIGUOUS with E experts
 *  (per-tensor schemes: E floats, one per group; the other schemes as without MoE). Size both buffers with it:
 *  the columnwise scales have no size argument for fqGroupedGemm to check. */
FQ_API fqStatus_t fqGroupedGemmGetScaleBufferSize(fqGroupedGemmDesc_t gemmDesc, fqQuantDesc_t epilogueDesc,
                                                  int64_t rows, int64_t cols, int32_t which, size_t* sizeInBytes);
/** One fact (fqScaleInfo) about that scale buffer, as fqGetScaleBufferInfo gives it for fqQuantize. */
FQ_API fqStatus_t fqGroupedGemmGetScaleBufferInfo(fqGroupedGemmDesc_t gemmDesc, fqQuantDesc_t epilogueDesc,
                                                  int64_t rows, int64_t cols, int32_t which, int32_t info,
                                                  int64_t* value);

/** Grouped block-scaled FP8 GEMM with the activation + quantization epilogue (seeds/004 on Hopper):
 *
 *      for each group g and each valid row m of g:
 *        C[m, n] = alpha[g] * sum_k (A[m, k] * sa[m, k/128]) * (B[g, n, k] * sb[g, n/128, k/128])
 *        y[m, :] = prob[m] * act(bf16(C[m, :]))       (the epilogue descriptor's activation and gate layout)
 *        output, scales = y quantized as fqQuantize quantizes it (rowwise and/or columnwise)
 *
 *  aLayout   FQ_TYPE_FP8_E4M3FN [M, K], row stride a multiple of 16 bytes; `a` is 16-byte aligned.
 *  aScales   fp32 1x128 scales of A, ceil(K/128) columns in FQ_GEMM_DESC_A_SCALE_LAYOUT (fqQuantize's
 *            PER_GROUP 128 output with that scale layout); 4-byte aligned.
 *  bLayout   FQ_TYPE_FP8_E4M3FN [E*N, K] (E weights [N, K] stacked), row stride a multiple of 16 bytes; `b` is
 *            16-byte aligned.
 *  bScales   fp32 128x128 block scales of B: for each group, the FQ_SCHEME_BLOCK_2D ROW_MAJOR scales of its
 *            [N, K] weight ([ceil(N/128), ceil(K/128)]), groups one after the other; 4-byte aligned.
 *  epilogueDesc  the fused operation applied to C (activation, gate layout and order, SwiGLU alpha/beta/limit,
 *            intermediate rounding, ROW_PROB_POINTER indexed by the row of A, quantization attributes,
 *            OUTPUTS with the columnwise pointers); its MoE attributes must be unset (the groups are the
 *            GEMM descriptor's; the epilogue runs as under MoE CONTIGUOUS with those offsets).
 *  outputLayout, output, scales, scalesSizeInBytes  as fqQuantize's output for the [M, H] result; the scale
 *            buffers (`scales` and the epilogue's columnwise scales) take the size
 *            fqGroupedGemmGetScaleBufferSize gives (per-tensor schemes write one fp32 scale per
 *            group).
 *  Rows no group owns (and a slot's rows past its count) are never written and never influence an output.
 *  Asynchronous on `stream` for a CUDA handle (no allocation, no host synchronisation, capturable in a CUDA
 *  graph); synchronous on the host backend (the reference: fp64 accumulation). CUDA runs it on sm_90 (the
 *  library built with sm_90a) with a gated activation, H a multiple of 64 and PER_GROUP 32/64/128 fp32-scale
 *  quantization (columnwise block 32 or 128); otherwise FQ_STATUS_NOT_SUPPORTED with the reason (the host
 *  backend runs every epilogue fqQuantize runs). A failing call writes nothing. */
FQ_API fqStatus_t fqGroupedGemm(fqHandle_t handle, fqGroupedGemmDesc_t gemmDesc, fqQuantDesc_t epilogueDesc,
                                fqTensorLayout_t aLayout, const void* a, const void* aScales,
                                fqTensorLayout_t bLayout, const void* b, const void* bScales,
                                fqTensorLayout_t outputLayout, void* output, void* scales,
                                size_t scalesSizeInBytes, fqStream_t stream);
#endif /* FQ_EXPERIMENTAL_API */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FUSEDQUANT_H */
