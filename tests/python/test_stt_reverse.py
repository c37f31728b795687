"""nisa.scalar_tensor_tensor with reverse0 / reverse1 (NKI: operand0 /
operand1 become the lhs of op0 / op1), checked against NumPy; the NKI
Library's attention_bwd uses reverse1 with subtract."""
import numpy as np
import pytest

from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

from conftest import sbuf_copy

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("r0, r1, op0, op1", [
    (False, True, nl.multiply, nl.subtract),    # attention_bwd's: operand1 - data * operand0
    (True, False, nl.subtract, nl.multiply),    # (operand0 - data) * operand1
    (True, True, nl.divide, nl.subtract),       # operand1 - operand0 / data
    (False, True, nl.add, nl.add),              # commutative: one instruction
])
def test_scalar_tensor_tensor_reverse_numpy(r0, r1, op0, op1):
    @nki.jit
    def k(x, s, y):
        tx, ts, ty = sbuf_copy(x), sbuf_copy(s), sbuf_copy(y)
        o = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(dst=o, data=tx, op0=op0, operand0=ts, op1=op1, operand1=ty,
                                  reverse0=r0, reverse1=r1)
        out = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=o)
        return out
    x = (RNG.uniform(0.5, 2.0, (64, 24)) * RNG.choice([-1, 1], (64, 24))).astype(np.float32)
    s = RNG.standard_normal((64, 1)).astype(np.float32)
    y = RNG.standard_normal((64, 24)).astype(np.float32)
    f = {nl.multiply: np.multiply, nl.subtract: np.subtract, nl.divide: np.divide, nl.add: np.add}
    t = f[op0](s, x) if r0 else f[op0](x, s)
    want = f[op1](y, t) if r1 else f[op1](t, y)
    got = np.asarray(k(x, s, y), np.float32)
    # one rounding of the float32 result to bf16 (the Vector engine's fp32 math)
    np.testing.assert_array_equal(got, want.astype(np.float32).astype(nl.bfloat16).astype(np.float32))
