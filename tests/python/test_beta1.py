"""NKI beta-1 call forms (docs/python.md "Beta-1 call forms"): nki.isa ops
called without dst return a new tile; `t[idx] = op(...)` writes the op into
t, `psum[idx] += nisa.nc_matmul(...)` accumulates; nl.mgrid / nl.arange
index tensors.  Each form against NumPy, and the beta-1 and beta-2
spellings of a kernel compile to identical streams."""
import json

import numpy as np
import pytest

import tpbsim
from tpbsim import NkiError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

from test_ops import _bins

RNG = np.random.default_rng(7)


def _same_streams(tmp_path, k1, k2, *args):
    tpbsim.compile(k1, *args, out_dir=str(tmp_path / "b1"))
    tpbsim.compile(k2, *args, out_dir=str(tmp_path / "b2"))
    a, b = _bins(str(tmp_path / "b1")), _bins(str(tmp_path / "b2"))
    assert a and a == b


def _refused(fn, match, *args):
    """Tracing fn on args raises NkiError matching match."""
    with pytest.raises(NkiError, match=match):
        tpbsim.kernel_json(nki.jit(fn), *args)


def _ops(kernel, *args):
    return [o["op"] for o in json.loads(tpbsim.kernel_json(kernel, *args))["body"]]


# ---- each value-returning form against NumPy ----

@nki.jit
def elementwise_b1(x, y, col):
    outs = [nl.ndarray(s, dtype=nl.float32, buffer=nl.shared_hbm)
            for s in ((128, 64), (128, 64), (128, 64), (128, 64), (128, 1), (128, 64),
                      (128, 64), (128, 64))]
    tx, ty, tc = nl.load(x), nl.load(y), nl.load(col)
    a = nisa.activation(op=nl.exp, data=tx, bias=tc, scale=0.5)
    b = nisa.tensor_tensor(tx, ty, op=nl.multiply)
    c = nisa.tensor_scalar(tx, np.subtract, 1.0, reverse0=True, op1=nl.multiply, operand1=3.0)
    d = nisa.tensor_copy(ty, dtype=nl.bfloat16)
    e = nisa.tensor_reduce(np.add, tx, axis=[1], keepdims=True)
    f = nisa.reciprocal(ty)
    g = nisa.memset((128, 64), 2.5, nl.float32)
    h = nisa.tensor_scalar(data=tx, op0=nl.maximum, operand0=tc)
    for o, t in zip(outs, (a, b, c, d, e, f, g, h)):
        nl.store(o, t)
    return tuple(outs)


