"""out = base; out[idx[i]] += upd[i] (duplicates accumulate)"""
import numpy as np


def make_inputs(rng):
    return {"base": rng.standard_normal((64, 32)),
            "idx": rng.integers(0, 64, (128, 1)),
            "upd": rng.standard_normal((128, 32))}


def reference(base, idx, upd):
    out = base.astype(np.float64).copy()
    np.add.at(out, idx[:, 0], upd.astype(np.float64))
    return {"out": out}
