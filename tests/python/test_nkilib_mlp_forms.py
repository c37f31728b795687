"""Forms the NKI Library's MLP kernels (core/mlp, scripts/nkilib_refs_mlp.py)
need, each checked against NumPy here, independent of the library."""
import dataclasses

import numpy as np
import pytest

from tpbsim import NkiError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(11)


def _matmul_to_psum_rows(a, w, row, prows):
    """(inside a kernel) a.T @ w into PSUM rows row..row+T of a [prows, N]
    PSUM tile, by a matmul at tile_position row `row`; the rows' view."""
    (K, T), N = a.shape, w.shape[1]
    at = nl.ndarray((K, T), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=at, src=a)
    wt = nl.ndarray((K, N), dtype=w.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=wt, src=w)
    ps = nl.ndarray((prows, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=ps[nl.ds(row, T), 0:N], stationary=at, moving=wt,
                   tile_position=(0, row), tile_size=(K, 32))
    return ps[nl.ds(row, T), 0:N]


def test_dtype_str_is_its_name():
    """str() of NKI's dtypes is the name (the library compares
    str(tile.dtype) with str(nl.bfloat16) and with 'float8_e4m3'); the
    types stay NumPy scalar types."""
    for t, n in ((nl.bfloat16, "bfloat16"), (nl.float8_e4m3fn, "float8_e4m3fn"),
                 (nl.float8_e5m2, "float8_e5m2"), (nl.float8_e4m3, "float8_e4m3"),
                 (nl.float32, "float32")):
        assert str(t) == n
    assert repr(nl.bfloat16) == "<class 'tpbsim.bfloat16'>"
    a = np.array([1.0, 2.5], np.float32).astype(nl.bfloat16)
    assert a.dtype == nl.bfloat16 and type(a[0]) is nl.bfloat16 and float(a[1]) == 2.5

    @nki.jit
    def k(x):
        assert str(x.dtype) == str(nl.bfloat16)
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=x)
        return out
    np.testing.assert_array_equal(np.asarray(k(a.reshape(1, 2)), np.float32), [[1.0, 2.5]])


def test_nki_object_fields_default_to_none():
    """NKI's class initializer gives a field it is not passed None (NKI
    language guide, "Class Support"), with or without @dataclass."""
    @dataclasses.dataclass
    class D(nl.NKIObject):
        a: int
        b: int
        c: int = 7

    d = D(a=1)
    assert (d.a, d.b, d.c) == (1, None, 7)

    class P(nl.NKIObject):
        x: int
        y: int = 2

        def __post_init__(self):
            self.z = "post"

    p = P(5)
    assert (p.x, p.y, p.z) == (5, 2, "post")
    with pytest.raises(TypeError, match="takes 2 positional"):
        P(1, 2, 3)


def test_dma_mode_as_integer_numpy():
    """dge_mode=3 (the value of dge_mode.none, as the library passes it) is
    that mode; an integer that is no mode is refused, naming the field."""
    @nki.jit
    def k(x, mode):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x, dge_mode=mode)
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out
    x = RNG.standard_normal((8, 16)).astype(np.float32)
    np.testing.assert_array_equal(k(x, 3), x)
    with pytest.raises(NkiError, match="dge_mode=9: not a dge_mode value"):
        k(x, 9)


def test_ndarray_address_shares_storage_numpy():
    """nl.ndarray(address=(0, byte)) places the tile at that byte of every
    partition: a second tile at the same address reads what the first one
    wrote there (NKI's direct allocation), and a tile elsewhere does not."""
    @nki.jit
    def k(x):
        a = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf, address=(0, 4096))
        nisa.dma_copy(dst=a, src=x)
        b = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf, address=(0, 4096))
        c = nl.ndarray((64, 16), dtype=nl.float32, buffer=nl.sbuf, address=(0, 4096 + 64))
        o = nl.ndarray((64, 48), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=o[:, 0:32], data=b, op0=nl.multiply, operand0=2.0)
        nisa.tensor_copy(dst=o[:, 32:48], src=c)
        out = nl.ndarray((64, 48), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=o)
        return out
    x = RNG.standard_normal((64, 32)).astype(np.float32)
    got = k(x)
    np.testing.assert_array_equal(got[:, 0:32], x * np.float32(2.0))
    np.testing.assert_array_equal(got[:, 32:48], x[:, 16:32])   # byte 64 = element 16


def test_ndarray_address_refused_forms():
    def kern(buffer, address):
        @nki.jit
        def k(x):
            t = nl.ndarray((32, 8), dtype=nl.float32, buffer=buffer, address=address)
            nisa.dma_copy(dst=t, src=x)
            return t
        return k
    x = np.zeros((32, 8), np.float32)
    with pytest.raises(NkiError, match="start partition 32: tpbsim places tiles from partition 0"):
        kern(nl.sbuf, (32, 0))(x)
    with pytest.raises(NkiError, match="an address on a shared_hbm tensor"):
        kern(nl.shared_hbm, (0, 0))(x)
    with pytest.raises(NkiError, match=r"expected two integers \(partition_offset, free_offset\)"):
        kern(nl.sbuf, 4096)(x)


