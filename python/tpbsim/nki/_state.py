"""The tracer's shared state: the errors a trace raises and the stack of
traces in progress on this thread (one per kernel being traced; nested
calls such as a kernel calling a helper see the innermost)."""
import threading

import numpy as np

from .._lib import TpbError


class NkiError(TpbError):
    """A kernel error found while tracing (names the kernel file:line)."""


class Retrace(BaseException):
    """Private: a traced-once loop body (docs/python.md "Loops") needs
    something its symbolic loop variable cannot give (a concrete value for
    Python control flow, a shape, a list index, ...).  Kernel.trace then
    traces the kernel again with every loop run per iteration.  A
    BaseException, so a kernel's `except Exception` does not swallow it;
    raising it also flags the trace, for a kernel that catches it anyway."""


class Beta1Launch(BaseException):
    """Private: a kernel launched kernel[n] as NKI 0.x's LNC launch used a
    form only NKI beta-1 has (beta1_form); Kernel.trace_for traces it again
    with n read as beta-1's launch grid (Kernel.launch_grid)."""


def beta1_form():
    """The kernel being traced uses a form only NKI beta-1 has (nl.arange /
    nl.mgrid index expressions, mask=, an nki.isa op returning its result,
    t[i] = ..., +=): its kernel[n] is beta-1's launch grid."""
    s = _LOCAL.stack
    if s:
        s[-1].beta1_forms = True


def need_retrace():
    s = _LOCAL.stack
    if s:
        s[-1].retrace = True
    raise Retrace()


class _Local(threading.local):
    def __init__(self):
        self.stack = []   # the traces in progress on this thread


_LOCAL = _Local()


def stack():
    return _LOCAL.stack


def current():
    s = _LOCAL.stack
    if not s:
        raise NkiError("nki.isa / nl.ndarray called outside a kernel being traced "
                       "(call the @nki.jit kernel instead)")
    return s[-1]


def not_tensor(x):
    """How an error names x, a value that is no tensor: a NumPy array says
    why it is not one (it was held by an argument that is no input)."""
    if isinstance(x, np.ndarray):
        return ("a NumPy array %s %s: only arrays passed as kernel arguments, or inside list "
                "/ tuple arguments, become kernel inputs (pass it as an argument)" %
                (list(x.shape), x.dtype))
    return repr(x)
