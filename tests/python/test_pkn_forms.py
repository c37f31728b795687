"""Forms of the SDK's less common NKI ops (pkN), each against NumPy or the
exact error: nc_find_index8 into a uint16 tile (its docstring: uint16 or
uint32 indices, 0xFFFF when not found), the indirect dma_transpose with a
[128, N] index read column-major (its docstring's indices.T.flatten() and
gather_transpose_2d / 4d kernels), and the callable nl.abs_max / nl.abs_min
(NeuronCore-v4 only; the signed input of the larger / smaller magnitude,
y on a tie) beside the ALU op of that name (the magnitude)."""
import numpy as np
import pytest

import tpbsim
from tpbsim import NkiError, TpbError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(15)


# ---- nc_find_index8: uint16 and uint32 index tiles ----

def _find_index8(dt):
    @nki.jit
    def k(x, v):
        P, E = x.shape
        t = nl.ndarray((P, E), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        vals = nl.ndarray((P, 8), dtype=v.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=vals, src=v)
        idx8 = nl.ndarray((P, 8), dtype=dt, buffer=nl.sbuf)
        nisa.nc_find_index8(dst=idx8, data=t, vals=vals)
        out = nl.ndarray((P, 8), dtype=dt, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=idx8)
        return out
    return k


def _first_index(x, v, missing):
    """Slot by slot (0..7): the first element equal to v[p, s] that no
    earlier slot took, else `missing`."""
    out = np.full(v.shape, missing, dtype=np.int64)
    for p in range(x.shape[0]):
        taken = set()
        for s in range(v.shape[1]):
            hits = [i for i in np.flatnonzero(x[p] == v[p, s]) if i not in taken]
            if hits:
                out[p, s] = hits[0]
                taken.add(hits[0])
    return out


def test_find_index8_uint16_matches_uint32_numpy():
    """The public top-k kernels' idx8 = nl.ndarray((p, 8), dtype=nl.uint16):
    the top 8 of each row found at their positions, as with uint32; a value
    absent from the row is 0xFFFF in uint16, 0xFFFFFFFF in uint32 (NKI)."""
    x = RNG.standard_normal((128, 300)).astype(np.float32)
    x[:, 17] = x[:, 250]                   # a duplicate: successive occurrences
    v = -np.sort(-x, axis=1)[:, :8].copy()
    v[5, 3] = 1e9                          # not in row 5
    v[9, 7] = v[9, 6]                      # the same value twice in one row
    got16 = np.asarray(_find_index8(nl.uint16)(x, v))
    got32 = np.asarray(_find_index8(nl.uint32)(x, v))
    assert got16.dtype == np.uint16 and got32.dtype == np.uint32
    np.testing.assert_array_equal(got16.astype(np.int64), _first_index(x, v, 0xFFFF))
    np.testing.assert_array_equal(got32.astype(np.int64), _first_index(x, v, 0xFFFFFFFF))
    found = got32 != 0xFFFFFFFF
    np.testing.assert_array_equal(got16[found].astype(np.uint32), got32[found])
    assert got16[5, 3] == 0xFFFF


def test_find_index8_refuses_int32():
    x = RNG.standard_normal((128, 64)).astype(np.float32)
    with pytest.raises(TpbError, match=r"dtype int32 \(indices are uint16 or uint32\)"):
        _find_index8(nl.int32)(x, x[:, :8].copy())


# ---- indirect dma_transpose: a [128, N] index, column-major ----

@nki.jit
def gather_transpose_2d(src_hbm, idx_hbm):
    """The dma_transpose docstring's gather_transpose_2d_kernel, F rows."""
    F = src_hbm.shape[0]
    P = src_hbm.shape[1]
    output = nl.ndarray((P, F), dtype=src_hbm.dtype, buffer=nl.shared_hbm)
    idx_sb = nl.load(idx_hbm)
    dst_sb = nl.ndarray((P, F), dtype=src_hbm.dtype, buffer=nl.sbuf)
    nisa.memset(dst=dst_sb, value=0)
    src_ap = src_hbm.ap(pattern=[[P, F], [1, P]], vector_offset=idx_sb, indirect_dim=0)
    nisa.dma_transpose(dst=dst_sb, src=src_ap, axes=(1, 0))
    nisa.dma_copy(dst=output, src=dst_sb)
    return output


@nki.jit
def gather_transpose_4d(src_hbm, idx_hbm):
    """The docstring's gather_transpose_4d_kernel (F = 128 * N)."""
    T, d1, d2, d3 = src_hbm.shape
    _, N = idx_hbm.shape
    F = 128 * N
    idx_sb = nl.load(idx_hbm)
    dst_sb = nl.ndarray((d3, d1, d2, F), dtype=src_hbm.dtype, buffer=nl.sbuf)
    nisa.memset(dst=dst_sb, value=0)
    src_ap = src_hbm.ap(pattern=[[d1 * d2 * d3, F], [d2 * d3, d1], [d3, d2], [1, d3]],
                        vector_offset=idx_sb, indirect_dim=0)
    nisa.dma_transpose(dst=dst_sb, src=src_ap, axes=(3, 1, 2, 0))
    output = nl.ndarray((d3, d1, d2, F), dtype=src_hbm.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=output, src=dst_sb)
    return output


def _f64(a):
    return np.asarray(a).astype(np.float32).astype(np.float64)


@pytest.mark.parametrize("rows,table,ncol", [(256, 256, 2), (200, 300, 2), (384, 400, 3)])
def test_gather_transpose_index_columns_numpy(rows, table, ncol):
    """Row j of the gather is idx.T.flatten()[j] (not idx.flatten()[j]):
    one gather-transpose per index column, the last one partial when
    rows < 128 * N."""
    src = RNG.standard_normal((table, 128)).astype(nl.bfloat16)
    idx = RNG.integers(0, table, (128, ncol)).astype(np.uint32)

    # the src view's row count (the pattern's dim 0) is `rows`
    @nki.jit
    def k_rows(s, i):
        P = s.shape[1]
        output = nl.ndarray((P, rows), dtype=s.dtype, buffer=nl.shared_hbm)
        idx_sb = nl.load(i)
        dst_sb = nl.ndarray((P, rows), dtype=s.dtype, buffer=nl.sbuf)
        nisa.memset(dst=dst_sb, value=0)
        nisa.dma_transpose(dst=dst_sb, src=s.ap(pattern=[[P, rows], [1, P]], vector_offset=idx_sb,
                                                indirect_dim=0), axes=(1, 0))
        nisa.dma_copy(dst=output, src=dst_sb)
        return output

    out = _f64(gather_transpose_2d(src, idx) if rows == table else k_rows(src, idx))
    want = _f64(src)[idx.T.flatten()[:rows]].T
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("d1,d2,d3", [(2, 1, 16), (1, 4, 16)])
def test_gather_transpose_4d_index_columns_numpy(d1, d2, d3):
    T = 256
    src = RNG.standard_normal((T, d1, d2, d3)).astype(nl.bfloat16)
    idx = RNG.permutation(T).reshape(128, 2).astype(np.uint32)
    out = _f64(gather_transpose_4d(src, idx))
    want = _f64(src)[idx.T.flatten()[:T]].transpose(3, 1, 2, 0)
    np.testing.assert_array_equal(out, want)


def test_gather_transpose_index_rules():
    """NKI's rules for an index of several columns, named in the error."""
    src = RNG.standard_normal((256, 128)).astype(nl.bfloat16)
    with pytest.raises(NkiError, match=r"test_pkn_forms.py:\d+: dma_transpose: an index of 4 "
                       r"columns must have exactly 128 partitions.*got \[64, 4\]"):
        gather_transpose_2d(src, RNG.integers(0, 256, (64, 4)).astype(np.uint32))

    @nki.jit
    def short(s, i):      # 384 rows, 256 indices
        output = nl.ndarray((128, 384), dtype=s.dtype, buffer=nl.shared_hbm)
        idx_sb = nl.load(i)
        dst_sb = nl.ndarray((128, 384), dtype=s.dtype, buffer=nl.sbuf)
        nisa.dma_transpose(dst=dst_sb, src=s.ap(pattern=[[128, 384], [1, 128]],
                                                vector_offset=idx_sb, indirect_dim=0))
        nisa.dma_copy(dst=output, src=dst_sb)
        return output

    big = RNG.standard_normal((400, 128)).astype(nl.bfloat16)
    with pytest.raises(NkiError, match=r"test_pkn_forms.py:\d+: dma_transpose: the index "
                       r"\[128, 2\] holds 256 indices for 384 rows"):
        short(big, RNG.integers(0, 400, (128, 2)).astype(np.uint32))


# ---- nl.abs_max / nl.abs_min callables (trn3) and the ALU op ----

@nki.jit
def abs_ext(x, y):
    a = nl.load(x)
    b = nl.load(y)
    out = nl.ndarray((6,) + tuple(x.shape), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out[0], nl.abs_max(a, b))
    nl.store(out[1], nl.abs_min(a, b))
    nl.store(out[2], nl.abs_max(a, b[:, 0:1]))      # a [P, 1] column, as the docstring's
    nl.store(out[3], nl.abs_min(a, -0.5))            # a number
    nl.store(out[4], nl.abs_max(0.75, b))
    m = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=m, data1=a, data2=b, op=nl.abs_max)   # the ALU op: magnitude
    nl.store(out[5], m)
    return out


