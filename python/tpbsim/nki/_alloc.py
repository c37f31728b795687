"""Direct allocation of block-dim tiles (docs/python.md "Direct allocation").

A buffer made by nki.compiler's sbuf/psum .alloc(func) or .mod_alloc(...)
places every logical block of a tile (NKI shape (B..., par_dim(P), F...))
at a physical location; logical blocks at one location share storage.
plan() evaluates the allocation at every logical block index, checks it
(capacity, ISA placement rules, no partial overlap) and finds, per block
dim, the k that logical block i shares storage with i + k (a per-dim
modulo mapping; anything else is refused).  The tile is then stored as
[P, k..., F...] and a block index i selects stored block i % k (physical()).

Accumulation groups are per LOGICAL block: a view inside one block
carries its logical block indexes (NkiTensor._lb); _groups.py decides.

The rest (the engines' order of accesses to shared storage) is the
back-end's: its dependencies are computed on addresses, so a write to
block i + k waits for the reads of block i (WAR) and a read of block i + k
after its write (RAW)."""
import inspect
import itertools
import os
import re
import shutil
import tempfile
import warnings

import numpy as np

from . import _trace

PSUM_BANKS, PSUM_BANK_BYTES = 8, 2048
# SBUF bytes per partition of the targets (common/target.c)
SBUF_PARTITION_BYTES = {"trn1": 192 * 1024, "trn2": 224 * 1024, "trn3": 256 * 1024}
_MAX_BLOCKS = 1 << 16
_DT_BYTES = {"float32": 4, "int32": 4, "uint32": 4, "tfloat32": 4, "float16": 2,
             "bfloat16": 2, "int16": 2, "uint16": 2, "int8": 1, "uint8": 1, "bool": 1,
             "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3": 1,
             # NeuronCore-v4's packed MX quads: four fp8 (4 bytes) or fp4 (2 bytes)
             "float8_e5m2_x4": 4, "float8_e4m3fn_x4": 4, "float4_e2m1fn_x4": 2,
             "float8_e8m0fnu": 1}   # NKI's E8M0 MX block scale


def _err(loc, what, msg):
    return _trace.NkiError("%s: %s: %s" % (loc, what, msg))


def _sbuf_bytes():
    """SBUF bytes per partition of the target the kernel is traced for."""
    t = _trace.current().target if _trace.stack() else None
    if t is None:
        from .. import _target
        try:
            t = _target(None)
        except Exception:   # a bad override is the simulate() call's error
            t = None
    return SBUF_PARTITION_BYTES.get(t or "trn2", SBUF_PARTITION_BYTES["trn2"])


def _call_alloc(func, idx, pdim, fdim):
    """func(idx, pdim_size, fdim_size) as NKI calls it: by keyword when the
    function takes those names (a functools.partial that binds an earlier
    parameter, like nki-samples' `partial(psum_addr, bank_map=...)`, works
    only so), else positionally (a function with other parameter names)."""
    kw = {"idx": idx, "pdim_size": pdim, "fdim_size": fdim}
    try:
        inspect.signature(func).bind(**kw)
    except (TypeError, ValueError):
        return func(idx, pdim, fdim)
    return func(**kw)


def _location(buf, got, idx, pdim, fdim, loc, what):
    """(start partition, byte offset per partition) of one logical block,
    checked: a PSUM location is (bank, start_partition, byte_addr), an SBUF
    one (start_partition, byte_addr)."""
    n = 3 if buf == "psum" else 2
    if (not isinstance(got, (tuple, list)) or len(got) != n or
            not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in got)):
        raise _err(loc, what, "the allocation function returned %r for block %s; expected %d "
                   "integers (%s)" % (got, idx, n, "bank, start_partition, byte_addr"
                                      if n == 3 else "start_partition, byte_addr"))
    got = [int(v) for v in got]
    if buf == "psum":
        bank, part, addr = got
        if not 0 <= bank < PSUM_BANKS:
            raise _err(loc, what, "block %s: PSUM bank %d outside 0..%d" %
                       (idx, bank, PSUM_BANKS - 1))
        if part != 0 or addr != 0:
            raise _err(loc, what, "block %s: a PSUM tile starts at partition 0, byte 0 of its "
                       "bank (start_partition %d, byte_addr %d)" % (idx, part, addr))
        return 0, bank * PSUM_BANK_BYTES
    part, addr = got
    ok = (0,) if pdim > 64 else (0, 64) if pdim > 32 else (0, 32, 64, 96)
    if part not in ok:
        raise _err(loc, what, "block %s: start_partition %d for a tile of %d partitions (it "
                   "must be one of %s)" % (idx, part, pdim, "/".join(map(str, ok))))
    cap = _sbuf_bytes()
    if addr < 0 or addr + fdim > cap:
        raise _err(loc, what, "block %s: bytes %d..%d per partition do not fit in SBUF (%d "
                   "bytes per partition)" % (idx, addr, addr + fdim, cap))
    return part, addr


