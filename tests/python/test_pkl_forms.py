"""Forms of the SDK's NKI documentation pages (pkL), each against NumPy or
the exact error: nki.simulate(kernel)(X, Y) writing the argument arrays the
kernel writes (nki_simulator.rst, the migration guide); nki.typing's
`nt.tensor[128, 512]` shape annotations; on-chip views staying >= 2-D under
integer indexing (the language guide's "Tensor Indexing"); `.shape`
equal to a list (`assert A.shape == [512, 512]`); nl.tile_size's
psum_min_align / sbuf_min_align and NkiTensor.address (the NKI Library's
allocator page); and two forms NKI 0.3 refuses: a dtype-converting
dma_copy under dge_mode=hwdge, an integer tile memset with a fraction."""
import re

import numpy as np
import pytest

from tpbsim import NkiError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl
import tpbsim.nki.typing as nt

RNG = np.random.default_rng(12)


# ---- nki.simulate: argument arrays updated in place ----

@nki.jit
def exp_into(X, Y):
    """The migration guide's my_kernel(X, Y): Y = exp(X), nothing returned."""
    t = nl.ndarray(X.shape, dtype=X.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=X)
    nisa.activation(dst=t, op=nl.exp, data=t)
    nisa.dma_copy(dst=Y, src=t)


def test_simulate_writes_argument_outputs():
    X = RNG.standard_normal((128, 512)).astype(np.float16)
    X0 = X.copy()
    Y = np.zeros((128, 512), dtype=np.float16)
    assert nki.simulate(exp_into)(X, Y) is None
    np.testing.assert_allclose(Y.astype(np.float64), np.exp(X.astype(np.float64)),
                               rtol=2e-3, atol=2e-3)
    assert np.array_equal(X, X0)   # read only: left alone


@nki.jit
def half_rows_and_out(x, y):
    """Writes rows 0:64 of argument y (y + 1) and returns x * 2."""
    t = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=y[0:64, :])
    nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)
    nisa.dma_copy(dst=y[0:64, :], src=t)
    u = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=u, src=x)
    nisa.tensor_scalar(dst=u, data=u, op0=nl.multiply, operand0=2.0)
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=u)
    return out


def test_simulate_partial_write_and_returned_output():
    x = RNG.random((128, 32), dtype=np.float32)
    y = RNG.random((128, 32), dtype=np.float32)
    y0 = y.copy()
    out = nki.simulate(half_rows_and_out)(x, y)
    np.testing.assert_array_equal(out, x * 2)
    np.testing.assert_array_equal(y[:64], y0[:64] + 1)
    np.testing.assert_array_equal(y[64:], y0[64:])   # not written: kept


def test_kernel_call_still_leaves_arguments_alone():
    x = RNG.random((128, 32), dtype=np.float32)
    y = RNG.random((128, 32), dtype=np.float32)
    y0 = y.copy()
    half_rows_and_out(x, y)
    np.testing.assert_array_equal(y, y0)


@nki.jit
def indirect_scatter_kernel(src_data, indices, output):
    """The dma_copy stub's indirect scatter example (vector_offset on dst)."""
    P, F = src_data.shape
    src = nl.ndarray((P, F), dtype=src_data.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=src, src=src_data)
    idx = nl.ndarray((P, 1), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=indices)
    nisa.dma_copy(dst=output.ap(pattern=[[F, P], [1, F]], vector_offset=idx, indirect_dim=0),
                  src=src)
    return output


def test_simulate_scatter_into_argument():
    src = RNG.random((16, 8), dtype=np.float32)
    perm = RNG.permutation(32)[:16].astype(np.uint32)
    output = np.full((32, 8), -1.0, np.float32)
    ref = output.copy()
    ref[perm] = src
    got = nki.simulate(indirect_scatter_kernel)(src, perm.reshape(16, 1), output)
    np.testing.assert_array_equal(output, ref)   # the argument, in place
    np.testing.assert_array_equal(got, ref)      # and the returned input


