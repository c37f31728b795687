"""func(scale * x) for each activation function (reference math, float64)"""
import math

import numpy as np

erf = np.vectorize(math.erf)


def make_inputs(rng):
    return {"x": rng.uniform(-3.0, 3.0, (128, 64))}


def reference(x):
    x = x.astype(np.float64)
    sig = 1.0 / (1.0 + np.exp(-x))
    return {"out_exp": np.exp(x), "out_tanh": np.tanh(x), "out_sigmoid": sig,
            "out_relu": np.maximum(x, 0.0), "out_gelu": 0.5 * x * (1.0 + erf(x / np.sqrt(2.0))),
            "out_silu": x * sig, "out_softplus": np.log1p(np.exp(x)), "out_erf": erf(x),
            "out_sin": np.sin(x), "out_arctan": np.arctan(0.5 * x)}
