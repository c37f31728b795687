"""NKI beta-1 mask= on the nl functions (docs/python.md "mask= on nl
functions"): a mask that names no index (a condition on loop variables
only, a Python bool once the loop is traced per iteration) is no mask when
True and writes nothing when False, on every function that takes mask=;
nl.matmul's index mask is over its result's indices, nl.transpose's over
its input's.  Against NumPy; targets are pre-filled so "nothing written"
shows."""
import numpy as np
import pytest

from tpbsim import nki
from tpbsim.nki._state import NkiError
import tpbsim.nki.language as nl

RNG = np.random.default_rng(5)
P, F = 128, 64


def _np_softmax(x):
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


# name -> (the call on the tile a [P, F] (and the HBM input x, the index
# tile g), the result's shape, NumPy's result on x)
CALLS = {
    "sum": (lambda a, x, g, m: nl.sum(a, axis=1, keepdims=True, mask=m), (P, 1),
            lambda x: x.sum(1, keepdims=True)),
    "max": (lambda a, x, g, m: nl.max(a, axis=1, keepdims=True, mask=m), (P, 1),
            lambda x: x.max(1, keepdims=True)),
    "min": (lambda a, x, g, m: nl.min(a, axis=1, keepdims=True, mask=m), (P, 1),
            lambda x: x.min(1, keepdims=True)),
    "prod": (lambda a, x, g, m: nl.prod(a, axis=1, keepdims=True, mask=m), (P, 1),
             lambda x: x.prod(1, keepdims=True)),
    "mean": (lambda a, x, g, m: nl.mean(a, axis=1, keepdims=True, mask=m), (P, 1),
             lambda x: x.mean(1, keepdims=True)),
    "all": (lambda a, x, g, m: nl.all(a, axis=1, dtype=nl.float32, mask=m)
            .reshape((P, 1)), (P, 1), lambda x: np.ones((P, 1))),
    "var": (lambda a, x, g, m: nl.var(a, axis=1, mask=m), (P, 1),
            lambda x: x.var(1, keepdims=True)),
    "softmax": (lambda a, x, g, m: nl.softmax(a, axis=1, mask=m), (P, F), _np_softmax),
    "rms_norm": (lambda a, x, g, m: nl.rms_norm(a, nl.add(a, 1.0), axis=1, n=F, mask=m),
                 (P, F), lambda x: x / np.sqrt((x * x).mean(1, keepdims=True) + 1e-6) * (x + 1)),
    "transpose": (lambda a, x, g, m: nl.transpose(a, mask=m), (F, P), lambda x: x.T),
    "matmul": (lambda a, x, g, m: nl.matmul(a, a, transpose_x=True, mask=m), (F, F),
               lambda x: x.T @ x),
    "where": (lambda a, x, g, m: nl.where(nl.greater(a, 1.0), a, 0.0, mask=m), (P, F),
              lambda x: np.where(x > 1.0, x, 0.0)),
    "load_transpose2d": (lambda a, x, g, m: nl.load_transpose2d(x, mask=m), (F, P),
                         lambda x: x.T),
    "gather_flattened": (lambda a, x, g, m: nl.gather_flattened(a, g, mask=m), (P, F),
                         lambda x: x[:, ::-1]),
    "dropout": (lambda a, x, g, m: nl.dropout(a, 0.0, mask=m), (P, F), lambda x: x),
}


def _kernel(name):
    call, shape, _ = CALLS[name]

    @nki.jit
    def k(x, g):
        out = nl.ndarray((2,) + shape, dtype=nl.float32, buffer=nl.shared_hbm)
        gi = nl.load(g)
        for t in nl.affine_range(2):
            on = t * P < P   # True for t = 0, False for t = 1: a bool per iteration
            a = nl.load(x)
            r = nl.full(shape, -1.0, dtype=nl.float32, buffer=nl.sbuf)
            r[...] = call(a, x, gi, on)
            nl.store(out[t], r)
        return out
    return k


@pytest.mark.parametrize("name", sorted(CALLS))
def test_nl_condition_mask_numpy(name):
    x = RNG.uniform(0.9, 1.1, (P, F)).astype(np.float32)
    g = np.tile(np.arange(F - 1, -1, -1, dtype=np.uint32), (P, 1))
    got = _kernel(name)(x, g)
    want = CALLS[name][2](x.astype(np.float64))
    np.testing.assert_allclose(got[0], want, rtol=2e-3, atol=1e-5)
    np.testing.assert_array_equal(got[1], -1.0)   # mask False: nothing written


