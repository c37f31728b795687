"""nki.language functions built from nki.isa ops (docs/python.md
"Supported, and not"): each against an independent NumPy computation of
what NKI's stub documents (shapes, dtypes, values), and one refused case
each where tpbsim does not support an argument."""
import json

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(17)


def bf16(a):
    """float32 -> the nearest bfloat16 (ties to even), as float32."""
    u = np.ascontiguousarray(a, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return r.view(np.float32)


def refused(kernel, *args, match):
    with pytest.raises(tpbsim.NkiError, match=match):
        tpbsim.kernel_json(kernel, *args)


def ops(kernel, *args):
    return [o["op"] for o in json.loads(tpbsim.kernel_json(kernel, *args))["body"]
            if o["op"] != "tile"]


# ---- buffers ----

def test_buffer_predicates():
    for b, want in ((nl.sbuf, (False, True, False, True)), (nl.psum, (False, True, True, False)),
                    (nl.hbm, (True, False, False, False)),
                    (nl.private_hbm, (True, False, False, False)),
                    (nl.shared_hbm, (True, False, False, False))):
        assert (nl.is_hbm(b), nl.is_on_chip(b), nl.is_psum(b), nl.is_sbuf(b)) == want
    with pytest.raises(tpbsim.NkiError, match="unknown buffer"):
        nl.is_hbm("dram")


# ---- creation ----

@nki.jit
def creation(a):
    o1 = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    o2 = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    o3 = nl.ndarray((128, 64), dtype=nl.int32, buffer=nl.shared_hbm)
    o4 = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    ones = nl.ones((128, 64), dtype=nl.float32)
    half = nl.full((128, 64), 1.0 + 2.0 ** -10, dtype=nl.bfloat16)   # rounds to 1.0
    nisa.tensor_tensor(dst=ones, data1=ones, data2=nl.full((128, 64), 2.5, nl.float32),
                       op=nl.add)
    nl.store(o1, ones)
    nl.store(o2, half)
    nl.store(o3, nl.full((128, 64), -7, dtype=nl.int32))
    z = nl.zeros_like(a)          # SBUF (NKI's default), a's dtype
    assert z.buffer == nl.sbuf and z.dtype == a.dtype and z.shape == a.shape
    nl.store(o4, z)
    # HBM: filled by a DMA of the number; returned as outputs directly
    h = nl.full((300, 4, 8), 3.25, dtype=nl.float32, buffer=nl.shared_hbm)
    e = nl.empty_like(a)          # a's buffer (HBM) and dtype
    assert e.buffer == a.buffer and e.dtype == a.dtype
    nisa.dma_copy(dst=e, src=a)
    e16 = nl.empty_like(a, dtype=nl.float16, buffer=nl.sbuf)
    assert e16.dtype == nl.float16 and e16.buffer == nl.sbuf
    zh = nl.zeros((200, 3), dtype=nl.float32, buffer=nl.shared_hbm)
    return o1, o2, o3, o4, h, e, zh


def test_creation_numpy():
    a = RNG.standard_normal((128, 64)).astype(np.float32)
    o1, o2, o3, o4, h, e, zh = creation(a)
    np.testing.assert_array_equal(o1, np.full((128, 64), 3.5, np.float32))
    np.testing.assert_array_equal(o2, np.ones((128, 64), np.float32))
    assert o3.dtype == np.int32
    np.testing.assert_array_equal(o3, np.full((128, 64), -7, np.int32))
    np.testing.assert_array_equal(o4, np.zeros((128, 64), np.float32))
    np.testing.assert_array_equal(h, np.full((300, 4, 8), 3.25, np.float32))
    np.testing.assert_array_equal(e, a)
    np.testing.assert_array_equal(zh, np.zeros((200, 3), np.float32))


@nki.jit
def full_nan(a):
    nl.full((128, 4), float("nan"), dtype=nl.float32)


@nki.jit
def full_tile(a):
    t = nl.load(a)
    nl.full((128, 4), t, dtype=nl.float32)


def test_full_refused():
    a = np.zeros((128, 4), np.float32)
    refused(full_nan, a, match=r"nl.full: .*NaN is not a valid immediate")
    refused(full_tile, a, match="nl.full: fill_value must be a number")


# ---- expand_dims ----

@nki.jit
def expand(a):
    out = nl.ndarray((128, 1, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    out2 = nl.ndarray((128, 64, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    v = nl.expand_dims(a, 1)
    assert v.shape == (128, 1, 64)
    t = nl.ndarray((128, 1, 64), dtype=a.dtype)
    nisa.dma_copy(dst=t, src=v)
    nl.store(out, t)
    u = nl.expand_dims(nl.load(a), -1)
    assert u.shape == (128, 64, 1)
    nl.store(out2, u)
    return out, out2


@nki.jit
def expand_partition(a):
    nl.expand_dims(nl.load(a), 0)


@nki.jit
def expand_range(a):
    nl.expand_dims(a, 3)


def test_expand_dims_numpy():
    a = RNG.standard_normal((128, 64)).astype(np.float32)
    o, o2 = expand(a)
    np.testing.assert_array_equal(o, np.expand_dims(a, 1))
    np.testing.assert_array_equal(o2, np.expand_dims(a, -1))
    refused(expand_partition, a, match="nl.expand_dims: axis 0 of an SBUF/PSUM tile")
    refused(expand_range, a, match="nl.expand_dims: axis 3 is out of range")


# ---- matmul, transpose, load_transpose2d ----

@nki.jit
def mm(x, y, xt):
    o1 = nl.ndarray((x.shape[0], y.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    o2 = nl.ndarray((xt.shape[1], y.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    ty = nl.load(y)
    p = nl.matmul(nl.load(x), ty)                     # x @ y
    assert p.buffer == nl.psum and p.dtype == nl.float32
    p2 = nl.matmul(nl.load(xt), ty, transpose_x=True)   # xt.T @ y
    nl.store(o1, nl.copy(p))
    nl.store(o2, nl.copy(p2))
    return o1, o2


def test_matmul_numpy():
    x = RNG.standard_normal((96, 128)).astype(np.float32)
    y = RNG.standard_normal((128, 200)).astype(np.float32)
    xt = RNG.standard_normal((128, 64)).astype(np.float32)
    o1, o2 = mm(x, y, xt)
    np.testing.assert_allclose(o1, x @ y, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(o2, xt.T @ y, rtol=1e-4, atol=1e-4)
    assert ops(mm, x, y, xt) == ["dma_copy", "dma_copy", "transpose", "tensor_copy", "matmul",
                                 "dma_copy", "matmul", "activation", "dma_copy",
                                 "activation", "dma_copy"]
    # bf16 operands (exact in bf16; products summed in fp32)
    xb = (RNG.integers(-16, 16, (64, 32)) / 4).astype(np.float32)
    yb = (RNG.integers(-16, 16, (32, 48)) / 4).astype(np.float32)
    xtb = (RNG.integers(-16, 16, (32, 16)) / 4).astype(np.float32)
    o1, o2 = mm(nki.typed(xb, nl.bfloat16), nki.typed(yb, nl.bfloat16),
                nki.typed(xtb, nl.bfloat16))
    np.testing.assert_array_equal(o1, xb @ yb)
    np.testing.assert_array_equal(o2, xtb.T @ yb)


@nki.jit
def mm_k(x, y):
    nl.matmul(nl.load(x), nl.load(y), transpose_x=True)


@nki.jit
def mm_hbm(x, y):
    nl.matmul(x, nl.load(y))


def test_matmul_refused():
    x, y = np.zeros((64, 32), np.float32), np.zeros((32, 16), np.float32)
    refused(mm_k, x, y, match=r"nl.matmul: the contraction sizes differ: x \[64, 32\]")
    refused(mm_hbm, x, y, match="nl.matmul: x must be a tensor in SBUF")
    refused(mm_k, np.zeros((32, 64), np.float32), np.zeros((32, 600), np.float32),
            match=r"nl.matmul: y \[32, 600\] must be a 2-D tile of at most \[128, 512\]")


@nki.jit
def tr(x):
    out = nl.ndarray((x.shape[1], x.shape[0]), dtype=nl.float32, buffer=nl.shared_hbm)
    p = nl.transpose(nl.load(x))
    assert p.buffer == nl.psum and p.dtype == x.dtype and p.shape == out.shape
    t = nl.ndarray(p.shape, dtype=nl.float32)
    nisa.tensor_copy(dst=t, src=p)
    nl.store(out, t)
    return out


def test_transpose_numpy():
    x = RNG.standard_normal((128, 96)).astype(np.float32)
    np.testing.assert_array_equal(tr(x), x.T)
    xb = bf16(RNG.standard_normal((40, 128)).astype(np.float32))
    np.testing.assert_array_equal(tr(nki.typed(xb, nl.bfloat16)), xb.T)
    j = json.loads(tpbsim.kernel_json(tr, x))["body"]
    assert [o.get("engine") for o in j if o["op"] == "transpose"] == ["pe"]
    refused(tr, np.zeros((128, 200), np.float32),
            match=r"nl.transpose: x \[128, 200\] must be a 2-D tile of at most \[128, 128\]")


@nki.jit
def ldt(a):
    o1 = nl.ndarray((a.shape[1], a.shape[0]), dtype=nl.float32, buffer=nl.shared_hbm)
    o2 = nl.ndarray((a.shape[1], a.shape[0]), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load_transpose2d(a)
    assert t.buffer == nl.sbuf and t.dtype == a.dtype
    nl.store(o1, t)
    tb = nl.load_transpose2d(a, dtype=nl.bfloat16)
    assert tb.dtype == nl.bfloat16
    nl.store(o2, tb)
    return o1, o2


@nki.jit
def ldt_tile(a):
    nl.load_transpose2d(nl.load(a))


def test_load_transpose2d_numpy():
    a = RNG.standard_normal((256, 128)).astype(np.float32)
    o1, o2 = ldt(a)
    np.testing.assert_array_equal(o1, a.T)
    np.testing.assert_array_equal(o2, bf16(a.T))
    refused(ldt_tile, a[:128], match="nl.load_transpose2d: src must be a tensor in HBM")


# ---- reductions ----

@nki.jit
def reductions(a, b):
    P = a.shape[0]
    shapes = [(P,), (P, 1), (P, 4), (P, 4, 1), (P, 1), (P, 1, 1), (P,), (P, 4), (P, 1)]
    o = [nl.ndarray(s, dtype=nl.float32, buffer=nl.shared_hbm) for s in shapes]
    x, y = nl.load(a), nl.load(b)        # [P, 64], [P, 4, 8]
    m = nl.mean(x, axis=1)
    assert m.dtype == x.dtype and m.shape == (P,)
    nl.store(o[0], m)
    nl.store(o[1], nl.mean(x, axis=-1, keepdims=True))
    nl.store(o[2], nl.mean(y, axis=2))
    v = nl.var(x, axis=1)                 # NKI: always the keepdims shape
    assert v.shape == (P, 1)
    nl.store(o[3], nl.expand_dims(nl.prod(y, axis=2), 2))
    nl.store(o[4], v)
    nl.store(o[5], nl.var(y, axis=[1, 2]))
    nl.store(o[6], nl.prod(x, axis=1))
    nl.store(o[7], nl.all(y, axis=2))
    nl.store(o[8], nl.all(y, axis=(1, 2), dtype=nl.int32).reshape((P, 1)))
    return tuple(o)


def test_reductions_numpy():
    a = RNG.uniform(-2, 2, (128, 64)).astype(np.float32)
    b = RNG.uniform(0.5, 1.5, (128, 4, 8)).astype(np.float32)
    b[RNG.random((128, 4, 8)) < 0.02] = 0.0
    b[:3] = 1.0   # some rows with no zero at all
    r = reductions(a, b)
    np.testing.assert_allclose(r[0], a.mean(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r[1], a.mean(1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r[2], b.mean(2), rtol=1e-5)
    np.testing.assert_allclose(r[3], b.prod(2, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(r[4], a.var(1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(r[5], b.var((1, 2), keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(r[6], a.prod(1), rtol=1e-4)
    np.testing.assert_array_equal(r[7], b.all(2).astype(np.float32))
    np.testing.assert_array_equal(r[8], b.all((1, 2), keepdims=True).reshape(128, 1))
    assert 0 < r[7].mean() < 1


@nki.jit
def mean_bf16(a):
    out = nl.ndarray((a.shape[0],), dtype=nl.float32, buffer=nl.shared_hbm)
    m = nl.mean(nl.load(a), axis=1)
    assert m.dtype == nl.bfloat16
    nl.store(out, m)
    return out


def test_mean_bf16_numpy():
    # bf16 data, float32 intermediates: the mean is rounded to bf16 once
    a = bf16(RNG.uniform(-3, 3, (128, 96)).astype(np.float32))
    got = mean_bf16(nki.typed(a, nl.bfloat16))
    want = bf16(a.astype(np.float64).mean(1).astype(np.float32))
    assert np.mean(got == want) > 0.98   # float32 sums may round across a bf16 tie
    np.testing.assert_allclose(got, want, rtol=2 ** -7)


@nki.jit
def mean_partition(a):
    nl.mean(nl.load(a), axis=0)


@nki.jit
def mean_middle(a):
    nl.mean(nl.load(a), axis=1)


@nki.jit
def prod_middle(a):
    nl.prod(nl.load(a), axis=[1])


@nki.jit
def var_middle(a):
    nl.var(nl.load(a), axis=1)


def test_reductions_refused():
    refused(mean_partition, np.zeros((128, 8), np.float32),
            match=r"nl.mean: axis=0 on the 2-D tile \[128, 8\]: axis 0 is the partition axis")
    refused(mean_middle, np.zeros((128, 4, 8), np.float32),
            match=r"nl.mean: axis=1 on the 3-D tile .*the last contiguous free dim")
    refused(prod_middle, np.zeros((128, 4, 8), np.float32),
            match=r"nl.prod: axis=\[1\] on the 3-D tile .*the last contiguous free dim")
    refused(var_middle, np.zeros((128, 4, 8), np.float32),
            match=r"nl.var: axis=1 on the 3-D tile .*the last contiguous free dim")


# ---- softmax, rms_norm, dropout ----

@nki.jit
def norms(a, w, w1):
    o = [nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm) for _ in range(3)]
    x = nl.load(a)
    s = nl.softmax(x, axis=1)
    assert s.dtype == x.dtype and s.shape == x.shape
    nl.store(o[0], s)
    nl.store(o[1], nl.rms_norm(x, nl.load(w), axis=1, n=a.shape[1]))
    nl.store(o[2], nl.rms_norm(x, nl.load(w1), axis=[1], n=100, epsilon=0.5,
                               compute_dtype=nl.float32))
    return tuple(o)


def test_softmax_rms_norm_numpy():
    a = RNG.standard_normal((128, 64)).astype(np.float32) * 3
    w = RNG.standard_normal((128, 64)).astype(np.float32)
    w1 = RNG.standard_normal((1, 64)).astype(np.float32)
    s, r, r1 = norms(a, w, w1)
    e = np.exp(a.astype(np.float64) - a.max(1, keepdims=True))
    np.testing.assert_allclose(s, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    a64 = a.astype(np.float64)
    np.testing.assert_allclose(r, a64 / np.sqrt((a64 * a64).sum(1, keepdims=True) / 64 + 1e-6)
                               * w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r1, a64 / np.sqrt((a64 * a64).sum(1, keepdims=True) / 100 + 0.5)
                               * w1, rtol=1e-5, atol=1e-6)


@nki.jit
def softmax_middle(a):
    nl.softmax(nl.load(a), axis=1)   # the middle free dim of a 3-D tile


@nki.jit
def rms_bf16(a):
    x = nl.load(a)
    nl.rms_norm(x, x, axis=1, n=8, compute_dtype=nl.bfloat16)


@nki.jit
def rms_w(a, w):
    nl.rms_norm(nl.load(a), nl.load(w), axis=1, n=8)


def test_softmax_rms_norm_refused():
    z = np.zeros((128, 8), np.float32)
    refused(softmax_middle, np.zeros((128, 4, 8), np.float32),
            match=r"nl.softmax: axis=1 on the 3-D tile .*the last contiguous free dim")
    refused(rms_bf16, z, match="nl.rms_norm: compute_dtype='bfloat16' is not supported")
    refused(rms_w, z, np.zeros((128, 1), np.float32),
            match=r"nl.rms_norm: w \[128, 1\] must have x's shape")


@nki.jit
def drop(a):
    o = [nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm) for _ in range(3)]
    x = nl.load(a)
    d = nl.dropout(x, 0.25)
    assert d.shape == x.shape and d.dtype == x.dtype
    nl.store(o[0], d)
    nl.store(o[1], nl.dropout(x, 0.0))
    nl.store(o[2], nl.dropout(x, 1.0, dtype=nl.bfloat16))
    return tuple(o)


@nki.jit
def drop_tile(a, r):
    o = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(o, nl.dropout(nl.load(a), nl.load(r)))
    return o


def test_dropout_numpy():
    a = RNG.uniform(1, 2, (128, 512)).astype(np.float32)
    d, keep, gone = drop(a)
    kept = d != 0
    np.testing.assert_array_equal(d[kept], a[kept])      # unscaled, as the stub documents
    assert abs(1 - kept.mean() - 0.25) < 0.01
    np.testing.assert_array_equal(keep, a)
    np.testing.assert_array_equal(gone, np.zeros_like(a))
    # a [P, 1] rate tile: rate 0 keeps a row, 1 drops it
    r = (np.arange(128) % 2).astype(np.float32).reshape(128, 1)
    want = a.copy()
    want[1::2] = 0
    np.testing.assert_array_equal(drop_tile(a, r), want)


# ---- constants ----

@nki.jit
def ident(a):
    o1 = nl.ndarray((128, 128), dtype=nl.uint8, buffer=nl.shared_hbm)
    o2 = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    o3 = nl.ndarray((32, 32), dtype=nl.float32, buffer=nl.shared_hbm)
    i8 = nl.shared_identity_matrix(128)
    assert i8.dtype == nl.uint8 and i8.buffer == nl.sbuf
    nl.store(o1, i8)
    nl.store(o2, nl.shared_identity_matrix(n=64, dtype=nl.float32))
    t = nl.ndarray((32, 32), dtype=nl.float32)
    assert nl.shared_identity_matrix(32, nl.float32, dst=t) is t
    nl.store(o3, t)
    return o1, o2, o3


@nki.jit
def ident_big(a):
    nl.shared_identity_matrix(256)


def test_shared_identity_matrix_numpy():
    o1, o2, o3 = ident(np.zeros((1, 1), np.float32))
    assert o1.dtype == np.uint8
    np.testing.assert_array_equal(o1, np.eye(128, dtype=np.uint8))
    np.testing.assert_array_equal(o2, np.eye(64, dtype=np.float32))
    np.testing.assert_array_equal(o3, np.eye(32, dtype=np.float32))
    refused(ident_big, np.zeros((1, 1), np.float32),
            match="nl.shared_identity_matrix: n must be an integer in 1..128, got 256")


C = (np.arange(128 * 8).reshape(128, 8) / 4 - 50).astype(np.float32)


@nki.jit
def consts(a, path):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    c = nl.shared_constant(C)
    assert c.buffer == nl.shared_hbm and c.shape == C.shape and c.dtype == nl.float32
    cb = nl.shared_constant(nki.typed(np.full((128, 8), 1.0 + 2.0 ** -10, np.float32),
                                      nl.bfloat16))
    ci = nl.shared_constant(np.arange(8, dtype=np.int32).reshape(1, 8))
    cf = nl.shared_constant(path)
    t = nl.load(a)
    for k in (c, cb, cf):
        nisa.tensor_tensor(dst=t, data1=t, data2=nl.load(k, dtype=nl.float32), op=nl.add)
    w = nl.broadcast_to(nl.load(ci, dtype=nl.float32), (128, 8))
    nisa.tensor_tensor(dst=t, data1=t, data2=w, op=nl.add)
    nl.store(out, t)
    return out


@nki.jit
def const_f64(a):
    nl.shared_constant(np.zeros((4, 4)))


@nki.jit
def const_inf(a):
    nl.shared_constant(np.full((4, 4), np.inf, np.float32))


def test_shared_constant_numpy(tmp_path):
    a = RNG.standard_normal((128, 8)).astype(np.float32)
    f = RNG.integers(-100, 100, (128, 8)).astype(np.int16)
    np.save(tmp_path / "f.npy", f)
    path = str(tmp_path / "f.npy")
    want = ((a + C) + np.float32(1.0)) + f.astype(np.float32) + np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(consts(a, path), want)
    j = json.loads(tpbsim.kernel_json(consts, a, path))
    assert [(c["dtype"], np.shape(c["value"])) for c in j["constants"]] == [
        ("float32", (128, 8)), ("bfloat16", (128, 8)), ("int32", (1, 8)), ("int16", (128, 8))]
    refused(const_f64, a, match="nl.shared_constant: a 2-D float64 constant is not supported")
    refused(const_inf, a, match="nl.shared_constant: the constant holds inf or NaN")


# ---- gather_flattened, rand, random_seed ----

@nki.jit
def gather(d, i):
    o1 = nl.ndarray(i.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    o2 = nl.ndarray(i.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    g = nl.gather_flattened(nl.load(d), nl.load(i))
    assert g.shape == i.shape and g.dtype == d.dtype
    nl.store(o1, g)
    gb = nl.gather_flattened(data=nl.load(d), indices=nl.load(i), dtype=nl.bfloat16)
    assert gb.dtype == nl.bfloat16
    nl.store(o2, gb)
    return o1, o2


@nki.jit
def gather_axis(d, i):
    nl.gather_flattened(nl.load(d), nl.load(i), axis=1)


def test_gather_flattened_numpy():
    d = RNG.standard_normal((32, 64)).astype(np.float32)
    i = RNG.integers(0, 64, (32, 10)).astype(np.uint32)
    g, gb = gather(d, i)
    want = np.take_along_axis(d, i.astype(np.int64), axis=-1)   # the stub's example check
    np.testing.assert_array_equal(g, want)
    np.testing.assert_array_equal(gb, bf16(want))
    refused(gather_axis, d, i, match="nl.gather_flattened: axis=1 is not supported")


def test_gather_flattened_int32_indices_numpy():
    """NKI 0.x takes integer indices: int32 ones gather as uint32 do, and a
    negative one stops the run naming the index (past data's end)."""
    d = RNG.standard_normal((32, 64)).astype(np.float32)
    i = RNG.integers(0, 64, (32, 10)).astype(np.int32)
    g, _ = gather(d, i)
    np.testing.assert_array_equal(g, np.take_along_axis(d, i.astype(np.int64), axis=-1))
    i[3, 4] = -1
    with pytest.raises(Exception, match="outside data's 64 elements"):
        gather(d, i)


@nki.jit
def rand_seeded(s, s2):
    o = [nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm) for _ in range(4)]
    seed = nl.load(s)
    nl.random_seed(seed)
    r = nl.rand((128, 512), dtype=nl.float32)
    assert r.buffer == nl.sbuf and r.shape == (128, 512)
    nl.store(o[0], r)
    nl.random_seed(seed)                     # the same seed: the same values
    nl.store(o[1], nl.rand((128, 512), dtype=nl.float32, buffer=nl.psum))
    nl.store(o[2], nl.rand((128, 512), dtype=nl.float32))
    nl.random_seed(nl.load(s2))
    nl.store(o[3], nl.rand((128, 512), dtype=nl.float32))
    return tuple(o)


@nki.jit
def rand_hbm(s):
    nl.rand((128, 4), dtype=nl.float32, buffer=nl.shared_hbm)


@nki.jit
def seed_hbm(s):
    nl.random_seed(s)


def test_rand_random_seed_numpy():
    s = np.array([[42]], np.int32)
    a, b, c, d = rand_seeded(s, np.array([[43]], np.int32))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c) and not np.array_equal(a, d)
    for x in (a, c, d):
        assert 0.0 <= x.min() and x.max() < 1.0
        assert abs(x.mean() - 0.5) < 0.01 and abs(x.var() - 1 / 12) < 0.005
    assert [o for o in ops(rand_seeded, s, s) if o != "dma_copy"] == [
        "set_rng_seed", "rand2", "set_rng_seed", "rand2", "rand2", "set_rng_seed", "rand2"]
    refused(rand_hbm, s, match="nl.rand: buffer='shared_hbm' is not supported")
    refused(seed_hbm, s, match="nl.random_seed: seed must be a tensor in SBUF/PSUM")


# ---- in a traced-once loop (docs/python.md "Loops") ----

@nki.jit
def looped(a, w):
    n = a.shape[0] // 128
    o1 = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    o2 = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
    o3 = nl.ndarray((a.shape[0], w.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    tw = nl.load(w)
    for i in nl.affine_range(n):
        x = nl.load(a[i * 128:(i + 1) * 128, :])
        nl.store(o1[i * 128:(i + 1) * 128, :], nl.softmax(x, axis=1))
        nl.store(o2[i * 128:(i + 1) * 128, :], nl.var(x, axis=1))
        ident = nl.shared_identity_matrix(128, dtype=nl.float32)
        y = nl.add(nl.copy(nl.matmul(x, tw)), ident[:, 0:64])
        nl.store(o3[i * 128:(i + 1) * 128, :], y)
    return o1, o2, o3


def test_in_traced_once_loop_numpy():
    a = RNG.standard_normal((384, 64)).astype(np.float32)
    w = RNG.standard_normal((64, 64)).astype(np.float32)
    assert [o["op"] for o in json.loads(tpbsim.kernel_json(looped, a, w))["body"]].count(
        "affine_range") == 1
    s, v, m = looped(a, w)
    e = np.exp(a.astype(np.float64) - a.max(1, keepdims=True))
    np.testing.assert_allclose(s, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(v, a.var(1, keepdims=True), rtol=1e-5)
    want = a @ w + np.tile(np.eye(128, 64, dtype=np.float32), (3, 1))
    np.testing.assert_allclose(m, want, rtol=1e-4, atol=1e-4)


# ---- refused forms ----

@nki.jit
def loop_it(a):
    nl.while_loop(nl.load(a), lambda r: r)


def test_while_loop_needs_a_register():
    # (nl.while_loop itself runs: test_dynamic_loops.py)
    refused(loop_it, np.zeros((4, 4), np.float32),
            match="nl.while_loop: init must be a register")


def test_nki_object_and_type_names():
    """NKI 0.x kernel libraries derive their configuration classes from
    nl.NKIObject (plain and @dataclass) and annotate with nl.tensor /
    nki.dtype: a kernel using them traces and computes as without them."""
    import dataclasses

    class Cfg(nl.NKIObject):
        def __init__(self, scale):
            self.scale = scale

    @dataclasses.dataclass
    class Tiles(nl.NKIObject):
        rows: int = 128
        cols: int = 64

    kw = nl.NKIObject(a=1, b="x")
    assert (kw.a, kw.b) == (1, "x")
    assert nl.tensor is nki.tensor and nl.dtype is nki.dtype

    @nki.jit
    def scaled(x: nl.tensor, cfg: Cfg, t: Tiles, dt: nki.dtype = nl.float32) -> nl.tensor:
        out = nl.ndarray(x.shape, dtype=dt, buffer=nl.shared_hbm)
        s = nl.ndarray((t.rows, t.cols), dtype=dt, buffer=nl.sbuf)
        nisa.dma_copy(dst=s, src=x)
        assert isinstance(s, nl.tensor)
        nisa.tensor_scalar(dst=s, data=s, op0=nl.multiply, operand0=cfg.scale)
        nisa.dma_copy(dst=out, src=s)
        return out

    x = RNG.standard_normal((128, 64)).astype(np.float32)
    assert np.array_equal(scaled(x, Cfg(3.0), Tiles()), x * np.float32(3.0))
