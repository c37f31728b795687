#!/usr/bin/python3
"""The compact <Engine>.json sidecar (docs/artifacts.md "Compact sidecars").

One kernel (a row softmax over N small tiles: SP and DVE get more than 4096
debug entries, Activation fewer) is compiled twice: with the default
threshold and with TPB_SIDECAR_COMPACT_MIN set so high that every sidecar is
written in the full form.  Checks:
  - which sidecars are compact (the threshold) and that the .bin streams are
    the same either way (a sidecar is debug information only);
  - the round trip: the compact debug table, expanded here by the rules of
    the documentation (an implementation independent of the C readers),
    equals the full form's, entry for entry, and the other members agree;
  - the size: bytes per debug entry of each compact sidecar against a pinned
    bound and against the full form;
  - the readers: `tpb sim` traces and `tpb dis` listings of both artifacts
    are identical (names, src and buf come through unchanged).
usage: sidecar_compact.py <tpb>
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

N = 2100            # iterations: SP 4 entries each, DVE 2, Activation 1 or 2
# the pinned size (bytes per debug entry; measured 56.0, 73.7 and 116.0 --
# DVE alternates two ops, so src and op change on every entry) and the
# ratio to the full form (measured 0.35, 0.37, 0.60)
MAX_BYTES_PER_ENTRY = {"SP": 60, "Activation": 78, "DVE": 120}
MAX_RATIO = {"SP": 0.38, "Activation": 0.40, "DVE": 0.62}


def kernel():
    return {
        "kernel": "sidecar_compact",
        "inputs": [{"name": "x", "shape": [N * 4, 8], "dtype": "float32"}],
        "outputs": [{"name": "out", "shape": [N * 4, 8], "dtype": "float32"}],
        "body": [{"op": "for", "var": "i", "range": [N], "body": [
            {"op": "tile", "name": "t", "shape": [4, 8], "dtype": "float32"},
            {"op": "tile", "name": "negmax", "shape": [4, 1], "dtype": "float32"},
            {"op": "tile", "name": "sum", "shape": [4, 1], "dtype": "float32"},
            {"op": "tile", "name": "e", "shape": [4, 8], "dtype": "float32"},
            {"op": "load", "dst": "t", "src": "x[i*4:(i+1)*4, :]"},
            {"op": "tensor_reduce", "dst": "negmax", "src": "t", "operator": "max",
             "axis": [1], "negate": True},
            {"op": "activation", "dst": "e", "src": "t", "func": "exp", "bias": "negmax",
             "reduce_op": "add", "reduce_res": "sum"},
            {"op": "tensor_scalar", "dst": "e", "src": "e", "op0": "divide",
             "operand0": "sum"},
            {"op": "store", "dst": "out[i*4:(i+1)*4, :]", "src": "e"}]}]}


def expand(doc):
    """The documented rules: absent pc = previous pc + 1 (first: 0); absent
    name = the previous entry's op (its name, op_index and buf unless given);
    absent inst = name; absent src / op = the previous entry's."""
    assert doc.get("debug_form") == "compact"
    out, pc, src, op = [], -1, None, None
    for e in doc["debug"]:
        e = dict(e)
        pc = e.setdefault("pc", pc + 1)
        if "name" not in e:
            for key in ("name", "op_index", "buf"):
                if key in out[-1]:
                    e.setdefault(key, out[-1][key])
        e.setdefault("inst", e["name"])
        if "src" not in e and src is not None:
            e["src"] = src
        if "op" not in e and op is not None:
            e["op"] = op
        src, op = e.get("src"), e.get("op")
        out.append(e)
    return out


def run(cmd, env=None):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if r.returncode:
        sys.exit("FAIL: %s: %s" % (" ".join(cmd), r.stderr.decode()))
    return r.stdout


