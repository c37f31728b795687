"""Call forms of nki-samples' kernels (contributed/, tutorials, the reference
kernels removed in c4b806e) that tpbsim runs unchanged: each checked
against NumPy (scripts/nki-samples-misc runs the kernels themselves)."""
import numpy as np
import pytest

from tpbsim import NkiError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(11)


def test_program_id_in_index_expression_numpy():
    """The SPMD tutorial's `nl.program_id(0) * 128 + nl.arange(128)[:, None]`."""
    @nki.jit
    def add(a, b):
        c = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        ix = nl.program_id(0) * 128 + nl.arange(128)[:, None]
        iy = nl.program_id(1) * 64 + nl.arange(64)[None, :]
        nl.store(c[ix, iy], value=nl.load(a[ix, iy]) + nl.load(b[ix, iy]))
        return c
    a, b = RNG.random((256, 128), np.float32), RNG.random((256, 128), np.float32)
    np.testing.assert_allclose(add[2, 2](a, b), a + b, rtol=1e-6)


def test_numpy_ints_in_indexes_numpy():
    """np.int32 / np.int64 offsets (adaptive avg pool's window starts) in
    index expressions and slices are ints."""
    starts = np.array([1, 3], np.int32)

    @nki.jit
    def k(x):
        out = nl.ndarray((128, 2, 2), dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 2, 2), dtype=x.dtype, buffer=nl.sbuf)
        for j in nl.static_range(2):
            s = starts[j]
            t[:, j, :] = nl.load(x[:, s:s + 2])
        i_p, i_f = nl.mgrid[0:128, 0:2]
        nl.store(out[i_p, 0, i_f + np.int64(0) * 1], value=t[:, 0, :])
        nl.store(out[:, 1, :], value=t[:, 1, :])
        return out
    x = RNG.random((128, 8), np.float32)
    np.testing.assert_array_equal(k(x), np.stack([x[:, 1:3], x[:, 3:5]], 1))


