"""affine_select with reverse_pred (seed 001 set_reverse_pred): on_true where
the affine predicate FAILS.  On DVE (PredExt rev_pred): j - p >= 0 reversed,
so x where j < p, else -7.  On Pool (AffineSelect rev_pred): p + j - 3 > 0
reversed, so x where p + j <= 3, else 2.5."""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((128, 32))}


def reference(x):
    p = np.arange(128)[:, None]
    j = np.arange(32)[None, :]
    return {"lower_dve": np.where(j < p, x, -7.0),
            "lower_pool": np.where(p + j <= 3, x, 2.5)}
