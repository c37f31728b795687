"""A masked matmul that accumulates (docs/kernel-format.md "mask"): NKI's
`psum[...] += nisa.nc_matmul(a, b, mask=...)` on the edge tile of N, and
accumulation groups mixing masked and unmasked members.  A mask that keeps
a rectangle of dst runs the matmul on that rectangle of its operands, so
the kept elements are bit-identical to the unmasked matmul's and the others
keep their value.  Checked against NumPy; the kernel format's
accumulate=None through the encoder too."""
import json

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
from tpbsim._lib import Context
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(31)


@nki.jit
def tiled(lhsT, rhs):
    """out = lhsT.T @ rhs in [M, 512] tiles of N, K accumulated in PSUM by
    `+=`; the last tile masked to the columns left (beta-1 form)."""
    K, M = lhsT.shape
    N = rhs.shape[1]
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    ik = nl.arange(128)[:, None]
    im = nl.arange(M)[None, :]
    ip = nl.arange(M)[:, None]
    jf = nl.arange(512)[None, :]
    for n in nl.affine_range((N + 511) // 512):
        acc = nl.zeros((nl.par_dim(M), 512), dtype=nl.float32, buffer=nl.psum)
        for k in nl.affine_range(K // 128):
            a = nl.load(lhsT[k * 128 + ik, im])
            b = nl.load(rhs[k * 128 + ik, n * 512 + jf], mask=(n * 512 + jf < N))
            acc[ip, jf] += nisa.nc_matmul(a, b, mask=(n * 512 + jf < N))
        r = nl.copy(acc[ip, jf], dtype=nl.float32, mask=(n * 512 + jf < N))
        nl.store(out[ip, n * 512 + jf], value=r, mask=(n * 512 + jf < N))
    return out


def test_edge_tile_accumulates_numpy():
    K, M, N = 384, 96, 700
    lhsT = RNG.standard_normal((K, M)).astype(np.float32)
    rhs = RNG.standard_normal((K, N)).astype(np.float32)
    got = tiled(lhsT, rhs)
    np.testing.assert_allclose(got, lhsT.T.astype(np.float64) @ rhs, rtol=1e-5, atol=1e-4)
    # the same kernel on N padded to whole tiles (every mask keeps all): the
    # masked edge tile holds exactly the unmasked matmul's sums
    pad = np.zeros((K, 1024), np.float32)
    pad[:, :N] = rhs
    np.testing.assert_array_equal(got, tiled(lhsT, pad)[:, :N])


def _group(masked_first, mask_of):
    """Three K steps into one PSUM tile with accumulate=None (NKI's default:
    the first overwrites, the others add); step 0 masked when masked_first,
    else step 2; the tile zeroed first, so a masked-out element of the
    first step reads 0."""
    @nki.jit
    def k(lhsT, rhs):
        K, M = lhsT.shape
        N = rhs.shape[1]
        ps = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
        nisa.memset(dst=ps, value=0.0)
        i_p = nl.arange(M)[:, None]
        i_f = nl.arange(N)[None, :]
        for s in range(K // 128):
            ta = nl.ndarray((128, M), dtype=nl.float32, buffer=nl.sbuf)
            tb = nl.ndarray((128, N), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=ta, src=lhsT[s * 128:(s + 1) * 128, :])
            nisa.dma_copy(dst=tb, src=rhs[s * 128:(s + 1) * 128, :])
            masked = s == (0 if masked_first else K // 128 - 1)
            nisa.nc_matmul(dst=ps, stationary=ta, moving=tb,
                           mask=mask_of(i_p, i_f) if masked else None)
        t = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=t, src=ps)
        out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out
    return k


# over nl.arange indices in the kernel, over NumPy index grids for the check
MASKS = {
    # rows < 80, columns 40..299: stationary's columns and moving's cut
    "rect": lambda p, f: (p < 80) & (f >= 40) & (f < 300),
    # causal: no rectangle (a masked copy of a compiler tile, overwrite only)
    "causal": lambda p, f: f - p >= 0,
    # rows 16..79: a rectangle whose partitions cannot start at 16
    "rows16": lambda p, f: (p >= 16) & (p < 80),
}


@pytest.mark.parametrize("masked_first", [True, False])
@pytest.mark.parametrize("mask", sorted(MASKS))
def test_group_mixing_masked_numpy(masked_first, mask):
    K, M, N = 384, 112, 320
    lhsT = RNG.standard_normal((K, M)).astype(np.float32)
    rhs = RNG.standard_normal((K, N)).astype(np.float32)
    mask_of = MASKS[mask]
    keep = np.broadcast_to(mask_of(np.arange(M)[:, None], np.arange(N)[None, :]), (M, N))
    steps = [lhsT[s * 128:(s + 1) * 128].T.astype(np.float64) @ rhs[s * 128:(s + 1) * 128]
             for s in range(3)]
    masked = steps[0] if masked_first else steps[2]
    want = sum(steps) - np.where(keep, 0, masked)
    if mask != "rect" and not masked_first:   # an accumulating member, no rectangle cut
        with pytest.raises(tpbsim.TpbError) as e:
            _group(masked_first, mask_of)(lhsT, rhs)
        assert "field 'mask'" in str(e.value) and "rectangle" in str(e.value), str(e.value)
        return
    got = _group(masked_first, mask_of)(lhsT, rhs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    if masked_first:   # the kept elements: the unmasked group's sums, bit for bit
        plain = _group(masked_first, lambda p, f: f >= 0)(lhsT, rhs)
        np.testing.assert_array_equal(got[keep], plain[keep])


def _run_json(body, inputs, out_shape, tmp_path):
    kern = {"kernel": "mm_mask", "target": "trn2",
            "inputs": [{"name": n, "shape": list(a.shape), "dtype": "float32"}
                       for n, a in inputs.items()],
            "outputs": [{"name": "out", "shape": list(out_shape), "dtype": "float32"}],
            "body": body}
    ctx = Context()
    art = str(tmp_path / "art")
    try:
        ctx.compile_json(json.dumps(kern), "k.json", art)
        ctx.sim_load(art)
        for n, a in inputs.items():
            ctx.sim_set_input(n, a)
        ctx.sim_run()
        return ctx.sim_fetch("out").reshape(out_shape)
    finally:
        ctx.close()


def test_kernel_format_accumulate_none(tmp_path):
    """accumulate absent (NKI None) in the kernel format: a K loop whose
    first step is masked to columns < 200 starts the group on the whole
    declared dst, so the later unmasked steps add (the encoder's rule)."""
    K, M, N = 256, 64, 256
    a = RNG.standard_normal((K, M)).astype(np.float32)
    b = RNG.standard_normal((K, N)).astype(np.float32)
    body = [{"op": "tile", "name": "ta", "shape": [128, 2, M], "dtype": "float32"},
            {"op": "tile", "name": "tb", "shape": [128, 2, N], "dtype": "float32"},
            {"op": "tile", "name": "ps", "shape": [M, N], "dtype": "float32",
             "buffer": "psum"},
            {"op": "tile", "name": "o", "shape": [M, N], "dtype": "float32"},
            {"op": "memset", "dst": "ps", "value": 0.0},
            {"op": "for", "var": "k", "range": [2], "body": [
                {"op": "load", "dst": "ta[:, k, :]", "src": "a[128*k:128*k+128, :]"},
                {"op": "load", "dst": "tb[:, k, :]", "src": "b[128*k:128*k+128, :]"}]},
            {"op": "matmul", "dst": "ps", "stationary": "ta[:, 0, :]",
             "moving": "tb[:, 0, :]",
             "mask": {"pattern": [[1, N]], "offset": -200, "cmp_op": "less"}},
            {"op": "matmul", "dst": "ps", "stationary": "ta[:, 1, :]",
             "moving": "tb[:, 1, :]"},
            {"op": "tensor_copy", "dst": "o", "src": "ps"},
            {"op": "store", "dst": "out", "src": "o"}]
    got = _run_json(body, {"a": a, "b": b}, (M, N), tmp_path)
    s0 = a[:128].T.astype(np.float64) @ b[:128]
    s1 = a[128:].T.astype(np.float64) @ b[128:]
    want = s1 + np.where(np.arange(N)[None, :] < 200, s0, 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
