//! The safe API against the real library, on the host backend (no GPU needed).
use fusedquant::*;
use std::collections::BTreeMap;
use std::ffi::c_void;

fn host() -> Handle {
    Handle::new(Backend::Host, 0).expect("host handle")
}

#[test]
fn descriptor_layout_and_handle_attributes_round_trip() -> Result<()> {
    let mut d = QuantDesc::new()?;
    // The documented defaults.
    assert_eq!(d.activation()?, Activation::Identity);
    assert_eq!(d.gate_layout()?, GateLayout::None);
    assert_eq!(d.scheme()?, QuantScheme::PerGroup);
    assert_eq!(d.group_size()?, 128);
    assert_eq!(d.output_type()?, DataType::Fp8E4m3fn);
    assert_eq!(d.scale_type()?, DataType::Fp32);
    assert_eq!(d.scale_layout()?, ScaleLayout::RowMajor);
    assert_eq!(d.outputs()?, vec![Output::Rowwise]);
    assert!(d.static_scale_pointer()?.is_null());

    d.set_activation(Activation::SwigluOai)?
        .set_gate_layout(GateLayout::BlockInterleaved)?
        .set_gate_order(GateOrder::UpFirst)?
        .set_gate_block_width(64)?
        .set_intermediate_rounding(IntermediateRounding::RoundBoth)?
        .set_scheme(QuantScheme::PerToken)?
        .set_group_size(64)?
        .set_output_type(DataType::Int8)?
        .set_scale_type(DataType::E8m0)?
        .set_scale_layout(ScaleLayout::ColMajorTma)?
        .set_scale_rounding(ScaleRounding::Pow2Ceil)?
        .set_mx_scale_rule(MxScaleRule::Floor)?
        .set_scale_apply(ScaleApply::MultiplyReciprocal)?
        .set_qmax(224.0)?
        .set_min_scale(1e-6)?
        .set_swiglu_alpha(1.5)?
        .set_swiglu_beta(0.5)?
        .set_swiglu_limit(f32::INFINITY)?
        .set_moe_layout(MoeLayout::Masked)?
        .set_moe_num_experts(8)?
        .set_outputs(&[Output::Rowwise, Output::Columnwise])?
        .set_columnwise_block(128)?
        .set_columnwise_transpose(true)?;
    assert_eq!(d.activation()?, Activation::SwigluOai);
    assert_eq!(d.gate_layout()?, GateLayout::BlockInterleaved);
    assert_eq!(d.gate_order()?, GateOrder::UpFirst);
    assert_eq!(d.gate_block_width()?, 64);
    assert_eq!(d.intermediate_rounding()?, IntermediateRounding::RoundBoth);
    assert_eq!(d.scheme()?, QuantScheme::PerToken);
    assert_eq!(d.group_size()?, 64);
    assert_eq!(d.output_type()?, DataType::Int8);
    assert_eq!(d.scale_type()?, DataType::E8m0);
    assert_eq!(d.scale_layout()?, ScaleLayout::ColMajorTma);
    assert_eq!(d.scale_rounding()?, ScaleRounding::Pow2Ceil);
    assert_eq!(d.mx_scale_rule()?, MxScaleRule::Floor);
    assert_eq!(d.scale_apply()?, ScaleApply::MultiplyReciprocal);
    assert_eq!((d.qmax()?, d.min_scale()?), (224.0, 1e-6));
    assert_eq!((d.swiglu_alpha()?, d.swiglu_beta()?, d.swiglu_limit()?), (1.5, 0.5, f32::INFINITY));
    assert_eq!((d.moe_layout()?, d.moe_num_experts()?), (MoeLayout::Masked, 8));
    assert_eq!(d.outputs()?, vec![Output::Rowwise, Output::Columnwise]);
    assert_eq!((d.columnwise_block()?, d.columnwise_transpose()?), (128, true));

    // Pointers are only stored here (nothing runs with this descriptor).
    let (scale, offsets, mut out) = (1.0f32, [0i32; 9], [0u8; 4]);
    let out_ptr = out.as_mut_ptr() as *mut c_void;
    unsafe {
        d.set_static_scale_pointer(&scale)?
            .set_scale_ub_pointer(&scale)?
            .set_row_prob_pointer(&scale)?
            .set_global_amax_pointer(&scale)?
            .set_moe_offsets_pointer(offsets.as_ptr())?
            .set_moe_counts_pointer(offsets.as_ptr())?
            .set_columnwise_output_pointer(out_ptr)?
            .set_columnwise_scale_pointer(out_ptr)?;
    }
    for p in [d.static_scale_pointer()?, d.scale_ub_pointer()?, d.row_prob_pointer()?, d.global_amax_pointer()?] {
        assert_eq!(p, &scale as *const f32);
    }
    assert_eq!((d.moe_offsets_pointer()?, d.moe_counts_pointer()?), (offsets.as_ptr(), offsets.as_ptr()));
    assert_eq!((d.columnwise_output_pointer()?, d.columnwise_scale_pointer()?), (out_ptr, out_ptr));

    let mut l = TensorLayout::new(DataType::Bf16, 3, 64, 80)?;
    assert_eq!((l.dtype()?, l.rows()?, l.cols()?, l.ld()?), (DataType::Bf16, 3, 64, 80));
    l.set_dtype(DataType::Fp16)?.set_rows(5)?.set_cols(32)?.set_ld(48)?;
    assert_eq!((l.dtype()?, l.rows()?, l.cols()?, l.ld()?), (DataType::Fp16, 5, 32, 48));
    assert_eq!(l.span_bytes()?, (4 * 48 + 32) * 2);

    let mut h = host();
    assert_eq!((h.backend()?, h.device()?, h.arch()?), (Backend::Host, -1, 0));
    assert!(h.sm_count()? >= 1);
    assert!(h.allow_pdl()?); // on by default (sm_90+ launches; the host backend ignores it)
    h.set_allow_pdl(false)?;
    assert!(!h.allow_pdl()?);
    Ok(())
}

