"""NKI reserves no argument name, so a kernel's names never meet the
compiler's own: a parameter named `identity` (the HBM constant of the
shared identity that PE transposes multiply by is named identity_1 then,
its SBUF tile identity_sb_1 past a tensor so named), `identity_sb`, or
`pid` / `num_programs` / a name past 55 characters / a **kwargs key that
is no identifier (the kernel format's reserved or invalid names: the input
is renamed in the kernel file, <name>_<n>), on trn1 and trn2, against
NumPy."""
import json

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

TARGETS = ["trn1", "trn2"]


@nki.jit
def nc_transposed(x, identity):
    """out = x.T (nc_transpose on the PE) + the kernel's own `identity`."""
    out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    tp = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_transpose(dst=tp, data=t)
    u = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=u, src=identity)
    r = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=r, data1=tp, data2=u, op=nl.add)
    nisa.dma_copy(dst=out, src=r)
    return out


@nki.jit
def nl_transposed(x, identity, identity_sb):
    """(x.T + identity, identity_sb) with nl.transpose."""
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    out2 = nl.ndarray(identity_sb.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    tp = nl.transpose(nl.load(x))
    nl.store(out, nl.add(tp, nl.load(identity), dtype=nl.float32))
    nl.store(out2, nl.load(identity_sb))
    return out, out2


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.float32, nl.bfloat16])
def test_nc_transpose_with_an_identity_parameter_numpy(target, dtype):
    """repro: `identity` named both the kernel's input and the compiler's
    constant (tensor-map.json: duplicate tensor name 'identity')."""
    rng = np.random.default_rng(40)
    x = rng.standard_normal((128, 128)).astype(dtype)
    ident = rng.standard_normal((128, 128)).astype(np.float32)   # not an identity
    got = tpbsim.simulate(nc_transposed, x, ident, target=target).outputs
    np.testing.assert_allclose(got, x.astype(np.float64).T + ident, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_nl_transpose_with_identity_and_identity_sb_numpy(target):
    rng = np.random.default_rng(41)
    x = rng.standard_normal((64, 128)).astype(nl.bfloat16)
    ident = rng.standard_normal((128, 64)).astype(np.float32)
    ident_sb = rng.standard_normal((32, 16)).astype(np.float32)
    got, got2 = tpbsim.simulate(nl_transposed, x, ident, ident_sb, target=target).outputs
    np.testing.assert_allclose(got, x.astype(np.float64).T + ident, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(got2, ident_sb)


@nki.jit
def nc_transposed2(x, identity, identity_1):
    """x.T + identity + identity_1."""
    out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    tp = nisa.nc_transpose(nl.load(x))
    t = nl.add(nl.load(identity), nl.load(identity_1))
    nl.store(out, nl.add(tp, t, dtype=nl.float32))
    return out


def test_the_compiler_identity_takes_a_free_name(tmp_path):
    """The kernel's `identity` keeps its name; the compiler's constant is
    identity_1, identity_2 when identity_1 is taken too."""
    rng = np.random.default_rng(42)
    x = rng.standard_normal((128, 128)).astype(nl.bfloat16)
    i1, i2 = (rng.standard_normal((128, 128)).astype(np.float32) for _ in range(2))
    for k, args, want in ((nc_transposed, (x, i1), "identity_1"),
                          (nc_transposed2, (x, i1, i2), "identity_2")):
        art = str(tmp_path / k.fn.__name__)
        got = tpbsim.simulate(k, *args, keep=art).outputs
        np.testing.assert_allclose(got, x.astype(np.float64).T + sum(args[1:]), rtol=1e-6,
                                   atol=1e-6)
        with open(art + "/tensor-map.json") as f:
            names = [t["name"] for t in json.load(f)["tensors"]]
        assert names == [p for p in k.fn.__code__.co_varnames[:len(args)]] + ["out", want]


@nki.jit
def reserved(pid, num_programs, **kwargs):
    """pid + num_programs + every **kwargs array."""
    out = nl.ndarray(pid.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.add(nl.load(pid), nl.load(num_programs))
    for k in sorted(kwargs):
        t = nl.add(t, nl.load(kwargs[k]))
    nl.store(out, t)
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_reserved_and_invalid_input_names_numpy(target):
    rng = np.random.default_rng(43)
    a, b, c, d, e = (rng.standard_normal((128, 8)).astype(np.float32) for _ in range(5))
    long = "a_parameter_name_longer_than_the_kernel_formats_fifty_five"
    kw = {"pid_1": c, "not-an-identifier": d, long: e}
    got = tpbsim.simulate(reserved, a, b, target=target, **kw).outputs
    np.testing.assert_allclose(got, sum(v.astype(np.float64) for v in (a, b, c, d, e)),
                               rtol=1e-5, atol=1e-6)
    names = [i["name"] for i in json.loads(tpbsim.kernel_json(reserved, a, b, **kw))["inputs"]]
    assert names == ["pid_2", "num_programs_1", "pid_1", "arg_1", long[:47] + "_1"]
