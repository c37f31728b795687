"""Python operators on tiles past + - * / (docs/python.md "Tile
arithmetic"): comparisons, shifts, bitwise ops, ** and %, unary - ~ abs(),
each the nl function of the same meaning, and their reflected forms, on
float and int tiles against NumPy.  `==` gives a tile (it was Python's
identity test), tiles stay hashable, and bool(tile) / `//` raise NkiError
naming the kernel line."""
import warnings

import numpy as np
import pytest

import tpbsim
from tpbsim import NkiError, nki
import tpbsim.nki.language as nl

RNG = np.random.default_rng(11)


def _run(fns, a, b):
    """Each fn(ta, tb) on the tiles of a and b, stored as its own output."""
    @nki.jit
    def k(a, b):
        ta, tb = nl.load(a), nl.load(b)
        outs = []
        for fn in fns:
            r = fn(ta, tb)
            out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
            nl.store(out, r)
            outs.append(out)
        return tuple(outs)
    return k(a, b)


def _check(cases, a, b, exact=True):
    got = _run([c[1] for c in cases], a, b)
    for (name, fn, want), g in zip(cases, got):
        want = np.asarray(want)
        assert g.dtype == a.dtype, name   # the tile's dtype (NKI's default)
        if exact:
            np.testing.assert_array_equal(g, want.astype(a.dtype), err_msg=name)
        else:
            np.testing.assert_allclose(g, want.astype(a.dtype), rtol=2e-6, atol=1e-6,
                                       err_msg=name)


def test_comparisons_float_numpy():
    """< <= > >= == != with a tile, a number, a number on the left (Python
    reflects it) and a NumPy scalar: 1.0 / 0.0 in the tile's dtype, as
    nl.greater & co."""
    a = RNG.integers(-3, 4, (128, 64)).astype(np.float32)
    b = RNG.integers(-3, 4, (128, 64)).astype(np.float32)
    cases = [("a > b", lambda x, y: x > y, a > b), ("a >= b", lambda x, y: x >= y, a >= b),
             ("a < b", lambda x, y: x < y, a < b), ("a <= b", lambda x, y: x <= y, a <= b),
             ("a == b", lambda x, y: x == y, a == b), ("a != b", lambda x, y: x != y, a != b),
             ("a > 0", lambda x, y: x > 0, a > 0), ("a <= 1.5", lambda x, y: x <= 1.5, a <= 1.5),
             ("0 < a", lambda x, y: 0 < x, 0 < a), ("2 >= a", lambda x, y: 2 >= x, 2 >= a),
             ("a == 0", lambda x, y: x == 0, a == 0), ("1 != a", lambda x, y: 1 != x, 1 != a),
             ("np.float32(1) == a", lambda x, y: np.float32(1) == x, a == 1)]
    _check(cases, a, b)


def test_comparisons_int_numpy():
    a = RNG.integers(-50, 50, (128, 32)).astype(np.int32)
    b = RNG.integers(-50, 50, (128, 32)).astype(np.int32)
    cases = [("a > b", lambda x, y: x > y, a > b), ("a <= b", lambda x, y: x <= y, a <= b),
             ("a == b", lambda x, y: x == y, a == b), ("a != 3", lambda x, y: x != 3, a != 3),
             ("-7 < a", lambda x, y: -7 < x, -7 < a), ("a >= 0", lambda x, y: x >= 0, a >= 0)]
    _check(cases, a, b)


def test_shifts_bitwise_int_numpy():
    """<< >> & | ^ ~ on int32 tiles: with a tile, a number and a number on
    the left (nl.left_shift & co. take a number on either side)."""
    a = RNG.integers(0, 1 << 20, (128, 32)).astype(np.int32)
    b = RNG.integers(0, 1 << 20, (128, 32)).astype(np.int32)
    s = RNG.integers(0, 8, (128, 32)).astype(np.int32)
    cases = [("a << 3", lambda x, y: x << 3, a << 3), ("a >> 2", lambda x, y: x >> 2, a >> 2),
             ("a & b", lambda x, y: x & y, a & b), ("a | b", lambda x, y: x | y, a | b),
             ("a ^ b", lambda x, y: x ^ y, a ^ b), ("a & 0xff", lambda x, y: x & 0xff, a & 0xff),
             ("0xf0 | a", lambda x, y: 0xf0 | x, 0xf0 | a), ("5 ^ a", lambda x, y: 5 ^ x, 5 ^ a),
             ("~a", lambda x, y: ~x, ~a), ("nl.invert(a)", lambda x, y: nl.invert(x), ~a)]
    _check(cases, a, b)
    cases = [("a << s", lambda x, y: x << y, a << s), ("a >> s", lambda x, y: x >> y, a >> s),
             ("1 << s", lambda x, y: 1 << y, 1 << s), ("4096 >> s", lambda x, y: 4096 >> y,
                                                      4096 >> s)]
    _check(cases, a, s)


def test_unary_pow_mod_float_numpy():
    """-t, abs(t), t ** n, n ** t, t % n and n % t (Python's / NumPy's mod:
    the divisor's sign, nl.mod), on negatives too."""
    a = RNG.uniform(-4, 4, (128, 64)).astype(np.float32)
    b = (RNG.uniform(0.5, 3, (128, 64)) * RNG.choice([-1, 1], (128, 64))).astype(np.float32)
    cases = [("-a", lambda x, y: -x, -a), ("abs(a)", lambda x, y: abs(x), np.abs(a)),
             ("a ** 2", lambda x, y: x ** 2, a ** 2), ("2 ** a", lambda x, y: 2.0 ** x, 2.0 ** a),
             ("a % 1.5", lambda x, y: x % 1.5, np.mod(a, 1.5)),
             ("a % -1.5", lambda x, y: x % -1.5, np.mod(a, -1.5)),
             ("a % b", lambda x, y: x % y, np.mod(a, b)),
             ("5 % b", lambda x, y: 5.0 % y, np.mod(5.0, b)),
             ("-(a * b) > 0", lambda x, y: -(x * y) > 0, -(a * b) > 0)]
    _check(cases, a, b, exact=False)


