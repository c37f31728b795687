"""Forms of vllm-neuron's NKI kernels (pkM), each against NumPy or the exact
error: dma_compute's gather read-modify-write with oob_mode.skip (the MoE
topk_reduce: a token with fewer than K rows gathers index 0xFFFFFFFF,
skipped), nc_match_replace8 writing its indices through a view that is not
8 contiguous elements (argsort_unstable's ascending mode fills its output
from the back, `.ap([[n, 1], [-1, 8]])`), and `|` of beta-1 mask
comparisons, which NKI's masks do not have (an NkiError at the line)."""
import numpy as np
import pytest

from tpbsim import NkiError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl
from tpbsim.nki.isa import oob_mode

RNG = np.random.default_rng(16)
HERE = "test_pkm_forms.py"
BAD = 0xFFFFFFFF


# ---- dma_compute: gather read-modify-write, oob_mode.skip ----

@nki.jit
def gather_rmw_skip(table, acc0, idx):
    """acc = acc0, then acc += table[idx[p]] where idx[p] is in range."""
    P, H = acc0.shape
    acc = nl.ndarray((P, H), dtype=acc0.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=acc, src=acc0)
    ix = nl.ndarray((P, 1), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ix, src=idx)
    rows = table.ap(pattern=[[H, P], [1, H]], offset=0, vector_offset=ix, indirect_dim=0)
    nisa.dma_compute(dst=acc, srcs=[rows, acc], reduce_op=nl.add, oob_mode=oob_mode.skip)
    out = nl.ndarray((P, H), dtype=acc0.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=acc)
    return out


def test_gather_rmw_skip_rows_untouched_numpy():
    """Rows whose index is out of range keep acc0 bit for bit (-0.0 and NaN
    included: neither read nor written); the others add their table row."""
    N, P, H = 10, 6, 24
    table = RNG.standard_normal((N, H)).astype(np.float32)
    acc0 = RNG.standard_normal((P, H)).astype(np.float32)
    acc0[1, :4] = -0.0
    acc0[4, 5] = np.nan
    idx = np.array([[3], [BAD], [N], [9], [BAD], [0]], dtype=np.uint32)
    want = acc0.copy()
    for p in range(P):
        if idx[p, 0] < N:
            want[p] = acc0[p] + table[idx[p, 0]]
    out = np.asarray(gather_rmw_skip(table, acc0, idx))
    np.testing.assert_array_equal(out.view(np.uint32), want.view(np.uint32))


def test_gather_rmw_skip_bf16_numpy():
    """A bf16 accumulator: float32 sum, one rounding (NKI's), skipped rows as
    they were."""
    bf = nl.bfloat16
    N, P, H = 7, 5, 16
    table = RNG.standard_normal((N, H)).astype(bf)
    acc0 = RNG.standard_normal((P, H)).astype(bf)
    idx = np.array([[6], [BAD], [2], [2 ** 31], [0]], dtype=np.uint32)
    want = acc0.copy()
    for p in range(P):
        if idx[p, 0] < N:
            want[p] = (acc0[p].astype(np.float32) + table[idx[p, 0]].astype(np.float32)).astype(bf)
    out = np.asarray(gather_rmw_skip(table, acc0, idx))
    np.testing.assert_array_equal(out.astype(np.float32), want.astype(np.float32))


