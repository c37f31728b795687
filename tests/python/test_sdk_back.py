"""Back-end forms the SDK's nki/test files use (docs/python.md "The SDK's
nki/test files"): match_replace8 with imm=-inf, stream_shuffle over several
quadrants and from one partition, Vector-engine transposes of partial
blocks, dropout with a [P, 1] probability tile.  Each checked against
NumPy."""
import warnings

import numpy as np
import pytest

from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


def _load(x):
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    return t


def _store(t):
    o = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=o, src=t)
    return o


@nki.jit
def match_replace(x, imm):
    t = _load(x)
    top = nl.ndarray((x.shape[0], 8), dtype=x.dtype, buffer=nl.sbuf)
    nisa.max8(dst=top, src=t)
    r = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.nc_match_replace8(dst=r, data=t, vals=top, imm=imm)
    return _store(r)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("imm", [float("-inf"), float("inf"), -1e30])
def test_match_replace_infinite_imm(dtype, imm):
    """An infinite immediate replaces with that infinity (NKI); a finite one
    past the dtype's range is clamped to its largest finite value."""
    x = np.random.default_rng(3).permutation(16 * 24).reshape(16, 24).astype(dtype)
    want = x.copy()
    top = np.argsort(-x.astype(np.float64), axis=1)[:, :8]
    big = np.finfo(dtype).max
    fill = imm if np.isinf(imm) or abs(imm) <= big else np.copysign(big, imm)
    np.put_along_axis(want, top, np.asarray(fill, dtype), axis=1)
    np.testing.assert_array_equal(match_replace(x, imm), want)


def test_mask_and_keeps_second_comparison():
    """`a and b` of two mask comparisons is b in Python once a counts as
    true, which is what NKI computes; tpbsim warns and does the same."""
    @nki.jit
    def k(x):
        t = _load(x)
        o = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.memset(dst=o, value=0.0)
        i_p = nl.arange(x.shape[0])[:, None]
        i_f = nl.arange(x.shape[1])[None, :]
        nisa.tensor_copy(dst=o, src=t, mask=(i_p < 4 and i_f < 5))
        return _store(o)
    x = np.arange(8 * 8, dtype=np.float32).reshape(8, 8) + 1
    with pytest.warns(UserWarning, match="keeps only b"):
        got = k(x)
    want = np.zeros_like(x)
    want[:, :5] = x[:, :5]
    np.testing.assert_array_equal(got, want)


