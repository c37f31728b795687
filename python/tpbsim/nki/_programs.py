"""Kernels traced once per program (docs/python.md "Control flow on
nl.program_id()").

A kernel is first traced once for every program, nl.program_id() a
symbol (Lin) that only slices and offsets may use.  When that trace fails
after the kernel asked for a program id (Python `if` / `for` / `int()` /
list index on it, a slice bound the symbolic form cannot check, ...), the
kernel is traced again once per program with the program's id as a plain
int, as NKI itself runs a kernel per program.  The per-program kernels
become one kernel file whose body is one `if` per program:

    {"op": "if", "cond": "pid == 3", "body": [...program 3's ops...]}

The compiler's front-end runs once per program with `pid` bound, so each
program compiles only its own body; the programs must still declare the
same HBM tensors (merged here) and meet at the same core barriers and
collectives (checked by the compiler)."""
import json

import numpy as np

from ._lin import Lin
from ._state import NkiError, Retrace

# programs traced one by one at most: beyond, the symbolic trace's error
MAX_PROGRAMS = 256


class PerProgram(BaseException):
    """Private: the symbolic trace failed after the kernel used
    nl.program_id(); Kernel._trace_split traces it per program.  A
    BaseException, so a kernel's `except Exception` does not swallow it."""


def program_id(tr, axis):
    """nl.program_id(axis) of trace tr (grid of more than one program):
    the program's id on the axis when traced per program, else a symbol."""
    if tr.pid is not None:
        return program_ids(tr.grid, tr.pid)[axis]
    tr.used_pid = True
    return Lin(0, {("pid" if len(tr.grid) == 1 else "pid%d" % axis): 1})


def new_trace(name, grid, symbolic, pid):
    """Kernel._trace's Trace; pid: None (every program), 0, or (program,
    program 0's HBM tensors, the HBM names the programs before took)."""
    from ._trace import Trace
    tr = Trace(name, grid, symbolic)
    if isinstance(pid, tuple):   # a program after 0: program 0's HBM names (hbm_name)
        pid, tr.hbm_plan, taken = pid
        tr.names |= taken
    tr.pid = pid
    return tr


def retraced(kernel, args, kwargs, split, target, pid):
    """The kernel traced with its loop bodies traced once, or per
    iteration after a Retrace (docs/python.md "Loops")."""
    try:
        return kernel._trace(args, kwargs, True, split, target, pid)
    except Retrace:
        return kernel._trace(args, kwargs, False, split, target, pid)


def allowed(kernel, tr, launch):
    """Whether a symbolic trace may be traced again per program: it is
    one, of at most MAX_PROGRAMS programs (one too: a k[1, 1] grid's
    program id is 0, and `pid // n` needs that number).  NKI beta-1 kernels
    (entry points, forms) are too: beta-1 ran a kernel's Python per program
    as well (its docs branch on `nl.program_id(0) >= 1`; NxDI 2.27's
    write_kv_cache_at_batch_kernel[(nc(2),)] on `prg_id == 0`), also
    kernel[n] past the LNC degree once a beta-1 form made it beta-1's grid."""
    return (tr.pid is None and not tr.ranks and (launch != "over" or tr.beta1_forms) and
            int(np.prod(tr.grid)) <= MAX_PROGRAMS)


def retry(kernel, tr, launch):
    """A failed symbolic trace that used nl.program_id(): traced per
    program it may work (or give the error with the concrete id)."""
    return tr.used_pid and allowed(kernel, tr, launch)


def noted(kernel, launch, tr, outs, t):
    """Kernel._trace's result t, with what per_program needs: t.hbm (plan)
    and t.hbm_taken.  A symbolic trace that made a private HBM tensor
    (private_scratch) is traced per program instead (PerProgram)."""
    if private_scratch(tr, outs) and allowed(kernel, tr, launch):
        raise PerProgram()   # every program its own nl.private_hbm tensors
    t.hbm = plan(tr, outs)
    t.hbm_taken = {b.name for b in tr.hbm} | {b.name for b, _ in tr.consts}
    return t


