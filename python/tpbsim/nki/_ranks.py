"""run_ranks: launch a kernel as n collective ranks, one physical core per
rank, each rank with its own inputs and its own HBM tensors, as NKI's
ranks are separate logical cores (docs/python.md "Collectives").

The kernel is traced once on a launch grid of n programs spread over n
cores (nl.nc(n)): rank r is core r, the kernel format's rank.  Inside
the kernel each rank is an LNC=1 launch: nl.program_id(0) is 0 and
nl.num_programs() is 1; the rank is ncc.rank_id().  Every array argument
becomes one input of shape [n, *shape] (the ranks' arrays stacked) and the
kernel sees rank r's part; every HBM tensor the kernel makes
(nl.ndarray(..., buffer=nl.shared_hbm / nl.hbm / nl.private_hbm)) is made
[n, *shape] the same way.  Outputs come back per rank."""
import inspect

import numpy as np

from . import _trace, language
from ._trace import Lin, NkiError, NkiTensor


class RankResult:
    """run_ranks' result: outputs (one entry per rank: the kernel's return,
    an array or a tuple), cycles and stats (the whole launch), artifacts."""

    def __init__(self, outputs, cycles, stats, artifacts=None):
        self.outputs, self.cycles, self.stats, self.artifacts = outputs, cycles, stats, artifacts

    def __repr__(self):
        return "RankResult(ranks=%d, cycles=%d)" % (len(self.outputs), self.cycles)


def rank_pid():
    """The program id of the launch (= the rank) as a trace expression (0
    for one rank: a one-program launch has no program id)."""
    return Lin(0, {"pid": 1}) if _trace.current().ranks > 1 else 0


def rank_hbm(tr, shape, dtype, buffer, name, loc):
    """nl.ndarray in HBM under run_ranks: one [n, *shape] tensor, the
    rank's part returned."""
    t = tr.new_tensor((tr.ranks,) + tuple(shape), dtype, buffer, name, loc)
    tr.rank_bases.add(t.base.name)
    return t[rank_pid()]


def _is_array(v):
    from . import typed
    return isinstance(v, (np.ndarray, typed))


def _stack(name, vals):
    """The ranks' arrays of one argument as one array (typed: its dtype)."""
    from . import typed
    arrs = [v.array if isinstance(v, typed) else v for v in vals]
    if not all(_is_array(v) for v in vals):
        raise NkiError("run_ranks: argument '%s' is an array on some ranks only" % name)
    if len({(a.shape, a.dtype) for a in arrs}) != 1:
        raise NkiError("run_ranks: argument '%s' has different shapes or dtypes on the ranks "
                       "(%s): the kernel is traced once" %
                       (name, ", ".join("%s %s" % (list(a.shape), a.dtype) for a in arrs)))
    dts = {v.dtype if isinstance(v, typed) else None for v in vals}
    if len(dts) != 1:
        raise NkiError("run_ranks: argument '%s' has different nki.typed dtypes on the ranks"
                       % name)
    s = np.stack(arrs)
    dt = dts.pop()
    return typed(s, dt) if dt is not None else s


def _rank_part(o, fn):
    """A returned rank part (t[rank], or a contiguous reshape of it) -> its
    whole [n, ...] tensor."""
    b = o.base
    per = int(np.prod(b.shape[1:]))
    d = o.offset - rank_pid() * per   # 0 (an int) for the rank's part
    if (b.kind != "hbm" or len(b.shape) < 2 or int(np.prod(o.shape)) != per
            or not o._contig() or type(d) is not int or d != 0):
        raise NkiError("%s: under run_ranks the kernel must return whole HBM tensors it made "
                       "with nl.ndarray (or reshapes of them), got %r" % (fn, o))
    return _trace.current()._whole_view(b)


def run_ranks(kernel, num_ranks, inputs, target=None, trace=None, keep=None):
    """Run kernel as num_ranks collective ranks (module docstring).
    inputs: the keyword arguments of every rank (a dict), or a function
    rank -> that rank's dict (NKI's per-rank inputs).  Non-array arguments
    must be equal on every rank.  Returns a RankResult whose outputs[r] is
    rank r's result."""
    from .. import _run
    from . import Kernel, _sbuf_returns
    k = kernel if isinstance(kernel, Kernel) else Kernel(kernel)
    fn = k.fn.__name__
    n = language._grid_int(num_ranks, "run_ranks: num_ranks")
    if not 1 <= n <= 8:
        raise NkiError("run_ranks: %d ranks (tpbsim runs 1 to 8 cores, one rank per core)" % n)
    if tuple(k.grid) != (1,):
        raise NkiError("run_ranks: %s has a launch grid: each rank runs on one core (LNC=1); "
                       "pass the kernel itself" % fn)
    per = [inputs(r) if callable(inputs) else inputs for r in range(n)]
    sig = inspect.signature(k.fn)
    bound = []
    for r, kw in enumerate(per):
        try:
            b = sig.bind(**kw)
        except TypeError as e:
            raise NkiError("run_ranks: %s, rank %d: %s" % (fn, r, e)) from None
        b.apply_defaults()
        bound.append(b.arguments)
    names = list(bound[0])
    arrays, plain = {}, {}
    for name in names:
        vals = [b[name] for b in bound]
        if any(_is_array(v) for v in vals):
            arrays[name] = _stack(name, vals)
        elif any(v != vals[0] for v in vals[1:]):
            raise NkiError("run_ranks: argument '%s' differs between the ranks (%r): only "
                           "arrays may (the kernel is traced once)" % (name, vals))
        else:
            plain[name] = vals[0]
    shapes = []

    def ranks_kernel(**kw):
        tr = _trace.current()
        tr.ranks = n
        tr.rank_bases.update(kw[nm].base.name for nm in arrays)
        pid = rank_pid()
        call = {nm: (kw[nm][pid] if nm in arrays else plain[nm]) for nm in names}
        ret = _sbuf_returns(k.fn(**call))
        many = isinstance(ret, (tuple, list))
        outs = list(ret) if many else [ret] if ret is not None else []
        for o in outs:
            if not isinstance(o, NkiTensor):
                raise NkiError("%s: the kernel must return HBM tensors, got %r" % (fn, o))
        shapes[:] = [o.shape for o in outs]
        whole = [_rank_part(o, fn) for o in outs]
        return type(ret)(whole) if many else (whole[0] if whole else None)

    ranks_kernel.__name__ = fn
    ranks_kernel.__signature__ = inspect.Signature(
        [inspect.Parameter(nm, inspect.Parameter.KEYWORD_ONLY) for nm in arrays])
    rk = Kernel(ranks_kernel, (language.nc(n),) if n > 1 else (1,), **k.opts)
    res = _run(rk, (), arrays, target, trace, keep, False)
    many = isinstance(res.outputs, tuple)
    got = res.outputs if many else (res.outputs,) if res.outputs is not None else ()
    outs = []
    for r in range(n):
        one = tuple(np.asarray(g)[r].reshape(s) for g, s in zip(got, shapes))
        outs.append(one if many else (one[0] if one else None))
    return RankResult(outs, res.cycles, res.stats, keep)
