#!/usr/bin/env python3
"""tpb sim --threads N gives the same bytes as one thread.

usage: check_threads.py TPB GOLDEN_DIR WORKDIR

Every golden matmul case and a bare kernel whose shape splits unevenly
(K = 100 contraction rows, M = 96 columns, N = 500 elements: 16 blocks of 32
elements, the last one partial, and 100 rows, neither a multiple of 3 or 7)
run with `tpb run --threads N --split-all` (every matmul split, however
small) for N = 1, 2, 3, 7; the output .npy files, the stats' cycles and the
trace (but for its host wall-clock figures) must be byte-identical to
--threads 1.  The bare kernel is also run
without --split-all at N = 2 (the size threshold path) and the golden case's
own check passes at every N (tpb run exits 0).
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
                if c.startswith("matmul_") and os.path.isfile(os.path.join(golden, c, "case.json"))]
    kdir = os.path.join(work, "uneven")
    os.makedirs(kdir, exist_ok=True)
    kf = os.path.join(kdir, "kernel.json")
    with open(kf, "w") as f:
        json.dump(uneven_kernel(), f)
    subjects.append(kf)
    if len(subjects) < 2:
        sys.exit("FAIL: no golden matmul case found")
    for subj in subjects:
        label = os.path.basename(os.path.dirname(subj) if subj.endswith(".json") else subj)
        ref = run(tpb, subj, os.path.join(work, label + "-t1"), 1)
        for t in THREADS[1:]:
            compare(label, ref, run(tpb, subj, os.path.join(work, f"{label}-t{t}"), t), t)
        print(f"ok {label}: --threads {', '.join(map(str, THREADS))} identical")
    ref = run(tpb, kf, os.path.join(work, "uneven-t1"), 1, split_all=False)
    compare("uneven (threshold)", ref, run(tpb, kf, os.path.join(work, "uneven-t2"), 2, False), 2)
    print("ok uneven without --split-all")


if __name__ == "__main__":
    main()
