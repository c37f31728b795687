"""Forms the NKI Library's topk_reduce needs, each checked against NumPy:
dma_compute with a gathered source and its dst named again as a source
(srcs=[gather, acc]: acc += gathered rows), and a dma_transpose of a
vector read through a dtype view (each row's int32 packed in two bf16
columns); and NKI's scatter read-modify-write form of dma_compute."""
import numpy as np
import pytest

from tpbsim import TpbError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl
from tpbsim.nki import NkiError

RNG = np.random.default_rng(21)


def test_dma_compute_dst_as_later_source_numpy():
    """acc = 0.5 * a + 4 * acc: the dst read before it is overwritten (the
    compiler used to copy 0.5 * a into acc first, then add 4 * that)."""
    @nki.jit
    def k(a, b):
        acc = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        t = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=acc, src=b)
        nisa.dma_copy(dst=t, src=a)
        nisa.dma_compute(dst=acc, srcs=[t, acc], reduce_op=nl.add, scales=[0.5, 4.0])
        out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=acc)
        return out
    a = RNG.standard_normal((32, 16)).astype(np.float32)
    b = RNG.standard_normal((32, 16)).astype(np.float32)
    np.testing.assert_allclose(k(a, b), np.float32(0.5) * a + np.float32(4) * b, rtol=1e-6)


def test_dma_compute_gathered_source_numpy():
    """acc += table rows picked by an index tile, K times (topk_reduce's
    reduction over its top-k rows)."""
    T, K, H, N = 8, 3, 32, 40
    @nki.jit
    def k(table, idx):
        ix = nl.ndarray((T, K), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.dma_copy(dst=ix, src=idx)
        acc = nl.ndarray((T, H), dtype=nl.float32, buffer=nl.sbuf)
        for j in range(K):
            rows = table.ap(pattern=[[H, T], [1, H]], offset=0,
                            vector_offset=ix.ap(pattern=[[K, T], [1, 1]], offset=j),
                            indirect_dim=0)
            if j == 0:
                nisa.dma_copy(dst=acc, src=rows)
            else:
                nisa.dma_compute(dst=acc, srcs=[rows, acc], reduce_op=nl.add)
        out = nl.ndarray((T, H), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=acc)
        return out
    table = RNG.standard_normal((N, H)).astype(np.float32)
    idx = RNG.integers(0, N, (T, K)).astype(np.uint32)
    want = np.zeros((T, H), np.float32)
    for j in range(K):
        want = want + table[idx[:, j]]
    np.testing.assert_allclose(k(table, idx), want, rtol=1e-6, atol=1e-6)


def test_transpose_of_a_dtype_view_vector_numpy():
    """[TK, 1, 1, 1] int32 view of each bf16 row's last two columns,
    transposed into a [1, TK] tile: every row's packed int32 in order."""
    TK, H = 24, 16
    @nki.jit
    def k(x):
        g = nl.ndarray((1, TK), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_transpose(
            src=x.ap(pattern=[[(H + 2) // 2, TK], [1, 1], [1, 1], [1, 1]], offset=H // 2,
                     dtype=nl.int32),
            dst=g.ap(pattern=[[TK, 1], [1, 1], [1, 1], [1, TK]], offset=0))
        out = nl.ndarray((1, TK), dtype=nl.int32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=g)
        return out
    bf = nl.bfloat16
    ids = RNG.integers(-2**31, 2**31 - 1, (TK, 1)).astype(np.int32)
    x = np.concatenate([RNG.standard_normal((TK, H)).astype(bf), ids.view(bf)], axis=1)
    np.testing.assert_array_equal(k(x), ids.reshape(1, TK))


def _scatter_rmw_kernel(order=0, hbm_data=False, scales=None, unique=True,
                        oob=nisa.oob_mode.error):
    """dma_compute in NKI's scatter read-modify-write form:
    out(HBM)[idx] = out[idx] + u(SBUF), out a copy of table."""
    @nki.jit
    def k(table, idx, upd):
        n, h = table.shape
        t = idx.shape[0]
        out = nl.ndarray((n, h), dtype=table.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=table)
        ix = nl.ndarray((t, 1), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.dma_copy(dst=ix, src=idx)
        u = nl.ndarray((t, h), dtype=upd.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=u, src=upd)
        rows = out.ap(pattern=[[h, t], [1, h]], offset=0,
                      vector_offset=ix.ap(pattern=[[1, t], [1, 1]], offset=0), indirect_dim=0)
        d = upd if hbm_data else u
        nisa.dma_compute(dst=rows, srcs=[rows, d] if order == 0 else [d, rows],
                         reduce_op=nl.add, scales=scales, unique_indices=unique, oob_mode=oob)
        return out
    return k


def _scatter_inputs(table_dtype, n=40, t=8, h=32):
    table = RNG.standard_normal((n, h)).astype(table_dtype)
    idx = RNG.permutation(n)[:t].astype(np.uint32).reshape(t, 1)
    upd = RNG.standard_normal((t, h)).astype(np.float32)
    return table, idx, upd


def test_dma_compute_scatter_rmw_numpy():
    """dst(HBM)[indices] = dst[indices] + src(SBUF) (before: refused, 'an
    indirect access is not allowed here'): one scatter-add DMA, either
    source order; with a bf16 table and float32 data, NKI's float32 sum
    and one rounding to bf16 (gathered, summed, rounded, scattered)."""
    table, idx, upd = _scatter_inputs(np.float32)
    want = table.copy()
    want[idx[:, 0]] += upd
    for order in (0, 1):
        np.testing.assert_array_equal(_scatter_rmw_kernel(order)(table, idx, upd), want)
    bf = nl.bfloat16
    table, idx, upd = _scatter_inputs(bf)
    want = table.astype(np.float32)
    want[idx[:, 0]] = (want[idx[:, 0]] + upd).astype(bf).astype(np.float32)
    got = _scatter_rmw_kernel(1)(table, idx, upd)
    np.testing.assert_array_equal(got.astype(np.float32), want)
    # the double rounding a bf16 cast of the data first would give differs here
    dbl = table.astype(np.float32)
    dbl[idx[:, 0]] = (dbl[idx[:, 0]] + upd.astype(bf).astype(np.float32)).astype(bf)
    assert not np.array_equal(dbl, want)


@pytest.mark.parametrize("form, match", [
    (dict(hbm_data=True), "scatter read-modify-write form only"),
    (dict(scales=[1.0, 2.0]), "scatter read-modify-write form only"),
    (dict(unique=False), "unique_indices=False"),
    (dict(oob=nisa.oob_mode.skip), "scatter add cannot have other modes except for error"),
])
def test_dma_compute_scatter_rmw_refused(form, match):
    table, idx, upd = _scatter_inputs(np.float32)
    with pytest.raises(NkiError, match=match):
        _scatter_rmw_kernel(**form)(table, idx, upd)


def test_dma_compute_scatter_rmw_repeated_index():
    """unique_indices=True (NKI's only setting): a repeated index is the
    simulator's error, not a silent sum."""
    table, idx, upd = _scatter_inputs(np.float32)
    idx[3, 0] = idx[4, 0]
    with pytest.raises(TpbError, match="scattered to twice"):
        _scatter_rmw_kernel()(table, idx, upd)
