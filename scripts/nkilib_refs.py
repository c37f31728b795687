"""NumPy references for scripts/nki-library-check: the NKI Library's core
kernels (cumsum, ...), on parameter sets taken from the library's
test/integration files.  Each reference is written here from what the
library's torch reference computes; nothing of the library is stored."""
import numpy as np

from tpbsim.nki import language as nl


def _close(got, want, rtol, atol):
    """True, or a line saying how far got is from want."""
    got = np.asarray(got, np.float32)
    want = np.asarray(want, np.float32)
    if got.shape != want.shape:
        return f"shape {got.shape}, NumPy {want.shape}"
    if np.allclose(got, want, rtol=rtol, atol=atol):
        return True
    return f"max abs error {np.abs(got - want).max():.3g}"


def _cumsum(lib, shape, dtype):
    """cumsum (core/cumsum/cumsum.py): running sum along the last axis,
    accumulated in fp32 (the kernel's tensor_tensor_scan)."""
    rng = np.random.default_rng(42)
    x = rng.standard_normal(shape).astype(np.float32).astype(dtype)
    got = lib.mod("core.cumsum.cumsum").cumsum(x)
    want = np.cumsum(x.astype(np.float32), axis=-1)
    # bf16 output: one rounding of the fp32 running sum
    return _close(got, want.astype(dtype).astype(np.float32), 1e-2, 1e-2) if dtype != np.float32 else \
        _close(got, want, 1e-5, 1e-4)


def checks(lib):
    return [("cumsum 1x256 fp32", lambda: _cumsum(lib, (1, 256), np.float32)),
            ("cumsum 128x2048 fp32", lambda: _cumsum(lib, (128, 2048), np.float32)),
            ("cumsum 64x4x1024 bf16", lambda: _cumsum(lib, (64, 4, 1024), nl.bfloat16))]
