"""groups {0,2} and {1,3} each sum their x; rank_id is the core id"""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((4, 128, 16)).astype(np.float32)}


def reference(x):
    s = [x[0] + x[2], x[1] + x[3]]
    return {"out": np.stack([s[r % 2] for r in range(4)]).astype(np.float32),
            "rank": np.arange(4, dtype=np.float32).reshape(4, 1, 1)}
