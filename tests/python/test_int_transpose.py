"""nl.transpose of integer tiles (NKI puts no dtype limit on it; the PE
takes no integers): exact on trn1, trn2 and trn3, every bit pattern kept
-- a 4- or 2-byte tile goes through the PE's transpose mode as the float
of its size (NaN payloads, subnormals and -0.0 are moved as they are), a
1-byte one through float32.  Values against NumPy's a.T."""
import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(29)

# per element size: bit patterns that a float view of them would disturb if
# anything computed on them (NaN payloads, infinities, -0.0, subnormals)
SPECIAL = {4: [0, 0x80000000, 1, 0x807FFFFF, 0x00400001, 0x7FC00001, 0x7F800001, 0xFFFFFFFF,
               0x7FFFFFFF, 0xFF800000, 0x7F800000, 0x01000001],
           2: [0, 0x8000, 1, 0x807F, 0x7FC1, 0x7F81, 0xFFFF, 0x7FFF, 0xFF80, 0x7C01, 0x0001],
           1: [0, 0x80, 1, 0x7F, 0xFF, 0xFE]}


def _bits(dtype, shape):
    n = np.dtype(dtype).itemsize
    u = np.dtype("uint%d" % (8 * n))
    a = RNG.integers(0, 1 << (8 * n), shape, dtype=np.uint64).astype(u)
    sp = SPECIAL[n][:shape[1]]
    a[0, :len(sp)] = sp
    a[-1, -len(sp):] = sp
    return a.view(dtype)


@nki.jit
def int_transpose(a):
    """nl.transpose of a loaded tile: stored from PSUM as it is, and copied
    to SBUF with tensor_copy first."""
    out = nl.ndarray((a.shape[1], a.shape[0]), dtype=a.dtype, buffer=nl.shared_hbm)
    out2 = nl.ndarray((a.shape[1], a.shape[0]), dtype=a.dtype, buffer=nl.shared_hbm)
    r = nl.transpose(nl.load(a))
    assert r.dtype == a.dtype and r.buffer == nl.psum
    nl.store(out, r)
    s = nl.ndarray(r.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=s, src=r)
    nl.store(out2, s)
    return out, out2


@pytest.mark.parametrize("target", ["trn1", "trn2", "trn3"])
@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int16, np.uint16, np.int8, np.uint8])
@pytest.mark.parametrize("shape", [(128, 128), (7, 45)])
def test_int_transpose_exact_numpy(target, dtype, shape):
    a = _bits(dtype, shape)
    for got in tpbsim.simulate(int_transpose, a, target=target).outputs:
        assert got.dtype == a.dtype
        np.testing.assert_array_equal(got, a.T)


@nki.jit
def int_transpose_forms(a, b):
    """A block of a block-dim tile and a strided view (no dtype view of
    them: copied first), a bool tile, and dtype=float32 (a value cast)."""
    out = nl.ndarray((a.shape[1], a.shape[0]), dtype=a.dtype, buffer=nl.shared_hbm)
    out2 = nl.ndarray((a.shape[1] // 2, a.shape[0]), dtype=a.dtype, buffer=nl.shared_hbm)
    out3 = nl.ndarray((b.shape[1], b.shape[0]), dtype=nl.float32, buffer=nl.shared_hbm)
    out4 = nl.ndarray((a.shape[1], a.shape[0]), dtype=nl.float32, buffer=nl.shared_hbm)
    blk = nl.ndarray((2, nl.par_dim(a.shape[0]), a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    for i in range(2):
        nisa.dma_copy(dst=blk[i], src=a)
    nl.store(out, nl.transpose(blk[1]))
    t = nl.load(a)
    nl.store(out2, nl.transpose(t[:, 0:a.shape[1]:2]))
    c = nl.transpose(nl.load(b))
    nl.store(out3, nl.copy(c, dtype=nl.float32))
    nl.store(out4, nl.transpose(t, dtype=nl.float32))
    return out, out2, out3, out4


def test_int_transpose_forms_numpy():
    a = RNG.integers(-(1 << 20), 1 << 20, (32, 24)).astype(np.int32)
    a[0, :4] = [-(1 << 31), (1 << 31) - 1, 1, -1]   # large values: exact in the first two
    b = RNG.integers(0, 2, (16, 40)).astype(np.bool_)
    o1, o2, o3, o4 = int_transpose_forms(a, b)
    np.testing.assert_array_equal(o1, a.T)
    np.testing.assert_array_equal(o2, a[:, ::2].T)
    np.testing.assert_array_equal(o3, b.T.astype(np.float32))
    np.testing.assert_array_equal(o4, a.T.astype(np.float32))


@nki.jit
def int_copies(a):
    """nl.copy of an int32 tile, of its nl.transpose, and into int16."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    out2 = nl.ndarray((a.shape[1], a.shape[0]), dtype=a.dtype, buffer=nl.shared_hbm)
    out3 = nl.ndarray(a.shape, dtype=nl.int16, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(out, nl.copy(t))
    nl.store(out2, nl.copy(nl.transpose(t)))
    nl.store(out3, nl.copy(t, dtype=nl.int16))
    return out, out2, out3


def test_nl_copy_of_integers_exact_numpy():
    # NKI: only a dtype other than x's may lose precision; the Activation
    # engine's copy goes through fp32 (2^31 - 8 -> 2^31 - 1, 123456789 ->
    # 123456792), so integers are copied by tensor_copy
    a = RNG.integers(-(1 << 31), 1 << 31, (64, 16)).astype(np.int32)
    a[0, :4] = [(1 << 31) - 8, 123456789, -(1 << 31), 16777217]
    o1, o2, o3 = int_copies(a)
    np.testing.assert_array_equal(o1, a)
    np.testing.assert_array_equal(o2, a.T)
    np.testing.assert_array_equal(o3, np.clip(a, -(1 << 15), (1 << 15) - 1).astype(np.int16))
