#!/usr/bin/python3
"""Run a hand-written assembly kernel in the simulator and check it with NumPy.

usage: examples/asm/run.py <kernel> [--tpb build/bin/tpb] [--keep DIR]

A kernel is a set of streams examples/asm/<kernel>_<Engine>.s (tensor_add
uses tensor_add.s for its DVE stream) plus examples/asm/<kernel>.tensor-map.json.
The script assembles every stream into an artifact directory
(nc0/sg0/<Engine>.bin, docs/artifacts.md), makes random inputs, runs
`tpb sim`, and compares each output with the NumPy reference below.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINES = ("PE", "Activation", "Pool", "DVE", "SP")


def bf16(a):
    """Round float32 to the nearest bfloat16 (ties to even), kept as float32."""
    b = np.asarray(a, np.float32).view(np.uint32)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.view(np.float32)


KERNELS = {
    # name: (inputs, reference, exact?)
    "tensor_add": (lambda r: {"a": r.standard_normal((128, 512)).astype(np.float32),
                              "b": r.standard_normal((128, 512)).astype(np.float32)},
                   lambda t: {"c": t["a"] + t["b"]}, True),
    "matmul": (lambda r: {"w": bf16(r.standard_normal((128, 128))),
                          "x": bf16(r.standard_normal((128, 512)))},
               lambda t: {"y": t["w"].astype(np.float64).T @ t["x"].astype(np.float64)}, False),
}


def streams(kernel):
    out = {}
    for eng in ENGINES:
        p = os.path.join(HERE, "%s_%s.s" % (kernel, eng))
        if os.path.exists(p):
            out[eng] = p
    default = os.path.join(HERE, kernel + ".s")  # tensor_add.s is the DVE stream
    if "DVE" not in out and os.path.exists(default):
        out["DVE"] = default
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernel", choices=sorted(KERNELS))
    ap.add_argument("--tpb", default=os.path.join(HERE, "..", "..", "build", "bin", "tpb"))
    ap.add_argument("--keep", help="build the artifact in this directory and keep it")
    args = ap.parse_args()
    if args.keep:
        return run(args, args.keep)
    with tempfile.TemporaryDirectory(prefix="tpb-asm-") as work:
        return run(args, work)


def run(args, work):
    make_inputs, reference, exact = KERNELS[args.kernel]
    art = os.path.join(work, "art")
    os.makedirs(os.path.join(art, "nc0", "sg0"), exist_ok=True)
    with open(os.path.join(HERE, args.kernel + ".tensor-map.json")) as f:
        tmap = f.read()
    with open(os.path.join(art, "tensor-map.json"), "w") as f:
        f.write(tmap)
    for eng, src in streams(args.kernel).items():
        subprocess.run([args.tpb, "as", "--engine", eng, src, "-o",
                        os.path.join(art, "nc0", "sg0", eng + ".bin")], check=True)
    inputs = make_inputs(np.random.default_rng(0))
    for name, a in inputs.items():
        np.save(os.path.join(work, name + ".npy"), a)
    cmd = [args.tpb, "sim", art, "-o", os.path.join(work, "out"), "--inputs"]
    cmd += ["%s=%s" % (n, os.path.join(work, n + ".npy")) for n in inputs]
    subprocess.run(cmd, check=True)
    ok = True
    for name, want in reference(inputs).items():
        got = np.load(os.path.join(work, "out", name + ".npy"))
        good = np.array_equal(got, want) if exact else np.allclose(got, want, rtol=1e-5, atol=1e-4)
        err = float(np.max(np.abs(got.astype(np.float64) - want)))
        print("%s: %s (max abs error %g)" % (name, "PASS" if good else "FAIL", err))
        ok &= bool(good)
    if args.keep:
        print("artifact kept in %s (try: %s dis %s)" % (art, args.tpb, art))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
