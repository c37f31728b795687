"""Op families with an accumulator: activation_reduce and chained
activation reductions, tensor_scalar_reduce, tensor_scalar_cumulative,
exponential, reciprocal, bn_stats / bn_aggr.

Where NKI leaves open whether a reduction reads the fp32 results or dst's
rounded values (it says neither), the models accept both: the expected
value is the fp32 one and the tolerance adds the distance between them."""
import numpy as np

from .models import unary
from .numerics import EPS, F32, FLOATS, as64, f32, fp32op, st, ulp
from .ops_isa import ACT_FNS, _act_bias, _act_scale, _column_of

TS_OPS = ["add", "subtract", "multiply", "maximum", "minimum"]


def free_flat(a):
    """[P, ...] values as [P, n] (the free axes flattened)."""
    a = np.asarray(a, np.float64)
    return a.reshape(a.shape[0], -1)


def sum_tol(o, extra=6):
    """(n+extra)*eps32*sum|o| per partition: a sum in fp32, order undocumented."""
    o = free_flat(o)
    return (o.shape[1] + extra) * EPS["float32"] * np.abs(o).sum(axis=1, keepdims=True) + 1e-30


def either(a, b, tol):
    """Expected a, also accepting b (an undocumented alternative)."""
    with np.errstate(invalid="ignore"):
        # a finite value against an infinite one: anything in between
        d = np.where((a == b) | (np.isnan(a) & np.isnan(b)), 0.0, np.abs(a - b))
    return a, "abs", tol + d


def _reduce(op, v):
    """reduce_op over the flattened free axes of v (float64 of fp32 values)."""
    v = free_flat(v)
    g = {"add": np.sum, "multiply": np.prod, "maximum": np.max, "minimum": np.min}[op]
    return g(v, axis=1, keepdims=True)


def _combine(op, acc, r):
    return {"add": np.add, "multiply": np.multiply, "maximum": np.maximum,
            "minimum": np.minimum}[op](acc, r)


def _reduce_tol(op, vals, res):
    """Tolerance of a reduction of vals with result res."""
    if op in ("maximum", "minimum"):
        return np.zeros_like(res) + 1e-30
    if op == "multiply":
        return (free_flat(vals).shape[1] + 4) * EPS["float32"] * np.abs(res) + 1e-30
    return sum_tol(vals)


# ---- activation_reduce and the Scalar engine's reduce registers

def _act_call(p, fn, shape, dtype, outdt, fresh=False):
    """(dst, zval(env), argument text) of one activation's data/scale/bias;
    fresh: data is a new load (starts at partition 0)."""
    x = p.load(shape, dtype, ACT_FNS[fn]) if fresh else p.operand(shape, dtype, ACT_FNS[fn])
    pos = ACT_FNS[fn] == "pos"
    sc, sarg, svf = _act_scale(p, shape[0], pos)
    bi, barg, bvf = _act_bias(p, shape[0], pos)
    t = p.new_tile(shape, outdt)
    p.ndarray(t)

    def zval(env):
        xa = f32(x.get(env))
        return (xa * _column_of(svf(env), xa.ndim)).astype(F32) + _column_of(bvf(env), xa.ndim)
    p.check("activation.%s[%s %s sc=%s bi=%s ->%s]" % (fn, shape, dtype, sc, bi, outdt), t,
            lambda env: unary(fn, as64(zval(env)), t.dtype))
    return t, x, zval, sarg + barg


