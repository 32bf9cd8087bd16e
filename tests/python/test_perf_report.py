"""tools/bench/perf_report.py on small synthetic runs: fq bench results joined with the torch.compile peers by
problem, tokens and hidden (the per-token problems among them), the problems without a peer, and `fq bench
--variants` runs (variants-*.json) printed side by side."""
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REPORT = REPO / "tools" / "bench" / "perf_report.py"


def result(scheme, activation, tokens, hidden, us, variant="auto", kernel="sm90.token", **extra):
    r = dict(tokens=tokens, hidden=hidden, layout="row", variant=variant, kernel=kernel, us=us, us_min=us, us_max=us,
             copy_us=1.0, copy="memcpy", pct_of_copy=100.0 / us, scheme=scheme, group=0, activation=activation,
             status="ok")
    r.update(extra)
    return r


def report(tmp_path, files):
    for name, doc in files.items():
        (tmp_path / name).write_text(json.dumps(doc))
    out = subprocess.run([sys.executable, str(REPORT), str(tmp_path)], capture_output=True, text=True, check=True)
    return out.stdout


def test_per_token_results_join_their_torch_compile_peers(tmp_path):
    fq = dict(device="GPU", input="normal(0,1)", results=[
        result("per_token", "silu", 1, 18432, 3.5, kernel="sm90.token.cluster"),
        result("per_token", "identity", 16, 7168, 2.5),
        result("nvfp4", "silu", 1, 7168, 2.0, kernel="sm90.decode"),
        result("per_token", "silu", 2, 18432, 9.0, status="skipped"),
    ])
    peers = dict(device="GPU", torch="2.11", results=[
        dict(problem="silu-fp8-token", tokens=1, hidden=18432, peer="torch.compile", us=7.0),
        dict(problem="fp8-token-plain", tokens=16, hidden=7168, peer="torch.compile", us=2.0),
    ])
    text = report(tmp_path, {"peers-fq.json": fq, "peers.json": peers})
    token = text[text.index("**silu-fp8-token**"):]
    assert "| row | 1 | 18432 | 1.00 (memcpy) | 3.50 (3.50-3.50) | 28.6% | sm90.token.cluster | 7.00 | 2.00x |" in token
    plain = text[text.index("**fp8-token-plain**"):]
    assert "| row | 16 | 7168 |" in plain and "| 2.00 | 0.80x |" in plain
    assert "| 2 | 18432 |" not in text  # a skipped measurement is left out
    other = text[text.index("Problems without a peer"):]
    assert "| nvfp4, silu | row | 1 | 7168 |" in other
    assert "per_token" not in other


def test_variant_runs_print_side_by_side(tmp_path):
    ab = dict(device="GPU", input="normal(0,1)", results=[
        result("per_token", "silu", 1, 18432, 3.47, variant="sm90.token.cluster"),
        result("per_token", "silu", 1, 18432, 5.93, variant="sm90.token"),
        result("per_token", "silu", 16, 18432, 6.23, variant="sm90.token"),
    ])
    text = report(tmp_path, {"variants-per-token.json": ab})
    assert "`fq bench --variants sm90.token.cluster,sm90.token`" in text
    assert "| problem | scales | T | H | copy us (which) | sm90.token.cluster us | sm90.token us |" in text
    assert "| per_token, silu | row | 1 | 18432 | 1.00 (memcpy) | 3.47 (3.47-3.47) (29%) | 5.93 (5.93-5.93) (17%) |" in text
    assert "| per_token, silu | row | 16 | 18432 | 1.00 (memcpy) | - | 6.23 (6.23-6.23) (16%) |" in text
