"""More forms of public NKI kernels (nki-samples, the SDK's nki/test) that
must give NKI's result or a clear error: the target a kernel is traced for,
masks over two indices, integer division, ... (docs/python.md).  Every
result is checked against NumPy."""
import numpy as np
import pytest

import tpbsim
from tpbsim import NkiError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(19)


def _by_version(a):
    """x2 on trn2 and later (gen3+), x3 on trn1 (gen2): a kernel branching on
    nisa.get_nc_version() as nki-samples' flash_attn_bwd does."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    if nisa.get_nc_version() >= nisa.nc_version.gen3:
        nl.store(out, value=nl.multiply(t, 2.0))
    else:
        nl.store(out, value=nl.multiply(t, 3.0))
    return out


A = RNG.random((128, 64), np.float32)


@pytest.mark.parametrize("target, factor", [("trn1", 3.0), ("gen2", 3.0), ("inf2", 3.0),
                                            ("trn2", 2.0), ("gen3", 2.0), (None, 2.0),
                                            ("trn3", 2.0), ("gen4", 2.0)])
def test_nc_version_follows_simulate_target_numpy(target, factor, monkeypatch):
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)
    r = tpbsim.simulate(nki.jit(_by_version), A, target=target)
    np.testing.assert_allclose(r.outputs, A * factor, rtol=1e-6)


def test_nc_version_follows_jit_platform_target_numpy(monkeypatch):
    """NKI beta-1's @nki.jit(platform_target=...) (the SDK's nki/test files)."""
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)
    np.testing.assert_allclose(nki.jit(_by_version, platform_target="trn1")(A), A * 3.0,
                               rtol=1e-6)
    np.testing.assert_allclose(nki.jit(_by_version, platform_target="trn2")(A), A * 2.0,
                               rtol=1e-6)
    # simulate(target=) is the caller's choice and wins over the kernel's
    r = tpbsim.simulate(nki.jit(_by_version, platform_target="trn2"), A, target="trn1")
    np.testing.assert_allclose(r.outputs, A * 3.0, rtol=1e-6)


def test_nc_version_follows_environment_numpy(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    assert nisa.get_nc_version() == nisa.nc_version.gen2
    np.testing.assert_allclose(nki.simulate_kernel(nki.trace(_by_version), A), A * 3.0,
                               rtol=1e-6)
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "gen3")
    assert nisa.get_nc_version() == nisa.nc_version.gen3
    np.testing.assert_allclose(nki.jit(_by_version)(A), A * 2.0, rtol=1e-6)
    assert nisa.get_nc_sub_version() == 0


def test_nc_version_trn3_is_gen4(monkeypatch):
    """trn3 (and NKI's alias gen4) is NeuronCore-v4."""
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "gen4")
    assert nisa.get_nc_version() == nisa.nc_version.gen4
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE")
    seen = []

    def k(a):
        seen.append(nisa.get_nc_version())
        return _by_version(a)
    np.testing.assert_allclose(nki.jit(k, platform_target="trn3")(A), A * 2.0, rtol=1e-6)
    assert seen == [nisa.nc_version.gen4]


def test_nc_version_unknown_target_refused(monkeypatch):
    """A target tpbsim does not model is an error, not gen3."""
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)
    with pytest.raises(NkiError, match="get_nc_version: target 'trn9' is not one tpbsim "
                                       r"models \(trn1, trn2, trn3\)"):
        tpbsim.simulate(nki.jit(_by_version), A, target="trn9")


# ---- nl.load / nl.store masks that are not a rectangle (_masked.py) ----

def test_flat_offset_mask_two_programs_numpy():
    """nki-samples' tutorial add kernel: the flat offset of a [P, F] tile,
    `j * P * F + F * ix + iy < n`, masks load, add and store (grid of 2):
    the first n elements are a + b, every other element of c keeps the
    value it had (c is passed in and written back, beta-1 style)."""
    P, F = 32, 24

    @nki.trace
    def add(a, b, c, n):
        ix = nl.arange(P)[:, None]
        iy = nl.arange(F)[None, :]
        j = nl.program_id(axis=0)
        offset = j * P * F + F * ix + iy
        x = nl.load(a[j, ix, iy], mask=offset < n)
        y = nl.load(b[j, ix, iy], mask=offset < n)
        s = nl.add(x, y, mask=offset < n)
        nl.store(c[j, ix, iy], value=s, mask=offset < n)
    a, b = RNG.random((2, P, F), np.float32), RNG.random((2, P, F), np.float32)
    for n in (2 * P * F - 70, P * F + 5, P * F - F, 7):
        c = np.full((2, P, F), -1.0, np.float32)
        nki.simulate_kernel(add[2], a, b, c, n)
        want = np.full(2 * P * F, -1.0, np.float32)
        want[:n] = (a + b).reshape(-1)[:n]
        np.testing.assert_allclose(c.reshape(-1), want, rtol=1e-6)


