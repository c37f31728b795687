"""nl.where(condition, x, y) with a condition of nl.arange / nl.mgrid
comparisons (NKI beta-1 takes any condition): a causal mask
`(q0 + i_q) >= (k0 + i_k)` (iitaku/nki-llama's flash_attention_fwd), an
`&` of comparisons (a two-pass layernorm zeroing masked-out columns),
numbers and tiles as x / y, conditions true or false everywhere and on
loop variables only.  Values against NumPy (docs/python.md "Tile
arithmetic"; pkG repro_1)."""
import numpy as np
import pytest

from tpbsim import NkiError, nki
import tpbsim.nki.language as nl

RNG = np.random.default_rng(606)
HERE = "test_where_index.py"
P, F = 128, 64
IP, IF = np.arange(P)[:, None], np.arange(F)[None, :]


def _data(dtype, shape=(P, F)):
    if np.dtype(dtype).kind == "i":
        return RNG.integers(-1000, 1000, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def _run(body, *arrays, out_dtype=None):
    """A kernel storing body(tiles...) ([P, F]) for the loaded arrays."""
    @nki.jit
    def k(*a):
        out = nl.ndarray((P, F), dtype=out_dtype or a[0].dtype, buffer=nl.shared_hbm)
        nl.store(out, body(*[nl.load(t) for t in a]))
        return out
    return k(*arrays)


def test_repro_1_causal_full_tile():
    # pkG repro_1 as written
    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(64)[None, :]
        r = nl.where(i_p >= i_f, t, nl.full((128, 64), -9984.0, dtype=nl.float32))
        nl.store(out, value=r)
        return out
    a = np.random.default_rng(0).standard_normal((128, 64)).astype(np.float32)
    want = np.where(np.arange(128)[:, None] >= np.arange(64)[None, :], a, -9984.0)
    np.testing.assert_array_equal(k(a), want)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("q0,k0", [(0, 0), (64, 0), (0, 40), (7, 100)])
@pytest.mark.parametrize("y_tile", [False, True])
def test_causal_offsets(dtype, q0, k0, y_tile):
    a = _data(dtype)
    fill = _data(dtype)

    def body(t, f):
        i_q, i_k = nl.arange(P)[:, None], nl.arange(F)[None, :]
        return nl.where((q0 + i_q) >= (k0 + i_k), t, f if y_tile else -77)
    want = np.where(q0 + IP >= k0 + IF, a, fill if y_tile else dtype(-77))
    got = _run(body, a, fill)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want)


def test_causal_loop_offsets():
    # the flash-attention form: offsets from affine_range loop variables
    @nki.jit
    def k(a):
        out = nl.ndarray((4 * P, 2 * F), dtype=a.dtype, buffer=nl.shared_hbm)
        i_q, i_k = nl.arange(P)[:, None], nl.arange(F)[None, :]
        for qi in nl.affine_range(4):
            for ki in nl.affine_range(2):
                t = nl.load(a[qi * P + i_q, ki * F + i_k])
                r = nl.where((qi * P + i_q) >= (ki * F + i_k + 100), t,
                             nl.full((P, F), -9984.0, dtype=nl.float32))
                nl.store(out[qi * P + i_q, ki * F + i_k], r)
        return out
    a = _data(np.float32, (4 * P, 2 * F))
    want = np.where(np.arange(4 * P)[:, None] >= np.arange(2 * F)[None, :] + 100, a, -9984.0)
    np.testing.assert_array_equal(k(a), want)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("y_number", [False, True])
def test_conjunction(dtype, y_number):
    # the layernorm's `mask_p & mask_f`, and a third comparison joining both axes
    a, z = _data(dtype), _data(dtype)
    n, m = 100, 37

    def body(t, zz):
        i_p, i_f = nl.arange(P)[:, None], nl.arange(F)[None, :]
        cond = (i_p < n) & (i_f < m) & (i_p + 2 * i_f != 50)
        return nl.where(cond, t, 5 if y_number else zz)
    cond = (IP < n) & (IF < m) & (IP + 2 * IF != 50)
    want = np.where(cond, a, dtype(5) if y_number else z)
    np.testing.assert_array_equal(_run(body, a, z), want)


