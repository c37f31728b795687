"""Rotating buffers in the trace (docs/trace-format.md, args.buf).

Compiles tests/data/rotate_loop.json (six iterations of one loop-declared
tile) with --buffers N, simulates it with --trace, and checks that the
instructions touching the tile name its buffer, cycling 0..N-1 in program
order, and that --buffers 1 gives no buf at all.
usage: check_trace_buffers.py <tpb> <kernel.json> <workdir>
"""
import json
import os
import re
import subprocess
import sys


def run(tpb, kernel, work, n):
    art, out = os.path.join(work, "art%d" % n), os.path.join(work, "out%d" % n)
    trace = os.path.join(work, "trace%d.json" % n)
    subprocess.run([tpb, "compile", kernel, "-o", art, "--buffers", str(n)], check=True)
    subprocess.run([tpb, "sim", art, "--timing-only", "-o", out, "--trace", trace],
                   check=True, stdout=subprocess.DEVNULL)
    with open(trace) as f:
        t = json.load(f)
    ev = t["traceEvents"] if isinstance(t, dict) else t
    # engine lanes (tid < 100; DMA queue lanes are 100 + queue * 8 + slot)
    return [e for e in ev if e.get("ph") == "X" and e["tid"] < 100]


def main():
    tpb, kernel, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    for n in (2, 3):
        insts = run(tpb, kernel, work, n)
        by_src = {}
        for e in insts:
            a = e["args"]
            if "buf" in a:
                m = re.fullmatch(r"t#(\d+)/(\d+)", a["buf"])
                assert m, a["buf"]
                assert int(m.group(2)) == n, (a["buf"], n)
                ops = by_src.setdefault(a["src"], {})
                first = ops.setdefault(a["op_name"], (e["ts"], int(m.group(1))))
                assert first[1] == int(m.group(1)), (a, first)  # one buffer per op
                ops[a["op_name"]] = (min(first[0], e["ts"]), first[1])
        # every op of the body (load, scale, store) names the tile's buffer,
        # one op per iteration, the iterations cycling through 0..n-1
        assert len(by_src) == 3, by_src
        for src, ops in by_src.items():
            bufs = [b for _, b in sorted(ops.values())]
            assert bufs == [i % n for i in range(6)], (src, bufs)
    insts = run(tpb, kernel, work, 1)
    assert insts and not any("buf" in e["args"] for e in insts)
    print("rotating buffers in trace args: ok")


main()
