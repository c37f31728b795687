"""The trace's per-op shortcuts of the thirty-second session (docs/python.md
"Trace-time overhead", docs/performance-log.md): each against the plain
computation it replaces, as an oracle, so a stale or wrong cache fails.

- t[k, i_p, i_f] on a block-dim tile: the block's view t[k] taken from
  the int-view cache, then indexed: the traced JSON with every view cache
  off;
- PSUM accumulation-group masks (_groups.py) kept as their first region,
  written through strided views and in place outside traced-once passes:
  a model of whole-tile boolean arrays (the old code), step by step, with
  passes undone, and the traced JSON with that model patched in;
- beta-1 argument binding planned per argument shape (_beta1._binder):
  inspect's bind + apply_defaults;
- the inputs an op writes found in the joined body; access-pattern text."""
import inspect
import json
import types

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl
from tpbsim.nki import _beta1, _groups, _trace

RNG = np.random.default_rng(32)


# ---- kernels: block-dim tiles, nl.mgrid keys, affine index expressions,
# PSUM accumulation (whole and partial regions), loops traced once and per
# iteration, a fresh result read through a temporary index-expression view

@nki.jit
def pipelined(q, k, v):
    """The shape of nki-samples' pipelined attention, small: block-dim PSUM
    and SBUF tiles indexed by ints and nl.mgrid expressions, partial PSUM
    writes, `+=` accumulation."""
    d, s = q.shape
    out = nl.ndarray((s, d), dtype=nl.float32, buffer=nl.shared_hbm)
    qs = nl.ndarray((2, nl.par_dim(d), 128), dtype=nl.bfloat16, buffer=nl.sbuf)
    ks = nl.ndarray((2, nl.par_dim(d), 256), dtype=nl.bfloat16, buffer=nl.sbuf)
    vs = nl.ndarray((4, nl.par_dim(128), d), dtype=nl.bfloat16, buffer=nl.sbuf)
    mm = nl.ndarray((2, 2, nl.par_dim(128), 256), dtype=nl.float32, buffer=nl.psum)
    sc = nl.ndarray((2, 2, nl.par_dim(128), 256), dtype=nl.float32, buffer=nl.sbuf)
    tp = nl.ndarray((2, 2, nl.par_dim(128), 256), dtype=nl.float32, buffer=nl.psum)
    ts = nl.ndarray((2, 2, nl.par_dim(128), 256), dtype=nl.bfloat16, buffer=nl.sbuf)
    acc = nl.ndarray((2, nl.par_dim(128), d), dtype=nl.float32, buffer=nl.psum)
    res = nl.ndarray((2, nl.par_dim(128), d), dtype=nl.float32, buffer=nl.sbuf)
    ident = nl.shared_constant(np.identity(128, dtype=np.int8), dtype=nl.bfloat16)
    il = nl.ndarray((nl.par_dim(128), 128), dtype=nl.bfloat16, buffer=nl.sbuf)
    ip, jf = nl.mgrid[0:128, 0:128]
    il[ip, jf] = nl.load(ident)
    for g in range(2):
        pd, fq = nl.mgrid[0:d, 0:128]
        qs[g, pd, fq] = nl.load(q[pd, g * 128 + fq], dtype=nl.bfloat16)
    for i in nl.affine_range(2):
        pk, fk = nl.mgrid[0:d, 0:256]
        ks[i, pk, fk] = nl.load(k[pk, i * 256 + fk], dtype=nl.bfloat16)
    for i in nl.affine_range(4):
        pv, fv = nl.mgrid[0:128, 0:d]
        vs[i, pv, fv] = nl.load(v[i * 128 + pv, fv], dtype=nl.bfloat16)
    for g in range(2):
        for si in range(2):
            ir, fr = nl.mgrid[0:128, 0:256]
            mm[g, si, ir, fr] = nisa.nc_matmul(qs[g, :, :], ks[si, :, :])
            sc[g, si, ir, fr] = nisa.activation(np.exp, mm[g, si, ir, fr], scale=0.125)
            for ti in range(2):   # two halves of one PSUM block: partial regions
                it, ft = nl.mgrid[0:128, 0:128]
                tp[g, si, it, ti * 128 + ft] = nisa.nc_matmul(sc[g, si, it, ti * 128 + ft], il)
            ts[g, si] = nisa.tensor_copy(tp[g, si], dtype=nl.bfloat16)
        for si in range(2):
            for h in range(2):
                im, fm = nl.mgrid[0:128, 0:128]
                acc[g, im, nl.arange(d)[None, :]] += nisa.nc_matmul(
                    ts[g, si, im, h * 128 + fm], vs[si * 2 + h, im, nl.arange(d)[None, :]])
        res[g] = nisa.tensor_copy(acc[g])
        po, fo = nl.mgrid[0:128, 0:d]
        nl.store(out[g * 128 + po, fo], value=res[g, po, fo])
    return out


