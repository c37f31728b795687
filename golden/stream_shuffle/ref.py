"""out[32g + i] = x[32g + mask[i]] for each quadrant g; mask 255 leaves 0"""
import numpy as np

MASK = [3, 10, 17, 24, 31, 255, 13, 20, 27, 2, 9, 16, 23, 30, 5, 12, 19, 255, 1, 8, 15, 22, 29, 4, 11, 18, 25, 0, 7, 14, 21, 28]


def make_inputs(rng):
    return {"x": rng.standard_normal((128, 64))}


def reference(x):
    out = np.zeros_like(x)
    for g in range(4):
        for i, m in enumerate(MASK):
            if m != 255:
                out[32 * g + i] = x[32 * g + m]
    return {"out": out}
