"""Rolled loops (docs/compiler.md "Rolled loops"): rolled vs unrolled.

Each kernel is compiled twice, plain (every loop unrolled) and with
--loops (or a per-loop "roll"), and both are simulated on the same inputs:
the outputs must be bit-identical and match a NumPy reference, the
simulated cycles must agree within CYCLE_TOL, and the rolled artifact must
be smaller.  Also: the iteration numbers in the trace, the refusals, and
(with --tutorial) a fully optimised tutorial matmul (trn1 or trn2): < 5000
bundles rolled, timing-only cycles within 1 % of the unrolled form.
usage: check_rolled_loops.py <tpb> <workdir> [--tutorial <kernel.json>]
"""
import json
import os
import re
import subprocess
import sys

import numpy as np

CYCLE_TOL = 0.01   # rolled cycles within 1 % of the unrolled form


def tile(name, shape, buf="sbuf", dtype="float32"):
    return {"op": "tile", "name": name, "shape": shape, "dtype": dtype, "buffer": buf}


def k_stream(n, loop="sequential_range", roll=None):
    """load a, load b, add on DVE, store: n iterations of 128 rows."""
    lp = {"op": loop, "var": "i", "range": [n], "body": [
        tile("ta", [128, 64]), tile("tb", [128, 64]),
        {"op": "load", "dst": "ta", "src": "a[i*128:(i+1)*128, :]"},
        {"op": "load", "dst": "tb", "src": "b[i*128:(i+1)*128, :]"},
        {"op": "tensor_tensor", "dst": "ta", "in0": "ta", "in1": "tb", "operator": "add"},
        {"op": "store", "dst": "out[i*128:(i+1)*128, :]", "src": "ta"}]}
    if roll is not None:
        lp["roll"] = roll
    k = {"kernel": "roll_stream", "target": "trn2",
         "inputs": [{"name": "a", "shape": [128 * n, 64], "dtype": "float32"},
                    {"name": "b", "shape": [128 * n, 64], "dtype": "float32"}],
         "outputs": [{"name": "out", "shape": [128 * n, 64], "dtype": "float32"}],
         "body": [lp]}
    ref = lambda x: {"out": x["a"] + x["b"]}
    return k, ref


def k_balance(n):
    """A "roll": true loop of independent ops that name no engine: the
    compiler spreads them over DVE, Pool and Activation by workload
    (docs/compiler.md "Balancing") and every iteration repeats the first
    one's engines, so the loop still rolls."""
    lp = {"op": "for", "var": "i", "range": [n], "roll": True, "body": [
        tile("ta", [128, 256]), tile("tb", [128, 256]), tile("tc", [128, 256]),
        tile("td", [128, 256]),
        {"op": "load", "dst": "ta", "src": "a[i*128:(i+1)*128, :]"},
        {"op": "load", "dst": "tb", "src": "b[i*128:(i+1)*128, :]"},
        {"op": "tensor_scalar", "dst": "tc", "src": "ta", "op0": "multiply", "operand0": 0.5},
        {"op": "tensor_scalar", "dst": "td", "src": "tb", "op0": "multiply", "operand0": 2.0},
        {"op": "tensor_tensor", "dst": "ta", "in0": "ta", "in1": "tb", "operator": "add"},
        {"op": "tensor_tensor", "dst": "tc", "in0": "tc", "in1": "td", "operator": "add"},
        {"op": "tensor_tensor", "dst": "ta", "in0": "ta", "in1": "tc", "operator": "add"},
        {"op": "store", "dst": "out[i*128:(i+1)*128, :]", "src": "ta"}]}
    k = {"kernel": "roll_balance", "target": "trn2",
         "inputs": [{"name": "a", "shape": [128 * n, 256], "dtype": "float32"},
                    {"name": "b", "shape": [128 * n, 256], "dtype": "float32"}],
         "outputs": [{"name": "out", "shape": [128 * n, 256], "dtype": "float32"}],
         "body": [lp]}
    ref = lambda x: {"out": (x["a"] + x["b"]) + (x["a"] * 0.5 + x["b"] * 2.0)}
    return k, ref


