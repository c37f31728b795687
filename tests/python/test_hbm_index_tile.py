"""nisa.dma_copy between two HBM tensors with one side indexed by an SBUF
index tile (NxDI 2.27's rolling_buffer_set_state `dst=reshaped[index,
h_i]` and split_along_dim0_kernel `src=tensor[rank_sb, i_f]`; NKI's
dma_copy allows both sides in HBM).  Each index row is a register-offset
copy, bounds-checked, oob_mode honoured (docs/python.md "Run-time
indices"); values against NumPy."""
import numpy as np
import pytest

from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(91)
skip = nisa.oob_mode.skip


@nki.jit
def gather_row(t, r):                      # t [R, C] HBM, r [1, 1] int32
    out = nl.ndarray((1, t.shape[1]), dtype=t.dtype, buffer=nl.shared_hbm)
    r_sb = nl.load(r)
    i_p, i_f = nl.mgrid[0:1, 0:t.shape[1]]
    nisa.dma_copy(src=t[r_sb, i_f], dst=out[i_p, i_f])
    return out


@nki.jit
def scatter_row(buf, h, r):                # buf [R, C], h [1, C], r [1, 1] int32
    r_sb = nl.load(r)
    i_p, i_f = nl.mgrid[0:1, 0:buf.shape[1]]
    nisa.dma_copy(src=h[i_p, i_f], dst=buf[r_sb, i_f])
    return buf


def test_one_element_index_gather_scatter_numpy():
    """repro_2: a row read from and written to a run-time row, HBM to HBM."""
    t = RNG.standard_normal((4, 64)).astype(np.float32)
    h = RNG.standard_normal((1, 64)).astype(np.float32)
    for r in (0, 2, 3):
        ix = np.array([[r]], np.int32)
        np.testing.assert_array_equal(gather_row(t, ix), t[r:r + 1])
        want = t.copy()
        want[r] = h[0]
        np.testing.assert_array_equal(scatter_row(t.copy(), h, ix), want)


def test_one_element_index_out_of_range_error():
    """oob_mode error (the default): an index past the rows or negative
    stops the run with NumPy's IndexError."""
    t = RNG.standard_normal((4, 64)).astype(np.float32)
    for r in (4, 100, -1):
        with pytest.raises(IndexError, match="out of bounds"):
            gather_row(t, np.array([[r]], np.int32))


