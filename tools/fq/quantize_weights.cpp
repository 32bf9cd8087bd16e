// fq quantize-weights: the bf16/fp16 weight matrices of a .safetensors checkpoint (one file, or a directory of
// shards with its index) to FP8 with 128x128 block scales (DeepSeek-V3 style), MXFP8 or NVFP4, each weight's
// scales beside it, every other tensor copied unchanged, with the quantization config loaders read. Runs on the
// GPU when there is one, else on the host backend: both give the same bytes (docs/spec.md §0).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>

#include "checkpoint.h"
#include "cli.h"
#include "common/formats.h"
#include "device.h"
#include "safetensors.h"

namespace fqtool {

namespace fs = std::filesystem;

const char* kQuantizeWeightsHelp = R"(usage: fq quantize-weights IN OUT [options]

IN is a .safetensors file (OUT: the file to write) or a checkpoint directory / its
model.safetensors.index.json (OUT: the directory to write, created if missing): the same shards, an
updated index, config.json with its "quantization_config", and every other file of IN copied (not its
subdirectories). One shard is
in memory at a time. IN is never written: OUT may not be IN (by path or by file), and each output file is
written to a temporary file beside it and renamed when complete. IN is checked as the reference safetensors
implementation checks a file (no name twice, offsets that tile the data, byte counts that match the shapes).

Quantizes every 2-D BF16/F16 tensor whose name ends in "weight", except those --keep matches (unless
--quantize matches them); copies every other tensor (and each file's __metadata__) unchanged.

  --scheme block2d|mxfp8|nvfp4   default block2d
      block2d  values F8_E4M3 (or F8_E5M2 with --out-type e5m2) [M, K]; scales "<name>_scale_inv", F32,
               one per 128x128 tile: [ceil(M/128), ceil(K/128)] (--scale-layout row, DeepSeek-V3's
               "weight_scale_inv", the order cuBLASLt's BLK128x128_32F reads, with its rows padded to
               a multiple of 4), or [ceil(K/128), ceil(M/128)] (--scale-layout col).
               Dequantize: w = q * scale_inv (scale = amax / qmax, docs/spec.md §3.2).
               config.json: "quantization_config": {"quant_method": "fp8", "fmt": "e4m3",
               "activation_scheme": "dynamic", "weight_block_size": [128, 128]} (row layout only).
      mxfp8    values F8_E4M3 [M, K]; scales "<name>_scale", F8_E8M0, [M, ceil(K/32)].
               Dequantize: w = q * 2^(scale - 127). ModelOpt's convention: hf_quant_config.json
               {"quantization": {"quant_algo": "MXFP8", "group_size": 32, ...}}, and in config.json.
      nvfp4    values U8 [M, K/2] (two e2m1 per byte, element 2i in the low nibble); block scales
               "<name>_scale", F8_E4M3 [M, ceil(K/16)]; tensor scale "<name>_scale_2", F32 scalar =
               global_amax / (448 * 6). Dequantize: w = e2m1(q) * scale * scale_2 (ModelOpt's names);
               hf_quant_config.json: {"quantization": {"quant_algo": "NVFP4", "group_size": 16, ...}},
               and in config.json.
  --out-type e4m3fn|e5m2         block2d value type (default e4m3fn)
  --scale-layout row|col         block2d scale order (default row)
  --pow2                         block2d: round scales up to powers of two (docs/spec.md §3.2 POW2_CEIL)
  --keep REGEX                   tensors to keep as they are (ECMAScript regex searched in the name);
                                 default: what the reference checkpoints keep in bf16, the embeddings,
                                 norms, lm_head and MoE routers: )" "embed|norm|lm_head|router|(^|\\.)gate\\.weight$" R"(
  --quantize REGEX               quantize the eligible tensors this matches even where --keep matches
  --skip WORD[,WORD...]          the older spelling of --keep: keep the tensors containing a WORD
  --backend auto|cuda|host       default auto: the GPU when one is usable
  --json                         print a JSON summary on stdout instead of the sentence (tensors quantized
                                 and kept, bytes in and out, seconds)
  --quiet                        no progress bar (it shows on a terminal only)
  --verbose                      say on stderr why each kept tensor is kept
)";

namespace {

constexpr const char* kDefaultKeep = "embed|norm|lm_head|router|(^|\\.)gate\\.weight$";

struct Options {
    int32_t scheme = FQ_SCHEME_BLOCK_2D, out = FQ_TYPE_FP8_E4M3FN, layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
    bool pow2 = false;
    std::string keep_text = kDefaultKeep;
    std::regex keep{kDefaultKeep}, quantize;
    bool has_quantize = false;
};

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// "model.layers.0.mlp.gate.weight" -> "model.layers.0.mlp.gate": the name loaders' module lists use.
std::string module_of(const std::string& tensor) {
    return ends_with(tensor, ".weight") ? tensor.substr(0, tensor.size() - 7) : tensor;
}

std::regex compile(const std::string& text, const char* option) {
    try {
        return std::regex(text, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
        throw ToolError(std::string(option) + ": \"" + text + "\" is not a regular expression: " + e.what());
    }
}

// "--skip a,b.c" as the regex that finds either word literally.
std::string words_as_regex(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) {
        out += out.empty() ? "" : "|";
        for (char c : w) out += std::strchr(".^$|()[]{}*+?\\", c) ? std::string("\\") + c : std::string(1, c);
    }
    return out;
}

// What one input tensor becomes.
struct Plan {
    const TensorInfo* in;
    bool quantize = false;
    bool kept_by_rule = false;  // eligible, but --keep kept it: a module the loader must not convert
    std::string why_not;        // for --verbose
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
    auto keep = [&](std::string why) { p.why_not = std::move(why); return p; };
    if (t.dtype != "BF16" && t.dtype != "F16") return keep("not BF16/F16");
    if (t.shape.size() != 2) return keep("not 2-D");
    if (!ends_with(t.name, "weight")) return keep("name does not end in \"weight\"");
    const int64_t M = t.shape[0], K = t.shape[1];
    if (M == 0 || K == 0) return keep("empty");
    if (std::regex_search(t.name, o.keep) && !(o.has_quantize && std::regex_search(t.name, o.quantize))) {
        p.kept_by_rule = true;
        return keep("--keep " + o.keep_text + " matches");
    }
    if (o.scheme == FQ_SCHEME_NVFP4 && K % 2 != 0) return keep("odd width: NVFP4 packs two values per byte");
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
            p.scale_dtype = "F8_E8M0";
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
        case FQ_SCHEME_MXFP8: return "mxfp8 e4m3fn, F8_E8M0 scale per 32 values in <name>_scale";
        default: return "nvfp4 e2m1 (two per byte), e4m3 scale per 16 values in <name>_scale, fp32 <name>_scale_2";
    }
}

// The quantization config of Hugging Face's config.json for the scheme (null: none to write, with `why`).
// `kept`: the modules (names without ".weight") of eligible weights --keep kept.
Json quantization_config(const Options& o, const std::vector<std::string>& kept, std::string* why) {
    Json q = Json::object();
    if (o.scheme == FQ_SCHEME_BLOCK_2D) {
        if (o.layout != FQ_SCALE_LAYOUT_ROW_MAJOR) {
            *why = "--scale-layout col: the fp8 loaders read [ceil(M/128), ceil(K/128)] scales";
            return nullptr;
        }
        q = {{"quant_method", "fp8"},
             {"fmt", o.out == FQ_TYPE_FP8_E5M2 ? "e5m2" : "e4m3"},
             {"activation_scheme", "dynamic"},
             {"weight_block_size", {128, 128}}};
    } else {  // ModelOpt's names for the microscaling formats: MXFP8 (E8M0 per 32), NVFP4 (E4M3 per 16 + fp32)
        q = {{"quant_method", "modelopt"},
             {"quant_algo", o.scheme == FQ_SCHEME_MXFP8 ? "MXFP8" : "NVFP4"},
             {"group_size", o.scheme == FQ_SCHEME_MXFP8 ? 32 : 16}};
    }
    if (!kept.empty()) q[o.scheme == FQ_SCHEME_BLOCK_2D ? "modules_to_not_convert" : "exclude_modules"] = kept;
    return q;
}

// ModelOpt's hf_quant_config.json (MXFP8, NVFP4), which vLLM and TensorRT-LLM read to recognise the checkpoint.
Json modelopt_config(const Json& quantization_config) {
    Json q = {{"quant_algo", quantization_config["quant_algo"]},
              {"kv_cache_quant_algo", nullptr},
              {"group_size", quantization_config["group_size"]},
              {"exclude_modules", quantization_config.value("exclude_modules", Json::array())}};
    return {{"producer", {{"name", "fq quantize-weights"}, {"version", std::to_string(fqGetVersion())}}}, {"quantization", q}};
}

struct Totals {
    uint64_t quantized = 0, kept = 0, bytes_in = 0, bytes_out = 0;
};

class Converter {
public:
    Converter(const Options& o, fqHandle_t h, bool gpu, bool verbose, Progress& progress)
        : o_(o), h_(h), gpu_(gpu), verbose_(verbose), progress_(progress) {}

    // One input file to one output file; `shard` names the output file in the index's weight_map.
    void convert(const SafetensorsReader& in, const std::string& out_path, JsonMap* weight_map, const std::string& shard) {
        std::vector<Plan> plans;
        for (const TensorInfo& t : in.tensors()) plans.push_back(plan_tensor(t, o_));
        SafetensorsWriter out;
        for (const Plan& p : plans) {
            if (!p.quantize) {
                out.declare(p.in->name, p.in->dtype, p.in->shape, p.in->bytes());
                if (p.kept_by_rule) kept_modules.push_back(module_of(p.in->name));
                continue;
            }
            out.declare(p.in->name, p.value_dtype, p.value_shape, uint64_t(p.problem.output_bytes()));
            out.declare(p.scale_name, p.scale_dtype, p.scale_shape, p.scale_bytes);
            if (o_.scheme == FQ_SCHEME_NVFP4) out.declare(p.in->name + "_scale_2", "F32", {}, 4);
        }
        if (weight_map)
            for (const TensorInfo& t : out.tensors()) (*weight_map)[t.name] = shard;
        JsonMap meta = in.metadata();
        meta["fq_quantization"] = describe_scheme(o_);
        out.begin(out_path, meta);
        std::vector<uint8_t> values, scales;
        for (const Plan& p : plans) {
            progress_.update(done_, p.in->name);
            const std::vector<uint8_t> data = in.read(*p.in);
            if (!p.quantize) {
                out.write_next(p.in->name, data.data(), data.size());
                ++totals.kept;
                if (verbose_) std::fprintf(stderr, "kept %s: %s\n", p.in->name.c_str(), p.why_not.c_str());
            } else {
                const float amax = o_.scheme == FQ_SCHEME_NVFP4 ? input_amax(data, p.problem.in_type == FQ_TYPE_BF16) : 0.0f;
                run_quantize(h_, gpu_, p, data, values, scales, amax);
                out.write_next(p.in->name, values.data(), values.size());
                out.write_next(p.scale_name, scales.data(), scales.size());
                if (o_.scheme == FQ_SCHEME_NVFP4) {
                    // S_enc = 2688 / amax, or 1 where that is not a positive finite number (docs/spec.md §3.3); scale_2 = 1 / S_enc.
                    const float s_enc = 2688.0f / amax;
                    const float scale2 = (s_enc > 0.0f && std::isfinite(s_enc)) ? 1.0f / s_enc : 1.0f;
                    out.write_next(p.in->name + "_scale_2", &scale2, 4);
                }
                ++totals.quantized;
            }
            done_ += p.in->bytes();
        }
        out.finish();
        totals.bytes_in += in.file_bytes();
        totals.bytes_out += out.file_bytes();
        for (const TensorInfo& t : out.tensors()) tensor_bytes_out += t.bytes();
    }

    Totals totals;
    uint64_t tensor_bytes_out = 0;
    std::vector<std::string> kept_modules;

private:
    const Options& o_;
    fqHandle_t h_;
    bool gpu_, verbose_;
    Progress& progress_;
    uint64_t done_ = 0;
};

// The index and the shards agree: each tensor the index names is in the shard it names, and no tensor is in
// two shards (the output's index could not say where it is).
void check_index(const Checkpoint& ck, const std::vector<std::unique_ptr<SafetensorsReader>>& readers) {
    std::map<std::string, std::string> where;
    for (size_t i = 0; i < readers.size(); ++i)
        for (const TensorInfo& t : readers[i]->tensors())
            if (!where.emplace(t.name, ck.shards[i]).second)
                throw ToolError("tensor \"" + t.name + "\" is in both " + where[t.name] + " and " + ck.shards[i]);
    if (!ck.index.is_object()) return;
    for (const auto& kv : ck.index.at("weight_map").items()) {
        const auto it = where.find(kv.key());
        if (it == where.end() || it->second != kv.value().get<std::string>())
            throw ToolError(std::string(kIndexName) + " puts \"" + kv.key() + "\" in " + kv.value().get<std::string>() +
                            (it == where.end() ? ", which does not hold it" : ", but it is in " + it->second));
    }
}

// The files of a checkpoint directory besides its shards, written to `out`: every other file of the input copied,
// config.json with the quantization_config, ModelOpt's hf_quant_config.json for MXFP8 and NVFP4, the updated index.
// Returns their names.
std::vector<std::string> write_directory_files(const Options& o, const Checkpoint& ck, const std::string& out,
                                               const Converter& conv, const JsonMap& weight_map) {
    std::vector<std::string> written;
    std::string no_config_why;
    const Json qc = quantization_config(o, conv.kept_modules, &no_config_why);
    for (const std::string& name : ck.others) {
        const std::string from = (fs::path(ck.dir) / name).string(), to = (fs::path(out) / name).string();
        refuse_same_file(from, to);
        if (name == "config.json" && !qc.is_null()) {
            Json config = read_json_file<Json>(from);
            config["quantization_config"] = qc;
            write_file_atomically(to, config.dump(2) + "\n");
        } else {
            copy_file_atomically(from, to);
        }
        written.push_back(name);
    }
    for (const std::string& d : ck.subdirectories)
        std::fprintf(stderr, "fq quantize-weights: %s/ not copied (a directory)\n", (fs::path(ck.dir) / d).c_str());
    if (std::find(ck.others.begin(), ck.others.end(), "config.json") == ck.others.end())
        no_config_why = "no config.json in " + ck.dir;
    if (!no_config_why.empty())
        std::fprintf(stderr, "fq quantize-weights: no quantization_config written (%s)\n", no_config_why.c_str());
    if (o.scheme != FQ_SCHEME_BLOCK_2D) {
        write_file_atomically((fs::path(out) / "hf_quant_config.json").string(), modelopt_config(qc).dump(2) + "\n");
        written.push_back("hf_quant_config.json");
    }
    if (ck.index.is_object()) {
        JsonMap index = ck.index;
        index["metadata"]["total_size"] = conv.tensor_bytes_out;
        index["weight_map"] = weight_map;
        write_file_atomically((fs::path(out) / kIndexName).string(), index.dump(2) + "\n");
        written.push_back(kIndexName);
    }
    return written;
}

}  // namespace

int quantize_weights_main(int argc, char** argv) {
    const Args args(argc, argv, {{"scheme", "out-type", "scale-layout", "keep", "quantize", "skip", "backend"},
                                 {"pow2", "quiet", "help", "verbose", "json"}});
    if (args.has("help")) {
        std::fputs(kQuantizeWeightsHelp, stdout);
        return 0;
    }
    if (args.positional().size() != 2) throw ToolError(std::string("expected IN and OUT\n\n") + kQuantizeWeightsHelp);
    Options o;
    o.scheme = parse_scheme(args.get("scheme", "block2d"));
    if (o.scheme != FQ_SCHEME_BLOCK_2D && o.scheme != FQ_SCHEME_MXFP8 && o.scheme != FQ_SCHEME_NVFP4)
        throw ToolError("--scheme: quantize-weights writes block2d, mxfp8 or nvfp4");
    o.out = parse_out_type(args.get("out-type", "e4m3fn"));
    if (o.out != FQ_TYPE_FP8_E4M3FN && o.out != FQ_TYPE_FP8_E5M2) throw ToolError("--out-type: e4m3fn or e5m2");
    o.layout = parse_layout(args.get("scale-layout", "row"));
    if (o.layout != FQ_SCALE_LAYOUT_ROW_MAJOR && o.layout != FQ_SCALE_LAYOUT_COL_MAJOR) throw ToolError("--scale-layout: row or col");
    o.pow2 = args.has("pow2");
    if (args.has("keep") && args.has("skip")) throw ToolError("--keep and --skip say the same thing: give one");
    if (args.has("keep")) o.keep_text = args.get("keep");
    if (args.has("skip")) o.keep_text = words_as_regex(args.words("skip", ""));
    o.keep = compile(o.keep_text, "--keep");
    if (args.has("quantize")) o.quantize = compile(args.get("quantize"), "--quantize"), o.has_quantize = true;
    const std::string backend = args.get("backend", "auto");
    if (backend != "auto" && backend != "cuda" && backend != "host") throw ToolError("--backend: auto, cuda or host");

    const std::string in_arg = args.positional()[0], out_arg = args.positional()[1];
    refuse_same_file(in_arg, out_arg);
    const Checkpoint ck = open_checkpoint(in_arg);
    // Every input is opened and checked before anything is written.
    std::vector<std::unique_ptr<SafetensorsReader>> readers;
    uint64_t total = 0;
    for (const std::string& s : ck.shards) {
        const std::string path = ck.directory ? (fs::path(ck.dir) / s).string() : s;
        readers.push_back(std::make_unique<SafetensorsReader>(path));
        total += readers.back()->file_bytes();
    }
    check_index(ck, readers);
    if (ck.directory) {
        refuse_same_file(ck.dir, out_arg);
        if (fs::exists(out_arg) && !fs::is_directory(out_arg))
            throw ToolError(out_arg + ": the input is a checkpoint directory, so the output is one: this is a file");
        fs::create_directories(out_arg);
        for (const std::string& name : ck.shards) refuse_same_file((fs::path(ck.dir) / name).string(), (fs::path(out_arg) / name).string());
    } else if (fs::is_directory(out_arg)) {
        throw ToolError(out_arg + ": a directory; the input is one file, so the output is a file path");
    }

    std::string why;
    const bool gpu = backend == "cuda" || (backend == "auto" && cuda_available(&why));
    fqHandle_t h;
    check(fqCreate(&h, gpu ? FQ_BACKEND_CUDA : FQ_BACKEND_HOST, gpu ? 0 : -1), "fqCreate");
    std::unique_ptr<fqContext, fqStatus_t (*)(fqHandle_t)> handle(h, fqDestroy);

    const auto t0 = std::chrono::steady_clock::now();
    Progress progress("quantize-weights", total, !args.has("quiet") && isatty(2), /*bytes=*/true);
    Converter conv(o, h, gpu, args.has("verbose"), progress);
    JsonMap weight_map = JsonMap::object();
    for (size_t i = 0; i < readers.size(); ++i) {
        const std::string out_path = ck.directory ? (fs::path(out_arg) / ck.shards[i]).string() : out_arg;
        conv.convert(*readers[i], out_path, &weight_map, ck.shards[i]);
        readers[i].reset();  // one shard open at a time
    }
    progress.update(total);
    progress.finish();

    const std::vector<std::string> written =
        ck.directory ? write_directory_files(o, ck, out_arg, conv, weight_map) : std::vector<std::string>{};
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const Totals& t = conv.totals;
    if (args.has("json")) {
        const Json summary = {{"input", in_arg},
                              {"output", out_arg},
                              {"scheme", describe_scheme(o)},
                              {"backend", gpu ? "cuda" : "host"},
                              {"shards", ck.shards.size()},
                              {"tensors_quantized", t.quantized},
                              {"tensors_kept", t.kept},
                              {"bytes_in", t.bytes_in},
                              {"bytes_out", t.bytes_out},
                              {"other_files", written},
                              {"seconds", secs}};
        std::printf("%s\n", summary.dump(2).c_str());
    } else {
        std::printf("%s -> %s: %llu of %llu tensors quantized (%s), %zu shard(s), %s -> %s in %.1f s on the %s backend\n",
                    in_arg.c_str(), out_arg.c_str(), (unsigned long long)t.quantized, (unsigned long long)(t.quantized + t.kept),
                    describe_scheme(o).c_str(), ck.shards.size(), human_bytes(double(t.bytes_in)).c_str(),
                    human_bytes(double(t.bytes_out)).c_str(), secs, gpu ? "CUDA" : "host");
    }
    return 0;
}

}  // namespace fqtool
