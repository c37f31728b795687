"""python3 -m tpbsim._loop_identity [pytest args]: every Python kernel the
pytest suite (tests/python, which also runs examples/nki/*.py) traces is
traced twice, loop bodies once (the default) and per iteration (as before
docs/python.md "Loops"), and the two compared: the same description text;
else the same compiled artifact files; else the same simulated outputs
(bit for bit) and cycles.  Prints one line per kernel that differs and a
summary ("only traced once": a kernel that is an error per iteration, such
as `(pid + i) % 2`, which only a program id makes one).  Run with TPBSIM_LIB set (libtpb.so) from the repository root."""
import os
import shutil
import sys
import tempfile

import numpy as np

from . import Context, _target
from .nki import Kernel, NkiError, _trace


def _files(d):
    out = {}
    for root, _, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, d)] = f.read()
    return out


def _unnamed(data):
    """A JSON sidecar without its "buf" lines (the tile names an
    instruction touches, which differ between the two traces)."""
    if data is None:
        return None
    return [ln for ln in data.split(b"\n") if not ln.lstrip().startswith(b'"buf":')]


def _run(text, name, art, arrays, outs):
    """Compile text into art and simulate it: (outputs, cycles)."""
    ctx = Context()
    try:
        target = _target(None)
        ctx.compile_json(text, name, art, target=target)
        ctx.sim_load(art, target=target)
        for n, a in arrays.items():
            ctx.sim_set_input(n, a)
        ctx.sim_run()
        return [ctx.sim_fetch(o.base.name) for o in outs], ctx.sim_cycles()
    finally:
        ctx.close()


class Checker:
    def __init__(self):
        self.counts = {"same text": 0, "same artifacts": 0, "same results": 0, "per iteration": 0,
                       "only traced once": 0, "DIFFER": 0, "no compile": 0}
        self.lines = []
        self.fallbacks = set()   # kernels traced per iteration (Retrace)

    def compare(self, k, new, old):
        name = k.fn.__name__
        if new[0] == old[0]:
            return "same text"
        work = tempfile.mkdtemp(prefix="tpbsim-loopid-")
        try:
            try:
                ro = _run(old[0], name, os.path.join(work, "old"), old[2], old[1])
            except Exception:   # a kernel some test compiles to see it fail
                return "no compile"
            rn = _run(new[0], name, os.path.join(work, "new"), new[2], new[1])
            fo, fn = _files(os.path.join(work, "old")), _files(os.path.join(work, "new"))
            if fo == fn:
                return "same artifacts"
            diff = sorted(f for f in set(fo) | set(fn) if fo.get(f) != fn.get(f))
            same = (ro[1] == rn[1] and len(ro[0]) == len(rn[0]) and
                    all(np.array_equal(a.view(np.uint8), b.view(np.uint8))
                        for a, b in zip(ro[0], rn[0])))
            names_only = all(f.endswith(".json") and _unnamed(fo.get(f)) == _unnamed(fn.get(f))
                             for f in diff)
            self.lines.append("%-28s %s; files differ: %s%s" % (
                name, "outputs and cycles identical" if same else "RESULTS DIFFER",
                " ".join(diff[:6]) + (" ..." if len(diff) > 6 else ""),
                " (only in tile names, \"buf\")" if names_only else ""))
            return "same results" if same else "DIFFER"
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def install(self):
        orig = Kernel._trace
        chk = self

        def traced(self, args, kwargs, symbolic, *rest):
            if not symbolic:
                return orig(self, args, kwargs, False, *rest)
            try:
                new = orig(self, args, kwargs, True, *rest)
            except _trace.Retrace:
                chk.counts["per iteration"] += 1
                chk.fallbacks.add(self.fn.__name__)
                raise
            try:
                old = orig(self, args, kwargs, False, *rest)
            except NkiError:   # e.g. pid % 2: an error per iteration only
                chk.counts["only traced once"] += 1
                return new
            chk.counts[chk.compare(self, new, old)] += 1
            return new
        Kernel._trace = traced


def main(argv):
    import pytest
    chk = Checker()
    chk.install()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    rc = pytest.main(["-q", "-p", "no:cacheprovider", os.path.join(root, "tests", "python")] +
                     argv)
    for line in chk.lines:
        print(line)
    print("traced per iteration: " + " ".join(sorted(chk.fallbacks)))
    print("loop identity: " + ", ".join("%s %d" % kv for kv in chk.counts.items()))
    return 1 if rc or chk.counts["DIFFER"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
