"""Distinct tensors on the same storage (docs/python.md "Direct
allocation"): a direct allocation's addresses are the compiled tiles'
("addr" in the kernel format), so two tensors NKI places on the same bytes
share them in tpbsim too.  When their lifetimes do not overlap the result
is NumPy's; when a write really clobbers live data the result is the
clobbered one (what the hardware computes for that placement).  Golden
values from NumPy."""
import functools
import warnings

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.compiler as ncc
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(29)


def _rand(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


@nki.jit
def reuse_sbuf(x, y):
    """a and b at the same SBUF bytes, one after the other: 2x + (y + 1)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    a = nl.ndarray((128, 256), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=1024))
    b = nl.ndarray((128, 256), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=1024))
    a[...] = nl.load(x)
    ra = nisa.tensor_scalar(data=a, op0=nl.multiply, operand0=2.0)   # a's last read
    b[...] = nl.load(y)                                             # WAR on a's bytes
    rb = nisa.tensor_scalar(data=b, op0=nl.add, operand0=1.0)
    nl.store(out, nl.add(ra, rb))
    return out


def test_reuse_of_one_address_by_two_tensors_numpy():
    x, y = _rand(128, 256), _rand(128, 256)
    text = tpbsim.kernel_json(reuse_sbuf, x, y)
    assert text.count('"addr": 1024') == 2
    np.testing.assert_allclose(reuse_sbuf(x, y), 2 * x + (y + 1), rtol=1e-6)


@nki.jit
def clobber_sbuf(x, y):
    """b's load lands on the second half of a's bytes while a is live: a,
    read after it, holds y there (the clobbered result)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    a = nl.ndarray((128, 128), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    b = nl.ndarray((128, 64), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=256))
    a[...] = nl.load(x)
    b[...] = nl.load(y[:, 0:64])
    nl.store(out, nisa.tensor_copy(a))
    return out


def test_overlap_that_clobbers_live_data_gives_the_clobbered_result_numpy():
    x, y = _rand(128, 128), _rand(128, 128)
    want = x.copy()
    want[:, 64:128] = y[:, 0:64]   # bytes 256..511 of every partition are b's
    np.testing.assert_array_equal(clobber_sbuf(x, y), want)


def _psum_reuse(n):
    """n matmul results in PSUM bank 2 under two names (qk, tr), each copied
    out before the next one lands: n blocks of x.T @ w1 / x.T @ w2."""
    @nki.jit
    def k(x, w1, w2):
        out = nl.ndarray((2 * n, 128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        xs = nl.load(x)
        w1s, w2s = nl.load(w1), nl.load(w2)
        qk = nl.ndarray((n, nl.par_dim(128), 128), dtype=nl.float32,
                        buffer=ncc.psum.mod_alloc(base_bank=2, num_bank_tiles=(1,)))
        tr = nl.ndarray((n, nl.par_dim(128), 128), dtype=nl.float32,
                        buffer=ncc.psum.mod_alloc(base_bank=2, num_bank_tiles=(1,)))
        for i in nl.affine_range(n):
            qk[i] = nisa.nc_matmul(xs[:, nl.ds(i * 128, 128)], w1s)
            nl.store(out[2 * i], nisa.tensor_copy(qk[i]))
            tr[i] = nisa.nc_matmul(xs[:, nl.ds(i * 128, 128)], w2s)
            nl.store(out[2 * i + 1], nisa.tensor_copy(tr[i]))
        return out
    return k


def test_psum_bank_shared_by_two_tensors_numpy():
    n = 3
    x, w1, w2 = _rand(128, n * 128), _rand(128, 128), _rand(128, 128)
    k = _psum_reuse(n)
    text = tpbsim.kernel_json(k, x, w1, w2)
    assert text.count('"buffer": "psum", "addr": 4096') == 2   # bank 2, both names
    got = k(x, w1, w2)
    for i in range(n):
        xi = x[:, i * 128:(i + 1) * 128]
        np.testing.assert_allclose(got[2 * i], xi.T @ w1, rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(got[2 * i + 1], xi.T @ w2, rtol=2e-5, atol=2e-5)


@nki.jit
def spaced_banks(x, w):
    """Blocks of 128 fp32 (512 B) one per bank (banks 4..7): the stored tile
    is padded to a bank per block, so block j is at bank 4 + j."""
    out = nl.ndarray((4, 128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    xs, ws = nl.load(x), nl.load(w)
    ps = nl.ndarray((4, nl.par_dim(128), 128), dtype=nl.float32,
                    buffer=ncc.psum.alloc(lambda idx, p, f: (4 + idx[0] % 4, 0, 0)))
    for i in nl.affine_range(4):
        ps[i] = nisa.nc_matmul(xs[:, nl.ds(i * 128, 128)], ws)
    for i in nl.affine_range(4):
        nl.store(out[i], nisa.tensor_copy(ps[i]))
    return out


def test_blocks_one_per_bank_are_stored_padded_numpy():
    x, w = _rand(128, 512), _rand(128, 128)
    text = tpbsim.kernel_json(spaced_banks, x, w)
    assert '"shape": [128, 4, 512], "dtype": "float32", "buffer": "psum", "addr": 8192' in text
    got = spaced_banks(x, w)
    for i in range(4):
        np.testing.assert_allclose(got[i], x[:, i * 128:(i + 1) * 128].T @ w,
                                   rtol=2e-5, atol=2e-5)


def test_placement_not_kept_warns_and_gets_own_storage_numpy():
    """Physical blocks in descending bank order cannot be the stored tile's
    ascending blocks: the tensor gets storage of its own, with a warning
    naming it (the result is then NumPy's whatever NKI would share)."""
    @nki.jit
    def k(x, w):
        out = nl.ndarray((2, 128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        xs, ws = nl.load(x), nl.load(w)
        ps = nl.ndarray((2, nl.par_dim(128), 128), dtype=nl.float32,
                        buffer=ncc.psum.alloc(lambda idx, p, f: (5 - idx[0], 0, 0)))
        for i in nl.affine_range(2):
            ps[i] = nisa.nc_matmul(xs[:, nl.ds(i * 128, 128)], ws)
            nl.store(out[i], nisa.tensor_copy(ps[i]))
        return out
    x, w = _rand(128, 256), _rand(128, 128)
    with pytest.warns(UserWarning, match=r"ncc\.psum\.alloc\(<lambda>\): tpbsim cannot keep "
                                         r"this placement"):
        got = k(x, w)
    for i in range(2):
        np.testing.assert_allclose(got[i], x[:, i * 128:(i + 1) * 128].T @ w,
                                   rtol=2e-5, atol=2e-5)


def test_force_auto_alloc_drops_the_addresses():
    @ncc.force_auto_alloc
    @nki.jit
    def k(x, y):
        return reuse_sbuf.fn(x, y)
    x, y = _rand(128, 256), _rand(128, 256)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = tpbsim.kernel_json(k, x, y)
        got = k(x, y)
    assert '"addr"' not in text
    np.testing.assert_allclose(got, 2 * x + (y + 1), rtol=1e-6)


@nki.jit
def counter_in_loop(x):
    """nki-samples' allocated kernels: `cur += size` after every direct
    allocation, in an affine_range body.  NKI runs the body once, so every
    iteration uses the first addresses; 4 iterations of 96 KiB would run
    past SBUF if the counter grew per iteration."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    cur = 4096
    for i in nl.affine_range(4):
        t = nl.ndarray((128, 24576), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=cur))
        cur += 24576 * 4
        t[...] = nl.load(x[:, nl.ds(i * 24576, 24576)])
        r = nisa.tensor_scalar(data=t, op0=nl.add, operand0=1.0)
        nl.store(out[:, nl.ds(i * 24576, 24576)], r)
    return out


def test_direct_allocation_evaluated_once_per_loop_body_numpy():
    x = _rand(128, 4 * 24576)
    text = tpbsim.kernel_json(counter_in_loop, x)
    assert text.count('"addr": 4096') >= 1 and '"addr": 102400' not in text
    np.testing.assert_allclose(counter_in_loop(x), x + 1, rtol=1e-6)


def _bank_of(bank_map, idx, pdim_size, fdim_size):
    return (bank_map[idx], 0, 0)


@nki.jit
def blocks_on_banks_1_and_5(x, w):
    """nki-samples' allocated attention: two blocks of one PSUM tensor on
    banks 1 and 5 (a padded [P, 2, 4 banks] tile would end at bank 9)."""
    out = nl.ndarray((2, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    xs, ws = nl.load(x), nl.load(w)
    acc = nl.ndarray((2, nl.par_dim(128), 512), dtype=nl.float32,
                     buffer=ncc.psum.alloc(functools.partial(_bank_of,
                                                             bank_map={(0,): 1, (1,): 5})))
    for g in nl.affine_range(2):
        acc[g, :, :] = nisa.nc_matmul(xs[:, nl.ds(g * 128, 128)], ws)
        nl.store(out[g], nisa.tensor_copy(acc[g, :, :]))
    return out


def test_psum_blocks_past_the_padded_end_stored_per_block_numpy():
    x, w = _rand(128, 256), _rand(128, 512)
    text = tpbsim.kernel_json(blocks_on_banks_1_and_5, x, w)
    assert '"addr": 2048' in text and '"addr": 10240' in text
    want = np.stack([x[:, g * 128:(g + 1) * 128].T @ w for g in range(2)])
    np.testing.assert_allclose(blocks_on_banks_1_and_5(x, w), want, rtol=1e-4, atol=1e-4)