def test_tensor_tensor_psum_input_on_other_quadrant_numpy():
    """mlp_tkg's column tiling: a matmul writes PSUM rows 32..32+T
    (tile_position), and tensor_tensor adds them to SBUF rows 0..T: its
    inputs, in PSUM and in SBUF, start on different partitions."""
    T, K, N = 8, 128, 64

    @nki.jit
    def k(a, w, base):
        rows = _matmul_to_psum_rows(a, w, 32, 64)
        acc = nl.ndarray((T, N), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=acc, src=base)
        nisa.tensor_tensor(dst=acc, data1=rows, data2=acc, op=nl.add)
        out = nl.ndarray((T, N), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=acc)
        return out
    a = RNG.standard_normal((K, T)).astype(np.float32)
    w = RNG.standard_normal((K, N)).astype(np.float32)
    base = RNG.standard_normal((T, N)).astype(np.float32)
    np.testing.assert_allclose(k(a, w, base), a.T @ w + base, rtol=1e-5, atol=1e-4)


def test_dma_compute_two_bf16_sources_numpy():
    """dma_compute of two bf16 sources into a bf16 dst (the library's fused
    residual add): the sum in float32, rounded to bf16 once."""
    @nki.jit
    def k(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_compute(dst=out, srcs=[a, b], scales=[1.0, 1.0], reduce_op=nl.add)
        return out
    a, b = (RNG.standard_normal((16, 64)).astype(np.float32).astype(nl.bfloat16) for _ in range(2))
    want = (a.astype(np.float32) + b.astype(np.float32)).astype(nl.bfloat16)
    np.testing.assert_array_equal(np.asarray(k(a, b), np.float32), want.astype(np.float32))

    @nki.jit
    def scaled(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_compute(dst=out, srcs=[a, b], scales=[0.5, 1.0], reduce_op=nl.add)
        return out
    # the first source scaled: b (exact) is taken first, then 0.5 * a added
    # in float32, one rounding (it used to be refused)
    want = (np.float32(0.5) * a.astype(np.float32) + b.astype(np.float32)).astype(nl.bfloat16)
    np.testing.assert_array_equal(np.asarray(scaled(a, b), np.float32), want.astype(np.float32))


def test_long_tile_names_numpy():
    """Tile names past the kernel format's 55 characters (the library's
    "..._shard0__prog0__batch0__bxs0__bank0") are cut and kept distinct."""
    long = "square_accum_result_sbuf__shard0__prog0__batch0__bxs0__subtile"

    @nki.jit
    def k(x):
        a = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf, name=long + "0")
        b = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf, name=long + "1")
        nisa.dma_copy(dst=a, src=x)
        nisa.tensor_scalar(dst=b, data=a, op0=nl.add, operand0=1.0)
        nisa.tensor_tensor(dst=a, data1=a, data2=b, op=nl.multiply)
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=a)
        return out
    x = RNG.standard_normal((16, 8)).astype(np.float32)
    np.testing.assert_array_equal(k(x), x * (x + np.float32(1.0)))


def test_typing_mutable_tensor():
    """nki.typing.mutable_tensor (the library's router_topk annotates the
    outputs it writes with it) is an annotation: the tensor type."""
    import tpbsim.nki.typing as nt
    assert nt.mutable_tensor is nt.tensor is nl.tensor


def test_per_partition_scale_follows_the_output_numpy():
    """mlp_tkg's static dequantisation: PSUM rows 64..64+T (a matmul at
    tile_position row 64) scaled into SBUF rows 0..T by a [T, 1] scale tile
    on rows 0..T, by activation and by tensor_scalar: the per-partition
    scalar is read on the output's partitions."""
    T, K, N = 4, 128, 32

    @nki.jit
    def k(a, w, s):
        st = nl.ndarray((T, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=st, src=s)
        rows = _matmul_to_psum_rows(a, w, 64, 128)
        o = nl.ndarray((T, 2 * N), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=o[:, 0:N], data=rows, op=nl.copy, scale=st)
        nisa.tensor_scalar(dst=o[:, N:2 * N], data=rows, op0=nl.multiply, operand0=st)
        out = nl.ndarray((T, 2 * N), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=o)
        return out
    a = RNG.standard_normal((K, T)).astype(np.float32)
    w = RNG.standard_normal((K, N)).astype(np.float32)
    s = RNG.standard_normal((T, 1)).astype(np.float32)
    want = (a.T @ w) * s
    got = k(a, w, s)
    np.testing.assert_allclose(got[:, :N], want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(got[:, N:], want, rtol=1e-5, atol=1e-4)


def test_program_id_comparison_every_program_agrees_numpy():
    """Under kernel[2], a comparison of a program-id expression that every
    program decides alike (the library's `kernel_assert(start >= 0)` of a
    `pid * 64` slice start) is that outcome; one that differs between
    programs is still refused."""
    @nki.jit
    def k(x):
        pid = nl.program_id(0)
        start = pid * 64
        assert start >= 0 and start < 128 and not (start == 200)
        t = nl.ndarray((64, 16), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[start:start + 64, :])
        out = nl.ndarray((128, 16), dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out[start:start + 64, :], src=t)
        return out
    x = RNG.standard_normal((128, 16)).astype(np.float32)
    np.testing.assert_array_equal(k[2](x), x)

    # one that programs decide differently: traced per program (docs/python.md
    # "Control flow on nl.program_id()"), program 1 doubles its half
    @nki.jit
    def branch(x):
        pid = nl.program_id(0)
        t = nl.ndarray((64, 16), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[pid * 64:pid * 64 + 64, :])
        if pid * 64 >= 64:
            nisa.tensor_tensor(dst=t, data1=t, data2=t, op=nl.add)
        out = nl.ndarray((128, 16), dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out[pid * 64:pid * 64 + 64, :], src=t)
        return out
    np.testing.assert_array_equal(branch[2](x), np.concatenate([x[:64], 2 * x[64:]]))
