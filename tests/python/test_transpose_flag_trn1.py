"""nc_matmul(is_transpose=True) per target (NKI: transpose mode from
NeuronCore-v3; on v2 the flag only tags the instruction for the profiler):
on trn1 it is a plain matmul, stationary.T @ moving in float32 -- a moving
that is no identity is multiplied, and a NaN in stationary reaches every
column, as products with zero do -- while trn2 copies the bits."""
import numpy as np

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


@nki.jit
def tagged(a, b):
    out = nl.ndarray((a.shape[1], b.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    ps = nisa.nc_matmul(stationary=nl.load(a), moving=nl.load(b), is_transpose=True)
    nl.store(out, nl.copy(ps, dtype=nl.float32))
    return out


def test_trn1_is_transpose_is_a_plain_matmul_numpy():
    rng = np.random.default_rng(12)
    a = rng.random((128, 64)).astype(nl.bfloat16)
    b = rng.random((128, 256)).astype(nl.bfloat16)
    want = a.astype(np.float64).T @ b.astype(np.float64)
    np.testing.assert_allclose(tpbsim.simulate(tagged, a, b, target="trn1").outputs, want,
                               rtol=1e-5)


def test_identity_moving_nan_per_target():
    a = np.random.default_rng(13).random((128, 32)).astype(np.float32)
    a[5, 3] = np.nan
    eye = np.eye(128, dtype=np.float32)
    t2 = tpbsim.simulate(tagged, a, eye, target="trn2").outputs
    np.testing.assert_array_equal(t2, a.T)            # transpose mode: the bits
    t1 = tpbsim.simulate(tagged, a, eye, target="trn1").outputs
    assert np.isnan(t1[3]).all()                       # row 3 = column 3 of a: NaN * 0 everywhere
    np.testing.assert_array_equal(np.delete(t1, 3, 0), np.delete(a.T, 3, 0))