def k_multi(n):
    """Every engine in the body: DMA in, PE matmul into PSUM, Activation
    (exp) out of PSUM, DVE scale, Pool add, DMA out."""
    body = [tile("x", [128, 128]), tile("p", [128, 128], "psum"), tile("y", [128, 128]),
            tile("z", [128, 128]),
            {"op": "load", "dst": "x", "src": "x_in[i*128:(i+1)*128, :]"},
            {"op": "matmul", "dst": "p", "stationary": "w", "moving": "x"},
            {"op": "activation", "dst": "y", "src": "p", "func": "exp"},
            {"op": "tensor_scalar", "dst": "z", "src": "y", "op0": "multiply", "operand0": 0.5},
            {"op": "tensor_tensor", "dst": "z", "in0": "z", "in1": "y", "operator": "add",
             "engine": "pool"},
            {"op": "store", "dst": "out[i*128:(i+1)*128, :]", "src": "z"}]
    k = {"kernel": "roll_multi", "target": "trn2",
         "inputs": [{"name": "x_in", "shape": [128 * n, 128], "dtype": "float32"},
                    {"name": "w_in", "shape": [128, 128], "dtype": "float32"}],
         "outputs": [{"name": "out", "shape": [128 * n, 128], "dtype": "float32"}],
         "body": [tile("w", [128, 128]), {"op": "load", "dst": "w", "src": "w_in"},
                  {"op": "sequential_range", "var": "i", "range": [n], "body": body}]}

    def ref(x):
        out = np.zeros((128 * n, 128), np.float32)
        for i in range(n):
            xs = x["x_in"][i * 128:(i + 1) * 128].astype(np.float64)
            y = np.exp(x["w_in"].astype(np.float64).T @ xs)
            out[i * 128:(i + 1) * 128] = (y * 0.5 + y).astype(np.float32)
        return {"out": out}
    return k, ref


def k_dma_compute(n):
    """A tiled dma_compute (seed 001-75): per 128-row tile, out = 2 a - b / 2
    on the DMA engine; rolled, one body's scaled descriptors move per tile
    by src_reg / dst_reg."""
    sl = "[i*128:(i+1)*128, :]"
    k = {"kernel": "roll_dma_compute", "target": "trn2",
         "inputs": [{"name": "a", "shape": [128 * n, 64], "dtype": "float32"},
                    {"name": "b", "shape": [128 * n, 64], "dtype": "float32"}],
         "outputs": [{"name": "out", "shape": [128 * n, 64], "dtype": "float32"}],
         "body": [{"op": "sequential_range", "var": "i", "range": [n], "body": [
             {"op": "dma_compute", "dst": "out" + sl, "srcs": ["a" + sl, "b" + sl],
              "reduce_op": "add", "scales": [2.0, -0.5]}]}]}
    ref = lambda x: {"out": 2.0 * x["a"].astype(np.float64) - 0.5 * x["b"]}
    return k, ref


def k_kreg(roll):
    """Nested "roll": true loops next to a kernel register (r47 from
    load_tensor_to_register, a load at a register offset): the rolled loops
    must leave r47 alone."""
    inner = {"op": "for", "var": "i", "range": [4], "body": [
        tile("t", [128, 32]),
        {"op": "load", "dst": "t", "src": "table[0:128, :]", "src_reg": 47},
        {"op": "activation", "dst": "t", "src": "t", "func": "exp"},
        {"op": "store", "dst": "out[(4*j+i)*128:(4*j+i+1)*128, :]", "src": "t"}]}
    outer = {"op": "for", "var": "j", "range": [4], "body": [inner]}
    if roll:
        inner["roll"] = outer["roll"] = True
    k = {"kernel": "roll_kreg", "target": "trn2",
         "inputs": [{"name": "table", "shape": [512, 32], "dtype": "float32"},
                    {"name": "off", "shape": [1, 1], "dtype": "int32"}],
         "outputs": [{"name": "out", "shape": [2048, 32], "dtype": "float32"}],
         "body": [tile("to", [1, 1], dtype="int32"), {"op": "load", "dst": "to", "src": "off"},
                  {"op": "load_tensor_to_register", "src": "to", "reg": 47, "engine": "sp"},
                  outer]}
    # off is 0 (integer inputs are zeros): rows 0..127
    ref = lambda x: {"out": np.tile(np.exp(x["table"][0:128].astype(np.float64)), (16, 1))}
    return k, ref


