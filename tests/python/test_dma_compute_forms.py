"""Forms the NKI Library's topk_reduce needs, each checked against NumPy:
dma_compute with a gathered source and its dst named again as a source
(srcs=[gather, acc]: acc += gathered rows), and a dma_transpose of a
vector read through a dtype view (each row's int32 packed in two bf16
columns)."""
import numpy as np

from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

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