#[test]
fn unknown_enum_values_cross_as_unknown_and_are_refused_by_the_library() -> Result<()> {
    assert_eq!(Activation::from(1234), Activation::Unknown(1234));
    assert_eq!(i32::from(Activation::Unknown(1234)), 1234);
    let mut d = QuantDesc::new()?;
    let input = TensorLayout::new(DataType::Bf16, 4, 256, 256)?;
    let output = TensorLayout::new(DataType::Fp8E4m3fn, 4, 256, 256)?;
    // Refused when set or, as values are checked against each other, when used: never undefined behaviour.
    let err = match d.set_activation(Activation::Unknown(1234)) {
        Err(e) => e,
        Ok(d) => host().query_support(d, &input, &output).unwrap_err(),
    };
    assert_eq!(err.status, Status::InvalidValue, "{err}");
    Ok(())
}

#[test]
fn bad_group_size_is_invalid_value_naming_the_argument() {
    let mut d = QuantDesc::new().unwrap();
    // The library may refuse 48 when it is set, or (values are checked against each other) when used.
    let err = match d.set_group_size(48) {
        Err(e) => e,
        Ok(d) => d.scale_buffer_size(4, 256, Output::Rowwise).unwrap_err(),
    };
    assert_eq!(err.status, Status::InvalidValue);
    assert!(err.message.to_lowercase().contains("group"), "message names the argument: {err}");
    assert!(err.to_string().starts_with("FQ_STATUS_INVALID_VALUE"), "{err}");
}

#[test]
fn block_2d_on_the_host_backend_writes_one_scale_per_128x128_tile() -> Result<()> {
    let h = host();
    let mut d = QuantDesc::new()?;
    d.set_scheme(QuantScheme::Block2d)?;
    let input = TensorLayout::new(DataType::Bf16, 130, 256, 256)?;
    let output = TensorLayout::new(DataType::Fp8E4m3fn, 130, 256, 256)?;
    assert_eq!(h.query_support(&d, &input, &output)?, "host.reference");
    let scales = d.scale_buffer_size(130, 256, Output::Rowwise)?;
    assert_eq!(scales, 2 * 2 * 4, "a 2 x 2 grid of fp32 scales");
    let one = 0x3F80u16; // bf16 1.0
    let (x, mut y, mut s) = (vec![one; 130 * 256], vec![0u8; 130 * 256], vec![0f32; 4]);
    h.quantize(&d, &input, &x, &output, &mut y, &mut s)?;
    assert!(s.iter().all(|&v| v == 1.0 / 448.0), "{s:?}");
    assert!(y.iter().all(|&b| b == 0x7E));
    Ok(())
}

#[test]
fn variants_are_listed_and_the_supported_one_is_among_them() -> Result<()> {
    let h = host();
    let variants = h.variants()?;
    assert_eq!(variants.len(), h.variant_count()?);
    assert!(!variants.is_empty());
    let mut d = QuantDesc::new()?;
    d.set_activation(Activation::Silu)?.set_gate_layout(GateLayout::Split)?;
    let input = TensorLayout::new(DataType::Bf16, 4, 512, 512)?;
    let output = TensorLayout::new(DataType::Fp8E4m3fn, 4, 256, 256)?;
    let name = h.query_support(&d, &input, &output)?;
    assert!(!name.is_empty());
    assert!(variants.iter().any(|v| v.starts_with(&name)), "{name} not in {variants:?}");
    assert_eq!(h.workspace_size(&d, &input, &output)?, 0);

    // Pinning a variant: the support query answers with that one.
    let mut h = h;
    assert_eq!(h.variant()?, None);
    let index = variants.iter().position(|v| v.starts_with(&name)).unwrap();
    h.set_variant(Some(index))?;
    assert_eq!(h.variant()?, Some(index));
    assert_eq!(h.query_support(&d, &input, &output)?, name);
    assert_eq!(h.set_variant(Some(1 << 30)).unwrap_err().status, Status::InvalidValue);
    h.set_variant(None)?;
    assert_eq!(h.variant()?, None);
    Ok(())
}