def test_complementary_masks_of_two_programs_numpy():
    """Program 0 stores where the flat offset is below n, program 1 where
    it is not, into the same rows (one core: the read-modify-writes are
    ordered)."""
    P, F, n = 16, 8, 45

    @nki.trace
    def k(c):
        ix = nl.arange(P)[:, None]
        iy = nl.arange(F)[None, :]
        j = nl.program_id(0)
        v = nl.full((P, F), 1.0, dtype=nl.float32)
        v2 = nl.add(v, j)
        nl.store(c[ix, iy], value=v2,
                 mask=(F * ix + iy >= n * j) & (F * ix + iy < n + 1000 * j))
    c = np.zeros((P, F), np.float32)
    nki.simulate_kernel(k[2], c)
    want = np.where(np.arange(P * F).reshape(P, F) < n, 1.0, 2.0)
    np.testing.assert_array_equal(c, want)


def test_two_index_load_mask_numpy():
    """A load masked by `i_p != i_f` (two indices) fills only the masked
    elements: a masked-off element keeps what the tile held before."""
    @nki.jit
    def k(a):
        out = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:64, 0:64]
        t = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(t, 5.0)
        t[...] = nl.load(a, mask=(i_p != i_f) & (i_f < 40))
        nl.store(out, value=nl.load(a, mask=(i_p > i_f)), mask=(i_p > i_f))
        out2 = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out2, value=t)
        return out, out2
    a = RNG.random((64, 64), np.float32)
    out, out2 = k(a)
    low = np.tril(np.ones((64, 64), bool), -1)
    np.testing.assert_array_equal(out[low], a[low])
    i_p, i_f = np.mgrid[0:64, 0:64]
    m = (i_p != i_f) & (i_f < 40)
    np.testing.assert_array_equal(out2, np.where(m, a, 5.0))


def test_assign_rect_masked_load_numpy():
    """`t[...] = nl.load(a, mask=(i_f < 40))` loads into t's rectangle:
    the rest of t keeps its values (NKI writes the load's result into t)."""
    @nki.jit
    def k(a):
        out = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:64, 0:64]
        t = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(t, 5.0)
        t[:, 64:128] = nl.load(a, mask=(i_f < 40) & (i_p >= 3))
        nl.store(out, value=t[:, 64:128])
        return out
    a = RNG.random((64, 64), np.float32)
    i_p, i_f = np.mgrid[0:64, 0:64]
    np.testing.assert_array_equal(k(a), np.where((i_f < 40) & (i_p >= 3), a, 5.0))


def test_program_id_bound_mask_numpy():
    """A one-index bound that depends on nl.program_id() (the rows left in
    the last program's tile): loads and stores only those rows."""
    @nki.trace
    def k(a, c, n):
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(16)[None, :]
        j = nl.program_id(0)
        t = nl.load(a[j * 128 + i_p, i_f], mask=(j * 128 + i_p < n))
        nl.store(c[j * 128 + i_p, i_f], value=nl.multiply(t, 2.0, mask=(j * 128 + i_p < n)),
                 mask=(j * 128 + i_p < n))
    a = RNG.random((256, 16), np.float32)
    c = np.full((256, 16), 3.0, np.float32)
    nki.simulate_kernel(k[2], a, c, 200)
    want = np.full((256, 16), 3.0, np.float32)
    want[:200] = 2 * a[:200]
    np.testing.assert_allclose(c, want, rtol=1e-6)


def test_two_index_store_mask_multicore_refused():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:128, 0:64]
        nl.store(out, value=nl.load(a), mask=(64 * i_p + i_f < 1000))
        return out
    with pytest.raises(NkiError, match="read-modify-write of dst, which another core"):
        k[nl.nc(2)](RNG.random((128, 64), np.float32))


# ---- a memset at a partition start the engines do not allow (_partition.py) ----

def test_gather_flattened_indices_per_element_numpy():
    """The SDK's gather_flattened example: `indices[i, j] = j * 5` element
    by element, on every partition i, then nl.gather_flattened."""
    N, M = 40, 64

    @nki.jit
    def k(data):
        indices = nl.zeros((N, 10), dtype=nl.uint32)
        for i in nl.static_range(N):
            for j in nl.static_range(10):
                indices[i, j] = j * 5 + i % 3
        res = nl.gather_flattened(data=nl.load(data), indices=indices)
        out = nl.ndarray([N, 10], dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=res)
        return out
    data = RNG.random((N, M), np.float32)
    idx = np.arange(10)[None, :] * 5 + (np.arange(N) % 3)[:, None]
    np.testing.assert_array_equal(k(data), np.take_along_axis(data, idx, axis=-1))


