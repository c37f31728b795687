"""Partition starts the engines do not allow, for a memset.

The engines start an access of more than 64 partitions at partition 0, of
33-64 at 0 or 64, of up to 32 at 0, 32, 64 or 96 (NKI's architecture
guide, "start_partition"; docs/compiler.md "Partition start rule").  NKI
leaves the rule to its compiler; its own examples write one element at a
time in a loop over partitions (the SDK's gather_flattened example:
`indices[i, j] = j * 5`), which a memset at partition i breaks.  Such a
memset is made on the smallest allowed window of partitions around the
access, with a partition predicate (the kernel format's `mask`, one or
two PredExts) that keeps the other partitions of the window unchanged:
the same elements get the same value.  docs/python.md "Beta-1 call
forms"."""
from ._trace import NkiTensor


def _allowed(start, count):
    if count > 64:
        return start == 0
    if count > 32:
        return start in (0, 64)
    return start % 32 == 0


def widen(view):
    """(the window's view, its mask list) for an on-chip view whose
    partition start breaks the rule; None when it keeps it or is no plain
    partition-first view of a tile (the compiler then judges it)."""
    if type(view) is not NkiTensor:
        return None
    b, sl = view.base, view._sl
    if (not view._onchip() or view._pd or getattr(b, "nblk", 0) or not sl or
            not isinstance(sl[0], list) or not all(type(v) is int for v in sl[0]) or
            type(view.offset) is not int):
        return None
    start, pstep, count = sl[0]   # the partition dim, kept: the view's first dim
    if (pstep != 1 or view._ap[0][1] != count or _allowed(start, count) or
            start + count > b.shape[0]):
        return None
    for w in (32, 64, 128):
        ws = start // w * w
        if start + count <= ws + w:
            break
    w = min(w, b.shape[0] - ws)
    pstride = 1
    for n in b.shape[1:]:
        pstride *= n
    wide = NkiTensor(b, view.offset - (start - ws) * pstride, [[pstride, w]] + view._ap[1:])
    free = [[0, n] for _, n in view._ap[1:]]
    lo = start - ws
    if count == 1:
        mask = [{"pattern": free, "offset": -lo, "channel_multiplier": 1, "cmp_op": "equal"}]
    else:
        mask = [{"pattern": free, "offset": -lo, "channel_multiplier": 1,
                 "cmp_op": "greater_equal"},
                {"pattern": free, "offset": -(lo + count), "channel_multiplier": 1,
                 "cmp_op": "less"}]
    return wide, mask


def memset_fields(dst, fields):
    """memset's fields with dst widened and masked when its start breaks
    the rule (fields: [("dst", text), ...] without a mask); else as given."""
    got = widen(dst)
    if got is None:
        return fields
    import json
    wide, mask = got
    return [("dst", wide.text()) if k == "dst" else (k, v) for k, v in fields] + [
        ("mask", json.dumps(mask))]
