"""pytest set-up: import tpbsim from this checkout (python/) and libtpb
from the build directory CTest passes in TPBSIM_LIB."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples", "nki"))


def sbuf_copy(x):
    """Inside a kernel: a new SBUF tile of x's shape and dtype holding x
    (one dma_copy); the kernels that only stage their inputs share it."""
    import tpbsim.nki.isa as nisa
    import tpbsim.nki.language as nl
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    return t
