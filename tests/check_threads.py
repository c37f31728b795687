#!/usr/bin/env python3
"""tpb sim --threads N gives the same bytes as one thread.

usage: check_threads.py TPB GOLDEN_DIR WORKDIR

Every golden matmul case, the golden elementwise cases (softmax,
layernorm, rmsnorm, attention, ...: ELEMENTWISE), a bare matmul kernel whose
shape splits unevenly (K = 100 contraction rows, M = 96 columns, N = 500
elements: 16 blocks of 32 elements, the last one partial, and 100 rows,
neither a multiple of 3 or 7) and a bare elementwise kernel on 97 rows
(every row-split op: tensor_copy on DVE and Activation, tensor_tensor,
tensor_scalar with per-row operands, scalar_tensor_tensor, tensor_reduce,
activation with bias and fused reduce, in place too) run with `tpb run
--threads N --split-all` (every splittable instruction split, however
small) for N = 1, 2, 3, 7; the output .npy files, the stats' cycles and the
trace (but for its host wall-clock figures) must be byte-identical to
--threads 1.  The bare kernels are also run without --split-all at N = 2
(the size threshold path; the elementwise one has 97 x 2048-element rows,
above the threshold) and the golden case's own check passes at every N
(tpb run exits 0).
"""
import json
import os
import shutil
import subprocess
import sys

THREADS = (1, 2, 3, 7)


def uneven_kernel():
    k, m, n = 100, 96, 500
    return {"kernel": "matmul_uneven_threads", "target": "trn2",
            "inputs": [{"name": "a_t", "shape": [k, m], "dtype": "bfloat16"},
                       {"name": "b", "shape": [k, n], "dtype": "bfloat16"}],
            "outputs": [{"name": "out", "shape": [m, n], "dtype": "float32"}],
            "body": [{"op": "tile", "name": "st", "shape": [k, m], "dtype": "bfloat16"},
                     {"op": "load", "dst": "st", "src": "a_t"},
                     {"op": "tile", "name": "mv", "shape": [k, n], "dtype": "bfloat16"},
                     {"op": "load", "dst": "mv", "src": "b"},
                     {"op": "tile", "name": "ps", "shape": [m, n], "dtype": "float32",
                      "buffer": "psum"},
                     {"op": "matmul", "dst": "ps", "stationary": "st", "moving": "mv"},
                     {"op": "matmul", "dst": "ps", "stationary": "st", "moving": "mv",
                      "accumulate": True},
                     {"op": "tile", "name": "o", "shape": [m, n], "dtype": "float32"},
                     {"op": "tensor_copy", "dst": "o", "src": "ps", "engine": "dve"},
                     {"op": "store", "dst": "out", "src": "o"}]}


ELEMENTWISE = ("softmax", "layernorm", "layernorm_bn", "rmsnorm", "attention",
               "attention_causal", "activation_funcs", "activate2_ptr_imm", "alu_ops",
               "exponential_dve", "cumsum")


def rows_kernel():
    """Every row-split op on 97 partitions x 2048 fp32 (above the split
    threshold), chained so each output feeds the next op."""
    r, c = 97, 2048
    t = lambda nm, w, dt="float32": {"op": "tile", "name": nm, "shape": [r, w], "dtype": dt}
    body = [t("x", c), t("y", c), t("m", 1), t("e", c), t("s", 1), t("rs", 1), t("o", c),
            t("h", c, "bfloat16"), t("g", c), t("z", c),
            {"op": "load", "dst": "x", "src": "x_in"},
            {"op": "load", "dst": "y", "src": "y_in"},
            {"op": "tensor_reduce", "dst": "m", "src": "x", "axis": [1], "negate": True,
             "operator": "max"},
            {"op": "activation", "dst": "e", "src": "x", "func": "exp", "bias": "m",
             "reduce_op": "add", "reduce_res": "s"},
            {"op": "activation", "dst": "rs", "src": "s", "func": "reciprocal"},
            {"op": "tensor_scalar", "dst": "o", "src": "e", "op0": "multiply", "operand0": "rs",
             "op1": "add", "operand1": 0.5},
            {"op": "tensor_tensor", "dst": "o", "in0": "o", "in1": "y", "operator": "subtract"},
            {"op": "tensor_copy", "dst": "h", "src": "o", "engine": "dve"},
            {"op": "tensor_copy", "dst": "g", "src": "h", "engine": "act"},
            {"op": "scalar_tensor_tensor", "dst": "z", "in0": "g", "op0": "multiply",
             "scalar": "rs", "op1": "add", "in1": "x"},
            {"op": "activation", "dst": "z", "src": "z", "func": "tanh"},
            {"op": "tensor_tensor", "dst": "z", "in0": "z", "in1": "e", "operator": "max",
             "engine": "pool"},
            {"op": "store", "dst": "out", "src": "z"},
            {"op": "store", "dst": "sums", "src": "s"}]
    return {"kernel": "rows_uneven_threads", "target": "trn2",
            "inputs": [{"name": "x_in", "shape": [r, c], "dtype": "float32"},
                       {"name": "y_in", "shape": [r, c], "dtype": "float32"}],
            "outputs": [{"name": "out", "shape": [r, c], "dtype": "float32"},
                        {"name": "sums", "shape": [r, 1], "dtype": "float32"}],
            "body": body}