def act_reduce(p):
    """activation_reduce (the sum over all free axes, 2-D or 3-D data), or two
    activations chained through the registers: reset_reduce with
    reduce_res=None, then reduce (NKI: "pass None to keep the reduction
    result in the accumulator"), or reset then reset_reduce.  NKI's
    pseudo-code adds the registers twice ("result = reduce_op(regs, ...);
    regs += result"); the model follows the prose, regs + sum(output)."""
    form = p.choice(["ar", "ar", "chain", "reset"])
    shape = p.shape(nd=2 if form != "ar" else None, maxf=512)
    fns = [p.choice(sorted(ACT_FNS)) for _ in range(2)]
    rr = p.new_tile((shape[0], 1), "float32", record=False)   # recorded once defined
    outs = []
    dtype = p.choice(FLOATS)
    outdt = p.choice(FLOATS)
    if form == "ar":
        t, x, zv, args = _act_call(p, fns[0], shape, dtype, outdt)
        p.ndarray(rr)
        p.emit("nisa.activation_reduce(dst=%s, op=nl.%s, data=%s, reduce_op=nl.add, reduce_res=%s%s)" %
               (t.name, fns[0], x.name, rr.name, args))
        outs.append((fns[0], zv, t))
    else:
        # NKI does not say whether a register is the partition's or the
        # lane's (a view starting at partition 64 uses lane 0 or 64): the
        # chained calls read fresh loads, which start at partition 0
        t, x, zv, args = _act_call(p, fns[0], shape, dtype, outdt, fresh=True)
        if form == "chain":
            p.emit("nisa.activation(dst=%s, op=nl.%s, data=%s%s, reduce_op=nl.add, reduce_res=None, "
                   "reduce_cmd=nisa.reduce_cmd.reset_reduce)" % (t.name, fns[0], x.name, args))
            outs.append((fns[0], zv, t))
        else:
            p.emit("nisa.activation(dst=%s, op=nl.%s, data=%s%s, reduce_op=nl.add, "
                   "reduce_cmd=nisa.reduce_cmd.reset)" % (t.name, fns[0], x.name, args))
        shape2 = (shape[0], p.randint(1, 513))
        t2, x2, zv2, args2 = _act_call(p, fns[1], shape2, p.choice(FLOATS), p.choice(FLOATS), fresh=True)
        p.ndarray(rr)
        p.emit("nisa.activation(dst=%s, op=nl.%s, data=%s%s, reduce_op=nl.add, reduce_res=%s, "
               "reduce_cmd=nisa.reduce_cmd.%s)" % (t2.name, fns[1], x2.name, args2, rr.name,
                                                   "reduce" if form == "chain" else "reset_reduce"))
        outs.append((fns[1], zv2, t2))
    p.tiles.append(rr)

    def model(env):
        e, tol, alt = 0.0, 1e-30, 0.0
        for fn, zv, t in outs:
            o = unary(fn, as64(zv(env)), "float32")[0]
            e = e + _reduce("add", o)
            alt = alt + _reduce("add", st(o, t.dtype))
            tol = tol + sum_tol(o)
        return either(e, alt, tol * 2)
    p.check("activation.reduce[%s %s %s]" % (form, shape, fns[:len(outs)]), rr, model)


# ---- tensor_scalar_reduce

def _scalar_or_col(p, P, lo, hi):
    """(text, value(env)): a number in [lo, hi) or a [P,1] fp32 tile."""
    if p.r() < 0.5:
        c = p.load((P, 1), "float32", "near1" if lo > 0 else "small")
        return c.name, (lambda env: c.get(env))
    v = float(F32(p.rng.uniform(lo, hi)))
    return repr(v), (lambda env: np.float64(v))


