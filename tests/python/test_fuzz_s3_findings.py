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


def test_range_select_reduce_reads_fp32_values_not_dst_rounding():
    # NKI's numerical-stability note: a bf16 dst turns the FP32_MIN fill into
    # -inf, while an fp32 reduce_res of a fully masked row holds FP32_MIN
    # ("-INF - FP32_MIN = -INF" in the following activation, not NaN)
    fmin = float(np.finfo(np.float32).min)

    @nki.jit
    def k(a, b0, b1):
        x, lo, hi = nl.load(a), nl.load(b0), nl.load(b1)
        d = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        r = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.range_select(dst=d, on_true_tile=x, comp_op0=nl.greater_equal, comp_op1=nl.less,
                          bound0=lo, bound1=hi, reduce_cmd=nisa.reduce_cmd.reset_reduce,
                          reduce_res=r, reduce_op=nl.maximum, range_start=0,
                          on_false_value=fmin)
        od = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        orr = nl.ndarray(r.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(od, d)
        nl.store(orr, r)
        return od, orr
    a = np.arange(4 * 6, dtype=np.float32).reshape(4, 6) - 30
    lo = np.array([[0], [2], [5], [9]], np.float32)      # row 3: nothing selected
    hi = np.array([[6], [4], [6], [9]], np.float32)
    idx = np.arange(6)
    m = (idx >= lo) & (idx < hi)
    d, r = k(a, lo, hi)
    np.testing.assert_array_equal(d, np.where(m, a, -np.inf))
    np.testing.assert_array_equal(r[:, 0], np.where(m, a, fmin).max(axis=1))
    assert r[3, 0] == fmin


def test_affine_select_unit_levels_and_strided_views():
    # NKI: only the product of the pattern's counts must match the elements
    # per partition; a level of count 1 (here in the middle, on a dst that
    # has that unit dim) adds nothing; a stepped view is regrouped as well
    @nki.jit
    def k(a):
        x = nl.load(a)
        d1 = nl.ndarray((8, 3, 1, 4), dtype=nl.float32, buffer=nl.sbuf)
        d2 = nl.ndarray((8, 24), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=d2, value=0.0)
        nisa.affine_select(dst=d1, pattern=[[1, 3], [7, 1], [-1, 4]], channel_multiplier=1,
                           on_true_tile=x.reshape((8, 3, 1, 4)), on_false_value=-5.0,
                           cmp_op=nl.greater_equal, offset=-2)
        nisa.affine_select(dst=d2[:, 0:24:2], pattern=[[1, 3], [-1, 4]], channel_multiplier=1,
                           on_true_tile=x, on_false_value=-5.0, cmp_op=nl.greater_equal, offset=-2)
        o1 = nl.ndarray((8, 12), dtype=nl.float32, buffer=nl.shared_hbm)
        o2 = nl.ndarray((8, 24), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(o1, d1.reshape((8, 12)))
        nl.store(o2, d2)
        return o1, o2
    a = np.arange(8 * 12, dtype=np.float32).reshape(8, 12)
    p = np.arange(8).reshape(-1, 1, 1)
    v = (-2 + p + np.arange(3).reshape(1, -1, 1) - np.arange(4).reshape(1, 1, -1)).reshape(8, 12)
    want = np.where(v >= 0, a, -5.0)
    o1, o2 = k(a)
    np.testing.assert_array_equal(o1, want)
    np.testing.assert_array_equal(o2[:, 0::2], want)
    np.testing.assert_array_equal(o2[:, 1::2], 0.0)


def test_nc_transpose_integers_on_the_pe_and_psum_on_the_vector_engine():
    # NKI: "The input data tile can be any valid NKI data type" (the PE's
    # transpose moves int32 bits as fp32's; uint8 goes through fp32), free
    # axes flattened; the Vector engine reads / writes SBUF or PSUM
    @nki.jit
    def k(a, b, c):
        x, y, z = nl.load(a), nl.load(b), nl.load(c)
        t1 = nl.ndarray((a.shape[1], a.shape[0]), dtype=nl.int32, buffer=nl.psum)
        t2 = nl.ndarray((b.shape[1] * b.shape[2], b.shape[0]), dtype=nl.uint8, buffer=nl.psum)
        t3 = nl.ndarray((c.shape[1], c.shape[0]), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_transpose(dst=t1, data=x, engine=nisa.engine.tensor)
        nisa.nc_transpose(dst=t2, data=y)
        nisa.nc_transpose(dst=t3, data=z, engine=nisa.engine.vector)
        outs = []
        for t in (t1, t2, t3):
            s = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=s, src=t)
            o = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.shared_hbm)
            nl.store(o, s)
            outs.append(o)
        return tuple(outs)
    rng = np.random.default_rng(5)
    a = rng.integers(-2**31, 2**31, (40, 70), dtype=np.int64).astype(np.int32)
    a[0, :4] = [0x7FC00001, -1, 0x7F800001, -2**31]   # NaN / inf bit patterns kept
    b = rng.integers(0, 256, (9, 3, 11), dtype=np.int64).astype(np.uint8)
    c = rng.normal(size=(20, 30)).astype(np.float32)
    o1, o2, o3 = k(a, b, c)
    np.testing.assert_array_equal(o1, a.T)
    np.testing.assert_array_equal(o2, b.reshape(9, 33).T)
    np.testing.assert_array_equal(o3, c.T)


def test_match_replace8_vals_on_other_partitions_is_refused():
    # the vals pointer is read on data's partitions: vals on partition 0 for
    # data on partition 32 used to read partition 32 of vals' address (garbage)
    import pytest

    @nki.jit
    def k(a):
        x = nl.load(a)
        v = nl.ndarray((1, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.max8(dst=v, src=x[32:33, :])
        d = nl.ndarray((1, 16), dtype=nl.float32, buffer=nl.sbuf)
        nisa.nc_match_replace8(dst=d, data=x[32:33, :], vals=v, imm=0.0)
        o = nl.ndarray((1, 16), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(o, d)
        return o
    a = np.arange(64 * 16, dtype=np.float32).reshape(64, 16)
    with pytest.raises(Exception, match="vals: on partitions 0..0, but src is on partitions 32..32"):
        k(a)
