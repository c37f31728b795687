"""Op families that move data: dma_copy with dtype casts and views,
nc_transpose on each engine, tensor_partition_reduce, and nki.language
ops the other families do not draw (invert, var, all, full, zeros_like,
load_transpose2d).  nl.abs_max / abs_min are NeuronCore-v4 only (NKI),
and the kernels are traced for trn2, which refuses them, as it should."""
import numpy as np

from .gen import Tile
from .models import reduce_model
from .numerics import EPS, FLOATS, INTS, as64, f32, is_int, st, ulp

DMA_DTYPES = FLOATS + INTS + ["uint32"]


def dma_conv(x, src, dst):
    """NKI dma_copy: equal dtypes copy; different ones go src -> fp32 ->
    dst ("a two-step process"), integers too."""
    if src == dst:
        return as64(x)
    return st(f32(x), dst)


def _dma_kind(dtype):
    return "big" if dtype in ("int32", "uint32") else "normal"


def _dst_view(p, shape, dtype):
    """(text, Tile) of a dma_copy dst: a new tile, or a stepped view at any
    start partition of a larger zeroed tile (a DMA has no start-partition
    rule)."""
    if len(shape) != 2 or p.r() < 0.5:
        t = p.new_tile(shape, dtype)
        p.ndarray(t)
        return t.name, t
    P, F = shape
    k = p.randint(1, 4)
    base = p.new_tile((min(128, P + p.randint(0, 40)), (F - 1) * k + 1 + p.randint(0, 5)), dtype)
    p.ndarray(base)
    p.emit("nisa.memset(dst=%s, value=0)" % base.name)
    p0 = p.randint(0, base.shape[0] - P + 1)
    f0 = p.randint(0, base.shape[1] - (F - 1) * k)
    idx = (slice(p0, p0 + P), slice(f0, f0 + (F - 1) * k + 1, k))
    txt = "%s[%d:%d, %d:%d:%d]" % (base.name, p0, p0 + P, f0, f0 + (F - 1) * k + 1, k)
    inv = np.ones(base.shape, bool)
    inv[idx] = False
    p.check("memset+dma[%s rest]" % (base.shape,), base,
            lambda env, inv=inv: (np.where(inv, 0.0, base.get(env)), "exact", None))
    return txt, Tile(txt, shape, dtype, "sbuf", base=base, idx=idx)


def _dge(p, same):
    """dge_mode argument: hwdge only between equal dtypes (tpbsim refuses
    a converting hwdge copy: the hardware DGE moves raw bytes)."""
    modes = ["", "", ", dge_mode=nisa.dge_mode.none", ", dge_mode=nisa.dge_mode.swdge"]
    if same:
        modes.append(", dge_mode=nisa.dge_mode.hwdge")
    return p.choice(modes)


def dma_cast(p):
    """dma_copy SBUF -> SBUF, HBM -> SBUF or SBUF -> HBM between any two
    dtypes, from views and into views (any start partition, stepped)."""
    way = p.choice(["s2s", "s2s", "h2s", "s2h"])
    shape = p.shape(nd=2) if p.r() < 0.8 else p.shape(nd=3)
    a = p.choice(DMA_DTYPES)
    b = a if p.r() < 0.25 else p.choice(DMA_DTYPES)
    dge = _dge(p, a == b)
    if way == "h2s":
        host = p.host(shape, a, _dma_kind(a))
        src_txt = p.param(host)
        srcv = (lambda env, h=as64(host): h)
    else:
        x = p.operand(shape, a, _dma_kind(a) if p.r() < 0.5 else "normal")
        src_txt, srcv = x.name, x.get
    if way == "s2h":
        o = p.name("o_h")
        t = Tile(o, shape, b)
        p.emit("%s = nl.ndarray(%s, dtype=nl.%s, buffer=nl.shared_hbm)" % (o, shape, b))
        p.outs.append((o, t, "plain"))
        dst_txt = o
    else:
        dst_txt, t = _dst_view(p, shape, b)
    p.emit("nisa.dma_copy(dst=%s, src=%s%s)" % (dst_txt, src_txt, dge))
    p.check("dma_copy[%s %s %s->%s%s]" % (way, shape, a, b, dge), t,
            lambda env: (dma_conv(srcv(env), a, b), "exact", None))