def per_program(kernel, args, kwargs, split, target):
    """The kernel traced once per program, merged into one kernel file
    (merge) with the _Traced attributes of all programs."""
    from . import _Traced
    grid = kernel.launch_grid(target)[0]
    n = int(np.prod(tr_grid(grid)))
    res = []
    for p in range(n):   # program 0's HBM tensor names reused (hbm_name)
        taken = set().union(*(r.hbm_taken for r in res))
        try:
            res.append(kernel._trace_split(args, kwargs, split, target,
                                           (p, res[0].hbm, taken) if p else 0))
        except NkiError as e:
            raise NkiError("%s (traced for program %d of %d, nl.program_id() %s)" % (
                e, p, n, ", ".join(map(str, program_ids(tr_grid(grid), p))))) from None
    t = tuple.__new__(_Traced, (merge([r[0] for r in res], kernel.fn.__name__),) + res[0][1:4])
    t.written = []
    for w in (w for r in res for w in r.written):
        if w not in t.written:
            t.written.append(w)
    t.prints = any(r.prints for r in res)
    t.indirect = set().union(*(r.indirect for r in res))
    t.hbm, t.hbm_taken = res[0].hbm, set().union(*(r.hbm_taken for r in res))
    return t


def tr_grid(grid):
    """A launch grid's axis sizes (an nl.nc axis counts its programs)."""
    return tuple(g if isinstance(g, int) else g.n for g in grid)


def program_ids(grid, pid):
    """Program pid's per-axis ids on a row-major launch grid."""
    ids = []
    for n in reversed(grid):
        ids.append(pid % n)
        pid //= n
    return tuple(reversed(ids))


def hbm_name(tr, want, shape, dtype, buffer):
    """The name of the trace's next HBM tensor (nl.ndarray in HBM): in a
    per-program trace, the name program 0 gave its HBM tensor of the same
    rank in creation order when shape and dtype match, so that the programs
    share their outputs and shared_hbm tensors whatever tiles each made
    before them.  A private one (nl.hbm, nl.private_hbm: NKI gives every
    program its own) that program 0 does not return gets a name of its own
    (the names the programs before took are reserved: Kernel._trace)."""
    k = len(tr.hbm)
    if k < len(tr.hbm_plan):
        name, shp, dt, shared = tr.hbm_plan[k]
        if (shp, dt) == (tuple(shape), dtype) and (shared or buffer == "shared_hbm"):
            return name
    return tr.unique(want)


def private_scratch(tr, outs):
    """Whether the kernel made an HBM tensor private to its program
    (nl.hbm, nl.private_hbm) that it does not return: one tensor of the
    symbolic trace would be shared by every program."""
    ret = {o.base.name for o in outs}
    return any(b.buffer != "shared_hbm" and b.name not in ret for b in tr.hbm)


def plan(tr, outs):
    """Program 0's HBM tensors for hbm_name: (name, shape, dtype, shared:
    in shared_hbm or returned)."""
    ret = {o.base.name for o in outs}
    return [(b.name, tuple(b.shape), b.dtype, b.buffer == "shared_hbm" or b.name in ret)
            for b in tr.hbm]


def _decls(doc, key):
    return {d["name"]: d for d in doc.get(key, [])}


def _union(docs, key, name):
    """The union of the programs' top-level declarations `key` (scratch,
    constants), program 0's order first; a name declared differently by
    two programs is an error."""
    out, seen = [], {}
    for p, doc in enumerate(docs):
        for d in doc.get(key, []):
            if d["name"] not in seen:
                seen[d["name"]] = p
                out.append(d)
            elif _decls(docs[seen[d["name"]]], key)[d["name"]] != d:
                raise NkiError("%s: programs %d and %d declare the HBM tensor '%s' differently "
                               "(%s and %s)" % (name, seen[d["name"]], p, d["name"],
                                                _decls(docs[seen[d["name"]]], key)[d["name"]], d))
    return out


def merge(texts, name):
    """One kernel file from the per-program kernel files texts[p]."""
    docs = [json.loads(t) for t in texts]
    d0 = docs[0]
    for p, doc in enumerate(docs[1:], 1):
        for key in ("inputs", "outputs"):
            if doc.get(key) != d0.get(key):
                raise NkiError("%s: program %d's %s differ from program 0's (%s and %s): every "
                               "program must return the same tensors" % (
                                   name, p, key, doc.get(key), d0.get(key)))
    out = {k: d0[k] for k in ("kernel", "grid", "inputs", "outputs") if k in d0}
    for key in ("constants", "scratch"):
        u = _union(docs, key, name)
        if u:
            out[key] = u
    sched = []
    for doc in docs:
        for pair in doc.get("schedule", []):
            if pair not in sched:
                sched.append(pair)
    if sched:
        out["schedule"] = sched
    out["body"] = [{"op": "if", "cond": "pid == %d" % p, "body": doc["body"]}
                   for p, doc in enumerate(docs)]
    return json.dumps(out) + "\n"
