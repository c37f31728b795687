"""nki.isa's virtual registers (kernel-format register_*;
docs/kernel-format.md): register_alloc / move / load / store and the
VirtualRegister they pass.  isa.py re-exports them."""
import numbers
import sys

from . import _trace, _whilereg, language
from ._trace import Lin, NkiError, NkiTensor
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
    __lt__ = __le__ = __gt__ = __ge__ = _no_value
    # t[reg], int(reg), range(reg): a value at trace time
    __index__ = __int__ = __float__ = _no_value
    __hash__ = object.__hash__

    def __eq__(self, other):
        """`reg == 0`, `while reg != 0:`: without this a register is never
        equal to a number, and `while reg != 0:` unrolls its body forever.
        NKI's dynamic while takes "a condition that is a single register
        value" (nki-language-guide): `while reg:`."""
        if isinstance(other, numbers.Number):
            raise NkiError("%s: %r compared with %r: a register's value is known at run time "
                           "only; the condition of NKI's dynamic while loop is the register "
                           "itself (`while reg:`, run while it is non-zero)" % (
                               _trace.caller_loc(), self, other))
        return NotImplemented

    __ne__ = __eq__

    def __bool__(self):
        """`while reg:` (NKI's dynamic while loop): the body runs at run
        time while the register is non-zero (_whilereg.py); any other truth
        test is an NkiError."""
        return _whilereg.truth(self, sys._getframe(1))


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
    if x is not None and not isinstance(x, NkiTensor):
        f.append(("x", str(int(x))))
    _emit("register_alloc", loc, f)
    if isinstance(x, NkiTensor):
        # a tensor element (the NKI Library's moe_tkg: register_alloc(t[0, 0]),
        # beyond the stub's int | None): the register loaded from it
        _emit("register_load", loc, [("dst", '"%s"' % r.name), ("src", _t(x, "x", loc))])
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
