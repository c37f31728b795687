"""PSUM accumulation groups at trace time (docs/python.md "Accumulation
groups per logical block").

A matmul into a PSUM region with accumulate=None, or a beta-1 `psum[...]
+= nc_matmul(...)`, starts a new accumulation group (its first matmul
overwrites) when the region was not written before, and accumulates when
it was.  Regions are taken per LOGICAL block of a block-dim tile (a view
inside one block carries its block indexes, NkiTensor._lb): blocks i and
i + k of a tile whose blocks rotate over k physical blocks (_alloc.py)
share storage but are two regions.  A tile without block dims is one
logical block.

The trace records on each PSUM tile (_Base.groups), per logical block,
which of its elements were written (mark(): an op's dst, an assignment,
nl.zeros, a DMA of every block), so status() can tell a region written
before ("all"), not ("none") or partly ("part": refused).  The records of
one pass over a traced-once loop body are undone before the next
(Trace.undo_pass calls restore()); block_loops() gives the traced-once
loops a logical block repeats over."""
import math

import numpy as np

from . import _trace

UNKNOWN = "unknown"   # a write whose offset is not known at trace time


def block_key(view):
    """The logical block of a view: "name@i,j" (a tile without block dims:
    "name@")."""
    lb = view._lb
    idx = lb[0] if lb is not None else ()
    return "%s@%s" % (view.base.name, ",".join(_trace._t(i) for i in idx))


def acc_key(view):
    """The PSUM region key of accumulate=None inference: the operand text,
    plus the logical block for a block of a block-dim tile (blocks i and
    i + k of a rotated tile have one text, but are two regions)."""
    t, lb = view.text(), view._lb
    return t if lb is None or not lb[0] else t + "@" + ",".join(_trace._t(i) for i in lb[0])


def _in_block(view):
    """The view's offset inside its logical block."""
    lb = view._lb
    return view.offset - lb[1] if lb is not None and lb[0] else view.offset


_NONE = object()   # an undo entry's "was not there"


def _state(base):
    """The base's record: {"seen": {block text: kind}, "sym": (those of
    a symbolic kind), "masks": {block
    text: element mask or UNKNOWN}, "whole": {"*": True}, "done": {(block
    text, offset, pattern): True} (regions marked, a shortcut)} (on the
    base, so a later tile reusing its name starts clean)."""
    g = base.groups
    if g is None:
        g = base.groups = {"seen": {}, "sym": {}, "masks": {}, "whole": {}, "done": {}}
    return g


def _put(tr, base, part, key, value):
    """base's record[part][key] = value, undone with a loop pass."""
    d = _state(base)[part]
    old = d.get(key, _NONE)
    d[key] = value
    if tr.frames:   # undone with the pass (restore)
        tr.frames[-1].psum.append(("G", d, key, old))


def restore(tr, entry):
    """Undo one record change (a ("G", dict, key, old) entry of a pass)."""
    _, d, key, old = entry
    if old is _NONE:
        d.pop(key, None)
    else:
        d[key] = old


def _kind(view):
    """How view's block indexes are known: "loop" (a traced-once loop
    variable in one), "pid" (a program id in one), or None (integers)."""
    kind = None
    for i in (view._lb[0] if view._lb is not None else ()):
        if type(i) is _trace.Lin:
            if i.loop_trace() is not None:
                return "loop"
            kind = "pid"
    return kind


def same_blocks(tr, view, lbt=None):
    """The decision for view's logical block is exact only when the blocks
    of its tile seen before are named the same way: the same loop-variable
    expression (one pass of one loop), or integers against integers.  A
    symbolic block index next to another block name (ps[i] in one loop,
    ps[j] or ps[0] elsewhere) may be the same logical block in some
    iteration: Retrace (traced per iteration); with a program id: refused."""
    if view._lb is None or not view._lb[0]:
        return
    lbt, kind = lbt or block_key(view), _kind(view)
    g = _state(view.base)
    for other, okind in (g["seen"] if kind else g["sym"]).items():
        if other != lbt:
            if "loop" in (kind, okind):
                _trace.need_retrace()
            raise _trace.NkiError("PSUM tile '%s': blocks %s and %s, one indexed by "
                                  "nl.program_id(), may be one logical block: whether a matmul "
                                  "into it accumulates is not known at trace time (not "
                                  "supported by tpbsim)" % (view.base.name, other, lbt))
    if lbt not in g["seen"]:
        _put(tr, view.base, "seen", lbt, kind)
        if kind:
            _put(tr, view.base, "sym", lbt, kind)


def _elements(view):
    """The flat element offsets the view covers inside its logical block,
    or None when its offset there is not a constant."""
    off = _in_block(view)
    if type(off) is not int:
        return None
    idx = np.array(off, dtype=np.int64)
    for step, cnt in view._ap:
        idx = idx[..., None] + step * np.arange(cnt, dtype=np.int64)
    return idx.ravel()


def _at(m, off, ap):
    """The elements of the flat mask m at offset off and pattern ap, as a
    strided view of m (what m[_elements(view)] selects, without building the
    index array); None when some element would be outside m (then indexing
    with _elements keeps NumPy's behaviour: a negative wraps, past the end
    raises)."""
    if not _inside(off, ap, m.size):
        return None
    return np.ndarray(tuple(c for _, c in ap), dtype=np.bool_, buffer=m, offset=off,
                      strides=tuple(s for s, _ in ap))


