//! The element types of the slices the safe calls take. Every bit pattern is a valid value of each, since
//! the library writes raw bytes. Plain integers stand for any type of their size (bf16 / fp16 bits as `u16`,
//! fp8 / int8 / e8m0 / fp4 pairs as `u8` or `i8`, packed UE8M0 words as `u32` / `i32`, fp32 as `f32`); the
//! typed elements name their format, and a slice of one is refused for a layout of another type:
//!
//! - inputs: `half::bf16` and `half::f16` (the default `half` feature);
//! - outputs and scales: [`Fp8E4m3fn`] (also NVFP4's block scales), [`Fp8E4m3fnuz`], [`Fp8E5m2`], [`E8m0`]
//!   (MX scales) and [`Fp4E2m1x2`] (two fp4 values a byte), each a byte with `to_f32` as docs/spec.md §1
//!   decodes it.
use crate::bits::decode_byte;
use crate::DataType;

mod sealed {
    use crate::DataType;
    pub trait Sealed {
        /// The type a layout (or scale buffer) must have for a slice of these elements; `None`: any of
        /// their size.
        const DTYPE: Option<DataType>;
    }
}
pub(crate) use sealed::Sealed;

/// An element type of the slices [`crate::Handle::quantize`] and the other safe calls take (module docs).
pub trait Element: Sealed + Copy {}

macro_rules! elements {
    ($($t:ty => $dtype:expr),* $(,)?) => {$(
        impl Sealed for $t { const DTYPE: Option<DataType> = $dtype; }
        impl Element for $t {}
    )*};
}
elements!(u8 => None, i8 => None, u16 => None, i16 => None, u32 => None, i32 => None, f32 => None);
#[cfg(feature = "half")]
elements!(half::bf16 => Some(DataType::Bf16), half::f16 => Some(DataType::Fp16));

/// One-byte formats: `#[repr(transparent)]` over their bits, so a slice of them is a slice of bytes.
macro_rules! byte_formats {
    ($($(#[$doc:meta])* $name:ident = $dtype:ident -> $decoded:ty;)+) => {$(
        $(#[$doc])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name(pub u8);
        impl $name {
            /// The value with these bits.
            pub const fn from_bits(bits: u8) -> Self { $name(bits) }
            /// The bits of the value.
            pub const fn to_bits(self) -> u8 { self.0 }
        }
        impl From<$name> for $decoded {
            fn from(value: $name) -> $decoded { value.to_f32() }
        }
        elements!($name => Some(DataType::$dtype));
    )+};
}

byte_formats! {
    /// fp8 e4m3fn (OCP FP8): bias 7, no infinity, 0x7F / 0xFF are NaN, largest finite 448. Also the type of
    /// NVFP4's block scales.
    Fp8E4m3fn = Fp8E4m3fn -> f32;
    /// fp8 e4m3fnuz (AMD): bias 8, no infinity and no -0, 0x80 is NaN, largest finite 240.
    Fp8E4m3fnuz = Fp8E4m3fnuz -> f32;
    /// fp8 e5m2 (OCP FP8): bias 15, infinities and NaNs as in IEEE, largest finite 57344.
    Fp8E5m2 = Fp8E5m2 -> f32;
    /// E8M0 scale of MXFP8 / MXFP4: the value 2^(bits - 127); 0xFF is NaN.
    E8m0 = E8m0 -> f32;
    /// Two fp4 e2m1 values (0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives): element 2i in the low nibble,
    /// 2i + 1 in the high one.
    Fp4E2m1x2 = Fp4E2m1 -> [f32; 2];
}

impl Fp8E4m3fn {
    /// The value (NaN for 0x7F and 0xFF).
    pub fn to_f32(self) -> f32 {
        decode_byte(DataType::Fp8E4m3fn, self.0).unwrap()
    }
}

impl Fp8E4m3fnuz {
    /// The value (NaN for 0x80).
    pub fn to_f32(self) -> f32 {
        decode_byte(DataType::Fp8E4m3fnuz, self.0).unwrap()
    }
}

impl Fp8E5m2 {
    /// The value (infinities for 0x7C / 0xFC, NaN above them).
    pub fn to_f32(self) -> f32 {
        decode_byte(DataType::Fp8E5m2, self.0).unwrap()
    }
}

impl E8m0 {
    /// 2^(bits - 127), exact in f32 (bits 0 is the subnormal 2^-127); NaN for 0xFF.
    pub fn to_f32(self) -> f32 {
        match self.0 {
            0xFF => f32::NAN,
            0 => f32::from_bits(1 << 22),
            e => f32::from_bits(u32::from(e) << 23),
        }
    }
}

impl Fp4E2m1x2 {
    /// The two values, element 2i (low nibble) first.
    pub fn to_f32(self) -> [f32; 2] {
        [e2m1(self.0 & 0xF), e2m1(self.0 >> 4)]
    }
}

/// The value of a 4-bit e2m1 code: sign, 2 exponent bits (bias 1), 1 mantissa bit.
fn e2m1(code: u8) -> f32 {
    const MAGNITUDE: [f32; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    let m = MAGNITUDE[usize::from(code & 7)];
    if code & 8 != 0 {
        -m
    } else {
        m
    }
}
