"""nl.where and nl.broadcast_to broadcast as NumPy does (NKI's rule: the
same rank, a dim of 1 grows): [P, 1] columns, [1, F] rows, numbers and
size-1 free dims; shapes NKI refuses raise NkiError at the kernel line.
Values against NumPy (docs/python.md "Broadcasting")."""
import numpy as np
import pytest

from tpbsim import NkiError, nki
import tpbsim.nki.language as nl

RNG = np.random.default_rng(71)
HERE = "test_broadcast_where.py"


def _where(shape_c, shape_x, shape_y, x_number=None, y_number=None):
    """A kernel of nl.where over loaded tiles of these shapes (a number
    instead of x or y when given), storing the result."""
    @nki.jit
    def k(c, x, y):
        out = nl.ndarray(np.broadcast_shapes(c.shape, x.shape, y.shape), dtype=nl.float32,
                         buffer=nl.shared_hbm)
        tx = nl.load(x) if x_number is None else x_number
        ty = nl.load(y) if y_number is None else y_number
        nl.store(out, nl.where(nl.load(c), tx, ty))
        return out
    c = RNG.integers(0, 2, shape_c).astype(np.float32)
    x = RNG.standard_normal(shape_x).astype(np.float32)
    y = RNG.standard_normal(shape_y).astype(np.float32)
    want = np.where(c != 0, x if x_number is None else np.float32(x_number),
                    y if y_number is None else np.float32(y_number))
    return k(c, x, y), want


@pytest.mark.parametrize("shapes", [
    ((128, 8), (128, 1), (128, 8)),        # a column as x (the MoE top-k's neg_inf)
    ((128, 8), (128, 8), (128, 1)),        # a column as y
    ((128, 1), (1, 8), (128, 8)),          # condition a column, x a row
    ((1, 16), (64, 16), (64, 1)),          # condition a row
    ((32, 1, 6), (32, 5, 1), (32, 5, 6)),  # size-1 free dims of one rank
    ((1, 1), (1, 1), (96, 4)),             # [1, 1] condition and x
])
def test_where_broadcasts_numpy(shapes):
    got, want = _where(*shapes)
    np.testing.assert_array_equal(got, want)


def test_where_numbers_numpy():
    got, want = _where((128, 8), (1, 1), (128, 1), x_number=3.5)
    np.testing.assert_array_equal(got, want)
    got, want = _where((128, 1), (1, 8), (1, 1), y_number=-1.0)
    np.testing.assert_array_equal(got, want)


@nki.jit
def where_promoted(c, x, y):
    out = nl.ndarray(c.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    r = nl.where(nl.load(c), nl.load(x), nl.load(y))
    assert r.dtype == nl.float32   # int32 with float32: float32, NumPy's
    nl.store(out, r)
    return out


def test_where_dtype_promoted_numpy():
    c = RNG.integers(0, 2, (64, 8)).astype(np.float32)
    x = RNG.integers(-1000, 1000, (64, 1)).astype(np.int32)
    y = RNG.standard_normal((64, 8)).astype(np.float32)
    np.testing.assert_array_equal(where_promoted(c, x, y), np.where(c != 0, x, y))


def _refused(fn, pattern, *arrays):
    with pytest.raises(NkiError, match=pattern):
        nki.jit(fn)(*arrays)


def test_where_refusals():
    a = np.zeros((128, 8), np.float32)
    b = np.zeros((128, 4), np.float32)
    v = np.zeros((128,), np.float32)

    def mismatch(a, b):   # [128, 8] against [128, 4]
        return nl.where(nl.load(a), nl.load(a), nl.load(b))
    _refused(mismatch, r"%s:\d+: nl.where: shapes \[128, 8\] and \[128, 8\] and \[128, 4\] "
                       r"do not broadcast" % HERE, a, b)

    def ranks(a, v):   # a 2-D and a 1-D tile: NumPy would align the partition dim on a free one
        return nl.where(nl.load(a), nl.load(a), nl.load(v))
    _refused(ranks, r"%s:\d+: nl.where: shapes .* do not broadcast" % HERE, a, v)

    def cond_number(a):
        return nl.where(1.0, nl.load(a), 0.0)
    _refused(cond_number, r"%s:\d+: nl.where: condition must be a tile" % HERE, a)


def _broadcast(src_shape, shape, dtype=None):
    @nki.jit
    def k(a):
        out = nl.ndarray(shape, dtype=dtype or a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(a).broadcast_to(shape) if dtype is None else
                 nl.broadcast_to(nl.load(a), shape, dtype=dtype))
        return out
    a = (np.arange(np.prod(src_shape)) + 1).astype(np.float32).reshape(src_shape)
    return k(a), np.broadcast_to(a, shape)


@pytest.mark.parametrize("src, shape", [
    ((1, 1), (128, 8)),            # partition and free dims together
    ((1, 1, 2), (128, 64, 2)),     # vLLM's iota(...).broadcast_to((128, 64, 2)) shape
    ((1, 4, 1), (1, 4, 8)),        # a free dim only, one partition
    ((16, 1, 3), (16, 5, 3)),      # a middle free dim
    ((1, 8), (128, 8)),            # the row form (broadcast_partition alone)
    ((128, 1), (128, 8)),          # the column form (tensor_copy alone)
])
def test_broadcast_to_numpy(src, shape):
    got, want = _broadcast(src, shape)
    np.testing.assert_array_equal(got, want)


def test_broadcast_to_dtype_numpy():
    got, want = _broadcast((1, 1, 4), (32, 3, 4), dtype=nl.int32)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want.astype(np.int32))


@nki.jit
def broadcast_psum(a):
    """The same shape gives x itself (NKI); a PSUM [1, 1, 2] tile broadcast
    to 64 partitions and 3 columns."""
    out = nl.ndarray((64, 3, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(a)
    assert nl.broadcast_to(t, t.shape) is t
    p = nl.ndarray((1, 1, 2), dtype=nl.float32, buffer=nl.psum)
    p[...] = nl.copy(t)
    nl.store(out, p.broadcast_to((64, 3, 2)))
    return out


def test_broadcast_to_psum_numpy():
    a = np.array([[[2.5, -7.0]]], np.float32)
    np.testing.assert_array_equal(broadcast_psum(a), np.broadcast_to(a, (64, 3, 2)))


def test_broadcast_to_refusals():
    a = np.zeros((128, 1), np.float32)
    b = np.zeros((2, 8), np.float32)

    def rank(a):   # NKI: the same rank
        return nl.broadcast_to(nl.load(a), (128, 4, 8))
    _refused(rank, r"%s:\d+: nl.broadcast_to: \[128, 1\] cannot be broadcast to \[128, 4, 8\]"
             % HERE, a)

    def grows(b):   # a dim of 2 cannot become 128
        return nl.load(b).broadcast_to((128, 8))
    _refused(grows, r"%s:\d+: nl.broadcast_to: \[2, 8\] cannot be broadcast to \[128, 8\]"
             % HERE, b)

    def shrinks(a):
        return nl.broadcast_to(nl.load(a), (64, 1))
    _refused(shrinks, r"%s:\d+: nl.broadcast_to: \[128, 1\] cannot be broadcast" % HERE, a)

    def hbm(b):   # NKI: the source tile in SBUF or PSUM
        return nl.broadcast_to(b[0:1, :], (128, 8))
    _refused(hbm, r"%s:\d+: nl.broadcast_to: x must be an SBUF/PSUM tile" % HERE, b)
