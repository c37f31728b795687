"""Op families that select or search: max8, nc_find_index8,
nc_match_replace8, select_reduce, range_select and affine_select."""
import numpy as np

from .numerics import F32, FLOATS, as64, f32, st
from .ops_acc import either, free_flat
from .ops_nl import CMPS
from .models import CMP

FP32_MIN = float(np.finfo(np.float32).min)
SENTINEL = float(0xFFFFFFFF)


def _max8_src(p, ptr=False):
    """A [P, ...] float tile of 8..600 elements a partition; bf16 / fp16 or
    rounded values repeat, so ties are common.  ptr: vals / dst_idx will be
    per-partition pointers on its partitions, so it starts at partition 0
    (tpbsim refuses them elsewhere, docs/semantics.md "PTR operand")."""
    P = p.randint(1, 129)
    shape = (P, p.choice([8, 9, 16, 64, 300, 600, p.randint(8, 601)]))
    if p.r() < 0.3:
        shape = (P, p.choice([2, 4]), p.choice([4, 16, 50]))
    dtype = p.choice(FLOATS)
    x = p.operand(shape, dtype, p.choice(["normal", "normal", "bool"]))
    if ptr and x.base is not None and x.idx[0] != slice(None) and x.idx[0].start:
        x = p.load(shape, dtype)
    return x, dtype


def _top8(v):
    """The 8 largest fp32 values of each row, in descending order."""
    return -np.sort(-f32(free_flat(v)).astype(np.float64), axis=1)[:, :8]


def nan_rows(expected, data, got):
    """expected, with the rows whose data holds a NaN taken from got: NKI
    does not say how max8 and its family order NaN (a reused tile may
    hold one)."""
    m = np.isnan(free_flat(data)).any(axis=1)
    e = np.array(expected, np.float64)
    e[m] = np.asarray(got, np.float64).reshape(e.shape)[m]
    return e


def max8(p):
    x, dtype = _max8_src(p)
    t = p.new_tile((x.shape[0], 8), p.choice([dtype, "float32"]))
    p.ndarray(t)
    p.emit("nisa.max8(dst=%s, src=%s)" % (t.name, x.name))
    p.check("max8[%s %s->%s]" % (x.shape, dtype, t.dtype), t,
            lambda env: (nan_rows(st(_top8(x.get(env)), t.dtype), x.get(env), t.get(env)), "exact", None))
    return x, t


def _find_model(data, vals, order):
    """Positions of each val (fp32 compare); repeated vals take successive
    matches, the first in `order` (ascending: find_index8, descending:
    match_replace8) the earliest.  Absent: the all-ones sentinel."""
    d = f32(free_flat(data)).astype(np.float64)
    v = f32(vals).astype(np.float64)
    out = np.full(v.shape, SENTINEL)
    for r in range(d.shape[0]):
        used = set()
        for i in order:
            for j in np.nonzero(d[r] == v[r, i])[0]:
                if j not in used:
                    used.add(j)
                    out[r, i] = j
                    break
    return out


def find_index8(p):
    """nc_find_index8: the first occurrence of each val; NKI pairs repeated
    vals with successive occurrences in ascending order (nc_match_replace8's
    docstring); a val not found gives 0xFFFFFFFF (uint32 dst)."""
    x, dtype = _max8_src(p, ptr=True)
    vals, from_max8 = _host_vals(p, x, dtype)
    t = p.new_tile((x.shape[0], 8), "uint32")
    p.ndarray(t)
    p.emit("nisa.nc_find_index8(dst=%s, data=%s, vals=%s)" % (t.name, x.name, vals.name))
    p.check("nc_find_index8[%s %s max8=%s]" % (x.shape, dtype, from_max8), t,
            lambda env: (nan_rows(_find_model(x.get(env), vals.get(env), range(8)), x.get(env), t.get(env)),
                         "exact", None))


