"""Per-partition scalars (bias, scale, tensor_scalar operands,
range_select bounds, reduce results) are read on the output's partitions
(docs/semantics.md "PTR operand").  An input may be read from other
partitions (the engines' cross-quadrant movement); a per-partition scalar
placed anywhere but on the output's partitions is refused by the compiler
rather than read from the wrong partitions.  Checked against NumPy."""
import numpy as np
import pytest

from tpbsim import nki
from tpbsim._lib import TpbError
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(5)
N = 8


def _x_b():
    x = RNG.standard_normal((128, N)).astype(np.float32)
    b = RNG.standard_normal((128, 1)).astype(np.float32)
    return x, b


def _run(body, x, b, width=N):
    """Kernel: x [128, N] and b [128, 1] loaded whole; body(xt, bt, ot)
    writes ot [64, width] on partitions 0..63."""
    @nki.jit
    def k(x, b):
        xt = nl.ndarray((128, N), dtype=nl.float32, buffer=nl.sbuf)
        bt = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        ot = nl.ndarray((64, width), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=xt, src=x)
        nisa.dma_copy(dst=bt, src=b)
        body(xt, bt, ot)
        out = nl.ndarray((64, width), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=ot)
        return out
    return k(x, b)


def test_bias_on_the_output_partitions():
    x, b = _x_b()
    got = _run(lambda xt, bt, ot: nisa.activation(dst=ot, op=nl.copy, data=xt[64:128, :],
                                                  bias=bt[0:64, :]), x, b)
    np.testing.assert_allclose(got, x[64:] + b[:64], rtol=1e-6)


def test_tensor_scalar_operand_on_the_output_partitions():
    x, b = _x_b()
    got = _run(lambda xt, bt, ot: nisa.tensor_scalar(dst=ot, data=xt[64:128, :], op0=nl.multiply,
                                                     operand0=bt[0:64, :]), x, b)
    np.testing.assert_allclose(got, x[64:] * b[:64], rtol=1e-6)


def test_reduce_result_on_the_output_partitions():
    """tensor_scalar_reduce: the [P, 1] sum lands on the output's
    partitions (0..63) although the data is read from 64..127."""
    x, b = _x_b()

    def body(xt, bt, ot):
        nisa.tensor_scalar_reduce(dst=ot[:, 0:N], data=xt[64:128, :], op0=nl.add, operand0=1.0,
                                  reduce_op=nl.add, reduce_res=ot[:, N:N + 1])
    got = _run(body, x, b, width=N + 1)
    np.testing.assert_allclose(got[:, :N], x[64:] + 1, rtol=1e-6)
    np.testing.assert_allclose(got[:, N], (x[64:] + 1).sum(axis=1), rtol=1e-5)


@pytest.mark.parametrize("op", ["activation", "tensor_scalar"])
def test_scalar_elsewhere_is_refused(op):
    """The scalar on the input's partitions (64..127) while the output is on
    0..63: NKI reads it there; the encoding cannot say so, so it is an
    error naming the operand, never a read of partitions 0..63."""
    x, b = _x_b()
    if op == "activation":
        def body(xt, bt, ot):
            nisa.activation(dst=ot, op=nl.copy, data=xt[64:128, :], bias=bt[64:128, :])
        role = "bias"
    else:
        def body(xt, bt, ot):
            nisa.tensor_scalar(dst=ot, data=xt[64:128, :], op0=nl.add, operand0=bt[64:128, :])
        role = "operand0"
    with pytest.raises(TpbError, match=role + r": a per-partition scalar on partitions 64\.\.127, "
                                               r"but the output is on partitions 0\.\.63"):
        _run(body, x, b)
