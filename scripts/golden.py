#!/usr/bin/python3
"""Golden case maintenance: list, regenerate inputs/expected, verify, bless cycles.

Run with the system Python (it has NumPy):

  /usr/bin/python3 scripts/golden.py --list
  /usr/bin/python3 scripts/golden.py --regen tensor_add [more cases]
  /usr/bin/python3 scripts/golden.py --regen-all
  /usr/bin/python3 scripts/golden.py --verify [cases]       (run by CTest)
  /usr/bin/python3 scripts/golden.py --bless-cycles tensor_add [--from DIR] [--margin 0.25]
  /usr/bin/python3 scripts/golden.py --bless-cycles-all [--from-root build/golden-out]

Each golden/<case>/ref.py defines

  make_inputs(rng)         -> {input name: ndarray}   (rng = np.random.default_rng(seed))
  reference(**inputs)      -> {output name: ndarray}  (plain NumPy math)

Inputs and outputs are checked against kernel.json (names, shapes) and
rounded to the kernel's dtype (bf16/fp8 via golden/lowp.py, round to nearest
even), then written as inputs/<name>.npy and expected/<name>.npy.  bf16 and
fp8 tensors are stored as float32 arrays holding exact values, bool as uint8.
Regeneration is deterministic: same seed, same bytes.
"""
import argparse
import importlib.util
import io
import json
import math
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "golden")
sys.path.insert(0, GOLDEN)
import lowp  # noqa: E402

LOWP = {"bfloat16", "float8_e4m3fn", "float8_e4m3", "float8_e5m2"}
STORAGE = {
    "float32": np.float32, "float16": np.float16, "bfloat16": np.float32,
    "float8_e4m3fn": np.float32, "float8_e4m3": np.float32, "float8_e5m2": np.float32,
    "int8": np.int8, "int16": np.int16, "int32": np.int32,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "bool": np.uint8,
}
CASE_KEYS = {"description", "kernel", "target", "lnc", "tags", "seed", "tolerance", "outputs",
             "cycles", "xfail"}
TAGS = {"quick", "full", "multicore"}


class CaseError(Exception):
    pass


def case_dirs():
    out = []
    for name in sorted(os.listdir(GOLDEN)):
        d = os.path.join(GOLDEN, name)
        if os.path.isfile(os.path.join(d, "case.json")):
            out.append(name)
    return out


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise CaseError("%s: %s" % (os.path.relpath(path, ROOT), e))


def load_case(name):
    d = os.path.join(GOLDEN, name)
    if not os.path.isdir(d):
        raise CaseError("no such case: golden/%s" % name)
    cfg = load_json(os.path.join(d, "case.json"))
    unknown = set(cfg) - CASE_KEYS
    if unknown:
        raise CaseError("golden/%s/case.json: unknown field(s) %s" % (name, sorted(unknown)))
    bad_tags = set(cfg.get("tags", [])) - TAGS
    if bad_tags:
        raise CaseError("golden/%s/case.json: unknown tag(s) %s" % (name, sorted(bad_tags)))
    kernel = load_json(os.path.join(d, cfg.get("kernel", "kernel.json")))
    return d, cfg, kernel


