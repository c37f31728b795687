"""NKI beta-1 forms the SDK's nki/test files use (docs/python.md "Beta-1
call forms"): local_gather's positional form, nki.trace + simulate_kernel
with outputs passed as arguments, nl.device_print, NumPy broadcasting in
the nl element-wise functions, dma_copy(dst_rmw_op=), IndexError for an
out-of-bounds indirect DMA.  References are NumPy's."""
import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl
from tpbsim.nki import NkiError


def _local_gather_ref(src, index, nvalid, nelem):
    """Per 16-partition core: its index rows read partition first, the
    first nvalid kept; each partition takes nelem elements of its own row
    at each index (an element offset)."""
    P = src.shape[0]
    flat = src.reshape(P, -1)
    out = np.empty((P, nvalid, nelem), src.dtype)
    for c in range(P // 16):
        idx = index[16 * c:16 * c + 16].flatten(order="F")[:nvalid]
        for p in range(16 * c, 16 * c + 16):
            for j, i in enumerate(idx):
                out[p, j] = flat[p, int(i):int(i) + nelem]
    return out


@nki.jit
def _gather(src, index, nelem, nvalid):
    s = nl.load(src)
    ix = nl.load(index)
    g = nisa.local_gather(s, ix, nelem, nvalid)   # beta-1, positional
    out = nl.ndarray(g.shape, dtype=g.dtype, buffer=nl.shared_hbm)
    nl.store(out, g)
    return out


def test_local_gather_positional_numpy():
    r = np.random.default_rng(0)
    src = r.random((32, 64, 4), dtype=np.float32)
    index = (r.integers(0, 64, (32, 3)) * 4).astype(np.uint16)
    # every index valid: [P, F, 16, nelem], the SDK example's layout
    out = _gather(src, index, 4, 48)
    assert out.shape == (32, 3, 16, 4)
    assert np.array_equal(out.reshape(32, 48, 4), _local_gather_ref(src, index, 48, 4))
    # fewer valid indices: [P, num_valid, nelem]
    out = _gather(src, index, 2, 40)
    assert out.shape == (32, 40, 2)
    assert np.array_equal(out, _local_gather_ref(src, index, 40, 2))


def test_local_gather_beta2_still_binds():
    @nki.jit
    def k(src, index):
        s, ix = nl.load(src), nl.load(index)
        d = nl.ndarray((16, 16, 1), dtype=s.dtype, buffer=nl.sbuf)
        nisa.local_gather(d, s, ix)          # beta-2: dst first
        out = nl.ndarray(d.shape, dtype=d.dtype, buffer=nl.shared_hbm)
        nl.store(out, d)
        return out
    r = np.random.default_rng(1)
    src = r.random((16, 8), dtype=np.float32)
    index = r.integers(0, 8, (16, 1)).astype(np.uint16)
    assert np.array_equal(k(src, index), _local_gather_ref(src, index, 16, 1))


@nki.trace
def _par_reduce(a_tensor, b_tensor):
    a = nl.load(a_tensor)
    b = nisa.tensor_partition_reduce(np.add, a)
    nl.store(b_tensor[0:1, 0:8], b[0:1, 0:8])   # half of b: the rest keeps its values


def test_simulate_kernel_writes_argument_outputs():
    r = np.random.default_rng(2)
    a = r.random((128, 16), dtype=np.float32)
    b = np.full((1, 16), 7.0, np.float32)
    a0 = a.copy()
    assert nki.simulate_kernel(_par_reduce, a, b) is None
    assert np.allclose(b[:, :8], a[:, :8].sum(axis=0, keepdims=True), rtol=1e-5)
    assert np.array_equal(b[:, 8:], np.full((1, 8), 7.0, np.float32))
    assert np.array_equal(a, a0)   # read only: not written back


def test_simulate_kernel_of_jit_kernel_returns_outputs():
    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.exp(nl.load(a)))
        return out
    a = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    assert np.allclose(nki.simulate_kernel(k, a), np.exp(a), rtol=1e-5)