#[test]
fn scale_buffer_query_reports_tma_padding_and_partial_groups() -> Result<()> {
    let mut d = QuantDesc::new()?;
    d.set_scale_layout(ScaleLayout::ColMajorTma)?;
    // 5 rows x 192 columns, groups of 128: 2 scale columns (the last partial), rows padded to 4 floats.
    let s = d.scale_buffer(5, 192, Output::Rowwise)?;
    assert_eq!((s.rows, s.cols, s.padded_rows, s.padded_cols), (5, 2, 8, 2));
    assert_eq!((s.element_bytes, s.dtype, s.row_stride, s.col_stride), (4, DataType::Fp32, 4, 32));
    assert_eq!((s.bytes, s.batch), (64, 1));
    assert_eq!(d.scale_buffer_size(5, 192, Output::Rowwise)?, 64);
    Ok(())
}

#[test]
fn short_slices_are_refused_before_the_call() -> Result<()> {
    let h = host();
    let d = QuantDesc::new()?;
    let input = TensorLayout::new(DataType::Bf16, 2, 128, 128)?;
    let output = TensorLayout::new(DataType::Fp8E4m3fn, 2, 128, 128)?;
    let (x, mut y, mut s) = (vec![0u16; 256], vec![0u8; 256], vec![0f32; 2]);
    h.quantize(&d, &input, &x, &output, &mut y, &mut s)?;
    let err = h.quantize(&d, &input, &x[..255], &output, &mut y, &mut s).unwrap_err();
    assert_eq!(err.status, Status::InsufficientBuffer, "{err}");
    assert!(err.message.starts_with("input"), "{err}");
    let err = h.quantize(&d, &input, &x, &output, &mut y[..255], &mut s).unwrap_err();
    assert!(err.status == Status::InsufficientBuffer && err.message.starts_with("output"), "{err}");
    let err = h.quantize(&d, &input, &x, &output, &mut y, &mut s[..1]).unwrap_err();
    assert!(err.status == Status::InsufficientBuffer && err.message.starts_with("scales"), "{err}");
    let err = h.quantize(&d, &input, &x, &output, &mut y, &mut [0u8; 8]).unwrap_err();
    assert!(err.status == Status::InvalidValue && err.message.starts_with("scales"), "{err}");
    let err = h.quantize(&d, &input, &vec![0f32; 256], &output, &mut y, &mut s).unwrap_err();
    assert!(err.status == Status::InvalidValue && err.message.starts_with("input"), "{err}");
    Ok(())
}

/// OCP fp8 e4m3fn (no Inf; 0x7F/0xFF are NaN), written independently of the crate's decoder.
fn e4m3fn(b: u8) -> f64 {
    assert_ne!(b & 0x7F, 0x7F, "NaN");
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let (e, m) = (((b >> 3) & 0xF) as i32, (b & 7) as f64);
    sign * if e == 0 { m / 8.0 * 2f64.powi(-6) } else { (1.0 + m / 8.0) * 2f64.powi(e - 7) }
}

#[test]
fn crate_fp8_decoder_agrees_with_the_test_decoder() {
    for b in (0..=255u8).filter(|b| b & 0x7F != 0x7F) {
        assert_eq!(bits::decode_byte(DataType::Fp8E4m3fn, b).unwrap() as f64, e4m3fn(b), "byte {b:#04x}");
    }
    assert!(bits::decode_byte(DataType::Fp8E4m3fn, 0x7F).unwrap().is_nan());
    assert_eq!(bits::decode_byte(DataType::Fp8E5m2, 0x7B), Some(57344.0));
    assert_eq!(bits::decode_byte(DataType::Fp8E4m3fnuz, 0x7F), Some(240.0));
    assert_eq!(bits::bf16_to_f32(bits::bf16_from_f32(1.0 + 1.0 / 256.0)), 1.0); // a tie goes to even
}