def main():
    tpb = sys.argv[1]
    work = tempfile.mkdtemp(prefix="tpb-sidecar-")
    kf = os.path.join(work, "k.json")
    with open(kf, "w") as f:
        json.dump(kernel(), f)
    env = dict(os.environ)
    env.pop("TPB_SIDECAR_COMPACT_MIN", None)
    art_c, art_f = os.path.join(work, "compact"), os.path.join(work, "full")
    run([tpb, "compile", kf, "-o", art_c], env)
    env_full = dict(env, TPB_SIDECAR_COMPACT_MIN="1000000000")
    run([tpb, "compile", kf, "-o", art_f], env_full)
    d_c, d_f = os.path.join(art_c, "nc0", "sg0"), os.path.join(art_f, "nc0", "sg0")
    fails = []
    for eng in ["SP", "Activation", "DVE"]:
        with open(os.path.join(d_c, eng + ".bin"), "rb") as a, \
                open(os.path.join(d_f, eng + ".bin"), "rb") as b:
            if a.read() != b.read():
                fails.append("%s.bin differs between the two compiles" % eng)
        raw_c = open(os.path.join(d_c, eng + ".json")).read()
        raw_f = open(os.path.join(d_f, eng + ".json")).read()
        full = json.loads(raw_f)
        doc = json.loads(raw_c)
        n = len(full["debug"])
        want_compact = n >= 4096
        if ("debug_form" in doc) != want_compact:
            fails.append("%s.json: %d entries, compact=%s" % (eng, n, "debug_form" in doc))
            continue
        if not want_compact:
            if raw_c != raw_f:
                fails.append("%s.json: below the threshold the text must not change" % eng)
            continue
        if raw_c != json.dumps(doc, separators=(",", ":")):
            fails.append("%s.json: the compact form is not unformatted JSON" % eng)
        if expand(doc) != full["debug"]:
            for i, (x, y) in enumerate(zip(expand(doc), full["debug"])):
                if x != y:
                    fails.append("%s.json: entry %d: %r != %r" % (eng, i, x, y))
                    break
            else:
                fails.append("%s.json: %d entries, full form %d" % (eng, len(doc["debug"]), n))
        rest_c = {k: v for k, v in doc.items() if k not in ("debug", "debug_form")}
        rest_f = {k: v for k, v in full.items() if k != "debug"}
        if rest_c != rest_f or list(doc)[-2:] != ["debug_form", "debug"]:
            fails.append("%s.json: members differ: %r / %r" % (eng, list(doc), list(full)))
        per_c, per_f = len(raw_c) / n, len(raw_f) / n
        print("%s.json: %d entries, compact %.1f B/entry, full %.1f B/entry (%.2f)"
              % (eng, n, per_c, per_f, per_c / per_f))
        if per_c > MAX_BYTES_PER_ENTRY[eng] or per_c > MAX_RATIO[eng] * per_f:
            fails.append("%s.json: %.1f bytes per entry (at most %d, and %.2f of the full "
                         "form's %.1f)" % (eng, per_c, MAX_BYTES_PER_ENTRY[eng], MAX_RATIO[eng],
                                           per_f))
        # tpb dis reads the notes (name, src) through tpb_sidecar_expand
        dis_c = run([tpb, "dis", os.path.join(d_c, eng + ".bin")])
        dis_f = run([tpb, "dis", os.path.join(d_f, eng + ".bin")])
        if dis_c != dis_f or b"  body[0].body[" not in dis_c:
            fails.append("%s.bin: tpb dis shows different notes" % eng)
    # the simulator's reader: the same trace from both artifacts
    np.save(os.path.join(work, "x.npy"),
            np.linspace(-2, 2, N * 32, dtype=np.float32).reshape(N * 4, 8))
    traces = []
    for art in (art_c, art_f):
        tr = os.path.join(work, os.path.basename(art) + "-trace.json")
        run([tpb, "sim", art, "--inputs", "x=" + os.path.join(work, "x.npy"),
             "-o", os.path.join(work, os.path.basename(art) + "-out"), "--trace", tr], env)
        with open(tr) as f:
            t = json.load(f)
        ev = t["traceEvents"] if isinstance(t, dict) else t
        traces.append([(e.get("name"), e.get("args", {}).get("src"), e.get("args", {}).get("buf"),
                        e.get("args", {}).get("op_name")) for e in ev if e.get("ph") == "X"])
    if traces[0] != traces[1] or not any(x[3] == "tensor_scalar_%d" % (5 * (N - 1) + 3)
                                         for x in traces[0]):
        fails.append("the traces of the two artifacts differ (or miss the last tensor_scalar)")
    subprocess.run(["rm", "-rf", work])
    for f in fails:
        print("FAIL:", f)
    if fails:
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
