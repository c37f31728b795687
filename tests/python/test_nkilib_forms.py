"""Forms the NKI Library's kernels (scripts/nki-library-check,
scripts/nkilib_refs.py) need, each checked against NumPy here, independent
of the library."""
import numpy as np
import pytest

from tpbsim import NkiError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(5)


def test_cross_quadrant_copy_and_tensor_tensor_numpy():
    """RoPE's moves between partition quadrants/halves: a tensor_copy of
    partitions h..2h to 0..h, and a tensor_tensor whose inputs sit at 0..h
    and whose dst starts at h (h = 32: cross-quadrant, 64: cross-half)."""
    for h in (32, 64):
        @nki.jit
        def k(x):
            t = nl.ndarray((2 * h, 16), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x)
            lo = nl.ndarray((h, 16), dtype=x.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=lo, src=t[h:, :])
            o = nl.ndarray((2 * h, 16), dtype=x.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=o[0:h, :], src=lo)
            nisa.tensor_tensor(dst=o[h:, :], data1=t[0:h, :], data2=lo, op=nl.subtract)
            out = nl.ndarray((2 * h, 16), dtype=x.dtype, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=out, src=o)
            return out
        x = RNG.standard_normal((2 * h, 16)).astype(np.float32)
        np.testing.assert_array_equal(k(x), np.concatenate([x[h:], x[:h] - x[h:]]))


def test_tensor_tensor_inputs_on_other_partitions_refused():
    """The two inputs of tensor_tensor must start on the same partition
    (only dst may move): a clear error naming both starts."""
    @nki.jit
    def k(x):
        t = nl.ndarray((64, 16), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        o = nl.ndarray((32, 16), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=o, data1=t[0:32, :], data2=t[32:64, :], op=nl.add)
        out = nl.ndarray((32, 16), dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=o)
        return out
    with pytest.raises(Exception, match="in0 starts at partition 0 and in1 at partition 32"):
        k(np.zeros((64, 16), np.float32))


def test_ap_dtype_same_as_tensor_numpy():
    """.ap(pattern, dtype=<the tensor's own dtype>) (nkilib's TensorView
    passes it always) is the plain pattern; another dtype is refused."""
    @nki.jit
    def k(x):
        t = nl.ndarray((64, 8), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x.ap([[16, 64], [2, 8]], offset=1, dtype=x.dtype))
        out = nl.ndarray((64, 8), dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out
    x = RNG.standard_normal((64, 16)).astype(np.float32)
    np.testing.assert_array_equal(k(x), x[:, 1::2])

    @nki.jit
    def bad(x):
        t = nl.ndarray((64, 16), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x.ap([[16, 64], [1, 16]], dtype=nl.int32))
        return t
    with pytest.raises(NkiError, match=r"\.ap\(dtype=int32\) on '.*' \(float32\): reinterpreting"):
        bad(x)


def test_iota_pattern_regroups_dst_numpy():
    """iota's pattern needs only as many elements per partition as dst
    (cascaded_max: pattern [[0, 1], [0, 3], [5, 4]] into a [1, 12] tile)."""
    @nki.jit
    def k(x):
        t = nl.ndarray((2, 12), dtype=nl.int32, buffer=nl.sbuf)
        nisa.iota(dst=t, pattern=[[0, 1], [1, 3], [5, 4]], offset=2, channel_multiplier=100)
        out = nl.ndarray((2, 12), dtype=nl.int32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out
    p, a, b = np.meshgrid(np.arange(2), np.arange(3), np.arange(4), indexing="ij")
    want = (2 + 100 * p + a + 5 * b).reshape(2, 12)
    np.testing.assert_array_equal(k(np.zeros(1, np.float32)), want)


def test_find_index8_broadcast_vals_numpy():
    """nc_find_index8 with vals = one column broadcast to the 8 slots
    (`v.ap([[1, P], [0, 8]])`, cascaded_max): every slot finds the index of
    that value."""
    @nki.jit
    def k(x):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        m = nl.ndarray((x.shape[0], 1), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=m, op=nl.maximum, data=t, axis=1)
        idx = nl.ndarray((x.shape[0], 8), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.nc_find_index8(dst=idx, data=t, vals=m.ap([[1, x.shape[0]], [0, 8]]))
        out = nl.ndarray((x.shape[0], 8), dtype=nl.uint32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=idx)
        return out
    x = RNG.standard_normal((16, 64)).astype(np.float32)
    np.testing.assert_array_equal(k(x), np.repeat(x.argmax(1)[:, None], 8, 1))


def test_ndarray_address_shares_storage_numpy():
    """nl.ndarray(address=(0, byte_addr)) places the tile (the NKI Library's
    SbufManager): two SBUF tiles at one address share their bytes, and a
    PSUM address counts bytes from bank 0 (bank 2 here)."""
    @nki.jit
    def k(x):
        a = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf, address=(0, 4096))
        b = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf, address=(0, 4096))
        nisa.dma_copy(dst=a, src=x)
        p = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.psum, address=(0, 2 * 2048))
        nisa.tensor_copy(dst=p, src=b)   # b is a: the loaded values
        c = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=c, data=p, op0=nl.multiply, operand0=2.0)
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=c)
        return out
    x = RNG.standard_normal((128, 64)).astype(np.float32)
    np.testing.assert_array_equal(k(x), 2 * x)

    @nki.jit
    def bad(x):
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm, address=(0, 0))
        return t
    with pytest.raises(NkiError, match=r"address=.*shared_hbm"):
        bad(x)


def test_total_available_sbuf_size():
    """nl.tile_size.total_available_sbuf_size: SBUF bytes per partition of
    the target traced for (the library budgets tiles with it)."""
    seen = {}

    @nki.jit
    def k(x):
        seen["n"] = nl.tile_size.total_available_sbuf_size
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=x)
        return out
    k(np.zeros((4, 4), np.float32))
    assert seen["n"] == 224 * 1024   # trn2, the default target