#[test]
fn silu_gated_per_token_e4m3fn_matches_f64_math() -> Result<()> {
    let (m, h) = (4usize, 200usize);
    // bf16 inputs [m, 2h] = [gate | up]; row 2 is all zeros (its scale is the minimum scale).
    let mut seed = 0x2545F4914F6CDD1Du64;
    let x: Vec<u16> = (0..m * 2 * h)
        .map(|i| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let v = ((seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 8.0 * (1 + i / (2 * h)) as f64;
            if i / (2 * h) == 2 {
                0
            } else {
                ((v as f32).to_bits() >> 16) as u16
            }
        })
        .collect();
    let hnd = host();
    let mut d = QuantDesc::new()?;
    d.set_activation(Activation::Silu)?.set_gate_layout(GateLayout::Split)?.set_scheme(QuantScheme::PerToken)?;
    let input = TensorLayout::new(DataType::Bf16, m as i64, 2 * h as i64, 2 * h as i64)?;
    let output = TensorLayout::new(DataType::Fp8E4m3fn, m as i64, h as i64, h as i64)?;
    assert_eq!(d.scale_buffer_size(m as i64, h as i64, Output::Rowwise)?, m * 4);
    let (mut q, mut scales) = (vec![0xAAu8; m * h], vec![f32::NAN; m]);
    hnd.quantize(&d, &input, &x, &output, &mut q, &mut scales)?;

    let bf16 = |b: u16| f32::from_bits((b as u32) << 16) as f64;
    for r in 0..m {
        let row = &x[r * 2 * h..(r + 1) * 2 * h];
        let y: Vec<f64> = (0..h)
            .map(|j| {
                let g = bf16(row[j]);
                g / (1.0 + (-g).exp()) * bf16(row[h + j])
            })
            .collect();
        let amax = y.iter().fold(0f64, |a, v| a.max(v.abs()));
        let expected_scale = (amax / 448.0).max(1.0 / (448.0 * 512.0));
        let s = scales[r] as f64;
        assert!((s - expected_scale).abs() <= 1e-6 * expected_scale, "row {r}: scale {s} vs {expected_scale}");
        for (j, &want) in y.iter().enumerate() {
            let got = e4m3fn(q[r * h + j]);
            // Half a unit in the last place of e4m3 at |y / s| (subnormal spacing 2^-9), plus fp32 slack.
            let t = want.abs() / s;
            let half_ulp = if t < 2f64.powi(-6) { 2f64.powi(-10) } else { 2f64.powi(t.log2().floor() as i32 - 4) };
            assert!((got - want / s).abs() <= half_ulp + 1e-5 * t, "row {r} col {j}: {got} vs {}", want / s);
        }
        if amax > 0.0 {
            assert_eq!(q[r * h..(r + 1) * h].iter().map(|&b| e4m3fn(b).abs()).fold(0.0, f64::max), 448.0);
        }
    }
    Ok(())
}

/// The values a Rust enum knows, and whether its `from` maps a value to a known variant and back.
type Mapping = (Vec<i32>, fn(i32) -> bool);

/// Every Rust enum, by the name of its C enum.
fn rust_enums() -> BTreeMap<&'static str, Mapping> {
    fn entry<E: CEnum>() -> (&'static str, Mapping) {
        let known = E::KNOWN.iter().map(|&e| e.into()).collect();
        (E::C_NAME, (known, |v| E::KNOWN.contains(&E::from(v)) && Into::<i32>::into(E::from(v)) == v))
    }
    BTreeMap::from([
        entry::<Status>(),
        entry::<DataType>(),
        entry::<Backend>(),
        entry::<Activation>(),
        entry::<GateLayout>(),
        entry::<GateOrder>(),
        entry::<IntermediateRounding>(),
        entry::<QuantScheme>(),
        entry::<ScaleLayout>(),
        entry::<ScaleRounding>(),
        entry::<MxScaleRule>(),
        entry::<ScaleApply>(),
        entry::<MoeLayout>(),
        entry::<Output>(),
        entry::<HandleAttr>(),
        entry::<TensorLayoutAttr>(),
        entry::<QuantDescAttr>(),
        entry::<ScaleInfo>(),
        entry::<ScaleRepackBatching>(),
        entry::<GemmDescAttr>(),
        entry::<PlanAttr>(),
    ])
}

#[test]
fn every_header_enum_constant_is_mapped() {
    // What bindgen parsed from fusedquant.h at build time: (C enum, constant, value).
    let mut header: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for &(e, _, v) in ffi::HEADER_ENUM_CONSTANTS {
        header.entry(e).or_default().push(v as i32);
    }
    let rust = rust_enums();
    assert_eq!(header.keys().collect::<Vec<_>>(), rust.keys().collect::<Vec<_>>(), "C enums vs Rust enums");
    for &(e, name, v) in ffi::HEADER_ENUM_CONSTANTS {
        assert!((rust[e].1)(v as i32), "{name} = {v} of {e} has no Rust variant");
    }
    for (e, values) in header.iter_mut() {
        values.sort();
        let mut known = rust[e].0.clone();
        known.sort();
        assert_eq!(*values, known, "values of {e}: header vs Rust");
    }
}

#[test]
fn loaded_library_matches_the_header_version() {
    assert_eq!(version(), HEADER_VERSION);
}

