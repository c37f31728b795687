"""nisa.tensor_scalar(..., engine=nisa.scalar_engine) with [P, 1] tile operands.

NKI: arithmetic tensor_scalar runs on the Vector, Scalar or GpSimd engine;
"the Scalar Engine on trn2 only supports" op0=multiply with op1=add,
op0=multiply alone and op0=add alone; the math is float32, the result cast
to dst's dtype.  tpbsim lowers these, given a [P, 1] operand, to the
identity Activation's affine step fl32(fl32(x * scale) + bias): two fp32
roundings, so every value below equals NumPy's float32 two-step
(x op0 operand0) op1 operand1 bit for bit (the data are chosen so that a
fused multiply-add would differ).  Other combinations on the Scalar engine
are refused on trn2 naming the field; trn1 and trn3 take them with numbers
only (a TensorScalar on ACT)."""
import numpy as np
import pytest

import tpbsim
from tpbsim import nki
from tpbsim._lib import TpbError
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

from conftest import sbuf_copy

RNG = np.random.default_rng(2024)
P, F = 96, 40
F32 = np.float32


def _ts_kernel(op0, a, op1=None, b=None, dst_dt=nl.float32, reverse0=False, engine=None):
    """tensor_scalar(data=x, op0, operand0, op1, operand1) into dst_dt; a / b
    are numbers, or the strings "col0" / "col1": the kernel's [P, 1] inputs."""
    eng = nisa.scalar_engine if engine is None else engine

    def k(x, col0, col1):
        tx = sbuf_copy(x)
        c = {"col0": sbuf_copy(col0), "col1": sbuf_copy(col1)}
        r = nl.ndarray(x.shape, dtype=dst_dt, buffer=nl.sbuf)
        kw = {}
        if op1 is not None:
            kw = {"op1": op1, "operand1": c.get(b, b) if isinstance(b, str) else b}
        nisa.tensor_scalar(r, tx, op0=op0, operand0=c[a] if isinstance(a, str) else a,
                           reverse0=reverse0, engine=eng, **kw)
        out = nl.ndarray(x.shape, dtype=dst_dt, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=r)
        return out
    return nki.jit(k)


def _data():
    x = RNG.standard_normal((P, F)).astype(F32) * F32(3)
    x[0, :4] = [-1.5, 0.0, -0.0, 2.0]                     # signed zeros in, and out below
    col0 = RNG.standard_normal((P, 1)).astype(F32)
    col0[0, 0] = 0.0                                      # -1.5 * 0 = -0
    col1 = RNG.standard_normal((P, 1)).astype(F32)
    return x, col0, col1


def _bits(a):
    return np.ascontiguousarray(np.asarray(a, F32)).view(np.uint32)


