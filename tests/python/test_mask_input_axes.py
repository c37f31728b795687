"""NKI beta-1 mask= of an op whose dst axes are not its input's in order
(docs/python.md "mask= on nl functions", "Beta-1 call forms"): the mask's
comparisons bound the INPUT's indices (NKI: "indices along one of the
input tile axes"), so a transpose writes the transposed rectangle and a
reduction reduces over the indices a bound on a reduced axis keeps.  Each
op against NumPy, with masks that cut rows, columns, both, and none; the
rest of the target keeps its value (it is pre-filled)."""
import numpy as np
import pytest

from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(11)

# over the input's indices i (partitions) and j (free); each works on
# nl.arange expressions and on NumPy index grids
MASKS = {
    "rows": lambda i, j: i < 100,
    "cols": lambda i, j: j >= 8,
    "both": lambda i, j: (i < 100) & (j < 40),
    "all": lambda i, j: (i < 128) & (j < 64),
}
B, N = 128, 64


def _keep(mask_of, b=B, n=N):
    return np.broadcast_to(mask_of(np.arange(b)[:, None], np.arange(n)[None, :]), (b, n))


def _x(b=B, n=N):
    return RNG.standard_normal((b, n)).astype(np.float32)


@pytest.mark.parametrize("mask", sorted(MASKS))
@pytest.mark.parametrize("eng", ["tensor", "vector"])
def test_nc_transpose_mask_over_input_numpy(mask, eng):
    """[B, N] -> [N, B] (non-square): dst gets the transposed rectangle."""
    b, n = (B, N) if eng == "tensor" else (32, 16)
    mask_of = MASKS[mask] if eng == "tensor" else (
        lambda i, j: MASKS[mask](i * 4, j * 4))   # the same cuts on a 32 x 16 tile

    @nki.jit
    def k(x):
        out = nl.ndarray((n, b), dtype=x.dtype, buffer=nl.shared_hbm)
        i = nl.arange(b)[:, None]
        j = nl.arange(n)[None, :]
        a = nl.load(x[i, j])
        r = nl.full((n, b), -1.0, dtype=nl.float32,
                    buffer=nl.psum if eng == "tensor" else nl.sbuf)
        r[:, :] = nisa.nc_transpose(a[i, j], mask=mask_of(i, j),
                                    engine=getattr(nisa, eng + "_engine"))
        nl.store(out, nl.copy(r))
        return out
    x = _x(b, n)
    keep = _keep(mask_of, b, n)
    np.testing.assert_array_equal(k(x), np.where(keep, x, -1.0).T)


@pytest.mark.parametrize("mask", sorted(MASKS))
def test_nc_matmul_is_transpose_mask_over_stationary_numpy(mask):
    """is_transpose (dst = stationary.T): the mask is over stationary's
    indices, as nc_transpose's."""
    @nki.jit
    def k(x, ident):
        out = nl.ndarray((N, B), dtype=x.dtype, buffer=nl.shared_hbm)
        i = nl.arange(B)[:, None]
        j = nl.arange(N)[None, :]
        a = nl.load(x[i, j])
        r = nl.full((N, B), -1.0, dtype=nl.float32, buffer=nl.psum)
        r[:, :] = nisa.nc_matmul(a[i, j], nl.load(ident), is_transpose=True,
                                 mask=MASKS[mask](i, j))
        nl.store(out, nl.copy(r))
        return out
    x = _x()
    np.testing.assert_array_equal(k(x, np.eye(B, dtype=np.float32)),
                                  np.where(_keep(MASKS[mask]), x, -1.0).T)


@pytest.mark.parametrize("mask", sorted(MASKS))
def test_dma_transpose_and_load_transpose2d_mask_numpy(mask):
    """A DMA transpose takes bounds on single indices of its source: the
    rectangle is moved, the rest of the target keeps its value."""
    @nki.jit
    def k(x):
        out = nl.ndarray((2, N, B), dtype=x.dtype, buffer=nl.shared_hbm)
        i = nl.arange(B)[:, None]
        j = nl.arange(N)[None, :]
        r = nl.full((N, B), -1.0, dtype=nl.float32, buffer=nl.sbuf)
        r[:, :] = nisa.dma_transpose(x[i, j], mask=MASKS[mask](i, j))
        nl.store(out[0], r)
        s = nl.full((N, B), -1.0, dtype=nl.float32, buffer=nl.sbuf)
        s[:, :] = nl.load_transpose2d(x[i, j], mask=MASKS[mask](i, j))
        nl.store(out[1], s)
        return out
    x = _x()
    want = np.where(_keep(MASKS[mask]), x, -1.0).T
    got = k(x)
    np.testing.assert_array_equal(got[0], want)
    np.testing.assert_array_equal(got[1], want)


