"""`.ap(scalar_offset=, indirect_dim=d)` moves the pattern by the index
times the stride of dim d of the tensor .ap is called on (NKI: "dimension
in self.shape"), also when that tensor is a reshape of its allocation
(attention_tkg reshapes its [s, b, h, q] mask to [1, s, 2, b*h*q / 2] and
indexes dim 2 by the program id).  Checked against NumPy, independent of
the NKI Library."""
import numpy as np

from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(11)
S, B, Q = 8, 4, 3          # x: [S, B, Q]; seen as [S, 2, B * Q / 2]


def _halves(x):
    """x [S, B, Q] as [2, S, B * Q / 2]: half h = the batches h*B/2 ..."""
    return np.stack([x.reshape(S, 2, B * Q // 2)[:, h] for h in range(2)])


def test_program_id_offset_on_reshaped_tensor_numpy():
    """kernel[2]: program p reads its half of the batches through the
    reshaped view (offset p * B*Q/2, not p * Q) and writes it to row p."""
    @nki.jit
    def k(x):
        out = nl.ndarray((2, S, B * Q // 2), dtype=x.dtype, buffer=nl.shared_hbm)
        p = nl.program_id(0)
        v = x.reshape((S, 2, B * Q // 2))
        t = nl.ndarray((S, B * Q // 2), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=v.ap([[B * Q, S], [1, B * Q // 2]], offset=0, scalar_offset=p,
                                      indirect_dim=1))
        nisa.dma_copy(dst=out.ap([[B * Q // 2, S], [1, B * Q // 2]], offset=0, scalar_offset=p,
                                 indirect_dim=0), src=t)
        return out
    x = RNG.standard_normal((S, B, Q)).astype(np.float32)
    np.testing.assert_array_equal(k[2](x), _halves(x))


def test_constant_and_runtime_offset_on_reshaped_tensor_numpy():
    """The same with an integer offset and with a run-time one (an int32
    (1, 1) SBUF tile): both move by the reshaped dim's stride."""
    @nki.jit
    def k(x, idx):
        out = nl.ndarray((2, S, B * Q // 2), dtype=x.dtype, buffer=nl.shared_hbm)
        v = x.reshape((S, 2, B * Q // 2))
        i_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=i_sb, src=idx)
        for h, off in ((0, 1), (1, i_sb)):   # half 1 twice: a number, then the tile
            t = nl.ndarray((S, B * Q // 2), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=v.ap([[B * Q, S], [1, B * Q // 2]], offset=0,
                                          scalar_offset=off, indirect_dim=1))
            nisa.dma_copy(dst=out[h], src=t)
        return out
    x = RNG.standard_normal((S, B, Q)).astype(np.float32)
    got = k(x, np.array([[1]], np.int32))
    want = _halves(x)[1]
    np.testing.assert_array_equal(got[0], want)
    np.testing.assert_array_equal(got[1], want)


def test_offset_on_unreshaped_tensor_unchanged_numpy():
    """Without a reshape the stride is the allocation's (as before): a
    [B, S, Q] tensor indexed on dim 0 moves by S * Q."""
    @nki.jit
    def k(x):
        out = nl.ndarray((B, S, Q), dtype=x.dtype, buffer=nl.shared_hbm)
        for b in range(B):
            t = nl.ndarray((S, Q), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x.ap([[Q, S], [1, Q]], offset=0, scalar_offset=B - 1 - b,
                                          indirect_dim=0))
            nisa.dma_copy(dst=out[b], src=t)
        return out
    x = RNG.standard_normal((B, S, Q)).astype(np.float32)
    np.testing.assert_array_equal(k(x), x[::-1])
