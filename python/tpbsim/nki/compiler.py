"""NKI's nki.compiler (`import neuronxcc.nki.compiler as ncc`): the direct
allocation API and the compiler-option decorators and directives
(docs/python.md "Direct allocation").

`buffer=ncc.sbuf.mod_alloc(base_addr=..., num_free_tiles=(n,))`,
`ncc.psum.mod_alloc(base_bank=..., num_bank_tiles=(n,))` and
`ncc.sbuf.alloc(func)` / `ncc.psum.alloc(func)` place the logical blocks
of a tile; logical blocks placed at one location share storage (_alloc.py).
`ncc.sbuf` / `ncc.psum` themselves (and `.auto_alloc()`) are nl.sbuf /
nl.psum.  The decorators and directives only pass options to NKI's
compiler: tpbsim accepts them and changes nothing."""
import numpy as np

from ._trace import NkiError

__all__ = ["sbuf", "psum", "skip_middle_end_transformations", "enable_stack_allocator",
           "force_auto_alloc", "multi_buffer", "no_reorder", "allocation_scope"]


class _Alloc:
    """A direct-allocation buffer: `func(idx, pdim_size, fdim_size)` gives
    the location of logical block idx ((bank, start_partition, byte_addr)
    in PSUM, (start_partition, byte_addr) in SBUF)."""
    __slots__ = ("buffer", "func", "what")

    def __init__(self, buffer, func, what):
        self.buffer, self.func, self.what = buffer, func, what

    def __repr__(self):
        return self.what


def _tiles(name, v, what):
    """A num_*_tiles tuple of positive ints."""
    v = (v,) if isinstance(v, int) else v
    if (not isinstance(v, (tuple, list)) or
            not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in v)):
        raise NkiError("%s: %s=%r: expected a tuple of positive integers" % (what, name, v))
    return tuple(v)


def _modulo(base, tiles, scale):
    """Block idx -> base + scale * (position of idx % tiles in a C-order
    box of shape tiles); an empty tiles is (1, 1, ...): one location.  As
    NKI's formula, idx and tiles are paired up to the shorter of the two
    (a tensor without block dims ignores num_free_tiles)."""
    def f(idx):
        lin = 0
        for d, (i, n) in enumerate(zip(idx, tiles)):
            lin += (i % n) * int(np.prod(tiles[d + 1:], dtype=np.int64))
        return base + lin * scale
    return f


class _Space(str):
    """ncc.sbuf / ncc.psum: the buffer itself (a str equal to nl.sbuf /
    nl.psum) with the allocation functions."""

    def auto_alloc(self):
        return str(self)

    def alloc(self, func):
        if not callable(func):
            raise NkiError("ncc.%s.alloc(func): func must be callable, got %r" % (self, func))
        return _Alloc(str(self), func, "ncc.%s.alloc(%s)" % (
            self, getattr(func, "__name__", type(func).__name__)))


class _Sbuf(_Space):
    def mod_alloc(self, *, base_addr, base_partition=0, num_par_tiles=(), num_free_tiles=()):
        what = "ncc.sbuf.mod_alloc(base_addr=%r, num_free_tiles=%r)" % (base_addr,
                                                                        num_free_tiles)
        par = _tiles("num_par_tiles", num_par_tiles, what)
        free = _tiles("num_free_tiles", num_free_tiles, what)

        def func(idx, pdim_size, fdim_size):
            return (_modulo(base_partition, par, pdim_size)(idx),
                    _modulo(base_addr, free, fdim_size)(idx))
        return _Alloc("sbuf", func, what)


class _Psum(_Space):
    def mod_alloc(self, *, base_bank, base_addr=0, base_partition=0, num_bank_tiles=(),
                  num_par_tiles=(), num_free_tiles=()):
        what = "ncc.psum.mod_alloc(base_bank=%r, num_bank_tiles=%r)" % (base_bank,
                                                                       num_bank_tiles)
        bank = _tiles("num_bank_tiles", num_bank_tiles, what)
        par = _tiles("num_par_tiles", num_par_tiles, what)
        free = _tiles("num_free_tiles", num_free_tiles, what)

        def func(idx, pdim_size, fdim_size):
            return (_modulo(base_bank, bank, 1)(idx),
                    _modulo(base_partition, par, pdim_size)(idx),
                    _modulo(base_addr, free, fdim_size)(idx))
        return _Alloc("psum", func, what)


sbuf = _Sbuf("sbuf")
psum = _Psum("psum")


def _passthrough(name):
    """A decorator that only gives NKI's compiler an option: @d and
    @d(...) both return the kernel unchanged."""
    def deco(func=None, *args, **kwargs):
        if func is None or not callable(func):
            return lambda f: f
        return func
    deco.__name__ = name
    deco.__doc__ = "NKI compiler option @%s: accepted, no effect in tpbsim." % name
    return deco


skip_middle_end_transformations = _passthrough("skip_middle_end_transformations")
enable_stack_allocator = _passthrough("enable_stack_allocator")


def force_auto_alloc(func=None):
    """NKI: ignore the kernel's direct allocation (every logical block its
    own storage, as nl.sbuf / nl.psum)."""
    if func is None:
        return force_auto_alloc
    fn = getattr(func, "fn", func)   # a Kernel (@nki.jit below) or the function
    fn.tpbsim_force_auto_alloc = True
    return func


class _Directive:
    """A loop directive (no_reorder(), multi_buffer(n)): scheduling hints
    for NKI's compiler; tpbsim's loops accept and ignore them."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "ncc.%s" % self.name


def no_reorder():
    return _Directive("no_reorder()")


def multi_buffer(factor=2):
    return _Directive("multi_buffer(%r)" % (factor,))


class allocation_scope:
    """NKI's allocation scope: a context manager with no effect here."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

