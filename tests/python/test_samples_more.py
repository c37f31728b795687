"""More forms of public NKI kernels (nki-samples, the SDK's nki/test) that
must give NKI's result or a clear error: the target a kernel is traced for,
masks over two indices, integer division, ... (docs/python.md).  Every
result is checked against NumPy."""
import numpy as np
import pytest

import tpbsim
from tpbsim import NkiError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(19)


def _by_version(a):
    """x2 on trn2 and later (gen3+), x3 on trn1 (gen2): a kernel branching on
    nisa.get_nc_version() as nki-samples' flash_attn_bwd does."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    if nisa.get_nc_version() >= nisa.nc_version.gen3:
        nl.store(out, value=nl.multiply(t, 2.0))
    else:
        nl.store(out, value=nl.multiply(t, 3.0))
    return out


A = RNG.random((128, 64), np.float32)


@pytest.mark.parametrize("target, factor", [("trn1", 3.0), ("gen2", 3.0), ("inf2", 3.0),
                                            ("trn2", 2.0), ("gen3", 2.0), (None, 2.0)])
def test_nc_version_follows_simulate_target_numpy(target, factor, monkeypatch):
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)
    r = tpbsim.simulate(nki.jit(_by_version), A, target=target)
    np.testing.assert_allclose(r.outputs, A * factor, rtol=1e-6)


def test_nc_version_follows_jit_platform_target_numpy(monkeypatch):
    """NKI beta-1's @nki.jit(platform_target=...) (the SDK's nki/test files)."""
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)
    np.testing.assert_allclose(nki.jit(_by_version, platform_target="trn1")(A), A * 3.0,
                               rtol=1e-6)
    np.testing.assert_allclose(nki.jit(_by_version, platform_target="trn2")(A), A * 2.0,
                               rtol=1e-6)
    # simulate(target=) is the caller's choice and wins over the kernel's
    r = tpbsim.simulate(nki.jit(_by_version, platform_target="trn2"), A, target="trn1")
    np.testing.assert_allclose(r.outputs, A * 3.0, rtol=1e-6)


def test_nc_version_follows_environment_numpy(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    assert nisa.get_nc_version() == nisa.nc_version.gen2
    np.testing.assert_allclose(nki.simulate_kernel(nki.trace(_by_version), A), A * 3.0,
                               rtol=1e-6)
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "gen3")
    assert nisa.get_nc_version() == nisa.nc_version.gen3
    np.testing.assert_allclose(nki.jit(_by_version)(A), A * 2.0, rtol=1e-6)
    assert nisa.get_nc_sub_version() == 0


def test_nc_version_unknown_target_refused(monkeypatch):
    """A target tpbsim does not model is an error, not gen3."""
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)
    with pytest.raises(NkiError, match="get_nc_version: target 'trn3' is not one tpbsim "
                                       r"models \(trn1, trn2\)"):
        tpbsim.simulate(nki.jit(_by_version), A, target="trn3")
