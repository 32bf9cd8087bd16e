"""fq quantize-weights on a small synthetic sharded checkpoint (two shards, an index, config.json and other
files), read back with the reference `safetensors` package: the same shard layout and an updated index, the
quantization config loaders read, every other file copied, kept tensors bit-identical, and quantized weights
that dequantize to the input within the scheme's rounding bound.

The fq executable: $FQ_TOOL (CTest sets it), else build-host/tools/fq of this checkout.
"""
import json
import os
import struct
import subprocess
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")
ml_dtypes = pytest.importorskip("ml_dtypes")
safetensors = pytest.importorskip("safetensors")

REPO = Path(__file__).resolve().parents[2]
FQ = Path(os.environ.get("FQ_TOOL") or REPO / "build-host" / "tools" / "fq")

# name -> (dtype, shape, shard); the defaults keep embeddings, norms, lm_head and the MoE router in bf16.
TENSORS = {
    "model.embed_tokens.weight": ("BF16", (64, 256), 0),
    "model.layers.0.input_layernorm.weight": ("BF16", (256,), 0),
    "model.layers.0.self_attn.q_proj.weight": ("BF16", (256, 256), 0),
    "model.layers.0.mlp.gate.weight": ("BF16", (8, 256), 0),
    "model.layers.0.mlp.experts.0.up_proj.weight": ("BF16", (300, 256), 0),
    "model.layers.1.mlp.down_proj.weight": ("F16", (256, 200), 1),
    "model.layers.1.self_attn.rotary.inv_freq": ("F32", (16,), 1),
    "model.norm.weight": ("BF16", (256,), 1),
    "lm_head.weight": ("BF16", (64, 256), 1),
}
SHARDS = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
QUANTIZED = ["model.layers.0.self_attn.q_proj.weight", "model.layers.0.mlp.experts.0.up_proj.weight",
             "model.layers.1.mlp.down_proj.weight"]
NUMPY = {"BF16": ml_dtypes.bfloat16, "F16": np.float16, "F32": np.float32, "F8_E4M3": ml_dtypes.float8_e4m3fn,
         "F8_E8M0": np.uint8, "U8": np.uint8}
CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256, "intermediate_size": 300,
          "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 64, "torch_dtype": "bfloat16"}


def write_safetensors(path, tensors, metadata=None):
    """A file as the format describes it; the reference reader then checks it."""
    header, offset, blobs = {}, 0, []
    if metadata:
        header["__metadata__"] = metadata
    for name, array, dtype in tensors:
        data = array.tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    Path(path).write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    """name -> (dtype, shape, bytes) through the reference implementation."""
    return {name: (t["dtype"], tuple(t["shape"]), bytes(t["data"]))
            for name, t in safetensors.deserialize(Path(path).read_bytes())}


@pytest.fixture
def checkpoint(tmp_path):
    rng = np.random.default_rng(7)
    src = tmp_path / "model"
    src.mkdir()
    arrays = {}
    for name, (dtype, shape, _) in TENSORS.items():
        x = rng.normal(0.0, 0.05, size=shape).astype(np.float32)
        x.flat[::997] *= 300.0  # an outlier in some blocks
        arrays[name] = x.astype(NUMPY[dtype])
    for i, shard in enumerate(SHARDS):
        write_safetensors(src / shard, [(n, arrays[n], d) for n, (d, _, s) in TENSORS.items() if s == i], {"format": "pt"})
        read_safetensors(src / shard)  # the reference reader accepts the input
    index = {"metadata": {"total_size": sum(a.nbytes for a in arrays.values())},
             "weight_map": {n: SHARDS[s] for n, (_, _, s) in TENSORS.items()}}
    (src / "model.safetensors.index.json").write_text(json.dumps(index))
    (src / "config.json").write_text(json.dumps(CONFIG))
    (src / "tokenizer.json").write_text('{"version": "1.0", "model": {}}')
    (src / "generation_config.json").write_text('{"do_sample": false}')
    return src, arrays


def run_fq(*args):
    if not FQ.exists():
        pytest.skip(f"no fq executable at {FQ} (set FQ_TOOL)")
    return subprocess.run([str(FQ), "quantize-weights", *map(str, args)], capture_output=True, text=True)


