// The DLPack 0.6 ABI that fqQuantizeDLPack reads, declared from the DLPack specification for builds on a machine
// without the DLPack header (CMake finds no `dlpack` package; Debian's libdlpack-dev provides one). The layout and
// the values below are DLPack's published ABI, which later DLPack versions keep: a library built with these
// declarations reads the same bytes as one built with <dlpack/dlpack.h>. Callers include the real header
// (fusedquant_dlpack.h does); this one is the library's own fallback.
#pragma once

#include <stdint.h>

#define DLPACK_VERSION 60
#define FQ_DLPACK_LAYOUT_DECLARED 1

extern "C" {

// Device types fqQuantizeDLPack names (the others are never accepted).
typedef enum { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13 } DLDeviceType;

typedef struct {
    DLDeviceType device_type;  // an int32 in the ABI
    int32_t device_id;
} DLDevice;

// Element type codes fqQuantizeDLPack accepts.
typedef enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4 } DLDataTypeCode;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

typedef struct {
    void* data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t* shape;
    int64_t* strides;  // in elements; NULL: compact row-major
    uint64_t byte_offset;
} DLTensor;

}  // extern "C"

static_assert(sizeof(DLDevice) == 8 && sizeof(DLDataType) == 4 && sizeof(DLTensor) == 48,
              "DLTensor must have DLPack's 64-bit layout");
