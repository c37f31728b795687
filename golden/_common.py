"""Helpers shared by several golden/<case>/ref.py files.

scripts/golden.py puts golden/ on sys.path before it loads a ref.py, so a
reference imports these with `from _common import ...`.  Everything here is
plain NumPy, independent of the simulator.  Changing a helper changes every
case that uses it: run `/usr/bin/python3 scripts/golden.py --verify` after.
"""
import numpy as np


def softmax(s):
    """Numerically stable softmax over the last axis (in s's dtype)."""
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def attention_inputs(rng):
    """q, k, v of one 128-token tile with head dim 64 (stored [d, tokens])."""
    return {"q": rng.standard_normal((64, 128)), "k": rng.standard_normal((64, 128)),
            "v": rng.standard_normal((64, 128))}


def attention_scores(q, k):
    """q.T @ k / sqrt(d) in float64."""
    q, k = q.astype(np.float64), k.astype(np.float64)
    return q.T @ k / np.sqrt(q.shape[0])


def max_affine_inputs(rng):
    """a, b [512, 128] fp32: four 128-row programs of the mc_grid_* cases."""
    return {"a": rng.standard_normal((512, 128)).astype(np.float32),
            "b": rng.standard_normal((512, 128)).astype(np.float32)}


def max_affine_reference(a, b):
    """out = max(a * 2 + 1, b), rounded to fp32 after each step."""
    a = a.astype(np.float32)
    t = (a * np.float32(2.0)).astype(np.float32) + np.float32(1.0)
    return {"out": np.maximum(t.astype(np.float32), b.astype(np.float32))}
