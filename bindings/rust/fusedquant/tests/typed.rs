//! Typed elements (half inputs, fp8 / e8m0 / fp4 outputs), the device-buffer path and thread-safety markers,
//! on the host backend (no GPU needed).
use fusedquant::*;
use std::ffi::c_void;

fn host() -> Handle {
    Handle::new(Backend::Host, 0).expect("host handle")
}

/// Deterministic values in about [-4, 4).
fn values(n: usize, mut seed: u64) -> Vec<f32> {
    (0..n)
        .map(|_| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 8.0
        })
        .collect()
}

/// A SiLU-gated per-group-128 e4m3fn problem of `tokens` x `hidden` outputs.
fn silu_problem(input_type: DataType, tokens: i64, hidden: i64) -> Result<(QuantDesc, TensorLayout, TensorLayout)> {
    let mut desc = QuantDesc::new()?;
    desc.set_activation(Activation::Silu)?.set_gate_layout(GateLayout::Split)?;
    let input = TensorLayout::new(input_type, tokens, 2 * hidden, 2 * hidden)?;
    let output = TensorLayout::new(DataType::Fp8E4m3fn, tokens, hidden, hidden)?;
    Ok((desc, input, output))
}

#[test]
fn handle_and_objects_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Handle>();
    send_sync::<QuantDesc>();
    send_sync::<TensorLayout>();
    send_sync::<GroupedGemmDesc>();
}

#[test]
fn one_handle_and_descriptor_quantize_from_several_threads_at_once() -> Result<()> {
    let (tokens, hidden) = (8, 256);
    let h = host();
    let (desc, input_layout, output_layout) = silu_problem(DataType::Bf16, tokens, hidden)?;
    let x: Vec<u16> = values((tokens * 2 * hidden) as usize, 1).into_iter().map(bits::bf16_from_f32).collect();
    let scale_len = desc.scale_buffer_size(tokens, hidden, Output::Rowwise)? / 4;
    let run = || -> Result<(Vec<u8>, Vec<f32>)> {
        let (mut y, mut s) = (vec![0u8; (tokens * hidden) as usize], vec![0f32; scale_len]);
        h.quantize(&desc, &input_layout, &x, &output_layout, &mut y, &mut s)?;
        Ok((y, s))
    };
    let expected = run()?;
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..4).map(|_| scope.spawn(run)).collect();
        for t in threads {
            assert_eq!(t.join().unwrap().unwrap(), expected);
        }
    });
    Ok(())
}

#[cfg(feature = "half")]
#[test]
fn bf16_and_f16_slices_give_the_bytes_of_u16_slices() -> Result<()> {
    use half::{bf16, f16};
    let (tokens, hidden) = (4, 256);
    let h = host();
    let v = values((tokens * 2 * hidden) as usize, 7);
    let scale_len = |d: &QuantDesc| d.scale_buffer_size(tokens, hidden, Output::Rowwise).map(|b| b / 4);
    // Each input type through half and through its u16 bits: the same output bytes and scales.
    let halves: [(DataType, Vec<u16>); 2] = [
        (DataType::Bf16, v.iter().map(|&x| bf16::from_f32(x).to_bits()).collect()),
        (DataType::Fp16, v.iter().map(|&x| f16::from_f32(x).to_bits()).collect()),
    ];
    for (dtype, bits) in halves {
        let (desc, input_layout, output_layout) = silu_problem(dtype, tokens, hidden)?;
        let n = (tokens * hidden) as usize;
        let (mut y_bits, mut s_bits) = (vec![0u8; n], vec![0f32; scale_len(&desc)?]);
        h.quantize(&desc, &input_layout, &bits, &output_layout, &mut y_bits, &mut s_bits)?;
        let (mut y_typed, mut s_typed) = (vec![Fp8E4m3fn(0); n], vec![0f32; scale_len(&desc)?]);
        if dtype == DataType::Bf16 {
            let x: Vec<bf16> = bits.iter().map(|&b| bf16::from_bits(b)).collect();
            h.quantize(&desc, &input_layout, &x, &output_layout, &mut y_typed, &mut s_typed)?;
        } else {
            let x: Vec<f16> = bits.iter().map(|&b| f16::from_bits(b)).collect();
            h.quantize(&desc, &input_layout, &x, &output_layout, &mut y_typed, &mut s_typed)?;
        }
        assert_eq!(y_typed.iter().map(|q| q.to_bits()).collect::<Vec<_>>(), y_bits, "{dtype:?}");
        assert_eq!(s_typed, s_bits, "{dtype:?}");
        assert!(y_bits.iter().any(|&b| b != 0));
    }
    Ok(())
}