def k_tutorial(N, K, M, bm_n, bk_n, target="trn2"):
    """The tutorial's optimised loop nest (examples/kernels/
    mm_tutorial_optimized_trn2.json) at a small size: n (affine) over
    sequential k, blocks of bk_n x 128 rows of K, bm_n x 128 columns of M,
    two 512-wide PSUM tiles per 1024 columns of N."""
    NB, KB, MB = N // 1024, K // (128 * bk_n), M // (128 * bm_n)
    mm = lambda acc: {"op": "matmul", "dst": "res_tile",
                      "stationary": "lhsT_tiles[:, bk, bm*128:(bm+1)*128]",
                      "moving": "rhs_tiles[:, bk, bn*512:(bn+1)*512]", "accumulate": acc}
    kbody = [tile("rhs_tiles", [128, bk_n, 1024]),
             {"op": "for", "var": "bk_r", "range": [bk_n], "body": [
                 {"op": "load", "dst": "rhs_tiles[:, bk_r, :]",
                  "src": "rhs[(%d*k+bk_r)*128:(%d*k+bk_r+1)*128, 1024*n:1024*(n+1)]" % (bk_n, bk_n)}]},
             {"op": "for", "var": "m", "range": [MB], "body": [
                 tile("lhsT_tiles", [128, bk_n, 128 * bm_n]),
                 {"op": "for", "var": "bk_l", "range": [bk_n], "body": [
                     {"op": "load", "dst": "lhsT_tiles[:, bk_l, :]",
                      "src": "lhsT[(%d*k+bk_l)*128:(%d*k+bk_l+1)*128, %d*m:%d*(m+1)]"
                             % (bk_n, bk_n, 128 * bm_n, 128 * bm_n)}]},
                 {"op": "for", "var": "bn", "range": [2], "body": [
                     {"op": "for", "var": "bm", "range": [bm_n], "body": [
                         tile("res_tile", [128, 512], "psum"),
                         {"op": "for", "var": "bk", "range": [bk_n], "body": [
                             {"op": "if", "cond": "bk == 0", "body": [mm(False)], "else": [mm(True)]}]},
                         {"op": "tensor_tensor", "dst": "result_tiles[:, m, bm, bn, :]",
                          "in0": "result_tiles[:, m, bm, bn, :]", "in1": "res_tile",
                          "operator": "add"}]}]}]}]
    nbody = [tile("result_tiles", [128, MB, bm_n, 2, 512]),
             {"op": "memset", "dst": "result_tiles", "value": 0.0},
             {"op": "sequential_range", "var": "k", "range": [KB], "body": kbody},
             {"op": "for", "var": "m", "range": [MB], "body": [
                 {"op": "for", "var": "bm", "range": [bm_n], "body": [
                     tile("result_packed", [128, 1024]),
                     {"op": "for", "var": "bn", "range": [2], "body": [
                         {"op": "tensor_copy", "dst": "result_packed[:, bn*512:(bn+1)*512]",
                          "src": "result_tiles[:, m, bm, bn, :]"}]},
                     {"op": "store", "src": "result_packed",
                      "dst": "result[(%d*m+bm)*128:(%d*m+bm+1)*128, 1024*n:1024*(n+1)]"
                             % (bm_n, bm_n)}]}]}]
    k = {"kernel": "roll_tutorial", "target": target,
         "inputs": [{"name": "lhsT", "shape": [K, M], "dtype": "float32"},
                    {"name": "rhs", "shape": [K, N], "dtype": "float32"}],
         "outputs": [{"name": "result", "shape": [M, N], "dtype": "float32"}],
         "body": [{"op": "for", "var": "n", "range": [NB], "body": nbody}]}
    ref = lambda x: {"result": (x["lhsT"].astype(np.float64).T @ x["rhs"].astype(np.float64))}
    return k, ref


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def compile_sim(tpb, work, name, kernel, opts, inputs, trace=False):
    kf = os.path.join(work, name + ".json")
    with open(kf, "w") as f:
        json.dump(kernel, f)
    art, out = os.path.join(work, name + ".art"), os.path.join(work, name + ".out")
    st = run([tpb, "compile", kf, "-o", art, "--stats"] + opts).stdout
    bundles = sum(int(m.group(1)) for m in re.finditer(r"^(?:PE|Activation|Pool|DVE|SP)\s+(\d+)$",
                                                       st, re.M))
    m = re.search(r"rolled loops: (\d+) rolled", st)
    rolled = int(m.group(1)) if m else 0
    cmd = [tpb, "sim", art, "-o", out, "-q", "--stats-json", os.path.join(work, name + ".stats")]
    cmd += ["--inputs"] + ["%s=%s" % (k, v) for k, v in inputs.items()]
    if trace:
        cmd += ["--trace", os.path.join(work, name + ".trace")]
    run(cmd)
    with open(os.path.join(work, name + ".stats")) as f:
        cycles = json.load(f)["total_cycles"]
    outs = {o["name"]: np.load(os.path.join(out, o["name"] + ".npy")) for o in kernel["outputs"]}
    return {"bundles": bundles, "rolled": rolled, "cycles": cycles, "out": outs, "art": art}


