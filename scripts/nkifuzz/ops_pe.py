"""Op families on the PE and the remaining nki.isa ops: transposes,
matmuls, iota, memset, tensor_tensor_scan, scalar_tensor_tensor and
tensor_copy_predicated."""
import numpy as np

from .numerics import EPS, F32, FLOATS, INTS, f32, fp32op, st, st_from, ulp


def transpose(p):
    """nl.transpose and nc_transpose on the PE (into PSUM) or on the vector
    engine (<= 32x32), copied out: exact."""
    P, F = p.randint(1, 129), p.randint(1, 129)
    dtype = p.choice(FLOATS)
    x = p.operand((P, F), dtype)
    how = p.choice(["nl", "pe", "vec"])
    if how == "vec":
        P, F = min(P, 32), min(F, 32)
        x = p.operand((P, F), dtype)
    ps = p.new_tile((F, P), dtype, "sbuf" if how == "vec" else "psum", record=False)
    if how == "nl":
        p.emit("%s = nl.transpose(%s)" % (ps.name, x.name))
    else:
        p.ndarray(ps)
        eng = ", engine=nisa.engine.vector" if how == "vec" else ""
        p.emit("nisa.nc_transpose(dst=%s, data=%s%s)" % (ps.name, x.name, eng))
    t = p.new_tile((F, P), dtype)
    p.ndarray(t)
    p.emit("nisa.tensor_copy(dst=%s, src=%s)" % (t.name, ps.name))
    p.check("transpose[%s %s %s]" % (how, (P, F), dtype), t,
            lambda env: (x.get(env).T.copy(), "exact", None))


def _matmul_ktiles(p, ps, M, N, dtype):
    """1-3 k-tiles accumulated into ps by accumulate= flags, implicit
    grouping or psum[...] += nc_matmul(...)."""
    ks = []
    for _ in range(p.randint(1, 4)):
        K = p.choice([32, 128, p.randint(1, 129)])
        ks.append((p.operand((K, M), dtype), p.operand((K, N), dtype)))
    p.ndarray(ps)
    form = p.choice(["acc", "flag", "plus"])
    for i, (a, b) in enumerate(ks):
        if form == "flag":
            p.emit("nisa.nc_matmul(dst=%s, stationary=%s, moving=%s, accumulate=%s)" %
                   (ps.name, a.name, b.name, i > 0))
        elif form == "plus" and i > 0:
            p.emit("%s[...] += nisa.nc_matmul(%s, %s)" % (ps.name, a.name, b.name))
        else:
            p.emit("nisa.nc_matmul(dst=%s, stationary=%s, moving=%s)" % (ps.name, a.name, b.name))
    return ks


def matmul(p):
    """fp32 accumulation in PSUM, order undocumented: (K+2)*eps32*sum|a||b|."""
    dtype = p.choice(["float32", "bfloat16"])
    how = p.choice(["nisa", "nisa", "nl"])
    M = p.choice([1, 5, 64, 128, p.randint(1, 129)])
    N = p.choice([1, 7, 128, 512, p.randint(1, 513)])
    ps = p.new_tile((M, N), "float32", "psum", record=False)
    if how == "nl":
        K = p.choice([1, 32, 128, p.randint(1, 129)])
        a, b = p.operand((K, M), dtype), p.operand((K, N), dtype)
        p.emit("%s = nl.matmul(%s, %s, transpose_x=True)" % (ps.name, a.name, b.name))
        ks = [(a, b)]
    else:
        ks = _matmul_ktiles(p, ps, M, N, dtype)
    check_psum_sum(p, ps, M, N, ks, lambda outdt: "matmul[%s k=%s M%d N%d %s->%s]" % (
        how, [a.shape[0] for a, _ in ks], M, N, dtype, outdt))