@nki.jit
def topk_reduce_reduced(inp, gidx, T):
    """vllm-neuron moe/topk_reduce, reduced: gidx [T_compute, K] holds each
    token's row numbers (0xFFFFFFFF where it has fewer than K; all of the
    padded partition when T is 1); row 0 copied under skip when padded,
    rows 1..K-1 added by dma_compute(oob_mode.skip)."""
    TK, H = inp.shape
    T_compute, K = gidx.shape
    acc = nl.ndarray((T_compute, H), dtype=inp.dtype, buffer=nl.sbuf)
    ix = nl.ndarray((T_compute, K), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ix, src=gidx)
    k0_oob = oob_mode.skip if T_compute > T else oob_mode.error
    for k in range(K):
        src = inp.ap(pattern=[[H, T_compute], [1, H]], offset=0,
                     vector_offset=ix.ap(pattern=[[K, T_compute], [1, 1]], offset=k),
                     indirect_dim=0)
        if k == 0:
            nisa.dma_copy(dst=acc[:, :], src=src, oob_mode=k0_oob)
        else:
            nisa.dma_compute(dst=acc[:, :], srcs=[src, acc[:, :]], reduce_op=nl.add,
                             unique_indices=True, oob_mode=oob_mode.skip)
    out = nl.ndarray((T, H), dtype=inp.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(out, acc[:T, :])
    return out


@pytest.mark.parametrize("T,K,TK,H", [(1, 3, 8, 32), (5, 4, 24, 64)])
def test_topk_reduce_reduced_numpy(T, K, TK, H):
    bf = nl.bfloat16
    inp = RNG.standard_normal((TK, H)).astype(bf)
    T_compute = max(T, 2)
    gidx = np.full((T_compute, K), BAD, dtype=np.uint32)
    rows = RNG.permutation(TK)
    p = 0
    for t in range(T):   # 1..K rows a token, in the first slots (nc_find_index8's order)
        n = K if t == 0 and T == 1 else int(RNG.integers(1, K + 1))
        gidx[t, :n] = rows[p:p + n]
        p += n
    want = np.zeros((T, H), np.float32)
    for t in range(T):
        acc = inp[gidx[t, 0]].astype(np.float32)
        for k in range(1, K):
            if gidx[t, k] != BAD:   # each dma_compute rounds its sum to bf16 once
                acc = (acc + inp[gidx[t, k]].astype(np.float32)).astype(bf).astype(np.float32)
        want[t] = acc
    out = np.asarray(topk_reduce_reduced(inp, gidx, T))
    np.testing.assert_array_equal(out.astype(np.float32), want)


def test_gather_skip_other_forms_refused():
    """Skip with a gathered source but not the gather RMW form (dst not one
    of the two sources): a skipped row would not keep dst, so refused."""
    @nki.jit
    def k(table, idx, b):
        acc = nl.ndarray((4, 8), dtype=nl.float32, buffer=nl.sbuf)
        t = nl.ndarray((4, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=b)
        ix = nl.ndarray((4, 1), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.dma_copy(dst=ix, src=idx)
        rows = table.ap(pattern=[[8, 4], [1, 8]], offset=0, vector_offset=ix, indirect_dim=0)
        nisa.dma_compute(dst=acc, srcs=[rows, t], reduce_op=nl.add, oob_mode=oob_mode.skip)
        out = nl.ndarray((4, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=acc)
        return out
    with pytest.raises(NkiError, match=r"%s:\d+: dma_compute: oob_mode.skip with a gathered "
                       r"\(vector_offset\) source is supported in NKI's gather "
                       r"read-modify-write form only" % HERE):
        k(np.zeros((6, 8), np.float32), np.zeros((4, 1), np.uint32),
          np.zeros((4, 8), np.float32))


# ---- nc_match_replace8: dst_idx through any view ----

def _top8(x):
    """Per row, the positions of the 8 largest values, largest first."""
    return np.argsort(-x, axis=1, kind="stable")[:, :8]


@nki.jit
def match_replace_reversed(data):
    """argsort_unstable's ascending step: slots 15..8 of each row's index
    tile receive dst_idx[0..7]."""
    P, N = data.shape
    d = nl.ndarray((P, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=d, src=data)
    v = nl.ndarray((P, 8), dtype=nl.float32, buffer=nl.sbuf)
    nisa.max8(dst=v, src=d)
    idx = nl.ndarray((P, 16), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.memset(dst=idx, value=7777)
    nisa.nc_match_replace8(dst=d, data=d, vals=v, imm=-1e30,
                           dst_idx=idx.ap(pattern=[[16, P], [-1, 8]], offset=15))
    out = nl.ndarray((P, 16), dtype=nl.uint32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=idx)
    rest = nl.ndarray((P, N), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=rest, src=d)
    return out, rest


def test_match_replace8_reversed_dst_idx_numpy():
    P, N = 5, 40
    x = np.stack([RNG.permutation(N) for _ in range(P)]).astype(np.float32) - 7.5
    top = _top8(x)
    want = np.full((P, 16), 7777, np.uint32)
    want[:, 8:] = top[:, ::-1]
    want_rest = x.copy()
    np.put_along_axis(want_rest, top, np.float32(-1e30), axis=1)
    out, rest = match_replace_reversed(x)
    np.testing.assert_array_equal(np.asarray(out), want)
    np.testing.assert_array_equal(np.asarray(rest), want_rest)


def test_match_replace8_strided_dst_idx_numpy():
    """dst_idx every other column of a [P, 16] tile (idx[:, 1::2] as an .ap)."""
    P, N = 3, 24

    @nki.jit
    def k(data):
        d = nl.ndarray((P, N), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=d, src=data)
        v = nl.ndarray((P, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.max8(dst=v, src=d)
        idx = nl.ndarray((P, 16), dtype=nl.int32, buffer=nl.sbuf)
        nisa.memset(dst=idx, value=-5)
        nisa.nc_match_replace8(dst=d, data=d, vals=v, imm=0.0,
                               dst_idx=idx.ap(pattern=[[16, P], [2, 8]], offset=1))
        out = nl.ndarray((P, 16), dtype=nl.int32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=idx)
        return out
    x = RNG.standard_normal((P, N)).astype(np.float32) + 10.0
    want = np.full((P, 16), -5, np.int32)
    want[:, 1::2] = _top8(x)
    np.testing.assert_array_equal(np.asarray(k(x)), want)


# ---- `|` of beta-1 mask comparisons ----

def test_mask_or_refused_at_line():
    """NKI's masks are one comparison or several joined with & (beta-1 "NKI
    API Masking"); `|` raises an NkiError naming the line, not Python's
    TypeError."""
    def k(in_tensor, out_tensor):
        B, D = in_tensor.shape
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(D)[None, :]
        mask = (i_p < B) | (i_f < 0)
        tile = nl.load(in_tensor[i_p, i_f], mask=mask)
        nl.store(out_tensor[i_p, i_f], value=nl.exp(tile), mask=mask)
    x = np.ones((16, 32), np.float32)
    with pytest.raises(NkiError, match=r"%s:\d+: `\|` of index comparisons: a mask .* joins "
                       r"comparisons with & only" % HERE):
        nki.simulate_kernel(nki.jit(k), x, np.zeros_like(x))
    # and the & form of the same mask runs
    y = np.zeros_like(x)
    x = RNG.standard_normal((16, 32)).astype(np.float32)

    def k2(in_tensor, out_tensor):
        B, D = in_tensor.shape
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(D)[None, :]
        mask = (i_p < B) & (i_f < D)
        tile = nl.load(in_tensor[i_p, i_f], mask=mask)
        nl.store(out_tensor[i_p, i_f], value=nl.exp(tile), mask=mask)
    nki.simulate_kernel(nki.jit(k2), x, y)
    np.testing.assert_allclose(y, np.exp(x.astype(np.float64)), rtol=1e-5)
