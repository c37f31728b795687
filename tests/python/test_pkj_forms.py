"""Forms of public NKI kernels (pkJ, pkK), each against NumPy: nl.cos /
nl.tan and nisa.activation(op=nl.cos / nl.tan) (equiformer's rotation
kernels); a parameter or tile named `index` is a plain tensor, not a gather
view (equiformer's scatter_reduce); a shape given with whole floats,
`h / pool` (a CS149 conv kernel's pooling reshape)."""
import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

from conftest import sbuf_copy


def _f32(fn, x):
    """fn in float64, rounded once to float32 (how the Activation engine
    evaluates: docs/semantics.md "Activation")."""
    return fn(x.astype(np.float64)).astype(np.float32)


# ---- nl.cos / nl.tan ----

@nki.jit
def trig_nl(a):
    out = nl.ndarray((2,) + a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = sbuf_copy(a)
    nisa.dma_copy(dst=out[0], src=nl.cos(t))
    nisa.dma_copy(dst=out[1], src=nl.tan(t))
    return out


@nki.jit
def trig_act(a):
    """cos(2 a) and tan(0.5 a + 0.25): the activation's scale and bias."""
    out = nl.ndarray((2,) + a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = sbuf_copy(a)
    c = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.activation(dst=c, op=nl.cos, data=t, scale=2.0)
    g = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.activation(dst=g, op=nl.tan, data=t, scale=0.5, bias=0.25)
    nisa.dma_copy(dst=out[0], src=c)
    nisa.dma_copy(dst=out[1], src=g)
    return out


@pytest.mark.parametrize("target", ["trn1", "trn2"])
def test_nl_cos_tan_numpy(target):
    # cos over [-3, 3] (sin's golden range) plus large arguments (no range
    # reduction is modelled, so plain cos there too); tan inside (-pi/2, pi/2)
    rng = np.random.default_rng(1)
    x = rng.uniform(-1.5, 1.5, (128, 96)).astype(np.float32)
    x[:, :8] = rng.uniform(-3.0, 3.0, (128, 8))
    x[0, :4] = [0.0, -0.0, 1.25, -1.4]
    got = tpbsim.simulate(trig_nl, x, target=target).outputs
    np.testing.assert_allclose(got[0], _f32(np.cos, x), rtol=2e-7, atol=1e-7)
    np.testing.assert_allclose(got[1], _f32(np.tan, x), rtol=2e-7, atol=1e-7)
    assert got[0][0, 0] == 1.0 and got[1][0, 0] == 0.0   # NKI's own examples


def test_activation_cos_tan_numpy():
    rng = np.random.default_rng(2)
    x = rng.uniform(-3.0, 3.0, (128, 64)).astype(np.float32)
    got = tpbsim.simulate(trig_act, x).outputs
    z = np.float32(2.0) * x
    np.testing.assert_allclose(got[0], _f32(np.cos, z), rtol=2e-7, atol=1e-7)
    z = (np.float32(0.5) * x + np.float32(0.25)).astype(np.float32)
    np.testing.assert_allclose(got[1], _f32(np.tan, z), rtol=1e-6, atol=1e-7)


def test_cos_bf16_numpy():
    """A bf16 tile: the result is fp32 cos rounded to bf16."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-3.0, 3.0, (64, 32)).astype(nl.bfloat16)
    got = tpbsim.simulate(trig_nl, x).outputs
    ref = np.cos(x.astype(np.float64))
    np.testing.assert_allclose(got[0].astype(np.float64), ref, rtol=8e-3, atol=4e-3)


# ---- a tensor named `index` ----

def _reshaped(name):
    """A kernel whose parameter is called name: name.reshape((1, N))."""
    src = ("def k(%s):\n"
           "    N = %s.shape[0]\n"
           "    out = nl.ndarray((2, N), dtype=%s.dtype, buffer=nl.shared_hbm)\n"
           "    t = nl.ndarray((1, N), dtype=%s.dtype, buffer=nl.sbuf)\n"
           "    nisa.dma_copy(dst=t, src=%s.reshape((1, N)))\n"
           "    nisa.dma_copy(dst=out[0:1], src=t)\n"
           "    u = nl.ndarray((1, N), dtype=nl.float32, buffer=nl.sbuf)\n"
           "    nisa.dma_copy(dst=u, src=%s.view(nl.float32).reshape((1, N)))\n"
           "    nisa.dma_copy(dst=out[1:2].view(nl.float32), src=u)\n"
           "    assert not %s.is_indirect()\n"
           "    return out\n") % ((name,) * 7)
    ns = {"nl": nl, "nisa": nisa}
    exec(compile(src, "<kernel %s>" % name, "exec"), ns)
    return nki.jit(ns["k"])


@pytest.mark.parametrize("name", ["index", "idx_index", "index_", "indices", "x"])
def test_parameter_named_index_numpy(name):
    """equiformer's scatter_reduce: index.reshape((1, N)) (and its bytes
    as float32, .view), whatever the parameter is called."""
    a = np.arange(40, dtype=np.int32) * 3 - 7
    got = _reshaped(name)(a)
    np.testing.assert_array_equal(got, np.stack([a, a]))


@nki.jit
def tile_named_index(a, idx):
    """An SBUF tile named 'index' (reshaped, expanded, viewed) and a gather
    whose index tile is also named 'index'."""
    out = nl.ndarray((2, 128, 16), dtype=a.dtype, buffer=nl.shared_hbm)
    index = nl.ndarray((128, 16), dtype=a.dtype, buffer=nl.sbuf, name="index")
    nisa.dma_copy(dst=index, src=a[0:128, 0:16])
    assert not index.is_indirect()
    r = index.reshape((128, 4, 4)).view(nl.int32).view(nl.float32)
    e = nl.expand_dims(index, 1)
    s = nl.ndarray((128, 4, 4), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=s, data1=r, data2=e.reshape((128, 4, 4)), op=nl.add)
    nisa.dma_copy(dst=out[0], src=s.reshape((128, 16)))
    ix = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.sbuf, name="index")
    nisa.dma_copy(dst=ix, src=idx)
    g = a[:, 0:16].vector_select(0, ix)
    assert g.is_indirect()   # a real gather still is one
    t = nl.ndarray((128, 16), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=g)
    nisa.dma_copy(dst=out[1], src=t)
    return out


def test_tile_named_index_numpy():
    a = np.arange(200 * 16, dtype=np.float32).reshape(200, 16) / 7
    idx = ((np.arange(128) * 37) % 200).astype(np.int32).reshape(128, 1)
    got = tile_named_index(a, idx)
    np.testing.assert_array_equal(got[0], 2 * a[0:128, 0:16])
    np.testing.assert_array_equal(got[1], a[idx[:, 0], 0:16])


# ---- shapes given as whole floats ----

@nki.jit
def pool_float_shape(x):
    """msthaniana's CS149 conv: t.reshape((128, h / 2, 2, w / 2, 2)), and
    tiles made with float sizes."""
    h, w = x.shape[1], x.shape[2]
    out = nl.ndarray((128, h // 2, w // 2), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((nl.par_dim(128.0), h, w / 1), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    r = t.reshape((128, h / 2, 2, w / 2, 2))             # (128, 1.0, 2, 7.0, 2)
    p = nl.zeros((128, h / 2, np.float32(w / 2)), dtype=x.dtype)
    # (beta-1's call form, as the kernel's: NKI 0.x reduces only the last dims)
    p[:, :, :] = nisa.tensor_reduce(nl.max, r, axis=[2, 4])
    q = nl.full((128.0, h / 2, w / 2), 1.0, dtype=x.dtype)
    nisa.tensor_tensor(dst=p, data1=p, data2=q, op=nl.add)
    nisa.dma_copy(dst=out, src=p.reshape_dim(2, (w / 2, 1.0)).reshape((128, h / 2, w / 2)))
    return out


@pytest.mark.parametrize("h, w", [(2, 14), (4, 6)])
def test_reshape_whole_float_shape_numpy(h, w):
    x = np.random.default_rng(4).standard_normal((128, h, w)).astype(np.float32)
    ref = x.reshape(128, h // 2, 2, w // 2, 2).max(axis=(2, 4)) + np.float32(1.0)
    np.testing.assert_array_equal(pool_float_shape(x), ref)


@pytest.mark.parametrize("make, match", [
    (lambda t: t.reshape((128, 7.5, 4)), r"shape must be an integer, got 7.5"),
    (lambda t: t.reshape_dim(1, (2.5, 12)), r"shape must be an integer, got 2.5"),
    (lambda t: nl.ndarray((128, 7.5), dtype=nl.float32), r"bad shape"),
    (lambda t: nl.zeros((128, 30 / 4), dtype=nl.float32), r"bad shape"),
    (lambda t: nl.ndarray((nl.par_dim(12.5), 4), dtype=nl.float32), r"par_dim.*12.5"),
])
def test_non_whole_float_shape_refused(make, match):
    def k(a):
        t = sbuf_copy(a)
        make(t)
        return nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    with pytest.raises(tpbsim.NkiError, match=match):
        nki.jit(k)(np.zeros((128, 30), np.float32))