def _no_overlap(locs, pdim, fdim, loc, what):
    """Distinct physical tiles of one tensor may not partly overlap."""
    by_part = {}
    for p, a in sorted(set(locs)):
        by_part.setdefault(p, []).append(a)
    parts = sorted(by_part)
    for p, q in zip(parts, parts[1:]):
        if q < p + pdim:
            raise _err(loc, what, "physical tiles at partitions %d and %d (of %d partitions) "
                       "overlap" % (p, q, pdim))
    for p, addrs in by_part.items():
        for a, b in zip(addrs, addrs[1:]):
            if b < a + fdim:
                raise _err(loc, what, "physical tiles at bytes %d and %d (%d bytes each) "
                           "overlap" % (a, b, fdim))


def plan(alloc, shape, nblk, dtype, loc):
    """(rot, place) of a tile allocated by alloc (a compiler._Alloc): rot,
    the per-block-dim physical block counts k, or None when every logical
    block has its own physical block; place, where the stored tile lives
    (fixed_place), or None.  Raises NkiError for what tpbsim cannot store."""
    buf, what = alloc.buffer, alloc.what
    shape = tuple(int(s) for s in shape)
    blocks, pdim, free = shape[:nblk], shape[nblk], shape[nblk + 1:]
    size = _DT_BYTES.get(dtype)
    if size is None:
        raise _err(loc, what, "dtype %s: its size is unknown to the allocator" % dtype)
    fdim = int(np.prod(free, dtype=np.int64)) * size if free else size
    if buf == "psum" and fdim > PSUM_BANK_BYTES:
        raise _err(loc, what, "a PSUM tile cannot cross a %d-byte bank: %d bytes per "
                   "partition" % (PSUM_BANK_BYTES, fdim))
    if pdim > 128:
        raise _err(loc, what, "partition dim %d > 128" % pdim)
    count = int(np.prod(blocks, dtype=np.int64)) if blocks else 1
    if count > _MAX_BLOCKS:
        raise _err(loc, what, "%d logical blocks (tpbsim evaluates the allocation at most %d)"
                   % (count, _MAX_BLOCKS))
    locs = []
    for idx in itertools.product(*(range(b) for b in blocks)):
        try:
            got = _call_alloc(alloc.func, idx, pdim, fdim)
        except Exception as e:
            raise _err(loc, what, "the allocation function failed at block %s: %s: %s" %
                       (idx, type(e).__name__, e)) from None
        locs.append(_location(buf, got, idx, pdim, fdim, loc, what))
    _no_overlap(locs, pdim, fdim, loc, what)
    if buf == "psum" and blocks and _padded_past_psum(locs, fdim):
        return None, ("blocks", {idx: a for idx, (_, a) in
                                 zip(itertools.product(*(range(b) for b in blocks)), locs)})
    if not blocks:
        return None, fixed_place(locs, (), (), free, size, fdim, loc, what)
    ids = {l: n for n, l in enumerate(sorted(set(locs)))}
    arr = np.array([ids[l] for l in locs], dtype=np.int64).reshape(blocks)
    ks = []
    for d, b in enumerate(blocks):   # the smallest period of each block dim
        k = b
        for j in range(1, b):
            if np.array_equal(arr.take(range(j, b), axis=d), arr.take(range(b - j), axis=d)):
                k = j
                break
        ks.append(k)
    box = arr[tuple(slice(0, k) for k in ks)]
    if len(np.unique(box)) != box.size or len(ids) != box.size:
        raise _err(loc, what, "the allocation maps the %s logical blocks to %d physical tiles "
                   "in a way that is not a modulo per block dim (logical block i sharing "
                   "storage with i + k): not supported by tpbsim" % (list(blocks), len(ids)))
    rot = None if tuple(ks) == blocks else tuple(ks)
    return rot, fixed_place(locs, blocks, ks, free, size, fdim, loc, what)