def test_nl_condition_mask_on_no_result_functions():
    """nl.device_print and nl.random_seed take the condition too (False:
    nothing printed / seeded)."""
    @nki.jit
    def k(x):
        out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
        a = nl.load(x)
        nl.device_print("never", a, mask=False)
        s = nl.full((1, 1), 7, dtype=nl.int32, buffer=nl.sbuf)
        nl.random_seed(s, mask=True)
        nl.store(out, a)
        return out
    x = RNG.random((P, F), np.float32)
    np.testing.assert_array_equal(k(x), x)


@pytest.mark.parametrize("name", ["var", "softmax", "dropout", "gather_flattened"])
def test_nl_index_mask_refused_naming_the_function(name):
    """(nl.rms_norm takes bounds on single indices: test_pki_forms.py)"""
    call = CALLS[name][0]

    @nki.jit
    def k(x, g):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:P, 0:F]
        call(nl.load(x), x, nl.load(g), i_p < 64)
        nl.store(out, nl.load(x))
        return out
    with pytest.raises(NkiError, match=r"nl\.%s: argument 'mask': an index-expression mask "
                                       r"is not supported" % name):
        k(RNG.random((P, F), np.float32), np.zeros((P, F), np.uint32))


# over the result [M, N] = [F, F] of matmul (rows M, columns N); over the
# input [P, F] of transpose
MASKS = {
    "rows": lambda i, j: i < 40,
    "cols": lambda i, j: j >= 8,
    "both": lambda i, j: (i < 40) & (j < 50),
    "all": lambda i, j: (i < 128) & (j < 128),
}


def _keep(mask_of, shape):
    return np.broadcast_to(mask_of(np.arange(shape[0])[:, None],
                                   np.arange(shape[1])[None, :]), shape)


@pytest.mark.parametrize("mask", sorted(MASKS))
def test_nl_matmul_index_mask_over_result_numpy(mask):
    """nl.matmul(x, y, transpose_x=True, mask=): the mask bounds the
    result's indices (NKI's docs: a mask cannot tell x's free axis from
    y's); assigned and accumulated (+=) into PSUM, the other elements keep
    their value."""
    @nki.jit
    def k(x, y):
        out = nl.ndarray((2, F, F), dtype=nl.float32, buffer=nl.shared_hbm)
        i, j = nl.mgrid[0:F, 0:F]
        a, b = nl.load(x), nl.load(y)
        r = nl.full((F, F), -1.0, dtype=nl.float32, buffer=nl.psum)
        r[...] = nl.matmul(a, b, transpose_x=True, mask=MASKS[mask](i, j))
        s = nl.zeros((F, F), dtype=nl.float32, buffer=nl.psum)
        for kk in nl.affine_range(2):
            s[...] += nl.matmul(a, b, transpose_x=True, mask=MASKS[mask](i, j))
        nl.store(out[0], nl.copy(r))
        nl.store(out[1], nl.copy(s))
        return out
    x, y = (RNG.standard_normal((P, F)).astype(np.float32) for _ in range(2))
    keep = _keep(MASKS[mask], (F, F))
    got = k(x, y)
    np.testing.assert_allclose(got[0], np.where(keep, x.T @ y, -1.0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[1], np.where(keep, 2 * (x.T @ y), 0.0), rtol=1e-4,
                               atol=1e-4)


@pytest.mark.parametrize("mask", sorted(MASKS))
def test_nl_transpose_index_mask_over_input_numpy(mask):
    """nl.transpose(x, mask=): the mask bounds x's indices, as
    nisa.nc_transpose's; the result gets the transposed rectangle."""
    @nki.jit
    def k(x):
        out = nl.ndarray((F, P), dtype=nl.float32, buffer=nl.shared_hbm)
        i, j = nl.mgrid[0:P, 0:F]
        r = nl.full((F, P), -1.0, dtype=nl.float32, buffer=nl.psum)
        r[...] = nl.transpose(nl.load(x), mask=MASKS[mask](i, j))
        nl.store(out, nl.copy(r))
        return out
    x = RNG.standard_normal((P, F)).astype(np.float32)
    np.testing.assert_array_equal(k(x), np.where(_keep(MASKS[mask], (P, F)), x, -1.0).T)
