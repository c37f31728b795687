"""NeuronCore-v4 MX on packed quads (float8_e5m2_x4, float8_e4m3fn_x4,
float4_e2m1fn_x4) as NKI's nisa.quantize_mx and nisa.nc_matmul_mx define
them: groups of 8 partitions x the 4 lanes of a quad, one E8M0 scale per
group in the first four partitions of its 32-partition quadrant, a block
scale twice OCP's.  Checked against the NumPy reference of scripts/mx_ref.py,
written from those definitions (fp8 / fp4 decoded and encoded from their
bit layouts)."""
import os
import sys

import numpy as np
import pytest

from tpbsim import TpbError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from mx_ref import FP4, bf16, fp8_table, matmul_ref, quantize_ref, scale_rows  # noqa: E402

RNG = np.random.default_rng(404)


def _quantize_kernel(dtype_x4, P, F, scale_dt=nl.uint8):
    @nki.jit(platform_target="trn3")
    def k(x):
        t = nl.ndarray((P, 4 * F), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        q = nl.ndarray((P, F), dtype=dtype_x4, buffer=nl.sbuf)
        s = nl.ndarray((P, F), dtype=scale_dt, buffer=nl.sbuf)
        nisa.memset(dst=s.view(nl.uint8), value=7)   # an E8M0 tile takes no memset
        nisa.quantize_mx(dst=q, src=t, dst_scale=s)
        oq = nl.ndarray((P, F), dtype=dtype_x4, buffer=nl.shared_hbm)
        osc = nl.ndarray((P, F), dtype=scale_dt, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=oq, src=q)
        nisa.dma_copy(dst=osc, src=s)
        return oq, osc
    return k


@pytest.mark.parametrize("dtype_x4, e4m3, scale_dt", [
    (nl.float8_e4m3fn_x4, True, nl.uint8), (nl.float8_e5m2_x4, False, nl.uint8),
    (nl.float8_e4m3fn_x4, True, nl.float8_e8m0fnu)])
def test_quantize_mx_quads_numpy(dtype_x4, e4m3, scale_dt):
    """Groups of very different magnitudes, an all-zero group; the scale of
    group (quadrant q, j) lands in partition 32q + j, the other scale
    partitions keep what they held; lane l of quad column c is element
    4c + l.  Scales in uint8 or NKI 0.5's float8_e8m0fnu (the same E8M0
    bits; a host array holds them as uint8)."""
    P, F = 128, 16
    mag = 2.0 ** RNG.integers(-20, 20, (P // 8, 1, F, 1))
    x = bf16((RNG.standard_normal((P // 8, 8, F, 4)) * mag).reshape(P, 4 * F))
    x[8:16, 4:8] = 0.0
    q, s = _quantize_kernel(dtype_x4, P, F, scale_dt)(nki.typed(x.astype(np.float32),
                                                               nl.bfloat16))
    assert s.dtype == np.uint8
    want_q, want_s = quantize_ref(x, e4m3)
    assert q.dtype == np.uint32 and q.shape == (P, F)
    np.testing.assert_array_equal(q.view(np.uint8).reshape(P, F, 4), want_q)
    rows = scale_rows(np.arange(0, P, 8))
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
    tab = fp8_table(True)
    assert tab[q.view(np.uint8).reshape(P, F, 4)[0, 0, 0]] == 224.0
    assert tab[q.view(np.uint8).reshape(P, F, 4)[0, 0, 1]] == 0.5


# ---- nc_matmul_mx ----

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


def _psum_out(ps, M, N):
    """The [M, N] PSUM result as a float32 HBM output (through SBUF)."""
    r = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=r, src=ps)
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=r)
    return out


def _load_quads(src, dt, P, n, viewed):
    """src [P, n] (the quads' bits) into an SBUF tile of quads: through an
    HBM dtype view, or (viewed) loaded as the bits and the tile viewed as
    the quads, as the NKI Library's MX kernels do (`weight_sb.view(...)`)."""
    if not viewed:
        t = nl.ndarray((P, n), dtype=dt, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=src.ap([[n, P], [1, n]], offset=0, dtype=dt))
        return t
    t = nl.ndarray((P, n), dtype=src.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=src)
    return t.view(dt)


def _matmul_kernel(st_dt, mv_dt, P, M, N, dst_dt, twice=False, viewed=False, e8m0=False):
    """e8m0: the scale tiles are float8_e8m0fnu, filled through uint8 views
    of themselves."""
    @nki.jit(platform_target="trn3")
    def k(st, sst, mv, smv):
        a = _load_quads(st, st_dt, P, M, viewed)
        b = _load_quads(mv, mv_dt, P, N, viewed)
        sdt = nl.float8_e8m0fnu if e8m0 else nl.uint8
        sa = nl.ndarray((P, M), dtype=sdt, buffer=nl.sbuf)
        sb = nl.ndarray((P, N), dtype=sdt, buffer=nl.sbuf)
        sa8, sb8 = (sa.view(nl.uint8), sb.view(nl.uint8)) if e8m0 else (sa, sb)
        nisa.memset(dst=sa8, value=0)
        nisa.memset(dst=sb8, value=0)
        _spread(sa8, sst, P, M)
        _spread(sb8, smv, P, N)
        ps = nl.ndarray((M, N), dtype=dst_dt, buffer=nl.psum)
        nisa.nc_matmul_mx(dst=ps, stationary=a, moving=b, stationary_scale=sa, moving_scale=sb)
        if twice:
            nisa.nc_matmul_mx(dst=ps, stationary=a, moving=b, stationary_scale=sa,
                              moving_scale=sb, accumulate=True)
        return _psum_out(ps, M, N)
    return k


_DT = {"e4m3": nl.float8_e4m3fn_x4, "e5m2": nl.float8_e5m2_x4, "fp4": nl.float4_e2m1fn_x4}


@pytest.mark.parametrize("st_kind, mv_kind, P, viewed, e8m0", [
    ("e4m3", "e4m3", 128, False, False), ("e5m2", "fp4", 64, False, False),
    ("fp4", "fp4", 32, False, False), ("e4m3", "fp4", 128, True, False),
    ("e5m2", "e4m3", 64, False, True)])
def test_matmul_mx_quads_numpy(st_kind, mv_kind, P, viewed, e8m0):
    """K = 4 x P contraction values per output, scales per group (MXFP8
    times MXFP4 is allowed); fp32 PSUM.  viewed: the operands are uint32 /
    uint16 tiles viewed as quads on the PE; e8m0: float8_e8m0fnu scale
    tiles."""
    M, N = 64, 256
    st, mv = _quads((P, M), st_kind), _quads((P, N), mv_kind)
    sst = RNG.integers(118, 128, (P // 8, M)).astype(np.uint8)
    smv = RNG.integers(118, 128, (P // 8, N)).astype(np.uint8)
    got = _matmul_kernel(_DT[st_kind], _DT[mv_kind], P, M, N, nl.float32, viewed=viewed,
                         e8m0=e8m0)(st, sst, mv, smv)
    want = matmul_ref(st, st_kind, sst, mv, mv_kind, smv)
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
    once = bf16(matmul_ref(st, "e4m3", sst, mv, "e4m3", smv).astype(np.float32))
    np.testing.assert_allclose(got, bf16((once + once).astype(np.float32)), rtol=1e-2)


def _wide_kernel(P, M, N, dst_dt, st_dt, mv_dts):
    """One nc_matmul_mx per moving dtype into one [M, N] PSUM tile
    (accumulate=None: the first overwrites, the later ones, with their own
    moving data and scales, accumulate)."""
    @nki.jit(platform_target="trn3")
    def k(st, sst, mv1, smv1, mv2, smv2):
        a = _load_quads(st, st_dt, P, M, False)
        sa = nl.ndarray((P, M), dtype=nl.uint8, buffer=nl.sbuf)
        nisa.memset(dst=sa, value=0)
        _spread(sa, sst, P, M)
        ps = nl.ndarray((M, N), dtype=dst_dt, buffer=nl.psum)
        for mv, smv, dt in zip((mv1, mv2), (smv1, smv2), mv_dts):
            b = _load_quads(mv, dt, P, N, False)
            sb = nl.ndarray((P, N), dtype=nl.uint8, buffer=nl.sbuf)
            nisa.memset(dst=sb, value=0)
            _spread(sb, smv, P, N)
            nisa.nc_matmul_mx(dst=ps, stationary=a, moving=b, stationary_scale=sa,
                              moving_scale=sb)
        return _psum_out(ps, M, N)
    return k


@pytest.mark.parametrize("N, dst_dt", [(1024, nl.float32), (2048, nl.float32),
                                       (1024, nl.bfloat16), (2048, nl.bfloat16)])
def test_matmul_mx_wide_numpy(N, dst_dt):
    """NKI nc_matmul_mx: the moving free size may reach 4096 for a float32
    dst and 8192 for a bfloat16 one, "8x PSUM banks (the entire PSUM)"
    (the NKI Library's down projections use [128, 1024] bfloat16); it runs
    as one MatmulMX per <= 512 columns inside one bank.  Two such matmuls
    (fp4 then fp8 moving data) accumulate column for column; a bfloat16 dst
    holds the first result rounded to bf16, then the sum rounded again."""
    P, M = 128, 96
    st = _quads((P, M), "e4m3")
    mv1, mv2 = _quads((P, N), "fp4"), _quads((P, N), "e5m2")
    sst = RNG.integers(118, 128, (P // 8, M)).astype(np.uint8)
    smv1 = RNG.integers(118, 128, (P // 8, N)).astype(np.uint8)
    smv2 = RNG.integers(110, 120, (P // 8, N)).astype(np.uint8)
    got = _wide_kernel(P, M, N, dst_dt, _DT["e4m3"], (_DT["fp4"], _DT["e5m2"]))(
        st, sst, mv1, smv1, mv2, smv2)
    r1 = matmul_ref(st, "e4m3", sst, mv1, "fp4", smv1)
    r2 = matmul_ref(st, "e4m3", sst, mv2, "e5m2", smv2)
    big = max(np.abs(r1).max(), np.abs(r2).max())
    if dst_dt == nl.float32:
        want = r1 + r2
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * big)
    else:
        want = bf16((bf16(r1.astype(np.float32)) + r2).astype(np.float32))
        np.testing.assert_allclose(got, want, rtol=8e-3, atol=8e-3 * big)
    assert np.abs(want).min() < np.abs(want).max() / 4   # not one value throughout


@pytest.mark.parametrize("N, dst_dt", [(4096, nl.float32), (8192, nl.bfloat16)])
def test_matmul_mx_whole_psum_numpy(N, dst_dt):
    """NKI's largest nc_matmul_mx: a dst filling the whole 16 KiB PSUM
    partition (all 8 banks; 8 or 16 MatmulMX)."""
    P, M = 32, 32
    st, mv = _quads((P, M), "e5m2"), _quads((P, N), "e4m3")
    sst = RNG.integers(120, 128, (P // 8, M)).astype(np.uint8)
    smv = RNG.integers(120, 128, (P // 8, N)).astype(np.uint8)
    got = _matmul_kernel(_DT["e5m2"], _DT["e4m3"], P, M, N, dst_dt)(st, sst, mv, smv)
    want = matmul_ref(st, "e5m2", sst, mv, "e4m3", smv)
    if dst_dt == nl.bfloat16:
        want = bf16(want.astype(np.float32))
    np.testing.assert_allclose(got, want, rtol=1e-5 if dst_dt == nl.float32 else 8e-3,
                               atol=1e-6 * np.abs(want).max())


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


def _quantize_ones(P, dtype_x4, scale_rows):
    """quantize_mx of a [P, 16] bf16 tile of ones into [P, 4] quads and a
    [scale_rows, 4] scale tile (inside a traced kernel)."""
    s = nl.ndarray((P, 16), dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.memset(dst=s, value=1.0)
    q = nl.ndarray((P, 4), dtype=dtype_x4, buffer=nl.sbuf)
    sc = nl.ndarray((scale_rows, 4), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.quantize_mx(dst=q, src=s, dst_scale=sc)


def test_quad_is_no_number():
    """An instruction other than the MX ones reading or writing a quad as a
    number, a DMA converting one, and quantize_mx to fp4 are refused."""
    def memset(x):
        t = nl.ndarray((32, 4), dtype=nl.float8_e5m2_x4, buffer=nl.sbuf)
        nisa.memset(dst=t, value=1.0)
    _refuses(memset, r"memset of packed MX dtype float8_e5m2_x4: only value 0 is supported")

    def act(x):
        t = nl.ndarray((32, 4), dtype=nl.float8_e5m2_x4, buffer=nl.sbuf)
        nisa.memset(dst=t, value=0)
        u = nl.ndarray((32, 4), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=u, op=nl.exp, data=t)
    _refuses(act, "packed MX dtype fp8e5m2x4 is taken only by QuantizeMX out")

    def convert(x):
        t = nl.ndarray((32, 4), dtype=nl.float8_e5m2_x4, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
    _refuses(convert, r"a packed MX dtype or an MX scale is copied only into itself \(src uint32, "
                      r"dst "
                      r"float8_e5m2_x4\)")

    _refuses(lambda x: _quantize_ones(32, nl.float4_e2m1fn_x4, 4), "quantize_mx writes float8_e5m2_x4 or float8_e4m3fn_x4, not "
                     "float4_e2m1fn_x4")


def test_e8m0_is_a_scale_only():
    """float8_e8m0fnu is NKI's MX scale dtype: a memset or an arithmetic
    op on it, and a DMA converting uint8 into it, are refused naming what
    takes one (a uint8 view of the tile does the memset)."""
    def memset(x):
        t = nl.ndarray((32, 4), dtype=nl.float8_e8m0fnu, buffer=nl.sbuf)
        nisa.memset(dst=t, value=1.0)
    _refuses(memset, "MX scale dtype fp8e8m0 is taken only by the scale of QuantizeMX")

    def add(x):
        t = nl.ndarray((32, 4), dtype=nl.float8_e8m0fnu, buffer=nl.sbuf)
        nisa.memset(dst=t.view(nl.uint8), value=127)
        u = nl.ndarray((32, 4), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=u, data=t, op0=nl.add, operand0=1.0)
    _refuses(add, "MX scale dtype fp8e8m0 is taken only by the scale of QuantizeMX")

    def convert(x):
        t = nl.ndarray((32, 4), dtype=nl.float8_e8m0fnu, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x.view(nl.uint8)[0:32, 0:4])
    _refuses(convert, r"an MX scale is copied only into itself \(src uint8, dst float8_e8m0fnu\)")


@pytest.mark.parametrize("dt, bits", [(nl.float4_e2m1fn_x4, np.uint16),
                                       (nl.float8_e4m3fn_x4, np.uint32)])
def test_memset_quads_to_zero_numpy(dt, bits):
    """NKI's memset takes packed x4 tiles with value=0 (the NKI Library's
    MXFP4 down projection pads its weight tile so): the quads' bytes become
    zero, the rest of the tile keeps what was loaded."""
    @nki.jit(platform_target="trn3")
    def k(x):
        t = nl.ndarray((64, 16), dtype=dt, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x.ap([[16, 64], [1, 16]], offset=0, dtype=dt))
        nisa.memset(dst=t[0:32, 4:12], value=0)
        out = nl.ndarray((64, 16), dtype=dt, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out
    x = RNG.integers(1, np.iinfo(bits).max, (64, 16), dtype=bits)
    want = x.copy()
    want[0:32, 4:12] = 0
    np.testing.assert_array_equal(k(x), want)


def test_quad_dma_bits_numpy():
    """Quads move byte for byte, also through a 3-D descriptor with an odd
    plane count ([3, 128, 8] in HBM to [128, 3, 8] in SBUF: three planes)."""
    @nki.jit(platform_target="trn3")
    def k(x):
        t = nl.ndarray((128, 3, 8), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x.ap([[8, 128], [1024, 3], [1, 8]], offset=0,
                                      dtype=nl.float8_e4m3fn_x4))
        out = nl.ndarray((128, 24), dtype=nl.float8_e4m3fn_x4, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t.reshape((128, 24)))
        return out
    x = RNG.integers(0, 1 << 32, (3, 128, 8), dtype=np.uint32)
    np.testing.assert_array_equal(k(x), x.transpose(1, 0, 2).reshape(128, 24))


def test_quantize_mx_scale_tile_too_small_is_a_compile_error():
    """Quads on 64 partitions need scale rows 0-3 and 32-35: a [4, F] scale
    tile is refused when the kernel compiles, naming quantize_mx."""
    _refuses(lambda x: _quantize_ones(64, nl.float8_e4m3fn_x4, 4), r"quantize_mx scale: 64 partitions of quads need scales in the first "
                          r"36 partitions \(four per quadrant\) x 4 columns, got 4 x 4")
