"""Linear expressions in program ids and traced-once loop variables
(Lin), and how an offset prints in the kernel format (_num)."""
from ._state import _LOCAL, NkiError, current, need_retrace


# ---- program ids and loop variables: linear expressions in symbols ----

class Lin:
    """const + sum(coeff * symbol): nl.program_id() values and the variable
    of an affine_range / sequential_range loop traced once.  Arithmetic with
    ints stays linear; `//` and `%` of an expression in loop variables make
    a new symbol (an "atom" such as "(i%2)", with its bounds in the trace's
    sym_bounds).  Python control flow on a program id is an error, as in
    NKI (every program must unroll to the same ops); on a loop variable it
    makes the kernel be traced again per iteration (Retrace)."""
    __slots__ = ("c", "t")

    def __init__(self, c=0, t=None):
        self.c = c
        self.t = t or {}

    @staticmethod
    def of(x):
        return x if isinstance(x, Lin) else Lin(int(x))

    def _norm(self):
        t = {k: v for k, v in self.t.items() if v}
        return Lin(self.c, t) if t else self.c

    def __add__(self, o):
        if not isinstance(o, (int, Lin)):
            return NotImplemented
        o = Lin.of(o)
        t = dict(self.t)
        for k, v in o.t.items():
            t[k] = t.get(k, 0) + v
        return Lin(self.c + o.c, t)._norm()

    __radd__ = __add__

    def __neg__(self):
        return Lin(-self.c, {k: -v for k, v in self.t.items()})

    def __sub__(self, o):
        return self + (-Lin.of(o))

    def __rsub__(self, o):
        return Lin.of(o) + (-self)

    def __mul__(self, o):
        if isinstance(o, Lin):
            if self.loop_trace() or o.loop_trace():
                need_retrace()
            raise NkiError("a product of two program ids is not supported")
        if not isinstance(o, int):
            return NotImplemented
        return Lin(self.c * o, {k: v * o for k, v in self.t.items()})._norm()

    __rmul__ = __mul__

    def loop_trace(self):
        """The trace whose traced-once loop variables this uses, or None."""
        s = _LOCAL.stack
        if s:
            b = s[-1].sym_bounds
            if b and any(k in b for k in self.t):
                return s[-1]
        return None

    def bounds(self, tr):
        """(min, max) over the loop's iterations, or None when a symbol
        (a program id) has no known bounds."""
        lo = hi = self.c
        for k, v in self.t.items():
            b = tr.sym_bounds.get(k) or tr.pid_bounds(k)
            if b is None:
                return None
            lo, hi = (lo + v * b[0], hi + v * b[1]) if v > 0 else (lo + v * b[1], hi + v * b[0])
        return lo, hi

    def _atom_text(self):
        """The operand text of // or %: a lone symbol as is, else in ()."""
        if not self.c and len(self.t) == 1 and next(iter(self.t.values())) == 1:
            return next(iter(self.t))
        return "(%s)" % self.text()

    def _divmod_bounds(self, o, op):
        tr = self.loop_trace()
        if tr is None:
            self._arith(op, o)
        b = self.bounds(tr) if type(o) is int and o > 0 else None
        if b is None:
            need_retrace()
        return tr, b

    def __floordiv__(self, o):
        tr, (lo, hi) = self._divmod_bounds(o, "//")
        if self.c % o == 0 and all(v % o == 0 for v in self.t.values()):
            return Lin(self.c // o, {k: v // o for k, v in self.t.items()})._norm()
        if lo // o == hi // o:
            return lo // o
        return tr.atom("(%s//%d)" % (self._atom_text(), o), lo // o, hi // o, self)

    def __mod__(self, o):
        tr, (lo, hi) = self._divmod_bounds(o, "%")
        if all(v % o == 0 for v in self.t.values()):
            return self.c % o
        if lo // o == hi // o:
            return self - (lo // o) * o
        return tr.atom("(%s%%%d)" % (self._atom_text(), o), 0, o - 1, self)

    def _ctl(self, *a):
        if self.loop_trace() is not None:
            need_retrace()
        raise NkiError("control flow may not depend on nl.program_id() in a kernel traced "
                       "once for all programs (a launch grid of more than 256 programs; "
                       "docs/python.md \"Control flow on nl.program_id()\"); use it in slices "
                       "only")

    __index__ = __int__ = _ctl

    def _arith(self, op, o, rev=False):
        """Arithmetic the symbolic form cannot hold: on a loop variable a
        Retrace; on program ids alone an error that says so (a kernel
        traced per program never gets here: its ids are ints)."""
        if self.loop_trace() is not None:
            need_retrace()
        a, b = (o, self) if rev else (self, o)
        raise NkiError("%s %s %s: nl.program_id() takes + - and * by integers only in a kernel "
                       "traced once for all programs (a launch grid of more than 256 programs; "
                       "docs/python.md \"Control flow on nl.program_id()\")"
                       % (_arg_text(a), op, _arg_text(b)))

    def __rfloordiv__(self, o):
        self._arith("//", o, True)

    def __rmod__(self, o):
        self._arith("%", o, True)

    def _decide(self, o, test):
        """A comparison with a loop variable that has the same outcome in
        every iteration (from the bounds: `min(128, n - i*128)` when every
        tile is whole) is that outcome; any other is a Retrace."""
        tr = self.loop_trace() or (o.loop_trace() if isinstance(o, Lin) else None)
        if tr is None:
            return self._decide_pids(o, test)
        if not isinstance(o, (int, Lin)):
            return NotImplemented
        d = self - o
        b = (d, d) if type(d) is int else d.bounds(tr)
        if b is None:
            need_retrace()
        lo, hi = b
        if test is None:   # == : decided when 0 is outside lo..hi
            if lo > 0 or hi < 0:
                return False
            need_retrace()
        r = test(lo)
        if r != test(hi):
            need_retrace()
        return r

    def _decide_pids(self, o, test):
        """A comparison of program ids alone that every program decides
        alike (from their bounds: `pid * 64 >= 0`) is that; another raises."""
        if not isinstance(o, (int, Lin)):
            return NotImplemented
        d = self - o
        b = (d, d) if type(d) is int else d.bounds(current())
        if b is not None:
            lo, hi = b
            if test is None and (lo > 0 or hi < 0):
                return False
            if test is not None and test(lo) == test(hi):
                return test(lo)
        self._ctl()

    def __lt__(self, o):
        return self._decide(o, lambda d: d < 0)

    def __le__(self, o):
        return self._decide(o, lambda d: d <= 0)

    def __gt__(self, o):
        return self._decide(o, lambda d: d > 0)

    def __ge__(self, o):
        return self._decide(o, lambda d: d >= 0)

    def __eq__(self, o):
        return self._decide(o, None)

    def __ne__(self, o):
        r = self._decide(o, None)
        return r if r is NotImplemented else not r

    def __bool__(self):
        return not self._decide(0, None)

    __hash__ = object.__hash__

    def __format__(self, spec):
        if self.loop_trace() is not None:   # e.g. name=f"mm{i}": differs per iteration
            need_retrace()
        return format(repr(self), spec)

    __str__ = lambda self: self.__format__("")

    def text(self):
        s = _LOCAL.stack
        if s and s[-1].closed:
            s[-1].check_open(self)
        parts = ["%d*%s" % (v, k) if v != 1 else k for k, v in sorted(self.t.items())]
        if self.c or not parts:
            parts.append(str(self.c))
        return " + ".join(parts).replace("+ -", "- ")

    def __repr__(self):
        return "Lin(%s)" % self.text()


def _arg_text(x):
    """An operand of a refused expression as the kernel wrote it."""
    return "(%s)" % x.text() if isinstance(x, Lin) else repr(x)


def _num(x):
    """An offset as JSON: an integer or an expression string."""
    return str(x) if isinstance(x, int) else '"%s"' % x.text()