def load_ref(d, name):
    path = os.path.join(d, "ref.py")
    spec = importlib.util.spec_from_file_location("golden_ref_" + name, path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # a broken reference must name its file
        raise CaseError("golden/%s/ref.py: %s: %s" % (name, type(e).__name__, e))
    for fn in ("make_inputs", "reference"):
        if not hasattr(mod, fn):
            raise CaseError("golden/%s/ref.py: missing %s()" % (name, fn))
    return mod


def to_storage(arr, spec, where):
    """Round/convert an array to a kernel tensor's dtype, as stored in .npy."""
    dtype = spec["dtype"]
    if dtype not in STORAGE:
        raise CaseError("%s: unsupported dtype %s" % (where, dtype))
    arr = np.asarray(arr)
    shape = tuple(spec["shape"])
    if arr.shape != shape:
        raise CaseError("%s: shape %s, kernel.json says %s" % (where, arr.shape, shape))
    st = STORAGE[dtype]
    if np.issubdtype(st, np.integer):
        if not np.issubdtype(arr.dtype, np.integer) and arr.dtype != np.bool_:
            if not np.all(np.isfinite(arr)) or not np.array_equal(arr, np.round(arr)):
                raise CaseError("%s: non-integer values for %s tensor" % (where, dtype))
        info = np.iinfo(st)
        a64 = arr.astype(np.int64)
        if a64.size and (a64.min() < info.min or a64.max() > info.max):
            raise CaseError("%s: values outside %s range" % (where, dtype))
        return a64.astype(st)
    if dtype in LOWP:
        return lowp.round_to(arr.astype(np.float64), dtype)
    with np.errstate(over="ignore"):
        return arr.astype(np.float64).astype(st)


def generate(name):
    """Run one case's reference; returns (case dir, config, inputs, expected)."""
    d, cfg, kernel = load_case(name)
    mod = load_ref(d, name)
    rng = np.random.default_rng(int(cfg.get("seed", 0)))
    raw_in = mod.make_inputs(rng)
    specs_in = {t["name"]: t for t in kernel.get("inputs", [])}
    if set(raw_in) != set(specs_in):
        raise CaseError("golden/%s: make_inputs() gives %s, kernel.json inputs are %s"
                        % (name, sorted(raw_in), sorted(specs_in)))
    inputs = {k: to_storage(v, specs_in[k], "golden/%s input %s" % (name, k))
              for k, v in raw_in.items()}
    # the reference sees exactly the values the kernel sees
    ref_args = {k: v.astype(np.float32) if specs_in[k]["dtype"] in LOWP else v
                for k, v in inputs.items()}
    with np.errstate(all="ignore"):
        raw_out = mod.reference(**{k: v.copy() for k, v in ref_args.items()})
    specs_out = {t["name"]: t for t in kernel.get("outputs", [])}
    if set(raw_out) != set(specs_out):
        raise CaseError("golden/%s: reference() gives %s, kernel.json outputs are %s"
                        % (name, sorted(raw_out), sorted(specs_out)))
    expected = {k: to_storage(v, specs_out[k], "golden/%s output %s" % (name, k))
                for k, v in raw_out.items()}
    return d, cfg, inputs, expected


def npy_bytes(arr):
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(arr), allow_pickle=False)
    return buf.getvalue()


def write_dir(path, arrays):
    os.makedirs(path, exist_ok=True)
    for f in os.listdir(path):
        if f.endswith(".npy") and f[:-4] not in arrays:
            os.remove(os.path.join(path, f))
    for k, v in sorted(arrays.items()):
        tmp = os.path.join(path, ".%s.npy.tmp" % k)
        with open(tmp, "wb") as f:
            f.write(npy_bytes(v))
        os.replace(tmp, os.path.join(path, k + ".npy"))


def cmd_regen(names):
    for name in names:
        d, _, inputs, expected = generate(name)
        write_dir(os.path.join(d, "inputs"), inputs)
        write_dir(os.path.join(d, "expected"), expected)
        size = sum(v.nbytes for v in inputs.values()) + sum(v.nbytes for v in expected.values())
        print("regenerated golden/%s: %d input(s), %d output(s), %.1f KiB"
              % (name, len(inputs), len(expected), size / 1024.0))
    return 0


def cmd_verify(names):
    """Stored inputs/expected equal a fresh regeneration, byte for byte."""
    bad = 0
    for name in names:
        try:
            d, cfg, inputs, expected = generate(name)
            for sub, arrays in (("inputs", inputs), ("expected", expected)):
                path = os.path.join(d, sub)
                have = sorted(f[:-4] for f in os.listdir(path) if f.endswith(".npy")) \
                    if os.path.isdir(path) else []
                if have != sorted(arrays):
                    raise CaseError("golden/%s/%s holds %s, expected %s (run --regen %s)"
                                    % (name, sub, have, sorted(arrays), name))
                for k, v in arrays.items():
                    with open(os.path.join(path, k + ".npy"), "rb") as f:
                        if f.read() != npy_bytes(v):
                            raise CaseError("golden/%s/%s/%s.npy is stale (run --regen %s)"
                                            % (name, sub, k, name))
            cyc = cfg.get("cycles")
            if cyc is not None and (len(cyc) != 2 or cyc[0] > cyc[1]):
                raise CaseError("golden/%s/case.json: cycles must be [min, max]" % name)
            print("ok   %s" % name)
        except CaseError as e:
            print("FAIL %s" % e)
            bad += 1
    print("%d case(s) verified, %d failed" % (len(names), bad))
    return 1 if bad else 0


