"""Run one seed: build its kernel, write it to a directory, import and call
it as a user would, then check every op's model against the stored tiles."""
import importlib.util
import os
import traceback

import numpy as np

from .compare import compare
from .families import FAMILIES, NO_SPECIAL, select
from .gen import Prog
from .numerics import as64


def build(seed, nops, names, weights, any_start=False):
    """The Prog of a seed with its kernel source (p.source)."""
    p = Prog(seed, any_start)
    w = np.asarray(weights, np.float64)
    w = w / w.sum()
    for _ in range(nops):
        f = names[int(p.rng.choice(len(names), p=w))]
        p.no_special = f in NO_SPECIAL
        FAMILIES[f][0](p)
    p.src = p.source()
    return p


def _crash(e, path, src):
    """A failure line for an exception, naming the kernel line it came from."""
    line = ""
    for fr in traceback.extract_tb(e.__traceback__):
        if fr.filename == path:
            line = src.split("\n")[fr.lineno - 1].strip()
    return ("CRASH", type(e).__name__, line, str(e).replace("\n", " ")[:400])


def _outputs(p, res):
    """The stored tiles by name (split stores put back in order)."""
    if not isinstance(res, (tuple, list)):
        res = (res,)
    env = {}
    for (o, t, mode), arr in zip(p.outs, res):
        v = as64(arr)
        if mode == "split":   # even columns hold the first half, odd the second
            v = np.concatenate([v[:, 0::2], v[:, 1::2]], axis=1)
        env[t.name] = v
    return env


def run_seed(seed, nops, workdir, family=None, exclude=(), any_start=False, verbose=False):
    """(Prog, failures): each failure (kind, op, tile, detail)."""
    names, weights = select(family, exclude)
    p = build(seed, nops, names, weights, any_start)
    path = os.path.join(workdir, "s%d.py" % seed)
    with open(path, "w") as f:
        f.write(p.src)
    spec = importlib.util.spec_from_file_location("nkifuzz_s%d" % seed, path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
        env = _outputs(p, mod.kernel(*[a for _, a in p.params]))
    except Exception as e:   # any error of tpbsim's on a legal kernel is a failure
        return p, [_crash(e, path, p.src)]
    fails = []
    for desc, t, model in p.checks:
        try:
            # special inputs (NaN, inf, 3.5e38) overflow in the models on
            # purpose; NumPy's warnings about it would bury the FAIL lines
            with np.errstate(all="ignore"):
                exp, kind, arg = model(env)
            ok, info = compare(t.get(env), exp, kind, arg, t.dtype)
        except Exception as e:
            ok, info = False, "MODEL-ERROR %s: %s" % (type(e).__name__, e)
        if not ok:
            fails.append(("MISMATCH", desc, t.name, info))
        elif verbose:
            print("   ok %s %s" % (desc, info))
    return p, fails


def fail_line(seed, f):
    return "FAIL seed=%d %s | %s | %s | %s" % (seed, f[0], f[1], f[2], f[3])
