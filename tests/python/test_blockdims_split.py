"""Block-dim tiles beyond one stored tile (docs/python.md "Block dims",
"SBUF blocks past a partition"): tiles with more than 5 dims in all
(neuronx-cc's generated kernels declare 4 to 7 block dims), SBUF tiles
whose blocks together exceed a partition (one tile per logical block,
allocated by liveness as NKI does), and an oversize tile written by
nl.load, reloaded from HBM at each use (docs/compiler.md "Oversize
tiles").  Golden values from NumPy."""
import json

import numpy as np
import pytest

import tpbsim
from tpbsim import NkiError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(29)


def _rand(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


def _tiles(text):
    """name -> shape of every tile the kernel text declares (loop bodies too)."""
    out = {}

    def walk(ops):
        for o in ops:
            if o.get("op") == "tile":
                out[o["name"]] = o["shape"]
            for k in ("body", "else"):
                walk(o.get(k, []))
            for it in o.get("iterations", []):
                walk(it)
    walk(json.loads(text)["body"])
    return out


@nki.jit
def many_block_dims(x):
    """x (2, 3, 128, 64) through a tile of 4 block dims (6 dims in all):
    loop-variable and integer block indexes, nl.arange indexes inside a
    block, a compute op on a block, a PSUM tile of 4 block dims
    accumulated with +=, and DMAs of every block (t[...] = x,
    nl.store(out, t), a range of blocks)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    out2 = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    out3 = nl.ndarray((1, 3, 128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((2, 1, 3, 1, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.sbuf)
    u = nl.ndarray((2, 3, 1, 1, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.sbuf)
    ps = nl.zeros((2, 1, 3, 1, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.psum)
    ident = nl.shared_identity_matrix(128, dtype=nl.float32)
    ip, ix = nl.arange(128)[:, None], nl.arange(64)[None, :]
    for a in nl.affine_range(2):
        for b in nl.affine_range(3):
            t[a, 0, b, 0, ip, ix] = nl.load(x[a, b])
            for k in nl.affine_range(2):   # ps = 2 * x
                ps[a, 0, b, 0] += nisa.nc_matmul(ident, t[a, 0, b, 0])
            u[a, b, 0, 0, ip, ix] = nl.multiply(ps[a, 0, b, 0, ip, ix], 1.5)
    t[1, 0, 2, 0, :, 0:32] = nisa.tensor_scalar(data=t[1, 0, 2, 0, :, 0:32], op0=nl.add,
                                                operand0=10.0)
    nl.store(out, t[:, 0, :, 0])
    out2[...] = u[:, :, 0, 0]
    out3[...] = u[1:2, :, 0, 0]
    return out, out2, out3


def test_many_block_dims_numpy():
    x = _rand(2, 3, 128, 64)
    out, out2, out3 = many_block_dims(x)
    want = x.copy()
    want[1, 2, :, 0:32] += 10.0
    np.testing.assert_array_equal(out, want)
    np.testing.assert_allclose(out2, 3 * x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out3, 3 * x[1:2], rtol=1e-5, atol=1e-5)
    # stored as one tile each, declared [P, F] (the kernel format's tiles have
    # at most 5 dims), viewed in the NKI dims
    shapes = list(_tiles(tpbsim.kernel_json(many_block_dims, x)).values())
    assert shapes.count([128, 6 * 64]) == 3 and max(map(len, shapes)) <= 5   # t, u, ps


@nki.jit
def whole_dma_four_blocks(x):
    """Every block of a 4-block-dim tile in one DMA each way: the tile's
    side has more than 4 free dims, merged where both sides are one run."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((2, 2, 2, 2, nl.par_dim(128), 16), dtype=nl.float32, buffer=nl.sbuf)
    t[...] = x
    nl.store(out, t)
    return out


def test_whole_dma_four_block_dims_numpy():
    x = _rand(2, 2, 2, 2, 128, 16)
    np.testing.assert_array_equal(whole_dma_four_blocks(x), x)


NB = 64   # 64 blocks of 1024 fp32: 256 KiB per partition, past trn2's 224 KiB


@nki.jit
def blocks_past_partition(x):
    """A (64, par_dim(128), 1024) fp32 tile, each block written by a compute
    op and read in its own iteration: one tile per logical block."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((NB, nl.par_dim(128), 1024), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(NB):
        t[i] = nl.multiply(nl.load(x[i]), 2.0)
        nl.store(out[i], value=t[i])
    return out


def test_sbuf_blocks_past_partition_numpy():
    x = _rand(NB, 128, 1024)
    np.testing.assert_array_equal(blocks_past_partition(x), 2 * x)
    tiles = _tiles(tpbsim.kernel_json(blocks_past_partition, x))
    assert [128, NB, 1024] not in tiles.values()
    assert tiles["t_0"] == [128, 1024] and tiles["t_63"] == [128, 1024]


@nki.jit
def filled_blocks_past_partition(x):
    """nl.zeros of an oversize block-dim tile: each block is zero from its
    first use (filled when its tile is declared), some blocks accumulated
    into over two block dims and a program of loads; every block stored."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.zeros((8, 8, nl.par_dim(128), 1024), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(8):
        for j in nl.affine_range(4):   # blocks (i, j), j < 4: x; the others stay 0
            t[i, j] = nl.add(t[i, j], nl.load(x[i, j]))
        for j in nl.affine_range(8):
            nl.store(out[i, j], value=t[i, j])
    return out


def test_sbuf_blocks_filled_numpy():
    x = _rand(8, 8, 128, 1024)
    want = x.copy()
    want[:, 4:] = 0
    np.testing.assert_array_equal(filled_blocks_past_partition(x), want)


@nki.jit
def block_first_used_in_a_loop(x):
    """Block 5 of a split tile first used inside a traced-once loop and
    read after it: declared in the tensor's scope (the kernel traced per
    iteration), so the loop accumulates into one tile."""
    out = nl.ndarray(x.shape[1:], dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.zeros((NB, nl.par_dim(128), 1024), dtype=nl.float32, buffer=nl.sbuf)
    for k in nl.affine_range(x.shape[0]):
        blk = t[5, :, nl.ds(0, 1024)]
        blk[...] = nl.add(blk, nl.load(x[k]))
    nl.store(out, value=t[5])
    return out


def test_split_block_first_used_in_a_loop_numpy():
    x = _rand(4, 128, 1024)
    np.testing.assert_allclose(block_first_used_in_a_loop(x), x.sum(axis=0), rtol=1e-6,
                               atol=1e-6)


def _two_block_tiles(n):
    @nki.jit
    def k(x):
        """Two (n, par_dim(128), 1024) fp32 tiles, each past half a
        partition: they fit alone, not together, and each is live from its
        first block's write to its last block's read."""
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        a = nl.ndarray((n, nl.par_dim(128), 1024), dtype=nl.float32, buffer=nl.sbuf)
        b = nl.ndarray((n, nl.par_dim(128), 1024), dtype=nl.float32, buffer=nl.sbuf)
        for i in nl.affine_range(n):
            a[i] = nl.load(x[i])
            b[i] = nl.multiply(a[i], 3.0)
            nl.store(out[i], value=b[i])
        return out
    return k


def test_sbuf_blocks_split_when_the_compiler_cannot_fit_numpy():
    """30 + 30 blocks of 4 KiB (240 KiB): traced again one tile per block
    (the compiler cannot fit them, nor spill a half-written tile); 8 + 8
    fit: stored whole, as before."""
    x = _rand(30, 128, 1024)
    k = _two_block_tiles(30)
    np.testing.assert_array_equal(k(x), 3 * x)
    assert [128, 30, 1024] not in _tiles(tpbsim.kernel_json(k, x)).values()
    small = _tiles(tpbsim.kernel_json(_two_block_tiles(8), x[:8]))
    assert small["t"] == [128, 8, 1024]


def test_sbuf_split_blocks_refused():
    """A split tile's blocks are separate tiles: a DMA of every block, an
    op on a view keeping block dims and a program-id block index raise."""
    x = np.zeros((NB, 128, 1024), np.float32)

    def whole_store(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((NB, nl.par_dim(128), 1024), dtype=nl.float32, buffer=nl.sbuf)
        for i in nl.affine_range(NB):
            t[i] = nl.load(x[i])
        nl.store(out, t)
        return out
    with pytest.raises(NkiError, match="access the blocks one at a time"):
        tpbsim.kernel_json(nki.jit(whole_store), x)

    def pid_block(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((NB, nl.par_dim(128), 1024), dtype=nl.float32, buffer=nl.sbuf)
        t[nl.program_id(0)] = nl.load(x[0])
        nl.store(out[0], t[nl.program_id(0)])
        return out
    with pytest.raises(NkiError, match="depends on nl.program_id"):
        tpbsim.kernel_json(nki.jit(pid_block)[257, 1], x)   # traced once for all programs


@nki.jit
def loaded_oversize(x):
    """A 2-D SBUF tile of 60 KiB columns x 4 (240 KiB per partition), each
    part written by nl.load (a dma_copy) and stored twice: reloaded from
    HBM at each read (docs/compiler.md "Oversize tiles")."""
    out = nl.ndarray((128, 8 * 15360), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((nl.par_dim(128), 4 * 15360), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(4):
        t[:, nl.ds(i * 15360, 15360)] = nl.load(x[:, nl.ds(i * 15360, 15360)])
    for r in nl.affine_range(2):
        for i in nl.affine_range(4):
            nl.store(out[:, nl.ds((r * 4 + i) * 15360, 15360)], t[:, nl.ds(i * 15360, 15360)])
    return out


def test_oversize_tile_written_by_nl_load_reloaded_numpy():
    x = _rand(128, 4 * 15360)
    np.testing.assert_array_equal(loaded_oversize(x), np.concatenate([x, x], axis=1))
