"""Every examples/nki/*.py kernel against a NumPy reference (small shapes;
TPBSIM_FULL=1 runs the tutorials' full sizes where they differ)."""
import os

import numpy as np
import pytest

from tpbsim import nki
import tpbsim.nki.language as nl

FULL = os.environ.get("TPBSIM_FULL") == "1"
rng = np.random.default_rng(7)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def bf16(a):
    """Round float32 to bfloat16 (nearest even), kept in float32."""
    u = np.ascontiguousarray(a, np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


def test_tensor_add_loops():
    import tensor_add
    a, b = rand(256, 1024), rand(256, 1024)
    np.testing.assert_array_equal(tensor_add.nki_tensor_add(a, b), a + b)


def test_tensor_add_spmd_grid():
    import tensor_add
    a, b = rand(256, 1024), rand(256, 1024)
    out = tensor_add.nki_tensor_add_spmd[2, 2](a, b)
    np.testing.assert_array_equal(out, a + b)


def test_tensor_add_spmd_nc():
    import tensor_add
    a, b = rand(128, 1024), rand(128, 1024)
    out = tensor_add.nki_tensor_add_spmd[1, 2](a, b)
    np.testing.assert_array_equal(out, a + b)


def test_transpose2d():
    import transpose2d
    f1, f2 = (3, 4) if not FULL else (8, 16)
    x = rand(16, f1 * f2)
    out = transpose2d.tensor_transpose2D_kernel_(x, (f1, f2))
    ref = x.reshape(16, f1, f2).transpose(0, 2, 1).reshape(16, f1 * f2)
    np.testing.assert_array_equal(out, ref)


def test_average_pool():
    import average_pool
    x = np.arange(2 * 6 * 6, dtype=np.float16).reshape(2, 6, 6)
    out = average_pool.tensor_avgpool_kernel(x, 2)
    ref = x.astype(np.float32).reshape(2, 3, 2, 3, 2).mean(axis=(2, 4))
    np.testing.assert_allclose(out.astype(np.float32), ref, rtol=1e-3)
