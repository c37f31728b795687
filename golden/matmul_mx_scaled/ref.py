"""NKI nc_matmul_mx with OCP MX semantics, in float64: each fp8 element is
multiplied by 2^(s - 127) for the E8M0 scale s of its 32-element block along
the contraction dim K (one scale per column and block), then
out = w_scaled.T @ x_scaled.  Data are fp8e4m3 values (rounded by golden.py);
scales stay well inside the range so no product overflows fp32."""
import numpy as np


def make_inputs(rng):
    return {"w": rng.standard_normal((64, 32)), "ws": rng.integers(120, 135, (2, 32)).astype(np.uint8),
            "x": rng.standard_normal((64, 48)), "xs": rng.integers(120, 135, (2, 48)).astype(np.uint8)}


def scaled(d, s):
    f = np.exp2(s.astype(np.float64) - 127.0)          # [K/32, cols]
    return d.astype(np.float64) * np.repeat(f, 32, axis=0)


def reference(w, ws, x, xs):
    return {"out": scaled(w, ws).T @ scaled(x, xs)}
