"""tpbsim.nki.collectives: NKI's nki.collectives (`import nki.collectives as
ncc`) on tpbsim's collectives (docs/python.md "Collectives";
docs/multicore.md "Collectives").

Each function appends one op of the kernel format (all_reduce, all_gather,
reduce_scatter, all_to_all, collective_permute, rank_id) with NKI's
argument names.  A rank is a physical core, as the kernel format defines
it: a kernel run with run_ranks(kernel, n, inputs) (one core per rank,
each rank with its own inputs and its own HBM tensors, as NKI's ranks
have), or launched with kernel[nl.nc(n)] (rank = core = nl.program_id(0);
the HBM tensors are shared, so each rank addresses its own part).  The
forms the kernel format lacks (all_gather_v, all_to_all_v) raise
NkiError; the collective_permute_implicit family is a ring of
collective_permutes (_ring.py)."""
from . import _ranks, _ring, _trace, language
from ._ranks import RankResult, run_ranks  # noqa: F401  (the rank launcher)
from ._trace import NkiError, NkiTensor
from .isa import _common, _emit, _opn, _t, register_alloc, register_load
from .language import NKIObject

__all__ = ["ReplicaGroup", "all_reduce", "all_gather", "all_gather_v", "reduce_scatter",
           "all_to_all", "all_to_all_v", "collective_permute", "collective_permute_implicit",
           "collective_permute_implicit_reduce",
           "collective_permute_implicit_current_processing_rank_id", "rank_id", "run_ranks",
           "RankResult"]


class ReplicaGroup(NKIObject):
    """NKI's ReplicaGroup: the groups of ranks a collective runs in, e.g.
    ReplicaGroup([[0, 1, 2, 3]]) or ReplicaGroup([[0, 2], [1, 3]]) (each
    group reduces / gathers on its own; groups may not overlap).  Ranks are
    core ids (module docstring)."""

    def __init__(self, replica_groups):
        groups = []
        try:
            for g in replica_groups:
                groups.append([_rank(r) for r in g])
        except TypeError:
            raise NkiError("ReplicaGroup(%r): expected a list of rank lists, e.g. [[0, 1, 2, 3]]"
                           % (replica_groups,)) from None
        seen = set()
        for g in groups:
            if not g:
                raise NkiError("ReplicaGroup(%r): an empty group" % (replica_groups,))
            for r in g:
                if r in seen:
                    raise NkiError("ReplicaGroup(%r): rank %d is in more than one group "
                                   "(sub-groups may not overlap)" % (replica_groups, r))
                seen.add(r)
        if not groups:
            raise NkiError("ReplicaGroup(%r): no groups" % (replica_groups,))
        self.replica_groups = groups

    def __eq__(self, o):
        return isinstance(o, ReplicaGroup) and o.replica_groups == self.replica_groups

    def __hash__(self):
        return hash(str(self.replica_groups))

    def __repr__(self):
        return "ReplicaGroup(%r)" % (self.replica_groups,)


def _rank(r):
    if isinstance(r, bool) or not hasattr(r, "__index__"):
        raise NkiError("rank %r is not an integer" % (r,))
    r = int(r)
    if r < 0:
        raise NkiError("rank %d is negative" % r)
    return r


def _refuse_lnc(tr, fn, loc):
    """An LNC launch (kernel[2]) is ONE NKI rank on its cores, while
    tpbsim's ranks are cores: ncc.fn is refused there."""
    if tr.lnc:
        raise NkiError("%s: ncc.%s in an LNC launch (kernel[%d]): NKI's ranks are logical cores, "
                       "and this launch is one rank on %d cores; tpbsim runs a rank per core: "
                       "launch the ranks with ncc.run_ranks(kernel, n, inputs) or "
                       "kernel[nl.nc(n)] (docs/python.md \"Collectives\")" %
                       (loc, fn, tr.grid[0], tr.grid[0]))