def test_layernorm_zeroing_sum():
    # a masked load leaves the rest of its tile undefined: the where clears it
    # before a reduction over the whole width
    @nki.jit
    def k(a):
        out = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        i_p, i_f = nl.arange(P)[:, None], nl.arange(F)[None, :]
        mask = (i_p < 90) & (i_f < 50)
        t = nl.load(a[i_p, i_f], mask=mask)
        safe = nl.where(mask, t, nl.zeros((P, F), dtype=nl.float32))
        nl.store(out, nl.sum(safe, axis=1, keepdims=True))
        return out
    a = _data(np.float32, (90, 50))
    want = np.zeros((P, 1), np.float32)
    want[:90, 0] = a.astype(np.float64).sum(axis=1)
    np.testing.assert_allclose(k(a), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_numbers_and_broadcast(dtype):
    a, col = _data(dtype), _data(dtype, (P, 1))

    def x_number(t, c):   # a number as x, a tile as y
        i_p, i_f = nl.arange(P)[:, None], nl.arange(F)[None, :]
        return nl.where(i_p > i_f + 3, 9, t)
    np.testing.assert_array_equal(_run(x_number, a, col), np.where(IP > IF + 3, dtype(9), a))

    def column_x(t, c):   # a [P, 1] column as x against a [1, F]-shaped condition
        i_f = nl.arange(F)[None, :]
        return nl.where(i_f <= 20, c, t)
    np.testing.assert_array_equal(_run(column_x, a, col),
                                  np.where(IF <= 20, np.broadcast_to(col, (P, F)), a))

    def both_numbers(t, c):   # the condition gives the shape, dtype= the dtype
        i_p, i_f = nl.arange(P)[:, None], nl.arange(F)[None, :]
        return nl.where(i_p == i_f, 1, 0, dtype=dtype)
    np.testing.assert_array_equal(_run(both_numbers, a, col), (IP == IF).astype(dtype))

    def mgrid_cond(t, c):   # nl.mgrid indices
        g = nl.mgrid[0:P, 0:F]
        return nl.where(g.p - g.x < 10, t, -1)
    np.testing.assert_array_equal(_run(mgrid_cond, a, col), np.where(IP - IF < 10, a, dtype(-1)))


@pytest.mark.parametrize("case", ["always", "never", "loop_true", "loop_false"])
def test_constant_conditions(case):
    a, b = _data(np.float32), _data(np.float32)
    picks_x = case in ("always", "loop_true")

    @nki.jit
    def k(a, b):
        out = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.arange(P)[:, None], nl.arange(F)[None, :]
        cond = {"always": (i_p < 128) & (i_f >= 0), "never": i_p + i_f >= 500}.get(case)
        for j in range(3):   # a condition on loop variables only: a bool
            if j == 1:
                c = cond if cond is not None else (j == 1) == (case == "loop_true")
                nl.store(out, nl.where(c, nl.load(a), nl.load(b)))
        return out
    np.testing.assert_array_equal(k(a, b), a if picks_x else b)


def test_constant_condition_numbers():
    a = _data(np.float32)

    def whole_number(t):   # never true: y, a number, over the condition's shape
        i_p, i_f = nl.arange(P)[:, None], nl.arange(F)[None, :]
        return nl.where(i_p > 1000 + i_f, t, 2.5)
    np.testing.assert_array_equal(_run(whole_number, a), np.full((P, F), 2.5, np.float32))


def _refused(body, pattern, *arrays):
    with pytest.raises(NkiError, match=pattern):
        _run(body, *arrays)


def test_refusals():
    a = _data(np.float32)

    def unplaced(t):   # nl.arange(n) not placed on an axis
        return nl.where(nl.arange(F) < 3, t, 0.0)
    _refused(unplaced, r"%s:\d+: nl.where: condition: nl.arange\(n\) must be placed" % HERE, a)

    def sizes(t):   # one axis with indices of two sizes
        return nl.where(nl.arange(P)[:, None] < nl.arange(64)[:, None] + 1, t, 0.0)
    _refused(sizes, r"%s:\d+: nl.where: condition: an axis holds" % HERE, a)

    def shape(t):   # the condition spans more than the tiles
        return nl.where(nl.arange(P)[:, None] < nl.arange(2 * F)[None, :], t, 0.0)
    _refused(shape, r"%s:\d+: nl.where: shapes .* do not broadcast" % HERE, a)

    def rank(t):   # a 3-axis condition over 2-D tiles
        return nl.where(nl.arange(P)[:, None, None] < 3, t, 0.0)
    _refused(rank, r"%s:\d+: nl.where: shapes .* do not broadcast" % HERE, a)

    def no_tile(t):   # numbers only, no dtype=
        return nl.where(nl.arange(P)[:, None] < 3, 1.0, 0.0)
    _refused(no_tile, r"%s:\d+: nl.where: x or y must be a tile" % HERE, a)


def test_non_affine_refused():
    a = _data(np.float32)

    def product(t):   # a product of two indices is not affine
        i_p, i_f = nl.arange(P)[:, None], nl.arange(F)[None, :]
        return nl.where(i_p * i_f < 5, t, 0.0)
    _refused(product, r"%s:\d+: index expressions multiply by integers only" % HERE, a)

    def disjunction(t):   # an OR of comparisons
        i_p, i_f = nl.arange(P)[:, None], nl.arange(F)[None, :]
        return nl.where((i_p < 3) | (i_f < 3), t, 0.0)
    _refused(disjunction, r"%s:\d+: `\|` of index comparisons: .* with & only" % HERE, a)
