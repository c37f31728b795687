"""Block-dim tiles beyond one stored tile (docs/python.md "Block dims"):
tiles with more than 5 dims in all (neuronx-cc's generated kernels
declare 4 to 7 block dims).  Golden values from NumPy."""
import json

import numpy as np
import tpbsim
from tpbsim import nki
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
