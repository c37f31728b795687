"""out = x.T with a dtype change on the PE (bf16 in, fp32 PSUM out): the
compiler multiplies by a lazily loaded identity (seed 004 get_identity_tensor)."""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((128, 96))}


def reference(x):
    return {"out": x.astype(np.float64).T}