@nki.jit
def shuffle(x, parts_out, mask):
    t = _load(x)
    o = nl.ndarray((parts_out, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.memset(dst=o, value=-1.0)
    nisa.nc_stream_shuffle(dst=o, src=t, shuffle_mask=mask)
    return _store(o)


def _shuffle_ref(x, parts_out, mask):
    want = np.full((parts_out, x.shape[1]), -1.0, x.dtype)
    for q in range(parts_out):
        if mask[q % 32] != 255:
            want[q] = x[q // 32 * 32 + mask[q % 32]]
    return want


@pytest.mark.parametrize("parts", [64, 96, 128])
def test_stream_shuffle_quadrants(parts):
    """The mask applies to each 32-partition quadrant alike (NKI)."""
    x = np.random.default_rng(parts).random((parts, 16), dtype=np.float32)
    mask = [(i - 1) % 32 for i in range(32)]
    mask[5] = 255
    np.testing.assert_array_equal(shuffle(x, parts, mask), _shuffle_ref(x, parts, mask))


def test_stream_shuffle_broadcast_one_partition():
    x = np.random.default_rng(1).random((1, 16), dtype=np.float32)
    np.testing.assert_array_equal(shuffle(x, 32, [0] * 32), np.repeat(x, 32, axis=0))


def test_stream_shuffle_refused():
    x = np.ones((32, 4), np.float32)
    with pytest.raises(Exception, match="would read src partition 40 of 32"):
        shuffle(x, 64, [8] * 32)


@nki.jit
def vtranspose(x):
    t = _load(x)
    o = nl.ndarray((x.shape[1], x.shape[0]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.nc_transpose(dst=o, data=t, engine=nisa.vector_engine)
    return _store(o)


@pytest.mark.parametrize("shape", [(32, 2), (5, 32), (7, 3), (1, 1), (32, 32)])
def test_vector_transpose_partial_block(shape):
    """NKI: the Vector engine transposes [32, 32] or smaller."""
    x = np.random.default_rng(7).random(shape, dtype=np.float32)
    np.testing.assert_array_equal(vtranspose(x), x.T)


def test_vector_transpose_refused_past_32():
    with pytest.raises(Exception, match="at most 32x32"):
        vtranspose(np.ones((40, 8), np.float32))


@nki.jit
def dropout_tile(x, p):
    t = _load(x)
    pt = _load(p)
    o = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dropout(dst=o, data=t, prob=pt)
    return _store(o)


@nki.jit
def dropout_tile_inplace(x, p):
    t = _load(x)
    pt = _load(p)
    nisa.dropout(dst=t, data=t, prob=pt)
    return _store(t)


@nki.jit
def dropout_imm(x, prob):
    t = _load(x)
    o = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dropout(dst=o, data=t, prob=prob)
    return _store(o)


def test_dropout_probability_tile():
    """Row p drops each element with probability prob[p]: 0 keeps the row,
    1 (or more) drops it, kept values are the input's."""
    x = np.random.default_rng(2).random((8, 512), dtype=np.float32) + 1
    prob = np.array([[0.0], [1.0], [0.5], [0.1], [0.9], [2.0], [-1.0], [0.25]], np.float32)
    for got in (dropout_tile(x, prob), dropout_tile_inplace(x, prob)):
        kept = got != 0
        np.testing.assert_array_equal(got[kept], x[kept])
        assert kept[0].all() and kept[6].all()
        assert not kept[1].any() and not kept[5].any()
        for r in (2, 3, 4, 7):   # 512 draws: within 5 sigma of 1 - prob
            sd = np.sqrt(prob[r, 0] * (1 - prob[r, 0]) / 512)
            assert abs(kept[r].mean() - (1 - prob[r, 0])) < 5 * sd


def test_dropout_tile_same_draws_as_immediate():
    """A tile of one probability drops exactly the elements the immediate
    form drops (the same generator, drawn in the same order)."""
    x = np.random.default_rng(4).random((16, 256), dtype=np.float32) + 1
    np.testing.assert_array_equal(dropout_tile(x, np.full((16, 1), 0.3, np.float32)),
                                  dropout_imm(x, 0.3))


@nki.jit
def masked_top8(x, imm):
    n, m = x.shape
    ix, iy = nl.mgrid[0:n, 0:m]
    t = nl.load(x)
    idx = nisa.memset(shape=(n, 8), value=0, dtype=nl.uint32)
    top = nisa.max8(src=t[ix, iy], mask=(ix < n // 2) & (iy < m // 2))
    r = nisa.nc_match_replace8(dst_idx=idx[:, :], data=t[ix, iy], vals=top, imm=imm,
                               mask=(ix < n // 2) & (iy < m // 2))
    o = nl.ndarray((n, m), dtype=x.dtype, buffer=nl.shared_hbm)
    oi = nl.ndarray((n, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
    nl.store(o[0:n // 2, 0:m // 2], value=r[0:n // 2, 0:m // 2])
    nl.store(oi, value=idx)
    return o, oi


def test_beta1_max8_match_replace_masked():
    """Beta-1 mask= on max8 / nc_match_replace8 bounds their data (NKI:
    "mask applies to data"): rows and columns outside are not read."""
    x = np.random.default_rng(5).permutation(16 * 40).reshape(16, 40).astype(np.float32)
    o, oi = masked_top8(x, -1.0)
    sub = x[:8, :20]
    top = np.argsort(-sub, axis=1)[:, :8]
    want = sub.copy()
    np.put_along_axis(want, top, -1.0, axis=1)
    np.testing.assert_array_equal(o[:8, :20], want)
    np.testing.assert_array_equal(oi[:8], top)
    np.testing.assert_array_equal(oi[8:], 0)    # dst_idx rows outside the mask keep their 0


def test_beta1_find_index8_masked():
    """Beta-1 mask= on nc_find_index8 bounds its data as on max8 (NKI:
    "mask applies to data"): the masked rows' indices, read from the
    columns inside the mask only."""
    @nki.jit
    def k(x):
        n, m = x.shape
        ix, iy = nl.mgrid[0:128, 0:m]
        out = nl.ndarray((n, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
        t = nl.load(x[ix, iy], mask=(ix < n))
        top = nisa.max8(src=t, mask=(ix < n) & (iy < m - 8))
        pos = nisa.nc_find_index8(data=t, vals=top, mask=(ix < n) & (iy < m - 8))
        jx, jy = nl.mgrid[0:128, 0:8]
        nl.store(out[jx, jy], value=pos, mask=(jx < n))
        return out
    x = np.random.default_rng(6).permutation(100 * 64).reshape(100, 64).astype(np.float32)
    np.testing.assert_array_equal(k(x), np.argsort(-x[:, :56], axis=1)[:, :8])