#[test]
fn a_typed_slice_of_another_type_is_refused_naming_the_argument() -> Result<()> {
    let (tokens, hidden) = (2, 128);
    let h = host();
    let (desc, input_layout, output_layout) = silu_problem(DataType::Fp16, tokens, hidden)?;
    let mut s = vec![0f32; desc.scale_buffer_size(tokens, hidden, Output::Rowwise)? / 4];
    let x = vec![0u16; (tokens * 2 * hidden) as usize];
    let mut y = vec![Fp8E5m2(0); (tokens * hidden) as usize];
    let err = h.quantize(&desc, &input_layout, &x, &output_layout, &mut y, &mut s).unwrap_err();
    assert_eq!(err.status, Status::InvalidValue);
    assert_eq!(err.message, "output: slice of Fp8E5m2 elements for Fp8E4m3fn data");
    #[cfg(feature = "half")]
    {
        let x = vec![half::bf16::ZERO; (tokens * 2 * hidden) as usize];
        let mut y = vec![0u8; (tokens * hidden) as usize];
        let err = h.quantize(&desc, &input_layout, &x, &output_layout, &mut y, &mut s).unwrap_err();
        assert_eq!(
            (err.status, err.message.as_str()),
            (Status::InvalidValue, "input: slice of Bf16 elements for Fp16 data")
        );
    }
    // E8M0 bytes where the scales are NVFP4's e4m3 block scales.
    let mut nv = QuantDesc::new()?;
    nv.set_scheme(QuantScheme::Nvfp4)?
        .set_group_size(0)?
        .set_output_type(DataType::Fp4E2m1)?
        .set_scale_type(DataType::Fp8E4m3fn)?;
    let (x, fp4_layout) = (vec![0u16; 64], TensorLayout::new(DataType::Fp4E2m1, 1, 64, 64)?);
    let input = TensorLayout::new(DataType::Bf16, 1, 64, 64)?;
    let mut y = vec![Fp4E2m1x2(0); 32];
    let mut s = vec![E8m0(0); nv.scale_buffer_size(1, 64, Output::Rowwise)?];
    let err = h.quantize(&nv, &input, &x, &fp4_layout, &mut y, &mut s).unwrap_err();
    assert_eq!(err.message, "scales: slice of E8m0 elements for Fp8E4m3fn data");
    let mut s = vec![Fp8E4m3fn(0); s.len()];
    h.quantize(&nv, &input, &x, &fp4_layout, &mut y, &mut s)?;
    Ok(())
}

#[test]
fn fp8_e8m0_and_fp4_newtypes_decode_as_the_spec_says() {
    let e4m3fn = |b| Fp8E4m3fn(b).to_f32();
    assert_eq!((e4m3fn(0x7E), e4m3fn(0xFE), e4m3fn(0x38), e4m3fn(0x01)), (448.0, -448.0, 1.0, 2f32.powi(-9)));
    assert!(e4m3fn(0x7F).is_nan() && e4m3fn(0xFF).is_nan());
    let fnuz = |b| Fp8E4m3fnuz(b).to_f32();
    assert_eq!((fnuz(0x7F), fnuz(0x40), fnuz(0x00), fnuz(0x01)), (240.0, 1.0, 0.0, 2f32.powi(-10)));
    assert!(fnuz(0x80).is_nan());
    let e5m2 = |b| Fp8E5m2(b).to_f32();
    assert_eq!((e5m2(0x7B), e5m2(0x3C), e5m2(0x01)), (57344.0, 1.0, 2f32.powi(-16)));
    assert_eq!((e5m2(0x7C), e5m2(0xFC)), (f32::INFINITY, f32::NEG_INFINITY));
    assert!(e5m2(0x7F).is_nan());
    let e8m0 = |b| E8m0(b).to_f32();
    assert_eq!((e8m0(127), e8m0(0), e8m0(254), e8m0(120)), (1.0, 2f32.powi(-127), 2f32.powi(127), 1.0 / 128.0));
    assert!(e8m0(0xFF).is_nan());
    assert_eq!(Fp4E2m1x2(0x21).to_f32(), [0.5, 1.0]);
    assert_eq!(Fp4E2m1x2(0xF7).to_f32(), [6.0, -6.0]);
    assert_eq!(<[f32; 2]>::from(Fp4E2m1x2(0x9B)), [-1.5, -0.5]);
    // Every e4m3fn and e5m2 byte agrees with the crate's byte decoder, NaNs included.
    for b in 0..=255u8 {
        for (dtype, v) in
            [(DataType::Fp8E4m3fn, e4m3fn(b)), (DataType::Fp8E5m2, e5m2(b)), (DataType::Fp8E4m3fnuz, fnuz(b))]
        {
            let d = bits::decode_byte(dtype, b).unwrap();
            assert!(v == d || (v.is_nan() && d.is_nan()), "{dtype:?} {b:#04x}");
        }
        assert_eq!(f32::from(Fp8E4m3fn::from_bits(b)).to_bits(), e4m3fn(b).to_bits());
    }
}