def test_device_print(capsys):
    @nki.jit
    def k(a):
        t = nl.load(a)
        nl.device_print("tile t:", t)
        nl.device_print("hbm a", a)
        for i in nl.affine_range(2):
            nl.device_print("row", t[i:i + 1, :])
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, t)
        return out
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert np.array_equal(k(a), a)
    lines = capsys.readouterr().out.splitlines()
    text = "\n".join(lines)
    assert lines[0].startswith("tile t: [[ 0.  1.  2.  3.]")
    assert text.count(str(a).splitlines()[-1].strip()) == 2   # t and a: [ 8.  9. 10. 11.]]
    rows = [ln for ln in lines if ln.startswith("row ")]
    assert rows == ["row " + str(a[0:1]), "row " + str(a[1:2])]   # one per iteration


def test_device_print_refusals():
    @nki.jit
    def k(a):
        nl.device_print(3, nl.load(a))
    with pytest.raises(NkiError, match="prefix must be a string"):
        k(np.zeros((2, 2), np.float32))


@pytest.mark.parametrize("xs, ys, op", [
    ((128, 64), (1, 1), "add"), ((128, 64), (1, 64), "subtract"),
    ((1, 64), (128, 64), "subtract"), ((128, 1), (1, 64), "subtract"),
    ((1, 1), (32, 8), "subtract"), ((16, 1, 8), (16, 4, 8), "multiply"),
    ((16, 4, 1), (1, 4, 8), "maximum")])
def test_nl_binary_broadcast_numpy(xs, ys, op):
    @nki.jit
    def k(x, y):
        z = getattr(nl, op)(nl.load(x), nl.load(y))
        out = nl.ndarray(z.shape, dtype=z.dtype, buffer=nl.shared_hbm)
        nl.store(out, z)
        return out
    r = np.random.default_rng(3)
    x, y = r.random(xs, dtype=np.float32), r.random(ys, dtype=np.float32)
    ref = getattr(np, op)(x, y)
    got = k(x, y)
    assert got.shape == ref.shape and np.allclose(got, ref, rtol=1e-6)


def test_nl_binary_broadcast_refused():
    @nki.jit
    def k(x, y):
        nl.add(nl.load(x), nl.load(y))
    with pytest.raises(NkiError, match="do not broadcast"):
        k(np.zeros((8, 4), np.float32), np.zeros((8, 3), np.float32))


def _rows(n):
    """An SBUF [n, 1] int32 tile of 3*i (iota), as the SDK's examples."""
    return nisa.iota(3 * nl.arange(n)[:, None], dtype=np.int32)


def test_dma_copy_rmw_add_numpy():
    @nki.jit
    def k(a, base):
        n, m = a.shape
        out = nl.ndarray(base.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(base))
        t = nl.load(a)
        iy = nl.arange(m)[None, :]
        nisa.dma_copy(dst=out[_rows(n), iy], src=t, dst_rmw_op=np.add)   # scatter-add
        nisa.dma_copy(dst=out[1:2, :], src=t[0:1, :], dst_rmw_op=nl.add)   # direct
        return out
    r = np.random.default_rng(4)
    a, base = r.random((8, 16), dtype=np.float32), r.random((30, 16), dtype=np.float32)
    ref = base.copy()
    ref[3 * np.arange(8)] += a
    ref[1] += a[0]
    assert np.allclose(k(a, base), ref, rtol=1e-6)


def test_dma_copy_rmw_refusals():
    def kern(**kw):
        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=out, src=nl.load(a), **kw)
            return out
        return k
    a = np.zeros((4, 4), np.float32)
    with pytest.raises(NkiError, match="only np.add"):
        kern(dst_rmw_op=np.multiply)(a)
    with pytest.raises(NkiError, match="oob_mode.error only"):
        kern(dst_rmw_op=np.add, oob_mode=nisa.oob_mode.skip)(a)