def test_unary_pow_mod_int_numpy():
    a = RNG.integers(-100, 100, (128, 32)).astype(np.int32)
    b = (RNG.integers(1, 9, (128, 32)) * RNG.choice([-1, 1], (128, 32))).astype(np.int32)
    cases = [("-a", lambda x, y: -x, -a), ("abs(a)", lambda x, y: abs(x), np.abs(a)),
             ("a ** 2", lambda x, y: x ** 2, a ** 2), ("a % 7", lambda x, y: x % 7, a % 7),
             ("a % -7", lambda x, y: x % -7, a % -7), ("a % b", lambda x, y: x % y, a % b),
             ("100 % b", lambda x, y: 100 % y, 100 % b)]
    _check(cases, a, b)


def test_eq_is_a_tile_and_tiles_stay_hashable():
    """`t == x` / `t != x` are tiles (they were Python's identity test, a
    bool); a tile still keys a dict / set by identity, and `== None`
    stays Python's."""
    seen = {}

    @nki.jit
    def k(a):
        t = nl.load(a)
        e, n = t == 0, 0 != t
        seen["types"] = (type(e).__name__, type(n).__name__, e.shape, e.dtype)
        seen["hash"] = len({t: 1, e: 2, n: 3}) == 3 and t in {t} and e in {e: 0}
        seen["none"] = (t == None, t != None)   # noqa: E711 (the operator under test)
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.where(e, 5.0, t))
        return out
    a = RNG.integers(-2, 3, (128, 16)).astype(np.float32)
    np.testing.assert_array_equal(k(a), np.where(a == 0, 5.0, a))
    assert seen["types"] == ("NkiTensor", "NkiTensor", (128, 16), "float32")
    assert seen["hash"] and seen["none"] == (False, True)


def test_tile_truth_is_true_as_in_nki():
    """A tile is true, as any object in NKI (the NKI Library's mlp_tkg tests
    an optional tile with `if params.expert_params.expert_index:`); a
    comparison's tile used as a truth value (`if t == 0:`) is true too,
    whatever the values, with a warning naming the line."""
    seen = {}

    @nki.jit
    def k(a):
        t = nl.load(a)
        seen["plain"] = bool(t) and (t and 1) == 1
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        if t == 5:   # true whatever a holds (NKI's behaviour): the branch runs
            t = nl.add(t, 1.0)
        nl.store(out, t)
        return out
    a = np.zeros((128, 16), np.float32)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = k(a)
    np.testing.assert_array_equal(got, a + 1.0)
    assert seen["plain"]
    msgs = [str(x.message) for x in w if "comparison used as a truth value" in str(x.message)]
    assert len(msgs) == 1 and all(x.filename.endswith("test_tile_operators.py") for x in w
                                  if "comparison used as a truth value" in str(x.message))


def test_hbm_tensors_keep_identity_and_truth():
    """Kernel arguments and HBM tensors are not tiles: `==` / `!=` / `in`
    stay Python's identity tests and `if bias:` is true (an optional
    argument), so only on-chip tiles compare element-wise."""
    seen = {}

    @nki.jit
    def k(a, b):
        seen["eq"] = (a == a, a == b, a != b, a in (b, a), a in [b])
        seen["bool"] = bool(a) and bool(b)
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        seen["out"] = out == out and out != a
        nl.store(out, nl.add(nl.load(a), nl.load(b)))
        return out
    a, b = np.ones((128, 4), np.float32), np.full((128, 4), 2.0, np.float32)
    np.testing.assert_array_equal(k(a, b), a + b)
    assert seen == {"eq": (True, False, True, True, False), "bool": True, "out": True}


def test_floordiv_refused():
    """NKI has no floor division of tiles: `//` names the line and the
    nl.floor(nl.divide(...)) spelling (was a TypeError)."""
    def k(a):
        t = nl.load(a)
        return t // 2

    with pytest.raises(NkiError, match=r"test_tile_operators\.py:\d+: tile // x: .*nl\.floor"):
        tpbsim.kernel_json(nki.jit(k), np.zeros((128, 16), np.int32))


def test_flash_decode_mask_greater_numpy():
    """pkG repro_2: iitaku/nki-llama flash_decode_kernel's
    nl.where(mask_tile > 0, qk, -9984.0) over a 0/1 mask row, and t << 2."""
    @nki.jit
    def k(qk, mask, ai):
        out = nl.ndarray(qk.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        out2 = nl.ndarray(ai.shape, dtype=ai.dtype, buffer=nl.shared_hbm)
        q, m = nl.load(qk), nl.load(mask)
        nl.store(out, nl.where(m > 0, q, -9984.0))
        nl.store(out2, nl.load(ai) << 2)
        return out, out2
    qk = RNG.standard_normal((1, 384)).astype(np.float32)
    mask = RNG.integers(0, 2, (1, 384)).astype(np.float32)
    ai = np.arange(128 * 4, dtype=np.int32).reshape(128, 4)
    o, o2 = k(qk, mask, ai)
    np.testing.assert_array_equal(o, np.where(mask > 0, qk, np.float32(-9984.0)))
    np.testing.assert_array_equal(o2, ai << 2)
