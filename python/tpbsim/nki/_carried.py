"""Python state a traced-once loop body carries from one iteration to the
next (docs/python.md "Loops").

The body of an affine_range / sequential_range loop traced once runs two
passes with the same symbolic variable (language._symbolic_loop).  The
ops of the passes are compared there; this module compares the Python
state the passes leave: `count += 1`, `offs.append(...)`, `a, b = b, a`
read only after the loop change between the two passes, and a body that
changes its state at every pass gives another value after n iterations
than after two, so the kernel is traced again per iteration (Retrace).
A body that leaves the same state after both passes leaves it after any
number of them (each pass starts from the same state, the variable being
the same symbol), so nothing else falls back.

The state read: the locals (cells too) of the frame that runs the loop and
of the kernel's frames above it, up to the trace's entry (Kernel._trace),
and the module globals those frames' code names (`global count`).  Each
value becomes a key:

- numbers, strings, bytes, None, NumPy scalars, slices, ranges, loop
  expressions (Lin), nl.ds: by value; tuples, lists, dicts and sets by
  their items' keys (a dict or set holding a loop expression is state
  indexed by the variable: always carried);
- small NumPy arrays by their bytes;
- instances of the kernel's own classes (a dataclass, an NKIObject): by
  their attributes' keys (`self.count += 1`), and by identity when they
  existed when the loop began;
- any other object (a tile, a function): by identity when it existed when
  the loop began (swapped buffers), else by its type only (a tile made in
  the body is a new object at every pass, never carried state by itself).

A loop run by a comprehension, a generator expression (`sum(1 for i in
nl.affine_range(n))`) or a generator function always is: it builds or
hands out one item per iteration.

Not seen: a list, set or dict comprehension that Python 3.12 and later
inline into their function (no frame of its own), state a helper called in
the body keeps where none of these frames reaches it (the globals of
another module, attributes of objects the frames do not hold, closures of
functions that returned), an item replaced in a container of more than
BIG items (those are keyed by identity and length), values past
SNAP_BUDGET per snapshot, and values nested deeper than MAX_DEPTH."""
import os
import types

import numpy as np

from ._lin import Lin
from ._trace import DynSlice

SNAP_BUDGET = 20000   # values keyed per snapshot at most
MAX_DEPTH = 6         # containers and attributes nested below a frame's local
MAX_FRAMES = 32       # kernel frames read above the loop's
ND_BYTES = 1 << 15    # NumPy arrays keyed by their bytes up to this size
BIG = 1024            # containers keyed by their items up to this length

_PLAIN = (type(None), bool, int, str, bytes)
_CONTAINERS = (tuple, list, dict, set, frozenset)
_OPAQUE = (type, types.ModuleType, types.FunctionType, types.MethodType,
           types.BuiltinFunctionType, types.CodeType, types.FrameType, types.GeneratorType)
_PKG = __name__.rsplit(".", 2)[0]   # "tpbsim"
_CO_OPTIMIZED = 0x1
_CO_GENERATOR = 0x20 | 0x200   # CO_GENERATOR, CO_ASYNC_GENERATOR
# the code of a comprehension or generator expression (Python 3.12 inlines
# list, set and dict comprehensions into their function: not seen there)
_COMPREHENSIONS = ("<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>")

# the code object of Kernel._trace, the frame that calls the kernel (set by
# nki/__init__.py: the walk over the kernel's frames stops there)
STOP = set()


