"""The `constants` submodules of NKI's nki.language and nki.isa (beta-1's
neuronxcc.nki.language.constants, imported by kernels and test harnesses
for `sizeinbytes`; neuronxcc.nki.isa.constants / NKI 0.x's
nki.isa.constants, where kernels import the enums from: `from
nki.isa.constants import oob_mode`).  Each is registered as the submodule
tpbsim.nki.<language|isa>.constants, so the ported import line works
although nki.language and nki.isa are modules here."""
import sys
import types

from ._alloc import _DT_BYTES

# what NKI's nki.isa.constants holds that tpbsim.nki.isa has: the enums
# and beta-1's engine names (the same objects: `constants.oob_mode.skip is
# nisa.oob_mode.skip`)
ISA = ("engine", "reduce_cmd", "dge_mode", "oob_mode", "matmul_perf_mode", "nc_version",
       "dma_engine", "unknown_engine", "tensor_engine", "scalar_engine", "gpsimd_engine",
       "vector_engine")


def sizeinbytes(dtype):
    """The bytes of one element of dtype (an nl dtype, a NumPy dtype or its
    name)."""
    from .language import _dtype
    name = _dtype(dtype)
    if name not in _DT_BYTES:
        raise TypeError("sizeinbytes: unknown dtype %r" % (dtype,))
    return _DT_BYTES[name]


def install(name, namespace, attrs):
    """Make <name>.constants, holding attrs (name -> object), importable
    (sys.modules) and an attribute of the module whose globals are
    namespace."""
    mod = types.ModuleType(name + ".constants", __doc__)
    mod.__dict__.update(attrs)
    sys.modules[mod.__name__] = mod
    namespace["constants"] = mod
