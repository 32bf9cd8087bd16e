//! Bit-pattern helpers for callers without a half-precision crate: bf16 inputs travel as `u16` bits and
//! quantized outputs as bytes.
use crate::DataType;

/// The bf16 bits of `x`, rounded to nearest, ties to even (a NaN stays a quiet NaN).
pub fn bf16_from_f32(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return ((b >> 16) | 0x40) as u16;
    }
    ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) as u16
}

/// The value of bf16 bits.
pub fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits((bits as u32) << 16)
}

/// The value of one byte of a quantized output of type `dtype` (fp8 e4m3fn / e4m3fnuz / e5m2 or int8);
/// `None` for the other types.
pub fn decode_byte(dtype: DataType, byte: u8) -> Option<f32> {
    let (exp_bits, bias) = match dtype {
        DataType::Int8 => return Some(byte as i8 as f32),
        DataType::Fp8E4m3fn => (4, 7),
        DataType::Fp8E4m3fnuz => (4, 8),
        DataType::Fp8E5m2 => (5, 15),
        _ => return None,
    };
    let man_bits = 7 - exp_bits;
    let (exp, man) = ((byte as i32 >> man_bits) & ((1 << exp_bits) - 1), (byte as i32) & ((1 << man_bits) - 1));
    let sign = if byte & 0x80 != 0 { -1.0 } else { 1.0 };
    let special = match dtype {
        DataType::Fp8E4m3fn => byte & 0x7F == 0x7F,
        DataType::Fp8E4m3fnuz => byte == 0x80,
        _ => exp == 31, // e5m2: Inf and NaN as in IEEE
    };
    Some(if !special {
        // Subnormals (exp 0) have no implicit one and the exponent of exp 1.
        let (implicit, e) = if exp == 0 { (0, 1) } else { (1 << man_bits, exp) };
        sign * (implicit + man) as f32 * 2f32.powi(e - bias - man_bits)
    } else if exp == 31 && man == 0 {
        sign * f32::INFINITY
    } else {
        f32::NAN
    })
}