@nki.jit
def lnc_rows(x, y):
    """LNC 2: program p writes rows 64p:64p+64 of argument y (x + p)."""
    p = nl.program_id(0)
    t = nl.ndarray((64, 16), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[nl.ds(p * 64, 64), :])
    nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=p * 1.0)
    nisa.dma_copy(dst=y[nl.ds(p * 64, 64), :], src=t)


def test_simulate_lnc2_writes_argument():
    x = RNG.random((128, 16), dtype=np.float32)
    y = np.zeros((128, 16), np.float32)
    nki.simulate(lnc_rows[2])(x, y)
    np.testing.assert_array_equal(y[:64], x[:64])
    np.testing.assert_array_equal(y[64:], x[64:] + 1)


# ---- nki.typing: nt.tensor[shape] annotations ----

def test_shape_annotations():
    @nki.jit   # the migration guide's form (annotations evaluated at the definition)
    def annotated_add(X: nt.tensor[128, 512], Y: nt.tensor[128, 512]):
        t = nl.ndarray((128, 512), dtype=X.dtype, buffer=nl.sbuf)
        u = nl.ndarray((128, 512), dtype=X.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=X)
        nisa.dma_copy(dst=u, src=Y)
        nisa.tensor_tensor(dst=t, data1=t, data2=u, op=nl.add)
        out = nl.ndarray((128, 512), dtype=X.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out

    a = RNG.random((128, 512), dtype=np.float32)
    b = RNG.random((128, 512), dtype=np.float32)
    np.testing.assert_array_equal(annotated_add(a, b), a + b)
    for item, shape in (((128, 512), (128, 512)), (128, (128,)), ([128, 4], (128, 4)),
                        ((128, 2, 128), (128, 2, 128)), ((np.int64(64), 8), (64, 8))):
        ann = nt.tensor[item]
        assert ann.shape == shape
        assert repr(ann) == "tensor[%s]" % ", ".join(map(str, shape))
    # a shape and a dtype stays the input placeholder, mutable the type
    assert repr(nt.tensor[[128, 4], nl.int32]) == "tensor[[128, 4], int32]"
    assert nt.tensor[nt.mutable] is nt.tensor


def test_shape_annotation_errors():
    with pytest.raises(NkiError, match=r"^nki.typing.tensor\[0, 4\]: shape is a list of "
                                       r"positive sizes$"):
        nt.tensor[0, 4]
    with pytest.raises(NkiError, match=r"^exp_into: argument 'Y' is tensor\[128, 512\], an "
                                       r"annotation \(sizes without a dtype\): pass an array, "
                                       r"or tensor\[\[128, 512\], <dtype>\] as a placeholder$"):
        exp_into(np.zeros((128, 512), np.float32), nt.tensor[128, 512])


# ---- on-chip views stay >= 2-D ----

def test_language_guide_indexing_shapes():
    """The language guide's asserts on a (64, 64, 64) SBUF tensor, and the
    stub's sb[..., 0]; an HBM tensor still drops integer-indexed dims."""
    seen = {}

    @nki.jit
    def k(x):
        t = nl.ndarray((64, 64, 64), dtype=nl.float32, buffer=nl.sbuf)
        seen["t[0, 0, 10]"] = t[0, 0, 10].shape
        seen["t[:, 0]"] = t[:, 0].shape
        seen["t[:, 0, 10]"] = t[:, 0, 10].shape
        seen["t[0, ..., :]"] = t[0, ..., :].shape
        seen["t[:, 0, :]"] = t[:, 0, :].shape
        sb = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        seen["sb[..., 0]"] = sb[..., 0].shape
        seen["sb.select(1, 3)"] = sb.select(1, 3).shape
        ps = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.psum)
        seen["ps[:, 5]"] = ps[:, 5].shape
        seen["x[1]"] = x[1].shape
        seen["x[1, 3]"] = x[1, 3].shape
        out = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=x[0, 0:1, 0:1])
        return out

    k(np.zeros((4, 128, 8), np.float32))
    assert seen == {"t[0, 0, 10]": (1, 1), "t[:, 0]": (64, 64), "t[:, 0, 10]": (64, 1),
                    "t[0, ..., :]": (1, 64, 64), "t[:, 0, :]": (64, 64),
                    "sb[..., 0]": (128, 1), "sb.select(1, 3)": (128, 1), "ps[:, 5]": (128, 1),
                    "x[1]": (128, 8), "x[1, 3]": (8,)}


