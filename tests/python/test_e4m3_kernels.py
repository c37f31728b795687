"""Kernels using NKI's legacy nl.float8_e4m3 (IEEE-style e4m3: inf, max
240) next to OCP's nl.float8_e4m3fn (no inf, max 448), against NumPy.

The expected codes come from a reference written here: every code's value
decoded from its bit fields, and the nearest-value rule (ties to the even
code, past the overflow threshold inf / NaN); never from tpbsim."""
import numpy as np
import pytest

import tpbsim
from tpbsim import _ndtypes, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

pytestmark = pytest.mark.skipif(not _ndtypes.available(),
                                reason="tpbsim_dtypes not built (no Python headers)")


def table(has_inf):
    """The 256 values of an e4m3 format (bias 7, subnormals)."""
    c = np.arange(256)
    s, e, m = c >> 7, (c >> 3) & 15, c & 7
    mag = np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e - 7))
    if has_inf:
        mag = np.where(e == 15, np.where(m == 0, np.inf, np.nan), mag)
    else:
        mag = np.where((e == 15) & (m == 7), np.nan, mag)
    return np.where(s == 1, -mag, mag)


def ref_e4m3(x, has_inf):
    """float32 values -> the values of the nearest code (float64)."""
    t = table(has_inf)
    fin = np.isfinite(t)
    vals = t[fin]
    codes = np.arange(256)[fin]
    out = []
    vmax = vals.max()
    limit = vmax + (vmax - np.sort(vals)[-2]) / 2   # 248 / 464
    for v in np.asarray(x, np.float64):
        if np.isnan(v):
            out.append(np.nan)
            continue
        if abs(v) > limit or (abs(v) == limit and has_inf) or np.isinf(v):
            out.append(np.copysign(np.inf, v) if has_inf else np.nan)
            continue
        d = np.abs(vals - v)
        best = np.nonzero(d == d.min())[0]
        k = min(best, key=lambda i: (codes[i] & 1, (codes[i] >> 7) != (v < 0 or np.signbit(v))))
        out.append(vals[k])
    return np.array(out)


X = np.concatenate([
    np.float32([0, 1, -1.0625, 1.1875, 2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -10, 240, 247.9, 248,
                250, -300, 448, 464, 470, 1e6, -np.inf, np.inf, np.nan, -2.0 ** -7]),
    np.random.default_rng(5).uniform(-260, 260, 128 * 8 - 20).astype(np.float32)]).reshape(128, 8)


@nki.jit
def cast_through(x, dt):
    """x (float32) -> an SBUF tile of dt (ScalarE copy rounds) -> float32 out."""
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    q = nisa.tensor_copy(t, dtype=dt)
    nl.store(out, nisa.tensor_copy(q, dtype=nl.float32))
    return out


@pytest.mark.parametrize("dt,has_inf", [(nl.float8_e4m3, True), (nl.float8_e4m3fn, False)])
def test_engine_cast_rounds_as_the_reference(dt, has_inf):
    got = cast_through(X, dt)
    want = ref_e4m3(X.ravel(), has_inf).reshape(X.shape)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok], want[ok].astype(np.float32))
    # the host-side NumPy dtype agrees with the kernel
    host = X.astype(dt).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(host), np.isnan(got))
    np.testing.assert_array_equal(host[ok], got[ok])


@nki.jit
def exp_store(x):
    """An e4m3 input in, an e4m3 output from an activation (inf past 240)."""
    out = nl.ndarray(x.shape, dtype=nl.float8_e4m3, buffer=nl.shared_hbm)
    nl.store(out, nisa.activation(op=nl.exp, data=nl.load(x), dtype=nl.float8_e4m3))
    return out


def test_e4m3_input_and_output():
    x = np.float32(np.linspace(-4, 6, 128 * 4)).reshape(128, 4).astype(nl.float8_e4m3)
    got = exp_store(x)
    want = ref_e4m3(np.exp(x.astype(np.float32).astype(np.float64)).ravel(), True).reshape(x.shape)
    assert np.isinf(want).any()   # exp(6) = 403 > 240: inf, not e4m3fn's NaN / 448
    np.testing.assert_allclose(np.asarray(got, np.float32), want.astype(np.float32), rtol=0.0625)
    np.testing.assert_array_equal(np.isinf(np.asarray(got, np.float32)), np.isinf(want))


@nki.jit
def mm(a, b):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    p = nisa.nc_matmul(nl.load(a), nl.load(b))
    nl.store(out, nisa.tensor_copy(p, dtype=nl.float32))
    return out


def test_nc_matmul_takes_e4m3_and_refuses_the_mix():
    rng = np.random.default_rng(3)
    a = rng.uniform(-2, 2, (128, 128)).astype(np.float32).astype(nl.float8_e4m3)
    b = rng.uniform(-2, 2, (128, 64)).astype(np.float32).astype(nl.float8_e4m3)
    want = a.astype(np.float64).T @ b.astype(np.float64)
    np.testing.assert_allclose(mm(a, b), want, rtol=1e-5, atol=1e-4)
    with pytest.raises(Exception, match="cannot be mixed in one matmul"):
        mm(a, b.astype(np.float32).astype(nl.float8_e4m3fn))


def test_nc_matmul_e4m3fn_needs_neuroncore_v4():
    """NKI: float8_e4m3fn on nc_matmul from NeuronCore-v4.  trn1 (v2)
    refuses it and takes float8_e4m3; trn2 (which also runs tpbsim's v4
    forms, MX) takes both."""
    a = np.ones((128, 128), np.float32)
    b = np.full((128, 64), 0.5, np.float32)
    fn = (a.astype(nl.float8_e4m3fn), b.astype(nl.float8_e4m3fn))
    with pytest.raises(Exception, match="stationary dtype float8_e4m3fn .OCP FP8. needs "
                                        "NeuronCore-v4 .NKI nc_matmul.; target trn1"):
        tpbsim.simulate(mm, *fn, target="trn1")
    legacy = (a.astype(nl.float8_e4m3), b.astype(nl.float8_e4m3))
    np.testing.assert_array_equal(tpbsim.simulate(mm, *legacy, target="trn1").outputs, 64.0)
    np.testing.assert_array_equal(tpbsim.simulate(mm, *fn, target="trn2").outputs, 64.0)