@nki.jit
def looped(a):
    """Index expressions with loop variables in loops traced once (the
    traced-once passes undo their PSUM records) and a loop traced per
    iteration (Python control flow on its variable); PSUM `+=` into a
    whole tile and into halves of one."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.ndarray((4, nl.par_dim(128), 128), dtype=nl.float32, buffer=nl.sbuf)
    ps = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
    half = nl.ndarray((2, nl.par_dim(128), 256), dtype=nl.float32, buffer=nl.psum)
    o = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
    ip, jf = nl.mgrid[0:128, 0:128]
    for i in nl.affine_range(4):
        x[i, ip, jf] = nl.load(a[ip, i * 128 + jf])
    for i in nl.affine_range(4):
        for kk in nl.affine_range(2):
            ps[ip, i * 128 + jf] += nisa.nc_matmul(x[kk, ip, jf], x[i, ip, jf])
    for j in nl.sequential_range(2):
        if j == 0:   # traced per iteration
            half[j, ip, jf] = nisa.nc_matmul(x[0, ip, jf], x[1, ip, jf])
        half[j, ip, 128 + jf] = nisa.nc_matmul(x[2, ip, jf], x[3, ip, jf])
        half[j, ip, jf] += nisa.nc_matmul(x[3, ip, jf], x[2, ip, jf])
    o[ip, nl.arange(512)[None, :]] = nisa.tensor_copy(ps)
    r = nisa.tensor_tensor(half[0], half[1], op=nl.add)
    o[ip, nl.arange(256)[None, :]] = r[ip, nl.arange(256)[None, :]]   # a temporary: retargeted
    r2 = nisa.tensor_tensor(half[0], half[1], op=nl.subtract)
    named = r2[ip, nl.arange(256)[None, :]]   # noqa: F841  (held: the next one is cached)
    o[ip, 256 + nl.arange(256)[None, :]] = r2[ip, nl.arange(256)[None, :]]   # a temporary
    nl.store(out, value=o)
    return out


@nki.jit
def slices_and_masks(a):
    """Slices, ints, nl.ds and a masked op next to index expressions."""
    out = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((nl.par_dim(128), 256), dtype=nl.float32, buffer=nl.sbuf)
    u = nl.ndarray((nl.par_dim(128), 256), dtype=nl.float32, buffer=nl.sbuf)
    t[...] = nl.load(a)
    ip, jf = nl.mgrid[0:128, 0:64]
    for i in nl.affine_range(4):
        u[ip, i * 64 + jf] = nl.exp(t[ip, i * 64 + jf], mask=(ip < 100))
        u[:, nl.ds(i * 64, 32)] = nl.add(t[:, nl.ds(i * 64, 32)], 1.0)
    u[0:64, 0:256] = nl.multiply(u[0:64, :], t[0:64, :])
    nl.store(out, value=u)
    return out


def _inputs():
    d, s = 64, 256
    return [(pipelined, [RNG.random((d, s), np.float32), RNG.random((d, 512), np.float32),
                         RNG.random((512, d), np.float32)]),
            (looped, [RNG.random((128, 512), np.float32)]),
            (slices_and_masks, [RNG.random((128, 256), np.float32)])]


KERNELS = _inputs()
IDS = [k.fn.__name__ for k, _ in KERNELS]


def _json(kern, args):
    return tpbsim.kernel_json(kern, *args)


# ---- views: block views from the cache

@pytest.mark.parametrize("kern,args", KERNELS, ids=IDS)
def test_view_cache_gives_the_uncached_json(monkeypatch, kern, args):
    cached = _json(kern, args)
    monkeypatch.setattr(_trace, "_view_key", lambda key: None)   # every index made anew
    assert _json(kern, args) == cached


# ---- PSUM accumulation-group masks

def _ref_elements(off, ap):
    idx = np.array(off, dtype=np.int64)
    for step, cnt in ap:
        idx = idx[..., None] + step * np.arange(cnt, dtype=np.int64)
    return idx.ravel()


class _RefMasks:
    """The old _groups records: per logical block a boolean array over the
    whole tile, copied on every change."""

    def __init__(self, size):
        self.size, self.m = size, {}

    def mark(self, key, off, ap):
        el, old = _ref_elements(off, ap), self.m.get(key)
        if old is not None and old[el].all():
            return
        new = np.zeros(self.size, dtype=bool) if old is None else old.copy()
        new[el] = True
        self.m[key] = new

    def status(self, key, off, ap):
        m = self.m.get(key)
        if m is None:
            return "none"
        hit = m[_ref_elements(off, ap)]
        return "all" if hit.all() else "none" if not hit.any() else "part"


def _array(m, size):
    return m.made() if type(m) is _groups._Region else m


def _random_region(rng, shape):
    """(offset, ap) of a random strided block of a [P, F] tile."""
    P, F = shape
    p0, f0, fs = int(rng.integers(0, P)), int(rng.integers(0, F)), int(rng.integers(1, 3))
    pn = int(rng.integers(1, P - p0 + 1))
    fn = int(rng.integers(1, (F - 1 - f0) // fs + 2))
    return p0 * F + f0, [[F, pn], [fs, fn]]


@pytest.mark.parametrize("seed", range(12))
def test_group_masks_match_the_array_model(seed):
    rng = np.random.default_rng(seed)
    shape = (8, 12)
    size = shape[0] * shape[1]
    base = _trace._Base("ps", shape, "float32", "psum", "tile", "x:1")
    tr = types.SimpleNamespace(frames=[], symbolic=False, shapes={})
    ref = _RefMasks(size)
    whole = _trace.NkiTensor(base, 0, _trace._c_ap(shape))
    for step in range(40):
        if rng.random() < 0.15 and not tr.frames:   # a traced-once pass, undone after
            tr.frames.append(_trace.LoopFrame("i", 0))
            saved = dict(ref.m)
            end = step + int(rng.integers(1, 6))
        if rng.random() < 0.1:
            view = whole   # a whole-tile write (an op's fresh result)
        else:
            off, ap = _random_region(rng, shape)
            view = _trace.NkiTensor(base, off, ap)
        if rng.random() < 0.6:
            _groups.mark(tr, view)
            ref.mark("ps@", view.offset, view._ap)
        else:
            assert _groups.status(tr, view) == ref.status("ps@", view.offset, view._ap)
        got = base.groups["masks"] if base.groups else {}
        assert set(got) == set(ref.m)
        for k_ in got:
            np.testing.assert_array_equal(_array(got[k_], size), ref.m[k_])
        if tr.frames and step >= end:   # undo the pass (Trace.undo_pass)
            fr = tr.frames.pop()
            for e in reversed(fr.psum):
                _groups.restore(tr, e)
            ref.m = saved
            got = base.groups["masks"]
            assert set(got) == set(ref.m)
            for k_ in got:
                np.testing.assert_array_equal(_array(got[k_], size), ref.m[k_])


def test_group_masks_per_logical_block():
    """Two logical blocks of a block-dim tile: separate records, offsets
    inside each block."""
    shape = (8, 2, 6)
    base = _trace._Base("pb", shape, "float32", "psum", "tile", "x:1")
    tr = types.SimpleNamespace(frames=[], symbolic=False, shapes={})
    size = 8 * 2 * 6

    def blk(b, off, ap):
        v = _trace.NkiTensor(base, b * 6 + off, ap)
        v._lb = ((b,), b * 6)
        return v
    _groups.mark(tr, blk(0, 0, [[12, 8], [1, 6]]))
    assert _groups.status(tr, blk(0, 0, [[12, 8], [1, 3]])) == "all"
    assert _groups.status(tr, blk(1, 0, [[12, 8], [1, 6]])) == "none"
    _groups.mark(tr, blk(1, 3, [[12, 8], [1, 3]]))
    assert _groups.status(tr, blk(1, 0, [[12, 8], [1, 6]])) == "part"
    m = _array(base.groups["masks"]["pb@1"], size)
    np.testing.assert_array_equal(np.flatnonzero(m), _ref_elements(3, [[12, 8], [1, 3]]))


def _ref_mark(tr, view):
    """_groups.mark as the array model (the old code), for the JSON oracle."""
    _groups.same_blocks(tr, view)
    key = _groups.block_key(view)
    g = _groups._state(view.base)
    if g["whole"]:
        return
    old = g["masks"].get(key)
    if old is _groups.UNKNOWN:
        return
    el = _groups._elements(view)
    if el is None:
        _groups._put(tr, view.base, "masks", key, _groups.UNKNOWN)
        return
    if old is not None and old[el].all():
        return
    new = np.zeros(int(np.prod(view.base.shape)), dtype=bool) if old is None else old.copy()
    new[el] = True
    _groups._put(tr, view.base, "masks", key, new)


def _ref_status(tr, view):
    _groups.same_blocks(tr, view)
    g = _groups._state(view.base)
    if g["whole"]:
        return "all"
    m = g["masks"].get(_groups.block_key(view))
    if m is None:
        return "none"
    el = _groups._elements(view)
    if el is None or m is _groups.UNKNOWN:
        if tr.symbolic:
            _trace.need_retrace()
        raise _trace.NkiError("symbolic region")
    hit = m[el]
    return "all" if hit.all() else "none" if not hit.any() else "part"


@pytest.mark.parametrize("kern,args", KERNELS, ids=IDS)
def test_group_masks_give_the_array_model_json(monkeypatch, kern, args):
    new = _json(kern, args)
    monkeypatch.setattr(_groups, "mark", _ref_mark)
    monkeypatch.setattr(_groups, "status", _ref_status)
    assert _json(kern, args) == new


# ---- beta-1 argument binding

def _sig_a(a, b=1, *, c=None, d=[2]):   # noqa: B006  (the default's identity is kept)
    pass


def _sig_b(x, /, y, z=3, *, dtype=None, mask=None):
    pass


def _sig_var(a, *rest, k=1, **kw):
    pass


CALLS = [((1,), {}), ((1, 2), {}), ((1,), {"c": 5}), ((1,), {"d": 7, "c": 5}),
         ((), {"a": 4}), ((), {"b": 4, "a": 3}), ((1, 2, 3), {}), ((), {}),
         ((1,), {"e": 1}), ((1,), {"a": 2}), ((9,), {"c": 8, "d": None}),
         ((1, 2), {"z": 0}), ((1,), {"y": 2, "dtype": "f"}), ((1, 2, 3), {"mask": 1}),
         ((), {"x": 1, "y": 2}), ((1, 2, 3, 4), {"k": 2, "q": 3})]


def _inspect_bind(sig, a, k):
    try:
        b = sig.bind(*a, **k)
    except TypeError as e:
        return None, str(e)
    b.apply_defaults()
    return dict(b.arguments), None


@pytest.mark.parametrize("fn", [_sig_a, _sig_b, _sig_var], ids=["kwonly", "posonly", "var"])
def test_binder_matches_inspect_bind(fn):
    sig = inspect.signature(fn)
    bind = _beta1._binder(sig)
    for rep in range(3):   # plans made, then reused with other values
        for a, k in CALLS:
            a = tuple(x if not isinstance(x, int) else x + rep for x in a)
            k = {n: (v + rep if isinstance(v, int) else v) for n, v in k.items()}
            got, want = bind(a, k), _inspect_bind(sig, a, k)
            assert got[1] == want[1]
            if want[0] is not None:
                assert list(got[0].items()) == list(want[0].items())   # order too
                assert all(got[0][n] is want[0][n] for n in want[0]   # the same objects
                           if sig.parameters[n].kind not in (inspect.Parameter.VAR_POSITIONAL,
                                                             inspect.Parameter.VAR_KEYWORD))


def test_beta1_op_binding_error_names_both_forms():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(a)
        nisa.tensor_scalar(t, op0=nl.add, operand0=1.0, bogus=3)
        return out
    with pytest.raises(tpbsim.NkiError, match="bind to neither the beta-2 signature .* nor "
                                              "the beta-1 form .*bogus"):
        tpbsim.kernel_json(k, np.zeros((128, 64), np.float32))


# ---- small text helpers

def test_written_of_is_ever_written():
    tr = types.SimpleNamespace(body=[
        '{"op": "tensor_copy", "dst": "t_61", "src": "a", "loc": "x:1"}',
        '{"op": "dma_copy", "dst": {"tensor": "out", "offset": 0, "ap": [[1, 2]]}, "loc": "x:2"}',
        '{"op": "memset", "dst": "b[0:4]", "value": 0.0, "loc": "x:3"}',
        '{"op": "dma_copy", "dst": "c.reshape(2, 2)", "src": "t_6", "loc": "x:4"}'],
        unrolling=[[['{"op": "memset", "dst": "d", "value": 0.0, "loc": "x:5"}']]])
    names = ["t_6", "t_61", "out", "b", "c", "a", "src", "d"]
    assert _beta1.written_of(tr, names) == [n for n in names if _beta1._ever_written(tr, n)]
    assert _beta1.written_of(tr, names) == ["t_61", "out", "b", "c", "d"]


@pytest.mark.parametrize("ap", [[[1, 2], [3, -4]], [], [[0, 1]], [[2 ** 40, 1], [-1, 7]],
                                [(1, 2)], [[True, 1]], [[1.0, 2]]])
def test_ap_json_is_json_dumps(ap):
    assert _trace._ap_json(ap) == json.dumps(ap)


def test_group_masks_of_a_dtype_view_keep_the_first_size():
    """A dtype view of a PSUM tile shares its records in its own element
    count (_reinterp._ViewBase): the mask keeps the size of the first
    write's base, as the array model's did (past it: IndexError, as before)."""
    from tpbsim.nki import _reinterp
    a = _trace._Base("pa", (8, 12), "float32", "psum", "tile", "x:1")
    b = _reinterp._ViewBase(a, "bfloat16", (8, 24))
    tr = types.SimpleNamespace(frames=[], symbolic=False, shapes={})
    ref = _RefMasks(96)
    _groups.mark(tr, _trace.NkiTensor(a, 0, [[12, 4], [1, 12]]))
    ref.mark("pa@", 0, [[12, 4], [1, 12]])
    for off, ap in ((0, [[24, 2], [1, 12]]), (12, [[12, 3], [1, 6]]), (50, [[1, 30]])):
        assert _groups.status(tr, _trace.NkiTensor(b, off, ap)) == ref.status("pa@", off, ap)
    with pytest.raises(IndexError):
        ref.status("pa@", 0, [[24, 8], [1, 24]])
    with pytest.raises(IndexError):
        _groups.status(tr, _trace.NkiTensor(b, 0, [[24, 8], [1, 24]]))
    _groups.mark(tr, _trace.NkiTensor(b, 48, [[1, 40]]))
    ref.mark("pa@", 48, [[1, 40]])
    np.testing.assert_array_equal(_array(a.groups["masks"]["pa@"], 96), ref.m["pa@"])