def check_psum_sum(p, ps, M, N, ks, label):
    """Copy PSUM tile ps [M, N] out to a new tile (float32 or bfloat16) and
    check it against the sum of a.T @ b over ks, (a, b) pairs of [K.., M] /
    [K.., N] operands (leading dims flattened into K): fp32 accumulation in
    an undocumented order, (K+2)*eps32*sum|a||b| per k-tile.  label(outdt)
    names the check."""
    outdt = p.choice(["float32", "float32", "bfloat16"])
    t = p.new_tile((M, N), outdt)
    p.ndarray(t)
    p.emit("nisa.tensor_copy(dst=%s, src=%s)" % (t.name, ps.name))

    def model(env):
        e, bound = 0, 0
        for a, b in ks:
            A, B = a.get(env), b.get(env)
            K = int(np.prod(A.shape[:-1]))
            A, B = A.reshape(K, M), B.reshape(K, N)
            e = e + A.T @ B
            bound = bound + np.abs(A).T @ np.abs(B) * (K + 2) * EPS["float32"]
        e = st(e, outdt)
        # an inf operand (a reused tile), or partial sums that may pass
        # fp32's range, make inf or NaN by the summation order, which NKI
        # does not document: those elements are not checked
        big = bound / (EPS["float32"] * 3) > float(np.finfo(np.float32).max)
        with np.errstate(invalid="ignore"):
            e = np.where(np.isfinite(e) & ~big, e, t.get(env))
        return e, "abs", bound * (1 + EPS.get(outdt, 0)) + ulp(e, outdt) + 1e-30
    p.check(label(outdt), t, model)


def _iota(p):
    """1-D or 2-D patterns (negative steps too), offset, channel_multiplier."""
    P = p.randint(1, 129)
    dt = p.choice(["int32", "float32", "bfloat16", "float16"])
    n0, n1 = p.randint(1, 20), p.randint(1, 20)
    s0, s1 = p.randint(-3, 4), p.randint(-3, 4)
    off, cm = p.randint(-50, 50), p.randint(-3, 4)
    two = p.r() < 0.5
    shape = (P, n1, n0) if two else (P, n0)
    pat = [[s1, n1], [s0, n0]] if two else [[s0, n0]]
    t = p.new_tile(shape, dt)
    p.ndarray(t)
    p.emit("nisa.iota(dst=%s, pattern=%s, offset=%d, channel_multiplier=%d)" % (t.name, pat, off, cm))

    def model(env):
        if two:
            v = off + cm * np.arange(P).reshape(-1, 1, 1) + s1 * np.arange(n1).reshape(1, -1, 1) + \
                s0 * np.arange(n0).reshape(1, 1, -1)
        else:
            v = off + cm * np.arange(P).reshape(-1, 1) + s0 * np.arange(n0).reshape(1, -1)
        return st(v.astype(np.float64), t.dtype), "exact", None
    p.check("iota[%s %s %s off=%d cm=%d]" % (shape, dt, pat, off, cm), t, model)


def _memset(p):
    shape = p.shape()
    dt = p.choice(FLOATS + INTS)
    v = float(p.randint(0, 200)) if dt in INTS else p.fscalar(-100, 100)
    t = p.new_tile(shape, dt)
    p.ndarray(t)
    p.emit("nisa.memset(dst=%s, value=%r)" % (t.name, v))
    p.check("memset[%s %s %r]" % (shape, dt, v), t,
            lambda env: (st(np.full(shape, v), t.dtype), "exact", None))


def iota_memset(p):
    if p.r() < 0.5:
        _iota(p)
    else:
        _memset(p)


SCAN_OPS = [("multiply", "add"), ("add", "multiply"), ("maximum", "add"),
            ("subtract", "add"), ("add", "subtract")]


