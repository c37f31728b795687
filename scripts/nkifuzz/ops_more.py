"""More op families: tensor_copy_predicated's other forms (a number as
src, uint16 / uint32 predicates, PSUM operands), nl.gather_flattened
and dma_compute."""
import numpy as np

from .gen import Tile
from .numerics import EPS, FLOATS, INTS, NPDT, as64, f32, st, st_from, ulp
from .ops_gather import load_host


def copy_pred2(p):
    """tensor_copy_predicated: where the predicate (uint8 / uint16 / uint32,
    0 or 1) is 1 (0 with reverse_pred), dst gets src (a tile of dst's
    dtype, or a number rounded to it); elsewhere dst keeps its memset
    value.  src or the predicate in PSUM (not both), dst in SBUF or PSUM.
    Predicate values other than 0 / 1 are left out: NKI says "True"."""
    shape = p.shape(nd=2)
    dtype = p.choice(FLOATS + ["int32"])
    pdt = p.choice(["uint8", "uint16", "uint32"])
    ph = (p.rng.random(shape) < p.choice([0.1, 0.5, 0.9])).astype(NPDT.get(pdt, np.uint16))
    pred = load_host(p, ph, pdt, record=pdt != "uint16")
    where = p.choice(["sbuf", "sbuf", "src_psum", "pred_psum"])
    if where == "pred_psum" and pdt != "uint16":
        pp = p.new_tile(shape, pdt, "psum", record=False)
        p.ndarray(pp)
        p.emit("nisa.tensor_copy(dst=%s, src=%s)" % (pp.name, pred.name))
        pred_txt = pp.name
    else:
        pred_txt = pred.name
    if p.r() < 0.4:
        # a number past dst's finite range is left out: tpbsim clips it to
        # the largest finite value (the NKI compiler's clip_scalar), where
        # plain rounding would give inf; NKI says only "the scalar is copied"
        v = float(p.randint(-100, 100)) if dtype == "int32" else \
            p.choice([p.fscalar(-50, 50), 60000.5, -0.0, float("inf"), float("-inf")])
        src_txt = repr(v) if np.isfinite(v) else 'float("%s")' % v
        srcv = (lambda env, v=v: np.full(shape, v))
    else:
        kind = "special" if dtype in FLOATS and p.r() < 0.3 else "normal"
        src = p.load(shape, dtype, kind) if kind != "normal" else p.operand(shape, dtype)
        src_txt, srcv = src.name, src.get
        if where == "src_psum" and dtype == "float32":
            sp = p.new_tile(shape, dtype, "psum", record=False)
            p.ndarray(sp)
            p.emit("nisa.tensor_copy(dst=%s, src=%s)" % (sp.name, src.name))
            src_txt = sp.name
    buf = "psum" if dtype == "float32" and where == "sbuf" and p.r() < 0.3 else "sbuf"
    t = p.new_tile(shape, dtype, buf)
    fill = -7.0
    p.ndarray(t)
    p.emit("nisa.memset(dst=%s, value=%r)" % (t.name, fill))
    rev = p.r() < 0.3
    p.emit("nisa.tensor_copy_predicated(dst=%s, src=%s, predicate=%s, reverse_pred=%s)" %
           (t.name, src_txt, pred_txt, rev))
    p.check("tensor_copy_predicated[%s %s src=%s pred=%s %s rev=%s dst=%s]" % (
        shape, dtype, src_txt if src_txt[0] != "t" else "tile", pdt, where, rev, buf), t,
        lambda env: (st_from(np.where((as64(ph) != 0) ^ rev, srcv(env), fill), dtype, dtype), "exact", None))


