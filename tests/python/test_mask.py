"""NKI mask= through the Python API (docs/python.md "mask="): the mask is
the kernel format's affine predicate over dst's indices; masked-out dst
elements keep their value.  Checked against NumPy, plus a refused form."""
import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


@nki.jit
def masked_ops(x, y, z):
    P, F = x.shape
    outs = [nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm) for _ in range(4)]
    ti = nl.ndarray((P, F), dtype=nl.int32, buffer=nl.shared_hbm)
    tx = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    ty = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    res = [nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf) for _ in range(4)]
    io = nl.ndarray((P, F), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=tx, src=x)
    nisa.dma_copy(dst=ty, src=y)
    for r in res:
        nisa.dma_copy(dst=r, src=z)
    nisa.memset(dst=io, value=-1)
    # f >= 8
    nisa.activation(dst=res[0], op=nl.exp, data=tx,
                    mask={"pattern": [[1, F]], "offset": -8, "cmp_op": nl.greater_equal})
    # causal: p - f >= 0
    nisa.tensor_tensor(dst=res[1], data1=tx, data2=ty, op=nl.add, engine=nisa.engine.gpsimd,
                       mask={"pattern": [[-1, F]], "channel_multiplier": 1,
                             "cmp_op": "greater_equal"})
    # p < 40
    nisa.scalar_tensor_tensor(dst=res[2], data=tx, op0=nl.multiply, operand0=3.0,
                              op1=nl.subtract, operand1=ty,
                              mask={"pattern": [[0, F]], "offset": -40,
                                    "channel_multiplier": 1, "cmp_op": nl.less})
    # f - p >= 0
    nisa.reciprocal(dst=res[3], data=tx,
                    mask={"pattern": [[1, F]], "channel_multiplier": -1, "cmp_op": "greater_equal"})
    # f < p
    nisa.iota(dst=io, pattern=[[1, F]], offset=0, channel_multiplier=100,
              mask={"pattern": [[-1, F]], "channel_multiplier": 1, "cmp_op": "greater"})
    for o, r in zip(outs, res):
        nisa.dma_copy(dst=o, src=r)
    nisa.dma_copy(dst=ti, src=io)
    return tuple(outs) + (ti,)


def test_masked_ops_numpy():
    rng = np.random.default_rng(12)
    P, F = 64, 48
    x, y, z = (rng.standard_normal((P, F)).astype(np.float32) for _ in range(3))
    a, b, c, r, i = masked_ops(x, y, z)
    p, f = np.meshgrid(np.arange(P), np.arange(F), indexing="ij")
    np.testing.assert_allclose(a, np.where(f >= 8, np.exp(x), z), rtol=1e-5)
    np.testing.assert_array_equal(b, np.where(p - f >= 0, x + y, z))
    np.testing.assert_array_equal(c, np.where(p < 40, x * np.float32(3) - y, z))
    np.testing.assert_allclose(r, np.where(f - p >= 0, 1 / x, z), rtol=1e-6)
    np.testing.assert_array_equal(i, np.where(p > f, 100 * p + f, -1).astype(np.int32))


def bad_reduce_res(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    s = nl.ndarray((a.shape[0], 1), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.activation(dst=t, op=nl.exp, data=t, reduce_op=nl.add, reduce_res=s,
                    mask={"pattern": [[1, a.shape[1]]]})
    nisa.dma_copy(dst=out, src=t)
    return out


def test_masked_reduce_res_refused():
    with pytest.raises(tpbsim.TpbError) as e:
        nki.jit(bad_reduce_res)(np.zeros((16, 32), np.float32))
    assert "field 'mask'" in str(e.value) and "reduce_res" in str(e.value), str(e.value)


def test_mask_not_a_predicate():
    with pytest.raises(tpbsim.TpbError) as e:
        nki.jit(lambda a: _bad_mask(a))(np.zeros((16, 32), np.float32))
    assert "field 'mask'" in str(e.value), str(e.value)


def _bad_mask(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.tensor_copy(dst=t, src=t, mask="i_p < 3")
    nisa.dma_copy(dst=out, src=t)
    return out
