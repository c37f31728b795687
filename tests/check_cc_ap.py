#!/usr/bin/python3
"""Seed 002 §6 (setReplicaGroups + the SB<->SB collective AP): compile a
4-core all_reduce with replica groups [[0, 2], [1, 3]] and check that every
collective DMA instruction carries those groups (the engine sidecars'
"replica_groups") and that each core's descriptors read only its group
peer's SBUF (the cross-core AP, `tpb dis`).
usage: check_cc_ap.py <tpb> <kernel.json> <workdir>"""
import json
import os
import re
import shutil
import subprocess
import sys

tpb, kernel, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
subprocess.run([tpb, "compile", kernel, "-o", work], check=True, stdout=subprocess.DEVNULL)
want = [[0, 2], [1, 3]]
for c in range(4):
    d = os.path.join(work, "nc%d" % c, "sg0")
    entries = []
    for f in sorted(os.listdir(d)):
        if f.endswith(".json") and f != "def.json":
            entries += json.load(open(os.path.join(d, f))).get("replica_groups", [])
    pulls = [e for e in entries if ".pull" in e["inst"]]
    assert pulls, "core %d: no collective DMA carries replica groups" % c
    for e in entries:
        assert e["groups"] == want, "core %d: %s has groups %s" % (c, e["inst"], e["groups"])
    dis = subprocess.run([tpb, "dis", os.path.join(d, "SP.bin")], check=True,
                         capture_output=True, text=True).stdout
    # linked streams name cores absolutely; the disassembler leaves out nc0
    peers = {int(p or 0) for p in re.findall(r" src=(?:nc(\d+):)?sbuf", dis)} - {c}
    mate = c ^ 2
    assert peers == {mate}, "core %d: descriptors read SBUF of cores %s, want {%d}" % (
        c, sorted(peers), mate)
print("replica groups and collective APs ok on 4 cores")