@pytest.mark.parametrize("store", [False, True])
def test_indirect_oob_raises_index_error(store):
    @nki.jit
    def k(a):
        n, m = a.shape
        out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
        iy = nl.arange(m)[None, :]
        t = nl.load(a)
        nl.store(out, t)
        if store:   # rows 0, 3, .., 3*(n-1) of out: past its n rows
            nisa.dma_copy(dst=out[_rows(n), iy], src=t)
        else:
            g = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=g, src=a[_rows(n), iy])
            nl.store(out, g)
        return out
    a = np.zeros((16, 8), np.float32)
    with pytest.raises(IndexError) as e:
        k(a)
    # NumPy's words for the flat index of the first row out of range:
    # row 18 (3*6), column 0, of a 16 x 8 tensor
    assert type(e.value) is IndexError
    assert str(e.value) == "index 144 is out of bounds for axis 0 with size 128"
    assert "out of range [0, 16)" in str(e.value.__cause__)


def test_dma_transpose_sbuf_src_numpy():
    """NKI's SB -> SB direct DMA transpose (the SDK's dma_transpose example
    2 and 4): staged through an HBM scratch tensor, the same values."""
    @nki.jit
    def k(a, b):
        t = nisa.dma_transpose(nl.load(a))
        out = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.shared_hbm)
        nl.store(out, t)
        u = nl.ndarray((8, 4, 16), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_transpose(dst=u, src=nl.load(b), dge_mode=nisa.dge_mode.hwdge)
        out2 = nl.ndarray(u.shape, dtype=u.dtype, buffer=nl.shared_hbm)
        nl.store(out2, u)
        return out, out2
    rng = np.random.default_rng(5)
    a = (rng.random((16, 128)) * 100).astype(np.float16)
    b = (rng.random((16, 4, 8)) * 100).astype(np.float16)
    o, o2 = k(a, b)
    np.testing.assert_array_equal(o, a.T)
    np.testing.assert_array_equal(o2, np.transpose(b, (2, 1, 0)))


def test_double_row_beta1_fp8_numpy():
    """The SDK's double_row matmul, beta-1 form, "double_row_gen3" spelling,
    fp8 inputs given with nki.typed (values fp8 e5m2 holds exactly)."""
    @nki.jit(platform_target="trn2")
    def k(a_input, b_input):
        a = nl.load(a_input.view(nl.float8_e5m2))
        b = nl.load(b_input.view(nl.float8_e5m2))
        c = nisa.nc_matmul(a, b, perf_mode="double_row_gen3")
        out = nl.ndarray(c.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, c)
        return out
    r = np.random.default_rng(5)
    a = r.integers(-4, 5, (128, 2, 16)).astype(np.float32)
    b = r.integers(-4, 5, (128, 2, 64)).astype(np.float32) / 4
    got = tpbsim.simulate(k, nki.typed(a, nl.float8_e5m2), nki.typed(b, nl.float8_e5m2),
                          target="trn2").outputs
    assert got.shape == (16, 64)
    assert np.allclose(got, np.einsum("kli,klj->ij", a, b), rtol=1e-6)


def test_view_other_dtype_loads_the_bytes():
    """nl.load of a float32 input viewed as int32: NumPy's .view() of it."""
    @nki.jit
    def k(a):
        out = nl.ndarray((4, 4), dtype=nl.int32, buffer=nl.shared_hbm)
        nl.store(out, nl.load(a.view(nl.int32)))
        return out
    a = np.arange(16, dtype=np.float32).reshape(4, 4) + 0.5
    np.testing.assert_array_equal(k(a), a.view(np.int32))


def test_nl_binary_broadcast_ranks_refused():
    @nki.jit
    def k(x, y):
        nl.add(nl.load(x), nl.load(y))
    with pytest.raises(NkiError, match="tiles of one rank"):
        k(np.zeros((8, 4), np.float32), np.zeros((4,), np.float32))
