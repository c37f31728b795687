"""Forms found by the pkO differential fuzzing, each against NumPy:
nl.logical_not and nl.gelu_apprx_sigmoid_dx as callables (NKI language
docs), and nisa.tensor_tensor on int32/uint32 tiles, which NKI runs on
GpSimd with native integer arithmetic (exact for all 32-bit values)."""
import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


# ---- nl.logical_not / nl.gelu_apprx_sigmoid_dx ----

@nki.jit
def lnot(a):
    t = nl.load(a)
    o = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(o, nl.logical_not(t))
    return o


@nki.jit
def lnot_f32_out(a):
    t = nl.load(a)
    o = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(o, nl.logical_not(t, dtype=nl.float32))
    return o


@pytest.mark.parametrize("dt", [np.uint8, np.int32, np.float32])
def test_logical_not_numpy(dt):
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2, (128, 40)).astype(dt)
    got = lnot(a)
    assert got.dtype == dt
    np.testing.assert_array_equal(got, np.logical_not(a).astype(dt))
    # NKI: "XOR with 1" on 0/1 inputs is 1 - x
    np.testing.assert_array_equal(got, (1 - a).astype(dt))


def test_logical_not_dtype():
    a = np.array([[0, 1, 1, 0, 1]], np.uint8)
    np.testing.assert_array_equal(lnot_f32_out(a), np.float32([[1, 0, 0, 1, 0]]))


@nki.jit
def gsdx(a):
    o = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(o, nl.gelu_apprx_sigmoid_dx(nl.load(a)))
    return o


@nki.jit
def gsdx_act(a):
    o = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.activation(dst=t, op=nl.gelu_apprx_sigmoid_dx, data=nl.load(a), scale=2.0)
    nl.store(o, t)
    return o


def _gsdx_ref(x):
    """d/dz z*sigmoid(1.702 z) in float64, rounded once to float32."""
    z = x.astype(np.float64)
    s = 1.0 / (1.0 + np.exp(-1.702 * z))
    return (s + 1.702 * z * s * (1.0 - s)).astype(np.float32)


def test_gelu_apprx_sigmoid_dx_numpy():
    rng = np.random.default_rng(3)
    x = rng.uniform(-8, 8, (128, 64)).astype(np.float32)
    x[0, :3] = [0.0, 1.0, -1.0]
    np.testing.assert_allclose(gsdx(x), _gsdx_ref(x), rtol=2.5e-7, atol=1e-7)
    np.testing.assert_allclose(gsdx_act(x), _gsdx_ref(2.0 * x), rtol=2.5e-7, atol=1e-7)
    # the numerical derivative of gelu_apprx_sigmoid agrees (an independent check)
    z = np.float64(0.7)
    f = lambda v: v / (1.0 + np.exp(-1.702 * v))
    assert abs(gsdx(np.float32([[0.7]]))[0, 0] - (f(z + 1e-6) - f(z - 1e-6)) / 2e-6) < 1e-5