/// S[m, k] of a SWIZZLED_128X4 block of `groups` groups (docs/spec.md §4's formula), for the repack tests.
fn swizzled_offset(groups: i64, m: i64, k: i64) -> usize {
    ((m / 128) * ((groups + 3) / 4) * 512 + (k / 4) * 512 + (m % 32) * 16 + ((m % 128) / 32) * 4 + k % 4) as usize
}

#[test]
fn repack_row_major_to_swizzled_and_back() -> Result<()> {
    let h = host();
    let (rows, groups) = (130i64, 7i64);
    let src: Vec<u8> = (0..rows * groups).map(|i| (i * 37 % 251) as u8).collect();
    let r = ScaleRepack::new(DataType::E8m0, rows, groups, ScaleLayout::RowMajor, ScaleLayout::Swizzled128x4);
    assert_eq!(r.dst_bytes()?, 256 * 8);
    let mut sw = vec![0xABu8; r.dst_bytes()?];
    h.repack_scales(&r, None, &src, &mut sw)?;
    let mut logical = vec![false; sw.len()];
    for m in 0..rows {
        for k in 0..groups {
            let o = swizzled_offset(groups, m, k);
            assert_eq!(sw[o], src[(m * groups + k) as usize], "S[{m}, {k}]");
            logical[o] = true;
        }
    }
    assert!(sw.iter().zip(&logical).all(|(&b, &l)| l || b == 0), "padding is 0");
    let back_r = ScaleRepack::new(DataType::E8m0, rows, groups, ScaleLayout::Swizzled128x4, ScaleLayout::RowMajor);
    let mut back = vec![0u8; src.len()];
    h.repack_scales(&back_r, None, &sw, &mut back)?;
    assert_eq!(back, src);
    Ok(())
}

#[test]
fn repack_stacked_experts_to_padded_blocks_with_an_empty_expert() -> Result<()> {
    let h = host();
    let offsets = [0i32, 3, 3, 8]; // expert 1 is empty
    let (capacity, groups) = (4i64, 2i64); // expert 2 has 5 rows: its fifth is not copied
    let src: Vec<f32> = (0..8 * groups).map(|i| i as f32 + 0.5).collect();
    let r = ScaleRepack::new(DataType::Fp32, capacity, groups, ScaleLayout::RowMajor, ScaleLayout::ColMajor)
        .with_batch(3)
        .with_stacked(ScaleRepackBatching::StackedToBlocks, 8);
    assert_eq!((r.src_bytes()?, r.dst_bytes()?), (64, 96));
    let mut dst = vec![-1f32; 24];
    h.repack_scales(&r, Some(&offsets), &src, &mut dst)?;
    for b in 0..3usize {
        let count = (offsets[b + 1] - offsets[b]).min(capacity as i32) as usize;
        for row in 0..capacity as usize {
            for k in 0..groups as usize {
                let got = dst[b * 8 + k * capacity as usize + row]; // COL_MAJOR, ld = 4
                let want = if row < count { src[(offsets[b] as usize + row) * groups as usize + k] } else { 0.0 };
                assert_eq!(got, want, "expert {b} row {row} group {k}");
            }
        }
    }
    Ok(())
}