def compare(tpb, work, name, kr, opts, want_rolled, seed=0, trace=False, base=(), plain=None):
    """plain: the kernel compiled for the unrolled side (default: the same)."""
    kernel, ref = kr
    rng = np.random.default_rng(seed)
    inputs, arrays = {}, {}
    for t in kernel["inputs"]:
        arrays[t["name"]] = (np.zeros(t["shape"], np.int32) if t["dtype"] == "int32" else
                             rng.uniform(-1, 1, t["shape"]).astype(np.float32))
        inputs[t["name"]] = os.path.join(work, "%s.%s.npy" % (name, t["name"]))
        np.save(inputs[t["name"]], arrays[t["name"]])
    u = compile_sim(tpb, work, name + ".unrolled", plain or kernel, list(base), inputs)
    r = compile_sim(tpb, work, name + ".rolled", kernel, list(base) + opts, inputs, trace)
    assert r["rolled"] == want_rolled, (name, r["rolled"], want_rolled)
    assert r["bundles"] < u["bundles"], (name, r["bundles"], u["bundles"])
    want = ref(arrays)
    for o in kernel["outputs"]:
        a, b = r["out"][o["name"]], u["out"][o["name"]]
        assert np.array_equal(a, b), (name, "rolled output differs from unrolled")
        np.testing.assert_allclose(a, want[o["name"]], rtol=2e-3, atol=2e-3)
    dc = abs(r["cycles"] - u["cycles"]) / u["cycles"]
    assert dc <= CYCLE_TOL, (name, r["cycles"], u["cycles"])
    print("%-10s rolled %d loop(s): %5d -> %4d bundles, cycles %d vs %d (%+.3f %%), values "
          "identical" % (name, r["rolled"], u["bundles"], r["bundles"], r["cycles"], u["cycles"],
                         100.0 * (r["cycles"] - u["cycles"]) / u["cycles"]))
    return r