def _padded_past_psum(locs, fdim):
    """Whether the stored [P, k..., F...] tile of a PSUM placement, each
    block padded to the step between blocks, would end past PSUM while the
    blocks themselves fit (nki-samples' allocated attention puts two blocks
    on banks 1 and 5: padded, the second ends at bank 9).  Such a tile is
    stored one tile per logical block, each at its own address
    (split_tensor)."""
    if len(set(locs)) < 2 or any(p != 0 for p, _ in locs):
        return False
    addrs = sorted({a for _, a in locs})
    step = addrs[1] - addrs[0]
    return (step >= fdim and addrs == list(range(addrs[0], addrs[-1] + 1, step)) and
            addrs[-1] + step > PSUM_BANKS * PSUM_BANK_BYTES)


def fixed_place(locs, blocks, ks, free, size, fdim, loc, what):
    """The stored tile [P, k..., F...] at the allocation's own bytes: its
    physical block j (C order over ks) must be at base + j * S in every
    partition from 0, for one step S.  Returns (base, first free dim of
    the stored tile) -- the first free dim padded so that a block spans S
    bytes -- and the compiled tile has the kernel format's "addr": base, so
    distinct tensors placed on the same bytes share them, as in NKI.  A
    placement the stored layout cannot follow gets the compiler's storage,
    with a warning naming the tensor (None)."""
    def refuse(why):
        warnings.warn("%s: %s: tpbsim cannot keep this placement (%s); the tensor gets "
                      "storage of its own, so data it shares with other tensors in NKI is "
                      "not shared here" % (loc, what, why), stacklevel=4)
        return None
    strides = [1] * len(blocks)
    for d in range(len(blocks) - 2, -1, -1):
        strides[d] = strides[d + 1] * blocks[d + 1]
    at = {}
    for j in itertools.product(*(range(k) for k in ks)):
        at[j] = locs[sum(i * st for i, st in zip(j, strides))]
    parts = {p for p, _ in at.values()}
    if parts != {0}:
        return refuse("physical blocks start at partition(s) %s; tpbsim places tiles from "
                      "partition 0" % sorted(parts))
    base = at[tuple(0 for _ in ks)][1]
    f0 = int(free[0]) if free else 1
    n = int(np.prod(ks, dtype=np.int64)) if ks else 1
    if n == 1:
        return base, f0
    lin = {j: i for i, j in enumerate(itertools.product(*(range(k) for k in ks)))}
    step = at[next(j for j, i in lin.items() if i == 1)][1] - base
    if step < fdim or any(a != base + lin[j] * step for j, (_, a) in at.items()):
        return refuse("its physical blocks are not at evenly spaced ascending addresses in "
                      "block order")
    inner = fdim // f0
    if not free or step % inner:
        return refuse("a step of %d bytes between physical blocks is not a whole number of "
                      "rows of its first free dim" % step)
    return base, step // inner


# ---- block indexes of a rotated tile (NkiTensor._index) ----

def _dim(view, d, kept):
    """(stored block dim number, k, logical count) of view dim d."""
    j = kept[d] - 1
    return j, view.base.rot[j], view._ap[d][1]


def physical(view, i, kept_d):
    """The stored block of logical block index i (an int or a loop
    variable) on the base's stored block dim kept_d: i % k."""
    k = view.base.rot[kept_d - 1]
    if type(i) is int:
        return i % k
    if i.loop_trace() is None:
        raise _trace.NkiError("'%s': a block index that depends on nl.program_id() on a tile "
                              "whose blocks rotate over %d physical blocks is not supported by "
                              "tpbsim" % (view.base.name, k))
    return i % k


