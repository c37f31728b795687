"""Dtype reinterpretation (NKI tensor.view(dtype) / reinterpret_cast and
.ap(pattern, dtype=)): the same bytes read as another dtype, through real
kernels on HBM and SBUF operands, checked against NumPy's own .view() of
the same data, on DMA and compute operands; the refusals (docs/python.md
"NKI 0.x tensor views")."""
import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(11)
# bytes that are finite fp8 e4m3 (NKI float8_e4m3: exponent 1111 is inf / NaN)
_FP8_OK = np.array([b for b in range(256) if (b & 0x78) != 0x78], np.uint8)


def _x32(rows, cols):
    """float32 [rows, cols] whose bytes are all finite fp8 values."""
    return RNG.choice(_FP8_OK, (rows, cols * 4)).view(np.float32)


def _fp8(b):
    return np.asarray(b, np.uint8).view(nl.float8_e4m3)


def test_sbuf_view_narrow_numpy():
    """An fp32 tile viewed as uint8 (4x the last dim) and as fp8, DMA'd out."""
    x = _x32(128, 16)

    @nki.jit
    def k(x):
        t = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        v = t.view(nl.uint8)
        assert v.shape == (128, 64) and v.dtype == "uint8"
        o = nl.ndarray((128, 64), dtype=nl.uint8, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o, src=v)
        q = nl.ndarray((128, 12), dtype=nl.float8_e4m3, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=q, src=t[:, 2:5].view(nl.float8_e4m3))
        return o, q
    o, q = k(x)
    xb = x.view(np.uint8)
    np.testing.assert_array_equal(o, xb)
    np.testing.assert_array_equal(q.view(np.uint8), xb[:, 8:20])


def test_ap_dtype_packs_scales_numpy():
    """rmsnorm_quant's form: a [P, 1] fp32 column .ap(dtype=fp8) as 4 fp8
    per partition, stored after each row's fp8 values; every byte kept,
    NaN patterns included (the output comes back as its bits)."""
    vals = RNG.choice(_FP8_OK, (64, 8))
    s = np.frombuffer(np.array([0x3C7B18C2, 0x7FC00001, 0xFF7FFFFF, 0x00000001] * 16,
                               "<u4").tobytes(), np.float32).reshape(64, 1)

    @nki.jit
    def k(v, s):
        tv = nl.ndarray((64, 8), dtype=nl.float8_e4m3, buffer=nl.sbuf)
        ts = nl.ndarray((64, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=tv, src=v)
        nisa.dma_copy(dst=ts, src=s)
        out = nl.ndarray((64, 12), dtype=nl.float8_e4m3, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out[:, 0:8], src=tv)
        nisa.dma_copy(dst=out[:, 8:12], src=ts.ap(pattern=[[4, 64], [1, 4]], dtype=nl.float8_e4m3))
        return out
    got = k(_fp8(vals), s)
    want = np.concatenate([vals, s.view(np.uint8)], axis=1)
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8), want)
    np.testing.assert_array_equal(np.ascontiguousarray(got[:, 8:]).view(np.float32).view(np.uint32),
                                  s.view(np.uint32))


def test_hbm_view_widen_and_same_size_numpy():
    """An HBM uint8 input viewed as int32 (last dim / 4) loaded into an
    int32 tile; a bf16 input viewed as int16 (same size) copied HBM to HBM;
    an fp32 tile written through its uint8 view."""
    w = RNG.integers(0, 256, (64, 32), dtype=np.uint8)
    b = RNG.standard_normal((32, 16)).astype(np.float32).astype(nl.bfloat16)

    @nki.jit
    def k(w, b):
        ti = nl.ndarray((64, 8), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=ti, src=w.view(nl.int32))
        oi = nl.ndarray((64, 8), dtype=nl.int32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=oi, src=ti)
        ob = nl.ndarray((32, 16), dtype=nl.int16, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=ob, src=b.view(nl.int16))
        tf = nl.ndarray((64, 8), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=tf.view(nl.uint8), src=w)
        of = nl.ndarray((64, 8), dtype=nl.int32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=of, src=tf)
        return oi, ob, of
    oi, ob, of = k(w, b)
    np.testing.assert_array_equal(oi, w.view(np.int32))
    np.testing.assert_array_equal(ob, b.view(np.int16))
    np.testing.assert_array_equal(of, w.view(np.int32))