def check_trace(r, work, name):
    """In a stream with a rolled loop every instruction names its run count
    (args.iter); the body's instructions run 0..R-1."""
    with open(os.path.join(work, name + ".rolled.trace")) as f:
        t = json.load(f)
    ev = [e for e in (t["traceEvents"] if isinstance(t, dict) else t)
          if e.get("ph") == "X" and e["tid"] < 100]
    iters = {}
    for e in ev:
        a = e["args"]
        assert "iter" in a, a
        iters.setdefault((e["tid"], a["pc"]), []).append(a["iter"])
    for runs in iters.values():
        assert runs == list(range(len(runs))), runs
    assert max(len(v) for v in iters.values()) >= 2
    print("trace: every instruction of a looping stream names its iteration (args.iter)")


def check_dis(tpb, art):
    txt = "".join(run([tpb, "dis", os.path.join(art, "nc0", "sg0", e + ".bin")]).stdout
                  for e in ("SP", "Pool", "DVE")
                  if os.path.exists(os.path.join(art, "nc0", "sg0", e + ".bin")))
    assert re.search(r"BranchCmp reg=\d+ cmp=lt imm=\d+ target=\d+", txt), "no back branch"
    assert re.search(r"wait_reg=\d+", txt), "no register-relative wait"
    assert re.search(r"src_reg=(?!255)\d+", txt) and re.search(r"dst_reg=(?!255)\d+", txt), \
        "no register-offset DMA"
    # the canonical text (wait_reg raw by its field name) assembles back to the same bytes
    # SP and the compute engines the kernel's unnamed-engine ops went to
    # (docs/compiler.md "Balancing")
    for e in ("SP", "DVE", "Pool"):
        b = os.path.join(art, "nc0", "sg0", e + ".bin")
        if e != "SP" and not os.path.exists(b):
            continue
        s, o = b + ".s", b + ".again"
        with open(s, "w") as f:
            f.write(run([tpb, "dis", b, "--canonical"]).stdout)
        run([tpb, "as", s, "-o", o, "--engine", e])
        with open(b, "rb") as x, open(o, "rb") as y:
            assert x.read() == y.read(), e
    print("dis: BranchCmp back branch, register-relative waits, register-offset DMA; "
          "dis/as round trip")


def check_refusals(tpb, work):
    k, _ = k_stream(2, "for", roll=True)
    body = k["body"][0]["body"]
    body[4] = {"op": "if", "cond": "i == 0", "body": [body[4]], "else": [
        {"op": "tensor_tensor", "dst": "ta", "in0": "ta", "in1": "tb", "operator": "subtract"}]}
    kf = os.path.join(work, "refuse.json")
    with open(kf, "w") as f:
        json.dump(k, f)
    p = subprocess.run([tpb, "compile", kf, "-o", os.path.join(work, "refuse.art")],
                       capture_output=True, text=True)
    assert p.returncode == 1 and '"roll": true, but the loop cannot be rolled' in p.stderr, \
        p.stderr
    k, _ = k_stream(2, "for", roll=1)
    with open(kf, "w") as f:
        json.dump(k, f)
    p = subprocess.run([tpb, "compile", kf, "-o", os.path.join(work, "refuse.art")],
                       capture_output=True, text=True)
    assert p.returncode == 1 and "field 'roll'" in p.stderr and "expected true or false" in \
        p.stderr, p.stderr
    print("refusals: an unrollable \"roll\": true loop, a non-boolean roll")


def check_tutorial(tpb, work, kernel):
    res = {}
    for name, opts in (("unrolled", []), ("rolled", ["--loops"])):
        art = os.path.join(work, "tut." + name)
        st = run([tpb, "compile", kernel, "-o", art, "--stats"] + opts).stdout
        bundles = sum(int(m.group(1)) for m in
                      re.finditer(r"^(?:PE|Activation|Pool|DVE|SP)\s+(\d+)$", st, re.M))
        sj = os.path.join(work, "tut.%s.stats" % name)
        run([tpb, "sim", art, "--timing-only", "-q", "--stats-json", sj])
        with open(sj) as f:
            res[name] = (bundles, json.load(f)["total_cycles"])
    (ub, uc), (rb, rc) = res["unrolled"], res["rolled"]
    # trn1: the outer loop's first iteration differs from the others (its
    # stores, issued by Pool, have no earlier store behind them) and is
    # peeled, so one unrolled iteration stays in front: ~9 500 bundles
    assert rb < 10000 and rb * 6 < ub, (rb, ub)
    assert abs(rc - uc) / uc <= CYCLE_TOL, (rc, uc)
    print("tutorial: %d -> %d bundles, cycles %d vs %d (%+.4f %%)"
          % (ub, rb, rc, uc, 100.0 * (rc - uc) / uc))


