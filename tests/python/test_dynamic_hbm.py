"""nisa.dma_copy between two HBM tensors with one side selected at run time
(select(dim, tensor), .ap(scalar_offset=) with an SBUF index or a virtual
register): the kernel format's register-offset dma_copy (src_reg /
dst_reg), checked against NumPy's indexing of the same data
(docs/python.md "Run-time selects")."""
import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


def _arange(shape, dtype=np.float32):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def _index(idx):
    i = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=i, src=idx)
    return i


def test_hbm_to_hbm_src_selected():
    """out = a[i] (and a[:, i, 8:40]), HBM -> HBM with the source moved."""
    def k(a, idx, view_fn, shape):
        out = nl.ndarray(shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=view_fn(a, _index(idx)))
        return out
    a = _arange((4, 128, 64))
    for v in (0, 3, 1):
        got = nki.jit(k)(a, np.array([[v]], np.int32), lambda x, i: x.select(0, i), (128, 64))
        np.testing.assert_array_equal(got, a[v])
    got = nki.jit(k)(a, np.array([[77]], np.int32), lambda x, i: x.select(1, i)[:, 8:40],
                     (4, 32))
    np.testing.assert_array_equal(got, a[:, 77, 8:40])


def test_hbm_to_hbm_dst_selected():
    """out[i] = b (every other row block of out keeps a's values): HBM ->
    HBM with the destination moved, after a plain copy of a into out."""
    def k(a, b, idx):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=a)
        nisa.dma_copy(dst=out.select(0, _index(idx)), src=b)
        return out
    a, b = _arange((4, 128, 64)), -_arange((128, 64)) - 1
    for v in (2, 0):
        want = a.copy()
        want[v] = b
        np.testing.assert_array_equal(nki.jit(k)(a, b, np.array([[v]], np.int32)), want)


def test_ap_scalar_offset_register_hbm_to_hbm():
    """.ap(pattern, offset, scalar_offset=<virtual register>, indirect_dim=0)
    into an HBM output: rows r*2 .. of a (offset 4 elements)."""
    def k(a, idx):
        r = nisa.register_alloc()
        nisa.register_load(r, _index(idx))
        out = nl.ndarray((16, 24), dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=a.ap(pattern=[[32, 16], [1, 24]], offset=4,
                                        scalar_offset=r, indirect_dim=0))
        return out
    a = _arange((64, 32))
    for v in (0, 5, 48):
        rows, cols = np.meshgrid(np.arange(16), np.arange(24), indexing="ij")
        want = a.reshape(-1)[4 + v * 32 + rows * 32 + cols]
        np.testing.assert_array_equal(nki.jit(k)(a, np.array([[v]], np.int32)), want)


def test_hbm_to_hbm_cast():
    """A run-time selected float32 source into a float16 output: the DMA
    casts; the offset counts source elements."""
    def k(a, idx):
        out = nl.ndarray((128, 64), dtype=nl.float16, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=a.select(0, _index(idx)))
        return out
    a = _arange((3, 128, 64)) / 64
    got = nki.jit(k)(a, np.array([[2]], np.int32))
    np.testing.assert_array_equal(got, a[2].astype(np.float16))


def test_hbm_to_hbm_out_of_range_error():
    """An index whose moved access leaves the tensor stops the run under
    oob_mode error (the default), checked before anything moves: far out
    (-1000) and just past the end (4: the next tensor's bytes, inside HBM),
    the message naming the register field, its offset and the bounds
    (oob_mode skip: tests/python/test_dyn_hbm_skip.py)."""
    def k2(a, idx):
        out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=a.select(0, _index(idx)))
        return out
    a = _arange((4, 128, 64))
    for v in (-1000, 4):
        with pytest.raises(tpbsim.TpbError, match=r"register offset src_reg r\d+ = %d elements "
                                                    r"is outside the transfer's bounds "
                                                    r"\[0, 24576\] \(oob=error\)" % (v * 8192)):
            nki.jit(k2)(a, np.array([[v]], np.int32))


def test_hbm_to_hbm_in_dynamic_range():
    """.ap(scalar_offset=row) in a dynamic_range body, HBM to HBM both ways:
    the row offset tile advances 128 a trip, every trip the same
    instructions.  out: a's first 128 rows written at each trip's row;
    last: the 128 rows of a the last trip read."""
    M, H = 512, 96

    def k(a, trips):
        out = nl.ndarray((M, H), dtype=a.dtype, buffer=nl.shared_hbm)
        last = nl.ndarray((128, H), dtype=a.dtype, buffer=nl.shared_hbm)
        z = nl.ndarray((128, H), dtype=a.dtype, buffer=nl.sbuf)
        nisa.memset(dst=z, value=-1.0)
        for b in range(M // 128):
            nisa.dma_copy(dst=out[b * 128:(b + 1) * 128, :], src=z)
        r = nisa.register_alloc()
        nisa.register_load(r, _index(trips))
        row = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.memset(dst=row, value=0)
        pat = [[H, 128], [1, H]]
        for _ in nl.dynamic_range(0, r, 1):
            nisa.dma_copy(dst=out.ap(pattern=pat, offset=0, scalar_offset=row, indirect_dim=0),
                          src=a[0:128, :])
            nisa.dma_copy(dst=last, src=a.ap(pattern=pat, offset=0, scalar_offset=row,
                                             indirect_dim=0))
            nisa.tensor_scalar(dst=row, data=row, op0=nl.add, operand0=128)
        return out, last
    a = _arange((M, H))
    for trips in (1, 3):
        got, last = nki.jit(k)(a, np.array([[trips]], np.int32))
        want = np.full((M, H), -1.0, np.float32)
        want[:trips * 128] = np.tile(a[:128], (trips, 1))
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(last, a[(trips - 1) * 128:trips * 128])