class _Region:
    """A mask of one region only (off, ap as tuples), the first one written:
    not made until another region of the block is written or asked about
    (an op's fresh result tile, a block written whole: most are never).
    size: the mask's, as the base of that first write makes it (a dtype
    view of the tile shares its records, in its own element count)."""
    __slots__ = ("off", "ap", "size")

    def __init__(self, off, ap, size):
        self.off, self.ap, self.size = off, ap, size

    def same(self, off, view):
        return off == self.off and tuple(map(tuple, view._ap)) == self.ap

    def made(self):
        """The mask as an array (a new one)."""
        m = np.zeros(self.size, dtype=bool)
        _at(m, self.off, self.ap)[...] = True   # inside m: checked when kept
        return m


_ALL = np.ones(1, dtype=bool)   # a region's elements when they are all set


def _selected(m, off, view):
    """The elements of mask m (an array or a _Region) in view's region, an
    array to ask .all() / .any() of; as m[_elements(view)] would."""
    if type(m) is _Region:
        if m.same(off, view):
            return _ALL
        m = m.made()
    hit = _at(m, off, view._ap)
    return m[_elements(view)] if hit is None else hit


def _inside(off, ap, size):
    """Whether the region (off, ap) is non-empty and inside 0..size-1."""
    lo = hi = off
    for step, cnt in ap:
        if type(step) is not int or type(cnt) is not int or cnt <= 0:
            return False
        ext = step * (cnt - 1)
        if ext < 0:
            lo += ext
        else:
            hi += ext
    return lo >= 0 and hi < size


def _sig(key, view):
    """A region's key in the "done" shortcut (None for a symbolic offset)."""
    return (key, view.offset, tuple(map(tuple, view._ap))) if type(view.offset) is int else None


def mark(tr, view):
    """Record a write into the region of view (a PSUM tile's)."""
    key = block_key(view)
    same_blocks(tr, view, key)
    g = _state(view.base)
    sig = _sig(key, view)
    if g["whole"] or sig in g["done"]:
        return
    old = g["masks"].get(key)
    if old is UNKNOWN:
        return
    off = _in_block(view)
    if type(off) is not int:   # a region moving with a loop or program id: decided later
        _put(tr, view.base, "masks", key, UNKNOWN)
        return
    _put(tr, view.base, "done", sig, True)
    size = math.prod(view.base.shape)
    if old is None:
        if _inside(off, view._ap, size):
            ap = sig[2] if sig is not None else tuple(map(tuple, view._ap))
            _put(tr, view.base, "masks", key, _Region(off, ap, size))
            return
        new = np.zeros(size, dtype=bool)
    else:
        own = False   # old made here: no one else holds it
        if type(old) is _Region:
            if old.same(off, view):
                return
            old, own = old.made(), True
        if _selected(old, off, view).all():
            return
        # in a traced-once pass the old mask stays in the pass's undo entry
        new = old.copy() if tr.frames and not own else old
    reg = _at(new, off, view._ap)
    if reg is None:
        new[_elements(view)] = True
    else:
        reg[...] = True
    _put(tr, view.base, "masks", key, new)


def mark_whole(tr, base):
    """Record a write of the whole tile (every logical block)."""
    if "*" not in _state(base)["whole"]:
        _put(tr, base, "whole", "*", True)


def recorded(base):
    """Whether the trace recorded a write into base (ever)."""
    return base.groups is not None


def status(tr, view):
    """Whether view's region was written before: "all", "none" or "part"
    (of its elements)."""
    key = block_key(view)
    same_blocks(tr, view, key)
    g = _state(view.base)
    if g["whole"] or _sig(key, view) in g["done"]:
        return "all"
    m = g["masks"].get(key)
    if m is None:
        return "none"
    off = _in_block(view)
    if type(off) is not int or m is UNKNOWN:
        if tr.symbolic:   # traced per iteration, offsets in loop variables are constants
            _trace.need_retrace()
        raise _trace.NkiError("PSUM tile '%s': whether the region of a matmul accumulating "
                              "into it was written before depends on nl.program_id() (not "
                              "supported by tpbsim)" % view.base.name)
    hit = _selected(m, off, view)
    return "all" if hit.all() else "none" if not hit.any() else "part"


def block_loops(tr, dst, loops):
    """The traced-once loops (of `loops`, those the tile lives across) in
    which the logical PSUM region dst repeats: a loop whose variable is a
    block index of dst gives another logical block per iteration, so every
    iteration starts its own accumulation group.  A block index other than
    c + a * var (var of one loop, in one block dim) or a region moving
    inside its block with a loop is a Retrace (traced per iteration)."""
    idx, boff = dst._lb
    inner = dst.offset - boff
    if type(inner) is _trace.Lin and inner.loop_trace() is not None:
        _trace.need_retrace()
    own = set()
    for e in idx:
        if type(e) is not _trace.Lin:
            continue
        vs = [k for k in e.t if k in tr.sym_bounds]
        if not vs:
            continue
        if len(e.t) != 1 or tr.sym_bounds[vs[0]][2] != frozenset(vs) or vs[0] in own:
            _trace.need_retrace()
        own.add(vs[0])
    return [fr for fr in loops if fr.var not in own]
