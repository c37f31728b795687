"""The check scripts' NumPy references on OpenBLAS (scripts/ref_blas.py) and
the NKI Library attention_bwd reference in np.matmul form
(scripts/nkilib_refs_tkg.py _bwd_ref): what they compute, never how fast."""
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")

# a script that asks for OpenBLAS, then says what its process runs with
CHILD = r"""
import os, sys
sys.path.insert(0, %r)
import ref_blas
ref_blas.use_openblas()
print("LD=" + os.environ.get("LD_LIBRARY_PATH", ""))
print("KEY=" + os.environ.get("TPBSIM_REF_BLAS", ""))
print("ARGV=" + " ".join(sys.argv[1:]))
""" % SCRIPTS


def _child(tmp_path, **env):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    e = {k: v for k, v in os.environ.items() if k not in ("TPBSIM_REF_BLAS", "LD_LIBRARY_PATH")}
    e.update(env)
    r = subprocess.run([sys.executable, str(script), "a", "b c"], capture_output=True, text=True,
                       env=e, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_reruns_once_with_the_blas_dir_first(tmp_path):
    d = str(tmp_path / "blas")
    os.mkdir(d)
    out = _child(tmp_path, TPBSIM_REF_BLAS=d, LD_LIBRARY_PATH="/x/y")
    # the re-run process says which BLAS once; its loader path starts with d
    assert out[0] == "NumPy references: BLAS from " + d
    assert out[1:] == ["LD=%s:/x/y" % d, "KEY=" + d, "ARGV=a b c"]


def test_default_keeps_numpy_blas(tmp_path):
    out = _child(tmp_path, TPBSIM_REF_BLAS="default", LD_LIBRARY_PATH="/x/y")
    assert out == ["NumPy references: NumPy's default BLAS", "LD=/x/y", "KEY=default",
                   "ARGV=a b c"]


def _einsum_bwd(q, k, v, dy, scale):
    """attention_bwd's contractions as the einsums they were (causal, no
    sinks, fp32 throughout): the oracle for the np.matmul form."""
    b, hq, d, s = q.shape
    g = hq // k.shape[1]
    ke, ve = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    qs = q * scale
    raw = np.einsum("bhdq,bhdk->bhqk", qs, ke)
    qp, kp = np.arange(s)[:, None], np.arange(s)[None, :]
    raw = np.where(kp > qp, -np.inf, raw)
    m = raw.max(-1, keepdims=True)
    e = np.exp(raw - m)
    p = e / e.sum(-1, keepdims=True)
    o = np.einsum("bhqk,bhdk->bhdq", p, ve)
    dp = np.einsum("bhdq,bhdk->bhqk", dy, ve)
    dx = (dp - (dp * p).sum(-1, keepdims=True)) * p
    dv = np.einsum("bhdq,bhqk->bhdk", dy, p)
    dq = np.einsum("bhdk,bhqk->bhdq", ke, dx) * scale
    dk = np.einsum("bhdq,bhqk->bhdk", qs, dx)
    hk = k.shape[1]
    return (dq, dk.reshape(b, hk, g, d, s).sum(2), dv.reshape(b, hk, g, d, s).sum(2)), o


@pytest.mark.parametrize("hq,hkv", [(2, 2), (4, 1)])
def test_bwd_ref_matmul_form(hq, hkv):
    sys.path.insert(0, SCRIPTS)
    from nkilib_refs_tkg import _bwd_ref
    rng = np.random.default_rng(hq)
    d, s = 16, 256
    q, dy = (rng.standard_normal((1, hq, d, s)) for _ in range(2))
    k, v = (rng.standard_normal((1, hkv, d, s)) for _ in range(2))
    (dq, dk, dv, dsinks), o, lse = _bwd_ref(q, k, v, dy, 0.25, True, 0, None, None, None,
                                            lambda x: x)
    (wq, wk, wv), wo = _einsum_bwd(q, k, v, dy, 0.25)
    assert dsinks is None
    assert lse.shape == (1, hq, 128, s // 128)
    for got, want in ((dq, wq), (dk, wk), (dv, wv), (o, wo)):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