def match_replace8(p):
    """nc_match_replace8: each val's first unused match (vals processed
    i = 7..0) replaced by imm in dst, its position in dst_idx.  Only vals
    present in the data: NKI does not say what dst_idx holds otherwise."""
    x, dtype = _max8_src(p, ptr=True)
    vals, from_max8 = _host_vals(p, x, dtype, absent_ok=False)
    # within every dtype's range: tpbsim clips a finite imm past dst's range
    # to its largest finite value (the NKI compiler's clip_scalar), where a
    # plain fp32 -> dst rounding would give inf; NKI's docs say neither
    imm = p.choice(["float('-inf')", "-1000.0", "0.0", "-7.5"])
    t = p.new_tile(x.shape, dtype)
    idx = p.new_tile((x.shape[0], 8), "uint32")
    p.ndarray(t)
    p.ndarray(idx)
    p.emit("nisa.nc_match_replace8(dst=%s, data=%s, vals=%s, imm=%s, dst_idx=%s)" %
           (t.name, x.name, vals.name, imm, idx.name))
    pos = lambda env: _find_model(x.get(env), vals.get(env), range(7, -1, -1))  # noqa: E731

    def dmodel(env):
        d = free_flat(as64(x.get(env))).copy()
        ps = pos(env)
        for r in range(d.shape[0]):
            d[r, ps[r].astype(np.int64)] = float(eval(imm))
        e = nan_rows(free_flat(st(d, dtype)), x.get(env), free_flat(t.get(env)))
        return e.reshape(x.shape), "exact", None
    p.check("nc_match_replace8[%s %s imm=%s]" % (x.shape, dtype, imm), t, dmodel)
    p.check("nc_match_replace8.idx[%s %s max8=%s]" % (x.shape, dtype, from_max8), idx,
            lambda env: (nan_rows(pos(env), x.get(env), idx.get(env)), "exact", None))