def ts_reduce(p):
    """tensor_scalar_reduce: dst = data op0 operand0 (fp32, one rounding);
    reduce_res = reduce_op over all free axes, from reset (identity),
    load_reduce (reduce_init) or a previous call's registers (reduce);
    reduce_res_negate negates what is written, not the registers."""
    rop = p.choice(["add", "multiply", "maximum", "minimum"])
    mul = rop == "multiply"
    shape = p.shape(maxf=48 if mul else 600)
    dtype = p.choice(FLOATS)
    op0 = p.choice(["multiply", "add"] if mul else TS_OPS)
    kind = "near1" if mul else "normal"
    cmd = p.choice(["default", "reset_reduce", "load_reduce", "chain"])
    calls = []
    for i in range(2 if cmd == "chain" else 1):
        # a chain's calls start at partition 0 (see act_reduce)
        x = p.load(shape, dtype, kind) if cmd == "chain" else p.operand(shape, dtype, kind)
        s0, v0 = _scalar_or_col(p, shape[0], 0.9 if mul else -2, 1.1 if mul else 2)
        t = p.new_tile(shape, p.choice(FLOATS))
        p.ndarray(t)
        calls.append((x, s0, v0, t))
    rr = p.new_tile((shape[0], 1), "float32")
    p.ndarray(rr)
    neg = p.r() < 0.3
    init = None
    rname = {"maximum": p.choice(["maximum", "max"]), "minimum": p.choice(["minimum", "min"])}.get(rop, rop)
    for i, (x, s0, v0, t) in enumerate(calls):
        last = i == len(calls) - 1
        s = "nisa.tensor_scalar_reduce(dst=%s, data=%s, op0=nl.%s, operand0=%s, reduce_op=nl.%s, reduce_res=%s" % (
            t.name, x.name, op0, s0, rname, rr.name if last else None)
        c = {"chain": "reset_reduce" if i == 0 else "reduce"}.get(cmd, cmd)
        if c != "default":
            s += ", reduce_cmd=nisa.reduce_cmd.%s" % c
        if c == "load_reduce":
            init = _scalar_or_col(p, shape[0], 0.5 if mul else -3, 1.5 if mul else 3)
            s += ", reduce_init=%s" % init[0]
        if neg and last:
            s += ", reduce_res_negate=True"
        p.emit(s + ")")

        def dmodel(env, x=x, v0=v0, t=t):
            xa = f32(x.get(env))
            return st(fp32op(op0, xa, _column_of(v0(env), xa.ndim)), t.dtype), "exact", None
        p.check("tensor_scalar_reduce.%s[%s %s->%s]" % (op0, shape, dtype, t.dtype), t, dmodel)

    def rmodel(env):
        e = alt = None
        tol, n = 1e-30, 0
        for x, s0, v0, t in calls:
            xa = f32(x.get(env))
            o = fp32op(op0, xa, _column_of(v0(env), xa.ndim)).astype(np.float64)
            r, ra = _reduce(rop, o), _reduce(rop, st(o, t.dtype))
            tol = tol + _reduce_tol(rop, o, r)
            n += free_flat(o).shape[1]
            e = r if e is None else _combine(rop, e, r)
            alt = ra if alt is None else _combine(rop, alt, ra)
        if init is not None:
            iv = np.broadcast_to(as64(init[1](env)), e.shape)
            e, alt = _combine(rop, iv, e), _combine(rop, iv, alt)
        if rop == "multiply":   # relative to the whole product
            tol = (n + 8) * EPS["float32"] * np.abs(e) + 1e-30
        if neg:
            e, alt = -e, -alt
        return either(st(e, "float32"), st(alt, "float32"), tol * 2 + ulp(e, "float32"))
    p.check("tensor_scalar_reduce.%s[%s cmd=%s neg=%s]" % (rop, shape, cmd, neg), rr, rmodel)


# ---- tensor_scalar_cumulative

