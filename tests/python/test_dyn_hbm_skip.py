"""nisa.dma_copy between two HBM tensors with one side selected at run time
(.ap(scalar_offset=, indirect_dim=0)) and oob_mode skip / error: the two
production NxDI kernels that do it (kvcache/utils.py
write_kv_cache_at_batch_kernel, eagle/hidden_state.py
rolling_buffer_set_state) at small sizes, checked against NumPy.  An
out-of-range index skips the whole copy (the destination keeps its values);
under oob_mode error it stops the run (docs/python.md "Run-time selects",
docs/semantics-dma.md "Triggers and queues")."""
import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(29)


# ---- write_kv_cache_at_batch_kernel (NxDI modules/kvcache/utils.py) ----

def _kv_kernel(oob):
    """As NxDI's kernel: program 0 writes K, the last program V (both with
    one program), into batch `batch_idx` of the caches, in place."""
    @nki.jit
    def write_kv_cache_at_batch_kernel(K, V, K_prior, V_prior, batch_idx):
        n_prgs, prg_id = nl.num_programs(0), nl.program_id(0)
        batch_idx_sbuf = nl.ndarray((1, 1), dtype=batch_idx.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=batch_idx_sbuf, src=batch_idx.reshape((1, 1)))
        for prg, src, dst in ((0, K, K_prior), (n_prgs - 1, V, V_prior)):
            if prg_id == prg:
                S = src.shape[2]
                B, H, S_prior, D = dst.shape
                view = dst.ap(pattern=[[D * S_prior * H, 1], [D * S_prior, H], [D, S], [1, D]],
                              offset=0, scalar_offset=batch_idx_sbuf, indirect_dim=0)
                if oob is None:
                    nisa.dma_copy(src=src, dst=view)
                else:
                    nisa.dma_copy(src=src, dst=view, oob_mode=oob)
        return K_prior, V_prior
    return write_kv_cache_at_batch_kernel


def _kv_inputs(B=3, H=2, S=5, S_prior=8, D=64):
    K, V = (RNG.standard_normal((1, H, S, D)).astype(np.float32) for _ in range(2))
    Kp, Vp = (RNG.standard_normal((B, H, S_prior, D)).astype(np.float32) for _ in range(2))
    return K, V, Kp, Vp


def _kv_want(K, V, Kp, Vp, b):
    wk, wv = Kp.copy(), Vp.copy()
    if 0 <= b < Kp.shape[0]:
        wk[b, :, :K.shape[2]] = K[0]
        wv[b, :, :V.shape[2]] = V[0]
    return wk, wv


@pytest.mark.parametrize("grid", [None, 2])
def test_kv_cache_write_at_batch_skip(grid):
    """In range: the batch row's first S positions written; B (one past the
    end), 100 and -1: skipped, both caches unchanged."""
    k = _kv_kernel(nisa.oob_mode.skip)
    for b in (1, 2, 0, 3, 100, -1):
        K, V, Kp, Vp = _kv_inputs()
        args = (K, V, Kp, Vp, np.array([b], np.int32))
        gk, gv = k(*args) if grid is None else k[grid](*args)
        wk, wv = _kv_want(K, V, Kp, Vp, b)
        np.testing.assert_array_equal(gk, wk, err_msg="batch %d" % b)
        np.testing.assert_array_equal(gv, wv, err_msg="batch %d" % b)


def test_kv_cache_write_at_batch_error_mode():
    """oob_mode error (the default, and given): an in-range batch is written;
    one out of range stops the run with the out-of-bounds error, also when
    the moved access stays inside HBM (index B: the next tensor's bytes)."""
    for oob in (None, nisa.oob_mode.error):
        k = _kv_kernel(oob)
        K, V, Kp, Vp = _kv_inputs()
        gk, gv = k(K, V, Kp, Vp, np.array([2], np.int32))
        wk, wv = _kv_want(K, V, Kp, Vp, 2)
        np.testing.assert_array_equal(gk, wk)
        np.testing.assert_array_equal(gv, wv)
        # the offsets that keep [H, S, D] inside [B, H, S_prior, D]: 0 ..
        # B*H*S_prior*D - 1 - the access's last element
        hi = 3 * 2 * 8 * 64 - 1 - (1 * 8 * 64 + 4 * 64 + 63)
        for b in (3, -1):
            with pytest.raises(tpbsim.TpbError, match=r"register offset dst_reg r\d+ = %d "
                                                      r"elements is outside the transfer's "
                                                      r"bounds \[0, %d\] \(oob=error\)"
                                                      % (b * 2 * 8 * 64, hi)):
                k(K, V, Kp, Vp, np.array([b], np.int32))


