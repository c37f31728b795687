"""scripts/bench --only python-trace: trace + compile a 100 000-op kernel
from Python, against compiling the same kernel from JSON through the same
libtpb (best of `reps` runs each).  Prints one line with the ratio."""
import json
import os
import sys
import tempfile
import time

import numpy as np

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl
from tpbsim._lib import Context


def mixed(a, n):
    """n iterations of 4 fresh tiles, a sliced load, DVE / Act / Pool ops and
    a sliced store (5 ops): scripts/bench's compile-mixed kernel, looping as
    an NKI user writes it (nl.affine_range: the body is traced once into a
    kernel-format loop, docs/python.md "Loops")."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(n):
        r = (i % 2) * 128
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf, name="t")
        u = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf, name="u")
        v = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf, name="v")
        w = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf, name="w")
        nisa.dma_copy(dst=t, src=a[r:r + 128, :])
        nisa.tensor_scalar(dst=u, data=t, op0=nl.add, operand0=1.0, engine=nisa.engine.vector)
        nisa.activation(dst=v, op=nl.exp, data=u)
        nisa.tensor_tensor(dst=w, data1=v, data2=t, op=nl.add, engine=nisa.engine.gpsimd)
        nisa.dma_copy(dst=out[r:r + 128, :], src=w)
    return out


def mixed_json(n):
    sl = "[(i%2)*128:(i%2)*128+128, :]"
    body = [{"op": "tile", "name": t, "shape": [128, 64], "dtype": "float32"} for t in "tuvw"]
    body += [{"op": "dma_copy", "dst": "t", "src": "a" + sl},
             {"op": "tensor_scalar", "dst": "u", "src": "t", "op0": "add", "operand0": 1.0,
              "engine": "dve"},
             {"op": "activation", "dst": "v", "src": "u", "func": "exp"},
             {"op": "tensor_tensor", "dst": "w", "in0": "v", "in1": "t", "operator": "add",
              "engine": "pool"},
             {"op": "dma_copy", "dst": "out" + sl, "src": "w"}]
    return {"kernel": "mixed", "target": "trn2",
            "inputs": [{"name": "a", "shape": [256, 64], "dtype": "float32"}],
            "outputs": [{"name": "out", "shape": [256, 64], "dtype": "float32"}],
            "body": [{"op": "for", "var": "i", "range": [0, n], "body": body}]}


def main(n=20000, reps=2):
    a = np.zeros((256, 64), np.float32)
    k = nki.jit(mixed)
    work = tempfile.mkdtemp(prefix="tpbsim-bench-")
    path = os.path.join(work, "mixed.json")
    with open(path, "w") as f:
        json.dump(mixed_json(n), f)
    # CPU time (user + system of this process: Python and libtpb alike), so
    # the ratio holds on a loaded machine; wall times are printed too
    inf = float("inf")
    best_py = best_js = tr_best = wall_py = wall_js = inf
    clock = time.process_time
    for r in range(reps):
        w0, t0 = time.perf_counter(), clock()
        c = Context()
        c.compile_file(path, os.path.join(work, "js%d" % r))
        best_js = min(best_js, clock() - t0)
        wall_js = min(wall_js, time.perf_counter() - w0)
        w0, t0 = time.perf_counter(), clock()
        text = tpbsim.kernel_json(k, a, n)
        t1 = clock()
        bundles = Context().compile_json(text, "mixed", os.path.join(work, "py%d" % r))
        best_py = min(best_py, clock() - t0)
        wall_py = min(wall_py, time.perf_counter() - w0)
        tr_best = min(tr_best, t1 - t0)
    same = all(open(os.path.join(work, "js0", "nc0", "sg0", f), "rb").read() ==
               open(os.path.join(work, "py0", "nc0", "sg0", f), "rb").read()
               for f in os.listdir(os.path.join(work, "js0", "nc0", "sg0")) if f.endswith(".bin"))
    import shutil
    shutil.rmtree(work, ignore_errors=True)
    print("%-24s %d ops, %d bundles: Python trace+compile %.3f s CPU (trace %.3f s; wall "
          "%.3f s), JSON compile %.3f s CPU (wall %.3f s), ratio %.2fx CPU (target <= 2x); "
          "streams identical: %s" %
          ("python-trace", 5 * n, bundles, best_py, tr_best, wall_py, best_js, wall_js,
           best_py / best_js, "yes" if same else "NO"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(*[int(x) for x in sys.argv[1:]]))