def test_abs_max_min_signed_on_trn3_numpy():
    """NKI's docstring: x if |x| > |y| (abs_min: <) else y -- the signed
    value, y on a tie; the op abs_max of tensor_tensor stays max(|x|, |y|)."""
    x = RNG.standard_normal((128, 64)).astype(np.float32)
    y = RNG.standard_normal((128, 64)).astype(np.float32)
    x[:, :4] = [-5.0, 5.0, 1.0, -2.0]
    y[:, :4] = [3.0, -3.0, -1.0, 2.0]                # ties at columns 2 and 3
    out = np.asarray(tpbsim.simulate(abs_ext, x, y, target="trn3").outputs)
    ax, ay = np.abs(x), np.abs(y)
    col = y[:, 0:1]
    np.testing.assert_array_equal(out[0], np.where(ax > ay, x, y))
    np.testing.assert_array_equal(out[1], np.where(ax < ay, x, y))
    np.testing.assert_array_equal(out[2], np.where(ax > np.abs(col), x, col))
    np.testing.assert_array_equal(out[3], np.where(ax < 0.5, x, np.float32(-0.5)))
    np.testing.assert_array_equal(out[4], np.where(0.75 > ay, np.float32(0.75), y))
    np.testing.assert_array_equal(out[5], np.maximum(ax, ay))
    np.testing.assert_array_equal(out[0][0, :4], [-5.0, 5.0, -1.0, 2.0])
    np.testing.assert_array_equal(out[1][0, :4], [3.0, -3.0, -1.0, 2.0])


def test_abs_max_callable_refused_before_trn3():
    """NKI documents the callable form for NeuronCore-v4 only: on trn2 an
    error names the rule and the op form (never the magnitude silently)."""
    x = RNG.standard_normal((128, 8)).astype(np.float32)
    with pytest.raises(NkiError, match=r"test_pkn_forms.py:\d+: nl.abs_max\(x, y\) is "
                                       r"NeuronCore-v4 \(trn3\) only"):
        tpbsim.simulate(abs_ext, x, x, target="trn2")