def test_elementwise_numpy():
    x = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)
    y = RNG.uniform(0.5, 2, (128, 64)).astype(np.float32)
    col = RNG.uniform(-1, 1, (128, 1)).astype(np.float32)
    a, b, c, d, e, f, g, h = elementwise_b1(x, y, col)
    np.testing.assert_allclose(a, np.exp(0.5 * x + col), rtol=1e-5)
    np.testing.assert_allclose(b, x * y, rtol=1e-6)
    np.testing.assert_allclose(c, (1.0 - x) * 3.0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d, y, rtol=2 ** -8)   # through bfloat16
    np.testing.assert_allclose(e, x.sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(f, 1.0 / y, rtol=1e-5)
    np.testing.assert_array_equal(g, np.full((128, 64), 2.5, np.float32))
    np.testing.assert_allclose(h, np.maximum(x, col), rtol=1e-6)


@nki.jit
def pe_b1(a, b, s):
    out = nl.ndarray((64, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    outt = nl.ndarray((256, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    outs = nl.ndarray((32, 32), dtype=nl.float32, buffer=nl.shared_hbm)
    ta, tb = nl.load(a), nl.load(b)
    p = nl.zeros((64, 256), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(2):
        p[...] += nisa.nc_matmul(ta, tb)
    r = nisa.tensor_copy(p)
    nl.store(out, r)
    t = nisa.nc_transpose(tb[:, 0:128])   # 128 x 128: the Tensor engine, PSUM
    assert t.buffer == nl.psum and t.shape == (128, 128)
    t2 = nisa.nc_transpose(tb[:, 128:256])
    nl.store(outt[0:128, :], nisa.tensor_copy(t))
    nl.store(outt[128:256, :], nisa.tensor_copy(t2))
    ts = nl.load(s)
    v = nisa.nc_transpose(ts)   # 32 x 32: the Vector engine, SBUF
    assert v.buffer == nl.sbuf
    nl.store(outs, v)
    return out, outt, outs


def test_pe_numpy():
    a = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)
    b = RNG.uniform(-1, 1, (128, 256)).astype(np.float32)
    s = RNG.uniform(-1, 1, (32, 32)).astype(np.float32)
    out, outt, outs = pe_b1(a, b, s)
    np.testing.assert_allclose(out, 2 * (a.T @ b), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(outt, np.concatenate([b[:, :128].T, b[:, 128:].T]), rtol=1e-6)
    np.testing.assert_array_equal(outs, s.T)


@nki.jit
def iota_b1():
    o1 = nl.ndarray((128, 64), dtype=nl.int32, buffer=nl.shared_hbm)
    o2 = nl.ndarray((1, 512), dtype=nl.int32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    nl.store(o1, nisa.iota(5 + 2 * i_p - 3 * i_f, dtype=nl.int32))
    nl.store(o2, nisa.iota(nl.arange(512)[None, :] * -1, nl.int32))
    return o1, o2


def test_iota_numpy():
    o1, o2 = iota_b1()
    p, f = np.mgrid[0:128, 0:64]
    np.testing.assert_array_equal(o1, 5 + 2 * p - 3 * f)
    np.testing.assert_array_equal(o2, -np.arange(512)[None, :])


# ---- the beta-1 and beta-2 spellings compile to identical streams ----

def _tiles(x, y):
    """out, acc, red, ps, tp and the loaded x, y (both spellings)."""
    shapes = (((128, 64), nl.shared_hbm), ((128, 64), nl.sbuf), ((128, 1), nl.sbuf),
              ((64, 64), nl.psum), ((64, 128), nl.psum))
    return [nl.ndarray(s, dtype=nl.float32, buffer=b) for s, b in shapes] + [nl.load(x),
                                                                            nl.load(y)]


def _b1_kernel(x, y):
    out, acc, red, ps, tp, tx, ty = _tiles(x, y)
    acc[...] = nisa.activation(op=nl.exp, data=tx)
    acc[:, 0:32] = nisa.tensor_tensor(acc[:, 0:32], ty[:, 0:32], op=nl.add)
    acc[...] = nisa.tensor_scalar(acc, np.multiply, 2.0, op1=np.add, operand1=1.0)
    red[...] = nisa.tensor_reduce(nl.max, acc, axis=1, keepdims=True)
    acc[...] = nisa.tensor_copy(ty, engine=nisa.scalar_engine)
    acc[...] = nisa.reciprocal(acc)
    ps[...] = nisa.nc_matmul(tx, ty)
    ps[...] += nisa.nc_matmul(tx, ty)
    tp[...] = nisa.nc_transpose(tx, engine=nisa.tensor_engine)
    acc[...] = nisa.memset((128, 64), 1.0, nl.float32)
    nl.store(out, acc)
    return out


def _b2_kernel(x, y):
    out, acc, red, ps, tp, tx, ty = _tiles(x, y)
    nisa.activation(dst=acc, op=nl.exp, data=tx)
    nisa.tensor_tensor(dst=acc[:, 0:32], data1=acc[:, 0:32], data2=ty[:, 0:32], op=nl.add)
    nisa.tensor_scalar(dst=acc, data=acc, op0=np.multiply, operand0=2.0, op1=np.add,
                       operand1=1.0)
    nisa.tensor_reduce(dst=red, op=nl.max, data=acc, axis=1, keepdims=True)
    nisa.tensor_copy(dst=acc, src=ty, engine=nisa.engine.scalar)
    nisa.reciprocal(dst=acc, data=acc)
    nisa.nc_matmul(dst=ps, stationary=tx, moving=ty, accumulate=False)
    nisa.nc_matmul(dst=ps, stationary=tx, moving=ty, accumulate=True)
    nisa.nc_transpose(dst=tp, data=tx, engine=nisa.engine.tensor)
    nisa.memset(dst=acc, value=1.0)
    nl.store(out, acc)
    return out


def test_beta1_beta2_identical(tmp_path):
    x = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)
    y = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)
    k1, k2 = nki.jit(_b1_kernel), nki.jit(_b2_kernel)
    # written in place: no copies, no extra tiles, the same ops
    assert _ops(k1, x, y) == _ops(k2, x, y)
    j1 = json.loads(tpbsim.kernel_json(k1, x, y))["body"]
    j2 = json.loads(tpbsim.kernel_json(k2, x, y))["body"]
    strip = lambda b: [{k: v for k, v in o.items() if k != "loc"} for o in b]
    assert strip(j1) == strip(j2)
    _same_streams(tmp_path, k1, k2, x, y)


def test_returned_tile_identical(tmp_path):
    """x = nisa.op(...) is the beta-2 op into a tile made just before."""
    def b1(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        e = nisa.activation(op=nl.exp, data=t, dtype=nl.bfloat16)
        nl.store(out, nisa.tensor_tensor(e, t, nl.add))
        return out

    def b2(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        e = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.activation(dst=e, op=nl.exp, data=t)
        s = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=s, data1=e, data2=t, op=nl.add)
        nl.store(out, s)
        return out
    x = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)
    _same_streams(tmp_path, nki.jit(b1), nki.jit(b2), x)


# ---- assignment: in place, or a copy ----

def test_assign_named_value_copies():
    """A value kept in a variable is copied (it may be read later); a
    temporary is written in place; a number is a memset."""
    @nki.jit
    def k(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        s = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        t = nl.load(x)
        e = nisa.activation(op=nl.exp, data=t)
        s[...] = e
        s[...] = nisa.activation(op=nl.exp, data=e)
        s[:, 0:8] = 0.0
        nl.store(out, s)
        return out
    x = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)
    assert _ops(k, x) == ["tile", "tile", "dma_copy", "tile", "activation", "tensor_copy",
                          "activation", "memset", "dma_copy"]
    want = np.exp(np.exp(x))
    want[:, 0:8] = 0
    np.testing.assert_allclose(k(x), want, rtol=1e-5)


def test_assign_explicit_dtype_copies():
    """dtype= rounds the result: into a tile of another dtype it is copied."""
    @nki.jit
    def k(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        s = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        s[...] = nisa.tensor_copy(nl.load(x), dtype=nl.bfloat16)
        nl.store(out, s)
        return out
    x = (RNG.uniform(-1, 1, (128, 64)).astype(np.float32) + np.float32(2 ** -12))
    assert "tensor_copy" in _ops(k, x) and _ops(k, x).count("tensor_copy") == 2
    r = k(x)
    assert not np.array_equal(r, x)   # rounded through bfloat16
    np.testing.assert_allclose(r, x, rtol=2 ** -8)


def test_iadd_tiles_numpy():
    """tile += tile (not a matmul) is a tensor_tensor add into the tile."""
    @nki.jit
    def k(x, y):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        s = nl.load(x)
        s[:, 0:32] += nl.load(y[:, 0:32])
        s += nisa.tensor_scalar(s, np.multiply, 2.0)
        nl.store(out, s)
        return out
    x = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)
    y = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)
    want = x.copy()
    want[:, 0:32] += y[:, 0:32]
    np.testing.assert_allclose(k(x, y), 3 * want, rtol=1e-6)


def test_iadd_reduction_column_and_broadcast_numpy():
    """tile += value as NKI reads it: a [P] reduction adds into a [P, 1]
    tile (as `=` assigns it); a [P, 1] column and a [1, F] row broadcast
    over a [P, F] tile (NumPy's rule, as nl.add); a value whose sum is not
    the target's shape is refused."""
    @nki.jit
    def k(x, row):
        o1 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        o2 = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        acc = nl.zeros((128, 1), dtype=nl.float32)
        for _ in nl.sequential_range(2):
            acc += nl.sum(t, axis=[1])
        u = nl.load(x)
        u += acc
        u += nl.load(row)
        nl.store(o1, acc)
        nl.store(o2, u)
        return o1, o2
    x = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)
    row = RNG.uniform(-1, 1, (1, 64)).astype(np.float32)
    o1, o2 = k(x, row)
    want = 2 * x.sum(axis=1, keepdims=True, dtype=np.float64)
    np.testing.assert_allclose(o1, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(o2, x + o1 + row, rtol=1e-6, atol=1e-6)

    def grows(x):
        t = nl.load(x[:, 0:1])
        t += nl.load(x)   # [128, 1] += [128, 64]: the sum is [128, 64]
    _refused(grows, "does not match the target", x)


def test_matmul_accumulate_loop_numpy():
    @nki.jit
    def k(a, b):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        p = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
        for i in nl.affine_range(4):
            ta = nl.load(a[i * 128:(i + 1) * 128, :])
            tb = nl.load(b[i * 128:(i + 1) * 128, :])
            p += nisa.nc_matmul(ta, tb)
        nl.store(out, nisa.tensor_copy(p))
        return out
    a = RNG.uniform(-1, 1, (512, 128)).astype(np.float32)
    b = RNG.uniform(-1, 1, (512, 512)).astype(np.float32)
    np.testing.assert_allclose(k(a, b), a.T @ b, rtol=1e-4, atol=1e-3)


# ---- binding ----

def test_beta2_unchanged_and_refusals():
    def k_pos(x):   # beta-2 with a positional dst: still beta-2
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        nisa.tensor_tensor(t, t, t, nl.add)
        nisa.memset(t, 1.0)
        nl.store(out, t)
        return out
    x = np.ones((128, 64), np.float32)
    assert _ops(nki.jit(k_pos), x) == ["tile", "dma_copy", "tensor_tensor", "memset", "dma_copy"]

    def k_bad(x):
        t = nl.load(x)
        nisa.tensor_tensor(t, op=nl.add, bogus=1)
    _refused(k_bad, r"test_beta1.py:\d+: nisa.tensor_tensor: the arguments "
             r"bind to neither the beta-2 signature", x)

    def k_memset(x):   # beta-1 memset without its dtype
        nisa.memset((128, 64), 0.0)
    _refused(k_memset, r"nisa.memset: the arguments bind to neither .*"
             r"missing a required argument: 'dtype'", x)

    def k_mask(x):   # beta-1 mask on an op without one
        t = nl.load(x)
        nisa.max8(src=t, mask={"pattern": [[1, 64]], "offset": 0, "channel_multiplier": 0,
                                "cmp_op": "less"})
    _refused(k_mask, "nisa.max8: argument 'mask'", x)

    def k_psum(x):   # a PE result never goes to SBUF in place: copied
        out = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        s = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.sbuf)
        s[...] = nisa.nc_matmul(t, t)
        nl.store(out, s)
        return out
    assert _ops(nki.jit(k_psum), x)[-3:] == ["matmul", "tensor_copy", "dma_copy"]


def test_loc_is_kernel_line():
    def k(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        e = nisa.activation(op=nl.exp, data=t)   # LINE
        nl.store(out, e)
        return out
    import inspect
    src, first = inspect.getsourcelines(k)
    line = first + next(i for i, s in enumerate(src) if "# LINE" in s)
    body = json.loads(tpbsim.kernel_json(nki.jit(k), np.ones((128, 64), np.float32)))["body"]
    assert [o["loc"] for o in body if o["op"] in ("tile", "activation")][-2:] == \
        ["test_beta1.py:%d" % line] * 2


# ---- nl.mgrid / nl.arange indexing ----

def test_mgrid_indexing_numpy():
    @nki.jit
    def k(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        out2 = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.shared_hbm)
        m = nl.mgrid[0:128, 0:64]
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        for i in nl.affine_range(2):
            t[m.p, m.x] = nl.load(x[i * 128 + m.p, m.x])
            nl.store(out[m.p, m.x], t)   # the last one wins
        i_p = nl.arange(64)[:, None]
        i_f = nl.arange(32)[None, :]
        nl.store(out2[i_p, i_f], nl.load(x[i_p, 2 * i_f + 1]))
        return out, out2
    x = RNG.uniform(-1, 1, (256, 64)).astype(np.float32)
    o, o2 = k(x)
    np.testing.assert_array_equal(o, x[128:256])
    np.testing.assert_array_equal(o2, x[0:64, 1:64:2])
    ix, iy = nl.mgrid[0:4, 2:6]
    # dense, as NumPy's (NKI's stub: "each returned argument has the same shape")
    assert (ix.c, iy.c, iy.shape(), ix.shape()) == (0, 2, (4, 4), (4, 4))


def test_index_access_pattern_numpy(tmp_path):
    """Index expressions that are not slices address the access pattern
    they give: the SDK's transpose2d (beta-1) copy, and an HBM read."""
    @nki.jit
    def k(x):
        out = nl.ndarray((16, 32), dtype=nl.float32, buffer=nl.shared_hbm)
        out2 = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x[0:16, 0:32])
        i_p0 = nl.arange(16)[:, None, None]
        i_f1 = nl.arange(8)[None, :, None]
        i_f2 = nl.arange(4)[None, None, :]
        o = nl.ndarray((16, 32), dtype=nl.float32)
        o[i_p0, i_f2 * 8 + i_f1] = nl.copy(t[i_p0, i_f1 * 4 + i_f2])
        nl.store(out, o)
        i_p = nl.arange(64)[:, None]
        i_f = nl.arange(32)[None, :]
        nl.store(out2, nl.load(x[i_p, i_f + i_p]))
        return out, out2
    x = RNG.uniform(-1, 1, (128, 128)).astype(np.float32)
    o, o2 = k(x)
    np.testing.assert_array_equal(o, x[0:16, 0:32].reshape(16, 8, 4).transpose(0, 2, 1)
                                  .reshape(16, 32))
    p, f = np.mgrid[0:64, 0:32]
    np.testing.assert_array_equal(o2, x[p, f + p])


def test_index_refused():
    def on_chip(x):   # the partition index must come first, alone
        t = nl.load(x)
        i_p = nl.arange(64)[:, None]
        i_f = nl.arange(32)[None, :]
        nl.copy(t[i_p + i_f, i_f])
    _refused(on_chip, "index of 't': on chip the first index must be the "
             "partition index", np.ones((128, 128), np.float32))

    def outside(x):
        i_p = nl.arange(64)[:, None]
        i_f = nl.arange(32)[None, :]
        nl.load(x[i_p, i_f * 5 + i_p])
    _refused(outside, r"index of 'x': index 1 spans 0..218, outside 0..127",
             np.ones((128, 128), np.float32))


# ---- plain-name aliases ----

def test_aliases():
    assert (nl.fp32, nl.bf16, nl.fp16) == (nl.float32, nl.bfloat16, nl.float16)
    assert nl.fp32.min == float(np.finfo(np.float32).min)
    assert nl.bf16.max == 3.3895313892515355e+38
    assert nisa.vector_engine is nisa.engine.vector
    assert nisa.tensor_engine is nisa.engine.tensor and nisa.gpsimd_engine is nisa.engine.gpsimd
    assert nisa.scalar_engine is nisa.engine.scalar and nisa.unknown_engine is nisa.engine.unknown

    @nki.jit
    def k(x):
        out = nl.ndarray(x.shape, dtype=nl.fp32, buffer=nl.shared_hbm)
        nl.store(out, nl.load(x))
        return out
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(nki.simulate_kernel(k, x), x)


def test_affine_select_pred_numpy(tmp_path):
    """beta-1 affine_select(pred=(iy < ix), ...) is beta-2's pattern form."""
    def b1(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        ix, iy = nl.mgrid[0:128, 0:64]
        t = nl.load(x[ix, iy])
        nl.store(out[ix, iy], nisa.affine_select(pred=(iy < ix), on_true_tile=t[ix, iy],
                                                 on_false_value=nl.fp32.min))
        return out

    def b2(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        s = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.affine_select(dst=s, pattern=[[1, 64]], channel_multiplier=-1, on_true_tile=t,
                           on_false_value=float(np.finfo(np.float32).min), cmp_op=nl.less)
        nl.store(out, s)
        return out
    x = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)
    p, f = np.mgrid[0:128, 0:64]
    want = np.where(f < p, x, np.finfo(np.float32).min)
    np.testing.assert_array_equal(nki.jit(b1)(x), want)
    _same_streams(tmp_path, nki.jit(b1), nki.jit(b2), x)

    def bad(x):
        t = nl.load(x)
        i = nl.arange(64)[None, :]
        nisa.affine_select(pred=(i < 3) & (i > 1), on_true_tile=t, on_false_value=0.0)
    _refused(bad, "nisa.affine_select: argument 'pred'", x)


def test_numpy_max_op_name():
    """np.max / np.min as an op (their __name__ is amax / amin)."""
    @nki.jit
    def k(x):
        out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nisa.tensor_reduce(np.max, nl.load(x), axis=1, keepdims=True))
        return out
    x = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)
    np.testing.assert_array_equal(k(x), x.max(axis=1, keepdims=True))


def test_iadd_in_loop_with_symbolic_index():
    """p[i-dependent slice] += ...: the view written back is the same one
    (no copy, no trace-time comparison of the loop variable)."""
    @nki.jit
    def k(a, b):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        p = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
        ta = nl.load(a)
        for i in nl.affine_range(4):
            tb = nl.load(b[:, i * 128:(i + 1) * 128])
            p[:, i * 128:(i + 1) * 128] += nisa.nc_matmul(ta, tb)
        nl.store(out, nisa.tensor_copy(p))
        return out
    a = RNG.uniform(-1, 1, (128, 128)).astype(np.float32)
    b = RNG.uniform(-1, 1, (128, 512)).astype(np.float32)
    body = json.loads(tpbsim.kernel_json(k, a, b))["body"]
    loop = next(o for o in body if o["op"] == "affine_range")
    assert [o["op"] for o in loop["body"]] == ["tile", "dma_copy", "matmul"]
    assert loop["body"][-1]["accumulate"] is True
    np.testing.assert_allclose(k(a, b), a.T @ b, rtol=1e-4, atol=1e-3)


def test_sdk_tiled_matmul_in_place():
    """The SDK's beta-1 tiled matmul tutorial: loads assigned into declared
    tiles and res_psum += nl.matmul(...) compile to the in-place ops."""
    @nki.jit
    def k(lhsT, rhs):
        result = nl.ndarray((128, 512), dtype=lhsT.dtype, buffer=nl.shared_hbm)
        res_psum = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
        for kk in nl.affine_range(2):
            lhsT_tile = nl.ndarray((128, 128), dtype=lhsT.dtype, buffer=nl.sbuf)
            rhs_tile = nl.ndarray((128, 512), dtype=rhs.dtype, buffer=nl.sbuf)
            lhsT_tile[...] = nl.load(lhsT[kk * 128:(kk + 1) * 128, 0:128])
            rhs_tile[...] = nl.load(rhs[kk * 128:(kk + 1) * 128, 0:512])
            res_psum += nl.matmul(lhsT_tile[...], rhs_tile[...], transpose_x=True)
        nl.store(result, value=nl.copy(res_psum, dtype=result.dtype))
        return result
    a = RNG.uniform(-1, 1, (256, 128)).astype(np.float32)
    b = RNG.uniform(-1, 1, (256, 512)).astype(np.float32)
    loop = next(o for o in json.loads(tpbsim.kernel_json(k, a, b))["body"]
                if o["op"] == "affine_range")
    assert [o["op"] for o in loop["body"]] == ["tile", "tile", "dma_copy", "dma_copy", "matmul"]
    assert loop["body"][-1]["accumulate"] is True
    np.testing.assert_allclose(k(a, b), a.T @ b, rtol=1e-4, atol=1e-3)


def test_tile_index_gather_scatter_numpy():
    """a[idx_tile, cols] (NKI's indirect DMA written as an index): rows of
    a 2-D HBM tensor picked by an SBUF [P, 1] tile, read and written; an
    index expression over a 1-D tensor takes the grid's shape ([P, 1])."""
    @nki.jit
    def k(x, idx):
        out = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        out2 = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        i_p = nl.arange(64)[:, None]
        i_f = nl.arange(512)[None, :]
        it = nl.load(idx[i_p])
        assert it.shape == (64, 1)
        t = nl.load(x[it[i_p, 0], i_f])
        nl.store(out, t)
        nl.store(out2, nl.zeros((128, 512), nl.float32))
        nl.store(out2[it, 0:512], t)
        return out, out2
    x = RNG.uniform(-1, 1, (128, 512)).astype(np.float32)
    idx = RNG.permutation(128)[:64].astype(np.int32)
    o, o2 = k(x, idx)
    np.testing.assert_array_equal(o, x[idx])
    want = np.zeros((128, 512), np.float32)
    want[idx] = x[idx]
    np.testing.assert_array_equal(o2, want)

    def bad(x, idx):
        t = nl.load(x[0:64, :])
        nl.load(x[0:64, t])
    _refused(bad, "indexing 'x' with a tensor is not supported", x, idx)


def test_tile_arithmetic_numpy():
    """tile + - * / tile, a number or a [P, 1] tile: one op into a new tile
    (nl.add & co.); tile += number is a tensor_scalar into the tile."""
    @nki.jit
    def k(x, y, col):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        tx, ty, tc = nl.load(x), nl.load(y), nl.load(col)
        r = (tx + ty) * 2.0 - tx / tc
        r = 1.0 - r
        r += 0.5
        nl.store(out, 3.0 * r / 2.0 + ty * tc)
        return out
    x = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)
    y = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)
    col = RNG.uniform(0.5, 2, (128, 1)).astype(np.float32)
    r = 1.0 - ((x + y) * 2.0 - x / col) + 0.5
    np.testing.assert_allclose(k(x, y, col), 3.0 * r / 2.0 + y * col, rtol=1e-5, atol=1e-6)