def cmd_list(names):
    print("%-26s %-16s %-18s %s" % ("case", "tags", "cycles", "description / xfail"))
    for name in names:
        _, cfg, _ = load_case(name)
        cyc = cfg.get("cycles")
        cyc_s = "[%d, %d]" % tuple(cyc) if cyc else "-"
        desc = cfg.get("description", "")
        if cfg.get("xfail"):
            x = cfg["xfail"]
            desc += "  [XFAIL: %s]" % (x["reason"] if isinstance(x, dict) else x)
        print("%-26s %-16s %-18s %s" % (name, ",".join(cfg.get("tags", [])), cyc_s, desc))
    return 0


def format_case_json(cfg):
    """case.json text: one key per line, lists and small objects inline."""
    lines = []
    for i, (k, v) in enumerate(cfg.items()):
        comma = "," if i + 1 < len(cfg) else ""
        lines.append("  %s: %s%s" % (json.dumps(k), json.dumps(v), comma))
    return "{\n" + "\n".join(lines) + "\n}\n"


def write_case_json(path, cfg):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(format_case_json(cfg))
    os.replace(tmp, path)


def total_cycles(stats_path):
    stats = load_json(stats_path)
    for obj in (stats, stats.get("summary", {})):
        for key in ("total_cycles", "cycles"):
            if isinstance(obj.get(key), (int, float)):
                return int(obj[key])
    raise CaseError("%s: no total_cycles field" % stats_path)


def cmd_bless(names, from_dir, from_root, margin):
    for name in names:
        d, cfg, _ = load_case(name)
        out = from_dir if (from_dir and len(names) == 1) else os.path.join(from_root, name)
        stats = os.path.join(out, "stats.json")
        if not os.path.isfile(stats):
            raise CaseError("%s: not found; run `build/bin/tpb run golden/%s -o %s` first"
                            % (stats, name, out))
        c = total_cycles(stats)
        lo, hi = int(math.floor(c * (1 - margin))), int(math.ceil(c * (1 + margin)))
        old = cfg.get("cycles")
        cfg["cycles"] = [lo, hi]
        write_case_json(os.path.join(d, "case.json"), cfg)
        print("golden/%s: %d cycles -> range [%d, %d] (was %s)" % (name, c, lo, hi, old))
    return 0


def main():
    ap = argparse.ArgumentParser(description="golden case maintenance (docs/golden.md)")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--list", action="store_true", help="list cases with tags, cycle ranges, xfail")
    g.add_argument("--regen", nargs="+", metavar="CASE", help="regenerate inputs/ and expected/")
    g.add_argument("--regen-all", action="store_true", help="regenerate every case")
    g.add_argument("--verify", nargs="*", metavar="CASE",
                   help="check stored data equals a fresh regeneration (all cases by default)")
    g.add_argument("--bless-cycles", nargs="+", metavar="CASE",
                   help="set case.json cycles to the run's total cycles +- margin")
    g.add_argument("--bless-cycles-all", action="store_true", help="bless every case")
    ap.add_argument("--from", dest="from_dir", metavar="DIR",
                    help="run folder holding stats.json (one case; default FROM_ROOT/<case>)")
    ap.add_argument("--from-root", default=os.path.join(ROOT, "build", "golden-out"),
                    help="folder of per-case run folders (default: build/golden-out, "
                         "where CTest runs leave them)")
    ap.add_argument("--margin", type=float, default=0.25,
                    help="relative margin of the blessed range (default 0.25)")
    a = ap.parse_args()
    try:
        if a.list:
            return cmd_list(case_dirs())
        if a.regen:
            return cmd_regen(a.regen)
        if a.regen_all:
            return cmd_regen(case_dirs())
        if a.verify is not None:
            return cmd_verify(a.verify or case_dirs())
        if a.bless_cycles:
            return cmd_bless(a.bless_cycles, a.from_dir, a.from_root, a.margin)
        if a.bless_cycles_all:
            return cmd_bless(case_dirs(), None, a.from_root, a.margin)
    except CaseError as e:
        print("golden.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
