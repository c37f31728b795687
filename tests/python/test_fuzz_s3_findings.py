"""Findings of the differential fuzzer's new families (scripts/nki-fuzz,
docs/reliability.md), each against an independent NumPy value."""
import numpy as np

from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


def run(kernel, *args):
    return kernel(*args)


def test_activation_reduce_res_none_keeps_the_sum_in_the_registers():
    # NKI: "Pass None to keep the reduction result in the Scalar Engine's
    # internal accumulator without writing it out" -- a chain of calls where
    # only the last one reads the registers out
    @nki.jit
    def k(a, b, c):
        x, y, z = nl.load(a), nl.load(b), nl.load(c)
        d1 = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        d2 = nl.ndarray(b.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        d3 = nl.ndarray(c.shape, dtype=nl.float32, buffer=nl.sbuf)
        r = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation_reduce(dst=d1, op=nl.exp, data=x, reduce_op=nl.add, reduce_res=None)
        nisa.activation(dst=d2, op=nl.square, data=y, reduce_op=nl.add, reduce_res=None,
                        reduce_cmd=nisa.reduce_cmd.reduce)
        nisa.activation(dst=d3, op=nl.copy, data=z, scale=2.0, reduce_op=nl.add, reduce_res=r,
                        reduce_cmd=nisa.reduce_cmd.reduce)
        o = nl.ndarray(r.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(o, r)
        return o
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (64, 40)).astype(np.float32)
    b = np.round(rng.uniform(-2, 2, (64, 7)) * 4).astype(np.float32) / 4
    c = rng.uniform(-1, 1, (64, 300)).astype(np.float32)
    want = np.exp(a.astype(np.float64)).sum(1) + (b.astype(np.float64) ** 2).sum(1) + 2 * c.sum(1)
    got = k(a, b, c)[:, 0]
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_activation_reset_without_reduce_res_then_reset_reduce():
    # reduce_cmd=reset with no reduce_res only clears the registers
    @nki.jit
    def k(a):
        x = nl.load(a)
        d = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        r = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=d, op=nl.copy, data=x, reduce_op=nl.add,
                        reduce_cmd=nisa.reduce_cmd.reset)
        nisa.activation(dst=d, op=nl.copy, data=x, reduce_op=nl.add, reduce_res=r,
                        reduce_cmd=nisa.reduce_cmd.reduce)
        o = nl.ndarray(r.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(o, r)
        return o
    a = np.arange(32 * 5, dtype=np.float32).reshape(32, 5)
    np.testing.assert_array_equal(k(a)[:, 0], a.astype(np.float64).sum(1))
