"""Run-time loops of nki.language (docs/python.md, docs/compiler.md "Dynamic
loops"): dynamic_range / fori_loop with a register bound, whose body is
traced once into one kernel-format dynamic_range op, and while_loop.
language.py re-exports them."""
import builtins
import contextlib

from . import _trace
from ._trace import Lin, NkiError
from .language import ndarray, sbuf, subtract


def _is_vreg(x):
    return type(x).__name__ == "VirtualRegister" and hasattr(x, "name")


def dynamic_range(start, stop=None, step=1):
    """NKI's dynamic loop: with a stop that is a register (register_alloc),
    the body is traced once into one kernel-format dynamic_range op whose
    trip count is read from the register at run time (docs/python.md,
    docs/compiler.md "Dynamic loops"); the loop variable is a symbol that
    may move DMA addresses (slices), and reads as a register holding the
    iteration's value.  With a register start the loop counts stop - start
    (_register_distance) and the variable is that register only.  With
    integer bounds it is a sequential_range."""
    loc = _trace.caller_loc()
    if stop is None:
        start, stop = 0, start
    if not isinstance(step, int) or isinstance(step, bool) or step <= 0:
        raise NkiError("%s: nl.dynamic_range: step must be a positive compile-time integer, "
                       "got %r" % (loc, step))
    if _is_vreg(start):
        return _dynamic_loop(0, _register_distance(start, stop), step, loc, first=start)
    if not _is_vreg(stop):
        return builtins.range(int(start), int(stop), step)
    return _dynamic_loop(int(start), stop, step, loc)


def _register_distance(start, stop):
    """A new register holding stop - start, for a loop from register start
    (the sequencers add immediates to registers only): both bounds stored
    to an int32 tile (an integer stop as a memset), subtracted there and
    loaded back on every engine, as the loop control needs.  The Vector
    engine subtracts in fp32 (docs/semantics.md): exact for bounds below
    2^24 in magnitude."""
    from . import isa
    t = ndarray((1, 2), dtype="int32", buffer=sbuf, name="dyn_bounds")
    isa.register_store(dst=t[0:1, 0:1], src=start)
    isa.register_store(dst=t[0:1, 1:2], src=stop if _is_vreg(stop) else int(stop))
    isa.tensor_tensor(dst=t[0:1, 0:1], data1=t[0:1, 1:2], data2=t[0:1, 0:1], op=subtract)
    n = isa.register_alloc()
    isa.register_load(dst=n, src=t[0:1, 0:1])
    return n


@contextlib.contextmanager
def _dynamic_body():
    """Trace a run-time loop's body once (dynamic_range, while_loop): the ops
    traced inside the block are cut from the kernel body into the yielded
    list when it ends without an error.  Inside a Python loop the kernel is
    traced per iteration instead (a retrace)."""
    tr = _trace.current()
    if tr.frames:   # not nested in a loop: trace the kernel per iteration
        _trace.need_retrace()
    mark, ops = len(tr.body), []
    tr.dyn_depth += 1
    try:
        yield ops
    finally:
        tr.dyn_depth -= 1
    ops.extend(tr.body[mark:])
    del tr.body[mark:]


def _dynamic_loop(start, reg, step, loc, first=None):
    """The loop's variable: a symbol that also reads as a register, or with
    a register start (first, the range then counting from 0) that register
    only: its value is known at run time only."""
    from . import isa
    tr = _trace.current()
    with _dynamic_body() as body:
        var = tr.unique("dyn_i")
        used = tr.loop_regs[var] = [var + "_reg", first is not None]
        yield isa.VirtualRegister(used[0]) if first is not None else Lin(0, {var: 1})
    # read as a register (nisa.register_store / register_move): the kernel
    # format keeps the value in one ("reg", docs/kernel-format.md)
    vreg = ', "reg": "%s"' % used[0] if used[1] else ""
    if first is not None:
        vreg += ', "reg_start": "%s"' % first.name
    tr.body.append('{"op": "dynamic_range", "var": "%s"%s, "range": [%d, "%s", %d], '
                   '"loc": "%s", "body": [\n%s\n]}' % (var, vreg, start, reg.name, step, loc,
                                                       ",\n".join(body)))


def _loop_register(x):
    """The register of x when x is the variable of a dynamic_range /
    fori_loop (NKI hands the body a VirtualRegister holding the current
    iteration's value; in tpbsim it is a symbol that also moves DMA
    addresses), marked as read; else None."""
    if not isinstance(x, Lin) or x.c != 0 or len(x.t) != 1:
        return None
    (var, coeff), = x.t.items()
    used = _trace.current().loop_regs.get(var) if coeff == 1 else None
    if used is None:
        return None
    used[1] = True
    return used[0]


def fori_loop(lower, upper, body_fun, step=1):
    """NKI's fori_loop: body_fun(i) for i in dynamic_range(lower, upper, step)."""
    for i in dynamic_range(lower, upper, step):
        body_fun(i)


# messages and op locations name the kernel's line, not these helpers'
_trace.SKIP.update((fori_loop.__code__, dynamic_range.__code__, _register_distance.__code__))


def while_loop(init, body_fun):
    """NKI 0.6's while_loop: `r = init; while r != 0: r = body_fun(r)`, the
    condition tested before each iteration at run time.  The body is traced
    once into one kernel-format while_loop op on the register init
    (docs/compiler.md "Dynamic loops"); when body_fun returns another
    register, a register_move copies it into init at the end of the body,
    so the next test reads it.  The body's register_load (without an
    engine) sets the condition on every engine, as the loop control needs."""
    loc = _trace.caller_loc()
    if not _is_vreg(init):
        raise NkiError("%s: nl.while_loop: init must be a register (nisa.register_alloc), got %r"
                       % (loc, init))
    with _dynamic_body() as body:
        nxt = body_fun(init)
        if not _is_vreg(nxt):
            raise NkiError("%s: nl.while_loop: the body must return the register of the next "
                           "condition, got %r" % (loc, nxt))
        if nxt.name != init.name:
            from . import isa as _isa
            _isa.register_move(init, nxt)
    emit_while(_trace.current(), init.name, loc, body)


def emit_while(tr, cond, loc, ops):
    """One kernel-format while_loop op on register cond around the body's
    ops (nl.while_loop, and `while reg:`: _whilereg.py)."""
    tr.body.append('{"op": "while_loop", "cond": "%s", "loc": "%s", "body": [\n%s\n]}' % (
        cond, loc, ",\n".join(ops)))
