"""scripts/fidelity's cases from public NKI kernels run through the Python
front end (docs/fidelity.md, "Published figures from the ported kernels").

The kernels are read from the public repositories (nothing of them is
stored here) with only their import lines rewritten, by the rules of
scripts/nki-sdk-check and scripts/nki-samples-check, traced to kernel JSON
by tpbsim.kernel_json on zero-valued inputs of the published shapes and
dtypes, then compiled and simulated with `tpb sim --timing-only` like every
other fidelity case.

- SDK: aws-neuron-sdk at 162de93, nki/examples/layernorm/layernorm_nki_kernel.py
  (the LayerNorm tutorial's v1 and v2; the tutorial page prints their p50
  latency on trn1).
- SAMPLES: aws-neuron/nki-samples at c4b806e^ (the last commit with
  src/nki_samples/reference/ and test/unit/): the reference kernels whose
  unit tests asserted a latency bound on a NeuronDevice.
"""
import importlib
import importlib.machinery
import json
import os
import re
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SDK_COMMIT = "162de93"
SAMPLES_COMMIT = "c4b806e^"
LAYERNORM_FILE = "nki/examples/layernorm/layernorm_nki_kernel.py"

# (version, rows, cols, published p50 us) -- trn1, fp32 (the example's perf
# mode: its default --nrows 4096 --ncols 8192; the page's text names (300,
# 1000), see docs/fidelity.md)
LAYERNORM = [("v1", 4096, 8192, 2311.0), ("v2", 4096, 8192, 1969.0)]


def _script(name):
    path = os.path.join(ROOT, "scripts", name)
    mod = name.replace("-", "_")
    if mod not in sys.modules:
        sys.modules[mod] = importlib.machinery.SourceFileLoader(mod, path).load_module()
    return sys.modules[mod]