def _host_vals(p, x, dtype, absent_ok=True):
    """(vals tile, from max8): max8 of x, or x's values at 8 distinct
    positions of each row copied on the device (some replaced by 1000+i,
    which x's data never holds)."""
    P, n = x.shape[0], int(np.prod(x.shape[1:]))
    if p.r() < 0.5:
        t = p.new_tile((P, 8), dtype)
        p.ndarray(t)
        p.emit("nisa.max8(dst=%s, src=%s)" % (t.name, x.name))
        p.check("max8[%s %s]" % (x.shape, dtype), t,
                lambda env: (nan_rows(st(_top8(x.get(env)), dtype), x.get(env), t.get(env)), "exact", None))
        return t, True
    pos = [p.randint(0, n) for _ in range(8)]
    pos = list(dict.fromkeys(pos))
    while len(pos) < 8:
        pos.append(p.randint(0, n))
        pos = list(dict.fromkeys(pos))
    def col(j):   # x's flattened column j
        if len(x.shape) == 3:
            return "%s[:, %d, %d:%d]" % (x.name, j // x.shape[2], j % x.shape[2], j % x.shape[2] + 1)
        return "%s[:, %d:%d]" % (x.name, j, j + 1)
    t = p.new_tile((P, 8), dtype)
    p.ndarray(t)
    absent = [absent_ok and p.r() < 0.2 for _ in range(8)]
    for i, j in enumerate(pos):
        if absent[i]:
            p.emit("nisa.memset(dst=%s[:, %d:%d], value=%r)" % (t.name, i, i + 1, 1000.0 + i))
        else:
            p.emit("nisa.tensor_copy(dst=%s[:, %d:%d], src=%s)" % (t.name, i, i + 1, col(j)))

    def vmodel(env):
        d = free_flat(as64(x.get(env)))
        v = np.stack([np.full(P, 1000.0 + i) if absent[i] else d[:, j] for i, j in enumerate(pos)], axis=1)
        return st(v, dtype), "exact", None
    p.check("vals8[%s %s]" % (x.shape, dtype), t, vmodel)
    return t, False


def select_reduce(p):
    """dst = predicate ? on_true : on_false (reverse_pred flips it), cast
    through fp32; reduce_res = the row max (reset_reduce)."""
    shape = p.shape(nd=2)
    dtype = p.choice(FLOATS)
    x = p.operand(shape, dtype)
    pred = p.load(shape, "uint8", "bool")
    if p.r() < 0.5:
        v = p.fscalar(-5, 5)
        fs, fv = repr(v), (lambda env: np.float64(v))
    else:
        c = p.load((shape[0], 1), "float32", "small")
        fs, fv = c.name, (lambda env: c.get(env))
    rev = p.r() < 0.3
    t = p.new_tile(shape, p.choice(FLOATS))
    p.ndarray(t)
    red = p.r() < 0.6
    s = "nisa.select_reduce(dst=%s, predicate=%s, on_true=%s, on_false=%s" % (t.name, pred.name, x.name, fs)
    rr = None
    if red:
        rr = p.new_tile((shape[0], 1), "float32")
        p.ndarray(rr)
        s += ", reduce_res=%s, reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_op=nl.maximum" % rr.name
    if rev:
        s += ", reverse_pred=True"
    p.emit(s + ")")

    def sel(env):
        m = (pred.get(env) != 0) ^ rev
        return np.where(m, f32(x.get(env)), f32(np.broadcast_to(fv(env), shape))).astype(np.float64)
    p.check("select_reduce[%s %s->%s rev=%s]" % (shape, dtype, t.dtype, rev), t,
            lambda env: (st(sel(env), t.dtype), "exact", None))
    if red:
        p.check("select_reduce.max[%s]" % (shape,), rr,
                lambda env: either(sel(env).max(axis=1, keepdims=True),
                                   st(sel(env), t.dtype).max(axis=1, keepdims=True), 0.0))


def range_select(p):
    """dst = on_true where comp_op0(range_start + i, bound0) and
    comp_op1(range_start + i, bound1) (fp32), else FP32_MIN; reduce_res =
    the row max."""
    shape = p.shape(nd=2)
    P, F = shape
    dtype = p.choice(FLOATS)
    x = p.operand(shape, dtype)
    start = p.choice([0, 0, 5, 100, p.randint(0, 2000)])
    ops = ["equal", "less", "less_equal", "greater", "greater_equal"]
    c0, c1 = p.choice(ops), p.choice(ops)
    bounds = []
    for _ in range(2):
        b = np.round(p.rng.uniform(start - 5, start + F + 5, (P, 1)))
        if p.r() < 0.3:
            b = b + 0.5
        nm = p.param(b.astype(np.float32))
        bt = p.new_tile((P, 1), "float32")
        p.emit("%s = nl.load(%s)" % (bt.name, nm))
        p.check("load[bound %s]" % (bt.shape,), bt, lambda env, b=b: (b, "exact", None))
        bounds.append(bt)
    t = p.new_tile(shape, p.choice(FLOATS))
    rr = p.new_tile((P, 1), "float32")
    p.ndarray(t)
    p.ndarray(rr)
    fill = ", on_false_value=%r" % FP32_MIN if p.r() < 0.5 else ""
    p.emit("nisa.range_select(dst=%s, on_true_tile=%s, comp_op0=nl.%s, comp_op1=nl.%s, bound0=%s, bound1=%s, "
           "reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_res=%s, reduce_op=nl.maximum, range_start=%d%s)" %
           (t.name, x.name, c0, c1, bounds[0].name, bounds[1].name, rr.name, start, fill))

    def sel(env):
        idx = f32(start + np.arange(F)).reshape(1, -1)
        m = CMP[c0](idx, f32(bounds[0].get(env))) & CMP[c1](idx, f32(bounds[1].get(env)))
        return np.where(m, f32(x.get(env)), F32(FP32_MIN)).astype(np.float64)
    p.check("range_select[%s %s,%s start=%d %s->%s]" % (shape, c0, c1, start, dtype, t.dtype), t,
            lambda env: (st(sel(env), t.dtype), "exact", None))
    # the max of the fp32 values, not of dst's: NKI's numerical-stability
    # note (a bf16 dst's fill is -inf, an fp32 reduce_res's FP32_MIN)
    p.check("range_select.max[%s ->%s]" % (shape, t.dtype), rr,
            lambda env: (sel(env).max(axis=1, keepdims=True), "exact", None))


def affine_select(p):
    """dst = on_true where cmp_op(offset + p*channel_multiplier + sum(step*i), 0)
    else on_false_value, for a 1- to 4-level pattern (NKI pads to 4);
    on_true cast through fp32 to dst."""
    P = p.randint(1, 129)
    levels = p.randint(1, 5)
    pat = [[p.randint(-4, 5), p.randint(1, 9)] for _ in range(levels)]
    nums = [n for _, n in pat]
    form = p.choice(["nd", "flat"])
    shape = (P,) + tuple(nums) if form == "nd" and levels <= 3 else (P, int(np.prod(nums)))
    dtype = p.choice(FLOATS + ["int32"])
    x = p.operand(shape, dtype)
    outdt = dtype if dtype == "int32" else p.choice(FLOATS)
    off, cm = p.randint(-40, 40), p.randint(-3, 4)
    cmp = p.choice(CMPS + ["default"])
    fv = p.choice([-9984.0, 0.0, -3.0e38, 2.5]) if outdt != "int32" else p.choice([0.0, -7.0])
    t = p.new_tile(shape, outdt)
    p.ndarray(t)
    p.emit("nisa.affine_select(dst=%s, pattern=%s, channel_multiplier=%d, on_true_tile=%s, on_false_value=%r%s, "
           "offset=%d)" % (t.name, pat, cm, x.name, fv, "" if cmp == "default" else ", cmp_op=nl.%s" % cmp, off))

    def model(env):
        v = np.full((P, 1), float(off)) + cm * np.arange(P).reshape(-1, 1)
        for step, n in pat:
            v = (v[..., None] + step * np.arange(n)).reshape(P, -1)
        m = CMP["equal" if cmp == "default" else cmp](v, 0).reshape(shape)
        return st(np.where(m, as64(x.get(env)), fv), outdt), "exact", None
    p.check("affine_select[%s %s %s cm=%d off=%d %s->%s]" % (shape, pat, cmp, cm, off, dtype, outdt), t, model)
