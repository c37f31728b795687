"""Forms the nki-samples reference kernels (attention, fused linear) and their
unit tests use (docs/python.md "nki-samples"): nl.static_cast on host
arrays, lazy_initialization=, a jit kernel called from a kernel, beta-1's
t[:, i] as [P, 1], affine_select from PSUM, masks on loop variables only,
and nl.load(mask=).  Each against NumPy (small shapes)."""
import numpy as np
import pytest

import tpbsim
from tpbsim import NkiError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(18)


def bf16_rne(a):
    """float32 -> bfloat16 (as float32), round half to even, by the bits."""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


# ---- nl.static_cast (host arrays) ----

def test_static_cast_bf16_rounds_to_nearest_even():
    a = np.concatenate([RNG.standard_normal(1000).astype(np.float32),
                        # halfway cases: ties to even, both directions
                        np.array([1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, -(1 + 2.0 ** -8), 0.0,
                                  1e-40, 3e38], np.float32)])
    t = nl.static_cast(a, nl.bfloat16)   # an array of NKI's NumPy bfloat16 (tpbsim_dtypes)
    assert t.dtype == np.dtype(nl.bfloat16)
    np.testing.assert_array_equal(t.astype(np.float32), bf16_rne(a))


def test_static_cast_numpy_dtypes_and_refusals():
    a = RNG.standard_normal((4, 3))
    for d in (np.float32, nl.float16, nl.int32):
        r = nl.static_cast(a, d)
        assert r.dtype == np.dtype(d) and np.array_equal(r, a.astype(d))
    # fp8 too (test_dtypes.py checks the rounding itself)
    r = nl.static_cast(a, nl.float8_e4m3)   # NKI's legacy e4m3, not e4m3fn
    assert r.dtype == np.dtype(nl.float8_e4m3) and r.dtype.name == "float8_e4m3"
    r = nl.static_cast(a, nl.float8_e4m3fn)
    assert r.dtype == np.dtype(nl.float8_e4m3fn) and r.dtype.name == "float8_e4m3fn"
    with pytest.raises(NkiError, match="NumPy has no dtype float8_e5m2_x4"):
        nl.static_cast(a, nl.float8_e5m2_x4)


@nki.jit
def double_kernel(x):
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x, dtype=nl.float32)
    nl.store(out, nl.multiply(t, 2.0))
    return out


def test_static_cast_bf16_feeds_a_kernel():
    a = RNG.standard_normal((128, 16)).astype(np.float32)
    out = nki.simulate_kernel(double_kernel, nl.static_cast(a, nl.bfloat16))
    np.testing.assert_array_equal(out, 2 * bf16_rne(a))


# ---- lazy_initialization=, a jit kernel called inside a kernel ----

@nki.jit(mode="trace")
def add_rows(dst, x):   # a helper kernel: inlined when called from a kernel
    dst[...] = nl.add(nl.load(x), 1.0)


@nki.jit
def lazy_and_inline(a, b, x):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    out2 = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    ps = nl.zeros((128, 64), dtype=nl.float32, buffer=nl.psum, lazy_initialization=True)
    for k in nl.affine_range(2):
        ps[...] += nisa.nc_matmul(nl.load(a[k * 128:(k + 1) * 128, :]),
                                  nl.load(b[k * 128:(k + 1) * 128, :]))
    f = nl.full((128, 64), 3.0, dtype=nl.float32, lazy_initialization=False)
    nl.store(out, nl.add(ps, f))
    t = nl.ndarray(x.shape, dtype=nl.float32)
    add_rows(t, x)
    nl.store(out2, t)
    return out, out2


