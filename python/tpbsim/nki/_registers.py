"""nki.isa's virtual registers (kernel-format register_*;
docs/kernel-format.md): register_alloc / move / load / store and the
VirtualRegister they pass.  isa.py re-exports them."""
from . import _trace, language
from ._trace import Lin, NkiError
from .isa import _emit, _t, memset


class VirtualRegister:
    """A register from register_alloc; its kernel-format name."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "VirtualRegister(%s)" % self.name

    def _no_value(self, *_):
        raise NkiError("%r holds a value known at run time only (a register from "
                       "register_alloc, or the variable of a nl.fori_loop / nl.dynamic_range "
                       "from a register start): no arithmetic or slicing at trace time; index "
                       "with .ap(scalar_offset=reg) or store it with register_store" % self)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _no_value
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _no_value
    # t[reg], int(reg), range(reg): a value at trace time
    __index__ = __int__ = __float__ = _no_value

    def __bool__(self):
        """`while reg:` / `if reg:` (NKI's dynamic while before 0.6): the
        truth value is known at run time only; without this every register
        is true and `while reg:` unrolls its body forever."""
        raise NkiError("%r: a register's truth value is known at run time only, so `while reg:` "
                       "(NKI's deprecated dynamic while loop) and `if reg:` cannot be traced; "
                       "write nl.while_loop(reg, body), whose body returns the register of the "
                       "next condition" % self)


def _vreg(x, what, loc, write=False):
    """A register field: a register_alloc register, or (read only) the
    variable of a nl.fori_loop / nl.dynamic_range loop."""
    if isinstance(x, VirtualRegister):
        return '"%s"' % x.name
    name = language._loop_register(x)
    if name is not None and not write:
        return '"%s"' % name
    if name is not None:
        raise NkiError("%s: field '%s': the variable of a nl.fori_loop / nl.dynamic_range loop "
                       "is read-only in tpbsim (write a register from register_alloc)" %
                       (loc, what))
    raise NkiError("%s: field '%s': expected a register from register_alloc, got %r" %
                   (loc, what, x))


def register_alloc(x=None):
    loc = _trace.caller_loc()
    tr = _trace.current()
    n = getattr(tr, "_nki_nregs", 0)
    tr._nki_nregs = n + 1
    r = VirtualRegister("vreg%d" % n)
    f = [("reg", '"%s"' % r.name)]
    if x is not None:
        f.append(("x", str(int(x))))
    _emit("register_alloc", loc, f)
    return r


def register_move(dst, src):
    loc = _trace.caller_loc()
    s = _vreg(src, "src", loc) if isinstance(src, (VirtualRegister, Lin)) else str(int(src))
    _emit("register_move", loc, [("dst", _vreg(dst, "dst", loc, True)), ("src", s)])


def register_load(dst, src):
    loc = _trace.caller_loc()
    _emit("register_load", loc, [("dst", _vreg(dst, "dst", loc, True)),
                                 ("src", _t(src, "src", loc))])


def register_store(dst, src):
    loc = _trace.caller_loc()
    if isinstance(src, int) and not isinstance(src, bool):
        # the variable of a fori_loop / dynamic_range tpbsim unrolls (integer
        # bounds): NKI's register holds that value
        return memset(dst=dst, value=src)
    _emit("register_store", loc, [("dst", _t(dst, "dst", loc)), ("src", _vreg(src, "src", loc))])