def _coll(kind, loc, srcs, dsts, fields, priority, name):
    """Emit collective kind at loc (the kernel line): dsts, srcs, then
    fields.  Refuses an LNC launch (kernel[2]), whose two cores are ONE NKI
    rank while tpbsim's ranks are cores."""
    _refuse_lnc(_trace.current(), kind, loc)
    f = [("dsts", _one(dsts, "dsts", kind, loc)), ("srcs", _one(srcs, "srcs", kind, loc))]
    _emit(kind, loc, _tail(f + fields, priority, name, loc))


def _one(xs, what, fn, loc):
    """srcs / dsts: NKI's list of tensors, one tensor here."""
    if isinstance(xs, NkiTensor):
        xs = [xs]
    if not isinstance(xs, (list, tuple)):
        raise NkiError("%s: ncc.%s: field '%s': expected a list of tensors, got %r" %
                       (loc, fn, what, xs))
    if len(xs) != 1:
        raise NkiError("%s: ncc.%s: field '%s': %d tensors: coalesced collectives (more than "
                       "one tensor per list) are not supported by tpbsim" %
                       (loc, fn, what, len(xs)))
    return "[%s]" % _t(xs[0], what, loc)


def _replica_group(rg, fn, loc):
    """rg as a ReplicaGroup: one already, a list of rank lists, or one rank list."""
    if isinstance(rg, ReplicaGroup):
        return rg
    if isinstance(rg, (list, tuple)):
        return ReplicaGroup(rg if rg and isinstance(rg[0], (list, tuple)) else [rg])
    raise NkiError("%s: ncc.%s: field 'replica_group': expected a ReplicaGroup, got %r"
                   % (loc, fn, rg))


def _group(rg, fn, loc):
    if rg is None:   # every rank of the launch: the kernel format's default
        return []
    rg = _replica_group(rg, fn, loc)
    for g in rg.replica_groups:   # the kernel format orders a group by rank
        if g != sorted(g):
            raise NkiError("%s: ncc.%s: field 'replica_group': group %s: tpbsim takes the ranks "
                           "of a group in increasing order (a rank's place in the result is "
                           "its place in the sorted group)" % (loc, fn, g))
    return [("replica_group", str(rg.replica_groups))]


def _tail(f, priority, name, loc):
    if priority is not None:
        if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 3:
            raise NkiError("%s: field 'priority': %r is not a DMA priority 0..3" % (loc, priority))
        f.append(("priority", str(priority)))   # accepted, no effect (docs/multicore.md)
    return _common(f, name, None, loc)


def _dim(d, loc):
    if isinstance(d, bool) or not isinstance(d, int):
        raise NkiError("%s: field 'collective_dim': %r is not an integer" % (loc, d))
    return str(d)


def all_reduce(srcs, dsts, replica_group, op, priority=None, name=None):
    """dst = op (nl.add, nl.maximum, nl.minimum) over the group's srcs."""
    loc = _trace.caller_loc()
    _coll("all_reduce", loc, srcs, dsts, [("operator", _opn(op, "op", loc))] +
          _group(replica_group, "all_reduce", loc), priority, name)


def all_gather(srcs, dsts, replica_group, collective_dim, priority=None, name=None):
    """dst = the group's srcs concatenated along collective_dim (in group order)."""
    loc = _trace.caller_loc()
    _coll("all_gather", loc, srcs, dsts, [("collective_dim", _dim(collective_dim, loc))] +
          _group(replica_group, "all_gather", loc), priority, name)


def reduce_scatter(srcs, dsts, replica_group, collective_dim, op, priority=None, name=None):
    """dst = op over the group of piece <my index in the group> of src (cut
    into group-size pieces along collective_dim)."""
    loc = _trace.caller_loc()
    _coll("reduce_scatter", loc, srcs, dsts, [("collective_dim", _dim(collective_dim, loc)),
                                              ("operator", _opn(op, "op", loc))] +
          _group(replica_group, "reduce_scatter", loc), priority, name)


def all_to_all(srcs, dsts, replica_group, collective_dim, priority=None, name=None):
    """dst piece k = piece <my index> of the src of the group's k-th rank (HBM)."""
    loc = _trace.caller_loc()
    _coll("all_to_all", loc, srcs, dsts, [("collective_dim", _dim(collective_dim, loc))] +
          _group(replica_group, "all_to_all", loc), priority, name)