def test_lazy_initialization_and_inlined_kernel():
    a = RNG.standard_normal((256, 128)).astype(np.float32)
    b = RNG.standard_normal((256, 64)).astype(np.float32)
    x = RNG.standard_normal((128, 8)).astype(np.float32)
    out, out2 = lazy_and_inline(a, b, x)
    np.testing.assert_allclose(out, a.T @ b + 3.0, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(out2, x + 1.0)


# ---- t[:, i] is [P, 1] in NKI beta-1: its [:, 0] and [:, 0:1] ----

def _col_core(col):
    """as the flash kernel's core: gets l_buffer[:, i], indexes [:, 0]."""
    e = nisa.activation(nl.exp, col[:, 0:1], scale=1.0)
    col[:, 0] = nl.add(e, col[:, 0])


@nki.jit
def column_kernel(x):
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    for i in nl.affine_range(x.shape[1]):
        _col_core(t[:, i])
    nl.store(out, t)
    return out


def test_column_of_a_column_view():
    x = RNG.uniform(-1, 1, (128, 4)).astype(np.float32)
    np.testing.assert_allclose(column_kernel(x), np.exp(x) + x, rtol=1e-5)


def test_column_view_other_second_index_refused():
    """t[:, 0] is [P, 1], as in NKI: its index 1 is out of range."""
    def k(x):
        t = nl.load(x)
        t[:, 0][:, 1]
    with pytest.raises(NkiError, match=r"dimension 1 of 't': index 1 out of range 0\.\.0"):
        tpbsim.kernel_json(nki.jit(k), np.zeros((128, 4), np.float32))


# ---- beta-1 affine_select with its on_true_tile in PSUM ----

@nki.jit
def causal_from_psum(q, k):
    out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    ps = nisa.nc_matmul(nl.load(q), nl.load(k))
    ip, jf = nl.mgrid[0:128, 0:128]
    nl.store(out, nisa.affine_select(pred=(ip >= jf), on_true_tile=ps, on_false_value=-9984.0,
                                     dtype=nl.float32))
    return out


def test_affine_select_on_true_tile_in_psum():
    q = RNG.standard_normal((64, 128)).astype(np.float32)
    k = RNG.standard_normal((64, 128)).astype(np.float32)
    ref = np.where(np.tril(np.ones((128, 128), bool)), q.T @ k, -9984.0)
    np.testing.assert_allclose(causal_from_psum(q, k), ref, rtol=1e-4, atol=1e-4)


# ---- mask= naming no index (a condition on loop variables only) ----

@nki.jit
def loop_masks(x, n):
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    res = nl.ndarray((128, x.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, x.shape[1]), dtype=nl.float32)
    ip, jf = nl.mgrid[0:128, 0:x.shape[1]]
    for i in nl.affine_range(3):   # the last tile is past x's rows: masked off
        live = i * 128 < n   # only the first tiles
        t = nl.load(x[i * 128 + ip, jf], mask=live)
        t2 = nl.ndarray((128, x.shape[1]), dtype=nl.float32)
        t2[...] = nl.multiply(t, 2.0, mask=live)
        t2[...] = nisa.activation(op=nl.exp, data=t, mask=live)
        acc[...] = nl.add(acc, t2, mask=live)
        nl.store(out[i * 128 + ip, jf], value=t2, mask=(jf < x.shape[1]) & live)
    nl.store(res, acc)
    return out, res


def test_loop_variable_masks():
    x = RNG.uniform(-1, 1, (256, 8)).astype(np.float32)
    out, res = loop_masks(x, 256)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-5)
    np.testing.assert_allclose(res, np.exp(x[:128]) + np.exp(x[128:256]), rtol=1e-5)


# ---- nl.load(mask=) bounding indices ----

@nki.jit
def masked_load(x):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.full((128, 64), 7.0, dtype=nl.float32)
    ip, jf = nl.mgrid[0:128, 0:64]
    t[ip, jf] = nl.load(x[ip, jf], mask=(ip < 100) & (jf < 40))
    nl.store(out[ip, jf], value=t, mask=(ip < 100) & (jf < 40))
    return out


def test_load_mask_rectangle():
    x = RNG.standard_normal((128, 64)).astype(np.float32)
    out = masked_load(x)
    np.testing.assert_array_equal(out[:100, :40], x[:100, :40])


def test_out_of_range_index_needs_a_false_mask():
    def k(x):
        ip, jf = nl.mgrid[0:128, 0:8]
        nl.load(x[128 + ip, jf], mask=(jf < 8))
    with pytest.raises(NkiError, match="index 0 spans 128..255, outside 0..127"):
        tpbsim.kernel_json(nki.jit(k), np.zeros((128, 8), np.float32))


def test_out_of_range_index_unmasked_raises():
    def k(x):
        ip, jf = nl.mgrid[0:128, 0:8]
        nl.load(x[128 + ip, jf])
    with pytest.raises(NkiError, match="index 0 spans 128..255, outside 0..127"):
        tpbsim.kernel_json(nki.jit(k), np.zeros((128, 8), np.float32))


@nki.jit
def dma_masked_off(x, y):
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=x)
    for i in nl.affine_range(2):   # i == 1: a bool mask, False: nothing copied
        ip, jf = nl.mgrid[0:64, 0:8]
        nisa.dma_copy(dst=out[i * 64 + ip, jf], src=y[i * 64 + ip, jf], mask=(i < 1))
    return out


def test_dma_copy_bool_mask_false_copies_nothing():
    x = RNG.standard_normal((128, 8)).astype(np.float32)
    y = RNG.standard_normal((128, 8)).astype(np.float32)
    out = dma_masked_off(x, y)
    np.testing.assert_array_equal(out, np.concatenate([y[:64], x[64:]]))
