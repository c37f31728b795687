"""bench_rowwise - the softmax-big / layernorm-big workloads of scripts/bench
(large row-wise elementwise kernels): the kernel JSON, the NumPy reference,
NumPy timed with the same process boundaries as `tpb sim`, the report line."""
import json
import os
import time

import numpy as np


def rowwise_kernel(kind, rows, cols):
    """softmax or layernorm over the last axis of x[rows, cols] fp32, one
    128-row tile per loop iteration (the golden cases' op sequences)."""
    t = lambda nm, w: {"op": "tile", "name": nm, "shape": [128, w], "dtype": "float32"}
    sl = "[i*128:(i+1)*128, :]"
    if kind == "softmax":
        body = [t("t", cols), t("nmax", 1), t("e", cols), t("s", 1), t("r", 1), t("o", cols),
                {"op": "load", "dst": "t", "src": "x" + sl},
                {"op": "tensor_reduce", "dst": "nmax", "src": "t", "axis": [1], "negate": True,
                 "operator": "max"},
                {"op": "activation", "dst": "e", "src": "t", "func": "exp", "bias": "nmax",
                 "reduce_op": "add", "reduce_res": "s"},
                {"op": "activation", "dst": "r", "src": "s", "func": "reciprocal"},
                {"op": "tensor_scalar", "dst": "o", "src": "e", "op0": "multiply", "operand0": "r"},
                {"op": "store", "dst": "out" + sl, "src": "o"}]
        pre, ins = [], [{"name": "x", "shape": [rows, cols], "dtype": "float32"}]
    else:
        inv = 1.0 / cols
        body = [t("t", cols), t("sum", 1), t("mean", 1), t("xc", cols), t("sq", cols), t("vs", 1),
                t("var", 1), t("rstd", 1), t("y", cols), t("o", cols),
                {"op": "load", "dst": "t", "src": "x" + sl},
                {"op": "tensor_reduce", "dst": "sum", "src": "t", "axis": [1], "operator": "add"},
                {"op": "tensor_scalar", "dst": "mean", "src": "sum", "op0": "multiply", "operand0": inv},
                {"op": "tensor_scalar", "dst": "xc", "src": "t", "op0": "subtract", "operand0": "mean"},
                {"op": "activation", "dst": "sq", "src": "xc", "func": "square", "reduce_op": "add",
                 "reduce_res": "vs"},
                {"op": "tensor_scalar", "dst": "var", "src": "vs", "op0": "multiply", "operand0": inv,
                 "op1": "add", "operand1": 1e-5},
                {"op": "activation", "dst": "rstd", "src": "var", "func": "rsqrt"},
                {"op": "scalar_tensor_tensor", "dst": "y", "in0": "xc", "op0": "multiply", "scalar": "rstd",
                 "op1": "multiply", "in1": "gb"},
                {"op": "tensor_tensor", "dst": "o", "in0": "y", "in1": "bb", "operator": "add"},
                {"op": "store", "dst": "out" + sl, "src": "o"}]
        bc = [[0, 128], [1, cols]]
        pre = [t("gb", cols), t("bb", cols),
               {"op": "load", "dst": "gb", "src": {"tensor": "gamma", "offset": "0", "ap": bc}},
               {"op": "load", "dst": "bb", "src": {"tensor": "beta", "offset": "0", "ap": bc}}]
        ins = [{"name": "x", "shape": [rows, cols], "dtype": "float32"},
               {"name": "gamma", "shape": [1, cols], "dtype": "float32"},
               {"name": "beta", "shape": [1, cols], "dtype": "float32"}]
    return {"kernel": f"{kind}_{rows}x{cols}", "target": "trn2", "inputs": ins,
            "outputs": [{"name": "out", "shape": [rows, cols], "dtype": "float32"}],
            "body": pre + [{"op": "for", "var": "i", "range": [0, rows // 128], "body": body}]}


def rowwise_numpy(kind, ins):
    """The same math in float32 NumPy (the speed reference)."""
    x = ins["x"]
    if kind == "softmax":
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    mu = x.mean(axis=1, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(axis=1, keepdims=True)
    return xc / np.sqrt(var + np.float32(1e-5)) * ins["gamma"] + ins["beta"]


def make_rowwise(tpb, work, kind, rows, cols, run, simulate, threads=(1,)):
    """Compile (run) and simulate (simulate) a large softmax/layernorm with
    `tpb sim --threads T` for each T in threads (the outputs and cycles
    must equal the first's), check it against a float64 NumPy reference
    (the golden cases' tolerances); returns ([(T, stats)], float32 NumPy
    callable, why).  The first stats get numpy_e2e: NumPy with the `tpb
    sim` process's boundaries."""
    name = f"{kind}-big"
    kdir = os.path.join(work, name + "-kernel")
    os.makedirs(os.path.join(kdir, "inputs"), exist_ok=True)
    kf = os.path.join(kdir, "kernel.json")
    with open(kf, "w") as f:
        json.dump(rowwise_kernel(kind, rows, cols), f)
    art = os.path.join(work, name)
    r = run([tpb, "compile", kf, "-o", art])
    if r.returncode != 0:
        return None, None, "compile failed: " + (r.stdout.strip().splitlines() or ["?"])[-1]
    rng = np.random.default_rng(0)
    ins = {"x": (3.0 * rng.standard_normal((rows, cols))).astype(np.float32)}
    if kind == "layernorm":
        ins["gamma"] = rng.uniform(0.5, 1.5, (1, cols)).astype(np.float32)
        ins["beta"] = rng.standard_normal((1, cols)).astype(np.float32)
    for nm, v in ins.items():
        np.save(os.path.join(kdir, "inputs", nm + ".npy"), v)
    runs, ref, why = [], None, None
    for t in threads:
        out = os.path.join(work, f"{name}-out-t{t}")
        st, why = simulate(tpb, art, os.path.join(kdir, "inputs"), out, threads=t)
        if st is None:
            return None, None, why
        with open(os.path.join(out, "out", "out.npy"), "rb") as f:
            got_bytes = f.read()
        if ref is not None and (got_bytes != ref[0] or st["total_cycles"] != ref[1]):
            return None, None, f"--threads {t} output or cycles differ from --threads {threads[0]}"
        ref = ref or (got_bytes, st["total_cycles"])
        runs.append((t, st))
    if runs:
        st = runs[0][1]
        got = np.load(os.path.join(work, f"{name}-out-t{threads[0]}", "out", "out.npy"))
        want = rowwise_numpy(kind, {k: v.astype(np.float64) for k, v in ins.items()})
        rtol, atol = (1e-4, 1e-7) if kind == "softmax" else (1e-4, 1e-5)  # the golden cases'
        if not np.allclose(got, want, rtol=rtol, atol=atol):
            return None, None, f"simulated {kind} differs from NumPy (max abs err " \
                               f"{np.abs(got - want).max():.3g})"
        st["numpy_e2e"] = numpy_e2e(kind, os.path.join(kdir, "inputs"), list(ins),
                                    os.path.join(work, name + "-numpy-out.npy"))
    return runs, (lambda: rowwise_numpy(kind, ins)), why


def numpy_e2e(kind, indir, names, out, reps=3):
    """NumPy with the boundaries of a `tpb sim` process: load the inputs'
    .npy files, compute, save the output; best wall and best CPU (user +
    sys of this process) of reps runs, in seconds."""
    wall = cpu = 1e9
    for _ in range(reps):
        w0, c0 = time.perf_counter(), time.process_time()
        ins = {nm: np.load(os.path.join(indir, nm + ".npy")) for nm in names}
        np.save(out, rowwise_numpy(kind, ins))
        wall = min(wall, time.perf_counter() - w0)
        cpu = min(cpu, time.process_time() - c0)
    return {"wall": wall, "cpu": cpu}


def report_rowwise(name, runs, np_s, why):
    """sim_run against NumPy's computation, and the whole `tpb sim` process
    against numpy_e2e, in wall time and in CPU time (the CPU figures are
    the steadier ones on a shared machine): one line per `tpb sim
    --threads` count in runs [(threads, stats)]; NumPy is single-threaded
    in every one."""
    if runs is None:
        print(f"{name:24s} skipped: {why}")
        return
    ne = runs[0][1]["numpy_e2e"]
    for i, (threads, st) in enumerate(runs):
        e2e = st["process_wall"]
        label = name if i == 0 else ""
        print(f"{label:24s} {st['instructions']:>11,d} inst  {st['total_cycles']:>12,d} cycles  "
              f"sim {st['wall_seconds']:8.3f} s  e2e {e2e:7.3f} s (cpu {st['process_cpu']:6.3f} s)  "
              f"numpy {np_s * 1e3:8.1f} ms, e2e {ne['wall'] * 1e3:8.1f} ms (cpu {ne['cpu'] * 1e3:6.1f} ms)  "
              f"ratio sim {st['wall_seconds'] / np_s:5.2f}x, e2e {e2e / ne['wall']:5.2f}x, "
              f"e2e cpu {st['process_cpu'] / ne['cpu']:5.2f}x  (tpb sim --threads {threads})")