def collective_permute(srcs, dsts, source_target_pairs, priority=None, name=None):
    """dst of each target = src of its source (HBM); a rank no pair
    targets keeps its dst."""
    loc = _trace.caller_loc()
    try:
        pairs = [[_rank(s), _rank(t)] for s, t in source_target_pairs]
    except (TypeError, ValueError):
        raise NkiError("%s: field 'source_target_pairs': expected (source, target) rank pairs, "
                       "got %r" % (loc, source_target_pairs)) from None
    for what, xs in (("srcs", srcs), ("dsts", dsts)):
        for t in (xs if isinstance(xs, (list, tuple)) else [xs]):
            if isinstance(t, NkiTensor) and t._onchip():
                raise NkiError("%s: ncc.collective_permute: field '%s': '%s' is on chip: NKI's "
                               "collective_permute takes HBM tensors (SBUF is not supported; "
                               "collective_permute_implicit takes SBUF)" % (loc, what, t.base.name))
    _coll("collective_permute", loc, srcs, dsts, [("source_target_pairs", str(pairs))],
          priority, name)


def rank_id(name=None):
    """This rank's id, in a register (NKI returns a register): the kernel
    format's rank_id (a [1, 1] int32 SBUF tile filled with the core id)
    loaded into a new register.  In an LNC launch, 0 on every core (the
    launch is one rank)."""
    loc = _trace.caller_loc()
    tr = _trace.current()
    if tr.lnc:
        r = register_alloc(0)
        r.static = 0
        return r
    t = tr.new_tensor((1, 1), "int32", "sbuf", name or "rank", loc)
    _emit("rank_id", loc, _common([("dst", _t(t, "dst", loc))], None, None, loc))
    r = register_alloc()
    register_load(r, t)
    # the rank is the program id (one program per core), known at trace
    # time: .ap(scalar_offset=rank) is a static offset per program
    if tr.ranks:
        r.static = _ranks.rank_pid()
    elif tr.grid_json in ("[1]", '["nc(%d)"]' % tr.grid[0]):
        r.static = language.program_id(0)
    return r


def _missing(fn, why):
    def f(*a, **k):
        raise NkiError("%s: ncc.%s is not implemented by tpbsim: %s (docs/python.md "
                       "\"Collectives\")" % (_trace.caller_loc(), fn, why))
    f.__name__ = fn
    f.__doc__ = "NKI's ncc.%s: not implemented by tpbsim (%s)." % (fn, why)
    return f


all_gather_v = _missing(
    "all_gather_v", "the kernel format has no collective whose sizes come from a metadata "
    "tensor at run time")
all_to_all_v = _missing(
    "all_to_all_v", "the kernel format has no collective whose sizes come from a metadata "
    "tensor at run time")
def collective_permute_implicit(srcs_by_channel, dsts_by_channel, replica_group,
                                channel_ids=[0], priority=None, name=None):  # noqa: B006 (NKI's default)
    """Each rank's src to its ring successor's dst, per channel (_ring.py:
    the ring is each replica group in its listed order)."""
    _ring.permute_implicit(srcs_by_channel, dsts_by_channel, replica_group, channel_ids,
                           priority, name, _trace.caller_loc())


def collective_permute_implicit_reduce(srcs0_by_channel, srcs1_by_channel, dsts_by_channel,
                                       replica_group, op, channel_ids=[0], priority=None,
                                       name=None):  # noqa: B006
    """op(src0, src1) of each rank to its ring successor's dst, per channel."""
    _ring.permute_implicit_reduce(srcs0_by_channel, srcs1_by_channel, dsts_by_channel,
                                  replica_group, op, channel_ids, priority, name,
                                  _trace.caller_loc())


def collective_permute_implicit_current_processing_rank_id(iteration_id, replica_group,
                                                           channel_id=0, name=None):
    """The rank whose data this rank holds after iteration_id ring steps
    (its own at 0, then its predecessors'), in a register."""
    return _ring.processing_rank_id(iteration_id, replica_group, channel_id, name,
                                    _trace.caller_loc())
