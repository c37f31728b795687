"""NumPy references for NeuronCore-v4 MX on packed quads, written from
NKI's definitions (nki.isa.quantize_mx, nc_matmul_mx; the Trainium3
architecture guide) and the OCP MX bit layouts, independent of tpbsim's
implementation: fp8 / fp4 decoded from their fields, fp8 encoded by
nearest value with ties to the even mantissa.  Used by
tests/python/test_mx_quad.py and scripts/nkilib_refs_mx.py, nkilib_refs_mx2.py."""
import numpy as np

def fp8_table(e4m3):
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


def encode_fp8(v, e4m3):
    """Round each (finite, in-range) value to the nearest fp8 byte, ties to
    the even mantissa."""
    tab = fp8_table(e4m3)
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


def bf16(x):
    """x rounded to bfloat16 (RNE), as float64."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32).astype(np.float64)


def scale_rows(p):
    return 32 * (p // 32) + (p % 32) // 8


def quantize_ref(x, e4m3):
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
    data = encode_fp8(q.reshape(P, F4), e4m3).reshape(P, F4 // 4, 4)
    return data, s.astype(np.uint8)


def unpack(bits, kind):
    """quad bits [P, n] -> values [P, n, 4]."""
    if kind == "fp4":
        b = np.asarray(bits, np.uint16)
        nib = np.stack([(b >> (4 * l)) & 15 for l in range(4)], axis=-1)
        return FP4[nib]
    return fp8_table(kind == "e4m3")[np.asarray(bits, np.uint32).view(np.uint8)
                                      .reshape(bits.shape + (4,))]


def matmul_ref(st_bits, st_kind, st_scale, mv_bits, mv_kind, mv_scale):
    """dst[m, n] = sum over p, l of st[p, m, l] * mv[p, n, l], each scaled
    by its group's 2^(s - 127) (scales [P // 8, cols])."""
    st = unpack(st_bits, st_kind) * np.repeat(2.0 ** (st_scale - 127.0), 8, 0)[:, :, None]
    mv = unpack(mv_bits, mv_kind) * np.repeat(2.0 ** (mv_scale - 127.0), 8, 0)[:, :, None]
    return np.einsum("pml,pnl->mn", st, mv)