def gather_flattened(p):
    """nl.gather_flattened(data, indices): per partition, data's free axes
    flattened, out[p, j] = data[p, indices[p, j]]; dtype= converts.  The
    axis argument is left at its default (its meaning is not documented)."""
    P = p.randint(1, 129)
    dtype = p.choice(FLOATS + INTS)
    dshape = (P, p.randint(1, 513)) if p.r() < 0.8 else (P, p.randint(1, 4), p.randint(1, 100))
    nf = int(np.prod(dshape[1:]))
    x = p.operand(dshape, dtype)
    F = p.randint(1, 513)
    idt = p.choice(["uint32", "int32"])
    idx = p.rng.integers(0, nf, (P, F)).astype(NPDT[idt])
    it = load_host(p, idx, idt)
    odt = p.choice([None, None] + FLOATS + INTS)
    t = p.new_tile((P, F), odt or dtype)
    p.emit("%s = nl.gather_flattened(%s, %s%s)" % (t.name, x.name, it.name,
                                                    ", dtype=nl.%s" % odt if odt else ""))

    def model(env):
        g = np.take_along_axis(as64(x.get(env)).reshape(P, nf), idx.astype(np.int64), 1)
        return st_from(g, dtype, t.dtype), "exact", None
    p.check("nl.gather_flattened[%s %s idx %s ->%s]" % (dshape, dtype, idt, t.dtype), t, model)


DC_DT = FLOATS + INTS + ["uint32"]


def dma_compute(p):
    """dma_compute(dst, srcs, nl.add, scales None or all 1.0): each source
    to float32, summed in float32, one cast to dst's dtype.  Two sources:
    one fp32 add, exact; more: the order is not documented, so
    (n+2)*eps32*sum|x| + 1 ulp of dst (1 for an integer dst: the sum may
    cross a rounding boundary).  Sources and dst in SBUF or HBM."""
    shape = p.shape(nd=2) if p.r() < 0.8 else p.shape(nd=3)
    n = p.choice([1, 2, 2, 3, p.randint(2, 17)])
    p.no_special = n > 2
    srcs = []
    for _ in range(n):
        dt = p.choice(DC_DT)
        if p.r() < 0.3:
            host = p.host(shape, dt, "special" if dt in FLOATS and n <= 2 and p.r() < 0.3 else "normal")
            srcs.append((p.param(host), lambda env, h=as64(host): h))
        else:
            x = p.operand(shape, dt)
            srcs.append((x.name, x.get))
    odt = p.choice(DC_DT)
    if p.r() < 0.3:
        o = p.name("o_h")
        t = Tile(o, shape, odt)
        p.emit("%s = nl.ndarray(%s, dtype=nl.%s, buffer=nl.shared_hbm)" % (o, shape, odt))
        p.outs.append((o, t, "plain"))
    else:
        t = p.new_tile(shape, odt)
        p.ndarray(t)
    sc = p.choice(["", ", scales=None", ", scales=%s" % ([1.0] * n)])
    p.emit("nisa.dma_compute(dst=%s, srcs=[%s], reduce_op=nl.add%s)" % (
        t.name, ", ".join(s for s, _ in srcs), sc))

    def model(env):
        vals = [f32(v(env)) for _, v in srcs]
        acc = vals[0]
        for v in vals[1:]:
            acc = (acc + v).astype(np.float32)
        if n <= 2:
            return st(acc, odt), "exact", None
        tol = (n + 2) * EPS["float32"] * sum(np.abs(v.astype(np.float64)) for v in vals)
        e = st(acc, odt)
        # an inf / NaN in a reused source: the result depends on the order
        # of the adds, which NKI does not document; those elements unchecked
        with np.errstate(invalid="ignore"):
            free = ~np.isfinite(tol)
        e, tol = np.where(free, t.get(env), e), np.where(free, 0.0, tol)
        step = 1 if odt in INTS or odt == "uint32" else 0
        return e, "abs", tol * (1 + EPS.get(odt, 0)) + ulp(e, odt) + step + 1e-30
    p.check("dma_compute[%s n=%d %s->%s]" % (shape, n, [s for s, _ in srcs], odt), t, model)