@pytest.mark.parametrize("lo, hi", [(5, 7), (30, 34), (33, 40), (65, 128), (100, 101)])
def test_memset_partition_ranges_numpy(lo, hi):
    """nisa.memset and `t[lo:hi, 2:5] = v` on partitions lo..hi-1 (a start
    the engines do not allow): only those elements change."""
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(a)
        nisa.memset(t[lo:hi, 2:5], 7.0)
        t[lo:hi, 6] = -3.0
        nl.store(out, value=t)
        return out
    a = RNG.random((128, 8), np.float32)
    want = a.copy()
    want[lo:hi, 2:5] = 7.0
    want[lo:hi, 6] = -3.0
    np.testing.assert_array_equal(k(a), want)


# ---- integer division (nl.divide, `/`) ----

def test_int_tile_divide_is_true_division_numpy():
    """resize_nearest's `nl.floor(iota_int32 / out_w, dtype=nl.int32)`: NKI
    documents no result dtype for nl.divide ("similar to numpy.divide"), so
    NumPy's true division: a float quotient (float32), whose floor is the
    row.  (An int32 quotient would round 18.55 to 19 first.)"""
    out_w = 11

    @nki.jit
    def k(x):
        out = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.shared_hbm)
        out2 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        out3 = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.shared_hbm)
        pos = nisa.iota(nl.arange(128)[:, None], dtype=nl.int32)
        nl.store(out, value=nl.floor(pos / out_w, dtype=nl.int32))
        q = nl.divide(pos, 4)
        assert q.dtype == nl.float32
        nl.store(out2, value=q)
        xi = nl.load(x)
        nl.store(out3, value=nl.divide(xi, xi[:, 0:1]))   # int32 / int32 tiles
        return out, out2, out3
    x = RNG.integers(1, 50, (128, 4)).astype(np.int32)
    o, o2, o3 = k(x)
    pos = np.arange(128)[:, None]
    np.testing.assert_array_equal(o, np.floor(pos / out_w).astype(np.int32))
    np.testing.assert_allclose(o2, pos / 4, rtol=1e-7)
    np.testing.assert_allclose(o3, (x / x[:, 0:1]).astype(np.float32), rtol=1e-6)


def test_float_tile_divide_keeps_its_dtype_numpy():
    @nki.jit
    def k(a, b):
        out = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        q = nl.divide(nl.load(b), nl.load(a))   # int32 / float32: the float tile's
        assert q.dtype == nl.float32
        nl.store(out, value=q)
        return out
    a = RNG.random((128, 8), np.float32) + 0.5
    b = RNG.integers(-20, 20, (128, 8)).astype(np.int32)
    np.testing.assert_allclose(k(a, b), b / a, rtol=1e-6)


# ---- ops over more than 5 dims (_wide.py) ----

