"""dynamic_range / fori_loop with a register trip count (docs/compiler.md
"Dynamic loops").

One compiled artifact per kernel runs with several trip counts taken from
an input tensor (loaded into a register): 0, 1, counts below and above
the front-end's compile-time guess.  Every run must match an independent
NumPy reference (rows the loop does not reach stay unwritten: NaN), and
equal the same kernel written as an unrolled sequential_range of that
count; the emitted program must not grow with the trip count.  Also: the
refusals (nested dynamic loop, two dynamic loops, step <= 0, a launch grid,
"reg_start" without "reg" or naming no register).
usage: check_dynamic_loops.py <tpb> <workdir>
"""
import json
import os
import re
import subprocess
import sys

import numpy as np

import check_rolled_loops

ROWS = 128


def tile(name, shape, buf="sbuf", dtype="float32"):
    return {"op": "tile", "name": name, "shape": shape, "dtype": dtype, "buffer": buf}


def prologue():
    return [tile("tn", [1, 1], dtype="int32"), {"op": "load", "dst": "tn", "src": "n"},
            {"op": "register_alloc", "reg": "cnt"},
            {"op": "register_load", "dst": "cnt", "src": "tn"}]


def k_stream(loop, rng_):
    """out[i] = a[i] + b[i] per 128-row block; total = sum of the a blocks
    (a loop-carried accumulator read after the loop)."""
    body = [tile("ta", [ROWS, 64]), tile("tb", [ROWS, 64]),
            {"op": "load", "dst": "ta", "src": "a[i*128:(i+1)*128, :]"},
            {"op": "load", "dst": "tb", "src": "b[i*128:(i+1)*128, :]"},
            {"op": "tensor_tensor", "dst": "tb", "in0": "ta", "in1": "tb", "operator": "add"},
            {"op": "tensor_tensor", "dst": "acc", "in0": "acc", "in1": "ta", "operator": "add"},
            {"op": "store", "dst": "out[i*128:(i+1)*128, :]", "src": "tb"}]
    nb = 10
    k = {"kernel": "dyn_stream", "target": "trn2",
         "inputs": [{"name": "a", "shape": [ROWS * nb, 64], "dtype": "float32"},
                    {"name": "b", "shape": [ROWS * nb, 64], "dtype": "float32"},
                    {"name": "n", "shape": [1, 1], "dtype": "int32"}],
         "outputs": [{"name": "out", "shape": [ROWS * nb, 64], "dtype": "float32"},
                     {"name": "total", "shape": [ROWS, 64], "dtype": "float32"}],
         "body": prologue() + [tile("acc", [ROWS, 64]),
                               {"op": "memset", "dst": "acc", "value": 0.0},
                               {"op": loop, "var": "i", "range": rng_, "body": body},
                               {"op": "store", "dst": "total", "src": "acc"}]}

    def ref(x, idx):
        out = np.full((ROWS * nb, 64), np.nan, np.float32)
        tot = np.zeros((ROWS, 64), np.float32)
        for i in idx:
            s = slice(i * ROWS, (i + 1) * ROWS)
            out[s] = x["a"][s] + x["b"][s]
            tot = tot + x["a"][s]
        return {"out": out, "total": tot}
    return k, ref, nb


def k_multi(loop, rng_):
    """check_rolled_loops' multi-engine body (DMA in, PE matmul, Activation
    exp, DVE scale, Pool add, DMA out) in a dynamic loop, and a post-loop op
    on other data."""
    nb = 8
    k, _ = check_rolled_loops.k_multi(nb)
    lp = k["body"][-1]
    lp["op"], lp["range"] = loop, rng_
    k["kernel"] = "dyn_multi"
    k["inputs"].append({"name": "n", "shape": [1, 1], "dtype": "int32"})
    k["outputs"].append({"name": "w2", "shape": [128, 128], "dtype": "float32"})
    k["body"] = prologue() + k["body"] + [
        {"op": "activation", "dst": "w", "src": "w", "func": "exp"},
        {"op": "store", "dst": "w2", "src": "w"}]

    def ref(x, idx):
        out = np.full((128 * nb, 128), np.nan, np.float32)
        wt = x["w_in"].astype(np.float64).T
        for i in idx:
            s = slice(i * 128, (i + 1) * 128)
            y = np.exp(wt @ x["x_in"][s].astype(np.float64))
            out[s] = (y * 0.5 + y).astype(np.float32)
        return {"out": out, "w2": np.exp(x["w_in"].astype(np.float64)).astype(np.float32)}
    return k, ref, nb


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True)


def compile_k(tpb, work, name, kernel, opts=()):
    kf = os.path.join(work, name + ".json")
    with open(kf, "w") as f:
        json.dump(kernel, f)
    art = os.path.join(work, name + ".art")
    st = run([tpb, "compile", kf, "-o", art, "--stats"] + list(opts)).stdout
    bundles = sum(int(m.group(1)) for m in re.finditer(r"^(?:PE|Activation|Pool|DVE|SP)\s+(\d+)$",
                                                       st, re.M))
    return art, bundles


