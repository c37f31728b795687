"""NKI beta-1 operator overloads on tiles past + - * / (_trace._arith):
comparisons, shifts, bitwise ops, ** and %, unary - ~ abs(), each the nl
function of the same meaning (docs/python.md "Tile arithmetic").  NKI's
functions take a number on either side, so every binary operator has its
reflected form (`0 < t` is Python's t.__gt__(0) already)."""
import numbers
import warnings

from ._lin import Lin
from ._state import NkiError


def _operand(o):
    """What a tile operator takes besides a tile: a number (Python, NumPy)
    or a loop-variable / program-id expression.  Anything else is
    NotImplemented, so `t == None` stays Python's identity test."""
    from ._trace import NkiTensor
    return isinstance(o, (NkiTensor, Lin, numbers.Number))


def _binary(name, reverse=False, onchip_only=False):
    def f(self, o):
        if not _operand(o):
            return NotImplemented
        if onchip_only and not (self._onchip() and (not hasattr(o, "_onchip") or o._onchip())):
            # == / != of HBM tensors (kernel arguments, nl.ndarray in HBM):
            # Python's identity test, as before tiles compared element-wise
            # (`a in (x, y)`, aliasing checks); NKI computes on tiles only
            return NotImplemented
        from . import language
        from ._trace import caller_loc, current
        x, y = (o, self) if reverse else (self, o)
        r = language._binary(name, x, y, None, caller_loc())
        if name in _CMP:
            current().cmp_bases.add(id(r.base))
        return r
    return f


def _unary(name):
    def f(self):
        from . import language
        from ._trace import caller_loc
        return language._unary(name, self, caller_loc())
    return f


def _floordiv(self, o):
    from ._trace import caller_loc
    raise NkiError("%s: tile // x: NKI has no floor division of tiles (no nl.floor_divide); "
                   "write nl.floor(nl.divide(x, y)) (with dtype= for an integer result)"
                   % caller_loc())


def _bool(self):
    """A tile is true, as any object in NKI (the NKI Library tests an
    optional tile argument with `if params.expert_index:`); a comparison's
    tile used so (`if t == 0:`) warns, since it is true whatever the
    values (they exist at run time only)."""
    from ._trace import current, stack
    if self._onchip() and stack() and id(self.base) in current().cmp_bases:
        warnings.warn("a tile comparison used as a truth value is true, as any tile in NKI "
                      "(its values exist at run time only): use nl.where / nl.greater / ... "
                      "on it, or a run-time loop", stacklevel=2)
    return True


# (operator, nl function): the comparisons give 1 / 0 in the tile's dtype
# (NKI's default for nl.greater & co.: the input tile's dtype)
_OPS = (("lt", "less"), ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal"),
        ("eq", "equal"), ("ne", "not_equal"))
_CMP = {fn for _, fn in _OPS}
_REFLECTED = (("lshift", "left_shift"), ("rshift", "right_shift"), ("and", "bitwise_and"),
              ("or", "bitwise_or"), ("xor", "bitwise_xor"), ("pow", "power"), ("mod", "mod"))


def install(cls):
    for op, fn in _OPS:
        setattr(cls, "__%s__" % op, _binary(fn, onchip_only=op in ("eq", "ne")))
    for op, fn in _REFLECTED:
        setattr(cls, "__%s__" % op, _binary(fn))
        setattr(cls, "__r%s__" % op, _binary(fn, True))
    cls.__floordiv__ = cls.__rfloordiv__ = _floordiv
    cls.__neg__ = _unary("negative")
    cls.__invert__ = _unary("invert")
    cls.__abs__ = _unary("abs")
    cls.__bool__ = _bool
    # tpbsim keys dicts and sets by tile (views, groups): identity, as before
    # __eq__ became element-wise
    cls.__hash__ = object.__hash__
