"""NumPy references and inputs for scripts/nki-samples-misc: one check per
kernel of nki-samples (contributed/, the tutorials, and the reference
kernels removed in c4b806e).  Each reference is the sample's own NumPy
check, or its torch / unit-test reference translated to NumPy."""
import numpy as np

from tpbsim import nki
import tpbsim.nki.language as nl


def bf16(x):
    """x rounded to bfloat16 (nearest even), as float32."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16
    return b.astype(np.uint32).view(np.float32)


def fp8_e4m3(x):
    """x rounded to float8 e4m3 (3 mantissa bits, exponent >= -6,
    subnormals in steps of 2**-9; |x| <= 240 here), as float32."""
    x = np.asarray(x, np.float64)
    e = np.maximum(np.floor(np.log2(np.maximum(np.abs(x), 1e-30))), -6)
    step = 2.0 ** (e - 3)
    return (np.round(x / step) * step).astype(np.float32)


def up2(x, axis):
    """torch's linear 2x upsampling along axis, align_corners=False: output
    o reads source (o + 0.5) / 2 - 0.5, clamped at 0, between its two
    neighbours (the last one repeated past the end)."""
    n = x.shape[axis]
    src = np.maximum((np.arange(2 * n) + 0.5) / 2 - 0.5, 0)
    i0 = np.floor(src).astype(int)
    i1 = np.minimum(i0 + 1, n - 1)
    w = (src - i0).reshape([-1 if a == axis % x.ndim else 1 for a in range(x.ndim)])
    return np.take(x, i0, axis) * (1 - w) + np.take(x, i1, axis) * w


def maxpool_ref(x, k):
    return np.lib.stride_tricks.sliding_window_view(x, (k, k)).max(axis=(2, 3))


def scan_ref(d, u, A, B, C):
    """mamba_torch.py's mamba_layer in NumPy."""
    dA = np.exp(d[:, :, None, :] * A[None, :, :, None])
    dBu = d[:, :, None, :] * u[:, :, None, :] * B[:, None, :, :]
    h = np.zeros(dA.shape[:3])
    ref = np.zeros(d.shape)
    for t in range(d.shape[2]):
        h = dA[..., t] * h + dBu[..., t]
        ref[..., t] = (h * C[:, None, :, t]).sum(-1)
    return ref


