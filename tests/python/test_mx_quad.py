"""NeuronCore-v4 MX on packed quads (float8_e5m2_x4, float8_e4m3fn_x4,
float4_e2m1fn_x4) as NKI's nisa.quantize_mx and nisa.nc_matmul_mx define
them: groups of 8 partitions x the 4 lanes of a quad, one E8M0 scale per
group in the first four partitions of its 32-partition quadrant, a block
scale twice OCP's.  Checked against a NumPy reference written here from
those definitions (fp8 / fp4 decoded and encoded from their bit layouts)."""
import numpy as np
import pytest

from tpbsim import TpbError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(404)


# ---- the formats, from their bit layouts (OCP MX) ----

def _fp8_table(e4m3):
    """float value of every fp8 byte (NaN where the format has one)."""
    out = np.empty(256, np.float64)
    eb, mb, bias = (4, 3, 7) if e4m3 else (5, 2, 15)
    for b in range(256):
        s, e, m = b >> 7, (b >> mb) & ((1 << eb) - 1), b & ((1 << mb) - 1)
        if e4m3 and e == 15 and m == 7:
            v = np.nan
        elif not e4m3 and e == 31:
            v = np.inf if m == 0 else np.nan
        elif e == 0:
            v = m / (1 << mb) * 2.0 ** (1 - bias)
        else:
            v = (1 + m / (1 << mb)) * 2.0 ** (e - bias)
        out[b] = -v if s else v
    return out


FP4 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def _encode_fp8(v, e4m3):
    """Round each (finite, in-range) value to the nearest fp8 byte, ties to
    the even mantissa."""
    tab = _fp8_table(e4m3)
    ok = np.isfinite(tab)
    codes = np.arange(256)[ok]
    vals = tab[ok]
    out = np.empty(v.shape, np.uint8)
    for i, x in enumerate(v.ravel()):
        d = np.abs(vals - x)
        best = codes[d == d.min()]
        if len(best) > 1:   # a tie (or +-0): the even mantissa, then the sign of x
            best = [c for c in best if c % 2 == 0] or list(best)
            best = [c for c in best if (c >> 7) == (np.signbit(x))] or best
        out.ravel()[i] = best[0]
    return out


