"""`nki.language.constants` (beta-1's neuronxcc.nki.language.constants,
imported by kernels and test harnesses for `sizeinbytes`): registered as
the submodule tpbsim.nki.language.constants, so the ported import line
works although nki.language is a module here."""
import sys
import types

from ._alloc import _DT_BYTES


def sizeinbytes(dtype):
    """The bytes of one element of dtype (an nl dtype, a NumPy dtype or its
    name)."""
    from .language import _dtype
    name = _dtype(dtype)
    if name not in _DT_BYTES:
        raise TypeError("sizeinbytes: unknown dtype %r" % (dtype,))
    return _DT_BYTES[name]


def install(name, namespace):
    """Make <name>.constants importable (sys.modules) and an attribute of
    the module whose globals are namespace."""
    mod = types.ModuleType(name + ".constants", __doc__)
    mod.sizeinbytes = sizeinbytes
    sys.modules[mod.__name__] = mod
    namespace["constants"] = mod