def ts_cumulative(p):
    """reg = op1(op0(x[i], imm0), reg); dst[i] = reg, replayed in fp32 in
    the pseudo-code's order.  op1 subtract is left out: the pseudo-code's
    op1(value, reg) order is unusual enough to be a slip of the docs.  dst
    is fp32: NKI does not say whether reg carries dst's rounding."""
    P = p.randint(1, 129)
    F = p.choice([1, 2, 17, 128, 512, p.randint(1, 600)])
    dtype = p.choice(FLOATS)
    op0 = p.choice(TS_OPS)
    op1 = p.choice(["add", "multiply", "maximum", "minimum"])
    x = p.operand((P, F), dtype, "near1" if op1 == "multiply" else "small")
    s0, v0 = _scalar_or_col(p, P, 0.9 if op1 == "multiply" else -1, 1.1 if op1 == "multiply" else 1)
    cmd = p.choice(["default", "reset_reduce", "load_reduce"])
    t = p.new_tile((P, F), "float32")
    p.ndarray(t)
    s = "nisa.tensor_scalar_cumulative(dst=%s, src=%s, op0=nl.%s, op1=nl.%s, imm0=%s" % (
        t.name, x.name, op0, op1, s0)
    i1 = None
    if cmd != "default":
        s += ", reduce_cmd=nisa.reduce_cmd.%s" % cmd
    if cmd == "load_reduce":
        i1 = _scalar_or_col(p, P, -1, 1)
        s += ", imm1=%s" % i1[0]
    p.emit(s + ")")
    ident = {"add": 0.0, "multiply": 1.0, "maximum": -np.inf, "minimum": np.inf}[op1]

    def model(env):
        xa = f32(x.get(env))
        v = fp32op(op0, xa, _column_of(v0(env), 2))
        reg = f32(np.broadcast_to(as64(i1[1](env)) if i1 else ident, (P, 1)))[:, 0]
        out = np.zeros((P, F), F32)
        for i in range(F):
            reg = fp32op(op1, v[:, i], reg)
            out[:, i] = reg
        return out.astype(np.float64), "exact", None
    p.check("tensor_scalar_cumulative[%s,%s (%d,%d) %s cmd=%s]" % (op0, op1, P, F, dtype, cmd), t, model)


# ---- exponential, reciprocal

def exponential(p):
    """dst = exp(src - max_value) (the subtraction in fp32, exp as the
    activation models'), with the sum of dst in reduce_res from 0
    (reset_reduce) or reduce_init (load_reduce)."""
    shape = p.shape()
    dtype = p.choice(FLOATS)
    x = p.operand(shape, dtype, "small")
    how = p.choice(["none", "num", "tile"])
    if how == "num":
        mv = float(F32(p.rng.uniform(-2, 2)))
        marg, mvf = ", max_value=%r" % mv, (lambda env: np.float64(mv))
    elif how == "tile":
        c = p.load((shape[0], 1), "float32", "small")
        marg, mvf = ", max_value=%s" % c.name, (lambda env: c.get(env))
    else:
        marg, mvf = "", (lambda env: np.float64(0.0))
    t = p.new_tile(shape, p.choice(FLOATS))
    p.ndarray(t)
    red = p.choice(["none", "reset_reduce", "load_reduce"])
    rr = init = None
    if red != "none":
        rr = p.new_tile((shape[0], 1), "float32")
        p.ndarray(rr)
        marg += ", reduce_res=%s, reduce_cmd=nisa.reduce_cmd.%s" % (rr.name, red)
        if red == "load_reduce":
            init = _scalar_or_col(p, shape[0], -3, 3)
            marg += ", reduce_init=%s" % init[0]
    p.emit("nisa.exponential(dst=%s, src=%s%s)" % (t.name, x.name, marg))

    def z(env):
        xa = f32(x.get(env))
        return fp32op("subtract", xa, _column_of(mvf(env), xa.ndim))
    p.check("exponential[%s %s max=%s ->%s]" % (shape, dtype, how, t.dtype), t,
            lambda env: unary("exp", as64(z(env)), t.dtype))
    if rr is None:
        return

    def rmodel(env):
        o = unary("exp", as64(z(env)), "float32")[0]
        e, alt = _reduce("add", o), _reduce("add", st(o, t.dtype))
        if init is not None:
            iv = np.broadcast_to(as64(init[1](env)), e.shape)
            e, alt = e + iv, alt + iv
        return either(e, alt, 2 * sum_tol(o) + ulp(e, "float32"))
    p.check("exponential.reduce[%s %s]" % (shape, red), rr, rmodel)


