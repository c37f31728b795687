"""Row gathers as the NKI Library's block-KV attention writes them, checked
against NumPy (independent of the library): the index column given as a
raw pattern of a wider tile (`tile.ap([[F, P], [1, 1]], offset=c)`), an
N-D gather pattern of whole-row runs, and the 4-D gather-transpose with
axes (3, 1, 2, 0)."""
import numpy as np
import pytest

from tpbsim import NkiError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(21)
NB, BL, D, P, W = 300, 4, 32, 128, 3     # cache [NB, BL, D]; W index columns


def _inputs():
    cache = RNG.standard_normal((NB, BL, D)).astype(np.float32)
    idx = RNG.integers(0, NB, (P, W)).astype(np.uint32)
    return cache, idx


def test_gather_index_column_pattern_numpy():
    """Column c of a [P, W] index tile, taken as a raw pattern, indexes
    rows of the cache seen as [NB, BL * D]."""
    @nki.jit
    def k(cache, idx):
        out = nl.ndarray((W, P, BL * D), dtype=cache.dtype, buffer=nl.shared_hbm)
        ix = nl.ndarray((P, W), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.dma_copy(dst=ix, src=idx)
        flat = cache.reshape((NB, BL * D))
        for c in range(W):
            col = ix.ap([[W, P], [1, 1]], offset=c)
            t = nl.ndarray((P, BL * D), dtype=cache.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=flat.ap([[BL * D, P], [1, BL * D]], offset=0, vector_offset=col,
                                             indirect_dim=0))
            nisa.dma_copy(dst=out[c], src=t)
        return out
    cache, idx = _inputs()
    got = k(cache, idx)
    for c in range(W):
        np.testing.assert_array_equal(got[c], cache[idx[:, c]].reshape(P, BL * D))


def _gather4(cache, idx):
    """(the [P, 1] index tile, the cache's 4-D gather pattern on its
    [NB, 1, BL, D] reshape: [[BL*D, P], [1, 1], [D, BL], [1, D]])"""
    ix = nl.ndarray((P, 1), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ix, src=idx[:, 0:1])
    c4 = cache.reshape((NB, 1, BL, D))
    return c4.ap([[BL * D, P], [1, 1], [D, BL], [1, D]], offset=0, vector_offset=ix, indirect_dim=0)


def _transposed(axes):
    """A kernel: the 4-D gather transposed with axes into [D, 1, BL, P]."""
    @nki.jit
    def k(cache, idx):
        t = nl.ndarray((D, BL * P), dtype=cache.dtype, buffer=nl.sbuf)
        nisa.dma_transpose(dst=t.ap([[BL * P, D], [BL * P, 1], [P, BL], [1, P]], offset=0),
                           src=_gather4(cache, idx), axes=axes, dge_mode=nisa.dge_mode.swdge)
        out = nl.ndarray((D, BL * P), dtype=cache.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out
    return k


def test_gather_nd_pattern_numpy():
    """A 4-D pattern [[BL*D, P], [1, 1], [D, BL], [1, D]] on a [NB, 1, BL, D]
    reshape gathers the same rows as the 2-D one."""
    @nki.jit
    def k(cache, idx):
        out = nl.ndarray((P, BL * D), dtype=cache.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((P, BL * D), dtype=cache.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=_gather4(cache, idx))
        nisa.dma_copy(dst=out, src=t)
        return out
    cache, idx = _inputs()
    np.testing.assert_array_equal(k(cache, idx), cache[idx[:, 0]].reshape(P, BL * D))


def test_gather_transpose_4d_numpy():
    """dma_transpose of that 4-D gather with axes (3, 1, 2, 0) into a
    [D, 1, BL, P] view: dst[x, 0, j, p] = cache[idx[p], j, x]."""
    cache, idx = _inputs()
    want = np.transpose(cache[idx[:, 0]], (2, 1, 0)).reshape(D, BL * P)
    np.testing.assert_array_equal(_transposed((3, 1, 2, 0))(cache, idx), want)


def test_gather_transpose_4d_other_axes_refused():
    """Other axes for a 4-D gather source: a clear error."""
    cache, idx = _inputs()
    with pytest.raises(NkiError, match=r"axes \(3, 1, 2, 0\) only"):
        _transposed((3, 2, 1, 0))(cache, idx)


def test_gather_index_pattern_not_a_column_refused():
    """An index pattern wider than one column: a clear error."""
    @nki.jit
    def k(cache, idx):
        ix = nl.ndarray((P, W), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.dma_copy(dst=ix, src=idx)
        flat = cache.reshape((NB, BL * D))
        t = nl.ndarray((P, BL * D), dtype=cache.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=flat.ap([[BL * D, P], [1, BL * D]], offset=0,
                                         vector_offset=ix.ap([[W, P], [1, 2]], offset=0),
                                         indirect_dim=0))
        out = nl.ndarray((P, BL * D), dtype=cache.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out
    cache, idx = _inputs()
    with pytest.raises(NkiError, match="one column of a tile"):
        k(cache, idx)


def test_gather_and_scatter_converting_dtypes_numpy():
    """A gather of float8_e4m3 rows into a bfloat16 tile, and a scatter
    of that tile back into float8_e4m3 rows (NKI's DMA converts through
    fp32; the values are fp8 values, so both directions are exact)."""
    n, f = 40, 16

    @nki.jit
    def k(cache, idx):
        out = nl.ndarray((P, f), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        back = nl.ndarray((n, f), dtype=cache.dtype, buffer=nl.shared_hbm)
        z = nl.ndarray((n, f), dtype=cache.dtype, buffer=nl.sbuf)
        nisa.memset(z, value=0.0)
        nisa.dma_copy(dst=back, src=z)
        ix = nl.ndarray((P, 1), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.dma_copy(dst=ix, src=idx)
        t = nl.ndarray((P, f), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=cache.ap([[f, P], [1, f]], offset=0, vector_offset=ix,
                                          indirect_dim=0))
        nisa.dma_copy(dst=out, src=t)
        nisa.dma_copy(dst=back.ap([[f, P], [1, f]], offset=0, vector_offset=ix, indirect_dim=0),
                      src=t)
        return out, back
    vals = RNG.uniform(-200, 200, (n, f)).astype(np.float32).astype(nl.float8_e4m3)
    idx = np.concatenate([RNG.permutation(n)] * (P // n + 1))[:P].astype(np.uint32).reshape(P, 1)
    got, back = k(vals, idx)
    np.testing.assert_array_equal(np.asarray(got, np.float32), vals.astype(np.float32)[idx[:, 0]])
    np.testing.assert_array_equal(np.asarray(back, np.float32), vals.astype(np.float32))


def test_scatter_rows_lead_step_ignored_numpy():
    """NKI ignores the step of the pattern's index dim (the rows' stride is
    the tensor's) and size-1 dims move nothing: attention_block_tkg
    scatters its V cache rows with [[1, B], [d, 1], [1, d]]."""
    n, f, b = 50, 16, 8

    @nki.jit
    def k(cache, rows, idx):
        out = nl.ndarray((n, f), dtype=cache.dtype, buffer=nl.shared_hbm)
        c = nl.ndarray((n, f), dtype=cache.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=c, src=cache)
        nisa.dma_copy(dst=out, src=c)
        r = nl.ndarray((b, f), dtype=cache.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=r, src=rows)
        ix = nl.ndarray((b, 1), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.dma_copy(dst=ix, src=idx)
        nisa.dma_copy(dst=out.ap([[1, b], [f, 1], [1, f]], offset=0, vector_offset=ix, indirect_dim=0),
                      src=r.ap([[f, b], [f, 1], [1, f]]))
        return out
    cache = RNG.standard_normal((n, f)).astype(np.float32)
    rows = RNG.standard_normal((b, f)).astype(np.float32)
    idx = RNG.permutation(n)[:b].astype(np.uint32).reshape(b, 1)
    want = cache.copy()
    want[idx[:, 0]] = rows
    np.testing.assert_array_equal(k(cache, rows, idx), want)


def test_strided_scatter_and_gather_flat_numpy():
    """Per index p, d elements `step` apart from element idx[p] of a flat
    view (attention_block_tkg's K^T cache column: [[1, B], [S, d], [1, 1]]
    on a [B * d * S] reshape): written from, and read back into, a [B, d]
    tile."""
    bb, d, s = 4, 8, 16

    @nki.jit
    def k(cache, cols, idx):
        out = nl.ndarray((bb, d, s), dtype=cache.dtype, buffer=nl.shared_hbm)
        back = nl.ndarray((bb, d), dtype=cache.dtype, buffer=nl.shared_hbm)
        c = nl.ndarray((bb * d, s), dtype=cache.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=c, src=cache.reshape((bb * d, s)))
        nisa.dma_copy(dst=out.reshape((bb * d, s)), src=c)
        t = nl.ndarray((bb, d), dtype=cache.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=cols)
        ix = nl.ndarray((bb, 1), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.dma_copy(dst=ix, src=idx)
        flat = out.reshape((bb * d * s,))
        nisa.dma_copy(dst=flat.ap([[1, bb], [s, d], [1, 1]], offset=0, vector_offset=ix, indirect_dim=0),
                      src=t.ap([[d, bb], [1, d], [1, 1]]))
        g = nl.ndarray((bb, d), dtype=cache.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=g, src=flat.ap([[1, bb], [s, d]], offset=0, vector_offset=ix, indirect_dim=0))
        nisa.dma_copy(dst=back, src=g)
        return out, back
    cache = RNG.standard_normal((bb, d, s)).astype(np.float32)
    cols = RNG.standard_normal((bb, d)).astype(np.float32)
    pos = RNG.integers(0, s, bb)
    idx = (np.arange(bb) * d * s + pos).astype(np.uint32).reshape(bb, 1)
    want = cache.copy()
    for i in range(bb):
        want[i, :, pos[i]] = cols[i]
    got, back = k(cache, cols, idx)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(back, cols)