@nki.jit
def split_along_dim0(tensor, rank, num_partitions):
    """NxDI's split_along_dim0_kernel (one program): the rank-th part of
    tensor along dim 0, read from a [parts, F] reshape by a run-time row."""
    n = tensor.shape[0] // num_partitions
    F = n * tensor.shape[1] * tensor.shape[2]
    rank_sb = nl.load(rank.reshape((1, 1)))
    flat = tensor.reshape((num_partitions, F))
    out = nl.ndarray((1, F), dtype=tensor.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[:1, :F]
    nisa.dma_copy(src=flat[rank_sb, i_f], dst=out[i_p, i_f])
    return out.reshape((n, tensor.shape[1], tensor.shape[2]))


def test_split_along_dim0_numpy():
    t = RNG.standard_normal((8, 6, 40)).astype(np.float32)
    for rank in range(4):
        got = split_along_dim0(t, np.array([rank], np.int32), 4)
        np.testing.assert_array_equal(got, t[2 * rank:2 * rank + 2])


@nki.jit
def rolling_buffer_set_state(buffer, hidden_states, batch_ids, position_ids):
    """NxDI 2.27's EAGLE rolling_buffer_set_state as published: the row
    index computed on tiles, hidden_states' row scattered HBM to HBM into
    the [batch * buffer_size, hidden] reshape with oob_mode skip."""
    batch_size = batch_ids.shape[0]
    max_batch_size, buffer_size, hidden_size = buffer.shape
    reshaped = buffer.reshape((max_batch_size * buffer_size, hidden_size))
    for i in nl.static_range(batch_size):
        batch_id = nl.load(batch_ids[i])
        position_id = nl.load(position_ids[i])
        base = nisa.tensor_scalar(batch_id, nl.multiply, buffer_size)
        index = nisa.tensor_tensor(base, position_id, op=nl.add)
        b_i, h_i = nl.mgrid[i:i + 1, :hidden_size]
        nisa.dma_copy(src=hidden_states[b_i, h_i], dst=reshaped[index, h_i], oob_mode=skip)
    return buffer


def test_rolling_buffer_set_state_skip_numpy():
    """Rows in range written in order; a row past the buffer (batch 5, 9)
    or before it (-1) is skipped, the buffer keeps its values there."""
    MB, BS, HD = 5, 6, 256
    for ids, pos in (([4, 0, 2], [5, 1, 3]), ([4, 0, 9], [5, 1, 3]), ([5, -1, 3], [0, 4, 4])):
        buf = RNG.standard_normal((MB, BS, HD)).astype(np.float32)
        hs = RNG.standard_normal((len(ids), HD)).astype(np.float32)
        want = buf.reshape(MB * BS, HD).copy()
        for i, (b, p) in enumerate(zip(ids, pos)):
            if 0 <= b * BS + p < MB * BS:
                want[b * BS + p] = hs[i]
        got = rolling_buffer_set_state(buf.copy(), hs, np.array(ids, np.int32),
                                       np.array(pos, np.int32))
        np.testing.assert_array_equal(got, want.reshape(MB, BS, HD), err_msg=str(ids))


@nki.jit
def gather_rows_skip(t, r, d):             # t [R, C], r [P, 1], d [P, C] dst's old values
    out = nl.ndarray(d.shape, dtype=d.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=d)
    r_sb = nl.load(r)
    nisa.dma_copy(src=t[r_sb, 0:t.shape[1]], dst=out, oob_mode=skip)
    return out


@nki.jit
def scatter_rows_skip(buf, h, r):          # buf [R, C], h [P, C], r [P, 1]
    r_sb = nl.load(r)
    nisa.dma_copy(src=h, dst=buf[r_sb, 0:buf.shape[1]], oob_mode=skip)
    return buf


@nki.jit
def gather_rows(t, r):
    out = nl.ndarray((r.shape[0], t.shape[1]), dtype=t.dtype, buffer=nl.shared_hbm)
    r_sb = nl.load(r)
    nisa.dma_copy(src=t[r_sb, 0:t.shape[1]], dst=out)
    return out


def test_index_tile_gather_scatter_between_hbm_numpy():
    """A [P, 1] index tile, HBM to HBM: row by row, an out-of-range row
    skipped (its destination keeps its values), in range ones moved."""
    R, C = 10, 48
    t = RNG.standard_normal((R, C)).astype(np.float32)
    for idx in ([0, 9, 4], [12, 2, -1, 5], list(range(40, 0, -1))):
        r = np.array(idx, np.int32).reshape(-1, 1)
        d = RNG.standard_normal((len(idx), C)).astype(np.float32)
        want = d.copy()
        for p, i in enumerate(idx):
            if 0 <= i < R:
                want[p] = t[i]
        np.testing.assert_array_equal(gather_rows_skip(t, r, d), want, err_msg=str(idx))
        h = RNG.standard_normal((len(idx), C)).astype(np.float32)
        want = t.copy()
        for p, i in enumerate(idx):
            if 0 <= i < R:
                want[i] = h[p]
        np.testing.assert_array_equal(scatter_rows_skip(t.copy(), h, r), want, err_msg=str(idx))
    r = np.array([[3], [0], [7]], np.int32)
    np.testing.assert_array_equal(gather_rows(t, r), t[[3, 0, 7]])
    with pytest.raises(IndexError, match="out of bounds"):
        gather_rows(t, np.array([[3], [10]], np.int32))


def test_indirect_dim_between_hbm_numpy():
    """.ap(vector_offset=, indirect_dim=1) of a [A, B, C] tensor into an
    HBM tensor: rows t[2, idx[p], :]; an index past dim 1 is an error."""
    @nki.jit
    def k(t, r):
        A, B, C = t.shape
        out = nl.ndarray((r.shape[0], C), dtype=t.dtype, buffer=nl.shared_hbm)
        r_sb = nl.load(r)
        nisa.dma_copy(src=t.ap(pattern=[[C, r.shape[0]], [1, C]], offset=2 * B * C,
                               vector_offset=r_sb, indirect_dim=1), dst=out)
        return out
    t = RNG.standard_normal((4, 6, 16)).astype(np.float32)
    for idx in ([3], [0, 5], [5, 1, 1]):
        np.testing.assert_array_equal(k(t, np.array(idx, np.int32).reshape(-1, 1)), t[2, idx])
    with pytest.raises(IndexError, match="out of range"):
        k(t, np.array([[6]], np.int32))


def test_runtime_index_between_hbm_skip_numpy():
    """NxDI's write_kv_cache_at_batch_kernel form K_prior[batch_idx, i_h,
    i_s, i_d] (a one-element run-time index on dim 0 of a 4-D tensor) with
    oob_mode skip: a batch past the cache or negative is skipped (it used
    to stop the run as oob_mode error), one in range written."""
    @nki.jit
    def k(K, Kp, bi):
        b = nl.load(bi)
        i_h, i_s, i_d = nl.mgrid[0:2, 0:5, 0:64]
        nisa.dma_copy(src=K[0, i_h, i_s, i_d], dst=Kp[b, i_h, i_s, i_d], oob_mode=skip)
        return Kp
    K = RNG.standard_normal((1, 2, 5, 64)).astype(np.float32)
    Kp = RNG.standard_normal((3, 2, 8, 64)).astype(np.float32)
    for b in (1, 2, 3, 100, -1):
        want = Kp.copy()
        if 0 <= b < 3:
            want[b, :, :5] = K[0]
        np.testing.assert_array_equal(k(K, Kp.copy(), np.array([[b]], np.int32)), want,
                                      err_msg="batch %d" % b)


def test_one_element_gather_between_hbm_casts_numpy():
    """float32 rows into a bfloat16 HBM tensor: the DMA converts."""
    @nki.jit
    def k(t, r):
        out = nl.ndarray((1, t.shape[1]), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        r_sb = nl.load(r)
        nisa.dma_copy(src=t[r_sb, 0:t.shape[1]], dst=out)
        return out
    t = RNG.standard_normal((5, 32)).astype(np.float32)
    got = k(t, np.array([[4]], np.int32))
    np.testing.assert_array_equal(np.asarray(got, np.float32),
                                  t[4:5].astype(nl.bfloat16).astype(np.float32))


def test_both_sides_indexed_refused():
    """A gather into a scatter between two HBM tensors: NkiError naming
    the line, not the back end's error."""
    @nki.jit
    def k(t, r):
        out = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.shared_hbm)
        r_sb = nl.load(r)
        nisa.dma_copy(src=t[r_sb, 0:t.shape[1]], dst=out[r_sb, 0:t.shape[1]])
        return out
    with pytest.raises(nki.NkiError, match=r"test_hbm_index_tile.py:\d+: dma_copy: both sides"):
        k(np.zeros((4, 8), np.float32), np.array([[1]], np.int32))