def reciprocal(p):
    """1/x in fp32, cast to dst: 1 fp32 ulp (NKI says "float32 math", not
    correctly rounded) + 1 ulp of dst."""
    shape = p.shape()
    dtype = p.choice(FLOATS)
    x = p.operand(shape, dtype, p.choice(["pos", "normal"]), psum_ok=True)
    psum = len(shape) == 2 and shape[1] <= 512 and p.r() < 0.2
    t = p.new_tile(shape, "float32" if psum else p.choice(FLOATS), "psum" if psum else "sbuf")
    p.ndarray(t)
    p.emit("nisa.reciprocal(dst=%s, data=%s)" % (t.name, x.name))

    def model(env):
        r = fp32op("divide", np.float64(1.0), x.get(env)).astype(np.float64)
        tol = ulp(r, "float32") + (ulp(r, t.dtype) if t.dtype != "float32" else 0)
        return st(r, t.dtype), "abs", tol
    p.check("reciprocal[%s %s->%s %s]" % (shape, dtype, t.dtype, t.buf), t, model)


# ---- bn_stats / bn_aggr

def _stats(v):
    """(count, mean, var*count) of rows of v (float64)."""
    n = v.shape[1]
    m = v.mean(axis=1)
    return np.full(v.shape[0], float(n)), m, ((v - m[:, None]) ** 2).sum(axis=1)


def bn_stats(p):
    """bn_stats on 1-3 chunks of <= 512 elements (each written at 6*i of one
    stats tile), then bn_aggr: the population mean and variance.  The
    algorithm is undocumented: means allow (n+2)*eps32*sum|x|/n, var*count
    (n+4)*eps32*sum(x^2) (what sum(x^2) - n*mean^2 would lose)."""
    P = p.randint(1, 129)
    k = p.choice([1, 1, 2, 3])
    dtype = p.choice(FLOATS)
    chunks = [p.operand((P, p.choice([2, 8, 64, 512, p.randint(2, 513)])), dtype) for _ in range(k)]
    st_t = p.new_tile((P, 6 * k), "float32")
    p.ndarray(st_t)
    for i, c in enumerate(chunks):
        p.emit("nisa.bn_stats(dst=%s[:, %d:%d], data=%s)" % (st_t.name, 6 * i, 6 * i + 6, c.name))

    def smodel(env):
        e, tol = np.zeros((P, 6 * k)), np.zeros((P, 6 * k))
        for i, c in enumerate(chunks):
            v = f32(c.get(env)).astype(np.float64)
            for j, part in enumerate((v[:, 0::2], v[:, 1::2])):
                cnt, m, vc = _stats(part)
                n = part.shape[1]
                col = 6 * i + 3 * j
                e[:, col], e[:, col + 1], e[:, col + 2] = cnt, m, vc
                tol[:, col + 1] = (n + 2) * EPS["float32"] * np.abs(part).sum(axis=1) / n
                tol[:, col + 2] = (n + 4) * EPS["float32"] * (part ** 2).sum(axis=1) * 2
        return st(e, "float32"), "abs", tol + ulp(e, "float32") + 1e-30
    p.check("bn_stats[P%d %s %s]" % (P, [c.shape[1] for c in chunks], dtype), st_t, smodel)
    outdt = p.choice(["float32", "float32", "bfloat16"])
    ag = p.new_tile((P, 2), outdt)
    p.ndarray(ag)
    p.emit("nisa.bn_aggr(dst=%s, data=%s)" % (ag.name, st_t.name))

    def amodel(env):
        s = as64(st_t.get(env)).reshape(P, 2 * k, 3)
        cnt, m, vc = s[:, :, 0], s[:, :, 1], s[:, :, 2]
        n = cnt.sum(axis=1)
        mean = (cnt * m).sum(axis=1) / n
        var = (vc + cnt * (m - mean[:, None]) ** 2).sum(axis=1) / n
        e = np.stack([mean, var], axis=1)
        mag = np.stack([(cnt * np.abs(m)).sum(axis=1) / n,
                        (vc + cnt * (m ** 2 + mean[:, None] ** 2)).sum(axis=1) / n], axis=1)
        tol = (4 * k + 8) * EPS["float32"] * mag * 4 + ulp(e, "float32")
        return st(e, outdt), "abs", tol * (1 + EPS.get(outdt, 0)) + ulp(e, outdt) + 1e-30
    p.check("bn_aggr[P%d k=%d ->%s]" % (P, k, outdt), ag, amodel)
