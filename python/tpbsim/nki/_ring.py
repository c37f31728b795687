"""NKI's ring collectives (nki.collectives.collective_permute_implicit,
collective_permute_implicit_reduce and
collective_permute_implicit_current_processing_rank_id) on the kernel
format's collective_permute (docs/python.md "Collectives").

NKI leaves the ring to the runtime: each rank sends to its successor and
receives from its predecessor, and a kernel asks which rank's data it holds
at ring step i with current_processing_rank_id.  tpbsim's ring is each
replica group in its listed order, the same ring on every channel: rank
g[k] sends to g[k + 1] (mod the group size), so after i steps rank g[k]
holds the data of g[k - i].  A channel is one collective_permute of that
channel's tensors (the channels run as separate permutes, whose DMAs the
queues overlap)."""
import numpy as np

from . import _ranks, _trace
from ._lin import Lin
from ._trace import NkiError, NkiTensor

MAX_CHANNELS = 4   # NKI: 4 for groups of every device of a node, else 2


def groups_of(rg, fn, loc):
    """The replica group's rank lists (a ReplicaGroup or a list of lists)."""
    from .collectives import _replica_group
    rg = _replica_group(rg, fn, loc)
    sizes = {len(g) for g in rg.replica_groups}
    if len(sizes) != 1:
        raise NkiError("%s: ncc.%s: field 'replica_group': groups of different sizes %s "
                       "(tpbsim's replica groups are of equal size)" % (loc, fn, sorted(sizes)))
    return rg.replica_groups


def ring_pairs(groups):
    """(source, target) of every step of every group's ring."""
    return [[g[k], g[(k + 1) % len(g)]] for g in groups for k in range(len(g))] \
        if len(groups[0]) > 1 else []


def _channels(srcs_by_channel, dsts_by_channel, channel_ids, fn, loc, extra=()):
    """The per-channel lists checked against each other and channel_ids."""
    lists = [("srcs_by_channel" if not extra else "srcs0_by_channel", srcs_by_channel),
             ("dsts_by_channel", dsts_by_channel)] + list(extra)
    for what, xs in lists:
        if not isinstance(xs, (list, tuple)) or not all(isinstance(c, (list, tuple)) for c in xs):
            raise NkiError("%s: ncc.%s: field '%s': expected one list of tensors per channel, "
                           "got %r" % (loc, fn, what, xs))
    n = len(srcs_by_channel)
    for what, xs in lists:
        if len(xs) != n:
            raise NkiError("%s: ncc.%s: field '%s': %d channels, srcs have %d" %
                           (loc, fn, what, len(xs), n))
    ids = list(channel_ids) if isinstance(channel_ids, (list, tuple)) else None
    if ids != list(range(n)):
        raise NkiError("%s: ncc.%s: field 'channel_ids': %r: NKI takes consecutive channel ids "
                       "from 0, one per channel of srcs (%d)" % (loc, fn, channel_ids, n))
    if not 1 <= n <= MAX_CHANNELS:
        raise NkiError("%s: ncc.%s: %d channels (NKI allows at most %d)" %
                       (loc, fn, n, MAX_CHANNELS))
    return n


def permute_implicit(srcs_by_channel, dsts_by_channel, replica_group, channel_ids, priority,
                     name, loc):
    """ncc.collective_permute_implicit: per channel, dst of g[k + 1] = src of g[k]."""
    fn = "collective_permute_implicit"
    n = _channels(srcs_by_channel, dsts_by_channel, channel_ids, fn, loc)
    pairs = ring_pairs(groups_of(replica_group, fn, loc))
    for c in range(n):
        _send(srcs_by_channel[c], dsts_by_channel[c], pairs, priority, name, c, fn, loc)