@nki.jit
def columns(x, y):
    """Column 3 of a [128, 64] tile and element [:, 2, 5] of a [128, 4, 8]
    tile, as [P, 1] views: copied out and used as a per-partition scalar."""
    t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    u = t[:, 3]
    col = nl.ndarray(u.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=col, src=u)
    s = nl.ndarray((128, 4, 8), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=y)
    v = s[:, 2, 5]
    el = nl.ndarray(v.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=el, src=v)
    w = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=w, data=t, op0=nl.multiply, operand0=t[..., 0])
    prod = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=prod, src=w)
    return col, el, prod


def test_column_views_values():
    x = RNG.random((128, 64), dtype=np.float32)
    y = RNG.random((128, 4, 8), dtype=np.float32)
    col, el, prod = columns(x, y)
    assert col.shape == (128, 1) and el.shape == (128, 1)
    np.testing.assert_array_equal(col, x[:, 3:4])
    np.testing.assert_array_equal(el, y[:, 2, 5:6])
    np.testing.assert_allclose(prod, x * x[:, 0:1], rtol=1e-6)


# ---- .shape equals a list ----

@nki.jit
def indirect_scalar_dynamic_dma(A):
    """The migration guide's example, verbatim but for the imports."""
    assert A.shape == [512, 512]
    batch_idx = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.memset(batch_idx, value=3 * 128)
    result = nl.ndarray((128, 256), A.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(src=A.ap(pattern=[[512, 128], [1, 256]], offset=0, scalar_offset=batch_idx,
                           indirect_dim=0),
                  dst=result[...])
    return result


def test_shape_equals_list():
    A = RNG.random((512, 512), dtype=np.float32)
    np.testing.assert_array_equal(indirect_scalar_dynamic_dma(A), A[384:512, 0:256])
    seen = {}

    @nki.jit
    def k(a, b):
        s = a.shape
        seen["eq"] = (s == [128, 1024], [128, 1024] == s, a.shape == b.shape == [128, 1024],
                      s == (128, 1024), s != [128, 1024], s != [128, 512], s == [128.0, 1024])
        seen["tuple"] = (isinstance(s, tuple), hash(s) == hash((128, 1024)), repr(s),
                         s[1:], tuple(s) + (1,), {(128, 1024): 1}[s])
        p, f = s
        seen["unpack"] = (p, f)
        out = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=a[0:1, 0:1])
        return out

    k(np.zeros((128, 1024), np.float32), np.zeros((128, 1024), np.float32))
    assert seen["eq"] == (True, True, True, True, False, True, True)
    assert seen["tuple"] == (True, True, "(128, 1024)", (1024,), (128, 1024, 1), 1)
    assert seen["unpack"] == (128, 1024)


# ---- nl.tile_size alignments, NkiTensor.address ----