def scan(p):
    """tensor_tensor_scan, replayed in fp32 in the order of NKI's pseudo-code.
    dst is fp32: the stub stores the carried value in data0's dtype while
    tpbsim carries fp32, which is left ambiguous on purpose."""
    P = p.randint(1, 129)
    F = p.choice([1, 2, 17, 128, 512, p.randint(1, 600)])
    dtype = p.choice(FLOATS)
    d0 = p.operand((P, F), dtype, p.choice(["near1", "small"]))
    d1 = p.operand((P, F), dtype, "small")
    op0, op1 = p.choice(SCAN_OPS)
    r0, r1 = p.r() < 0.3, p.r() < 0.3
    if (op0, op1) == ("add", "multiply"):
        d1 = p.operand((P, F), dtype, "near1")
    ini = p.choice(["num", "tile"])
    if ini == "num":
        iv = p.fscalar(-1, 1)
        istr, ivf = repr(iv), (lambda env: np.full((P, 1), iv))
    else:
        it = p.column(P, "small")
        istr, ivf = it.name, (lambda env: it.get(env))
    t = p.new_tile((P, F), "float32")
    p.ndarray(t)
    p.emit("nisa.tensor_tensor_scan(dst=%s, data0=%s, data1=%s, initial=%s, op0=nl.%s, op1=nl.%s, "
           "reverse0=%s, reverse1=%s)" % (t.name, d0.name, d1.name, istr, op0, op1, r0, r1))

    def model(env):
        A, B, r = f32(d0.get(env)), f32(d1.get(env)), f32(ivf(env))[:, 0]
        out = np.zeros(A.shape, F32)
        for i in range(A.shape[1]):
            m = fp32op(op0, r, A[:, i]) if r0 else fp32op(op0, A[:, i], r)
            r = fp32op(op1, B[:, i], m) if r1 else fp32op(op1, m, B[:, i])
            out[:, i] = r
        return out.astype(np.float64), "exact", None
    p.check("tensor_tensor_scan[%s,%s r%d%d (%d,%d) %s init=%s]" % (op0, op1, r0, r1, P, F, dtype, ini), t, model)


def stt(p):
    """scalar_tensor_tensor: (data op0 operand0) op1 operand1, fp32, reverse flags."""
    shape = p.shape(nd=2)
    dtype = p.choice(FLOATS)
    x, y = p.operand(shape, dtype), p.operand(shape, dtype)
    op0 = p.choice(["add", "subtract", "multiply", "maximum"])
    op1 = p.choice(["add", "subtract", "multiply", "minimum"])
    if p.r() < 0.5:
        c = p.load((shape[0], 1), "float32")
        s0, v0 = c.name, (lambda env: c.get(env))
    else:
        v = p.fscalar()
        s0, v0 = repr(v), (lambda env: np.float64(v))
    r0, r1 = p.r() < 0.3, p.r() < 0.3
    outdt = p.choice(FLOATS)
    t = p.new_tile(shape, outdt)
    p.ndarray(t)
    p.emit("nisa.scalar_tensor_tensor(dst=%s, data=%s, op0=nl.%s, operand0=%s, op1=nl.%s, operand1=%s, "
           "reverse0=%s, reverse1=%s)" % (t.name, x.name, op0, s0, op1, y.name, r0, r1))

    def model(env):
        xa, ya, a0 = f32(x.get(env)), f32(y.get(env)), f32(v0(env))
        m = fp32op(op0, a0, xa) if r0 else fp32op(op0, xa, a0)
        m = fp32op(op1, ya, m) if r1 else fp32op(op1, m, ya)
        return st(m, t.dtype), "exact", None
    p.check("scalar_tensor_tensor[%s%s,%s%s %s %s->%s]" % (op0, "(r)" if r0 else "", op1, "(r)" if r1 else "",
                                                          shape, dtype, outdt), t, model)


def copy_predicated(p):
    """tensor_copy_predicated over a memset dst, uint8 or fp32 predicate."""
    shape = p.shape(nd=2)
    dtype = p.choice(FLOATS + ["int32"])
    src = p.operand(shape, dtype)
    pred = p.load(shape, p.choice(["uint8", "float32"]), "bool")
    t = p.new_tile(shape, dtype)
    fill = 7.0
    p.ndarray(t)
    p.emit("nisa.memset(dst=%s, value=%r)" % (t.name, fill))
    rev = p.r() < 0.3
    p.emit("nisa.tensor_copy_predicated(dst=%s, src=%s, predicate=%s, reverse_pred=%s)" %
           (t.name, src.name, pred.name, rev))
    p.check("tensor_copy_predicated[%s %s pred=%s rev=%s]" % (shape, dtype, pred.dtype, rev), t,
            lambda env: (st_from(np.where((pred.get(env) != 0) ^ rev, src.get(env), fill), dtype, t.dtype),
                         "exact", None))