def nc_transpose(p):
    """nc_transpose on the PE (into PSUM, up to [128, 128]) or the vector
    engine (up to [32, 32], SBUF or PSUM); free axes flattened; dst of
    data's dtype; bit-exact, NaN and inf too (NeuronCore-v3 on)."""
    eng = p.choice(["tensor", "vector", "default"])
    lim = 32 if eng == "vector" else 128
    P = p.randint(1, lim + 1)
    dtype = p.choice(FLOATS + ["int32", "uint8"])
    if p.r() < 0.3:
        A = p.choice([1, 2, 4])
        shape = (P, A, p.randint(1, lim // A + 1))
    else:
        shape = (P, p.randint(1, lim + 1))
    n = int(np.prod(shape[1:]))
    x = p.operand(shape, dtype, "special" if dtype in FLOATS and p.r() < 0.3 else "normal")
    buf = "psum" if eng != "vector" or p.r() < 0.3 else "sbuf"
    if eng == "default":   # NKI: the engine chosen by shape
        buf = "psum"
    t = p.new_tile((n, P), dtype, buf)
    p.ndarray(t)
    e = "" if eng == "default" else ", engine=nisa.engine.%s" % eng
    p.emit("nisa.nc_transpose(dst=%s, data=%s%s)" % (t.name, x.name, e))
    p.check("nc_transpose[%s %s %s ->%s]" % (eng, shape, dtype, buf), t,
            lambda env: (as64(x.get(env)).reshape(P, n).T.copy(), "exact", None))


def partition_reduce(p):
    """tensor_partition_reduce over the partitions into a [1, F] tile:
    add (fp32, order undocumented), maximum, bitwise_or / bitwise_and."""
    P, F = p.randint(1, 129), p.choice([1, 7, 64, 512, p.randint(1, 513)])
    if p.r() < 0.3:
        dtype, op = "int32", p.choice(["bitwise_or", "bitwise_and", "maximum"])
    else:
        dtype, op = p.choice(FLOATS), p.choice(["add", "maximum"])
    p.no_special = op == "add"
    # bitwise ops on the full 32-bit range; int32 max stays small: whether
    # GpSimd compares int32 natively or through fp32 is not documented
    big = op.startswith("bitwise") and p.r() < 0.5
    x = p.load((P, F), dtype, "big") if big else p.operand((P, F), dtype)
    t = p.new_tile((1, F), dtype if dtype == "int32" else p.choice(FLOATS))
    p.ndarray(t)
    p.emit("nisa.tensor_partition_reduce(dst=%s, op=nl.%s, data=%s)" % (t.name, op, x.name))
    fn = {"add": "sum", "maximum": "max", "bitwise_or": "or", "bitwise_and": "and"}[op]
    p.check("tensor_partition_reduce.%s[(%d,%d) %s->%s]" % (op, P, F, dtype, t.dtype), t,
            lambda env: reduce_model(fn, x.get(env), (0,), True, t.dtype))


# ---- nki.language ops not drawn elsewhere

def _invert(p):
    """nl.invert: bitwise NOT ("XOR with all-ones") of an integer tile."""
    shape = p.shape()
    dtype = p.choice(["int32", "uint8", "uint32"])
    x = p.operand(shape, dtype, p.choice(["normal", "big"]))
    t = p.new_tile(shape, dtype)
    p.emit("%s = nl.invert(%s)" % (t.name, x.name))
    mask = {"uint8": 0xFF}.get(dtype, 0xFFFFFFFF)

    def model(env):
        r = as64(x.get(env)).astype(np.int64) ^ mask
        if dtype == "int32":
            r = ((r & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000
        return r.astype(np.float64), "exact", None
    p.check("nl.invert[%s %s]" % (shape, dtype), t, model)


def _var(p, part=False):
    """nl.var: the population variance (NumPy's var) over the last free
    axes, keepdims-shaped always ("keepdims: currently ignored").  part:
    a 3-D tile over its last axis only (nl_var_axes)."""
    shape = p.shape(nd=3 if part else None)
    dtype = p.choice(FLOATS)
    x = p.operand(shape, dtype)
    axes = [1] if len(shape) == 2 else ([2] if part else [1, 2])
    t = p.new_tile(tuple(1 if i in axes else s for i, s in enumerate(shape)), dtype)
    p.emit("%s = nl.var(%s, axis=%s)" % (t.name, x.name, axes if len(axes) > 1 else axes[0]))

    def model(env):
        v = f32(x.get(env)).astype(np.float64)
        n = int(np.prod([shape[a] for a in axes]))
        e = v.var(axis=tuple(axes), keepdims=True)
        tol = (n + 4) * EPS["float32"] * 4 * (v ** 2).mean(axis=tuple(axes), keepdims=True)
        return st(e, dtype), "abs", tol * (1 + EPS[dtype]) + ulp(e, dtype) + 1e-30
    p.check("nl.var[%s axis=%s %s]" % (shape, axes, dtype), t, model)


def _all(p):
    """nl.all: logical AND over the free axis; 1 / 0 in x's dtype."""
    shape = (p.randint(1, 129), p.randint(1, 6)) if p.r() < 0.5 else p.shape(nd=2)
    dtype = p.choice(FLOATS + ["int32", "uint8"])
    x = p.load(shape, dtype, "bool") if p.r() < 0.5 else p.operand(shape, dtype)
    t = p.new_tile((shape[0], 1), dtype)
    p.emit("%s = nl.all(%s, axis=1)" % (t.name, x.name))
    p.check("nl.all[%s %s]" % (shape, dtype), t,
            lambda env: ((as64(x.get(env)) != 0).all(axis=1, keepdims=True).astype(np.float64),
                         "exact", None))


def _full(p):
    """nl.full / nl.zeros_like: the value in the dtype."""
    shape = p.shape()
    dtype = p.choice(FLOATS + INTS)
    if p.r() < 0.5:
        v = float(p.randint(0, 100)) if is_int(dtype) else p.fscalar(-50, 50)
        t = p.new_tile(shape, dtype)
        p.emit("%s = nl.full(%s, %r, dtype=nl.%s)" % (t.name, shape, v, dtype))
    else:
        v = 0.0
        x = p.operand(shape, dtype)
        t = p.new_tile(shape, dtype)
        p.emit("%s = nl.zeros_like(%s)" % (t.name, x.name))
    p.check("nl.full[%s %s %r]" % (shape, dtype, v), t, lambda env: (st(np.full(shape, v), dtype), "exact", None))


def _load_t2d(p):
    """nl.load_transpose2d: an HBM [F, P] block read as a [P, F] tile,
    optionally converted (dtype=)."""
    P, F = p.randint(1, 129), p.randint(1, 129)
    a = p.choice(FLOATS)
    b = p.choice([None, None] + FLOATS)
    host = p.host((F + p.randint(0, 3), P + p.randint(0, 3)), a)
    nm = p.param(host)
    t = p.new_tile((P, F), b or a)
    p.emit("%s = nl.load_transpose2d(%s[0:%d, 0:%d]%s)" % (t.name, nm, F, P, ", dtype=nl.%s" % b if b else ""))
    p.check("nl.load_transpose2d[(%d,%d) %s->%s]" % (F, P, a, t.dtype), t,
            lambda env: (dma_conv(as64(host[0:F, 0:P]).T, a, t.dtype), "exact", None))


NL_EXTRA = [_invert, _var, _all, _full, _load_t2d]


def nl_extra(p):
    p.choice(NL_EXTRA)(p)


def nl_var_axes(p):
    _var(p, part=True)