# ---- rolling_buffer_set_state (NxDI modules/eagle/hidden_state.py) ----

@nki.jit
def rolling_buffer_set_state(buffer, hidden_states, batch_ids, position_ids):
    """As NxDI's kernel: row batch_ids[i] * buffer_size + position_ids[i]
    of the buffer seen as [max_batch * buffer_size, hidden] gets
    hidden_states[i], one single-index DMA per batch entry, oob_mode skip."""
    batch_size = batch_ids.shape[0]
    max_batch_size, buffer_size, hidden_size = buffer.shape
    reshaped = buffer.reshape((max_batch_size * buffer_size, hidden_size))
    batch_id_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    position_id_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    base = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    index = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    for i in range(batch_size):
        nisa.dma_copy(dst=batch_id_sb, src=batch_ids[i])
        nisa.dma_copy(dst=position_id_sb, src=position_ids[i])
        nisa.tensor_scalar(dst=base, data=batch_id_sb, op0=nl.multiply, operand0=buffer_size)
        nisa.tensor_tensor(dst=index, data1=base, data2=position_id_sb, op=nl.add)
        nisa.dma_copy(dst=reshaped.ap(pattern=[[hidden_size, 1], [1, hidden_size]], offset=0,
                                      scalar_offset=index, indirect_dim=0),
                      src=hidden_states[i, 0:hidden_size], oob_mode=nisa.oob_mode.skip)
    return buffer


def test_rolling_buffer_set_state_skip():
    """Buffer [5, 6, 256], batch 4: rows in range written, in order (a
    repeated row keeps the last write); a batch id past the buffer (5, 9)
    or a negative one is skipped."""
    MB, BS, HD = 5, 6, 256
    for ids, pos in (([2, 0, 4, 1], [3, 5, 0, 2]), ([5, 1, 9, -1], [0, 4, 2, 1]),
                     ([3, 3, 0, 4], [1, 1, 5, 5])):
        buf = RNG.standard_normal((MB, BS, HD)).astype(np.float32)
        hs = RNG.standard_normal((len(ids), HD)).astype(np.float32)
        want = buf.reshape(MB * BS, HD).copy()
        for i, (b, p) in enumerate(zip(ids, pos)):
            r = b * BS + p
            if 0 <= r < MB * BS:
                want[r] = hs[i]
        got = rolling_buffer_set_state(buf, hs, np.array(ids, np.int32), np.array(pos, np.int32))
        np.testing.assert_array_equal(got, want.reshape(MB, BS, HD), err_msg=str(ids))


# ---- the skip unit: the whole copy ----

def test_partly_out_of_range_skipped_whole():
    """Three rows from a run-time row: a start whose last row is past the
    end skips the whole copy (one dynamic address: NKI skips "the DMA
    transfer"); also with the source moved (out keeps what it held)."""
    R, H = 8, 32

    def k(a, b, idx):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=a)
        t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=idx)
        nisa.dma_copy(dst=out.ap(pattern=[[H, 3], [1, H]], offset=0, scalar_offset=t,
                                 indirect_dim=0),
                      src=b, oob_mode=nisa.oob_mode.skip)
        got = nl.ndarray((3, H), dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=got, src=b)
        nisa.dma_copy(dst=got, src=a.ap(pattern=[[H, 3], [1, H]], offset=0, scalar_offset=t,
                                        indirect_dim=0),
                      oob_mode=nisa.oob_mode.skip)
        return out, got
    a = RNG.standard_normal((R, H)).astype(np.float32)
    b = RNG.standard_normal((3, H)).astype(np.float32)
    for start in (R - 3, R - 2, R, -1, 0):
        out, got = nki.jit(k)(a, b, np.array([[start]], np.int32))
        want, wgot = a.copy(), b.copy()
        if 0 <= start <= R - 3:
            want[start:start + 3] = b
            wgot = a[start:start + 3]
        np.testing.assert_array_equal(out, want, err_msg="start %d" % start)
        np.testing.assert_array_equal(got, wgot, err_msg="start %d" % start)
