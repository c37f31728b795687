"""NKI block dims (docs/python.md "Block dims"): an on-chip tile declared
(B..., nl.par_dim(P), F...) is stored as one [P, B..., F...] tile; a block
index selects one P-partition tile.  Each form against NumPy, and the
refused forms raise NkiError."""
import json

import numpy as np
import pytest

import tpbsim
from tpbsim import NkiError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(17)


@nki.jit
def blocks_copy(x):
    """x [128, n*64] -> t (n, par_dim(128), 64) block by block, then back
    doubled, block order reversed."""
    n = x.shape[1] // 64
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((n, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(n):
        t[i] = nl.load(x[:, nl.ds(i * 64, 64)])
    for i in nl.affine_range(n):
        r = nisa.tensor_scalar(data=t[n - 1 - i, :, :], op0=nl.multiply, operand0=2.0)
        nl.store(out[:, nl.ds(i * 64, 64)], r)
    return out


@nki.jit
def sdk_memory_semantics(a_ptr):
    """The SDK's nki/test/test_nki_memory_semantics.py kernel (par_dim in
    an HBM shape is a plain size)."""
    B, N, M = a_ptr.shape
    a_loaded = nl.ndarray((B, nl.par_dim(N), M), dtype=a_ptr.dtype, buffer=nl.sbuf)
    exp_out = nl.ndarray((B, nl.par_dim(N), M), dtype=a_ptr.dtype, buffer=nl.sbuf)
    out_ptr = nl.ndarray((B, nl.par_dim(N), M), dtype=a_ptr.dtype, buffer=nl.shared_hbm)
    for b in nl.affine_range(B):
        a_loaded[b] = nl.load(a_ptr[b])
        exp_out[b] = nl.exp(a_loaded[b])
        nl.store(out_ptr[b], value=exp_out[b])
    return out_ptr


def test_sdk_memory_semantics_numpy():
    a = RNG.uniform(0, 2, (4, 128, 512)).astype(np.float32)
    np.testing.assert_allclose(sdk_memory_semantics(a), np.exp(a), rtol=1e-5)


def test_blocks_copy_numpy():
    x = RNG.uniform(-1, 1, (128, 4 * 64)).astype(np.float32)
    got = blocks_copy(x)
    want = np.concatenate([2 * x[:, k * 64:(k + 1) * 64] for k in range(3, -1, -1)], axis=1)
    np.testing.assert_array_equal(got, want)


def test_blocks_stored_partition_first():
    x = np.zeros((128, 3 * 64), np.float32)
    body = json.loads(tpbsim.kernel_json(blocks_copy, x))["body"]
    tiles = [o for o in body if o["op"] == "tile" and o["name"] == "t"]
    assert tiles and tiles[0]["shape"] == [128, 3, 64]


@nki.jit
def blocks_2d(x):
    """Two block dims, a free-dim slice of a block, and a block read with
    nl.ds on its free dim: t (2, 3, par_dim(64), 32)."""
    out = nl.ndarray((64, 2 * 3 * 16), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((2, 3, nl.par_dim(64), 32), dtype=nl.float32, buffer=nl.sbuf)
    for a in nl.affine_range(2):
        for b in nl.affine_range(3):
            t[a, b, :, :] = nl.load(x[:, nl.ds((a * 3 + b) * 32, 32)])
    assert t.shape == (2, 3, 64, 32) and t[1].shape == (3, 64, 32)
    for a in nl.affine_range(2):
        for b in nl.affine_range(3):
            nl.store(out[:, nl.ds((b * 2 + a) * 16, 16)], t[a, b, :, nl.ds(16, 16)])
    return out


def test_blocks_2d_numpy():
    x = RNG.uniform(-1, 1, (64, 6 * 32)).astype(np.float32)
    got = blocks_2d(x)
    blk = x.reshape(64, 2, 3, 32)
    want = np.concatenate([blk[:, a, b, 16:] for b in range(3) for a in range(2)], axis=1)
    np.testing.assert_array_equal(got, want)


@nki.jit
def blocks_matmul(a, b):
    """Per column block j: out[:, j] = a.T @ b[:, j], with the contraction
    over K tiles accumulated with += into a PSUM block tensor."""
    K, M = a.shape
    N = b.shape[1]
    nj, nk = N // 128, K // 128
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    ps = nl.zeros((nj, nl.par_dim(M), 128), dtype=nl.float32, buffer=nl.psum)
    at = nl.ndarray((nk, nl.par_dim(128), M), dtype=nl.float32, buffer=nl.sbuf)
    for k in nl.affine_range(nk):
        at[k] = nl.load(a[nl.ds(k * 128, 128), :])
    for j in nl.affine_range(nj):
        for k in nl.affine_range(nk):
            bt = nl.load(b[nl.ds(k * 128, 128), nl.ds(j * 128, 128)])
            ps[j, :, :] += nisa.nc_matmul(at[k], bt)
    for j in nl.affine_range(nj):
        r = nisa.tensor_copy(ps[j])
        nl.store(out[:, nl.ds(j * 128, 128)], r)
    return out


def test_blocks_matmul_psum_numpy():
    a = RNG.uniform(-1, 1, (256, 64)).astype(np.float32)
    b = RNG.uniform(-1, 1, (256, 384)).astype(np.float32)
    got = blocks_matmul(a, b)
    np.testing.assert_allclose(got, a.T.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def _refused(fn, match, *args):
    with pytest.raises(NkiError, match=match):
        tpbsim.kernel_json(nki.jit(fn), *args)


def test_block_dims_refused():
    x = np.zeros((128, 64), np.float32)

    def whole(x):   # an operand keeping a block dim
        t = nl.ndarray((2, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.sbuf)
        t[0] = nl.load(x)
        t[1] = nl.load(x)
        return nisa.tensor_copy(t)
    _refused(whole, "keeps block dim", x)

    def range_of_blocks(x):
        t = nl.ndarray((2, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.sbuf)
        t[0:2] = 1.0
    _refused(range_of_blocks, "keeps block dim", x)

    def two_par_dims(x):
        return nl.ndarray((nl.par_dim(2), nl.par_dim(128), 64), dtype=nl.float32)
    _refused(two_par_dims, "par_dim given more than once", x)

    def grid_block_index(x):
        t = nl.ndarray((2, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.sbuf)
        i = nl.mgrid[0:128, 0:64]
        j = nl.arange(2)[:, None]
        t[j, i.p, i.x] = nl.load(x)
    _refused(grid_block_index, "indices on its block dims", x)
    assert nl.par_dim(128) == 128


@nki.jit
def reduce_into_column(x):
    """Forms of the SDK's attention kernels next to their block dims: a
    [P] reduction (axis=1, no keepdims) assigned into a [P, 1] column, and
    reductions over a 1-element axis (a copy; negate=True: times -1)."""
    out = nl.ndarray((128, 3), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    r = nl.ndarray((nl.par_dim(128), 3), dtype=nl.float32, buffer=nl.sbuf)
    r[:, 0:1] = nisa.tensor_reduce(op=nl.max, data=t, axis=1)
    r[:, 1:2] = nisa.tensor_reduce(op=nl.max, data=r[:, 0:1], axis=1)
    r[:, 2:3] = nisa.tensor_reduce(op=nl.add, data=r[:, 0:1], axis=1, negate=True)
    nl.store(out, r)
    return out


def test_reduce_into_column_numpy():
    x = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)
    m = x.max(axis=1)
    np.testing.assert_array_equal(reduce_into_column(x), np.stack([m, m, -m], axis=1))


@nki.jit
def scalar_reduce_b1(x):
    """nisa.tensor_scalar_reduce without dst (beta-1): the result tile is
    returned, the reduction goes to reduce_res; here into a block."""
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    red = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    s = nl.ndarray((2, nl.par_dim(128), 32), dtype=nl.float32, buffer=nl.sbuf)
    m = nl.ndarray((nl.par_dim(128), 2), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(2):
        s[i] = nisa.tensor_scalar_reduce(data=t[:, nl.ds(i * 32, 32)], op0=nl.multiply,
                                         operand0=2.0, reduce_op=nl.max, reduce_res=m[:, i])
    for i in nl.affine_range(2):
        nl.store(out[:, nl.ds(i * 32, 32)], s[i])
    nl.store(red, m)
    return out, red


def test_scalar_reduce_b1_numpy():
    x = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)
    out, red = scalar_reduce_b1(x)
    np.testing.assert_array_equal(out, 2 * x)
    np.testing.assert_array_equal(red, np.stack([2 * x[:, :32].max(1), 2 * x[:, 32:].max(1)], 1))


@nki.jit
def blocks_grid_index(x):
    """The SDK's hoisted-load matmul form: t[k, i.p, i.x] (block index, then
    nl.mgrid indices over the block's partition and free dims)."""
    out = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    i = nl.mgrid[0:128, 0:64]
    t = nl.ndarray((2, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.sbuf)
    for k in nl.affine_range(2):
        t[k, i.p, i.x] = nl.load(x[i.p, k * 64 + i.x])
    for k in nl.affine_range(2):
        nl.store(out[i.p, (1 - k) * 64 + i.x], value=t[k, i.p, i.x])
    return out


def test_blocks_grid_index_numpy():
    x = RNG.uniform(-1, 1, (128, 128)).astype(np.float32)
    np.testing.assert_array_equal(blocks_grid_index(x), np.concatenate([x[:, 64:], x[:, :64]], 1))


@nki.jit
def column_broadcast(x):
    """The SDK's SD-attention form: (1.0 / sum_res).broadcast_to((P, F))
    of a [P] reduction (and nl.broadcast_to of a [P, 1] column)."""
    out = nl.ndarray((128, 2, 16), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    s = nisa.tensor_reduce(np.add, data=t, axis=(1,))
    c = nisa.tensor_reduce(np.max, data=t, axis=(1,), keepdims=True)
    r = nl.ndarray((nl.par_dim(128), 2, 16), dtype=nl.float32, buffer=nl.sbuf)
    r[:, 0, :] = nl.copy((1.0 / s).broadcast_to((128, 16)))
    r[:, 1, :] = nl.copy(nl.broadcast_to(c, (128, 16)))
    nl.store(out, r)
    return out


def test_column_broadcast_numpy():
    x = RNG.uniform(0.5, 1, (128, 64)).astype(np.float32)
    got = column_broadcast(x)
    np.testing.assert_allclose(got[:, 0], np.repeat(1 / x.sum(1, keepdims=True), 16, 1),
                               rtol=1e-5)
    np.testing.assert_array_equal(got[:, 1], np.repeat(x.max(1, keepdims=True), 16, 1))


@nki.jit
def blocks_loop_reduce(a, b):
    """nki-samples' contributed/matmul.py form: per K block a PSUM matmul,
    added into an SBUF block tensor with t[m] = nl.loop_reduce(psum, np.add,
    loop_indices=[k]) (t = t + psum)."""
    K, M = a.shape
    out = nl.ndarray((M, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    z = nl.zeros((1, nl.par_dim(M), 128), dtype=nl.float32, buffer=nl.sbuf)
    for k in nl.affine_range(K // 128):
        ps = nisa.nc_matmul(nl.load(a[nl.ds(k * 128, 128), :]), nl.load(b[nl.ds(k * 128, 128), :]))
        z[0] = nl.loop_reduce(ps, op=np.add, loop_indices=[k], dtype=nl.float32)
    nl.store(out, z[0])
    return out


def test_blocks_loop_reduce_numpy():
    a = RNG.uniform(-1, 1, (384, 64)).astype(np.float32)
    b = RNG.uniform(-1, 1, (384, 128)).astype(np.float32)
    np.testing.assert_allclose(blocks_loop_reduce(a, b), a.T.astype(np.float64) @ b,
                               rtol=1e-4, atol=1e-4)
    body = json.loads(tpbsim.kernel_json(blocks_loop_reduce, a, b))["body"]
    tt = [o for o in json.dumps(body).split('"op": ') if o.startswith('"tensor_tensor"')]
    assert len(tt) == 1 and "test_blockdims.py" in tt[0]

    def plain_name(a, b):   # b = nl.loop_reduce(...) names no destination
        z = nl.loop_reduce(nl.load(a[0:128, :]), op=np.add, loop_indices=[])
        return nisa.tensor_copy(z)
    _refused(plain_name, "expected a tensor|loop_reduce", a, b)


@nki.jit
def blocks_whole_dma(x):
    """A whole block-dim tile (and a range of its blocks) stored to / copied
    from an HBM tensor of its NKI shape (n, P, F): one DMA of the blocks."""
    n = x.shape[0]
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    out2 = nl.ndarray((2,) + x.shape[1:], dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((n, nl.par_dim(128), 32), dtype=nl.float32, buffer=nl.sbuf)
    t[...] = x
    for i in nl.affine_range(n):
        t[i] = nisa.tensor_scalar(data=t[i], op0=nl.add, operand0=1.0)
    nl.store(out, t)
    out2[...] = t[1:3]
    return out, out2


def test_blocks_whole_dma_numpy():
    x = RNG.uniform(-1, 1, (3, 128, 32)).astype(np.float32)
    out, out2 = blocks_whole_dma(x)
    np.testing.assert_array_equal(out, x + 1)
    np.testing.assert_array_equal(out2, x[1:3] + 1)