#[test]
fn mxfp8_writes_typed_values_and_e8m0_scales_that_decode_to_the_input() -> Result<()> {
    let (rows, cols) = (4i64, 256i64);
    let h = host();
    let mut desc = QuantDesc::new()?;
    desc.set_scheme(QuantScheme::Mxfp8)?.set_group_size(0)?.set_scale_type(DataType::E8m0)?;
    let input = TensorLayout::new(DataType::Bf16, rows, cols, cols)?;
    let output = TensorLayout::new(DataType::Fp8E4m3fn, rows, cols, cols)?;
    let x: Vec<u16> = values((rows * cols) as usize, 3).into_iter().map(bits::bf16_from_f32).collect();
    let mut q = vec![Fp8E4m3fn::default(); (rows * cols) as usize];
    let mut s = vec![E8m0::default(); desc.scale_buffer_size(rows, cols, Output::Rowwise)?];
    h.quantize(&desc, &input, &x, &output, &mut q, &mut s)?;
    // ROW_MAJOR: scale (r, k) at r * cols/32 + k. e4m3fn keeps 3 mantissa bits: a relative error of at most
    // 2^-4, or half its smallest subnormal step (2^-10 of the scale) below its normal range.
    for (i, (&xi, qi)) in x.iter().zip(&q).enumerate() {
        let scale = s[i / cols as usize * (cols as usize / 32) + i % cols as usize / 32].to_f32();
        let (want, got) = (bits::bf16_to_f32(xi), qi.to_f32() * scale);
        assert!((got - want).abs() <= want.abs() / 16.0 + scale / 1024.0, "element {i}: {got} for {want}");
    }
    Ok(())
}

/// Host memory posing as a device buffer, to test the checks made before any pointer reaches the library
/// (a host handle refuses device buffers before calling it).
struct FakeDevice {
    bytes: Vec<u8>,
    stream: usize,
}

// SAFETY: never dereferenced: every call below fails its checks or is refused for the host handle first.
unsafe impl DevicePtr for FakeDevice {
    fn device_ptr(&self) -> *const c_void {
        self.bytes.as_ptr().cast()
    }
    fn byte_len(&self) -> usize {
        self.bytes.len()
    }
    fn stream(&self) -> *mut c_void {
        self.stream as *mut c_void
    }
}
// SAFETY: as above.
unsafe impl DevicePtrMut for FakeDevice {
    fn device_ptr_mut(&mut self) -> *mut c_void {
        self.bytes.as_mut_ptr().cast()
    }
}

#[test]
fn device_buffers_are_checked_for_size_and_stream_and_need_a_cuda_handle() -> Result<()> {
    let (tokens, hidden) = (2, 128);
    let h = host();
    let (desc, input_layout, output_layout) = silu_problem(DataType::Bf16, tokens, hidden)?;
    let buf = |bytes: i64, stream| FakeDevice { bytes: vec![0; bytes as usize], stream };
    let scale_bytes = desc.scale_buffer_size(tokens, hidden, Output::Rowwise)? as i64;
    let x = buf(tokens * 2 * hidden * 2, 1);
    let (mut y, mut s) = (buf(tokens * hidden - 1, 1), buf(scale_bytes, 1));
    let err = h.quantize_device(&desc, &input_layout, &x, &output_layout, &mut y, &mut s, None).unwrap_err();
    assert_eq!(err.status, Status::InsufficientBuffer);
    assert_eq!(err.message, "output: device buffer of 255 bytes is smaller than the 256 bytes needed");

    let (mut y, mut s) = (buf(tokens * hidden, 1), buf(scale_bytes, 2));
    let err = h.quantize_device(&desc, &input_layout, &x, &output_layout, &mut y, &mut s, None).unwrap_err();
    assert_eq!(err.status, Status::InvalidValue);
    assert!(err.message.starts_with("scales: ordered on stream 0x2, input on 0x1"), "{err}");

    let mut s = buf(scale_bytes, 1);
    let err = h.quantize_device(&desc, &input_layout, &x, &output_layout, &mut y, &mut s, None).unwrap_err();
    assert_eq!(err.status, Status::InvalidValue);
    assert_eq!(err.message, "handle: quantize_device takes device buffers and a Host handle; use quantize");

    let r = ScaleRepack::new(DataType::Fp32, 4, 2, ScaleLayout::RowMajor, ScaleLayout::ColMajor).with_batch(3);
    let (src, mut dst, offsets) = (buf(32, 1), buf(32, 1), buf(12, 1));
    let err = h.repack_scales_device(&r, Some(&offsets), &src, &mut dst).unwrap_err();
    assert_eq!(err.message, "row_offsets: device buffer of 12 bytes is smaller than the 16 bytes needed");
    let err = h.repack_scales_device(&r, None, &src, &mut dst).unwrap_err();
    assert_eq!(err.message, "handle: repack_scales_device takes device buffers and a Host handle; use repack_scales");
    Ok(())
}