def dequantize(scheme, out, name):
    """The weight as a loader reconstructs it, in float64, or None when `name` is not quantized."""
    dtype, shape, data = out[name]
    q = np.frombuffer(data, NUMPY[dtype]).reshape(shape).astype(np.float64)
    if scheme == "block2d":
        s = np.frombuffer(out[name + "_scale_inv"][2], np.float32).reshape(out[name + "_scale_inv"][1])
        scale = np.kron(s, np.ones((128, 128)))[: shape[0], : shape[1]]
    else:  # mxfp8: scale = 2^(byte - 127) per 32 values of a row
        e = np.frombuffer(out[name + "_scale"][2], np.uint8).reshape(out[name + "_scale"][1]).astype(np.float64)
        scale = np.repeat(np.exp2(e - 127.0), 32, axis=1)[:, : shape[1]]
    return q * scale, scale


@pytest.mark.parametrize("scheme", ["block2d", "mxfp8"])
def test_sharded_checkpoint_round_trip(checkpoint, tmp_path, scheme):
    src, arrays = checkpoint
    dst = tmp_path / f"model-{scheme}"
    r = run_fq(src, dst, "--scheme", scheme, "--backend", "host", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["tensors_quantized"] == len(QUANTIZED)
    assert summary["tensors_kept"] == len(TENSORS) - len(QUANTIZED)
    assert summary["shards"] == 2
    assert summary["bytes_in"] == sum((src / s).stat().st_size for s in SHARDS)
    assert summary["bytes_out"] == sum((dst / s).stat().st_size for s in SHARDS)
    assert summary["seconds"] >= 0

    # The same shards; an index mapping every tensor, scales included, to the shard that holds it.
    assert sorted(p.name for p in dst.glob("*.safetensors")) == SHARDS
    index = json.loads((dst / "model.safetensors.index.json").read_text())
    shards = {s: read_safetensors(dst / s) for s in SHARDS}
    assert index["weight_map"] == {n: s for s in SHARDS for n in shards[s]}
    assert index["metadata"]["total_size"] == sum(len(t[2]) for s in shards.values() for t in s.values())
    out = {n: t for s in shards.values() for n, t in s.items()}
    for name, (dtype, shape, shard) in TENSORS.items():
        assert name in shards[SHARDS[shard]]
        if name in QUANTIZED:
            continue
        assert out[name] == (dtype, shape, arrays[name].tobytes()), name  # kept: bit-identical

    scale_suffix = "_scale_inv" if scheme == "block2d" else "_scale"
    assert sorted(n for n in out if n not in TENSORS) == sorted(n + scale_suffix for n in QUANTIZED)
    for name in QUANTIZED:
        dtype, shape, _ = out[name]
        assert (dtype, shape) == ("F8_E4M3", TENSORS[name][1])
        m, k = shape
        if scheme == "block2d":
            assert out[name + "_scale_inv"][:2] == ("F32", (-(-m // 128), -(-k // 128)))
        else:
            assert out[name + "_scale"][:2] == ("F8_E8M0", (m, -(-k // 32)))
        # e4m3 keeps 3 mantissa bits: within half a step, 2^-4 of the value, or half the subnormal step 2^-10 scale.
        got, scale = dequantize(scheme, out, name)
        want = arrays[name].astype(np.float64)
        bound = 2.0**-4 * np.abs(want) + 2.0**-10 * scale
        assert np.all(np.abs(got - want) <= bound * (1 + 1e-6)), name

    # config.json carries the quantization config; every other file is copied as it was.
    config = json.loads((dst / "config.json").read_text())
    qc = config.pop("quantization_config")
    assert config == CONFIG
    kept_modules = ["model.embed_tokens", "model.layers.0.mlp.gate", "lm_head"]
    if scheme == "block2d":
        assert qc == {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                      "weight_block_size": [128, 128], "modules_to_not_convert": kept_modules}
    else:  # ModelOpt's MXFP8 convention, in config.json and hf_quant_config.json
        assert qc == {"quant_method": "modelopt", "quant_algo": "MXFP8", "group_size": 32, "exclude_modules": kept_modules}
        hf = json.loads((dst / "hf_quant_config.json").read_text())["quantization"]
        assert (hf["quant_algo"], hf["group_size"], hf["exclude_modules"]) == ("MXFP8", 32, kept_modules)
    for name in ("tokenizer.json", "generation_config.json"):
        assert (dst / name).read_bytes() == (src / name).read_bytes()
    assert not list(dst.glob("*fq-tmp*"))


def test_nvfp4_writes_modelopt_config_and_scales(checkpoint, tmp_path):
    src, arrays = checkpoint
    dst = tmp_path / "model-nvfp4"
    r = run_fq(src / "model.safetensors.index.json", dst, "--scheme", "nvfp4", "--backend", "host", "--quiet")
    assert r.returncode == 0, r.stderr
    hf = json.loads((dst / "hf_quant_config.json").read_text())
    assert hf["quantization"]["quant_algo"] == "NVFP4" and hf["quantization"]["group_size"] == 16
    assert "lm_head" in hf["quantization"]["exclude_modules"]
    qc = json.loads((dst / "config.json").read_text())["quantization_config"]
    assert (qc["quant_method"], qc["quant_algo"], qc["group_size"]) == ("modelopt", "NVFP4", 16)
    out = {n: t for s in SHARDS for n, t in read_safetensors(dst / s).items()}
    e2m1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])
    for name in QUANTIZED:
        m, k = TENSORS[name][1]
        dtype, shape, data = out[name]
        assert (dtype, shape) == ("U8", (m, k // 2))
        packed = np.frombuffer(data, np.uint8).reshape(m, k // 2)
        q = np.empty((m, k))
        q[:, 0::2], q[:, 1::2] = e2m1[packed & 15], e2m1[packed >> 4]  # element 2i in the low nibble
        s_dtype, s_shape, s_data = out[name + "_scale"]
        assert (s_dtype, s_shape) == ("F8_E4M3", (m, -(-k // 16)))
        s = np.frombuffer(s_data, ml_dtypes.float8_e4m3fn).reshape(s_shape).astype(np.float64)
        s2 = np.frombuffer(out[name + "_scale_2"][2], np.float32)[0]
        assert out[name + "_scale_2"][:2] == ("F32", ())
        scale = np.repeat(s, 16, axis=1)[:, :k] * s2
        want = arrays[name].astype(np.float64)
        assert s2 == pytest.approx(np.abs(want).max() / (448 * 6), rel=1e-6)
        # The widest e2m1 step is 2 (4 -> 6): within one scale unit of the input.
        assert np.all(np.abs(q * scale - want) <= scale * (1 + 1e-6)), name


def test_transformers_reads_the_quantization_config(checkpoint, tmp_path):
    transformers = pytest.importorskip("transformers")
    src, _ = checkpoint
    dst = tmp_path / "model-fp8"
    assert run_fq(src, dst, "--backend", "host", "--quiet").returncode == 0
    config = transformers.AutoConfig.from_pretrained(dst)
    qc = config.quantization_config
    qc = qc if isinstance(qc, dict) else qc.to_dict()
    assert qc["quant_method"] == "fp8" and qc["weight_block_size"] == [128, 128]


def test_refuses_to_overwrite_its_input(checkpoint, tmp_path):
    src, _ = checkpoint
    before = {p.name: p.read_bytes() for p in src.iterdir()}
    (tmp_path / "link").symlink_to(src)
    for out in (src, tmp_path / "link", src / ".." / "model"):
        r = run_fq(src, out, "--backend", "host", "--quiet")
        assert r.returncode == 2 and "never overwrites its input" in r.stderr, r.stderr
    assert {p.name: p.read_bytes() for p in src.iterdir()} == before


def test_keep_and_quantize_regex(checkpoint, tmp_path):
    src, arrays = checkpoint
    dst = tmp_path / "model-regex"
    r = run_fq(src, dst, "--backend", "host", "--quiet", "--keep", r"q_proj", "--quantize", r"lm_head", "--json")
    assert r.returncode == 0, r.stderr
    out = {n: t for s in SHARDS for n, t in read_safetensors(dst / s).items()}
    assert out["model.layers.0.self_attn.q_proj.weight"][2] == arrays["model.layers.0.self_attn.q_proj.weight"].tobytes()
    assert out["lm_head.weight"][0] == "F8_E4M3" and "lm_head.weight_scale_inv" in out
    assert out["model.embed_tokens.weight"][0] == "F8_E4M3"  # --keep replaced the default, which kept it
    r = run_fq(src, tmp_path / "bad", "--backend", "host", "--keep", "(unclosed")
    assert r.returncode == 2 and "--keep" in r.stderr


def test_refuses_an_index_that_disagrees_with_its_shards(checkpoint, tmp_path):
    src, _ = checkpoint
    index_path = src / "model.safetensors.index.json"
    index = json.loads(index_path.read_text())
    index["weight_map"]["lm_head.weight"] = SHARDS[0]  # it is in the second shard
    index_path.write_text(json.dumps(index))
    r = run_fq(src, tmp_path / "out", "--backend", "host", "--quiet")
    assert r.returncode == 2
    assert 'puts "lm_head.weight" in model-00001-of-00002.safetensors, but it is in model-00002' in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()