def test_nl_mask_numpy():
    """nl functions take mask= (the op's mask over the result); nl.store's
    mask= bounds cut both sides to the rectangle (the SDK's nki_mask)."""
    @nki.jit
    def k(x):
        out = nl.ndarray((64, 256), dtype=nl.float32, buffer=nl.shared_hbm)
        out2 = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(512)[None, :]
        t = nl.load(x[i_p, i_f])
        sq = nl.square(t, mask=((i_p < 64) & (i_f < 256)))
        nl.store(out[i_p, i_f], sq[i_p, i_f], mask=((i_p < 64) & (i_f < 256)))
        s = nl.add(t, 1.0, mask=(i_f >= 500))
        nl.store(out2, nl.zeros((128, 512), nl.float32))
        nl.store(out2, s, mask=(-i_f > -512) & (i_f > 499))
        return out, out2
    x = RNG.uniform(-1, 1, (128, 512)).astype(np.float32)
    o, o2 = k(x)
    np.testing.assert_allclose(o, np.square(x[:64, :256]), rtol=1e-6)
    want = np.zeros((128, 512), np.float32)
    want[:, 500:] = x[:, 500:] + 1
    np.testing.assert_allclose(o2, want, rtol=1e-6)

    # a mask over two indices is a read-modify-write (test_samples_more.py),
    # which a number value cannot be
    def bad(x):
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(512)[None, :]
        nl.store(x, 1.0, mask=(i_p + i_f < 64))
    _refused(bad, "nl.store: argument 'mask': a mask that is not a rectangle needs an "
             "SBUF/PSUM value", x)