def select_and_scatter_ref(operand, source):
    """test_select_and_scatter.py's cpu_golden_result (3x3 windows, stride
    2, padding 1, first maximum wins)."""
    N, C, H, W = operand.shape
    _, _, sh, sw = source.shape
    pad = np.pad(operand, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros(operand.shape, operand.dtype)
    for n in range(N):
        for c in range(C):
            for h in range(sh):
                for w in range(sw):
                    i = np.argmax(pad[n, c, 2 * h:2 * h + 3, 2 * w:2 * w + 3])
                    out[n, c, 2 * h + i // 3 - 1, 2 * w + i % 3 - 1] += source[n, c, h, w]
    return out


def resize_nearest_ref(data, out_shape):
    """test_resize_nearest.py's cpu_golden_result."""
    b, ih, iw, c = data.shape
    _, oh, ow, _ = out_shape
    hm = np.floor(np.fromfunction(lambda i, _: i * (1.0 * ih / oh), (oh, ow), dtype=np.float32))
    wm = np.floor(np.fromfunction(lambda _, j: j * (1.0 * iw / ow), (oh, ow), dtype=np.float32))
    idx = (hm * iw + wm).astype(np.int32).flatten()
    return data.reshape(b, ih * iw, c)[:, idx, :].reshape(out_shape)


def adaptive_avg_ref(x, size):
    """test_adaptive_avg_pool2d.py's cpu_golden_result_numpy."""
    N, C, H, W = x.shape
    OH, OW = (size, size) if isinstance(size, int) else size
    out = np.zeros((N, C, OH, OW), np.float32)
    for oh in range(OH):
        for ow in range(OW):
            out[:, :, oh, ow] = x[:, :, (oh * H) // OH:((oh + 1) * H + OH - 1) // OH,
                                  (ow * W) // OW:((ow + 1) * W + OW - 1) // OW].mean(axis=(2, 3))
    return out


def double_row_inputs(r, M, K, N):
    """test_double_row_matmul.py's inputs: lhs, rhs column-wise quantized to
    fp8 (max 240) and reshaped (two K tiles of 128 rows side by side per 512
    columns), the scale broadcast to [128, N]; and the golden lhs @ rhs."""
    lhs, rhs = r.random((M, K)), r.random((K, N))
    scale = np.abs(rhs).max(axis=0, keepdims=True) / 240
    q = rhs / scale
    res = np.zeros((K // 2, 2 * N))
    for k in range(0, K // 128, 2):
        for n in range(N // 512):
            res[k // 2 * 128:(k // 2 + 1) * 128, n * 1024:n * 1024 + 512] = q[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512]
            res[k // 2 * 128:(k // 2 + 1) * 128, n * 1024 + 512:(n + 1) * 1024] = \
                q[(k + 1) * 128:(k + 2) * 128, n * 512:(n + 1) * 512]
    args = (nki.typed(bf16(lhs), nl.bfloat16), nki.typed(fp8_e4m3(res), nl.float8_e4m3),
            nki.typed(bf16(np.broadcast_to(scale, (128, N))), nl.bfloat16))
    return args, lhs @ rhs


def checks(m):
    """(name, function returning True / a reason / raising) per kernel; m maps
    module names to the ported modules."""
    r = np.random.default_rng(0)
    close = np.allclose

    x = r.random((2, 50, 12, 6), np.float32)
    yield "interpolate_bilinear_2x_fwd", lambda: close(
        m["interpolate_bilinear_fwd"].interpolate_bilinear_2x_fwd(x, chunk_size=5),
        up2(up2(x, 2), 3), atol=1e-4, rtol=1e-2)
    y = r.random((1, 3, 6, 4, 5), np.float32)
    yield "interpolate_trilinear_2x_fwd", lambda: close(
        m["interpolate_trilinear_fwd"].interpolate_trilinear_2x_fwd(y, chunk_size=4),
        up2(up2(up2(y, 2), 3), 4), atol=1e-4, rtol=1e-2)
    z = r.random((150, 20), np.float32)
    yield "max_pooling_2d_stride_1", lambda: close(
        m["maxpooling"].max_pooling_2d_stride_1(z, 3), maxpool_ref(z, 3), rtol=1.3e-6, atol=1e-5)
    A, B = r.random((1024, 512)).astype(np.float16), r.random((1024, 2048)).astype(np.float16)
    yield "contributed matmul", lambda: close(
        nki.baremetal()(m["contributed_matmul"].matmul)(A, B),
        A.T.astype(np.float32) @ B.astype(np.float32), atol=1e-4, rtol=1e-2)

    # tutorials (nki-samples' copies)
    p = np.arange(2 * 6 * 6, dtype=np.float16).reshape(2, 6, 6)
    ap = m["average_pool2d_nki_kernels"]
    yield "tensor_avgpool_kernel", lambda: np.array_equal(ap.tensor_avgpool_kernel(p, 2),
                                                          ap.np_average_pool_2D(p, 2))
    t = np.arange(5 * 12, dtype=np.int8).reshape(5, 12)
    yield "tensor_transpose2D_kernel_", lambda: np.array_equal(
        m["transpose2d_nki_kernels"].tensor_transpose2D_kernel_(t, (3, 4)),
        t.reshape(5, 3, 4).transpose(0, 2, 1).reshape(5, 12))
    a, b = r.random((256, 1024)).astype(np.float16), r.random((256, 1024)).astype(np.float16)
    for mod in ("tensor_addition_nki_kernels", "spmd_tensor_addition_nki_kernels"):
        yield f"nki_tensor_add ({mod.split('_nki')[0]})", (lambda mod=mod: close(
            m[mod].nki_tensor_add(a, b), a + b, atol=1e-4, rtol=1e-2))
    a2, b2 = r.random((512, 2048)).astype(np.float16), r.random((512, 2048)).astype(np.float16)
    yield "nki_tensor_add_nc2", lambda: close(
        m["spmd_multiple_nc_tensor_addition_nki_kernels"].nki_tensor_add_nc2(a2, b2), a2 + b2,
        atol=1e-4, rtol=1e-2)
    for v in ("mamba_v1", "mamba_v2", "mamba_v3"):
        d = r.random((1, 128, 512), np.float32) * 0.1
        u, Am = r.random((1, 128, 512), np.float32), -r.random((128, 2), np.float32)
        Bm, Cm = r.random((1, 2, 512), np.float32), r.random((1, 2, 512), np.float32)
        yield f"{v} (nki-samples)", (lambda v=v, args=(d, u, Am, Bm, Cm): close(
            getattr(m["mamba_nki_kernels"], v)(*args), scan_ref(*args), rtol=1e-3, atol=1e-3))
    for name, (K, M, N), kw in [
            ("nki_matmul_basic_", (128, 64, 512), {}),
            ("nki_matmul_tiled_", (256, 128, 512), {}),
            ("nki_matmul_hoist_load_", (256, 256, 512), {}),
            ("nki_matmul_block_free_dimension_", (256, 256, 1024), {}),
            ("nki_matmul_fully_optimized_", (256, 256, 1024),
             dict(TILES_IN_BLOCK_M=2, TILES_IN_BLOCK_N=2, TILES_IN_BLOCK_K=2))]:
        lt, rh = r.random((K, M), np.float32), r.random((K, N), np.float32)
        yield name + " (nki-samples)", (lambda n=name, l=lt, h=rh, k=kw: close(
            getattr(m["matrix_multiplication_nki_kernels"], n)(l, h, **k), l.T @ h, rtol=1e-4))
    yield from mx_checks(m, r)

    # reference kernels (c4b806e^) with their unit tests' references
    vis = m["vision"]
    op, src = r.random((2, 64, 8, 8), np.float32), r.random((2, 64, 4, 4), np.float32)
    yield "select_and_scatter_kernel", lambda: close(
        vis.select_and_scatter_kernel(op, src), select_and_scatter_ref(op, src), rtol=1e-2, atol=1e-2)
    img = r.random((2, 10, 6, 16), np.float32)
    yield "resize_nearest_fixed_dma_kernel", lambda: close(
        vis.resize_nearest_fixed_dma_kernel(img, (2, 19, 11, 16)),
        resize_nearest_ref(img, (2, 19, 11, 16)), atol=1e-2)
    for shape, size in [((2, 96, 13, 13), (6, 4)), ((1, 64, 14, 14), 7), ((1, 1, 1, 1), 1)]:
        xa = r.standard_normal(shape).astype(np.float32)
        yield f"adaptive_avg_pool2d_kernel {shape} -> {size}", (lambda xa=xa, size=size: close(
            vis.adaptive_avg_pool2d_kernel(xa, size), adaptive_avg_ref(xa, size), atol=1e-5, rtol=1e-5))
    args, gold = double_row_inputs(r, 128, 512, 512)
    yield "quantized_double_row_matmul", lambda: close(
        m["double_row_matmul"].quantized_double_row_matmul(*args, 1, 1, 4), gold, rtol=2e-2)
    yield from attention_checks(m, r)
    ta, tb = r.random((2, 8, 128, 512), np.float32), r.random((2, 8, 128, 512), np.float32)
    nel = 2 * 8 * 128 * 512 - 70000

    def add_nx8():
        c = m["tutorial"].add_kernel_nx8x128x512[2](ta, tb, nel)
        return close(c.reshape(-1)[:nel], (ta + tb).reshape(-1)[:nel])
    yield "add_kernel_nx8x128x512", add_nx8
    # softmax_torch.py's reference: exp(x) / sum(exp(x)) along the rows (its
    # naive softmax; the kernel subtracts the row maximum first), 300 rows:
    # a masked last tile of 44
    sa = r.standard_normal((300, 100)).astype(np.float32)
    e = np.exp(sa.astype(np.float64))
    yield "nki_softmax_kernel (tutorial)", lambda: close(
        m["softmax_nki_kernels"].nki_softmax_kernel(sa), e / e.sum(-1, keepdims=True),
        rtol=1e-5, atol=1e-5)


def e5m2(b):
    """float8 e5m2 bytes as float32 (an e5m2 byte is a float16's top byte)."""
    return (np.asarray(b, np.uint16) << 8).view(np.float16).astype(np.float32)


def mx_golden(st_x4, mv_x4, st_scale, mv_scale):
    """mx_cpu_utils.py's nc_matmul_mx_golden for fp8 e5m2: x4 elements are
    four bytes of a uint32, a uint8 scale s (2**(s - 127)) covers 8
    partitions x one x4 element; the product also sums the four."""
    def unpack(x4, sc):
        k, n = x4.shape
        v = e5m2(np.ascontiguousarray(x4).view(np.uint8)).reshape(k, n, 4)
        return v * np.repeat(2.0 ** (sc.astype(np.float64) - 127), 8, axis=0)[:, :, None]
    return np.einsum("kiq,kjq->ij", unpack(st_x4, st_scale), unpack(mv_x4, mv_scale))


def mx_checks(m, r):
    """mx_kernels.py (trn3 Matmul-MX); references from mx_cpu_utils.py's
    definitions."""
    def need():
        mod = m["mx_kernels"]
        if isinstance(mod, Exception):
            raise mod
        return mod

    def fp8_bytes(shape):   # finite e5m2 values (exponent field below 31)
        b = r.integers(0, 256, shape, dtype=np.uint8)
        return np.where((b & 0x7C) == 0x7C, b & 0x83, b).astype(np.uint8)
    st = fp8_bytes((128, 128 * 4)).view(np.uint32)
    mv = fp8_bytes((128, 512 * 4)).view(np.uint32)
    sst = r.integers(120, 130, (16, 128), dtype=np.uint8)
    smv = r.integers(120, 130, (16, 512), dtype=np.uint8)
    yield "kernel_offline_quantized_mx_matmul", lambda: close_mx(
        need().kernel_offline_quantized_mx_matmul(st, sst, mv, smv, nl.float8_e5m2_x4),
        mx_golden(st, mv, sst, smv))
    # values of exponent 0 with 2 mantissa bits: MX fp8 e5m2 holds them
    # exactly, whatever the group, so the golden is the plain product
    K, M, N = 512, 128, 512
    st_f, mv_f = (r.choice([-1.75, -1.5, -1.25, -1.0, 1.0, 1.25, 1.5, 1.75], s).astype(np.float32)
                  for s in ((K, M), (K, N)))
    for use_tc in (True, False):
        yield f"kernel_copy_strided_quantize_matmul_mx (tensor_copy={use_tc})", (
            lambda use_tc=use_tc: close_mx(need().kernel_copy_strided_quantize_matmul_mx(
                nki.typed(st_f, nl.bfloat16), nki.typed(mv_f, nl.bfloat16),
                nl.float8_e5m2_x4, use_tc), st_f.T @ mv_f))


def close_mx(res, gold):
    return np.allclose(res, gold, rtol=5e-2, atol=5e-2)


def attention_ref(q, k, v, scale):
    """pipelined_attention.py's cpu_attention_forward without a causal mask:
    softmax(scale * q.T @ k) @ v for q, k [d, S], v [S, d]."""
    s = (q.T * scale) @ k
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def attention_checks(m, r):
    """contributed/pipelined_attention.py's flash_fwd at the seqlen its
    comment asks for, 16k (two 8192-long sections: with one, the kernel
    reads its scaling_factor before writing it), head dim 128, bf16
    inputs; about a minute."""
    S, d = 16384, 128
    q, k, v = (bf16(r.random(s, np.float32)) for s in ((1, d, S), (1, d, S), (1, S, d)))

    def run():
        o = m["pipelined_attention"].flash_fwd(
            *(nki.typed(x, nl.bfloat16) for x in (q, k, v)), mixed_precision=True,
            softmax_scale=0.125, use_causal_mask=False)
        return np.allclose(o[0], attention_ref(q[0], k[0], v[0], 0.125), atol=1e-2)
    yield "flash_fwd (pipelined_attention)", run
