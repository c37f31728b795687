"""nc_matmul's parameters (family matmul_params): fp8 operands (legacy
float8_e4m3 and float8_e5m2) mixed with bf16 / fp16, both fp32;
Tensor-Engine row / column tiling (tile_position, tile_size); the
double_row perf mode ([K, 2, M] x [K, 2, N], fp8); the onezero hints on
0/1 tiles; k-tiles of different modes accumulated into one PSUM tile; and
is_transpose=True (moving an identity: a bit-exact transpose in the
stationary's dtype, NaN / inf too, NeuronCore-v3 on).  Left out: a
bfloat16 PSUM dst (NeuronCore-v4 only; the kernels are traced for trn2),
tfloat32 (its rounding is not documented), float8_e4m3fn (v4 only)."""
import numpy as np

import tpbsim.nki.language as nl

from .gen import Prog
from .numerics import F32, as64
from .ops_pe import check_psum_sum

FP8 = {"float8_e4m3": nl.float8_e4m3, "float8_e5m2": nl.float8_e5m2}
NARROW = ["float8_e4m3", "float8_e5m2", "bfloat16", "float16"]


def _fp8_host(p, shape, dtype, kind):
    v = (p.rng.random(shape) < 0.5).astype(np.float64) if kind == "bool" else p.rng.normal(0, 2.0, shape)
    return v.astype(F32).astype(FP8[dtype])


def mm_operand(p: Prog, shape, dtype, kind="normal"):
    """A matmul operand: fp8 from a host array of that dtype (checked
    exact), else the usual operands (views, reuse, loads)."""
    if dtype in FP8:
        host = _fp8_host(p, shape, dtype, kind)
        nm = p.param(host)
        t = p.new_tile(shape, dtype)
        p.emit("%s = nl.load(%s)" % (t.name, nm))
        p.check("load[%s %s]" % (shape, dtype), t, lambda env, h=as64(host): (h, "exact", None))
        return t
    if kind == "bool":
        return p.load(shape, dtype, "bool")
    return p.operand(shape, dtype)


def _dtypes(p):
    if p.r() < 0.2:
        return "float32", "float32"
    return p.choice(NARROW), p.choice(NARROW)


def _ktile(p, M, N):
    """One k-tile: (text of the extra arguments, stationary, moving, mode)."""
    mode = p.choice(["plain", "plain", "tiled", "double_row", "onezero"])
    if mode == "double_row":
        K = p.randint(1, 129)
        a = mm_operand(p, (K, 2, M), p.choice(list(FP8)))
        b = mm_operand(p, (K, 2, N), p.choice(list(FP8)))
        return ", perf_mode=nisa.matmul_perf_mode.double_row", a, b, mode
    da, db = _dtypes(p)
    extra = ""
    K = p.choice([1, 32, 128, p.randint(1, 129)])
    if mode == "tiled":
        rs, cs = p.choice([32, 64, 128]), p.choice([32, 64, 128])
        K = min(K, rs)
        if M > cs:
            mode = "plain"   # this M needs the full column width
        else:
            extra = ", tile_position=(%d, %d), tile_size=(%d, %d)" % (
                rs * p.randint(0, 128 // rs), cs * p.randint(0, 128 // cs), rs, cs)
    ka = kb = "normal"
    if mode == "onezero":
        hint = p.choice(["is_stationary_onezero", "is_moving_onezero", "both"])
        if hint in ("is_stationary_onezero", "both"):
            ka = "bool"
            extra += ", is_stationary_onezero=True"
        if hint in ("is_moving_onezero", "both"):
            kb = "bool"
            extra += ", is_moving_onezero=True"
    a = mm_operand(p, (K, M), da, ka)
    b = mm_operand(p, (K, N), db, kb)
    return extra, a, b, mode


def _matmul(p):
    M = p.choice([1, 5, 32, 64, 128, p.randint(1, 129)])
    N = p.choice([1, 7, 128, 512, p.randint(1, 513)])
    ks = [_ktile(p, M, N) for _ in range(p.randint(1, 4))]
    ps = p.new_tile((M, N), "float32", "psum", record=False)
    p.ndarray(ps)
    explicit = p.r() < 0.5
    for i, (extra, a, b, _) in enumerate(ks):
        acc = ", accumulate=%s" % (i > 0) if explicit else ""
        p.emit("nisa.nc_matmul(dst=%s, stationary=%s, moving=%s%s%s)" % (ps.name, a.name, b.name, extra, acc))
    desc = ",".join("%s:%s%s/%s%s" % (m, a.dtype, a.shape, b.dtype, b.shape) for _, a, b, m in ks)
    check_psum_sum(p, ps, M, N, [(a, b) for _, a, b, _m in ks], lambda outdt: "nc_matmul[%s M%d N%d %s ->%s]" % (
        "acc" if explicit else "auto", M, N, desc, outdt))


def _transpose(p):
    """is_transpose=True: dst = stationary.T, bit-exact, dst in
    stationary's dtype (nc_transpose: "equivalent to" this call)."""
    K, M = p.randint(1, 129), p.randint(1, 129)
    dtype = p.choice(["float32", "bfloat16", "float16"] + list(FP8))
    if dtype in FP8:
        x = mm_operand(p, (K, M), dtype)
    else:
        x = p.load((K, M), dtype, "special") if p.r() < 0.5 else p.operand((K, M), dtype)
    eye = np.eye(K).astype(F32).astype(FP8.get(dtype) or {"float32": np.float32, "float16": np.float16,
                                                           "bfloat16": nl.bfloat16}[dtype])
    nm = p.param(eye)
    ident = p.new_tile((K, K), dtype, record=False)
    p.emit("%s = nl.load(%s)" % (ident.name, nm))
    ps = p.new_tile((M, K), dtype, "psum")
    p.ndarray(ps)
    p.emit("nisa.nc_matmul(dst=%s, stationary=%s, moving=%s, is_transpose=True)" % (ps.name, x.name, ident.name))
    p.check("nc_matmul[is_transpose (%d,%d) %s]" % (K, M, dtype), ps,
            lambda env: (as64(x.get(env)).T.copy(), "exact", None))


def matmul_params(p):
    if p.r() < 0.25:
        _transpose(p)
    else:
        _matmul(p)