def test_load_mask_partial_tile_numpy():
    """interpolate_bilinear's masked load and store of a last partial
    128-row tile (the index runs past the tensor's end where the mask
    excludes it), and a returned reshape of the output."""
    @nki.jit
    def k(x):
        n, f = x.shape
        out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
        for p in nl.affine_range((n + 127) // 128):
            i_p, i_f = nl.mgrid[0:128, 0:f]
            i_p = p * 128 + i_p
            t = nl.load(x[i_p, i_f], mask=(i_p < n))
            assert t.shape == (128, f)
            u = nl.multiply(t, 2.0)
            nl.store(out[i_p, i_f], value=u, mask=(i_p < n))
        return out.reshape((n // 5, 5, f))
    x = RNG.random((200, 6), np.float32)
    np.testing.assert_array_equal(k(x), (2 * x).reshape(40, 5, 6))


def test_dma_copy_mask_numpy():
    """adaptive_avg_pool2d's nisa.dma_copy(..., mask=(i_p < N * C) & ...)."""
    @nki.jit
    def k(x):
        n = x.shape[0]
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(2):
            i_p = nl.arange(128)[:, None] + i * 128
            t = nl.ndarray((128, 4), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :], mask=(i_p < n))
            nl.store(out[i * 128:(i + 1) * 128, :], value=t, mask=(i_p < n))
        return out
    x = RNG.random((160, 4), np.float32)
    np.testing.assert_array_equal(k(x), x)


def test_reduce_mask_and_axes_numpy():
    """nl.sum / nl.max with mask=: a comparison that holds everywhere is
    dropped, one on a kept axis masks dst; negative axes; a reduction over
    one element is a copy."""
    @nki.jit
    def k(x):
        out = nl.ndarray((128, 2), dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        r = nl.full((128, 2), -1.0, dtype=x.dtype, buffer=nl.sbuf)
        i_p, i_h, i_w = nl.mgrid[0:128, 0:3, 0:4]
        r[:, 0] = nl.sum(t, axis=[-2, -1], mask=(i_h < 3) & (i_w < 9))
        r[:, 1] = nl.max(t[:, 0:1, 0:1], axis=[1, 2], mask=(i_p < 100))
        nl.store(out, r)
        return out
    x = RNG.random((128, 3, 4), np.float32)
    want = np.stack([x.sum(axis=(1, 2)), np.where(np.arange(128) < 100, x[:, 0, 0], -1.0)], 1)
    np.testing.assert_allclose(k(x), want, rtol=1e-5)


def test_reduce_mask_on_reduced_axis_numpy():
    """A bound on a reduced axis reduces over the indices it keeps (NKI: the
    mask bounds the input's indices); a comparison joining a reduced axis
    and a kept one raises."""
    @nki.jit
    def k(x):
        out = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:128, 0:8]
        nl.store(out, nl.sum(nl.load(x), axis=[1], keepdims=True, mask=(i_f < 4)))
        return out
    x = RNG.random((128, 8), np.float32)
    np.testing.assert_allclose(k(x)[:, 0], x[:, :4].sum(1), rtol=1e-5)

    @nki.jit
    def bad(x):
        out = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:128, 0:8]
        nl.store(out, nl.sum(nl.load(x), axis=[1], keepdims=True, mask=(i_f < i_p)))
        return out
    with pytest.raises(NkiError, match="nl.sum: argument 'mask': only bounds on one index"):
        bad(x)


def test_finfo():
    assert nl.finfo(nl.float32).max == np.finfo(np.float32).max
    assert nl.finfo(np.float16).min == float(np.finfo(np.float16).min)
    assert nl.finfo(nl.bfloat16).max == (2 - 2 ** -7) * 2.0 ** 127
    assert nl.finfo(nl.float8_e4m3fn).max == 448.0
    with pytest.raises(NkiError, match="not a float dtype"):
        nl.finfo(nl.int32)


def test_tensor_copy_dtype_with_dst_numpy():
    """nki-samples' `nisa.tensor_copy(dst=t, src=p, dtype=t.dtype)`: dtype=
    must be dst's; another raises."""
    @nki.jit
    def k(x, dt):
        out = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
        t = nl.load(x)
        s = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.tensor_copy(dst=s, src=t, dtype=dt)
        nl.store(out, s)
        return out
    x = np.array([[1.0, 2.0], [3.0, 5.0]], np.float32)
    np.testing.assert_array_equal(k(x, nl.bfloat16), x)
    with pytest.raises(NkiError, match="differs from dst's dtype bfloat16"):
        k(x, nl.float32)


def test_tensor_tensor_broadcast_column_numpy():
    """The double_row matmul's beta-1 `nisa.tensor_tensor(t [P, F], s [P, 1],
    nl.multiply)`: s is read with a free step of 0 (either side)."""
    @nki.jit
    def k(x, s):
        out = nl.ndarray((2,) + x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t, c = nl.load(x), nl.load(s)
        nl.store(out[0], nisa.tensor_tensor(t, c, nl.multiply))
        nl.store(out[1], nisa.tensor_tensor(c, t, nl.subtract))
        return out
    x, s = RNG.random((128, 64), np.float32), RNG.random((128, 1), np.float32)
    np.testing.assert_allclose(k(x, s), np.stack([x * s, s - x]), rtol=1e-6)


def test_mgrid_dense_iota_numpy():
    """nl.mgrid is dense (NumPy's): iota of an expression in some of its
    indices fills the whole grid (select_and_scatter's window indices)."""
    @nki.jit
    def k():
        out = nl.ndarray((128, 2, 3, 3), dtype=nl.uint32, buffer=nl.shared_hbm)
        w = nl.mgrid[0:128, 0:2, 0:3, 0:3]
        nl.store(out, nisa.iota(3 * w.y + w.z, dtype=nl.uint32))
        return out
    want = np.broadcast_to((3 * np.arange(3)[:, None] + np.arange(3)).astype(np.uint32),
                           (128, 2, 3, 3))
    np.testing.assert_array_equal(k(), want)


def test_returned_part_refused():
    @nki.jit
    def k(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(x))
        return out[0:64]
    with pytest.raises(NkiError, match="returns a part of"):
        k(RNG.random((128, 4), np.float32))


def test_masked_load_index_past_end_numpy():
    """maxpooling.py's `nl.load(x[i_h + i_kh, i_w], mask=(i_h < h - 2))`: the
    access pattern of the last tile leaves x, the mask keeps it inside; the
    same view without the mask is an error."""
    @nki.jit
    def k(x, masked):
        h, w = x.shape
        out = nl.ndarray((h - 2, w - 2), dtype=x.dtype, buffer=nl.shared_hbm)
        for t in nl.affine_range((h + 127) // 128):
            i_h, i_kh, i_w = nl.mgrid[0:128, 0:3, 0:w]
            i_h = t * 128 + i_h
            v = x[i_h + i_kh, i_w]
            tile = nl.load(v, mask=(i_h < h - 2)) if masked else nl.load(v)
            i_p, j_kh, i_f, i_kw = nl.mgrid[0:128, 0:3, 0:w - 2, 0:3]
            m = nl.max(tile[i_p, j_kh, i_f + i_kw], axis=[1, 3], mask=(t * 128 + i_p < h))
            o_h, o_w = nl.mgrid[0:128, 0:w - 2]
            o_h = t * 128 + o_h
            nl.store(out[o_h, o_w], value=m, mask=(o_h < h - 2))
        return out
    x = RNG.random((150, 12), np.float32)
    want = np.lib.stride_tricks.sliding_window_view(x, (3, 3)).max(axis=(2, 3))
    np.testing.assert_array_equal(k(x, True), want)
    with pytest.raises(NkiError, match="spans 128..257, outside 0..149"):
        k(x, False)


def test_pipelined_attention_forms_numpy():
    """pipelined_attention.py's `nisa.tensor_reduce(np.sum, ...)` (an add),
    `nl.affine_range(n, precise_schedule=True)` (a hint) and
    `nl.loop_reduce(..., name=)`; and a `[k, i, ix, iy]` index with loop
    variables before the grid axes (tutorial.py's add)."""
    @nki.jit
    def k(x):
        out = nl.ndarray((2, 128, 1), dtype=x.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(2, precise_schedule=True):
            ix, iy = nl.mgrid[0:128, 0:8]
            t = nl.load(x[i, 0, ix, iy])
            acc = nl.zeros((128, 1), dtype=x.dtype, buffer=nl.sbuf)
            for j in nl.affine_range(1):
                acc[...] = nl.loop_reduce(nisa.tensor_reduce(np.sum, t, axis=(1,), keepdims=True),
                                          np.add, loop_indices=[j], name="acc")
            nl.store(out[i], acc)
        return out
    x = RNG.random((2, 1, 128, 8), np.float32)
    np.testing.assert_allclose(k(x), x[:, 0].sum(-1, keepdims=True), rtol=1e-5)


def test_mx_x4_dtype_refused():
    """A tile of a trn3 packed MX dtype is no number: a memset of one to
    anything but 0 (NKI's only value for x4 types) is refused, and so is an
    engine reading one as numbers (only the MX instructions and DMA take
    quads: test_mx_quad.py)."""
    @nki.jit
    def k(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 4), dtype=nl.float8_e5m2_x4, buffer=nl.sbuf)
        nisa.memset(dst=t, value=0)
        u = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=u, src=t)
        nl.store(out, nl.load(x))
        return out
    with pytest.raises(Exception, match="operand 'in': packed MX dtype fp8e5m2x4 is taken "
                                        "only by QuantizeMX out"):
        k(RNG.random((128, 4), np.float32))


def test_gather_3d_masked_numpy():
    """resize_nearest's `nl.load(data.reshape((B, S, C))[b, idx_tile, i_f],
    mask=(i_p < n))`: an indirect row access after an integer index, and a
    mask that keeps the first n partitions (the other index rows, out of
    range here, are not read)."""
    @nki.jit
    def k(x, idx):
        B, H, W, C = x.shape
        out = nl.ndarray((B, 100, C), dtype=x.dtype, buffer=nl.shared_hbm)
        x3 = x.reshape((B, H * W, C))
        t = nl.load(idx)
        i_p, i_f = nl.arange(128)[:, None], nl.arange(C)[None, :]
        for b in nl.affine_range(B):
            g = nl.load(x3[b, t, i_f], mask=(i_p < 100))
            nl.store(out[b, i_p, i_f], value=g, mask=(i_p < 100))
        return out
    x = RNG.random((2, 3, 2, 4), np.float32)
    idx = np.full((128, 1), 1000, np.int32)
    idx[:100, 0] = RNG.integers(0, 6, 100)
    np.testing.assert_array_equal(k(x, idx), x.reshape(2, 6, 4)[:, idx[:100, 0]])


def test_indirect_view_part_refused():
    """A part of a gather other than its first partitions is an error, never
    a plain view of the indexed tensor."""
    @nki.jit
    def k(x, idx):
        out = nl.ndarray((128, 2), dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(x[nl.load(idx), 0:4][:, 0:2]))
        return out
    with pytest.raises(NkiError, match="a part .* of an indirect"):
        k(RNG.random((8, 4), np.float32), np.zeros((128, 1), np.int32))
