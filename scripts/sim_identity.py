#!/usr/bin/env python3
"""sim_identity.py OLD_TPB NEW_TPB GOLDEN_DIR WORK_DIR

Runs every golden case with both binaries (`tpb run <case>`, then `tpb sim
<artifacts> --timing-only --trace` on the same artifacts) and compares exit
status, messages, every output .npy byte for byte, and stats and traces as
JSON without their wall-clock fields.  Prints one line per case; exit 1 when
any case differs (docs/performance-log.md, eighth session)."""
import json, os, subprocess, sys, filecmp
if len(sys.argv) != 5 or sys.argv[1] in ("-h", "--help"):
    sys.stderr.write(__doc__.split("\n\n")[0] + "\n\n" + __doc__.split("\n\n", 1)[1] + "\n")
    sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
old, new, gdir, work = sys.argv[1:5]
WALL = {"wall_seconds", "sim_instructions_per_second"}

def run(tpb, case, out):
    r = subprocess.run([tpb, "run", os.path.join(gdir, case), "-o", out, "-q"],
                       capture_output=True, text=True)
    r2 = None
    art = os.path.join(out, "artifacts")
    if os.path.isdir(art):
        r2 = subprocess.run([tpb, "sim", art, "-q", "--timing-only", "-o", out + "-t",
                             "--trace", out + "-t.trace.json", "--stats-json",
                             out + "-t.stats.json"], capture_output=True, text=True)
    return r.returncode, (r2.returncode if r2 else None), r2.stdout + r2.stderr if r2 else ""

def strip(d):
    if isinstance(d, dict):
        return {k: strip(v) for k, v in d.items() if k not in WALL}
    if isinstance(d, list):
        return [strip(v) for v in d]
    return d

def stats(p):
    """a JSON file (stats or trace) without its wall-clock fields"""
    if not os.path.exists(p):
        return None
    return strip(json.load(open(p)))

def same(a, b):
    if a.endswith(".json"):
        return stats(a) == stats(b)
    return filecmp.cmp(a, b, shallow=False)

def files(d):
    out = []
    for root, _, fs in os.walk(d):
        for f in fs:
            if f.endswith(".npy") or f.endswith(".json"):
                out.append(os.path.relpath(os.path.join(root, f), d))
    return sorted(out)

bad = 0; n = 0
for case in sorted(os.listdir(gdir)):
    if not os.path.exists(os.path.join(gdir, case, "kernel.json")):
        continue
    n += 1
    ro = run(old, case, os.path.join(work, "old", case))
    rn = run(new, case, os.path.join(work, "new", case))
    msgs = []
    if ro[:2] != rn[:2]:
        msgs.append(f"exit {ro[:2]} vs {rn[:2]}")
    if ro[2] != rn[2]:
        msgs.append("timing-only messages differ")
    for suffix in ("", "-t"):
        a, b = os.path.join(work, "old", case + suffix), os.path.join(work, "new", case + suffix)
        fa = files(a) if os.path.isdir(a) else []
        fb = files(b) if os.path.isdir(b) else []
        if fa != fb:
            msgs.append(f"file lists differ in {suffix or 'run'}")
        for f in fa:
            if f in fb and not same(os.path.join(a, f), os.path.join(b, f)):
                msgs.append(f"{suffix}{f} differs")
    for ext in ("-t.trace.json",):
        a, b = os.path.join(work, "old", case + ext), os.path.join(work, "new", case + ext)
        if os.path.exists(a) != os.path.exists(b) or (os.path.exists(a) and not same(a, b)):
            msgs.append(ext + " differs")
    a, b = os.path.join(work, "old", case + "-t.stats.json"), os.path.join(work, "new", case + "-t.stats.json")
    if stats(a) != stats(b):
        msgs.append("timing-only stats differ")
    if msgs:
        bad += 1
    print(case, "exit", ro[:2], "OK" if not msgs else "DIFF: " + "; ".join(msgs), flush=True)
print(f"{n} cases, {bad} differ")
sys.exit(1 if bad else 0)