def sim(tpb, work, name, art, kernel, inputs):
    out = os.path.join(work, name + ".out")
    stats = os.path.join(work, name + ".stats")
    run([tpb, "sim", art, "-o", out, "-q", "--stats-json", stats, "--inputs"] +
        ["%s=%s" % kv for kv in inputs.items()])
    with open(stats) as f:
        cycles = json.load(f)["total_cycles"]
    return {o["name"]: np.load(os.path.join(out, o["name"] + ".npy"))
            for o in kernel["outputs"]}, cycles


def check_kernel(tpb, work, name, make, rng_, counts, idx_of, guess=None):
    kernel, ref, nb = make("dynamic_range" if name != "fori" else "fori_loop", rng_)
    if guess:   # the compile-time iterations must stay inside the tensors
        kernel["body"][-2]["guess"] = guess
    art, bundles = compile_k(tpb, work, name, kernel)
    rng = np.random.default_rng(1)
    arrays, inputs = {}, {}
    for t in kernel["inputs"]:
        if t["name"] == "n":
            continue
        arrays[t["name"]] = rng.uniform(-1, 1, t["shape"]).astype(np.float32)
        inputs[t["name"]] = os.path.join(work, "%s.%s.npy" % (name, t["name"]))
        np.save(inputs[t["name"]], arrays[t["name"]])
    for n in counts:
        inputs["n"] = os.path.join(work, "%s.n%d.npy" % (name, n))
        np.save(inputs["n"], np.array([[n]], np.int32))
        got, cyc = sim(tpb, work, "%s.%d" % (name, n), art, kernel, inputs)
        idx = idx_of(n)
        want = ref(arrays, idx)
        # the same loop unrolled at compile time with this count
        start = rng_[0] if len(rng_) > 1 else 0
        step = rng_[2] if len(rng_) > 2 else 1
        plain, _, _ = make("sequential_range", [start, max(start, start + len(idx) * step), step])
        part, ub = compile_k(tpb, work, "%s.u%d" % (name, n), plain, ["--buffers", "1"])
        ugot, ucyc = sim(tpb, work, "%s.u%d" % (name, n), part, plain, inputs)
        for o in kernel["outputs"]:
            a = got[o["name"]]
            np.testing.assert_allclose(a, want[o["name"]], rtol=2e-3, atol=2e-3,
                                       err_msg="%s n=%d %s" % (name, n, o["name"]))
            assert np.array_equal(a, ugot[o["name"]], equal_nan=True), \
                (name, n, o["name"], "differs from the unrolled loop")
        print("%-7s n=%2d: %4d bundles (unrolled %4d), cycles %6d (unrolled %6d), values "
              "identical" % (name, n, bundles, ub, cyc, ucyc))


def refused(tpb, work, name, kernel, want):
    kf = os.path.join(work, name + ".json")
    with open(kf, "w") as f:
        json.dump(kernel, f)
    p = subprocess.run([tpb, "compile", kf, "-o", os.path.join(work, name + ".art")],
                       capture_output=True, text=True)
    assert p.returncode == 1 and want in p.stderr, (name, p.returncode, p.stderr)
    print("refused %-8s: %s" % (name, p.stderr.strip().splitlines()[-1]))