def no_block_slice(view, d, s, kept):
    """A slice over a rotated block dim: only the whole dim (then used as
    a whole-tensor view, refused where it is used)."""
    j, k, n = _dim(view, d, kept)
    if k != n and not (s.start in (None, 0) and s.stop in (None, n) and s.step in (None, 1)):
        raise _trace.NkiError("'%s': slicing block dim %d, whose %d logical blocks rotate over "
                              "%d physical blocks, is not supported by tpbsim (index one block)"
                              % (view.base.name, j, n, k))


def no_whole(view, what):
    b = view.base
    how = ("whose logical blocks share %s physical blocks (direct allocation)" % list(b.rot)
           if b.rot is not None else "stored one tile per logical block (its blocks exceed "
           "%s together)" % b.buffer.upper())
    raise _trace.NkiError("'%s': %s of a tile %s is not supported by tpbsim: access the blocks "
                          "one at a time" % (b.name, what, how))


# ---- one tile per logical block (docs/python.md "PSUM reuse", "SBUF blocks
# past a partition") ----

_TILE = re.compile(r'\{"op": "tile", "name": "[^"]+", "shape": \[([0-9, ]+)\], '
                   r'"dtype": "(\w+)"(, "buffer": "psum")?, "loc": "([^"]*)"')
# per buffer: the trial compile's errors that splitting its block-dim tiles
# may cure
_NO_FIT = {"psum": ("PSUM allocation failed", "exceed the PSUM partition size"),
           "sbuf": ("SBUF allocation failed",)}


def note_trace(tr):
    """Remember (per thread) the buffers whose block-dim tiles the trace
    just made might need splitting (oversubscribed)."""
    _trace._LOCAL.over = tuple(buf for buf in ("psum", "sbuf") if oversubscribed(tr, buf))


def split_wanted(text, name, target, done):
    """After a trace: the buffers, not in done, whose block-dim tiles are
    to be stored one tile per logical block: those of the trace's
    oversubscribed ones whose tiles the compiler fails to fit (a trial
    compile; it reports one failure, so at most one buffer)."""
    over = [b for b in getattr(_trace._LOCAL, "over", ()) if b not in done]
    if not over:
        return ()
    from .._lib import Context, TpbError
    ctx, tmp = Context(), tempfile.mkdtemp(prefix="tpbsim-split-")
    try:
        ctx.compile_json(text, name, os.path.join(tmp, "art"), target)
        return ()
    except TpbError as e:
        return tuple(b for b in over if any(m in str(e) for m in _NO_FIT[b]))
    finally:
        ctx.close()
        shutil.rmtree(tmp, ignore_errors=True)


def oversubscribed(tr, buf):
    """Whether the trace has a block-dim tile of more than one block in
    buf ("psum" or "sbuf") stored whole, and the tiles it declares there,
    each source line counted once at its largest tile, need more than a
    partition of buf holds (a quick filter before the trial compile)."""
    whole, split = ((tr.psum_blocks, tr.split_psum) if buf == "psum" else
                    (tr.sbuf_blocks, tr.split_sbuf))
    if not whole or split:
        return False
    by_loc = {}
    for op in tr.body:
        for m in _TILE.finditer(op):
            if (m.group(3) is not None) != (buf == "psum"):
                continue
            shape = [int(v) for v in m.group(1).split(",")]
            n = int(np.prod(shape[1:], dtype=np.int64)) * _DT_BYTES.get(m.group(2), 4)
            by_loc[m.group(4)] = max(by_loc.get(m.group(4), 0), n)
    cap = PSUM_BANKS * PSUM_BANK_BYTES if buf == "psum" else _sbuf_bytes()
    return sum(by_loc.values()) > cap


def past_sbuf(nki, nblk, dtype):
    """Whether an SBUF tile of NKI shape (B..., P, F...) needs more bytes
    per partition than an SBUF partition of the target holds (its blocks
    together: it is then stored one tile per logical block, docs/python.md
    "SBUF blocks past a partition")."""
    n = int(np.prod(nki[:nblk] + nki[nblk + 1:], dtype=np.int64))
    return n * _DT_BYTES.get(dtype, 4) > _sbuf_bytes()


