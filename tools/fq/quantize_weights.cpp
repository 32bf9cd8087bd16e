// fq quantize-weights: the bf16/fp16 weight matrices of a .safetensors checkpoint to FP8 with 128x128 block
// scales (DeepSeek-V3 style), MXFP8 or NVFP4, written to a new .safetensors file with each weight's scales
// beside it. Every other tensor is copied unchanged. Runs on the GPU when there is one, else on the host
// backend: both give the same bytes (docs/spec.md §0).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "cli.h"
#include "common/formats.h"
#include "device.h"
#include "safetensors.h"

namespace fqtool {

const char* kQuantizeWeightsHelp = R"(usage: fq quantize-weights IN.safetensors OUT.safetensors [options]

Quantizes every 2-D BF16/F16 tensor whose name ends in "weight" and contains none of the --skip words;
copies every other tensor (and the file's __metadata__) unchanged.

  --scheme block2d|mxfp8|nvfp4   default block2d
      block2d  values F8_E4M3 (or F8_E5M2 with --out-type e5m2) [M, K]; scales "<name>_scale_inv", F32,
               one per 128x128 tile: [ceil(M/128), ceil(K/128)] (--scale-layout row, DeepSeek-V3's
               "weight_scale_inv", the order cuBLASLt's BLK128x128_32F reads, with its rows padded to
               a multiple of 4), or [ceil(K/128), ceil(M/128)] (--scale-layout col).
               Dequantize: w = q * scale_inv (scale = amax / qmax, docs/spec.md §3.2).
      mxfp8    values F8_E4M3 [M, K]; scales "<name>_scale", E8M0 bytes stored as U8, [M, ceil(K/32)].
      nvfp4    values U8 [M, K/2] (two e2m1 per byte, element 2i in the low nibble); block scales
               "<name>_scale", F8_E4M3 [M, ceil(K/16)]; tensor scale "<name>_scale_2", F32 scalar =
               global_amax / (448 * 6). Dequantize: w = e2m1(q) * scale * scale_2 (ModelOpt's names).
  --out-type e4m3fn|e5m2         block2d value type (default e4m3fn)
  --scale-layout row|col         block2d scale order (default row)
  --pow2                         block2d: round scales up to powers of two (docs/spec.md §3.2 POW2_CEIL)
  --skip WORD[,WORD...]          tensors to leave unquantized (default: embed,norm,lm_head)
  --backend auto|cuda|host       default auto: the GPU when one is usable
  --quiet                        no progress bar
)";

namespace {

struct Options {
    int32_t scheme = FQ_SCHEME_BLOCK_2D, out = FQ_TYPE_FP8_E4M3FN, layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
    bool pow2 = false;
    std::vector<std::string> skip;
};

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// What one input tensor becomes.
struct Plan {
    const TensorInfo* in;
    bool quantize = false;
    std::string why_not;  // for --verbose summaries
    Problem problem;
    std::string value_dtype;
    std::vector<int64_t> value_shape;
    std::string scale_name, scale_dtype;
    std::vector<int64_t> scale_shape;
    uint64_t scale_bytes = 0;
};

Plan plan_tensor(const TensorInfo& t, const Options& o) {
    Plan p;
    p.in = &t;
    auto skip = [&](std::string why) { p.why_not = std::move(why); return p; };
    if (t.dtype != "BF16" && t.dtype != "F16") return skip("not BF16/F16");
    if (t.shape.size() != 2) return skip("not 2-D");
    if (!ends_with(t.name, "weight")) return skip("name does not end in \"weight\"");
    for (const std::string& w : o.skip)
        if (t.name.find(w) != std::string::npos) return skip("name contains \"" + w + "\" (--skip)");
    const int64_t M = t.shape[0], K = t.shape[1];
    if (M == 0 || K == 0) return skip("empty");
    if (o.scheme == FQ_SCHEME_NVFP4 && K % 2 != 0) return skip("odd width: NVFP4 packs two values per byte");
    Problem& q = p.problem;
    q.act = FQ_ACTIVATION_IDENTITY;
    q.gate = FQ_GATE_LAYOUT_NONE;
    q.scheme = o.scheme;
    q.in_type = t.dtype == "BF16" ? FQ_TYPE_BF16 : FQ_TYPE_FP16;
    q.rows = M;
    q.cols = K;
    q.pow2 = o.pow2 ? FQ_SCALE_ROUNDING_POW2_CEIL : FQ_SCALE_ROUNDING_NONE;
    const int64_t block = o.scheme == FQ_SCHEME_MXFP8 ? 32 : (o.scheme == FQ_SCHEME_NVFP4 ? 16 : 128);
    const int64_t kb = (K + block - 1) / block, mb = o.scheme == FQ_SCHEME_BLOCK_2D ? (M + 127) / 128 : M;
    switch (o.scheme) {
        case FQ_SCHEME_BLOCK_2D:
            q.out = o.out;
            q.layout = o.layout;
            p.value_dtype = o.out == FQ_TYPE_FP8_E5M2 ? "F8_E5M2" : "F8_E4M3";
            p.scale_name = t.name + "_scale_inv";
            p.scale_dtype = "F32";
            p.scale_shape = o.layout == FQ_SCALE_LAYOUT_COL_MAJOR ? std::vector<int64_t>{kb, mb} : std::vector<int64_t>{mb, kb};
            p.scale_bytes = uint64_t(mb * kb * 4);
            break;
        case FQ_SCHEME_MXFP8:
            q.out = FQ_TYPE_FP8_E4M3FN;
            p.value_dtype = "F8_E4M3";
            p.scale_name = t.name + "_scale";
            p.scale_dtype = "U8";
            p.scale_shape = {mb, kb};
            p.scale_bytes = uint64_t(mb * kb);
            break;
        default:  // NVFP4
            q.out = FQ_TYPE_FP4_E2M1;
            p.value_dtype = "U8";
            p.scale_name = t.name + "_scale";
            p.scale_dtype = "F8_E4M3";
            p.scale_shape = {mb, kb};
            p.scale_bytes = uint64_t(mb * kb);
            break;
    }
    p.value_shape = {M, o.scheme == FQ_SCHEME_NVFP4 ? K / 2 : K};
    p.quantize = true;
    return p;
}

float input_amax(const std::vector<uint8_t>& data, bool bf16) {
    float a = 0.0f;
    for (size_t i = 0; i + 1 < data.size(); i += 2) {
        const uint16_t h = uint16_t(data[i] | (data[i + 1] << 8));
        const float v = bf16 ? fq::bf16_to_float(h) : fq::fp16_to_float(h);
        a = std::fmax(a, std::fabs(v));  // NaN ignored, as docs/spec.md §3.2's amax
    }
    return a;
}

// Quantizes one tensor on `h`; values and scales come back in host memory.
void run_quantize(fqHandle_t h, bool on_gpu, const Plan& p, const std::vector<uint8_t>& in, std::vector<uint8_t>& values,
                  std::vector<uint8_t>& scales, float global_amax) {
    const Problem& q = p.problem;
    fqQuantDesc_t d;
    check(fqQuantDescCreate(&d), "fqQuantDescCreate");
    std::unique_ptr<fqQuantDescOpaque, fqStatus_t (*)(fqQuantDesc_t)> desc(d, fqQuantDescDestroy);
    q.configure(d, nullptr);
    fqTensorLayout_t li, lo;
    check(fqTensorLayoutCreate(&li, q.in_type, q.rows, q.cols, q.cols), "input layout");
    std::unique_ptr<fqTensorLayoutOpaque, fqStatus_t (*)(fqTensorLayout_t)> lin(li, fqTensorLayoutDestroy);
    check(fqTensorLayoutCreate(&lo, q.out, q.rows, q.cols, q.cols), "output layout");
    std::unique_ptr<fqTensorLayoutOpaque, fqStatus_t (*)(fqTensorLayout_t)> lout(lo, fqTensorLayoutDestroy);
    size_t sbytes = 0;
    check(fqGetScaleBufferSize(d, q.rows, q.cols, FQ_OUTPUT_ROWWISE, &sbytes), "fqGetScaleBufferSize");
    if (sbytes != p.scale_bytes)
        throw ToolError(p.in->name + ": the library asks for " + std::to_string(sbytes) + " scale bytes, the file layout has " +
                        std::to_string(p.scale_bytes));
    values.assign(size_t(q.output_bytes()), 0);
    scales.assign(sbytes, 0);
    const std::string what = "fqQuantize of " + p.in->name;
    if (!on_gpu) {
        if (q.scheme == FQ_SCHEME_NVFP4) {
            const float* ga = &global_amax;
            check(fqQuantDescSetAttribute(d, FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, &ga, sizeof ga), "global amax");
        }
        check(fqQuantize(h, d, li, in.data(), lo, values.data(), scales.data(), sbytes, nullptr, 0, nullptr), what.c_str());
        return;
    }
    DeviceBuffer din(in.size()), dout(values.size()), dscale(sbytes), damax(sizeof(float));
    copy_to_device(din.p, in.data(), in.size());
    if (q.scheme == FQ_SCHEME_NVFP4) {
        copy_to_device(damax.p, &global_amax, sizeof global_amax);
        const void* ga = damax.p;
        check(fqQuantDescSetAttribute(d, FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, &ga, sizeof ga), "global amax");
    }
    check(fqQuantize(h, d, li, din.p, lo, dout.p, dscale.p, sbytes, nullptr, 0, nullptr), what.c_str());
    device_synchronize();
    copy_to_host(values.data(), dout.p, values.size());
    copy_to_host(scales.data(), dscale.p, sbytes);
}

std::string describe_scheme(const Options& o) {
    switch (o.scheme) {
        case FQ_SCHEME_BLOCK_2D:
            return std::string("block2d ") + (o.out == FQ_TYPE_FP8_E5M2 ? "e5m2" : "e4m3fn") +
                   ", fp32 scale per 128x128 tile in <name>_scale_inv (" +
                   (o.layout == FQ_SCALE_LAYOUT_COL_MAJOR ? "[ceil(K/128), ceil(M/128)]" : "[ceil(M/128), ceil(K/128)]") +
                   "), w = q * scale_inv" + (o.pow2 ? ", power-of-two scales" : "");
        case FQ_SCHEME_MXFP8: return "mxfp8 e4m3fn, E8M0 scale (U8) per 32 values in <name>_scale";
        default: return "nvfp4 e2m1 (two per byte), e4m3 scale per 16 values in <name>_scale, fp32 <name>_scale_2";
    }
}

}  // namespace

int quantize_weights_main(int argc, char** argv) {
    const Args args(argc, argv, {"pow2", "quiet", "help", "verbose"});
    if (args.has("help")) {
        std::fputs(kQuantizeWeightsHelp, stdout);
        return 0;
    }
    args.only({"scheme", "out-type", "scale-layout", "pow2", "skip", "backend", "quiet", "help", "verbose"});
    if (args.positional().size() != 2) throw ToolError(std::string("expected IN.safetensors OUT.safetensors\n\n") + kQuantizeWeightsHelp);
    Options o;
    o.scheme = parse_scheme(args.get("scheme", "block2d"));
    if (o.scheme != FQ_SCHEME_BLOCK_2D && o.scheme != FQ_SCHEME_MXFP8 && o.scheme != FQ_SCHEME_NVFP4)
        throw ToolError("--scheme: quantize-weights writes block2d, mxfp8 or nvfp4");
    o.out = parse_out_type(args.get("out-type", "e4m3fn"));
    if (o.out != FQ_TYPE_FP8_E4M3FN && o.out != FQ_TYPE_FP8_E5M2) throw ToolError("--out-type: e4m3fn or e5m2");
    o.layout = parse_layout(args.get("scale-layout", "row"));
    if (o.layout != FQ_SCALE_LAYOUT_ROW_MAJOR && o.layout != FQ_SCALE_LAYOUT_COL_MAJOR) throw ToolError("--scale-layout: row or col");
    o.pow2 = args.has("pow2");
    o.skip = args.words("skip", "embed,norm,lm_head");
    const std::string backend = args.get("backend", "auto");
    std::string why;
    const bool gpu = backend == "cuda" || (backend == "auto" && cuda_available(&why));
    if (backend != "auto" && backend != "cuda" && backend != "host") throw ToolError("--backend: auto, cuda or host");
    fqHandle_t h;
    check(fqCreate(&h, gpu ? FQ_BACKEND_CUDA : FQ_BACKEND_HOST, gpu ? 0 : -1), "fqCreate");
    std::unique_ptr<fqContext, fqStatus_t (*)(fqHandle_t)> handle(h, fqDestroy);

    const auto t0 = std::chrono::steady_clock::now();
    SafetensorsReader in(args.positional()[0]);
    std::vector<Plan> plans;
    uint64_t total = 0;
    for (const TensorInfo& t : in.tensors()) {
        plans.push_back(plan_tensor(t, o));
        total += t.bytes();
    }
    SafetensorsWriter out;
    for (const Plan& p : plans) {
        if (!p.quantize) {
            out.declare(p.in->name, p.in->dtype, p.in->shape, p.in->bytes());
            continue;
        }
        out.declare(p.in->name, p.value_dtype, p.value_shape, uint64_t(p.problem.output_bytes()));
        out.declare(p.scale_name, p.scale_dtype, p.scale_shape, p.scale_bytes);
        if (o.scheme == FQ_SCHEME_NVFP4) out.declare(p.in->name + "_scale_2", "F32", {}, 4);
    }
    Json meta = in.metadata().kind == Json::Kind::Object ? in.metadata() : Json::make_object();
    meta.set("fq_quantization", Json::of(describe_scheme(o)));
    out.begin(args.positional()[1], meta);

    Progress progress("quantize-weights", total, !args.has("quiet"));
    uint64_t done = 0, quantized = 0, bytes_out = 0;
    std::vector<uint8_t> values, scales;
    for (const Plan& p : plans) {
        progress.update(done, p.in->name);
        const std::vector<uint8_t> data = in.read(*p.in);
        if (!p.quantize) {
            out.write_next(p.in->name, data.data(), data.size());
            bytes_out += data.size();
            if (args.has("verbose")) std::fprintf(stderr, "copied %s: %s\n", p.in->name.c_str(), p.why_not.c_str());
        } else {
            const float amax = o.scheme == FQ_SCHEME_NVFP4 ? input_amax(data, p.problem.in_type == FQ_TYPE_BF16) : 0.0f;
            run_quantize(h, gpu, p, data, values, scales, amax);
            out.write_next(p.in->name, values.data(), values.size());
            out.write_next(p.scale_name, scales.data(), scales.size());
            bytes_out += values.size() + scales.size();
            if (o.scheme == FQ_SCHEME_NVFP4) {
                // S_enc = 2688 / amax, or 1 where that is not a positive finite number (docs/spec.md §3.3); scale_2 = 1 / S_enc.
                const float s_enc = 2688.0f / amax;
                const float scale2 = (s_enc > 0.0f && std::isfinite(s_enc)) ? 1.0f / s_enc : 1.0f;
                out.write_next(p.in->name + "_scale_2", &scale2, 4);
                bytes_out += 4;
            }
            ++quantized;
        }
        done += p.in->bytes();
    }
    progress.update(done);
    progress.finish();
    out.finish();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s -> %s: %llu of %zu tensors quantized (%s), %s -> %s in %.1f s on the %s backend\n",
                args.positional()[0].c_str(), args.positional()[1].c_str(), (unsigned long long)quantized, plans.size(),
                describe_scheme(o).c_str(), human_bytes(double(total)).c_str(), human_bytes(double(bytes_out)).c_str(), secs,
                gpu ? "CUDA" : "host");
    return 0;
}

}  // namespace fqtool
