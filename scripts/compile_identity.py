#!/usr/bin/env python3
"""compile_identity - check that two `tpb` binaries compile to the same bytes.

Compiles every repository kernel (golden/*/kernel.json, examples/kernels,
tests/golden-data) for trn1 and trn2 with several option sets, plus the
compile workloads of scripts/bench (scripts/bench_compile.py) at the given
sizes, with an OLD and a NEW `tpb`, and compares the artifact directories
file by file and everything each run printed (the peak-memory line of
--stats excepted: it measures the compiler itself).  Used to show that a
compile-speed change leaves every emitted stream byte-identical
(docs/compiler.md "Compile time").

With --spill, the repository kernels are compiled instead at --sbuf-limit
3/4 and 1/2 of their own SBUF peak (read from OLD's --stats), with --stats
and with --loops --stats, so that they spill (or fail to): the spiller's
identity check (docs/compiler.md "SBUF spilling"); a compile that takes
OLD longer than --timeout seconds is reported and not compared.

usage: compile_identity.py OLD_TPB NEW_TPB [--bench-sizes N,N,..] [--work DIR] [--plain]
                           [--bench-only] [--only SUBSTRING] [--spill [--timeout S]]
exit status 0 when everything matches, 1 otherwise.
"""
import argparse
import filecmp
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench_compile as bc  # noqa: E402

OPTION_SETS = [["--stats"], ["--link", "--dump-bin-per-inst"], ["--loops"],
               ["--mode", "collect-opcodes"], ["--mode", "generate-isacode", "--stats"]]
BENCH = [("tiny", bc.compile_tiny_kernel), ("mixed", bc.compile_mixed_kernel),
         ("sidedma", bc.compile_sidedma_kernel), ("live", bc.compile_live_kernel),
         ("mix3", bc.compile_mix3_kernel)]


def run(tpb, kernel, out, opts, timeout=None):
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.run([tpb, "compile", kernel, "-o", out] + opts, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, errors="replace", timeout=timeout)
    # the compiler's own memory, not a compile result: the peak, and the heap
    # reserve a large kernel text takes (common/hugepage.h)
    text = re.sub(r"^peak memory \d+ KiB$", "peak memory", p.stdout, flags=re.M)
    text = re.sub(r"^heap reserve \d+ KiB in huge pages( after \d+ KiB in 4 KiB pages)?\n", "", text,
                  flags=re.M)
    text = re.sub(r"^freed mappings reused \d+ KiB\n", "", text, flags=re.M)
    return p.returncode, text.replace(out, "OUT")


def same_tree(a, b):
    """'' when directories a and b hold the same files with the same bytes."""
    if os.path.isdir(a) != os.path.isdir(b):
        return "one side has no output directory"
    if not os.path.isdir(a):
        return ""
    c = filecmp.dircmp(a, b)
    if c.left_only or c.right_only:
        return f"{a}: files differ: {c.left_only} / {c.right_only}"
    _, mismatch, errors = filecmp.cmpfiles(a, b, c.common_files, shallow=False)
    if mismatch or errors:
        return f"{a}: contents differ: {(mismatch + errors)[:5]}"
    for d in c.common_dirs:
        why = same_tree(os.path.join(a, d), os.path.join(b, d))
        if why:
            return why
    return ""


def spill_jobs(tpb, kf, tg, out):
    """--spill's compiles of kf for target tg: at 3/4 and 1/2 of its SBUF
    peak (none when it does not compile or uses no SBUF)."""
    rc, text = run(tpb, kf, out, ["--target", tg, "--stats"])
    m = re.search(r"^SBUF peak (\d+) B/partition", text, re.M)
    if rc or not m or int(m.group(1)) < 128:
        return []
    peak = int(m.group(1))
    return [(kf, ["--target", tg, "--sbuf-limit", str(lim)] + opts)
            for lim in (peak * 3 // 4, peak // 2) for opts in (["--stats"], ["--loops", "--stats"])]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--bench-sizes", default="200,2000",
                    help="loop iterations of each bench workload (comma list)")
    ap.add_argument("--work", help="scratch directory (default: a temporary one)")
    ap.add_argument("--plain", action="store_true",
                    help="repository kernels with --stats only (not every option set)")
    ap.add_argument("--bench-only", action="store_true", help="only the bench workloads")
    ap.add_argument("--only", default="", help="only repository kernels whose path contains this")
    ap.add_argument("--spill", action="store_true",
                    help="repository kernels at --sbuf-limit 3/4 and 1/2 of their SBUF peak")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="--spill: seconds a compile may take (default 300)")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="tpb-ident-")
    os.makedirs(work, exist_ok=True)
    jobs = []
    kernels = sorted(glob.glob(os.path.join(ROOT, "golden", "*", "kernel.json")) +
                     glob.glob(os.path.join(ROOT, "examples", "kernels", "*.json")) +
                     glob.glob(os.path.join(ROOT, "tests", "golden-data", "*.json")) +
                     glob.glob(os.path.join(ROOT, "tests", "golden-data", "*", "kernel.json")))
    for kf in [] if a.bench_only else [k for k in kernels if a.only in k]:
        for tg in ("trn1", "trn2"):
            if a.spill:
                jobs += spill_jobs(a.old, kf, tg, os.path.join(work, "peak"))
                continue
            for opts in OPTION_SETS[:1] if a.plain else OPTION_SETS:
                jobs.append((kf, ["--target", tg] + opts))
    for name, make in [] if a.spill else BENCH:
        for n in (int(x) for x in a.bench_sizes.split(",") if x):
            kernel, _ = make(n)
            kf = os.path.join(work, f"bench-{name}-{n}.json")
            with open(kf, "w") as f:
                json.dump(kernel, f)
            jobs.append((kf, ["--stats"]))
            jobs.append((kf, ["--loops"]))
    bad = slow = spilled = 0
    for i, (kf, opts) in enumerate(jobs):
        outs = [os.path.join(work, "old"), os.path.join(work, "new")]
        try:
            r_old = run(a.old, kf, outs[0], opts, a.timeout if a.spill else None)
        except subprocess.TimeoutExpired:
            slow += 1
            print(f"SLOW {os.path.relpath(kf, ROOT)} {' '.join(opts)}: OLD over {a.timeout} s")
            continue
        r_new = run(a.new, kf, outs[1], opts)
        spilled += "tiles spilled" in r_old[1]
        why = ""
        if r_old != r_new:
            why = "exit status or printed text differs"
        else:
            why = same_tree(outs[0], outs[1])
        if why:
            bad += 1
            print(f"DIFF {os.path.relpath(kf, ROOT)} {' '.join(opts)}: {why}")
    for d in ("old", "new"):
        shutil.rmtree(os.path.join(work, d), ignore_errors=True)
    extra = f" ({spilled} spill, {slow} not compared: OLD too slow)" if a.spill else ""
    print(f"compile_identity: {len(jobs)} compiles, {bad} differ{extra}")
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