def permute_implicit_reduce(srcs0, srcs1, dsts, replica_group, op, channel_ids, priority,
                            name, loc):
    """ncc.collective_permute_implicit_reduce: per channel, op(src0, src1)
    into a tile of the rank's own, then permuted as permute_implicit."""
    from . import isa, language
    from .collectives import _one
    fn = "collective_permute_implicit_reduce"
    n = _channels(srcs0, dsts, channel_ids, fn, loc, [("srcs1_by_channel", srcs1)])
    if op not in (language.add, language.minimum, language.maximum):
        raise NkiError("%s: ncc.%s: field 'op': %r: NKI reduces with nl.add, nl.minimum or "
                       "nl.maximum" % (loc, fn, op))
    pairs = ring_pairs(groups_of(replica_group, fn, loc))
    for c in range(n):
        for what, xs in (("srcs0_by_channel", srcs0[c]), ("srcs1_by_channel", srcs1[c]),
                         ("dsts_by_channel", dsts[c])):
            _one(xs, what, fn, loc)
        a, b = srcs0[c][0], srcs1[c][0]
        if not all(isinstance(t, NkiTensor) and t._onchip() for t in (a, b)):
            raise NkiError("%s: ncc.%s: the reduced sources must be SBUF tiles in tpbsim (the "
                           "reduction runs on the Vector engine before the send)" % (loc, fn))
        if tuple(a.shape) != tuple(b.shape):
            raise NkiError("%s: ncc.%s: srcs0 %s and srcs1 %s differ in shape" %
                           (loc, fn, list(a.shape), list(b.shape)))
        red = language.ndarray(tuple(a.shape), dtype=dsts[c][0].dtype, buffer=language.sbuf,
                               name="ring_reduced")
        isa.tensor_tensor(dst=red, data1=a, data2=b, op=op)
        _send([red], dsts[c], pairs, priority, name, c, fn, loc)


def _send(srcs, dsts, pairs, priority, name, channel, fn, loc):
    """One channel's ring step: a collective_permute over pairs, or for
    rings of one rank (no pairs: each rank its own successor) one copy."""
    from . import isa
    from .collectives import _coll, _one
    if pairs:
        _coll("collective_permute", loc, srcs, dsts, [("source_target_pairs", str(pairs))],
              priority, None if name is None else "%s_ch%d" % (name, channel))
        return
    _one(srcs, "srcs_by_channel", fn, loc)
    _one(dsts, "dsts_by_channel", fn, loc)
    isa.dma_copy(dst=dsts[0], src=srcs[0])


def _my_rank(tr, fn, loc):
    """(this rank: an int or a program-id expression, the number of ranks)."""
    from .collectives import _refuse_lnc
    _refuse_lnc(tr, fn, loc)
    if tr.ranks:
        return _ranks.rank_pid(), tr.ranks
    n = int(np.prod(tr.grid))
    if n > 1:
        from . import language
        return language.program_id(0), n
    return 0, 1


def processing_rank_id(iteration_id, replica_group, channel_id, name, loc):
    """ncc.collective_permute_implicit_current_processing_rank_id: the rank
    whose data this rank holds after iteration_id ring steps, in a
    register.  Known at trace time when the rank and the step are; else
    read from a constant table [step, rank] at the (program-id / loop
    variable) position, as NKI's register is filled at run time."""
    from . import isa, language
    from ._composite import shared_constant
    fn = "collective_permute_implicit_current_processing_rank_id"
    if isinstance(channel_id, bool) or not isinstance(channel_id, int) or \
            not 0 <= channel_id < MAX_CHANNELS:
        raise NkiError("%s: ncc.%s: field 'channel_id': %r is not a channel 0..%d" %
                       (loc, fn, channel_id, MAX_CHANNELS - 1))
    if isinstance(iteration_id, bool) or not isinstance(iteration_id, (int, np.integer, Lin)):
        raise NkiError("%s: ncc.%s: field 'iteration_id': expected an integer or a loop "
                       "variable, got %r" % (loc, fn, iteration_id))
    tr = _trace.current()
    groups = groups_of(replica_group, fn, loc)
    me, nranks = _my_rank(tr, fn, loc)
    size = len(groups[0])
    table = np.arange(nranks, dtype=np.int32)[None, :].repeat(size, axis=0)
    for g in groups:
        for k, r in enumerate(g):
            if r >= nranks:
                raise NkiError("%s: ncc.%s: field 'replica_group': rank %d of %s, with %d "
                               "ranks launched" % (loc, fn, r, g, nranks))
            for i in range(size):
                table[i, r] = g[(k - i) % size]
    step = iteration_id % size if not isinstance(iteration_id, Lin) else iteration_id
    if isinstance(me, int) and not isinstance(step, Lin):
        reg = isa.register_alloc(int(table[step, me]))
        reg.static = int(table[step, me])   # a static offset as .ap(scalar_offset=)
        return reg
    # a loop variable past one turn of the ring reads past the table: the
    # compiler's bounds check names the DMA
    const = shared_constant(table)
    t = language.ndarray((1, 1), dtype=language.int32, buffer=language.sbuf,
                         name=name or "ring_rank")
    isa.dma_copy(dst=t, src=const[step:step + 1, me:me + 1])
    reg = isa.register_alloc()
    isa.register_load(reg, t)
    return reg