def _bf16(x):
    """x rounded to bfloat16 (RNE), as float32 values."""
    u = np.asarray(x, F32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(F32)


def _val(v, col0, col1):
    return {"col0": col0, "col1": col1}[v] if isinstance(v, str) else F32(v)


def _fused_differs(x, a, b):
    """Whether fma(x, a, b) rounded once differs from the two-step result
    somewhere: the data can tell the two apart."""
    two = (x * a) + b
    fused = (x.astype(np.float64) * a + b).astype(F32)   # the exact product, one rounding
    return bool(np.any(_bits(fused) != _bits(two)))


def _run(kern, x, col0, col1, target="trn2"):
    r = tpbsim.simulate(kern, x, col0, col1, target=target)
    return r, np.asarray(r.outputs, F32)


@pytest.mark.parametrize("target", ["trn2", "trn3"])
def test_multiply_numpy(target):
    """x * operand0, a [P, 1] tile: the Activation's scale, with the
    immediate bias -0.0, which keeps a -0 product -0."""
    x, col0, col1 = _data()
    _, got = _run(_ts_kernel(nl.multiply, "col0"), x, col0, col1, target)
    assert np.array_equal(_bits(got), _bits(x * col0))
    assert np.signbit(got[0, 0]) and got[0, 0] == 0      # -1.5 * 0 is -0


@pytest.mark.parametrize("target", ["trn2", "trn3", "trn1"])
def test_add_numpy(target):
    """x + operand0 (a [P, 1] tile): the Activation's bias with scale 1."""
    x, col0, col1 = _data()
    _, got = _run(_ts_kernel(nl.add, "col1"), x, col0, col1, target)
    assert np.array_equal(_bits(got), _bits(x + col1))


@pytest.mark.parametrize("a, b", [("col0", "col1"), ("col0", 0.3), (1.7, "col1"),
                                  ("col0", -0.0)])
@pytest.mark.parametrize("target", ["trn2", "trn3"])
def test_multiply_add_numpy(target, a, b):
    """(x * operand0) + operand1 with tile / number mixes: two fp32
    roundings (scale, then bias), not a fused multiply-add."""
    x, col0, col1 = _data()
    av, bv = _val(a, col0, col1), _val(b, col0, col1)
    _, got = _run(_ts_kernel(nl.multiply, a, nl.add, b), x, col0, col1, target)
    want = (x * av) + bv
    if b != -0.0:
        assert _fused_differs(x, av, bv)
    assert np.array_equal(_bits(got), _bits(want))


def test_multiply_add_trn1_tile_bias_numpy():
    """trn1 (no immediate bias): a number scale with a tile operand1 works."""
    x, col0, col1 = _data()
    _, got = _run(_ts_kernel(nl.multiply, 1.7, nl.add, "col1"), x, col0, col1, "trn1")
    assert np.array_equal(_bits(got), _bits((x * F32(1.7)) + col1))


def test_multiply_trn1_zero_sign_numpy():
    """trn1 has no immediate bias: x * tile adds the absent bias's +0, so
    the values equal NumPy's and only a -0 product comes out +0
    (docs/python.md)."""
    x, col0, col1 = _data()
    _, got = _run(_ts_kernel(nl.multiply, "col0"), x, col0, col1, "trn1")
    want = x * col0
    np.testing.assert_array_equal(got, want)
    zero = want == 0
    assert np.array_equal(_bits(got[~zero]), _bits(want[~zero]))
    assert not np.signbit(got[0, 0])


@pytest.mark.parametrize("a, b", [("col0", "col1"), ("col0", None), (0.625, "col1")])
def test_bf16_dst_numpy(a, b):
    """bf16 dst: the fp32 result rounded once to bfloat16 (RNE)."""
    x, col0, col1 = _data()
    op1 = nl.add if b is not None else None
    kern = _ts_kernel(nl.multiply, a, op1, b, dst_dt=nl.bfloat16)
    _, got = _run(kern, x, col0, col1)
    want = x * _val(a, col0, col1)
    if b is not None:
        want = want + _val(b, col0, col1)
    assert np.array_equal(_bits(got), _bits(_bf16(want)))


def test_bf16_data_numpy():
    """bf16 data: converted to fp32 exactly, then the same two steps."""
    x, col0, col1 = _data()
    xb = nki.typed(x, "bfloat16")
    r = tpbsim.simulate(_ts_kernel(nl.multiply, "col0", nl.add, "col1"), xb, col0, col1)
    want = (_bf16(x) * col0) + col1
    assert np.array_equal(_bits(r.outputs), _bits(want))


def test_reverse0_numpy():
    """multiply and add commute: reverse0 gives the same values."""
    x, col0, col1 = _data()
    _, got = _run(_ts_kernel(nl.multiply, "col0", reverse0=True), x, col0, col1)
    assert np.array_equal(_bits(got), _bits(col0 * x))


def test_costs_an_activation():
    """A tile-operand tensor_scalar on the Scalar engine is one Activation
    instruction: the ACT engine's busy cycles equal those of
    nisa.activation(copy, scale=col0, bias=col1) on the same tiles."""
    x, col0, col1 = _data()

    def act(x, col0, col1):
        tx, c0, c1 = sbuf_copy(x), sbuf_copy(col0), sbuf_copy(col1)
        r = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=r, op=nl.copy, data=tx, scale=c0, bias=c1)
        out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=r)
        return out
    ra, want = _run(nki.jit(act), x, col0, col1)
    rt, got = _run(_ts_kernel(nl.multiply, "col0", nl.add, "col1"), x, col0, col1)
    assert np.array_equal(_bits(got), _bits(want))
    ea, et = ra.engines()["Activation"], rt.engines()["Activation"]
    assert (et["instructions"], et["busy_cycles"]) == (ea["instructions"], ea["busy_cycles"])
    assert "Vector" not in rt.engines() or rt.engines()["Vector"]["instructions"] == 0