#[test]
fn repack_errors_name_the_argument() {
    let h = host();
    let r = ScaleRepack::new(DataType::Fp32, 4, 2, ScaleLayout::RowMajor, ScaleLayout::PackedUe8m0);
    let e = h.repack_scales(&r, None, &[0f32; 8], &mut [0f32; 8]).unwrap_err();
    assert_eq!(e.status, Status::InvalidValue);
    assert!(e.message.starts_with("dstLayout"), "{}", e.message);
    let r = ScaleRepack::new(DataType::E8m0, 4, 2, ScaleLayout::RowMajor, ScaleLayout::ColMajor);
    let e = h.repack_scales(&r, None, &[0u8; 8], &mut [0u8; 7]).unwrap_err();
    assert_eq!(e.status, Status::InsufficientBuffer);
    assert!(e.message.starts_with("dstSizeInBytes"), "{}", e.message);
    let r = r.with_batch(2).with_stacked(ScaleRepackBatching::StackedToBlocks, 4);
    let e = h.repack_scales(&r, Some(&[0, 2]), &[0u8; 8], &mut [0u8; 16]).unwrap_err();
    assert_eq!(e.status, Status::InvalidValue);
    assert!(e.message.starts_with("row_offsets"), "{}", e.message);
    let e = h.repack_scales(&r, None, &[0u8; 8], &mut [0u8; 16]).unwrap_err();
    assert_eq!(e.status, Status::NullPointer);
    assert!(e.message.starts_with("rowOffsets"), "{}", e.message);
    assert_eq!(
        scale_repack_size(DataType::Bf16, 1, 1, 1, ScaleLayout::RowMajor).unwrap_err().status,
        Status::InvalidValue
    );
}
#[test]
fn masked_moe_with_both_outputs_through_the_safe_crate() -> Result<()> {
    let h = host();
    let mut d = QuantDesc::new()?;
    let counts = [3i32, 1];
    d.set_group_size(32)?.set_moe_layout(MoeLayout::Masked)?.set_moe_num_experts(2)?;
    // SAFETY: `counts` outlives every quantize call below.
    unsafe { d.set_moe_counts_pointer(counts.as_ptr())? };
    d.set_outputs(&[Output::Rowwise, Output::Columnwise])?.set_columnwise_transpose(true)?;
    assert_eq!((d.moe_layout()?, d.moe_num_experts()?, d.columnwise_transpose()?), (MoeLayout::Masked, 2, true));
    // [E = 2, max_m = 4, 32] of 1.0: every valid group has amax 1 (scale 1/448, code 0x7E).
    let input = TensorLayout::new(DataType::Bf16, 8, 32, 32)?;
    let output = TensorLayout::new(DataType::Fp8E4m3fn, 8, 32, 32)?;
    let x = vec![0x3F80u16; 8 * 32];
    let row_scales = d.scale_buffer(8, 32, Output::Rowwise)?;
    let col_scales = d.scale_buffer(8, 32, Output::Columnwise)?;
    assert_eq!((row_scales.batch, row_scales.rows, row_scales.batch_stride), (2, 4, 16));
    assert_eq!((col_scales.batch, col_scales.rows, col_scales.cols), (2, 32, 1));
    let (mut y, mut s) = (vec![0xABu8; 8 * 32], vec![0f32; row_scales.bytes as usize / 4]);
    let (mut cy, mut cs) = (vec![0xABu8; 8 * 32], vec![0f32; col_scales.bytes as usize / 4]);
    h.quantize_with_columnwise(&mut d, &input, &x, &output, &mut y, &mut s, &mut cy, &mut cs)?;
    for r in 0..8 {
        let want = if r < 3 || r == 4 { 0x7E } else { 0xAB }; // rows past each expert's count keep their bytes
        assert!(y[r * 32..(r + 1) * 32].iter().all(|&b| b == want), "row {r}");
    }
    assert!(cs.iter().all(|&v| v == 1.0 / 448.0));
    for e in 0..2 {
        for col in 0..32 {
            for i in 0..4 {
                let want = if (i as i32) < counts[e] { 0x7E } else { 0xAB };
                assert_eq!(cy[e * 128 + col * 4 + i], want, "transposed [E, H, max_m] at {e}, {col}, {i}");
            }
        }
    }
    assert!(d.columnwise_output_pointer()?.is_null(), "the borrowed buffers are not left in the descriptor");
    Ok(())
}

/// A deterministic stream of fp8 e4m3fn bytes without the NaN codes.
fn fp8_bytes(n: usize, mut seed: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let b = (seed >> 56) as u8;
            if b & 0x7F == 0x7F {
                0x38
            } else {
                b
            }
        })
        .collect()
}

fn bf16_f64(bits: u16) -> f64 {
    f32::from_bits(u32::from(bits) << 16) as f64
}

