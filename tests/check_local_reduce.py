#!/usr/bin/python3
"""Seed 001 §5.1 (codegenLocalReduceOp): compile an HBM all_reduce +
reduce_scatter (add) and check on every core that each accumulating pull is
one backend-IR Reduce (38) with op add, its kind, local = 1 and the
collective's replica groups (the engine sidecars' "reduces" and
"replica_groups"), and that it lowers to ordinary DMA descriptors with the
add compute op, while the first (copying) pull of each collective stays a
plain DMACopy with compute bypass (`tpb dis`).
usage: check_local_reduce.py <tpb> <kernel.json> <workdir> <ncores>"""
import json
import os
import re
import shutil
import subprocess
import sys

tpb, kernel, work, ncores = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
shutil.rmtree(work, ignore_errors=True)
subprocess.run([tpb, "compile", kernel, "-o", work], check=True, stdout=subprocess.DEVNULL)
kinds = [o["op"] for o in json.load(open(kernel))["body"]]
for c in range(ncores):
    d = os.path.join(work, "nc%d" % c, "sg0")
    side = json.load(open(os.path.join(d, "SP.json")))
    reduces = side.get("reduces", [])
    groups = {e["inst"]: e["groups"] for e in side.get("replica_groups", [])}
    for kind in kinds:
        mine = [e for e in reduces if e["kind"] == kind]
        assert len(mine) == ncores - 1, "core %d: %d Reduce instructions for %s, want %d" % (
            c, len(mine), kind, ncores - 1)
        for e in mine:
            assert (e["opcode"], e["op"], e["local"]) == ("Reduce", "add", 1), (c, e)
            assert groups.get(e["inst"]) == [list(range(ncores))], (c, e, groups.get(e["inst"]))
    # the instructions of each pull (descriptors + trigger) by pc
    dis = subprocess.run([tpb, "dis", os.path.join(d, "SP.bin")], check=True,
                         capture_output=True, text=True).stdout
    line = {int(m.group(1)): m.group(2)
            for m in re.finditer(r"^\s*(\d+)\s+[0-9a-f]+:\s+(.*)$", dis, re.M)}
    pcs = {}
    for e in side["debug"]:
        pcs.setdefault(e.get("name", ""), []).append(e["pc"])
    red_ops = {e["inst"].rsplit(".", 1)[0] for e in reduces}
    pulls = [n for n in pcs if ".pull" in n]
    assert red_ops <= set(pulls), (c, red_ops, pulls)
    for n in pulls:
        descs = [line[p] for p in pcs[n] if line.get(p, "").startswith("PseudoDmaDirect")]
        assert descs and any(line[p].startswith("DmaTrigger") for p in pcs[n]), (c, n)
        want = "add" if n in red_ops else "bypass"
        for t in descs:
            assert " compute=%s " % want in t, "core %d: %s: %s (want compute=%s)" % (
                c, n, t, want)
print("LocalReduce on %d cores: Reduce(add, local) with replica groups, DMA add descriptors"
      % ncores)