def main():
    tpb, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    if len(sys.argv) > 4 and sys.argv[3] == "--tutorial":
        check_tutorial(tpb, work, sys.argv[4])
        print("rolled tutorial: ok")
        return
    r = compare(tpb, work, "stream", k_stream(32), ["--loops"], 1, trace=True)
    check_trace(r, work, "stream")
    check_dis(tpb, r["art"])
    compare(tpb, work, "stream_b1", k_stream(16), ["--loops"], 1, base=("--buffers", "1"))
    # "roll": true without --loops; the plain side is the same kernel without it
    compare(tpb, work, "field", k_stream(32, "for", roll=True), [], 1,
            plain=k_stream(32, "for")[0])
    # "roll": false keeps a sequential_range unrolled under --loops
    k, _ = k_stream(32, roll=False)
    kf = os.path.join(work, "nofield.json")
    with open(kf, "w") as f:
        json.dump(k, f)
    st = run([tpb, "compile", kf, "-o", os.path.join(work, "nofield.art"), "--loops",
              "--stats"]).stdout
    assert "rolled loops" not in st, st
    # ops that name no engine: spread over engines, the loop still rolls
    # (one buffer per tile, as "multi": with rotating buffers this body's
    # waits differ between iterations whatever the engines); the plain side
    # names the engines the rolled compile chose (unrolled, each iteration
    # would choose afresh)
    kb, refb = k_balance(8)
    kf, art = os.path.join(work, "balance.probe.json"), os.path.join(work, "balance.probe.art")
    with open(kf, "w") as f:
        json.dump(kb, f)
    run([tpb, "compile", kf, "-o", art, "--buffers", "1"])
    chosen = {}
    for e, name in (("DVE", "dve"), ("Pool", "pool"), ("Activation", "act")):
        b = os.path.join(art, "nc0", "sg0", e + ".bin")
        if os.path.exists(b):
            for m in re.finditer(r"# (tensor_(?:scalar|tensor)_(\d+))", run([tpb, "dis", b]).stdout):
                chosen[int(m.group(2))] = name
    assert len(set(chosen.values())) >= 2, chosen
    plain = json.loads(json.dumps(kb).replace('"roll": true, ', ''))
    ops = [o for o in plain["body"][0]["body"] if o["op"] in ("tensor_scalar", "tensor_tensor")]
    assert len(chosen) >= len(ops), chosen   # the first iteration's (and peeled ones')
    for o, i in zip(ops, sorted(chosen)):
        o["engine"] = chosen[i]
    compare(tpb, work, "balance", (kb, refb), [], 1, base=("--buffers", "1"), plain=plain)
    compare(tpb, work, "multi", k_multi(12), ["--loops"], 1, base=("--buffers", "1"))
    compare(tpb, work, "nested", k_tutorial(3072, 1536, 512, 2, 2), ["--loops"], 3,
            base=("--buffers", "1"))
    # rotating buffers (2 per tile, placed modulo): rhs_tiles alternate per
    # k, so k rolls two iterations at a time; every other group repeats per
    # n iteration, so n rolls too
    compare(tpb, work, "rotating", k_tutorial(4096, 1024, 512, 2, 1, "trn1"), ["--loops"], 4,
            base=("--buffers", "2"))
    compare(tpb, work, "dmacompute", k_dma_compute(8), ["--loops"], 1)
    compare(tpb, work, "kreg", k_kreg(True), [], 3, base=("--buffers", "1"),
            plain=k_kreg(False)[0])
    check_refusals(tpb, work)
    print("rolled loops: ok")


if __name__ == "__main__":
    main()
