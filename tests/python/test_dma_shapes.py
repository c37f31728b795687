"""nisa.dma_copy between operands of different shapes: NKI's rule is that
"the total number of data elements in src must match that of dst", the
elements pairing in C order (docs/kernel-format.md, load / store /
dma_copy).  Checked against NumPy's reshape of the same data."""
import numpy as np
import pytest

from tpbsim import TpbError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


def test_reshaping_copies_numpy():
    """[64, 128] HBM into a [128, 64] tile and back; [3, 5] into a [5, 3]
    tile (no dim of one divides a dim of the other as written); the tile
    out as [16, 4, 128]."""
    @nki.jit
    def k(a, b):
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        o = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o, src=t)
        u = nl.ndarray((5, 3), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=u, src=b)
        o2 = nl.ndarray((5, 3), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o2, src=u)
        o3 = nl.ndarray((16, 4, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o3, src=t)
        return o, o2, o3
    rng = np.random.default_rng(8)
    a = rng.standard_normal((64, 128)).astype(np.float32)
    b = rng.standard_normal((3, 5)).astype(np.float32)
    o, o2, o3 = k(a, b)
    np.testing.assert_array_equal(o, a)
    np.testing.assert_array_equal(o2, b.reshape(5, 3))
    np.testing.assert_array_equal(o3, a.reshape(16, 4, 128))


def test_element_count_mismatch_refused():
    @nki.jit
    def k(a):
        t = nl.ndarray((128, 32), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        return a
    with pytest.raises(TpbError, match=r"field 'src': shape \[64, 128\] does not match 'dst' "
                                       r"shape \[128, 32\] \(8192 elements against 4096: a DMA "
                                       r"moves equal element counts\)"):
        k(np.zeros((64, 128), np.float32))