def _bf16(x):
    """x rounded to bfloat16 (RNE), as float64."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32).astype(np.float64)


def _scale_rows(p):
    return 32 * (p // 32) + (p % 32) // 8


# ---- quantize_mx ----

def _quantize_ref(x, e4m3):
    """NKI quantize_mx of x [P, 4F] (bf16 values): (quad bytes [P, F, 4],
    scales [P // 8, F])."""
    P, F4 = x.shape
    emax = 8 if e4m3 else 15
    g = x.reshape(P // 8, 8, F4 // 4, 4)
    amax = np.abs(g).max(axis=(1, 3))
    s = np.zeros(amax.shape, np.int64)
    nz = amax > 0
    s[nz] = np.floor(np.log2(amax[nz])).astype(np.int64) - (emax - 1) + 127
    s = np.clip(s, 0, 254)
    q = g / (2.0 ** (s - 127))[:, None, :, None]
    data = _encode_fp8(q.reshape(P, F4), e4m3).reshape(P, F4 // 4, 4)
    return data, s.astype(np.uint8)


def _quantize_kernel(dtype_x4, P, F):
    @nki.jit(platform_target="trn3")
    def k(x):
        t = nl.ndarray((P, 4 * F), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        q = nl.ndarray((P, F), dtype=dtype_x4, buffer=nl.sbuf)
        s = nl.ndarray((P, F), dtype=nl.uint8, buffer=nl.sbuf)
        nisa.memset(dst=s, value=7)
        nisa.quantize_mx(dst=q, src=t, dst_scale=s)
        oq = nl.ndarray((P, F), dtype=dtype_x4, buffer=nl.shared_hbm)
        osc = nl.ndarray((P, F), dtype=nl.uint8, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=oq, src=q)
        nisa.dma_copy(dst=osc, src=s)
        return oq, osc
    return k


@pytest.mark.parametrize("dtype_x4, e4m3", [(nl.float8_e4m3fn_x4, True),
                                            (nl.float8_e5m2_x4, False)])
def test_quantize_mx_quads_numpy(dtype_x4, e4m3):
    """Groups of very different magnitudes, an all-zero group; the scale of
    group (quadrant q, j) lands in partition 32q + j, the other scale
    partitions keep what they held; lane l of quad column c is element
    4c + l."""
    P, F = 128, 16
    mag = 2.0 ** RNG.integers(-20, 20, (P // 8, 1, F, 1))
    x = _bf16((RNG.standard_normal((P // 8, 8, F, 4)) * mag).reshape(P, 4 * F))
    x[8:16, 4:8] = 0.0
    q, s = _quantize_kernel(dtype_x4, P, F)(nki.typed(x.astype(np.float32), nl.bfloat16))
    want_q, want_s = _quantize_ref(x, e4m3)
    assert q.dtype == np.uint32 and q.shape == (P, F)
    np.testing.assert_array_equal(q.view(np.uint8).reshape(P, F, 4), want_q)
    rows = _scale_rows(np.arange(0, P, 8))
    np.testing.assert_array_equal(s[rows], want_s)
    others = np.setdiff1d(np.arange(P), rows)
    assert (s[others] == 7).all()
    assert want_s[1, 1] == 0   # the all-zero group


def test_quantize_mx_scale_is_twice_ocp():
    """NKI: the block scale is 2^(floor(log2 amax) - (emax - 1)), twice the
    OCP sample algorithm's; a group whose largest value is 448 (e4m3fn's
    largest) gets scale 2^(8 - 7) = 2 and keeps 448 / 2 = 224."""
    P, F = 32, 4
    x = np.full((P, 4 * F), 1.0)
    x[0, 0] = 448.0
    q, s = _quantize_kernel(nl.float8_e4m3fn_x4, P, F)(nki.typed(x.astype(np.float32),
                                                                  nl.bfloat16))
    assert s[0, 0] == 127 + 1
    tab = _fp8_table(True)
    assert tab[q.view(np.uint8).reshape(P, F, 4)[0, 0, 0]] == 224.0
    assert tab[q.view(np.uint8).reshape(P, F, 4)[0, 0, 1]] == 0.5


# ---- nc_matmul_mx ----

def _unpack(bits, kind):
    """quad bits [P, n] -> values [P, n, 4]."""
    if kind == "fp4":
        b = np.asarray(bits, np.uint16)
        nib = np.stack([(b >> (4 * l)) & 15 for l in range(4)], axis=-1)
        return FP4[nib]
    return _fp8_table(kind == "e4m3")[np.asarray(bits, np.uint32).view(np.uint8)
                                      .reshape(bits.shape + (4,))]


def _matmul_ref(st_bits, st_kind, st_scale, mv_bits, mv_kind, mv_scale):
    """dst[m, n] = sum over p, l of st[p, m, l] * mv[p, n, l], each scaled
    by its group's 2^(s - 127) (scales [P // 8, cols])."""
    st = _unpack(st_bits, st_kind) * np.repeat(2.0 ** (st_scale - 127.0), 8, 0)[:, :, None]
    mv = _unpack(mv_bits, mv_kind) * np.repeat(2.0 ** (mv_scale - 127.0), 8, 0)[:, :, None]
    return np.einsum("pml,pnl->mn", st, mv)


def _quads(shape, kind):
    if kind == "fp4":
        return RNG.integers(0, 1 << 16, shape, dtype=np.uint16)
    b = RNG.integers(0, 256, shape + (4,), dtype=np.uint8)
    if kind == "e4m3":
        b = np.where((b & 0x7F) == 0x7F, b & 0xF0, b)   # no NaN
    else:
        b = np.where((b & 0x7C) == 0x7C, b & 0x83, b)   # no inf / NaN
    return b.view(np.uint32).reshape(shape)


def _spread(t_sbuf_rows, scale_hbm, P, n):
    """the [P // 8, n] scales into the first four partitions of each quadrant"""
    for q in range(P // 32):
        nisa.dma_copy(dst=t_sbuf_rows.ap([[n, 4], [1, n]], offset=32 * q * n),
                      src=scale_hbm.ap([[n, 4], [1, n]], offset=4 * q * n))


def _matmul_kernel(st_dt, mv_dt, P, M, N, dst_dt, twice=False):
    @nki.jit(platform_target="trn3")
    def k(st, sst, mv, smv):
        a = nl.ndarray((P, M), dtype=st_dt, buffer=nl.sbuf)
        b = nl.ndarray((P, N), dtype=mv_dt, buffer=nl.sbuf)
        nisa.dma_copy(dst=a, src=st.ap([[M, P], [1, M]], offset=0, dtype=st_dt))
        nisa.dma_copy(dst=b, src=mv.ap([[N, P], [1, N]], offset=0, dtype=mv_dt))
        sa = nl.ndarray((P, M), dtype=nl.uint8, buffer=nl.sbuf)
        sb = nl.ndarray((P, N), dtype=nl.uint8, buffer=nl.sbuf)
        nisa.memset(dst=sa, value=0)
        nisa.memset(dst=sb, value=0)
        _spread(sa, sst, P, M)
        _spread(sb, smv, P, N)
        ps = nl.ndarray((M, N), dtype=dst_dt, buffer=nl.psum)
        nisa.nc_matmul_mx(dst=ps, stationary=a, moving=b, stationary_scale=sa, moving_scale=sb)
        if twice:
            nisa.nc_matmul_mx(dst=ps, stationary=a, moving=b, stationary_scale=sa,
                              moving_scale=sb, accumulate=True)
        r = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=r, src=ps)
        out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=r)
        return out
    return k


_DT = {"e4m3": nl.float8_e4m3fn_x4, "e5m2": nl.float8_e5m2_x4, "fp4": nl.float4_e2m1fn_x4}


@pytest.mark.parametrize("st_kind, mv_kind, P", [("e4m3", "e4m3", 128), ("e5m2", "fp4", 64),
                                                 ("fp4", "fp4", 32)])
def test_matmul_mx_quads_numpy(st_kind, mv_kind, P):
    """K = 4 x P contraction values per output, scales per group (MXFP8
    times MXFP4 is allowed); fp32 PSUM."""
    M, N = 64, 256
    st, mv = _quads((P, M), st_kind), _quads((P, N), mv_kind)
    sst = RNG.integers(118, 128, (P // 8, M)).astype(np.uint8)
    smv = RNG.integers(118, 128, (P // 8, N)).astype(np.uint8)
    got = _matmul_kernel(_DT[st_kind], _DT[mv_kind], P, M, N, nl.float32)(st, sst, mv, smv)
    want = _matmul_ref(st, st_kind, sst, mv, mv_kind, smv)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-30 + 1e-6 * np.abs(want).max())


def test_matmul_mx_bf16_dst_and_accumulate_numpy():
    """A bfloat16 PSUM tile (NKI: dst float32 or bfloat16) holds each result
    rounded to bf16; a second, accumulating matmul adds to the rounded
    value."""
    P, M, N = 128, 32, 64
    st, mv = _quads((P, M), "e4m3"), _quads((P, N), "e4m3")
    sst = np.full((P // 8, M), 127, np.uint8)
    smv = np.full((P // 8, N), 120, np.uint8)
    got = _matmul_kernel(_DT["e4m3"], _DT["e4m3"], P, M, N, nl.bfloat16, twice=True)(
        st, sst, mv, smv)
    once = _bf16(_matmul_ref(st, "e4m3", sst, mv, "e4m3", smv).astype(np.float32))
    np.testing.assert_allclose(got, _bf16((once + once).astype(np.float32)), rtol=1e-2)


# ---- what is refused ----

def _refuses(body, match):
    @nki.jit(platform_target="trn3")
    def k(x):
        body(x)
        out = nl.ndarray((32, 4), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((32, 4), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=t, value=0.0)
        nisa.dma_copy(dst=out, src=t)
        return out
    with pytest.raises(TpbError, match=match):
        k(np.zeros((32, 4), np.uint32))


def test_quad_is_no_number():
    """An instruction other than the MX ones reading or writing a quad as a
    number, a DMA converting one, and quantize_mx to fp4 are refused."""
    def memset(x):
        t = nl.ndarray((32, 4), dtype=nl.float8_e5m2_x4, buffer=nl.sbuf)
        nisa.memset(dst=t, value=0)
    _refuses(memset, "packed MX dtype fp8e5m2x4 is taken only by QuantizeMX out")

    def convert(x):
        t = nl.ndarray((32, 4), dtype=nl.float8_e5m2_x4, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
    _refuses(convert, r"a packed MX dtype is copied only into itself \(src uint32, dst "
                      r"float8_e5m2_x4\)")

    def to_fp4(x):
        s = nl.ndarray((32, 16), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.memset(dst=s, value=1.0)
        q = nl.ndarray((32, 4), dtype=nl.float4_e2m1fn_x4, buffer=nl.sbuf)
        sc = nl.ndarray((4, 4), dtype=nl.uint8, buffer=nl.sbuf)
        nisa.quantize_mx(dst=q, src=s, dst_scale=sc)
    _refuses(to_fp4, "quantize_mx writes float8_e5m2_x4 or float8_e4m3fn_x4, not "
                     "float4_e2m1fn_x4")
