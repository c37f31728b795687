"""scatter-add with unique_indices: 64 distinct rows of out get upd added
(out = base; out[idx[i]] += upd[i], no index repeats)."""
import numpy as np


def make_inputs(rng):
    return {"base": rng.standard_normal((128, 16)),
            "idx": rng.permutation(128)[:64].reshape(64, 1).astype(np.int32),
            "upd": rng.standard_normal((64, 16))}


def reference(base, idx, upd):
    out = base.astype(np.float64).copy()
    out[idx[:, 0]] += upd.astype(np.float64)
    return {"out": out}