def split_tensor(tr, nki, nblk, dtype, name, loc, addrs=None, buffer="psum"):
    """An on-chip tile of NKI shape (B..., P, F...) as one tile per logical
    block, each declared at its first use: the compiler's allocator then
    reuses the storage of blocks whose lifetimes do not overlap.  addrs:
    per logical block index, the byte address a direct allocation gave it
    (the block's tile then has that "addr")."""
    b = _trace._Base(tr.unique(name or "t"), nki, dtype, buffer, "split", loc)
    b.nblk, b.blocks, b.addrs = nblk, {}, addrs
    for idx, a in sorted((addrs or {}).items()):
        # at fixed addresses: declared here, where the kernel declares the
        # tensor (no storage to share by declaring later), so a block's
        # first use is a plain index and `t[i] = op(...)` writes it in place
        b.blocks[idx] = tr.new_tensor(nki[nblk:], dtype, buffer, "%s_%s" % (
            b.name, "_".join(map(str, idx))), loc, place=(a, None))
    if tr.frames:
        tr.frames[-1].bases.append(b)
        b.depth = len(tr.frames)
    return _trace.NkiTensor(b, 0, _trace._c_ap(nki), None, nblk)


def _block_index(b, idx):
    """The logical block idx (the block indexes of a split tile's key) as
    a tuple of ints.  A loop variable makes the kernel traced per
    iteration (Retrace); a program id is refused."""
    out = []
    for d, i in enumerate(idx):
        if type(i) is _trace.Lin:
            if i.loop_trace() is not None:
                _trace.need_retrace()
            raise _trace.NkiError("'%s': a block index that depends on nl.program_id() on a "
                                  "%s tile stored one tile per block" %
                                  (b.name, b.buffer.upper()))
        if not isinstance(i, (int, np.integer)) or not 0 <= int(i) < b.shape[d]:
            raise _trace.NkiError("'%s': block index %r of dim %d (size %d)" %
                                  (b.name, i, d, b.shape[d]))
        out.append(int(i))
    return tuple(out)


def _block_tile(b, idx):
    """Declare the tile of logical block idx of split tile b, filled when
    b was made by nl.zeros / nl.full (fill_blocks).  Declared in b's scope: a
    first use inside a traced-once loop b is not in makes the kernel be
    traced per iteration (in the loop's body the tile would be a fresh
    one per iteration)."""
    tr = _trace.current()
    if len(tr.frames) > b.depth:
        _trace.need_retrace()
    place = None if b.addrs is None else (b.addrs[idx], None)
    t = tr.new_tensor(b.shape[b.nblk:], b.dtype, b.buffer,
                      "%s_%s" % (b.name, "_".join(map(str, idx))), b.loc, place=place)
    if b.fill is not None:
        from . import isa
        isa._emit("memset", b.fill[1], [("dst", t.text()), ("value", b.fill[0])])
    return t


def split_index(view, key):
    """t[i, j, ...] of a split tile: the tile of logical block (i, j)
    (integers: a loop variable makes the loop traced per iteration),
    indexed by the rest of the key."""
    b = view.base
    if b.dead:
        _trace.need_retrace()
    nb = b.nblk
    idx = key[:nb]
    if view._pd != nb or view.offset != 0 or len(idx) < nb:
        raise _trace.NkiError("'%s': a %s tile of %s blocks stored one tile per block (its "
                              "blocks exceed %s together): index all its block dims at once, "
                              "t[%s]" % (b.name, b.buffer.upper(), list(b.shape[:nb]),
                                         b.buffer.upper(), ", ".join("i" * nb)))
    idx = _block_index(b, idx)
    t = b.blocks.get(idx)
    if t is None or t.base.dead:
        t = b.blocks[idx] = _block_tile(b, idx)
    rest = key[nb:]
    return t[rest] if rest else t


def fill_blocks(t, v, loc, fn):
    """nl.zeros / nl.full of a split tile: a memset of each block's tile
    when it is declared, at the block's first use, so that the blocks need
    not all be live from the fill on (the values are the same); of every
    block's tile at once when they are at fixed addresses.  Refused for a
    tile whose blocks share storage (direct allocation)."""
    from . import isa
    b = t.base
    if b.rot is not None:
        no_whole(t, "nl.%s" % fn)
    if b.addrs is None:
        b.fill = (v, loc)
        return t
    for idx in itertools.product(*(range(n) for n in b.shape[:b.nblk])):
        isa._emit("memset", loc, [("dst", t[idx].text()), ("value", v)])
    return t
