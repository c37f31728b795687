"""`while reg:` on a VirtualRegister (docs/python.md "Dynamic loops"):
NKI's dynamic while loop (the parser front end's form, deprecated in NKI
0.6 for nl.while_loop), run at run time while the register is non-zero.

tpbsim traces Python, so the loop is caught at its tests: the register's
truth value is asked for by the `while` statement itself.  The first test
answers True and opens the body (the ops traced from there on, as
nl.while_loop's body); the test after the body (Python tests a `while`
condition again after each pass) answers False and closes it into one
kernel-format while_loop op on the register.  So the body is traced once,
whatever the run-time count, and the `while` statement runs its `else:`
once, as a loop that ends without `break` does.

Which statement asks is read from the kernel's source: the position of
the instruction testing the value (code.co_positions) is that of the
`while` statement or of its condition, found in the file's syntax tree.
Any other truth test of a register (`if reg:`, `not reg`, `reg and x`,
bool(reg)) is an NkiError naming the line, as is a `break`, `return` or
`yield` in the body (the body is one run-time loop body: it leaves the
loop only by its condition)."""
import ast
import itertools
import linecache
import os

from . import _trace
from ._trace import NkiError

_SITES = {}   # source text -> {position: While node} (_while_sites)


class _Open:
    """A `while reg:` whose body is being traced."""
    __slots__ = ("frame", "node", "reg", "mark", "loc")

    def __init__(self, frame, node, reg, mark, loc):
        self.frame, self.node, self.reg, self.mark, self.loc = frame, node, reg, mark, loc


def _loc(frame):
    return "%s:%d" % (os.path.basename(frame.f_code.co_filename), frame.f_lineno)


def truth(reg, frame):
    """bool(reg) asked by frame: True to enter the body of `while reg:`,
    False when the body has been traced once (the loop is then emitted)."""
    tr = _trace.current()
    loc = _loc(frame)
    node = _while_site(frame, loc)
    if node is None:
        raise NkiError("%s: %r: a register's truth value is known at run time only: it can be "
                       "the whole condition of a `while` loop (`while reg:`, NKI's dynamic "
                       "while loop, run on the device), nothing else (`if reg:`, `not reg`, "
                       "`reg and ...`, bool(reg))" % (loc, reg))
    opened = tr.while_open
    if opened and opened[-1].frame is frame and opened[-1].node is node:
        return _close(tr, opened.pop(), reg, loc)
    _check_body(node, frame)
    if tr.frames:   # in a traced-once loop: trace the kernel per iteration
        _trace.need_retrace()
    opened.append(_Open(frame, node, reg, len(tr.body), loc))
    tr.dyn_depth += 1
    return True


def _close(tr, o, reg, loc):
    """The body's ops, cut from the kernel body into one while_loop op on
    the register first tested.  When the test after the body reads another
    register (`reg = nxt` in the body), a register_move copies it into the
    first at the end of the body, as nl.while_loop does with the register
    its body returns."""
    from . import _dynloop
    from .isa import _emit
    if reg.name != o.reg.name:
        _emit("register_move", loc, [("dst", '"%s"' % o.reg.name), ("src", '"%s"' % reg.name)])
    tr.dyn_depth -= 1
    ops = tr.body[o.mark:]
    del tr.body[o.mark:]
    _dynloop.emit_while(tr, o.reg.name, o.loc, ops)
    return False


def check_closed(tr):
    """At the end of a trace: every `while reg:` ended by its test (a
    kernel that catches an exception raised in the body may leave one)."""
    if tr.while_open:
        raise NkiError("%s: `while reg:`: the body was left without testing the register again "
                       "(an exception caught in the kernel?)" % tr.while_open[-1].loc)


def _while_site(frame, loc):
    """The `while` statement whose whole condition frame is testing, or
    None: matched by the position of the testing instruction."""
    code = frame.f_code
    pos = next(itertools.islice(code.co_positions(), frame.f_lasti // 2, None), None)
    sites = _while_sites(code.co_filename, frame.f_globals, loc)
    if pos is None or pos[2] is None:   # no column positions (python -X no_debug_ranges)
        found = {id(n): n for p, n in sites.items() if p[0] == frame.f_lineno}
        return next(iter(found.values())) if len(found) == 1 else None
    return sites.get(pos)


def _while_sites(filename, globs, loc):
    """{position: While node} of the file's `while` statements whose
    condition is one value (not `not x`, `x and y`, `x or y`), keyed by the
    statement's and by the condition's position (CPython gives the test of
    `while reg:` the statement's, of `while f(x) != 0:` the condition's)."""
    text = "".join(linecache.getlines(filename, globs))
    sites = _SITES.get(text)
    if sites is not None:
        return sites
    try:
        tree = ast.parse(text, filename)
    except (SyntaxError, ValueError):
        tree = None
    if not text or tree is None:
        raise NkiError("%s: a register's truth value is asked for (`while reg:`?), and the "
                       "kernel's source, which tells a `while` loop from other tests, cannot "
                       "be read (%s)" % (loc, filename))
    sites = {}
    for n in ast.walk(tree):
        if not isinstance(n, ast.While) or isinstance(n.test, ast.BoolOp) or (
                isinstance(n.test, ast.UnaryOp) and isinstance(n.test.op, ast.Not)):
            continue
        for x in (n, n.test):
            sites[(x.lineno, x.end_lineno, x.col_offset, x.end_col_offset)] = n
    if len(_SITES) > 64:
        _SITES.clear()
    _SITES[text] = sites
    return sites


_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _check_body(node, frame):
    """Refuse what leaves the run-time body other than by its condition:
    `break` (of this loop), `return`, `yield`."""
    def walk(n, in_loop):
        for c in ast.iter_child_nodes(n):
            if isinstance(c, _NESTED):
                continue
            bad = ("`return`" if isinstance(c, ast.Return) else
                   "`yield`" if isinstance(c, (ast.Yield, ast.YieldFrom, ast.Await)) else
                   "`break`" if isinstance(c, ast.Break) and not in_loop else None)
            if bad:
                raise NkiError(
                    "%s:%d: %s in the body of `while %s:` (line %d): the loop runs on the "
                    "device while the register is non-zero, its body traced once, so it ends "
                    "only by its condition (set the register to 0)" % (
                        os.path.basename(frame.f_code.co_filename), c.lineno, bad,
                        ast.unparse(node.test), node.lineno))
            # a loop's own `break` leaves that loop only (its else: is outside it)
            if isinstance(c, _LOOPS):
                walk(ast.Module(body=c.body, type_ignores=[]), True)
                walk(ast.Module(body=c.orelse, type_ignores=[]), in_loop)
                for e in ([c.test] if isinstance(c, ast.While) else [c.target, c.iter]):
                    walk(ast.Expr(e), in_loop)
            else:
                walk(c, in_loop)
    walk(ast.Module(body=node.body, type_ignores=[]), False)
