"""Gathers from and scatters into tables of more than 65535 rows (an
embedding lookup in a large vocabulary, a flat KV cache of one-element
rows): the indirect descriptor carries the table's row count in 21 bits
(DAP count1 plus DIND rows_hi), so rows past 65535 are reached and an index
past the table's end is still caught.  Checked against NumPy."""
import numpy as np
import pytest

from tpbsim import TpbError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(2026)
P, D = 128, 8


def _gather_kernel():
    @nki.jit
    def k(table, idx):
        ix = nl.ndarray((P, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=ix, src=idx)
        t = nl.ndarray((P, table.shape[1]), dtype=table.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=table.ap([[table.shape[1], P], [1, table.shape[1]]], offset=0,
                                          vector_offset=ix, indirect_dim=0))
        out = nl.ndarray((P, table.shape[1]), dtype=table.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out
    return k


@pytest.mark.parametrize("vocab", [65536, 131072 + 7, 262144])
def test_embedding_gather_past_16_bit_rows_numpy(vocab):
    """Rows at both ends of the table and around each 65536 boundary."""
    table = RNG.standard_normal((vocab, D)).astype(np.float32)
    edges = [0, 1, 65534, 65535, vocab - 1, vocab - 2]
    edges += [r for b in range(65536, vocab, 65536) for r in (b - 1, b, b + 1) if r < vocab]
    rest = RNG.integers(0, vocab, P - len(edges))
    idx = np.concatenate([edges, rest]).astype(np.int32).reshape(P, 1)
    got = _gather_kernel()(table, idx)
    np.testing.assert_array_equal(got, table[idx[:, 0]])


def test_scatter_into_large_table_numpy():
    """The table as the destination (a scatter): distinct rows, most past
    65535, are overwritten; every other row keeps its value."""
    vocab = 200000

    @nki.jit
    def k(table, rows, idx):
        out = nl.ndarray(table.shape, dtype=table.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=table)
        ix = nl.ndarray((P, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=ix, src=idx)
        t = nl.ndarray((P, D), dtype=table.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=rows)
        nisa.dma_copy(dst=out.ap([[D, P], [1, D]], offset=0, vector_offset=ix, indirect_dim=0),
                      src=t)
        return out
    table = RNG.standard_normal((vocab, D)).astype(np.float32)
    rows = RNG.standard_normal((P, D)).astype(np.float32)
    idx = RNG.choice(np.arange(60000, vocab), P, replace=False).astype(np.int32).reshape(P, 1)
    want = table.copy()
    want[idx[:, 0]] = rows
    np.testing.assert_array_equal(k(table, rows, idx), want)


def test_index_past_large_table_is_an_error():
    """oob_mode error (the default): an index equal to the row count, past
    the 16-bit range, is NKI's IndexError with the table's whole row count."""
    vocab = 70000
    table = RNG.standard_normal((vocab, D)).astype(np.float32)
    idx = np.zeros((P, 1), np.int32)
    idx[5, 0] = vocab
    with pytest.raises(IndexError, match=r"index 70000 \(idx element 5\) is out of range \[0, 70000\)"):
        _gather_kernel()(table, idx)


def test_table_beyond_21_bit_rows_is_refused():
    """More rows than the descriptor holds: refused at compile time with
    the limit named, never gathered from a truncated table."""
    vocab = (1 << 21) + 1
    table = np.zeros((vocab, 1), np.float32)
    idx = np.zeros((P, 1), np.int32)
    with pytest.raises(TpbError, match=r"2097153 rows of 1 elements do not fit the descriptor "
                                       r"counts \(at most 2097151 rows"):
        _gather_kernel()(table, idx)
