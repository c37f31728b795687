"""dma_copy of a run-time select with oob_mode.skip (the NKI Library's
attention_block_tkg block-KV cache update: rows at a run-time slot, 2^32 - 1
for a padding row that is skipped), checked against NumPy."""
import numpy as np

from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(13)
NB, BL, D, S = 6, 4, 16, 3      # cache [NB, BL, D]; S new rows per batch row


def _kernel():
    @nki.jit
    def k(cache, new, slots):
        out = nl.ndarray(cache.shape, dtype=cache.dtype, buffer=nl.shared_hbm)
        c = nl.ndarray((NB * BL, D), dtype=cache.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=c, src=cache.reshape((NB * BL, D)))
        nisa.dma_copy(dst=out.reshape((NB * BL, D)), src=c)
        back = nl.ndarray((slots.shape[0] * S, D), dtype=cache.dtype, buffer=nl.shared_hbm)
        for b in range(slots.shape[0]):
            slot = nl.ndarray((1, 1), dtype=slots.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=slot, src=slots[b])
            t = nl.ndarray((S, D), dtype=cache.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=new[b])
            nisa.dma_copy(dst=out.ap([[D, S], [1, D]], offset=0, scalar_offset=slot, indirect_dim=1),
                          src=t, oob_mode=nisa.oob_mode.skip)
            # and read back: a skipped row keeps what the tile held (zeros)
            g = nl.ndarray((S, D), dtype=cache.dtype, buffer=nl.sbuf)
            nisa.memset(g, value=0.0)
            nisa.dma_copy(dst=g, src=out.ap([[D, S], [1, D]], offset=0, scalar_offset=slot, indirect_dim=1),
                          oob_mode=nisa.oob_mode.skip)
            nisa.dma_copy(dst=back[b * S:(b + 1) * S, :], src=g)
        return out, back
    return k


def test_runtime_offset_store_and_load_skip_numpy():
    cache = RNG.standard_normal((NB, BL, D)).astype(np.float32)
    new = RNG.standard_normal((3, S, D)).astype(np.float32)
    # slots (rows of [NB * BL, D]): two in range, one padding row (2^32 - 1)
    slots = np.array([[5], [13], [0xFFFFFFFF]], np.uint32)
    out, back = _kernel()(cache, new, slots)
    want = cache.reshape(NB * BL, D).copy()
    for b in range(2):
        want[slots[b, 0]:slots[b, 0] + S] = new[b]
    np.testing.assert_array_equal(out.reshape(NB * BL, D), want)
    wb = np.zeros((3 * S, D), np.float32)
    wb[:2 * S] = new[:2].reshape(2 * S, D)
    np.testing.assert_array_equal(back, wb)


def test_negative_runtime_offset_skipped_numpy():
    """An int32 start below 0 (the NKI Library's indexed_flatten marks an
    unused slot -1000000 "to ensure all indices are OOB and skipped"): every
    row before row 0 is skipped, the rows from row 0 on are written."""
    cache = RNG.standard_normal((NB, BL, D)).astype(np.float32)
    new = RNG.standard_normal((3, S, D)).astype(np.float32)
    slots = np.array([[-1000000], [-2], [7]], np.int32)
    out, back = _kernel()(cache, new, slots)
    want = cache.reshape(NB * BL, D).copy()
    want[0:S - 2] = new[1, 2:]          # start -2: rows 0 .. S - 3 land
    want[7:7 + S] = new[2]
    np.testing.assert_array_equal(out.reshape(NB * BL, D), want)
    wb = np.zeros((3 * S, D), np.float32)
    wb[S + 2:2 * S] = want[0:S - 2]
    wb[2 * S:] = new[2]
    np.testing.assert_array_equal(back, wb)