def python_rolled(tpb, work):
    """A Python-traced kernel (python/tpbsim) whose sequential_range body
    the tracer traces once into a sequential_range loop op (docs/python.md
    "Loops"): --loops rolls it, values identical, cycles within 1 % of the
    unrolled compile."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import tpbsim
    import tpbsim.nki.isa as nisa
    import tpbsim.nki.language as nl

    def stream(a, b):
        out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        for i in nl.sequential_range(a.shape[0] // 128):
            ta = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
            tb = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=ta, src=a[i * 128:(i + 1) * 128, :])
            nisa.dma_copy(dst=tb, src=b[i * 128:(i + 1) * 128, :])
            nisa.tensor_tensor(dst=ta, data1=ta, data2=tb, op=nl.add)
            nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=ta)
        return out
    rng = np.random.default_rng(3)
    a, b = (rng.uniform(-1, 1, (128 * 16, 64)).astype(np.float32) for _ in range(2))
    kernel = json.loads(tpbsim.kernel_json(stream, a, b))
    inputs = {}
    for nm, arr in (("a", a), ("b", b)):
        inputs[nm] = os.path.join(work, "py.%s.npy" % nm)
        np.save(inputs[nm], arr)
    res = {}
    for tag, opts in (("unrolled", ["--buffers", "1"]), ("rolled", ["--buffers", "1", "--loops"])):
        art, bundles = compile_k(tpb, work, "py." + tag, kernel, opts)
        got, cyc = sim(tpb, work, "py." + tag, art, kernel, inputs)
        res[tag] = (bundles, got[kernel["outputs"][0]["name"]], cyc)
    (ub, uo, uc), (rb, ro, rc) = res["unrolled"], res["rolled"]
    np.testing.assert_allclose(ro, a + b, rtol=1e-6)
    assert np.array_equal(ro, uo) and rb < ub and abs(rc - uc) <= 0.01 * uc, (ub, rb, uc, rc)
    print("python  sequential_range(16) rolled: %d -> %d bundles, cycles %d vs %d, values "
          "identical" % (ub, rb, rc, uc))


def main():
    tpb, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    guess = 6   # the front-end's default "guess": counts below and above it
    python_rolled(tpb, work)
    check_kernel(tpb, work, "stream", k_stream, ["cnt"], [0, 1, 3, guess + 3],
                 lambda n: list(range(n)))
    check_kernel(tpb, work, "strided", k_stream, [1, "cnt", 3], [0, 1, 2, 8, 10],
                 lambda n: list(range(1, n, 3)), guess=3)
    check_kernel(tpb, work, "fori", k_multi, [0, "cnt"], [0, 2, 8], lambda n: list(range(n)))
    # refusals
    k, _, _ = k_stream("dynamic_range", ["cnt"])
    inner = k["body"][-2]
    nested = json.loads(json.dumps(k))
    nested["body"][-2] = {"op": "for", "var": "j", "range": [1], "body": [inner]}
    refused(tpb, work, "nested", nested, "cannot be nested in another loop")
    two = json.loads(json.dumps(k))
    two["body"].insert(-1, json.loads(json.dumps(inner)))
    refused(tpb, work, "two", two, "only one dynamic_range / fori_loop / while_loop loop per kernel")
    step0 = json.loads(json.dumps(k))
    step0["body"][-2]["range"] = [0, "cnt", 0]
    refused(tpb, work, "step0", step0, "step must be a positive compile-time integer")
    regstart = json.loads(json.dumps(k))
    regstart["body"][-2]["range"] = ["cnt", "cnt"]
    refused(tpb, work, "regstart", regstart, "only the stop of a dynamic_range may be a register")
    # a register start is the loop variable's ("reg_start", with "reg"; the
    # Python front-end counts stop - start from 0)
    regfrom = json.loads(json.dumps(k))
    regfrom["body"][-2]["reg_start"] = "cnt"
    refused(tpb, work, "reg_start", regfrom, "field 'reg_start': needs \"reg\"")
    regfrom["body"][-2]["reg"] = "ri"
    regfrom["body"][-2]["reg_start"] = "nope"
    refused(tpb, work, "reg_start_name", regfrom, "field 'reg_start': 'nope' is not a register")
    moving = json.loads(json.dumps(k))   # a compute operand that moves with i
    moving["body"][-3] = tile("acc", [ROWS, 640])
    moving["body"][-2]["body"][5]["dst"] = moving["body"][-2]["body"][5]["in0"] = \
        "acc[:, i*64:(i+1)*64]"
    moving["body"][-1]["src"] = "acc[:, 0:64]"
    refused(tpb, work, "moving", moving, "dynamic_range: the loop body cannot be emitted as one "
            "loop: an instruction differs")
    oneeng = json.loads(json.dumps(k))   # the trip count in one engine's register only
    oneeng["body"][3] = {"op": "load_tensor_to_register", "src": "tn", "reg": "cnt",
                         "engine": "sp"}
    refused(tpb, work, "oneeng", oneeng, "the trip-count register is not set on every engine")
    grid = json.loads(json.dumps(k))
    grid["grid"] = [2]
    refused(tpb, work, "grid", grid, "supported in kernels of one program on one core only")
    # while_loop: the condition must be a register, and the body must set it
    # on every engine (each engine tests its own copy)
    wl = json.loads(json.dumps(k))
    wl["body"][-2] = {"op": "while_loop", "cond": "cnt", "body": [
        {"op": "tensor_tensor", "dst": "acc", "in0": "acc", "in1": "acc", "operator": "add"},
        {"op": "load_tensor_to_register", "src": "tn", "reg": "cnt", "engine": "sp"}]}
    refused(tpb, work, "while_oneeng", wl, "while_loop: the loop body cannot be emitted as one "
            "loop: the body does not set the condition register on every engine")
    # an empty body (no instruction) never sets it: a non-zero condition
    # would loop forever, so it is refused, not dropped as an empty loop
    wl["body"][-2]["body"] = []
    refused(tpb, work, "while_empty", wl, "while_loop: the body does not set the condition "
            "register (it has no instruction")
    wl["body"][-2]["cond"] = "nope"
    refused(tpb, work, "while_cond", wl, "field 'cond'")
    print("dynamic loops: ok")


if __name__ == "__main__":
    main()