def _front_end():
    """tpbsim from this checkout (its libtpb.so is found next to it)."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import tpbsim
    from tpbsim import nki
    import tpbsim.nki.language as nl
    return tpbsim, nki, nl


def _git_show(repo, commit, path):
    gd = os.path.join(repo, ".git") if os.path.isdir(os.path.join(repo, ".git")) else repo
    return subprocess.run(["git", "--git-dir", gd, "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def _load(work, name, text):
    path = os.path.join(work, name + ".py")
    with open(path, "w") as f:
        f.write(text)
    return importlib.machinery.SourceFileLoader(name, path).load_module()


def _samples_package(repo, work):
    """nki_samples.reference of SAMPLES_COMMIT under work (imports rewritten)."""
    nsc = _script("nki-samples-check")
    ref = "src/nki_samples/reference/"
    files = ["__init__.py", "attention.py", "allocated_attention.py", "allocated_fused_linear.py",
             "vision.py",
             "double_row_matmul.py"]
    for f in files:
        text, _ = nsc.port(_git_show(repo, SAMPLES_COMMIT, ref + f), nsc.RULES)
        out = os.path.join(work, "nki_samples", "reference", f)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w") as fh:
            fh.write(text)
    open(os.path.join(work, "nki_samples", "__init__.py"), "a").close()
    if work not in sys.path:
        sys.path.insert(0, work)


def _samples_cases(nki, nl):
    """(case name, module, kernel, grid, args, targets, bound us, percentile,
    source test) from the unit tests' perf parametrizations at c4b806e^."""
    def t(shape, dt):
        z = np.zeros(shape, np.float32)
        if dt == "float16":
            return z.astype(np.float16)
        return z if dt == "float32" else nki.typed(z, getattr(nl, dt))
    both = ("trn1", "trn2")
    cases = []
    short = {"float32": "f32", "bfloat16": "bf16"}
    for dt, bound in (("float32", 675), ("bfloat16", 536)):
        cases.append((f"sd_attn_{short[dt]}", "attention", "fused_self_attn_for_SD_small_head_size",
                      1, (t((1, 128, 4096), dt), t((1, 4096, 128), dt), t((1, 4096, 128), dt)),
                      both, bound * 1.05, "p1", "test_SD_attention_small_head.py"))
    for L, dt, bound in ((4096, "float32", 410), (4096, "bfloat16", 380), (5120, "bfloat16", 586)):
        cases.append((f"alloc_sd_{L}_{short[dt]}", "allocated_attention",
                      "allocated_fused_self_attn_for_SD_small_head_size", 1,
                      (t((1, 128, L), dt), t((1, 128, L), dt), t((1, L, 128), dt)),
                      both, bound * 1.05, "p50", "test_allocated_SD_attention_small_head.py"))
    for s, dim, dh, dt, bound in ((128, 512, 512, "float16", 25), (512, 1024, 384, "bfloat16", 40),
                                  (128, 1024, 512, "bfloat16", 28)):
        cases.append((f"qkv_{s}_{dim}_{dh}", "allocated_fused_linear",
                      "allocated_fused_rms_norm_qkv", None, (t((1, s, dim), dt), t((dim, dh), dt)),
                      both, bound, "p50", "test_rmsnorm_qkv.py"))
    for N, C, H, W, o, dt, us in ((1, 64, 56, 56, 7, "float32", 65), (2, 128, 28, 28, 7, "float32", 109),
                                  (1, 256, 14, 14, 7, "float16", 88),
                                  (4, 64, 56, 56, (7, 7), "float32", 152),
                                  (2, 128, 28, 28, (14, 14), "float32", 327),
                                  (1, 512, 7, 7, 1, "float32", 14),
                                  (8, 64, 32, 32, (4, 4), "float16", 103),
                                  (2, 2048, 32, 32, (3, 3), "float32", 564),
                                  (2, 64, 256, 256, 1, "float32", 255)):
        oh, ow = (o, o) if isinstance(o, int) else o
        cases.append((f"pool_{N}_{C}_{H}_{oh}x{ow}", "vision", "adaptive_avg_pool2d_kernel",
                      None, (t((N, C, H, W), dt), o), both, us * 1.05, "p99",
                      "test_adaptive_avg_pool2d.py"))
    cases.append(("select_scatter", "vision", "select_and_scatter_kernel", None,
                  (t((8, 64, 112, 112), "float32"), t((8, 64, 56, 56), "float32")), both, 4500,
                  "p50", "test_select_and_scatter.py"))
    M, K, N = 512, 16384, 1024
    cases.append(("double_row_mm", "double_row_matmul", "quantized_double_row_matmul", None,
                  (t((M, K), "bfloat16"), t((K // 2, 2 * N), "float8_e4m3"), t((128, N), "bfloat16"),
                   2, 2, 16), ("trn2",), 320, "p99", "test_double_row_matmul.py"))
    return cases


def _trace(tpbsim, kernel, args, target, work, name):
    """kernel JSON of the traced kernel for target; (path, None) or (None, why)."""
    try:
        d = json.loads(tpbsim.kernel_json(kernel, *args))
    except Exception as e:   # the front end's error, reported in the row
        return None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    d["target"] = target
    path = os.path.join(work, f"{name}_{target}.json")
    with open(path, "w") as f:
        json.dump(d, f)
    return path, None


def _timed(a, run, tpbsim, kernel, args, target, work, name):
    """Trace, compile and simulate (timing only): (stats, None) or (None, why)."""
    path, why = _trace(tpbsim, kernel, args, target, work, name)
    if path is None:
        return None, why
    return run(a.tpb, path, work, f"{name}_{target}", target)


def _summary(util, st):
    parts = [f"{lab} {util(st, eng):4.1f}" for lab, eng in (("PE", "PE"), ("DVE", "DVE"),
                                                            ("ACT", "Activation"))]
    parts.append(f"DMA {100.0 * st['cores'][0].get('dma_utilisation', 0.0):4.1f}")
    return "; ".join(parts)


def _row(name, target, pubs, pub, mark, st, why, util, note):
    """One output row (1 when the case did not run, else 0); the ratio is
    marked with mark ("b": against a bound)."""
    if st is None:
        print(f"{name:18} {target:6} {pubs} {'-':>11} {'-':>6}  not run: {why}"[:300])
        return 1
    us = st["sim_time_ns"] / 1e3
    ratio = f"{us / pub:{6 - len(mark)}.2f}{mark}"
    print(f"{name:18} {target:6} {pubs} {us:8.1f} us {ratio}  {note}; {_summary(util, st)}  "
          f"[{st['instructions']} insts]")
    return 0


def layernorm_cases(a, work, run, util):
    """The LayerNorm tutorial's v1 and v2 (SDK 162de93), trn1 fp32."""
    if not a.sdk:
        print(f"{'layernorm_*':18} {'trn1':6} skipped: no --sdk (aws-neuron-sdk checkout or git dir)")
        return 0
    sel = [c for c in LAYERNORM if not a.only or re.search(a.only, f"layernorm_{c[0]} trn1")]
    if not sel:
        return 0
    tpbsim, nki, nl = _front_end()
    sdk = _script("nki-sdk-check")
    text, _ = sdk.port(_git_show(a.sdk, SDK_COMMIT, LAYERNORM_FILE), sdk.BETA1_IMPORTS + sdk.IMPORTS)
    mod = _load(work, "layernorm_nki_kernel", text)
    bad = 0
    for v, R, C, pub in sel:
        name = f"layernorm_{v}"
        x, g = np.zeros((R, C), np.float32), np.zeros(C, np.float32)
        st, why = _timed(a, run, tpbsim, getattr(mod, f"nki_layernorm_kernel_{v}"),
                         (x, 1e-5, g, g), "trn1", work, name)
        bad += _row(name, "trn1", f"{pub:7.0f} us", pub, "", st, why, util, f"{R}x{C} fp32, p50")
    return bad


def samples_cases(a, work, run, util):
    """nki-samples' reference kernels against their perf tests' bounds."""
    if not a.samples:
        print(f"{'nki-samples *':18} {'-':6} skipped: no --samples (nki-samples checkout or git dir)")
        return 0
    tpbsim, nki, nl = _front_end()
    cases = [c for c in _samples_cases(nki, nl)
             if not a.only or any(re.search(a.only, f"{c[0]} {tg}") for tg in c[5])]
    if not cases:
        return 0
    _samples_package(a.samples, work)
    bad = 0
    for name, mod, fn, grid, args, targets, bound, pct, _test in cases:
        kernel = getattr(importlib.import_module("nki_samples.reference." + mod), fn)
        if grid:
            kernel = kernel[grid]
        for target in targets:
            if a.only and not re.search(a.only, f"{name} {target}"):
                continue
            st, why = _timed(a, run, tpbsim, kernel, args, target, work, name)
            bad += _row(name, target, f"<={bound:5.0f} us", bound, "b", st, why, util,
                        f"{pct} bound")
    return bad
