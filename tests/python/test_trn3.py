"""The trn3 target (NeuronCore-v4, hardware-facts ARCH4): a kernel traced
for it sees gen4, has its 256 KiB SBUF partitions, and runs with v4's
engine rates (ScalarE's 2x for 16-bit floats).  Values against NumPy."""
import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(43)
P = 128


def _wide_copy(a):
    """One SBUF tile of a's whole width (a [128, F] fp32 row block)."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    u = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=u[:, 0:512], data=t[:, 0:512], op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=out, src=t)
    nisa.dma_copy(dst=out[:, 0:512], src=u[:, 0:512])
    return out


def test_sbuf_partition_is_256_kib_numpy():
    """Two tiles of 120 000 bytes per partition fit trn3's 256 KiB partition
    (262 144 B) but not trn2's 224 KiB; nl.tile_size reports the target's."""
    a = RNG.standard_normal((P, 30000)).astype(np.float32)
    want = a.copy()
    want[:, :512] *= 2.0
    r = tpbsim.simulate(nki.jit(_wide_copy), a, target="trn3")
    np.testing.assert_array_equal(r.outputs, want)
    with pytest.raises(tpbsim.TpbError, match="SBUF"):
        tpbsim.simulate(nki.jit(_wide_copy), a, target="trn2")

    seen = []

    def k(a):
        seen.append(nl.tile_size.total_available_sbuf_size)
        return _wide_copy(a)
    tpbsim.simulate(nki.jit(k), a[:, :1024], target="trn3")
    assert seen == [256 * 1024]


def _exp(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    e = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    for i in range(4):
        nisa.activation(dst=e, op=nl.exp, data=t)
    nisa.dma_copy(dst=out, src=e)
    return out


@pytest.mark.parametrize("dtype, ratio", [(np.float32, 1.0), ("bfloat16", 0.5)])
def test_scalar_engine_perf_mode_on_trn3(dtype, ratio):
    """ScalarE busy time, trn3 against trn2 at the same 1.2 GHz clock: equal
    for fp32, about half for bf16 (ARCH4: 256 bf16/fp16/fp8 elements per
    cycle, else 128); the values are exp's on both targets."""
    a = RNG.uniform(-2, 2, (P, 2048)).astype(np.float32)
    x = nki.typed(a, dtype) if dtype != np.float32 else a
    busy = {}
    for tg in ("trn2", "trn3"):
        r = tpbsim.simulate(nki.jit(_exp), x, target=tg)
        got = np.asarray(r.outputs, np.float32)
        np.testing.assert_allclose(got, np.exp(a), rtol=1e-5 if dtype == np.float32 else 2e-2)
        busy[tg] = r.engines()["Activation"]["busy_cycles"]
    # busy per instruction: N on trn2, N / 2 for bf16 on trn3 (the static
    # overhead is result latency, not busy time: docs/timing-compute.md)
    assert abs(busy["trn3"] / busy["trn2"] - ratio) < 0.02, busy


def _wide_matmul(N, dst_dt, double_row=False):
    """Two nc_matmul (accumulate=None: overwrite, then accumulate) of a
    [128, 64] stationary with two [128, N] moving tiles into one [64, N]
    PSUM tile; double_row: [128, 2, 64] and [128, 2, N] fp8 (K = 256)."""
    def k(a, b1, b2):
        rows = (2,) if double_row else ()
        ta = nl.ndarray((P,) + rows + (64,), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=ta, src=a)
        ps = nl.ndarray((64, N), dtype=dst_dt, buffer=nl.psum)
        for b in (b1, b2):
            tb = nl.ndarray((P,) + rows + (N,), dtype=b.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=tb, src=b)
            nisa.nc_matmul(dst=ps, stationary=ta, moving=tb,
                           perf_mode="double_row" if double_row else "none")
        r = nl.ndarray((64, N), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=r, src=ps)
        out = nl.ndarray((64, N), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=r)
        return out
    return nki.jit(k)


def _bf16(x):
    """x rounded to bfloat16 (RNE)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("N, dst_dt", [(1024, "float32"), (2048, "float32"),
                                       (1024, "bfloat16"), (2048, "bfloat16")])
def test_nc_matmul_wide_numpy(N, dst_dt):
    """NKI nc_matmul from NeuronCore-v4: the moving free size may reach
    4096 for a float32 dst and 8192 for a bfloat16 one (8x PSUM banks, the
    entire PSUM), and dst may be bfloat16.  It runs as one Matmul per <= 512
    columns in one PSUM bank; accumulation stays column for column.  Small
    integers: every fp32 sum is exact, so the results are compared exactly
    (a bfloat16 dst rounds the first result, then the sum)."""
    a = RNG.integers(-4, 5, (P, 64)).astype(np.float32)
    b1 = RNG.integers(-4, 5, (P, N)).astype(np.float32)
    b2 = RNG.integers(-4, 5, (P, N)).astype(np.float32)
    r = tpbsim.simulate(_wide_matmul(N, getattr(nl, dst_dt)), nki.typed(a, "bfloat16"),
                        nki.typed(b1, "bfloat16"), nki.typed(b2, "bfloat16"), target="trn3")
    r1, r2 = a.T @ b1, a.T @ b2
    want = r1 + r2 if dst_dt == "float32" else _bf16(_bf16(r1) + r2)
    assert dst_dt == "float32" or not np.array_equal(want, r1 + r2)   # bf16 rounding shows
    np.testing.assert_array_equal(r.outputs, want)
    # one Matmul per 512 columns after each LdWeights
    assert r.engines()["PE"]["instructions"] >= 2 * (1 + N // 512)


def test_nc_matmul_wide_double_row_numpy():
    """double_row on trn3 with N = 1024: moving [128, 2, 1024] (contraction
    rows k and 128 + k), cut into Matmuls of [128, 2, 512]."""
    a = RNG.integers(-3, 4, (P, 2, 64)).astype(np.float32)
    b1 = RNG.integers(-3, 4, (P, 2, 1024)).astype(np.float32)
    b2 = RNG.integers(-3, 4, (P, 2, 1024)).astype(np.float32)
    r = tpbsim.simulate(_wide_matmul(1024, nl.float32, double_row=True),
                        nki.typed(a, "float8_e5m2"), nki.typed(b1, "float8_e5m2"),
                        nki.typed(b2, "float8_e5m2"), target="trn3")
    want = sum(np.einsum("krm,krn->mn", a, b) for b in (b1, b2))
    np.testing.assert_array_equal(r.outputs, want)


@pytest.mark.parametrize("N, dst_dt, match", [
    (1024, "float32", r"field 'moving': free size 1024 > 512 \(N, one PSUM bank of float32\)"),
    (512, "bfloat16", r"field 'dst': PSUM dtype bfloat16; matmul accumulates in float32")])
def test_nc_matmul_v4_forms_refused_on_trn2(N, dst_dt, match):
    """NKI: on NeuronCore-v2/-v3 nc_matmul's moving free size is at most
    512 and dst float32; trn2 keeps both limits."""
    a = np.ones((P, 64), np.float32)
    b = np.ones((P, N), np.float32)
    with pytest.raises(tpbsim.TpbError, match=match):
        tpbsim.simulate(_wide_matmul(N, getattr(nl, dst_dt)), nki.typed(a, "bfloat16"),
                        nki.typed(b, "bfloat16"), nki.typed(b, "bfloat16"), target="trn2")