#[test]
fn grouped_gemm_c_matches_f64_math_and_its_quantized_output_equals_quantize_of_c() -> Result<()> {
    let (m, k, n, e) = (40i64, 256i64, 128i64, 3i32);
    let h = n / 2;
    let a = fp8_bytes((m * k) as usize, 1);
    let b = fp8_bytes((i64::from(e) * n * k) as usize, 2);
    let a_scales: Vec<f32> = (0..2 * m).map(|i| 0.01 + (i % 7) as f32 * 0.002).collect(); // COL_MAJOR_TMA, ld 40
    let b_scales: Vec<f32> = (0..e * 2).map(|i| 0.005 + i as f32 * 0.001).collect();
    let offsets = [2, 10, 10, 33]; // group 1 empty; rows 0-1 and 33-39 no group's
    let alpha = [1.0f32, 2.0, -0.5];
    let handle = host();
    let mut gemm = GroupedGemmDesc::new()?;
    gemm.set_num_groups(e)?;
    let mut epi = QuantDesc::new()?;
    epi.set_activation(Activation::Silu)?.set_gate_layout(GateLayout::Split)?.set_group_size(64)?;
    let la = TensorLayout::new(DataType::Fp8E4m3fn, m, k, k)?;
    let lb = TensorLayout::new(DataType::Fp8E4m3fn, i64::from(e) * n, k, k)?;
    let lo = TensorLayout::new(DataType::Fp8E4m3fn, m, h, h)?;
    let mut c = vec![0xABABu16; (m * n) as usize];
    let mut values = vec![0xABu8; (m * h) as usize];
    let mut scales = vec![-1.0f32; m as usize]; // one group of 64 per row
    let groups = GemmGroups { offsets: Some(&offsets), counts: None, alpha: Some(&alpha) };
    let out = GemmBuffers { c: Some(&mut c), d: None, output: Some((&lo, &mut values, &mut scales)) };
    handle.grouped_gemm(&mut gemm, &epi, groups, &la, &a, &a_scales, &lb, &b, &b_scales, out)?;
    assert!(gemm.c_output_pointer()?.is_null() && gemm.group_offsets_pointer()?.is_null(), "pointers cleared");

    let owner = |r: i64| (0..3).find(|&g| r >= i64::from(offsets[g]) && r < i64::from(offsets[g + 1]));
    for r in 0..m {
        for col in 0..n {
            let got = c[(r * n + col) as usize];
            let Some(g) = owner(r) else {
                assert_eq!(got, 0xABAB, "row {r} belongs to no group");
                continue;
            };
            let mut want = 0.0f64;
            for kk in 0..k {
                let sa = a_scales[((kk / 128) * m + r) as usize] as f64;
                let sb = b_scales[(g as i64 * 2 + kk / 128) as usize] as f64;
                let bv = b[((g as i64 * n + col) * k + kk) as usize];
                want += e4m3fn(a[(r * k + kk) as usize]) * sa * e4m3fn(bv) * sb;
            }
            want *= alpha[g] as f64;
            assert!(
                (bf16_f64(got) - want).abs() <= want.abs() / 256.0 + 1e-30,
                "C[{r}, {col}] {} vs {want}",
                bf16_f64(got)
            );
        }
    }

    // The epilogue is fqQuantize of C with the groups as MoE CONTIGUOUS experts.
    let mut q = QuantDesc::new()?;
    q.set_activation(Activation::Silu)?.set_gate_layout(GateLayout::Split)?.set_group_size(64)?;
    q.set_moe_layout(MoeLayout::Contiguous)?.set_moe_num_experts(e)?;
    unsafe { q.set_moe_offsets_pointer(offsets.as_ptr())? };
    let li = TensorLayout::new(DataType::Bf16, m, n, n)?;
    let mut want_values = vec![0xABu8; (m * h) as usize];
    let mut want_scales = vec![-1.0f32; m as usize];
    handle.quantize(&q, &li, &c, &lo, &mut want_values, &mut want_scales)?;
    assert_eq!(values, want_values);
    assert_eq!(
        scales.iter().map(|s| s.to_bits()).collect::<Vec<_>>(),
        want_scales.iter().map(|s| s.to_bits()).collect::<Vec<_>>()
    );
    Ok(())
}

#[test]
fn grouped_gemm_errors_name_the_argument() -> Result<()> {
    let handle = host();
    let mut gemm = GroupedGemmDesc::new()?;
    gemm.set_num_groups(2)?;
    let epi = QuantDesc::new()?;
    let la = TensorLayout::new(DataType::Fp8E4m3fn, 4, 128, 128)?;
    let lb = TensorLayout::new(DataType::Fp8E4m3fn, 256, 128, 128)?;
    let (a, b) = (vec![0x38u8; 4 * 128], vec![0x38u8; 256 * 128]);
    let (sa, sb) = (vec![1.0f32; 4], vec![1.0f32; 2]);
    let mut c = vec![0u16; 4 * 128];
    let none: Option<(&TensorLayout, &mut [u8], &mut [f32])> = None;
    // Two groups need offsets: the library's NULL_POINTER, naming the attribute.
    let out = GemmBuffers { c: Some(&mut c), d: None, output: none };
    let err = handle.grouped_gemm(&mut gemm, &epi, GemmGroups::default(), &la, &a, &sa, &lb, &b, &sb, out).unwrap_err();
    assert_eq!(err.status, Status::NullPointer);
    assert!(err.message.contains("FQ_GEMM_DESC_GROUP_OFFSETS_POINTER"), "{err}");
    // Offsets shorter than E + 1: refused before the call.
    let groups = GemmGroups { offsets: Some(&[0, 4]), ..Default::default() };
    let none: Option<(&TensorLayout, &mut [u8], &mut [f32])> = None;
    let out = GemmBuffers { c: Some(&mut c), d: None, output: none };
    let err = handle.grouped_gemm(&mut gemm, &epi, groups, &la, &a, &sa, &lb, &b, &sb, out).unwrap_err();
    assert_eq!(err.status, Status::InsufficientBuffer);
    assert!(err.message.contains("groups.offsets"), "{err}");
    // Per-tensor scales: one per group, columnwise too.
    let mut per_tensor = QuantDesc::new()?;
    per_tensor.set_scheme(QuantScheme::PerTensorDynamic)?;
    assert_eq!(gemm.scale_buffer_size(&per_tensor, 4, 64, Output::Rowwise)?, 2 * 4);
    assert_eq!(gemm.scale_buffer_size(&per_tensor, 4, 64, Output::Columnwise)?, 2 * 4);
    // An out-of-range attribute value.
    let err = gemm.set_a_scale_layout(ScaleLayout::RowMajor).unwrap_err();
    assert!(err.message.contains("FQ_GEMM_DESC_A_SCALE_LAYOUT"), "{err}");
    assert_eq!(gemm.num_groups()?, 2);
    assert!(!gemm.quantize()?, "QUANTIZE follows the last call's output (none)");
    Ok(())
}