@pytest.mark.parametrize("mask", sorted(MASKS))
@pytest.mark.parametrize("keepdims", [False, True])
def test_tensor_reduce_mask_over_input_numpy(mask, keepdims):
    """A bound on the reduced axis reduces over the columns it keeps; one on
    the partitions masks the result (the other rows keep their value)."""
    @nki.jit
    def k(x):
        out = nl.ndarray((B, 2), dtype=x.dtype, buffer=nl.shared_hbm)
        i = nl.arange(B)[:, None]
        j = nl.arange(N)[None, :]
        a = nl.load(x[i, j])
        r = nl.full((B, 2), -1.0, dtype=nl.float32, buffer=nl.sbuf)
        r[:, 0] = nisa.tensor_reduce(np.add, a[i, j], axis=1, keepdims=keepdims,
                                     mask=MASKS[mask](i, j))
        r[:, 1] = nl.max(a[i, j], axis=1, keepdims=keepdims, mask=MASKS[mask](i, j))
        nl.store(out, r)
        return out
    x = _x()
    keep = _keep(MASKS[mask])
    rows = keep.any(1)
    want = np.stack([np.where(rows, np.where(keep, x, 0).sum(1), -1.0),
                     np.where(rows, np.where(keep, x, -np.inf).max(1), -1.0)], 1)
    np.testing.assert_allclose(k(x), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mask", sorted(MASKS))
def test_tensor_partition_reduce_mask_over_input_numpy(mask):
    """A bound on the partitions (the reduced axis) reduces over the rows it
    keeps; one on the columns masks the result."""
    @nki.jit
    def k(x):
        out = nl.ndarray((1, N), dtype=x.dtype, buffer=nl.shared_hbm)
        i = nl.arange(B)[:, None]
        j = nl.arange(N)[None, :]
        a = nl.load(x[i, j])
        r = nl.full((1, N), -1.0, dtype=nl.float32, buffer=nl.sbuf)
        r[:, :] = nisa.tensor_partition_reduce(np.add, a[i, j], mask=MASKS[mask](i, j))
        nl.store(out, r)
        return out
    x = _x()
    keep = _keep(MASKS[mask])
    want = np.where(keep.any(0), np.where(keep, x, 0).sum(0), -1.0)[None, :]
    np.testing.assert_allclose(k(x), want, rtol=1e-5, atol=1e-5)


def test_reduce_mask_keeping_no_column_writes_nothing_numpy():
    """A bound that keeps no index of the reduced axis: nothing reduced, the
    target keeps its value."""
    @nki.jit
    def k(x):
        out = nl.ndarray((B, 1), dtype=x.dtype, buffer=nl.shared_hbm)
        i, j = nl.mgrid[0:B, 0:N]
        r = nl.full((B, 1), -1.0, dtype=nl.float32, buffer=nl.sbuf)
        r[:, :] = nl.sum(nl.load(x), axis=[1], keepdims=True, mask=(j >= N))
        nl.store(out, r)
        return out
    np.testing.assert_array_equal(k(_x()), np.full((B, 1), -1.0, np.float32))


@pytest.mark.parametrize("mask", sorted(MASKS))
def test_nl_mean_prod_mask_over_input_numpy(mask):
    """nl.mean divides by the reduced elements the mask keeps; nl.prod
    multiplies them."""
    @nki.jit
    def k(x):
        out = nl.ndarray((B, 2), dtype=x.dtype, buffer=nl.shared_hbm)
        i, j = nl.mgrid[0:B, 0:N]
        a = nl.load(x)
        r = nl.full((B, 2), -1.0, dtype=nl.float32, buffer=nl.sbuf)
        r[:, 0:1] = nl.mean(a, axis=1, keepdims=True, mask=MASKS[mask](i, j))
        r[:, 1:2] = nl.prod(a, axis=1, keepdims=True, mask=MASKS[mask](i, j))
        nl.store(out, r)
        return out
    x = RNG.uniform(0.9, 1.1, (B, N)).astype(np.float32)
    keep = _keep(MASKS[mask])
    rows, cols = keep.any(1), keep.any(0)
    sel = x[:, cols].astype(np.float64)
    want = np.where(rows[:, None], np.stack([sel.mean(1), sel.prod(1)], 1), -1.0)
    np.testing.assert_allclose(k(x), want, rtol=1e-5)
