"""nl.var and nl.softmax over some of a tile's trailing free axes (NKI: the
axes must be the last contiguous free dims, not necessarily all of them),
against NumPy in float64."""
import numpy as np
import pytest

import tpbsim.nki as nki
import tpbsim.nki.language as nl

RNG = np.random.default_rng(31)
CASES = [((8, 4, 6), (2,)), ((8, 4, 6), -1), ((16, 3, 5, 7), (3,)), ((16, 3, 5, 7), (2, 3)),
         ((16, 3, 5, 7), (-2, -1)), ((32, 2, 3, 4, 5), (3, 4))]


def _axes(shape, axis):
    return tuple(a % len(shape) for a in np.atleast_1d(axis))


def _var_kernel(shape, axis, dt):
    oshape = tuple(1 if d in _axes(shape, axis) else n for d, n in enumerate(shape))

    @nki.jit
    def k(a):
        out = nl.ndarray(oshape, dtype=dt, buffer=nl.shared_hbm)
        v = nl.var(nl.load(a), axis=axis, dtype=dt)
        assert tuple(v.shape) == oshape
        nl.store(out, v)
        return out
    return k


def _softmax_kernel(shape, axis, dt):
    @nki.jit
    def k(a):
        out = nl.ndarray(shape, dtype=dt, buffer=nl.shared_hbm)
        nl.store(out, nl.softmax(nl.load(a), axis=axis, dtype=dt))
        return out
    return k


@pytest.mark.parametrize("shape,axis", CASES)
def test_var_trailing_axes(shape, axis):
    a = (RNG.standard_normal(shape) * 3 + 1).astype(np.float32)
    r = _var_kernel(shape, axis, nl.float32)(a)
    ref = a.astype(np.float64).var(axis=_axes(shape, axis), keepdims=True)
    np.testing.assert_allclose(r, ref, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("shape,axis", CASES)
def test_softmax_trailing_axes(shape, axis):
    a = (RNG.standard_normal(shape) * 4).astype(np.float32)
    r = _softmax_kernel(shape, axis, nl.float32)(a)
    ax = _axes(shape, axis)
    e = np.exp(a.astype(np.float64) - a.max(axis=ax, keepdims=True))
    np.testing.assert_allclose(r, e / e.sum(axis=ax, keepdims=True), rtol=2e-6, atol=1e-7)


def test_bf16_output_rounds_once():
    """dtype=bfloat16: the float32 result rounded once to bf16 (NumPy's
    float64 value rounded to bf16 is within one bf16 ulp)."""
    shape, axis = (8, 4, 16), 2
    a = (RNG.standard_normal(shape) * 2).astype(np.float32)
    r = np.asarray(_softmax_kernel(shape, axis, nl.bfloat16)(a), dtype=np.float32)
    e = np.exp(a.astype(np.float64) - a.max(axis=2, keepdims=True))
    np.testing.assert_allclose(r, e / e.sum(axis=2, keepdims=True), rtol=2 ** -8, atol=0)
    v = np.asarray(_var_kernel(shape, axis, nl.bfloat16)(a), dtype=np.float32)
    np.testing.assert_allclose(v, a.astype(np.float64).var(axis=2, keepdims=True), rtol=2 ** -8)
