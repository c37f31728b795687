"""NumPy dtypes bfloat16, float8_e4m3fn, float8_e4m3 and float8_e5m2 (NKI's ml_dtypes
types) from the tpbsim_dtypes extension module (python/tpbsim/_dtypes*.c),
built next to libtpb.so (build/lib/tpbsim_dtypes.so; TPBSIM_DTYPES names
another file).  nki.language's nl.bfloat16 & co. are these types.

Conversions to them round as the simulator does (common/numeric.c: to
nearest even; bf16/e5m2/e4m3 overflow to inf, e4m3fn to NaN), so an array made
on the host with `.astype(nl.bfloat16)` holds the values a kernel sees.

When the module was not built (no Python headers at configure time), the
names are placeholders that still work as kernel dtype names but that
NumPy refuses, with a message saying why: never a silent float32."""
import importlib.machinery
import importlib.util
import os
import sys

import numpy as np

NAMES = ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3")
_MODNAME = "tpbsim_dtypes"


def _paths():
    env = os.environ.get("TPBSIM_DTYPES")
    if env:
        yield env
        return
    from ._lib import _candidates
    for lib in _candidates():
        if os.path.sep in lib:
            yield os.path.join(os.path.dirname(lib), _MODNAME + ".so")


def _load():
    """The extension module, or (None, the reason it is missing)."""
    if _MODNAME in sys.modules:   # NumPy registers a dtype once per process
        return sys.modules[_MODNAME], None
    tried = []
    for p in _paths():
        if not os.path.exists(p):
            tried.append(p)
            continue
        loader = importlib.machinery.ExtensionFileLoader(_MODNAME, p)
        spec = importlib.util.spec_from_file_location(_MODNAME, p, loader=loader)
        try:
            m = importlib.util.module_from_spec(spec)
            loader.exec_module(m)
        except ImportError as e:
            tried.append("%s (%s)" % (p, e))
            continue
        sys.modules[_MODNAME] = m
        return m, None
    return None, "; ".join(tried) or "no build directory"


_MOD, _WHY = _load()


class Missing(str):
    """A dtype name standing for a NumPy dtype this process does not have:
    a kernel dtype name like any other, but NumPy's `np.dtype(...)`,
    `.astype(...)`, `dtype=` reject it, naming the cause in the message."""
    __slots__ = ()

    def __repr__(self):
        return ("'%s' (tpbsim has no NumPy %s dtype here: its extension module %s.so was not "
                "built or not found -- configure with the Python headers installed "
                "(python3-dev; scripts/setup) -- tried: %s)" % (str(self), str(self), _MODNAME,
                                                                _WHY))


class DtypeName(str):
    """The kernel dtype name of one of these types ('bfloat16'), as
    nki.language hands dtypes around inside a kernel (tile.dtype), equal
    both to the name and to the NumPy type (`t.dtype == nl.bfloat16`)."""
    __slots__ = ()

    def __eq__(self, other):
        if isinstance(other, str):
            return str.__eq__(self, other)
        n = name_of(other)
        return NotImplemented if n is None else str.__eq__(self, n)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = str.__hash__


if _MOD is not None:
    bfloat16, float8_e4m3fn, float8_e5m2, float8_e4m3 = (getattr(_MOD, n) for n in NAMES)
    TYPES = (bfloat16, float8_e4m3fn, float8_e5m2, float8_e4m3)
    DTYPES = tuple(np.dtype(t) for t in TYPES)
    CANON = {n: DtypeName(n) for n in NAMES}
    # the names as NumPy dtype strings too, so that a kernel's
    # np.dtype(t.dtype) of a bf16 tile (its dtype is the name) works
    for _n, _t in zip(NAMES, TYPES):
        np.sctypeDict.setdefault(_n, _t)
else:
    bfloat16, float8_e4m3fn, float8_e5m2, float8_e4m3 = (Missing(n) for n in NAMES)
    TYPES = DTYPES = ()
    CANON = {n: n for n in NAMES}
_BY_OBJ = {t: CANON[n] for t, n in zip(TYPES + DTYPES, NAMES + NAMES)}


def available():
    return _MOD is not None


def name_of(d):
    """The canonical kernel dtype name of one of these types or dtypes, else None."""
    try:
        return _BY_OBJ.get(d)
    except TypeError:   # unhashable
        return None


def numpy_dtype(name):
    """The NumPy dtype of kernel dtype name `name` when it is one of these
    and the module is loaded, else None."""
    return DTYPES[NAMES.index(name)] if DTYPES and name in NAMES else None


def to_exchange(a):
    """An array of one of these dtypes as tpbsim's libtpb and .npy files
    exchange bf16/fp8 tensors: float32 (exact: it holds every value)."""
    if DTYPES and a.dtype in DTYPES:
        return a.astype(np.float32)
    return a


def from_exchange(a, name):
    """A float32 array of kernel dtype `name` (bf16/fp8 values, exact) as an
    array of that NumPy dtype when the module is loaded, as NKI returns
    such outputs; else a unchanged.  An unsigned array of the dtype's size
    (libtpb's raw bits: Context.sim_fetch(bits=True)) is viewed as it, so
    every stored byte is kept (NaN payloads: a dtype reinterpretation can
    store any bytes in an fp8 tensor)."""
    nd = numpy_dtype(name)
    if nd is not None and a.dtype.kind == "u" and a.dtype.itemsize == nd.itemsize:
        return a.view(nd)
    return a.astype(nd) if nd is not None and a.dtype == np.float32 else a
