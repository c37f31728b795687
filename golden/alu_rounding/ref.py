"""NKI nl.floor / nl.ceil / nl.trunc / nl.sign / nl.negative / nl.fmod as
element-wise ALU ops (NumPy floor, ceil, trunc, sign, negative, fmod: the
remainder takes the dividend's sign).  idx = floor(x * 0.5) into int32."""
import numpy as np


def make_inputs(rng):
    x = rng.uniform(-20.0, 20.0, (16, 32))
    x[0, :8] = [-3.5, -3.0, -0.5, 0.0, 0.5, 2.0, 2.5, -2.5]   # halves and integers
    y = rng.uniform(0.5, 4.0, (16, 32)) * rng.choice([-1.0, 1.0], (16, 32))
    return {"x": x, "y": y}


def reference(x, y):
    x = x.astype(np.float32)
    y = y.astype(np.float32)
    return {"fl": np.floor(x), "ce": np.ceil(x), "tr": np.trunc(x),
            "sg": -np.sign(x), "fm": np.fmod(x, np.float32(2.5)), "fmt": np.fmod(x, y),
            "idx": np.floor(x * np.float32(0.5)).astype(np.int32)}
