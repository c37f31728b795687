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
    # per instruction: 100 + N on trn2, 100 + N / 2 for bf16 on trn3
    n = 2048
    want = (100 + n * ratio) / (100 + n)
    assert abs(busy["trn3"] / busy["trn2"] - want) < 0.02, busy
