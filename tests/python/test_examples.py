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


@pytest.mark.parametrize("stage,shape", [
    ("nki_matmul_basic_", (128, 64, 512)),
    ("nki_matmul_tiled_", (256, 128, 512) if not FULL else (1024, 1024, 1024)),
    ("nki_matmul_hoist_load_", (256, 256, 512) if not FULL else (1024, 1024, 1024)),
    ("nki_matmul_block_free_dimension_", (256, 256, 1024) if not FULL else (1024, 1024, 2048)),
])
def test_matmul_stages(stage, shape):
    import matmul
    K, M, N = shape
    lhsT, rhs = bf16(rand(K, M)), bf16(rand(K, N))
    out = getattr(matmul, stage)(nki.typed(lhsT, nl.bfloat16), nki.typed(rhs, nl.bfloat16))
    ref = lhsT.astype(np.float64).T @ rhs.astype(np.float64)
    np.testing.assert_allclose(out, bf16(ref.astype(np.float32)), rtol=2e-2, atol=0.15)


@pytest.mark.parametrize("version,shape", [
    ("mamba_v1", (1, 128, 64, 4) if not FULL else (1, 256, 2048, 16)),
    ("mamba_v2", (2, 128, 64, 3) if not FULL else (1, 256, 2048, 16)),
    ("mamba_v3", (1, 128, 1024, 2) if not FULL else (1, 256, 2048, 16)),
])
def test_mamba(version, shape):
    import mamba
    b, c, s, n = shape
    delta = np.abs(rand(b, c, s)) * 0.1
    u, A = rand(b, c, s), -np.abs(rand(c, n))
    B, C = rand(b, n, s), rand(b, n, s)
    out = getattr(mamba, version)(delta, u, A, B, C)
    dA = np.exp(delta[:, :, None, :] * A[None, :, :, None])          # b c n s
    dBu = delta[:, :, None, :] * u[:, :, None, :] * B[:, None, :, :]
    h = np.zeros((b, c, n), np.float64)
    ref = np.zeros((b, c, s))
    for t in range(s):
        h = dA[..., t] * h + dBu[..., t]
        ref[..., t] = (h * C[:, None, :, t]).sum(-1)
    np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-3)


def test_rmsnorm():
    import norms
    a, g = rand(300, 256), rand(1, 256)
    out = norms.nki_rmsnorm_kernel(a, g)
    ref = a / np.sqrt((a.astype(np.float64) ** 2).mean(1, keepdims=True) + 1e-6) * g
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_layernorm():
    import norms
    a = rand(200, 384)
    out = norms.nki_layernorm_kernel(a)
    a64 = a.astype(np.float64)
    ref = (a64 - a64.mean(1, keepdims=True)) / np.sqrt(a64.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_softmax():
    import norms
    x = rand(130, 512)
    out = norms.nki_softmax_kernel(x)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_fused_attention():
    import attention
    d, seq = 64, 256 if not FULL else 512
    q, k, v = bf16(rand(seq, d)), bf16(rand(seq, d)), bf16(rand(seq, d))
    out = attention.fused_self_attn_causal(nki.typed(q.T.copy(), nl.bfloat16),
                                           nki.typed(k.T.copy(), nl.bfloat16),
                                           nki.typed(v, nl.bfloat16))
    s = (q.astype(np.float64) @ k.T.astype(np.float64)) / np.sqrt(d)
    s[np.triu_indices(seq, 1)] = -np.inf
    p = np.exp(s - s.max(1, keepdims=True))
    ref = (p / p.sum(1, keepdims=True)) @ v
    np.testing.assert_allclose(out, ref, rtol=2e-2, atol=2e-2)