def test_view_chains_with_slices_numpy():
    """A view of a slice, a slice of a view, a view back: NumPy's offsets."""
    x = RNG.integers(-2**31, 2**31, (16, 8), dtype=np.int64).astype(np.int32)

    @nki.jit
    def k(x):
        a = nl.ndarray((16, 12), dtype=nl.int16, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=a, src=x[:, 2:8].view(nl.int16)[:, 0:12])
        b = nl.ndarray((8, 8), dtype=nl.int32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=b, src=x.view(nl.uint8)[0:16:2, 0:32].view(nl.int32))
        return a, b
    a, b = k(x)
    np.testing.assert_array_equal(a, x[:, 2:8].view(np.int16)[:, 0:12])
    np.testing.assert_array_equal(b, x.view(np.uint8)[0:16:2, 0:32].view(np.int32))


def test_same_dtype_is_the_view_itself():
    @nki.jit
    def k(x):
        assert x.view(nl.float32) is x
        assert x.ap([[4, 4], [1, 4]], dtype=nl.float32).dtype == "float32"
        o = nl.ndarray((4, 4), dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o, src=x)
        return o
    x = RNG.standard_normal((4, 4)).astype(np.float32)
    np.testing.assert_array_equal(k(x), x)


@pytest.mark.parametrize("fn, match", [
    (lambda t: t[:, 0:6:2].view(nl.int32), r"last dim must be contiguous"),
    (lambda t: t.view(nl.uint8)[:, 0:6].view(nl.float32), r"size 6 is not a multiple of 4"),
    (lambda t: t.view(nl.uint8)[:, 1:9].view(nl.float32), r"starts at byte 1"),
    (lambda t: t.ap([[8, 128], [1, 8]], vector_offset=t[:, 0:1], dtype=nl.bfloat16),
     r"scalar_offset / vector_offset"),
])
def test_refused(fn, match):
    @nki.jit
    def k(a):
        t = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        fn(t)
        return nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    with pytest.raises(tpbsim.NkiError, match=match):
        k(np.zeros((128, 8), np.float32))


def test_compute_operands_numpy():
    """Compute engines read and write through dtype views: an fp32 tile's
    bits as int32 (a copy and a bitwise and that clears the sign, written
    through an int32 view of an fp32 tile), and fp32 tiles holding bf16
    pairs as the [128, 128] bf16 operands of a matmul (values k / 8, so
    the fp32 PSUM sums are exact)."""
    x = RNG.standard_normal((128, 8)).astype(np.float32)
    pairs = [(RNG.integers(-16, 17, (128, 128)) / 8.0).astype(nl.bfloat16) for _ in range(2)]
    st, mv = (p.view(np.uint16).view(np.float32) for p in pairs)

    @nki.jit
    def k(a, st, mv):
        t = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        u = nl.ndarray((128, 8), dtype=nl.int32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=u, src=t.view(nl.int32))
        w = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=w.view(nl.int32), data=t.view(nl.int32), op0=nl.bitwise_and,
                           operand0=0x7FFFFFFF)
        s = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        m = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=s, src=st)
        nisa.dma_copy(dst=m, src=mv)
        ps = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=ps, stationary=s.view(nl.bfloat16), moving=m.view(nl.bfloat16))
        r = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=r, src=ps)
        ou = nl.ndarray((128, 8), dtype=nl.int32, buffer=nl.shared_hbm)
        ow = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        om = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=ou, src=u)
        nisa.dma_copy(dst=ow, src=w)
        nisa.dma_copy(dst=om, src=r)
        return ou, ow, om
    ou, ow, om = k(x, st, mv)
    np.testing.assert_array_equal(ou, x.view(np.int32))
    np.testing.assert_array_equal(ow, np.abs(x))
    a, b = (p.astype(np.float64) for p in pairs)
    np.testing.assert_array_equal(om, a.T @ b)


def test_view_past_the_tensor_refused():
    """A pattern past the tensor's bytes in the view's elements: the
    compile error names the field and the viewed tensor."""
    @nki.jit
    def k(a):
        t = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        o = nl.ndarray((128, 40), dtype=nl.uint8, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o, src=t.ap([[32, 128], [1, 40]], dtype=nl.uint8))
        return o
    with pytest.raises(Exception, match=r"field 'src'.*viewed as 'uint8'"):
        k(np.zeros((128, 8), np.float32))