def test_seven_axis_mgrid_arithmetic_numpy():
    """interpolate_trilinear's form: a 7-axis nl.mgrid indexes a 4-D tile
    into 7-dim views; their arithmetic makes 7-dim temporaries, assigned
    through a 7-dim view of another tile."""
    @nki.jit
    def k(a):
        out = nl.ndarray((16, 4, 6, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(a)
        o = nl.ndarray((16, 4, 6, 8), dtype=nl.float32, buffer=nl.sbuf)
        i_p, i_a, i_b, i_c, i_x, i_y, i_z = nl.mgrid[0:16, 0:2, 0:2, 0:2, 0:2, 0:3, 0:4]
        o[i_p, 2 * i_x + i_a, 2 * i_y + i_b, 2 * i_z + i_c] = (
            2.0 * t[i_p, i_x + i_a, i_y + i_b, i_z + i_c] + t[i_p, i_x, i_y, i_z] -
            nl.exp(t[i_p, i_x + 1 - i_a, i_y, i_z + i_c]))
        nl.store(out, value=o)
        return out
    a = RNG.random((16, 3, 4, 5), np.float32)
    want = np.zeros((16, 4, 6, 8), np.float32)
    for ia, ib, ic, ix, iy, iz in np.ndindex(2, 2, 2, 2, 3, 4):
        want[:, 2 * ix + ia, 2 * iy + ib, 2 * iz + ic] = (
            2.0 * a[:, ix + ia, iy + ib, iz + ic] + a[:, ix, iy, iz] -
            np.exp(a[:, ix + 1 - ia, iy, iz + ic]))
    np.testing.assert_allclose(k(a), want, rtol=1e-5, atol=1e-6)


def test_seven_dim_op_with_mask_refused():
    @nki.jit
    def k(a):
        out = nl.ndarray((16, 4, 6, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(a)
        i_p, i_a, i_b, i_c, i_x, i_y, i_z = nl.mgrid[0:16, 0:2, 0:2, 0:2, 0:2, 0:3, 0:4]
        u = nl.exp(t[i_p, i_x + i_a, i_y + i_b, i_z + i_c], mask=(i_p < 8))
        nl.store(out[:, 0, 0, 0], value=u[:, 0, 0, 0, 0, 0, 0])
        return out
    with pytest.raises(NkiError, match="a mask on an op over 7 dims"):
        k(RNG.random((16, 3, 4, 5), np.float32))


def test_grid_axis_unused_by_index_repeats_numpy():
    """`t[i_p, i_x]` over a 3-axis nl.mgrid that the index does not use on
    axis 1 takes the grid's shape and repeats t's element along it (NumPy
    broadcasting; a step of 1 there read the neighbours instead)."""
    @nki.jit
    def k(a):
        out = nl.ndarray((16, 3, 4), dtype=nl.float32, buffer=nl.shared_hbm)
        out2 = nl.ndarray((16, 3, 4), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(a)
        i_p, i_a, i_x = nl.mgrid[0:16, 0:3, 0:4]
        nl.store(out, value=nl.multiply(t[i_p, i_x], 2.0))
        nl.store(out2, value=nl.load(a[i_p, i_x + 1]))
        return out, out2
    a = RNG.random((16, 8), np.float32)
    o, o2 = k(a)
    np.testing.assert_array_equal(o, np.broadcast_to(2 * a[:, None, 0:4], (16, 3, 4)))
    np.testing.assert_array_equal(o2, np.broadcast_to(a[:, None, 1:5], (16, 3, 4)))


# ---- the dtype of an nl op on two tiles (_promote.py) ----

def test_two_tile_promotion_numpy():
    """NKI's type promotion: bfloat16 + float32 is float32 (not rounded to
    bfloat16), float16 * bfloat16 widens to float32, int8 + uint8 widens
    to int16 (300 fits), int32 - float16 is float16."""
    @nki.jit
    def k(a_bf, b32, c16, i8, u8, i32):
        outs = []
        ta, tb, tc = nl.load(a_bf), nl.load(b32), nl.load(c16)
        ti8, tu8, ti32 = nl.load(i8), nl.load(u8), nl.load(i32)
        for v, want in ((nl.add(ta, tb), nl.float32), (nl.multiply(tc, ta), nl.float32),
                        (nl.add(ti8, tu8), nl.int16), (nl.subtract(ti32, tc), nl.float16)):
            assert v.dtype == want, (v.dtype, want)
            o = nl.ndarray(v.shape, dtype=v.dtype, buffer=nl.shared_hbm)
            nl.store(o, value=v)
            outs.append(o)
        return tuple(outs)
    bf = (RNG.integers(-64, 64, (128, 8)) / 8.0).astype(np.float32)   # exact in bfloat16
    b32 = (RNG.random((128, 8)) * 1e-3 + 1.0).astype(np.float32)
    c16 = (RNG.integers(-64, 64, (128, 8)) / 4.0).astype(np.float16)
    i8 = RNG.integers(90, 127, (128, 8)).astype(np.int8)
    u8 = RNG.integers(150, 255, (128, 8)).astype(np.uint8)
    i32 = RNG.integers(-1000, 1000, (128, 8)).astype(np.int32)
    o1, o2, o3, o4 = k(nki.typed(bf, nl.bfloat16), b32, c16, i8, u8, i32)
    np.testing.assert_array_equal(o1, bf + b32)
    np.testing.assert_array_equal(o2, c16.astype(np.float32) * bf)
    np.testing.assert_array_equal(o3, i8.astype(np.int16) + u8)
    np.testing.assert_array_equal(o4, (i32 - c16.astype(np.float32)).astype(np.float16))


def test_nl_range_loops_in_order_numpy():
    """nl.range (the NKI Library's mxfp_load_utils loops with it; NKI's API
    reference does not list it): a loop in program order, as
    sequential_range; outside a kernel a plain range."""
    assert list(nl.range(2, 8, 3)) == [2, 5]

    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        acc = nl.ndarray((128, 16), dtype=a.dtype, buffer=nl.sbuf)
        nisa.memset(dst=acc, value=0.0)
        for i in nl.range(a.shape[1] // 16):
            t = nl.ndarray((128, 16), dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a[:, i * 16:(i + 1) * 16])
            nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
            nisa.dma_copy(dst=out[:, i * 16:(i + 1) * 16], src=acc)
        return out
    a = RNG.random((128, 64), np.float32)
    want = np.cumsum(a.reshape(128, 4, 16), axis=1).reshape(128, 64)
    np.testing.assert_allclose(k(a), want, rtol=1e-6)