fn silu_problem(rows: i64, cols: i64) -> Result<(QuantDesc, TensorLayout, TensorLayout)> {
    let mut desc = QuantDesc::new()?;
    desc.set_activation(Activation::Silu)?.set_gate_layout(GateLayout::Split)?.set_group_size(64)?;
    Ok((
        desc,
        TensorLayout::new(DataType::Bf16, rows, 2 * cols, 2 * cols)?,
        TensorLayout::new(DataType::Fp8E4m3fn, rows, cols, cols)?,
    ))
}

#[test]
fn a_plan_writes_the_bytes_of_quantize_and_outlives_its_objects() -> Result<()> {
    let h = host();
    let (rows, cols) = (3, 256);
    let x: Vec<u16> = (0..rows * 2 * cols).map(|i| 0x3F80 + (i % 97) as u16).collect();
    let (mut y, mut s) = (vec![0u8; (rows * cols) as usize], vec![0f32; (rows * cols / 64) as usize]);
    let plan = {
        let (mut desc, lin, lout) = silu_problem(rows, cols)?;
        h.quantize(&desc, &lin, &x, &lout, &mut y, &mut s)?;
        let plan = Plan::new(&h, &desc, &lin, &lout)?;
        assert_eq!(plan.scale_buffer_size(), s.len() * 4);
        assert_eq!(plan.variant_name()?, h.query_support(&desc, &lin, &lout)?);
        desc.set_activation(Activation::Relu)?; // later changes do not reach the plan
        plan
    };
    let (mut y2, mut s2) = (vec![0u8; y.len()], vec![0f32; s.len()]);
    plan.quantize(&x, &mut y2, &mut s2)?;
    assert_eq!((y2, s2), (y, s.clone()));
    let err = plan.quantize(&x, &mut [0u8; 4], &mut s.clone()).unwrap_err();
    assert_eq!(err.status, Status::InsufficientBuffer);
    assert!(err.message.starts_with("output:"), "{}", err.message);
    Ok(())
}

#[test]
fn a_descriptor_with_a_pointer_needs_the_unsafe_constructor() -> Result<()> {
    let h = host();
    let (mut desc, lin, lout) = silu_problem(2, 64)?;
    let prob = [1.0f32, 0.5];
    unsafe { desc.set_row_prob_pointer(prob.as_ptr())? };
    let err = Plan::new(&h, &desc, &lin, &lout).unwrap_err();
    assert_eq!(err.status, Status::InvalidValue);
    assert!(err.message.contains("Plan::with_pointers"), "{}", err.message);
    assert!(PlanCache::new(4).plan(&h, &desc, &lin, &lout).is_err());
    Ok(())
}

#[test]
fn the_plan_cache_hits_on_the_same_problem_and_misses_on_a_changed_shape() -> Result<()> {
    let h = host();
    let cache = PlanCache::new(2);
    let (desc, lin, lout) = silu_problem(3, 256)?;
    let first = cache.plan(&h, &desc, &lin, &lout)?;
    let (desc2, lin2, lout2) = silu_problem(3, 256)?; // other objects, the same problem
    assert!(std::sync::Arc::ptr_eq(&first, &cache.plan(&h, &desc2, &lin2, &lout2)?));
    assert_eq!(cache.len(), 1);
    let (_, lin4, lout4) = silu_problem(4, 256)?; // another shape
    let other = cache.plan(&h, &desc, &lin4, &lout4)?;
    assert!(!std::sync::Arc::ptr_eq(&first, &other));
    let (desc3, lin3, lout3) = silu_problem(3, 128)?;
    cache.plan(&h, &desc3, &lin3, &lout3)?; // a third problem: the least recently used goes
    assert_eq!(cache.len(), 2);
    assert!(!std::sync::Arc::ptr_eq(&first, &cache.plan(&h, &desc, &lin, &lout)?));
    // The same bytes through the cached plan as through Handle::quantize.
    let x: Vec<u16> = (0..3 * 512).map(|i| 0x3F00 + (i % 251) as u16).collect();
    let (mut y, mut s) = (vec![0u8; 768], vec![0f32; 12]);
    let (mut y2, mut s2) = (y.clone(), s.clone());
    h.quantize(&desc, &lin, &x, &lout, &mut y, &mut s)?;
    cache.plan(&h, &desc, &lin, &lout)?.quantize(&x, &mut y2, &mut s2)?;
    assert_eq!((y, s), (y2, s2));
    Ok(())
}
