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


# ---- nisa.tensor_tensor on int32 / uint32: GpSimd, native integers ----

_TT_OPS = (("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
           ("maximum", np.maximum), ("minimum", np.minimum), ("equal", np.equal),
           ("not_equal", np.not_equal), ("less", np.less), ("greater_equal", np.greater_equal))


def _wrap(x, dt):
    """NumPy int64 arithmetic wrapped to 32 bits (two's complement)."""
    return (np.asarray(x, np.int64) & 0xFFFFFFFF).astype(np.uint32).view(dt)


def _int_operands(dt):
    rng = np.random.default_rng(11)
    info = np.iinfo(dt)
    a = rng.integers(info.min, info.max, (128, 48), dtype=np.int64, endpoint=True)
    b = rng.integers(info.min, info.max, (128, 48), dtype=np.int64, endpoint=True)
    a[0, :8] = [16777217, 1000000001, info.max, info.min, 16777217, 3, 2**24 + 3, info.max]
    b[0, :8] = [0, 2, 1, 1, 16777216, 5, 2**24 + 1, info.max]
    return a.astype(dt), b.astype(dt)


def _tt_kernel(engine=None, psum=None):
    """Every op of _TT_OPS on a and b into out[k] (a's dtype); engine
    passed when given; psum = "in" puts b, "dst" the result, in PSUM."""
    @nki.jit
    def k(a, b):
        out = nl.ndarray((len(_TT_OPS),) + a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        ta, tb = nl.load(a), nl.load(b)
        if psum == "in":
            pb = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.psum)
            nisa.tensor_copy(dst=pb, src=tb)
            tb = pb
        for i, (name, _) in enumerate(_TT_OPS):
            t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.psum if psum == "dst" else nl.sbuf)
            kw = {} if engine is None else {"engine": engine}
            nisa.tensor_tensor(dst=t, data1=ta, data2=tb, op=getattr(nl, name), **kw)
            if psum == "dst":
                s = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
                nisa.tensor_copy(dst=s, src=t)
                t = s
            nl.store(out[i], t)
        return out
    return k


@pytest.mark.parametrize("dt", [np.int32, np.uint32])
def test_tensor_tensor_int_default_exact_numpy(dt):
    a, b = _int_operands(dt)
    got = _tt_kernel()(a, b)
    for (name, fn), g in zip(_TT_OPS, got):
        exp = _wrap(fn(a.astype(np.int64), b.astype(np.int64)), dt)
        np.testing.assert_array_equal(g, exp, err_msg=name)
    assert got[0][0, 0] == 16777217 and got[1][0, 1] == 999999999   # pkO repro_1


def _fp32_then_int(fn, a, b, dt):
    """The Vector engine: fp32 operands and math, then rint and saturate."""
    r = fn(a.astype(np.float32), b.astype(np.float32)).astype(np.float64)
    info = np.iinfo(dt)
    return np.clip(np.rint(r), info.min, info.max).astype(dt)


@pytest.mark.parametrize("psum", [None, "in", "dst"])
def test_tensor_tensor_int_vector_is_fp32_numpy(psum):
    # engine=vector given, or (NKI) the GpSimd default falling back to
    # Vector because an operand is in PSUM: fp32 arithmetic
    a, b = _int_operands(np.int32)
    k = _tt_kernel(engine=nisa.vector_engine if psum is None else None, psum=psum)
    got = k(a, b)
    for (name, fn), g in zip(_TT_OPS, got):
        np.testing.assert_array_equal(g, _fp32_then_int(fn, a, b, np.int32), err_msg=name)
    assert got[0][0, 0] == 16777216   # 16777217 + 0 rounded through fp32


def test_tensor_tensor_uint32_vector_saturates():
    # DVE: 3 - 5 = -2.0 in fp32, stored saturating to 0; GpSimd wraps
    a = np.array([[3, 4000000000]], np.uint32)
    b = np.array([[5, 1]], np.uint32)
    assert _tt_kernel(engine=nisa.vector_engine)(a, b)[1].tolist() == [[0, 4000000000]]
    assert _tt_kernel()(a, b)[1].tolist() == [[2**32 - 2, 3999999999]]


@nki.jit
def nl_int_ops(a, b):
    out = nl.ndarray((5,) + a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ta, tb = nl.load(a), nl.load(b)
    nl.store(out[0], nl.add(ta, tb))
    nl.store(out[1], nl.multiply(ta, tb))
    nl.store(out[2], nl.maximum(ta, tb))
    nl.store(out[3], ta - tb)   # the tile operator: nl.subtract
    acc = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=acc, src=ta)
    acc += tb                   # an in-place tensor_tensor add
    nl.store(out[4], acc)
    return out


def test_nl_int_ops_follow_tensor_tensor_numpy():
    # nl.add & co., the tile operators and += on two int32 tiles are
    # tensor_tensor: the same default
    a, b = _int_operands(np.int32)
    got = nl_int_ops(a, b)
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    for g, e in zip(got, (a64 + b64, a64 * b64, np.maximum(a64, b64), a64 - b64, a64 + b64)):
        np.testing.assert_array_equal(g, _wrap(e, np.int32))
