//! Quantizes a small bf16 matrix [gate | up] with SiLU gating and per-group-128 fp8 e4m3fn scales on the
//! host backend, and prints the scales and the first values of each row next to the unquantized result.
//!
//!     cargo run --example quantize
use fusedquant::half::bf16;
use fusedquant::*;

fn main() -> Result<()> {
    let (tokens, hidden) = (4usize, 256usize);
    let (m, h) = (tokens as i64, hidden as i64);
    // Row r: gate in [-4, 4), up a gentle wave whose size grows with r.
    let input: Vec<bf16> = (0..tokens * 2 * hidden)
        .map(|i| {
            let (r, c) = ((i / (2 * hidden)) as f32, (i % (2 * hidden)) as f32);
            let v = if c < h as f32 { (c * 0.37 + r).sin() * 4.0 } else { (c * 0.11).cos() * (r + 1.0) };
            bf16::from_f32(v)
        })
        .collect();

    let handle = Handle::new(Backend::Host, 0)?;
    let mut desc = QuantDesc::new()?;
    desc.set_activation(Activation::Silu)?
        .set_gate_layout(GateLayout::Split)?
        .set_scheme(QuantScheme::PerGroup)?
        .set_group_size(128)?
        .set_output_type(DataType::Fp8E4m3fn)?;
    let input_layout = TensorLayout::new(DataType::Bf16, m, 2 * h, 2 * h)?;
    let output_layout = TensorLayout::new(DataType::Fp8E4m3fn, m, h, h)?;
    println!(
        "libfusedquant {} (header {}), variant: {}",
        version(),
        HEADER_VERSION,
        handle.query_support(&desc, &input_layout, &output_layout)?
    );

    let info = desc.scale_buffer(m, h, Output::Rowwise)?;
    let mut scales = vec![0f32; info.bytes as usize / 4];
    let mut output = vec![Fp8E4m3fn::default(); tokens * hidden];
    handle.quantize(&desc, &input_layout, &input, &output_layout, &mut output, &mut scales)?;

    let groups = info.cols as usize;
    for r in 0..tokens {
        let row_scales = &scales[r * groups..(r + 1) * groups]; // ROW_MAJOR: S[m, k] at m * K_g + k
        println!("row {r}: scales {row_scales:?}");
        for j in 0..6 {
            let (g, u) = (input[r * 2 * hidden + j].to_f32(), input[r * 2 * hidden + hidden + j].to_f32());
            let (byte, q) = (output[r * hidden + j].to_bits(), output[r * hidden + j].to_f32());
            println!(
                "  y[{j}] = silu({g:+.4}) * {u:+.4} = {:+.5}   fp8 0x{byte:02x} = {q:+6.1} -> {:+.5}",
                g / (1.0 + (-g).exp()) * u,
                q * row_scales[j / 128]
            );
        }
    }
    Ok(())
}