class Snap:
    """The keys of the Python state reachable from a loop's frames.  old:
    id -> object of what existed when the loop began, or None for the
    snapshot taken then (which collects them into self.seen, keeping them
    alive so that no id is reused meanwhile)."""
    __slots__ = ("old", "seen", "budget", "symkey")

    def __init__(self, old):
        self.old = old
        self.seen = {} if old is None else None
        self.budget = SNAP_BUDGET
        self.symkey = False    # a dict key / set item is a loop expression

    def key(self, v, depth):
        self.budget -= 1
        if self.budget < 0:
            return "..."
        t = type(v)
        if t in _PLAIN:
            return v
        if t is float or t is complex:
            return v if v == v else "nan"
        if t is Lin:
            return ("lin", v.c, tuple(sorted(v.t.items())))
        if isinstance(v, (int, float, complex, str, bytes)):   # nl.par_dim, an IntEnum
            return (t.__name__, self.key(_base(v), depth))
        if isinstance(v, np.generic):
            x = v.item()
            return (t.__name__, x if x == x else "nan") if isinstance(x, (int, float)) else \
                (t.__name__, repr(x))
        if depth >= MAX_DEPTH:
            return self.ident(v)
        d = depth + 1
        if t in _CONTAINERS and len(v) > BIG:   # a table: an append still shows
            return (t.__name__, self.ident(v), len(v))
        if t is tuple or t is list:
            return (t.__name__, tuple([self.key(x, d) for x in v]))
        if t is dict:
            return ("dict", tuple([(self.item(k, d), self.key(x, d)) for k, x in v.items()]))
        if t is set or t is frozenset:
            return (t.__name__, frozenset([self.item(x, d) for x in v]))
        if t is slice:
            return ("slice", self.key(v.start, d), self.key(v.stop, d), self.key(v.step, d))
        if t is range:
            return ("range", v.start, v.stop, v.step)
        if t is DynSlice:
            return ("ds", self.key(v.start, d), self.key(v.size, d))
        if t is np.ndarray and v.nbytes <= ND_BYTES:
            return ("nd", v.shape, v.dtype.str, v.tobytes())
        if _user(v):
            return ("obj", self.ident(v), self.key(object.__getattribute__(v, "__dict__"), d))
        return self.ident(v)

    def item(self, x, d):
        """A dict key or set item: a loop expression there is state indexed
        by the variable (one entry per iteration when unrolled)."""
        if type(x) is Lin:
            self.symkey = True
        return self.key(x, d)

    def ident(self, v):
        """An object by identity when it existed when the loop began, else
        by its type (made in the pass)."""
        if self.seen is not None:
            self.seen[id(v)] = v
            return id(v)
        return id(v) if id(v) in self.old else ("new", type(v).__name__)


def _base(v):
    """A subclass of a builtin value type as that type's value."""
    for b in (int, float, complex, str, bytes):
        if isinstance(v, b):
            return b(v)


def _user(v):
    """An instance of a kernel's class, whose attributes are its state
    (read without calling its code: __dictoffset__, object.__getattribute__)."""
    t = type(v)
    return (t.__dictoffset__ != 0 and not isinstance(v, _OPAQUE) and
            t.__module__ != _PKG and not t.__module__.startswith(_PKG + "."))


# .../tpbsim/ as its code objects name it: its frames are not the kernel's
_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "")


def _frames(f):
    """The loop's frame and the kernel's frames above it (functions only:
    a module or class body's namespace is not a kernel's state)."""
    n = 0
    while f is not None and n < MAX_FRAMES and f.f_code not in STOP:
        code = f.f_code
        if code.co_flags & _CO_OPTIMIZED and not code.co_filename.startswith(_DIR):
            yield f
            n += 1
        f = f.f_back


def _state(snap, f0):
    out = []
    for f in _frames(f0):
        out.append(tuple([(k, snap.key(v, 0)) for k, v in f.f_locals.items()]))
        g = f.f_globals
        out.append(tuple([(n, snap.key(g[n], 0)) for n in f.f_code.co_names if n in g]))
    return out


class Watch:
    """The state of one traced-once loop of trace tr: made with the frame
    that runs it when it begins, after_pass(frame) after each of its two
    passes, carried() at the end."""
    __slots__ = ("tr", "allocs", "old", "states", "always")

    def __init__(self, tr, frame):
        self.tr, self.allocs = tr, tr.mod_allocs
        # carried whatever the state: a comprehension builds one item per
        # iteration (on its stack), a generator hands one out per iteration
        code = frame.f_code
        self.always = code.co_name in _COMPREHENSIONS or code.co_flags & _CO_GENERATOR != 0
        s = Snap(None)
        _state(s, frame)
        self.old = s.seen
        self.states = []

    def after_pass(self, frame):
        s = Snap(self.old)
        self.states.append(_state(s, frame))
        self.always |= s.symkey

    def carried(self):
        """Whether the two passes left different Python state.  Not asked
        of a body that makes beta-2 direct allocations (ncc.sbuf.mod_alloc):
        written for beta-2, which traces a loop body once, its `cur_addr +=
        size` is not state carried per iteration there (_sites.py)."""
        if self.tr.mod_allocs != self.allocs:
            return False
        return self.always or len(self.states) != 2 or self.states[0] != self.states[1]