def test_store_number_numpy():
    """nl.store(hbm, number) fills it (NKI beta-1's 'effectively a memset')."""
    @nki.jit
    def k(x):
        out = nl.ndarray((300, 8), dtype=nl.int32, buffer=nl.shared_hbm)
        nl.store(out, 100)
        nl.store(out[0:2, :], nl.load(x))
        return out
    x = np.arange(16, dtype=np.int32).reshape(2, 8)
    want = np.full((300, 8), 100, np.int32)
    want[0:2] = x
    np.testing.assert_array_equal(k(x), want)


def test_iadd_into_fresh_psum_starts_the_group():
    """`p[...] += nc_matmul(...)` into a PSUM tile nothing wrote (not
    zeroed, one per iteration): NKI's accumulation group, whose first
    matmul overwrites, so each iteration gives a.T @ b (uninitialised PSUM
    is NaN in the simulator); a zeroed tile still accumulates onto it."""
    @nki.jit
    def k(a, b):
        out = nl.ndarray((3, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        at, bt = nl.load(a), nl.load(b)
        for i in nl.affine_range(3):
            p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            p[...] += nisa.nc_matmul(at, bt)
            p[...] += nisa.nc_matmul(at, bt)
            nl.store(out[i], nisa.tensor_copy(p))
        return out

    @nki.jit
    def z(a, b):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        p = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
        p[...] += nisa.nc_matmul(nl.load(a), nl.load(b))
        nl.store(out, nisa.tensor_copy(p))
        return out
    a = RNG.uniform(-1, 1, (128, 128)).astype(np.float32)
    b = RNG.uniform(-1, 1, (128, 512)).astype(np.float32)
    body = json.loads(tpbsim.kernel_json(k, a, b))["body"]
    mm = [o for o in next(o for o in body if o["op"] == "affine_range")["body"]
          if o["op"] == "matmul"]
    assert [o["accumulate"] for o in mm] == [False, True]
    out = k(a, b)
    for i in range(3):
        np.testing.assert_allclose(out[i], 2 * (a.T @ b), rtol=1e-4, atol=1e-3)
    zb = json.loads(tpbsim.kernel_json(z, a, b))["body"]
    assert [o["accumulate"] for o in zb if o["op"] == "matmul"] == [True]
    np.testing.assert_allclose(z(a, b), a.T @ b, rtol=1e-4, atol=1e-3)


@nki.jit
def _bn_masked(x):
    """LayerNorm v2's form: beta-1 bn_stats with a mask that holds at every
    index (i_f < 8192 on 512 columns), then bn_aggr: mean and variance."""
    out = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:512]
    t = nl.load(x[i_p, i_f])
    st = nisa.bn_stats(t[i_p, i_f], mask=(i_f < 8192), dtype=nl.float32)
    nl.store(out, nisa.bn_aggr(st))
    return out


def test_mask_true_at_every_index_is_no_mask_numpy():
    x = RNG.standard_normal((128, 512)).astype(np.float32)
    got = _bn_masked(x)
    np.testing.assert_allclose(got[:, 0], x.mean(1), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[:, 1], x.var(1), rtol=1e-4, atol=1e-5)
