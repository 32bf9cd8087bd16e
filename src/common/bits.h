// The bit pattern of a float and back, on the host (memcpy) and the device (intrinsics).
#pragma once

#include <cstdint>
#include <cstring>

#include "hd.h"

namespace fq {

FQ_HD uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
#endif
}

FQ_HD float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float x;
    std::memcpy(&x, &u, 4);
    return x;
#endif
}

}  // namespace fq