# Host wall-clock figures in the trace's metadata: the only bytes that
# change from run to run.
WALL_KEYS = ("wall_seconds", "sim_instructions_per_second")


def without_wall(data):
    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k not in WALL_KEYS}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v
    return json.dumps(strip(json.loads(data)), sort_keys=True)


def run(tpb, subject, out, threads, split_all=True):
    shutil.rmtree(out, ignore_errors=True)
    cmd = [tpb, "run", subject, "-o", out, "-q", "--seed", "3", "--threads", str(threads)]
    if split_all:
        cmd.append("--split-all")
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}:\n{r.stdout}")
    got = {}
    for name in sorted(os.listdir(out)):
        if name.endswith(".npy"):
            with open(os.path.join(out, name), "rb") as f:
                got[name] = f.read()
    with open(os.path.join(out, "trace.json"), "rb") as f:
        got["trace.json"] = without_wall(f.read())
    with open(os.path.join(out, "stats.json")) as f:
        got["cycles"] = json.load(f)["total_cycles"]
    if not any(n.endswith(".npy") for n in got):
        sys.exit(f"FAIL: {subject}: no output .npy in {out}")
    return got


def compare(label, ref, got, threads):
    for key in sorted(set(ref) | set(got)):
        if ref.get(key) != got.get(key):
            sys.exit(f"FAIL: {label}: {key} differs between --threads 1 and --threads {threads}")


def main():
    tpb, golden, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    subjects = [os.path.join(golden, c) for c in sorted(os.listdir(golden))
                if (c.startswith("matmul_") or c in ELEMENTWISE) and
                os.path.isfile(os.path.join(golden, c, "case.json"))]
    if not any(os.path.basename(s) in ELEMENTWISE for s in subjects):
        sys.exit("FAIL: no golden elementwise case found")
    bare = []
    for name, kernel in (("uneven", uneven_kernel()), ("rows", rows_kernel())):
        kdir = os.path.join(work, name)
        os.makedirs(kdir, exist_ok=True)
        kf = os.path.join(kdir, "kernel.json")
        with open(kf, "w") as f:
            json.dump(kernel, f)
        bare.append((name, kf))
    subjects += [kf for _, kf in bare]
    if len(subjects) < 4:
        sys.exit("FAIL: no golden matmul case found")
    for subj in subjects:
        label = os.path.basename(os.path.dirname(subj) if subj.endswith(".json") else subj)
        ref = run(tpb, subj, os.path.join(work, label + "-t1"), 1)
        for t in THREADS[1:]:
            compare(label, ref, run(tpb, subj, os.path.join(work, f"{label}-t{t}"), t), t)
        print(f"ok {label}: --threads {', '.join(map(str, THREADS))} identical")
    for name, kf in bare:
        ref = run(tpb, kf, os.path.join(work, f"{name}-t1"), 1, split_all=False)
        compare(f"{name} (threshold)", ref,
                run(tpb, kf, os.path.join(work, f"{name}-t2"), 2, False), 2)
        print(f"ok {name} without --split-all")


if __name__ == "__main__":
    main()
