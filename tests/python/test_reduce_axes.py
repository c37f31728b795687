"""NKI's axis rule for reductions (nisa.tensor_reduce; nl.sum, max, min,
mean, prod, var, all): the axes must be the last contiguous free dims,
ending at the final dim (the stubs; NKI 0.3.0 refuses what NKI 0.2.0 read
as the last dim).  Refused forms raise naming the kernel line, the op and
the rule; the accepted ones match NumPy; a beta-1 kernel keeps NumPy's
meaning for any free axes (the SDK's beta-1 pooling examples reduce
axis=[2, 4]).  docs/python.md "Reduction axes"."""
import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(14)
ISA_OPS = {"add": (nl.add, np.sum), "max": (nl.maximum, np.max), "min": (nl.minimum, np.min),
           "mul": (nl.multiply, np.prod)}


def _norm(axis, nd):
    ax = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(sorted(a % nd for a in ax))


@nki.jit
def isa_reduce(a, op, axis, out_shape, keepdims, negate):
    """NKI 0.x: nisa.tensor_reduce(dst=..., ...) of an SBUF copy of a."""
    out = nl.ndarray(out_shape, dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    d = nl.ndarray(out_shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=d, op=ISA_OPS[op][0], data=t, axis=axis, keepdims=keepdims,
                       negate=negate)
    nisa.dma_copy(dst=out, src=d)
    return out


def run_isa(a, op, axis, keepdims=False, negate=False):
    want = ISA_OPS[op][1](a, axis=_norm(axis, a.ndim), keepdims=keepdims)
    got = isa_reduce(a, op, axis, want.shape, keepdims, negate)
    return got, -want if negate else want


@pytest.mark.parametrize("shape, axis", [
    ((128, 4, 8), (1, 2)),          # every free dim of a 3-D tile
    ((128, 4, 8), 2),
    ((128, 4, 8), [2]),
    ((64, 3, 4, 5), (2, 3)),        # the last two of a 4-D tile
    ((64, 3, 4, 5), [1, 2, 3]),
    ((64, 3, 4, 5), (3, 2)),        # any order: a set of dims
    ((128, 4, 8), -1),              # negative axes count from the end (NumPy's)
    ((64, 3, 4, 5), (-2, -1)),
    ((128, 16), 1),
])
@pytest.mark.parametrize("op", ["add", "max", "min"])
def test_isa_reduce_last_axes_numpy(shape, axis, op):
    a = RNG.standard_normal(shape).astype(np.float32)
    got, want = run_isa(a, op, axis)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("keepdims, negate", [(True, False), (False, True), (True, True)])
def test_isa_reduce_keepdims_negate_numpy(keepdims, negate):
    a = RNG.standard_normal((32, 2, 3, 4)).astype(np.float32)
    got, want = run_isa(a, "add", (2, 3), keepdims, negate)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# the rule's words in every refusal of a non-final axis
RULE = r"NKI reduces only the last contiguous free dim\(s\), ending at the final dim"


@pytest.mark.parametrize("shape, axis, match", [
    ((128, 4, 8), 1, RULE + r" \(here axis=2 or \(1, 2\)"),     # NKI 0.2 read this as dim 2
    ((128, 4, 8), (1,), RULE),
    ((64, 3, 4, 5), 1, RULE + r" \(here axis=3, \(2, 3\) or \(1, 2, 3\)"),
    ((64, 3, 4, 5), (1, 2), RULE),
    ((64, 3, 4, 5), [1, 3], RULE),                              # not contiguous
    ((64, 3, 4, 5), 2, RULE),
    ((64, 3, 4, 5), -2, RULE),
    ((128, 4, 8), 0, r"axis 0 is the partition axis"),
    ((128, 4, 8), (0, 1, 2), r"axis 0 is the partition axis"),
    ((128, 4, 8), 3, r"an axis is out of range"),
    ((128, 4, 8), -4, r"an axis is out of range"),
    ((128, 4, 8), (2, 2), r"an axis is named twice"),
    ((128, 4, 8), (2, -1), r"an axis is named twice"),
    ((128, 4, 8), (), r"axis must be an int or a non-empty tuple / list of ints"),
    ((128, 4, 8), 2.0, r"axis must be an int"),
    ((128, 4, 8), True, r"axis must be an int"),
    ((128, 4, 8), "2", r"axis must be an int"),
    ((128, 4, 8), None, r"axis must be an int"),
])
def test_isa_reduce_refused(shape, axis, match):
    a = np.zeros(shape, np.float32)
    with pytest.raises(tpbsim.NkiError, match=r"test_reduce_axes\.py:\d+: nisa\.tensor_reduce: "
                       r"axis=.* on the %d-D tile .*: %s" % (len(shape), match)):
        tpbsim.kernel_json(isa_reduce, a, "add", axis, (shape[0], 1), False, False)


# ---- nki.language ----

NL = {"sum": (nl.sum, np.sum), "max": (nl.max, np.max), "min": (nl.min, np.min),
      "mean": (nl.mean, np.mean), "prod": (nl.prod, np.prod),
      "all": (nl.all, lambda x, axis, keepdims=False: np.all(x != 0, axis=axis,
                                                             keepdims=keepdims)),
      "var": (nl.var, lambda x, axis, keepdims=False: np.var(x, axis=axis, keepdims=True))}


@nki.jit
def nl_reduce(a, fn, axis, out_shape, keepdims):
    out = nl.ndarray(out_shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    if fn == "all":
        r = nl.all(x, axis=axis, dtype=nl.float32)
    else:
        r = NL[fn][0](x, axis=axis, keepdims=keepdims)
    nl.store(out, r)
    return out


@pytest.mark.parametrize("fn, shape, axis, keepdims", [
    ("sum", (128, 4, 8), (1, 2), False),
    ("sum", (64, 3, 4, 5), (2, 3), True),
    ("max", (64, 3, 4, 5), (2, 3), False),
    ("max", (128, 4, 8), -1, False),
    ("min", (64, 3, 4, 5), [-3, -2, -1], False),
    ("min", (128, 4, 8), 2, True),
    ("mean", (64, 3, 4, 5), (2, 3), False),
    ("mean", (128, 4, 8), -1, True),
    ("prod", (64, 3, 4, 5), 3, False),
    ("all", (64, 3, 4, 5), (2, 3), False),
    ("var", (128, 4, 8), (1, 2), False),
])
def test_nl_reduce_last_axes_numpy(fn, shape, axis, keepdims):
    a = RNG.standard_normal(shape).astype(np.float32)
    if fn == "prod":
        a = (1 + a / 8).astype(np.float32)   # a product of modest numbers
    if fn == "all":
        a[RNG.random(shape) < 0.02] = 0
    ax = _norm(axis, len(shape))
    want = NL[fn][1](a, axis=ax, keepdims=keepdims).astype(np.float32)
    got = nl_reduce(a, fn, axis, want.shape, keepdims)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("fn", ["sum", "max", "min", "mean", "prod", "all", "var"])
@pytest.mark.parametrize("shape, axis", [((128, 4, 8), 1), ((64, 3, 4, 5), (1, 2)),
                                         ((64, 3, 4, 5), (1, 3))])
def test_nl_reduce_refused(fn, shape, axis):
    a = np.zeros(shape, np.float32)
    with pytest.raises(tpbsim.NkiError, match=r"test_reduce_axes\.py:\d+: nl\.%s: axis=.* on "
                       r"the %d-D tile .*: %s" % (fn, len(shape), RULE)):
        tpbsim.kernel_json(nl_reduce, a, fn, axis, (shape[0], 1), False)


def test_nl_partition_axis_refused():
    a = np.zeros((128, 8), np.float32)
    with pytest.raises(tpbsim.NkiError, match=r"nl\.sum: axis=\[0, 1\] on the 2-D tile "
                       r"\[128, 8\]: axis 0 is the partition axis"):
        tpbsim.kernel_json(nl_reduce, a, "sum", [0, 1], (1, 1), False)


# ---- NKI beta-1: any free axes, NumPy's meaning ----

def beta1_pool(a, call):
    """The SDK's beta-1 pooling form: a reduction of dim 1 (not last) of a
    3-D tile, by a beta-1 entry point (nki.baremetal) with nl.sum, or by
    beta-1's nisa call form (the op returns its result)."""
    out = nl.ndarray((a.shape[0], a.shape[2]), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(a)
    if call == "isa":
        r = nisa.tensor_reduce(nl.add, t, axis=1)
    else:
        r = nl.sum(t, axis=[1])
    nl.store(out, r)
    return out


@pytest.mark.parametrize("call", ["isa", "nl"])
def test_beta1_reduces_any_free_axis_numpy(call):
    a = RNG.standard_normal((128, 4, 8)).astype(np.float32)
    k = nki.baremetal(beta1_pool) if call == "nl" else nki.jit(beta1_pool)
    np.testing.assert_allclose(k(a, call), a.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_nki0x_nl_sum_middle_axis_refused():
    """The same nl.sum without a beta-1 entry point or form is NKI 0.x's."""
    with pytest.raises(tpbsim.NkiError, match=r"nl\.sum: axis=\[1\] on the 3-D tile .*" + RULE):
        tpbsim.kernel_json(nki.jit(beta1_pool), np.zeros((128, 4, 8), np.float32), "nl")