def test_tile_size_alignments_and_address():
    seen = {}

    @nki.jit
    def k(x):
        heap = nl.tile_size.total_available_sbuf_size - 512
        w = nl.ndarray((128, 256), dtype=nl.bfloat16, buffer=nl.sbuf, address=(0, heap))
        b1 = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf, address=(0, 1024))
        ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum, address=(0, 3 * 2048))
        auto = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        seen.update(w=w.address, heap=heap, b1=b1.address, view=b1[:, 0:64].address,
                    ps=ps.address, auto=auto.address, x=x.address,
                    align=(nl.tile_size.psum_min_align, nl.tile_size.sbuf_min_align))
        nisa.dma_copy(dst=b1[:, 0:64], src=x)
        out = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=b1[:, 0:64])
        return out

    x = (RNG.integers(-64, 64, (128, 64)) / 8).astype(nl.bfloat16)
    np.testing.assert_array_equal(k(x).astype(np.float32), x.astype(np.float32))
    assert seen == {"w": (0, seen["heap"]), "heap": 229376 - 512, "b1": (0, 1024),
                    "view": (0, 1024), "ps": (0, 6144), "auto": None, "x": None,
                    "align": (4, 1)}


# ---- forms NKI 0.3 refuses ----

def _hw_copy(src_dt, dst_dt, view=None):
    @nki.jit
    def k(x):
        t = nl.ndarray(x.shape, dtype=dst_dt, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x if view is None else x.view(view),
                      dge_mode=nisa.dge_mode.hwdge)
        o = nl.ndarray(x.shape, dtype=dst_dt, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o, src=t)
        return o
    return k


def test_hwdge_copy_converting_dtypes_refused():
    x = RNG.random((128, 64), dtype=np.float32)
    with pytest.raises(NkiError, match=r"test_pkl_forms.py:\d+: nisa.dma_copy: dge_mode=hwdge "
                                       r"moves raw bytes, so src and dst must have one dtype "
                                       r"\(src float32, dst float16\): read the bytes as dst's "
                                       r"dtype with src.view\(float16\), or convert with "
                                       r"dge_mode=swdge or none$"):
        _hw_copy(nl.float32, nl.float16)(x)
    # one dtype moves the bytes; .view() reinterprets them first
    np.testing.assert_array_equal(_hw_copy(nl.float32, nl.float32)(x), x)
    bits = RNG.integers(0, 2**30, (128, 64)).astype(np.int32)
    np.testing.assert_array_equal(_hw_copy(nl.int32, nl.float32, nl.float32)(bits),
                                  bits.view(np.float32))


def test_swdge_copy_still_converts():
    @nki.jit
    def k(x):
        t = nl.ndarray(x.shape, dtype=nl.float16, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x, dge_mode=nisa.dge_mode.swdge)
        o = nl.ndarray(x.shape, dtype=nl.float16, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o, src=t)
        return o
    x = RNG.random((128, 64), dtype=np.float32)
    np.testing.assert_array_equal(k(x), x.astype(np.float16))


def _memset(dt, value):
    @nki.jit
    def k(x):
        b = nl.ndarray((128, 8), dtype=dt, buffer=nl.sbuf)
        nisa.memset(dst=b, value=value)
        o = nl.ndarray((128, 8), dtype=dt, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o, src=b)
        return o
    return k


@pytest.mark.parametrize("value", [2.7, np.float32(-0.5), float("inf")])
def test_memset_integer_tile_fraction_refused(value):
    with pytest.raises(NkiError, match=r"test_pkl_forms.py:\d+: nisa.memset: value %s for the "
                                       r"int32 tile 't': an integer tile takes an integer value "
                                       r"\(NKI: value must match dst's dtype\)$" %
                       re.escape(repr(value))):
        _memset(nl.int32, value)(np.zeros((1, 1), np.float32))


def test_memset_whole_values_kept():
    x = np.zeros((1, 1), np.float32)
    np.testing.assert_array_equal(_memset(nl.int32, 2)(x), np.full((128, 8), 2, np.int32))
    np.testing.assert_array_equal(_memset(nl.int32, 2.0)(x), np.full((128, 8), 2, np.int32))
    np.testing.assert_array_equal(_memset(nl.float32, 2.7)(x),
                                  np.full((128, 8), 2.7, np.float32))
