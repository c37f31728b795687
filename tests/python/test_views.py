"""NKI 0.x tensor view methods (permute, broadcast, expand_dim, squeeze_dim,
reshape_dim, flatten_dims, reshape, rearrange, slice, select,
vector_select, view, the layout queries) through real kernels on HBM and
SBUF operands, checked against NumPy's own views of the same data
(np.transpose, np.broadcast_to, np.expand_dims, reshape, ...), and the
refusals (docs/python.md "NKI 0.x tensor views")."""
import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


def _arange(shape, dtype=np.float32):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def hbm_read(view_fn, a):
    """dma_copy of view_fn(a) (an HBM view) into a new HBM output."""
    def k(a):
        v = view_fn(a)
        out = nl.ndarray(v.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=v)
        return out
    return nki.jit(k)(a)


def hbm_to_sbuf(view_fn, a):
    """dma_copy of an HBM view into an SBUF tile of its shape, then out."""
    def k(a):
        v = view_fn(a)
        t = nl.ndarray(v.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=v)
        out = nl.ndarray(v.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out
    return nki.jit(k)(a)


def sbuf_read(view_fn, a, via="tensor_copy"):
    """a loaded into an SBUF tile of a's shape; view_fn(tile) read by a
    compute op (tensor_copy / tensor_scalar +0 / tensor_tensor with
    itself) into a tile of the view's shape, or DMA'd straight out
    (via="dma")."""
    def k(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        v = view_fn(t)
        out = nl.ndarray(v.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        if via == "dma":
            nisa.dma_copy(dst=out, src=v)
            return out
        u = nl.ndarray(v.shape, dtype=a.dtype, buffer=nl.sbuf)
        if via == "tensor_copy":
            nisa.tensor_copy(dst=u, src=v)
        elif via == "tensor_scalar":
            nisa.tensor_scalar(dst=u, data=v, op0=nl.add, operand0=0.0)
        else:
            nisa.tensor_tensor(dst=u, data1=v, data2=v, op=nl.maximum)
        nisa.dma_copy(dst=out, src=u)
        return out
    return nki.jit(k)(a)


def sbuf_write(view_fn, a, fill):
    """A tile of a's shape zeroed, then fill (an HBM input of the view's
    shape) tensor_copy'd into view_fn(tile); the tile comes out whole."""
    def k(a, fill):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.memset(dst=t, value=0.0)
        v = view_fn(t)
        f = nl.ndarray(v.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=f, src=fill)
        nisa.tensor_copy(dst=v, src=f)
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out
    return nki.jit(k)(a, fill)


def refused(view_fn, a, match, buffer=nl.sbuf):
    def k(a):
        t = a
        if buffer != nl.shared_hbm:
            t = nl.ndarray(a.shape, dtype=a.dtype, buffer=buffer)
            nisa.dma_copy(dst=t, src=a)
        view_fn(t)
        out = nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
        return out
    with pytest.raises(tpbsim.NkiError, match=match):
        nki.jit(k)(a)


# ---- reshape_dim ----

def test_reshape_dim_hbm():
    a = _arange((6, 24))
    np.testing.assert_array_equal(hbm_read(lambda x: x.reshape_dim(1, (4, -1)), a),
                                  a.reshape(6, 4, 6))
    np.testing.assert_array_equal(hbm_read(lambda x: x.reshape_dim(0, [2, 3]), a),
                                  a.reshape(2, 3, 24))
    # a strided slice first: the split keeps its step
    np.testing.assert_array_equal(hbm_read(lambda x: x[1:5, ::2].reshape_dim(1, (3, 4)), a),
                                  a[1:5, ::2].reshape(4, 3, 4))


def test_reshape_dim_sbuf():
    a = _arange((128, 24))
    for via in ("tensor_copy", "tensor_scalar", "dma"):
        np.testing.assert_array_equal(sbuf_read(lambda t: t.reshape_dim(1, (4, 6)), a, via),
                                      a.reshape(128, 4, 6))
    # the partition dim "reshaped" into itself (NKI's trivial case)
    np.testing.assert_array_equal(sbuf_read(lambda t: t.reshape_dim(0, (-1,)), a), a)


def test_reshape_dim_as_dst():
    a = np.zeros((128, 24), np.float32)
    fill = _arange((128, 6, 4))
    want = a.copy()
    want.reshape(128, 4, 6).transpose(0, 2, 1)[...] = fill
    np.testing.assert_array_equal(
        sbuf_write(lambda t: t.reshape_dim(1, (4, 6)).permute((0, 2, 1)), a, fill), want)


# ---- expand_dim / squeeze_dim ----

def test_expand_dim():
    a = _arange((4, 8))
    for d in (0, 1, 2, -1):
        np.testing.assert_array_equal(hbm_read(lambda x: x.expand_dim(d), a),
                                      np.expand_dims(a, d))
    s = _arange((128, 8))
    np.testing.assert_array_equal(sbuf_read(lambda t: t.expand_dim(1), s), s[:, None, :])
    np.testing.assert_array_equal(sbuf_read(lambda t: t.expand_dim(2), s, "tensor_tensor"),
                                  s[:, :, None])


def test_squeeze_dim():
    a = _arange((4, 1, 8))
    np.testing.assert_array_equal(hbm_read(lambda x: x.squeeze_dim(1), a), a[:, 0, :])
    s = _arange((128, 1, 16))
    np.testing.assert_array_equal(sbuf_read(lambda t: t.squeeze_dim(1), s), s[:, 0, :])
    np.testing.assert_array_equal(
        sbuf_read(lambda t: t.expand_dim(3).squeeze_dim(1).squeeze_dim(-1), s), s[:, 0, :])


# ---- broadcast ----

def test_broadcast_sbuf():
    s = _arange((128, 64))
    np.testing.assert_array_equal(
        sbuf_read(lambda t: t.expand_dim(1).broadcast(1, 8), s),
        np.broadcast_to(s[:, None, :], (128, 8, 64)))
    c = _arange((128, 1))
    np.testing.assert_array_equal(
        sbuf_read(lambda t: t.broadcast(1, 32), c, "tensor_tensor"),
        np.broadcast_to(c, (128, 32)))


def test_broadcast_hbm_partitions():
    """An HBM row broadcast over dim 0: one DMA into 128 partitions."""
    r = _arange((1, 64))
    np.testing.assert_array_equal(hbm_to_sbuf(lambda x: x.broadcast(0, 128), r),
                                  np.broadcast_to(r, (128, 64)))
    v = _arange((64,))
    np.testing.assert_array_equal(
        hbm_to_sbuf(lambda x: x.expand_dim(0).broadcast(0, 16), v),
        np.broadcast_to(v[None, :], (16, 64)))


def test_broadcast_chain_library_form():
    """attention_tkg's form: reshape_dim(1, [1, 1, 1, 1]) of a [P, 1] tile,
    then broadcast dims 2 and 4."""
    c = _arange((128, 1))
    np.testing.assert_array_equal(
        sbuf_read(lambda t: t.reshape_dim(1, [1, 1, 1, 1]).broadcast(2, 3).broadcast(4, 5), c),
        np.broadcast_to(c.reshape(128, 1, 1, 1, 1), (128, 1, 3, 1, 5)))


# ---- permute ----

def test_permute_hbm():
    a = _arange((4, 8, 16))
    for dims in ((2, 0, 1), (1, 0, 2), (0, 2, 1), [2, 1, 0]):
        np.testing.assert_array_equal(hbm_read(lambda x: x.permute(dims), a),
                                      np.transpose(a, dims))
    b = _arange((16, 128))
    np.testing.assert_array_equal(hbm_to_sbuf(lambda x: x.permute((1, 0)), b), b.T)


def test_permute_sbuf():
    s = _arange((128, 4, 8))
    for via in ("tensor_copy", "tensor_scalar", "dma"):
        np.testing.assert_array_equal(sbuf_read(lambda t: t.permute((0, 2, 1)), s, via),
                                      np.transpose(s, (0, 2, 1)))
    # the language guide's composition example
    np.testing.assert_array_equal(
        sbuf_read(lambda t: t[0:64, :, :].permute((0, 2, 1))[:, 0, :], _arange((128, 4, 16))),
        _arange((128, 4, 16))[0:64].transpose(0, 2, 1)[:, 0, :])


def test_permute_loop_variable_offsets():
    """Views of a loop-variable slice (a traced-once affine_range body)."""
    a = _arange((4, 64, 8))

    def k(a):
        out = nl.ndarray((4, 8, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(4):
            t = nl.ndarray((8, 64), dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a.select(0, i).permute((1, 0)))
            nisa.dma_copy(dst=out[i], src=t)
        return out
    np.testing.assert_array_equal(nki.jit(k)(a), a.transpose(0, 2, 1))


# ---- flatten_dims / reshape ----

def test_flatten_dims():
    a = _arange((2, 3, 4, 5))
    np.testing.assert_array_equal(hbm_read(lambda x: x.flatten_dims(1, 2), a),
                                  a.reshape(2, 12, 5))
    np.testing.assert_array_equal(hbm_read(lambda x: x.flatten_dims(0, 3), a), a.reshape(120))
    s = _arange((128, 2, 3, 4))
    np.testing.assert_array_equal(sbuf_read(lambda t: t.flatten_dims(1, 3), s),
                                  s.reshape(128, 24))
    # size-1 and broadcast dims merge with their neighbours
    c = _arange((128, 4))
    np.testing.assert_array_equal(
        sbuf_read(lambda t: t.expand_dim(1).broadcast(1, 3).expand_dim(1).broadcast(1, 2)
                  .flatten_dims(1, 2)[:, :, 0:4], c),
        np.broadcast_to(c[:, None, :], (128, 6, 4)))
    # norm_tkg_utils' HBM chain: reshape_dim, flatten_dims(0, 1), expand_dim x2
    h = _arange((4, 12))
    np.testing.assert_array_equal(
        hbm_read(lambda x: x.reshape_dim(1, [3, 4]).flatten_dims(0, 1).expand_dim(1)
                 .expand_dim(1), h),
        h.reshape(12, 4)[:, None, None, :])


def test_reshape_strided_views():
    """reshape of a non-C-contiguous view: on a tile the free dims of each
    partition (t[:, 0:32] of a [128, 64] tile), on HBM whatever NumPy
    reshapes without a copy."""
    s = _arange((128, 64))
    np.testing.assert_array_equal(sbuf_read(lambda t: t[:, 0:32].reshape((128, 4, 8)), s),
                                  s[:, 0:32].reshape(128, 4, 8))
    np.testing.assert_array_equal(sbuf_read(lambda t: t[:, ::2].reshape((128, 2, 16)), s, "dma"),
                                  s[:, ::2].reshape(128, 2, 16))
    a = _arange((6, 8, 10))
    np.testing.assert_array_equal(hbm_read(lambda x: x[:, 2:6, :].reshape((3, 2, 4, 10)), a),
                                  a[:, 2:6, :].reshape(3, 2, 4, 10))
    np.testing.assert_array_equal(hbm_read(lambda x: x.reshape((-1, 10)), a), a.reshape(48, 10))
    np.testing.assert_array_equal(
        hbm_read(lambda x: x.permute((2, 0, 1)).reshape((10, 48)), a),
        a.transpose(2, 0, 1).reshape(10, 48))


# ---- rearrange ----

def test_rearrange():
    s = _arange((128, 24))
    np.testing.assert_array_equal(
        sbuf_read(lambda t: t.rearrange(('b', ('h', 'w')), ('b', 'w', 'h'), {'h': 4}), s),
        s.reshape(128, 4, 6).transpose(0, 2, 1))
    a = _arange((4, 8))
    np.testing.assert_array_equal(
        hbm_read(lambda x: x.rearrange(('x', ('a', 'b')), (('x', 'a'), 'b'), {'a': 2}), a),
        a.reshape(8, 4))
    np.testing.assert_array_equal(
        hbm_read(lambda x: x.rearrange((('a', 'b'), 'c'), ('c', 'b', (), 'a'), {'b': 2}), a),
        a.reshape(2, 2, 8).transpose(2, 1, 0)[:, :, None, :])
    # transformer_tkg's form on an SBUF tile: ('h0', ('h1', 'bs')) -> ('h0', 'bs', 'h1')
    g = _arange((16, 12))
    np.testing.assert_array_equal(
        sbuf_read(lambda t: t.rearrange(('h0', ('h1', 'bs')), ('h0', 'bs', 'h1'), {'h1': 3}), g),
        g.reshape(16, 3, 4).transpose(0, 2, 1))


# ---- slice / select / vector_select / view ----

def test_slice_select():
    a = _arange((8, 16, 4))
    np.testing.assert_array_equal(hbm_read(lambda x: x.slice(1, 2, 14, 3).select(2, 1), a),
                                  a[:, 2:14:3, 1])
    s = _arange((128, 8, 4))
    np.testing.assert_array_equal(sbuf_read(lambda t: t.select(1, 5).slice(0, 64, 128), s, "dma"),
                                  s[64:128, 5, :])
    # a partition index keeps the partition dim, at size 1
    np.testing.assert_array_equal(sbuf_read(lambda t: t.select(0, 7), s, "dma"), s[7:8])


def test_vector_select():
    a = _arange((64, 32))
    idx = np.array([(7 * p) % 64 for p in range(128)], np.int32).reshape(128, 1)

    def k(a, idx):
        i = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=i, src=idx)
        v = a.vector_select(0, i)
        assert v.is_indirect() and not a.is_indirect() and v.shape == (128, 32)
        t = nl.ndarray((128, 32), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=v)
        out = nl.ndarray((128, 32), dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out
    np.testing.assert_array_equal(nki.jit(k)(a, idx), a[idx[:, 0]])


def test_view_same_dtype():
    a = _arange((4, 8))
    np.testing.assert_array_equal(hbm_read(lambda x: x.view(nl.float32).reshape_dim(1, (2, 4)),
                                           a), a.reshape(4, 2, 4))


# ---- queries ----

def test_queries():
    seen = {}

    def k(a):
        t = nl.ndarray((128, 4, 6), dtype=a.dtype, buffer=nl.sbuf)
        p = t.permute((0, 2, 1))
        seen.update(
            t=(t.is_contiguous(), t.get_pattern(), t.strides, t.size, t.is_indirect()),
            part=t[0:64].is_contiguous(), free=t[:, :, 1:3].is_contiguous(),
            rows=t[:, 1:3].is_contiguous(),
            p=(p.is_contiguous(), p.get_pattern(), p.strides),
            b=t.reshape_dim(2, (6, 1)).broadcast(3, 5).get_pattern(),
            h=(a.is_contiguous(), a[1:3].is_contiguous(), a[:, 0:4].is_contiguous(),
               a.flatten_dims(0, 1).get_pattern()),
            r=t.reshape((128, 24)).get_pattern())
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=a)
        return out
    nki.jit(k)(_arange((8, 16)))
    assert seen["t"] == (True, [[24, 128], [6, 4], [1, 6]], (24, 6, 1), 128 * 24, False)
    assert seen["part"] is True and seen["free"] is False and seen["rows"] is True
    assert seen["p"] == (False, [[24, 128], [1, 6], [6, 4]], (24, 1, 6))
    assert seen["b"] == [[24, 128], [6, 4], [1, 6], [0, 5]]
    assert seen["h"] == (True, True, False, [[1, 128]])
    assert seen["r"] == [[24, 128], [1, 24]]


# ---- refusals: NKI's argument checks, and what tpbsim cannot express ----

@pytest.mark.parametrize("fn, match", [
    (lambda t: t.permute((1, 0, 2)), r"permute\(\(1, 0, 2\)\).*dims\[0\] must be 0"),
    (lambda t: t.permute((0, 1)), r"permutation of 0\.\.2"),
    (lambda t: t.permute((0, 1, 1)), r"permutation of 0\.\.2"),
    (lambda t: t.broadcast(1, 4), r"broadcast\(1, 4\).*dim 1 has size 4"),
    (lambda t: t[0:1].broadcast(0, 4), r"broadcast\(0, 4\).*partition dim"),
    (lambda t: t.expand_dim(0), r"expand_dim\(0\).*partition dim"),
    (lambda t: t.expand_dim(4), r"expand_dim\(4\).*out of range"),
    (lambda t: t.squeeze_dim(2), r"squeeze_dim\(2\).*only a size-1 dim"),
    (lambda t: t.reshape_dim(1, (3, 2)), r"reshape_dim.*product of \[3, 2\] is not 4"),
    (lambda t: t.reshape_dim(1, (-1, -1)), r"only one size may be -1"),
    (lambda t: t.reshape_dim(2, (4, 5)), r"product of \[4, 5\] is not 6"),
    (lambda t: t.reshape_dim(0, (2, 64)), r"reshape_dim.*partition dim"),
    (lambda t: t.reshape_dim(1, (2, 2.5)), r"shape must be an integer, got 2.5"),
    (lambda t: t.flatten_dims(0, 1), r"flatten_dims\(0, 1\).*partition dim"),
    (lambda t: t.flatten_dims(2, 1), r"start_dim must not be after end_dim"),
    (lambda t: t.permute((0, 2, 1)).flatten_dims(1, 2), r"not contiguous in memory"),
    (lambda t: t.reshape((64, 48)), r"reshape.*shape\[0\] must be 128"),
    (lambda t: t.permute((0, 2, 1)).reshape((128, 24)), r"without a copy"),
    (lambda t: t.reshape((128, 5)), r"cannot reshape"),
    (lambda t: t.select(2, 0).rearrange(('p', ('a', 'b')), ('p', 'b', 'a')),
     r"only one size may be -1"),
    (lambda t: t.rearrange(('p', 'a', 'b'), ('a', 'p', 'b')), r"dims\[0\] must be 0"),
    (lambda t: t.rearrange(('p', 'a', 'b'), ('p', 'a', 'c')), r"name the same dims"),
    (lambda t: t.rearrange(('p', 'a'), ('p', 'a')), r"src_pattern has 2 dims, the view 3"),
    (lambda t: t.slice(1, 0, 5), r"slice\(1, 0, 5, 1\).*start < end <= 4"),
    (lambda t: t.slice(2, 3, 3), r"start < end"),
    (lambda t: t.slice(2, 0, 6, 0), r"step must be >= 1"),
    (lambda t: t.select(1, 4), r"select\(1, 4\).*index < 4"),
    (lambda t: t.select(1, t[:, 0:1, 0]), r"run-time index on an SBUF/PSUM tile"),
    (lambda t: t.vector_select(0, t[:, 0, 0:1]), r"only an HBM tensor"),
    (lambda t: t[:, :, 0:6:2].view(nl.int32), r"view\(int32\).*last dim must be contiguous"),
    (lambda t: t.reinterpret_cast(nl.bfloat16)[:, :, 1:5].view(nl.float32),
     r"view\(float32\).*starts at byte 2"),
    (lambda t: t.indirect(t[:, 0, 0:1]), r"indirect\(\).*not supported"),
])
def test_refused_sbuf(fn, match):
    refused(fn, _arange((128, 4, 6)), match)


@pytest.mark.parametrize("fn, match", [
    (lambda x: x.permute((1, 0, 2)).flatten_dims(0, 1), r"not contiguous in memory"),
    (lambda x: x[:, :, 0:3].flatten_dims(1, 2), r"not contiguous in memory"),
    (lambda x: x.permute((2, 1, 0)).reshape((24, 4)), r"without a copy"),
    (lambda x: x.vector_select(1, x), r"dim must be 0"),
    (lambda x: x.squeeze_dim(0).squeeze_dim(0), r"size 4; only a size-1"),
    (lambda x: x.select(0, 1).select(0, 1).squeeze_dim(0), r"only a size-1"),
    (lambda x: x.broadcast(0, -2), r"size must be >= 1"),
])
def test_refused_hbm(fn, match):
    refused(fn, _arange((4, 4, 6)), match, nl.shared_hbm)


def test_vector_select_needs_rows():
    a = _arange((8, 4, 6))

    def k(a):
        i = nl.ndarray((4, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.memset(dst=i, value=0)
        a.vector_select(0, i)
        return nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    with pytest.raises(tpbsim.NkiError, match="2-D HBM view"):
        nki.jit(k)(a)


def test_views_of_views_keep_storage():
    """Writes through one chain of views read back through another."""
    a = np.zeros((128, 24), np.float32)
    fill = _arange((128, 6, 2, 2))
    want = a.copy()
    want.reshape(128, 2, 2, 6).transpose(0, 3, 1, 2)[...] = fill
    got = sbuf_write(lambda t: t.rearrange(('p', ('a', 'b', 'c')), ('p', 'c', 'a', 'b'),
                                           {'a': 2, 'b': 2}), a, fill)
    np.testing.assert_array_equal(got, want)


def test_psum_views():
    """A PSUM tile written through a permuted view, read back through
    flatten_dims."""
    fill = _arange((128, 6, 4))

    def k(fill):
        f = nl.ndarray((128, 6, 4), dtype=fill.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=f, src=fill)
        p = nl.ndarray((128, 4, 6), dtype=nl.float32, buffer=nl.psum)
        nisa.tensor_copy(dst=p.permute((0, 2, 1)), src=f)
        u = nl.ndarray((128, 24), dtype=fill.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=u, src=p.flatten_dims(1, 2))
        out = nl.ndarray((128, 24), dtype=fill.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=u)
        return out
    np.testing.assert_array_equal(nki.jit(k)(fill), fill.transpose(0, 2, 1).reshape(128, 24))


def test_block_dim_tiles():
    """A block of a block-dim tile takes every view; the view keeping the
    block dims is refused (tpbsim takes one block per operand)."""
    a = _arange((2, 128, 24))

    def k(a):
        t = nl.ndarray((2, nl.par_dim(128), 24), dtype=a.dtype, buffer=nl.sbuf)
        out = nl.ndarray((2, 128, 6, 4), dtype=a.dtype, buffer=nl.shared_hbm)
        for b in range(2):
            nisa.dma_copy(dst=t[b], src=a[b])
            nisa.dma_copy(dst=out[b], src=t[b].reshape_dim(1, (4, 6)).permute((0, 2, 1)))
        return out
    np.testing.assert_array_equal(nki.jit(k)(a), a.reshape(2, 128, 4, 6).transpose(0, 1, 3, 2))

    def k2(a):
        t = nl.ndarray((2, nl.par_dim(128), 24), dtype=a.dtype, buffer=nl.sbuf)
        t.reshape_dim(2, (4, 6))
        return a
    with pytest.raises(tpbsim.NkiError, match=r"reshape_dim.*keeps block dims"):
        nki.jit(k2)(a)


# ---- run-time selects: select(dim, tensor), .ap(scalar_offset=) ----

def _dyn_kernel(view_fn, out_shape, store=False):
    def k(a, idx):
        i = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=i, src=idx)
        if store:   # the tile written into a run-time selected part of out
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=out, src=a)
            v = view_fn(out, i)
            t = nl.ndarray(v.shape, dtype=a.dtype, buffer=nl.sbuf)
            nisa.memset(dst=t, value=-1.0)
            nisa.dma_copy(dst=v, src=t)
            return out
        v = view_fn(a, i)
        assert v.is_indirect() and v.shape == out_shape
        t = nl.ndarray(v.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=v)
        out = nl.ndarray(v.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out
    return nki.jit(k)


def test_dynamic_select_load():
    a = _arange((4, 128, 64))
    k = _dyn_kernel(lambda x, i: x.select(0, i), (128, 64))
    for v in (0, 3, 2):
        np.testing.assert_array_equal(k(a, np.array([[v]], np.int32)), a[v])
    # a middle dim, then a slice of the selected view
    k2 = _dyn_kernel(lambda x, i: x.select(1, i)[:, 8:40], (4, 32))
    np.testing.assert_array_equal(k2(a, np.array([[77]], np.int32)), a[:, 77, 8:40])
    # permute / reshape_dim of the selected view keep the run-time index
    k3 = _dyn_kernel(lambda x, i: x.select(0, i).reshape_dim(1, (8, 8)).permute((0, 2, 1)),
                     (128, 8, 8))
    np.testing.assert_array_equal(k3(a, np.array([[1]], np.int32)),
                                  a[1].reshape(128, 8, 8).transpose(0, 2, 1))


def test_dynamic_select_store():
    a = _arange((4, 128, 64))
    k = _dyn_kernel(lambda x, i: x.select(0, i), None, store=True)
    want = a.copy()
    want[2] = -1
    np.testing.assert_array_equal(k(a, np.array([[2]], np.int32)), want)


def test_ap_scalar_offset():
    """The deep dive's example: .ap(pattern, offset, scalar_offset=idx,
    indirect_dim=0) starts at offset + idx * prod(shape[1:])."""
    a = _arange((512, 512))
    k = _dyn_kernel(lambda x, i: x.ap(pattern=[[512, 128], [1, 256]], offset=0,
                                      scalar_offset=i, indirect_dim=0), (128, 256))
    np.testing.assert_array_equal(k(a, np.array([[3 * 128]], np.int32)), a[384:512, 0:256])
    b = _arange((8, 16, 32))
    k2 = _dyn_kernel(lambda x, i: x.ap(pattern=[[32, 16], [1, 8]], offset=4, scalar_offset=i,
                                       indirect_dim=1), (16, 8))
    # offset 4 + i * 32 (dim 1's stride), then 16 rows of 32
    np.testing.assert_array_equal(k2(b, np.array([[5]], np.int32)),
                                  b.reshape(-1)[4 + 5 * 32:][:16 * 32].reshape(16, 32)[:, :8])


@pytest.mark.parametrize("fn, match", [
    (lambda x, i, t: nisa.tensor_copy(dst=t, src=x.select(0, i)[0:128, 0:64]),
     r"run-time index.*only as the HBM side of nisa.dma_copy"),
    (lambda x, i, t: x.select(0, i).select(0, i), r"only one dynamic select"),
    (lambda x, i, t: t.select(1, i), r"run-time index on an SBUF/PSUM tile"),
    (lambda x, i, t: x.select(0, t[0:1, 0:1]), r"one int32/uint32 element"),
    (lambda x, i, t: x.ap([[64, 128], [1, 64]], scalar_offset=i, vector_offset=i),
     r"cannot be combined"),
    (lambda x, i, t: x.select(0, i).ap([[64, 128], [1, 64]]), r"\.ap\(\) of 'a'"),
    (lambda x, i, t: nisa.dma_copy(dst=x.select(0, i), src=x.select(1, i)),
     r"both sides selected"),
])
def test_dynamic_select_refused(fn, match):
    def k(a, idx):
        i = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=i, src=idx)
        t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
        fn(a, i, t)
        return a
    with pytest.raises(tpbsim.NkiError, match=match):
        nki.jit(k)(_arange((4, 128, 64)), np.zeros((1, 1), np.int32))


def test_dynamic_select_in_dynamic_range():
    """.ap(scalar_offset=) in an affine_range inside a dynamic_range (the
    NKI Library's dynamic-shape kernels): the row offset lives in an SBUF
    tile advanced each trip; every trip is the same instructions."""
    M, H = 512, 256

    def k(a, trips):
        out = nl.ndarray((M, H), dtype=a.dtype, buffer=nl.shared_hbm)
        n = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=n, src=trips)
        r = nisa.register_alloc()
        nisa.register_load(r, n)
        row = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.memset(dst=row, value=0)
        for _ in nl.dynamic_range(0, r, 1):
            for h in nl.affine_range(2):
                pat = [[H, 128], [1, H // 2]]
                t = nl.ndarray((128, H // 2), dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a.ap(pattern=pat, offset=h * (H // 2),
                                              scalar_offset=row, indirect_dim=0))
                u = nl.ndarray((128, H // 2), dtype=a.dtype, buffer=nl.sbuf)
                nisa.tensor_scalar(dst=u, data=t, op0=nl.multiply, operand0=2.0)
                nisa.dma_copy(dst=out.ap(pattern=pat, offset=h * (H // 2), scalar_offset=row,
                                         indirect_dim=0), src=u)
            nisa.tensor_scalar(dst=row, data=row, op0=nl.add, operand0=128)
        return out
    a = _arange((M, H))
    for trips in (1, 3):
        got = nki.jit(k)(a, np.array([[trips]], np.int32))
        np.testing.assert_array_equal(got[:trips * 128], 2 * a[:trips * 128])