@pytest.mark.parametrize("op0, a, op1, b, field", [
    (nl.subtract, "col0", None, None, "op0"),
    (nl.subtract, 1.0, None, None, "op0"),
    (nl.maximum, 0.0, None, None, "op0"),
    (nl.multiply, "col0", nl.subtract, "col1", "op1"),
    (nl.multiply, 2.0, nl.maximum, 0.0, "op1"),
    (nl.add, "col0", nl.add, "col1", "op1"),
    (nl.add, 1.0, nl.multiply, 2.0, "op1"),
])
def test_other_combinations_refused_on_trn2(op0, a, op1, b, field):
    x, col0, col1 = _data()
    with pytest.raises(TpbError, match=r"field '%s': the Scalar engine on trn2 runs "
                       r"tensor_scalar only as op0=multiply with op1=add, op0=multiply alone "
                       r"\(op1=None\) or op0=add alone" % field):
        _run(_ts_kernel(op0, a, op1, b), x, col0, col1)


@pytest.mark.parametrize("target", ["trn1", "trn3"])
@pytest.mark.parametrize("op0, a, op1, b, field", [
    (nl.subtract, "col0", None, None, "operand0"),
    (nl.multiply, 2.0, nl.subtract, "col1", "operand1"),
])
def test_other_combinations_on_trn1_trn3(target, op0, a, op1, b, field):
    """trn1 / trn3: NKI restricts trn2 only; tpbsim runs the other
    arithmetic ops with numbers on ACT (a TensorScalar), and refuses a
    [P, 1] operand there, which only the Activation's scale and bias take."""
    x, col0, col1 = _data()
    kern = _ts_kernel(op0, 1.25 if isinstance(a, str) else a, op1, 0.5 if b else None)
    _, got = _run(kern, x, col0, col1, target)
    want = x - F32(1.25) if op0 is nl.subtract else (x * F32(a)) - F32(0.5)
    assert np.array_equal(_bits(got), _bits(want))
    with pytest.raises(TpbError, match=r"field '%s': a \[P, 1\] operand on the Scalar engine "
                       r"is the Activation's scale or bias" % field):
        _run(_ts_kernel(op0, a, op1, b), x, col0, col1, target)


def test_tile_scale_number_bias_refused_on_trn1():
    """trn1 has no immediate Activation bias: operand1 must be a tile there."""
    x, col0, col1 = _data()
    with pytest.raises(TpbError, match=r"field 'operand1': with a \[P, 1\] operand0 the Scalar "
                       r"engine adds operand1 as the Activation's bias, and a number bias "
                       r"needs NeuronCore-v3"):
        _run(_ts_kernel(nl.multiply, "col0", nl.add, 0.5), x, col0, col1, "trn1")


def test_vector_engine_unchanged_numpy():
    """The same op on the Vector engine (TensorScalarPtr) gives the same bits."""
    x, col0, col1 = _data()
    _, act = _run(_ts_kernel(nl.multiply, "col0", nl.add, "col1"), x, col0, col1)
    _, dve = _run(_ts_kernel(nl.multiply, "col0", nl.add, "col1", engine=nisa.vector_engine),
                  x, col0, col1)
    assert np.array_equal(_bits(act), _bits(dve))


def test_nkilib_moe_affinity_form_numpy():
    """The NKI Library's moe_tkg down_projection_mx affinity scaling: in
    place on the first T rows, operand0 a column slice of a wider fp32 tile,
    dst a [T, 1, H] slice of a 3-D tile."""
    T, E, H = 40, 3, 64
    x = RNG.standard_normal((P, H)).astype(F32)
    aff = RNG.standard_normal((P, E)).astype(F32)

    def k(x, aff):
        tx, ta = sbuf_copy(x), sbuf_copy(aff)
        o = nl.ndarray((P, E, H), dtype=nl.float32, buffer=nl.sbuf)
        for e in range(E):
            nisa.tensor_scalar(dst=tx[:T, :], data=tx[:T, :], op0=nl.multiply,
                               operand0=ta[:T, e:e + 1], engine=nisa.scalar_engine)
            nisa.tensor_scalar(dst=o[:T, e:e + 1, :], data=tx[:T, :], op0=nl.multiply,
                               operand0=ta[:T, e:e + 1], engine=nisa.scalar_engine)
        out = nl.ndarray((T, E, H), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=o[:T])
        return out
    got = np.asarray(nki.jit(k)(x, aff), F32)
    cur, want = x[:T].copy(), np.empty((T, E, H), F32)
    for e in range(E):
        cur = cur * aff[:T, e:e + 1]
        want[:, e, :] = cur * aff[:T, e:e + 1]
    assert np.array_equal(_bits(got), _bits(want))
