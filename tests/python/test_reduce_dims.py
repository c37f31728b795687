"""tensor_reduce on views over the kernel format's 5 dims whose extra dims
have size 1 (a pooling reshape (P, n, R/k, k, W/k, k) at k = 1, or with a
unit row dim): the unit dims are dropped and the axes renumbered
(docs/python.md "Index expressions"), against NumPy."""
import numpy as np
import pytest

from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


@nki.jit
def pool_max(a, k, keepdims, neg):
    P, n, R, W = a.shape
    shape = (P, n, R // k, 1, W // k, 1) if keepdims else (P, n, R // k, W // k)
    out = nl.ndarray(shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, n, R, W), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    r = t.reshape((P, n, R // k, k, W // k, k))
    axis = [-3, -1] if neg else [3, 5]
    m = nisa.tensor_reduce(nl.max, r, axis=axis, keepdims=keepdims)
    nisa.dma_copy(dst=out, src=m)
    return out


@pytest.mark.parametrize("k,R", [(1, 2), (2, 2), (1, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_pool_reduce_over_five_dims_numpy(k, R, keepdims):
    a = np.random.default_rng(3).random((128, 2, R, 14), dtype=np.float32)
    want = a.reshape(128, 2, R // k, k, 14 // k, k).max(axis=(3, 5), keepdims=keepdims)
    np.testing.assert_array_equal(pool_max(a, k, keepdims, False), want)


def test_pool_reduce_negative_axes_numpy():
    a = np.random.default_rng(4).random((128, 3, 2, 6), dtype=np.float32)
    want = a.reshape(128, 3, 1, 2, 3, 2).max(axis=(3, 5))
    np.testing.assert_array_equal(pool_max(a, 2, False, True), want)


def test_five_real_free_dims_still_refused():
    """Five free dims none of which has size 1 do not fit: the format's error."""
    a = np.random.default_rng(5).random((128, 3, 4, 6), dtype=np.float32)
    with pytest.raises(Exception, match="5 free dims"):
        pool_max(a, 2, False, False)


@nki.jit
def unit_reduce(a, op, negate, six):
    """nisa.tensor_reduce over a last axis of size 1, of a [P, n, 1] tile or
    (six) of its [P, 2, 2, 2, n // 8, 1] view: 6 dims with 4 kept ones."""
    P, n, _ = a.shape
    shape = (P, 2, 2, 2, n // 8) if six else (P, n)
    out = nl.ndarray(shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, n, 1), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    r = t.reshape((P, 2, 2, 2, n // 8, 1)) if six else t
    m = nisa.tensor_reduce(op, r, axis=len(r.shape) - 1, negate=negate)
    nisa.dma_copy(dst=out, src=m)
    return out


@pytest.mark.parametrize("six", [False, True])
@pytest.mark.parametrize("negate", [False, True])
def test_unit_axis_reduce_float_numpy(six, negate):
    """A reduction over one element is that element (negated)."""
    a = np.random.default_rng(6).standard_normal((128, 16, 1)).astype(np.float32)
    want = -a[:, :, 0] if negate else a[:, :, 0]
    got = unit_reduce(a, nl.add, negate, six)
    np.testing.assert_array_equal(got.reshape(128, 16), want)


def test_unit_axis_reduce_int_numpy():
    """An arithmetic reduction of int32 goes through fp32 (rounds past 2^24),
    a bitwise one keeps the bits."""
    a = (np.random.default_rng(7).integers(1 << 23, 1 << 29, (128, 16, 1)) * 2 + 1).astype(np.int32)
    np.testing.assert_array_equal(unit_reduce(a, nl.add, False, False),
                                  a[:, :, 0].astype(np.float32).astype(np.int32))
    np.testing.assert_array_equal(unit_reduce(a, nl.bitwise_or, False, True).reshape(128, 16),
                                  a[:, :, 0])


@pytest.mark.parametrize("op", [nl.divide, nl.left_shift])
def test_unit_axis_reduce_refuses_non_reductions(op):
    """An op that is not a reduction is refused over a unit axis too (it was
    taken as a copy)."""
    a = np.zeros((128, 16, 1), dtype=np.float32)
    with pytest.raises(Exception, match="field 'operator'.*is not a reduction"):
        unit_reduce(a, op, False, False)
