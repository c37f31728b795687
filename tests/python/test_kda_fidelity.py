"""scripts/kda-fidelity on a small made-up op laid out as the KDA and
AccelOpt repositories are (baselines.json, workspaces/<op>/candidates.jsonl,
benchmark.csv, runs/*.py; NKIBench/kernels, NKIBench/reference): the
measurements it reads (median of repeats, parents), the simulated rows, the
summary (ratio, rank correlation, speedup sign) and a failing kernel listed
with its first error line."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "kda-fidelity")

HEAD = """import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
from neuronxcc.nki.language import par_dim
"""

# reps passes of exp over a [128, 2, 1024] input; more passes, more time
KERNEL = HEAD + """
@nki.jit
def kernel(v1):
    import numpy as np
    import neuronxcc.nki.language as nl
    import neuronxcc.nki.isa as nisa
    out = nl.ndarray((128, 2, 1024), dtype=np.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        x = nl.load(v1[nl.arange(128)[:, None], i, nl.arange(1024)[None, :]], dtype=np.float32)
        for r in range(%d):
            x = nisa.activation(op=nl.exp, data=x, dtype=np.float32)
        nl.store(out[nl.arange(128)[:, None], i, nl.arange(1024)[None, :]], value=x)
    return out
"""

BROKEN = HEAD + """
@nki.jit
def kernel(v1):
    raise ValueError("made-up front-end gap")
"""

REF = """import numpy as np
def get_inputs():
    return [np.random.normal(size=(256, 1024)).astype(np.float32)]
def forward(x):
    return np.exp(x)
def transform_to_nki_inputs(inputs):
    return [np.reshape(inputs[0], (128, 2, 1024))]
"""


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def _repos(tmp_path):
    kda, acc = str(tmp_path / "kda"), str(tmp_path / "acc")
    _write(os.path.join(acc, "NKIBench/kernels/tiny_M256_N1024_0.py"), KERNEL % 8)
    _write(os.path.join(acc, "NKIBench/reference/tiny_M256_N1024_numpy_1.py"), REF)
    _write(os.path.join(kda, "baselines.json"), json.dumps({"tiny[case=0]": {
        "baseline_latency_ms": 0.5, "case_id": "0", "kernel": "tiny_M256_N1024_0.py", "op": "tiny"}}))
    ws = os.path.join(kda, "workspaces/tiny")
    _write(os.path.join(ws, "runs/tiny_v1.py"), KERNEL % 1)
    _write(os.path.join(ws, "runs/tiny_v2.py"), KERNEL % 2)
    _write(os.path.join(ws, "runs/tiny_v3.py"), KERNEL % 4)
    _write(os.path.join(ws, "runs/tiny_bad.py"), BROKEN)
    _write(os.path.join(ws, "runs/offline_sim.py"), "print('not a kernel')\n")
    rows = [dict(id="tiny_v1", candidate="runs/tiny_v1.py", parent="baseline:tiny_M256_N1024_0.py",
                 timestamp="t1", passed=True, latency_ms=0.1,
                 metrics={"PE_pct": 0, "Vec_pct": 1, "Scl_pct": 50, "DMA_pct": 90}),
            dict(id="tiny_v3", candidate="runs/tiny_v3.py", parent="tiny_v1", timestamp="t2",
                 passed=True, latency_ms=0.3),
            dict(id="tiny_bad", candidate="runs/tiny_bad.py", parent="tiny_v1", timestamp="t3",
                 passed=True, latency_ms=0.2),
            dict(id="offline", candidate="runs/offline_sim.py", parent="tiny_v1", timestamp="t4",
                 passed=None, latency_ms=None)]
    _write(os.path.join(ws, "candidates.jsonl"), "".join(json.dumps(r) + "\n" for r in rows))
    # tiny_v1 measured twice more (median 0.1 of 0.1, 0.1, 0.4 — the jsonl row
    # repeated in the csv counts once), tiny_v2 only in the csv (parent by path)
    _write(os.path.join(ws, "benchmark.csv"),
           "timestamp,op,candidate,parent,passed,latency_ms,speedup,notes\n"
           "t1,tiny,runs/tiny_v1.py,tiny_M256_N1024_0.py,true,0.1,5,\"first\"\n"
           "t5,tiny,runs/tiny_v1.py,tiny_M256_N1024_0.py,true,0.1,5,re-run\n"
           "t6,tiny,runs/tiny_v1.py,tiny_M256_N1024_0.py,true,0.4,5,noisy\n"
           "t7,tiny,runs/tiny_v2.py,runs/tiny_v1.py,true,0.2,2.5,x\n"
           "t8,tiny,runs/tiny_v2.py,runs/tiny_v1.py,N/A,N/A,N/A,not run\n")
    return kda, acc


def _run(*args):
    env = dict(os.environ)
    env.setdefault("TPBSIM_LIB", os.path.join(ROOT, "build", "lib", "libtpb.so"))
    return subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True, text=True,
                          env=env, timeout=600)


def test_lists_the_measurements(tmp_path):
    kda, acc = _repos(tmp_path)
    r = _run(kda, acc, "--list")
    assert r.returncode == 0, r.stderr
    rows = {l.split()[0]: l for l in r.stdout.splitlines()}
    assert sorted(rows) == ["tiny:baseline", "tiny_bad", "tiny_v1", "tiny_v2", "tiny_v3"]
    assert " 0.1000 ms  parent tiny:baseline" in rows["tiny_v1"]     # median of 0.1, 0.1, 0.4
    assert " 0.2000 ms  parent tiny_v1" in rows["tiny_v2"]            # runs/tiny_v1.py -> tiny_v1
    assert "'ACT': 50" in rows["tiny_v1"] and "'DMA': 90" in rows["tiny_v1"]


def test_simulates_and_summarises(tmp_path):
    kda, acc = _repos(tmp_path)
    out = str(tmp_path / "out.json")
    r = _run(kda, acc, "--work", str(tmp_path / "w"), "--json", out)
    assert r.returncode == 0, r.stderr
    res = json.load(open(out))
    got = {k["id"]: k for k in res["rows"]}
    assert sorted(got) == ["tiny:baseline", "tiny_v1", "tiny_v2", "tiny_v3"]
    for k in got.values():
        st = json.load(open(str(tmp_path / "w" / (k["id"].replace(":", "_") + ".stats.json"))))
        assert abs(k["sim_ms"] - st["sim_time_ns"] / 1e6) < 1e-9
        assert abs(k["ratio"] - k["sim_ms"] / k["ms"]) < 1e-12
    # 1, 2, 4 and 8 exp passes: the simulator orders them as the made-up
    # measurements do (0.1 < 0.2 < 0.3 < 0.5)
    sims = [got[i]["sim_ms"] for i in ("tiny_v1", "tiny_v2", "tiny_v3", "tiny:baseline")]
    assert sims == sorted(sims) and len(set(sims)) == 4
    s = res["summary"]["tiny"]
    assert s["n"] == 4 and abs(s["spearman"] - 1.0) < 1e-12
    assert (s["sign_agree"], s["sign_total"]) == (3, 3)       # v1/base, v2/v1, v3/v1
    assert [f["id"] for f in res["failed"]] == ["tiny_bad"]
    assert "ValueError: made-up front-end gap" in res["failed"][0]["error"]
    assert "tiny_bad" in r.stdout and "made-up front-end gap" in r.stdout


def test_a_wrong_order_lowers_the_agreement(tmp_path):
    kda, acc = _repos(tmp_path)
    # tiny_v3 (4 passes) now measured faster than its parent tiny_v1 (1 pass)
    p = os.path.join(kda, "workspaces/tiny/candidates.jsonl")
    text = open(p).read().replace('"latency_ms": 0.3', '"latency_ms": 0.05')
    open(p, "w").write(text)
    out = str(tmp_path / "out.json")
    r = _run(kda, acc, "tiny_v1", "tiny_v3", "tiny:baseline", "--json", out)
    assert r.returncode == 0, r.stderr
    s = json.load(open(out))["summary"]["tiny"]
    assert s["n"] == 3 and (s["sign_agree"], s["sign_total"]) == (1, 2)
    # ranks measured (v3, v1, base) against simulated (v1, v3, base): 1 - 6*2/24
    assert abs(s["spearman"] - 0.5) < 1e-12
