"""NKI mask= on ops without a predicate of their own (activation,
tensor_tensor, tensor_reduce, memset, matmul): each op is computed only where
the affine predicate over the destination's indices (p: partition, f: free
index) holds; elsewhere dst keeps what it held."""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((32, 64)), "y": rng.standard_normal((32, 64)),
            "z": rng.standard_normal((32, 64)), "w": rng.standard_normal((32, 4, 16)),
            "c": rng.standard_normal((32, 1)),
            # small integers: the matmul sums are exact in any order
            "s": rng.integers(-4, 5, (64, 32)), "u": rng.integers(-4, 5, (64, 64)),
            "v": rng.standard_normal((128, 16))}


def reference(x, y, z, w, c, s, u, v):
    x, y, z = x.astype(np.float32), y.astype(np.float32), z.astype(np.float32)
    w, c = w.astype(np.float32), c.astype(np.float32)
    s, u = s.astype(np.float32), u.astype(np.float32)
    p, f = np.meshgrid(np.arange(32), np.arange(64), indexing="ij")
    a = np.where(f - 8 >= 0, np.maximum(x * np.float32(2), np.float32(0)), z)
    b = np.where(p - f >= 0, x * y, z)
    rows = np.arange(32).reshape(32, 1)
    r = np.where(rows - 20 < 0, w.reshape(32, 64).max(axis=1, keepdims=True), c)
    ps = np.where(f - 60 >= 0, np.float32(-3), np.float32(0.5))
    m = np.where(p - f >= 0, s.T @ u, ps)
    # loop i over row blocks [32i, 32i+32): f - 4i >= 0 -> relu(v), else v + 1
    v = v.astype(np.float32)
    vp, vf = np.meshgrid(np.arange(128), np.arange(16), indexing="ij")
    l = np.where(vf - 4 * (vp // 32) >= 0, np.maximum(v, np.float32(0)), v + np.float32(1))
    return {"a": a, "b": b, "r": r, "m": m.astype(np.float32), "l": l}
