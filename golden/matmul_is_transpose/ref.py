"""nc_matmul(is_transpose=True): out = a.T exactly, NaN/Inf included (the
Tensor Engine's transpose mode copies the stationary bits)."""
import numpy as np

from lowp import round_to


def make_inputs(rng):
    a = round_to(rng.standard_normal((64, 64)).astype(np.float32), "bfloat16")
    a[3, 7] = np.nan
    a[5, 1] = np.inf
    a[1, 5] = -np.inf
    a[60, 2] = np.float32(1e-40)   # a bf16 subnormal stays as it is
    return {"a": round_to(a, "bfloat16")}


def reference(a):
    return {"out": a.T.copy()}
