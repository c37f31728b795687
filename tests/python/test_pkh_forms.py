"""Forms of public NKI kernels (pkH): nl-level element-wise ops on two PSUM
tiles (a copy of one to SBUF; the direct nisa.tensor_tensor keeps its
refusal), nl.store of a number into one element, and arrays inside list /
tuple kernel arguments -- each against NumPy."""
import numpy as np
import pytest

from tpbsim import TpbError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


def _rand(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.random(s).astype(np.float32) for s in shapes]


@nki.jit
def iadd_named_matmul(a, b):   # CS149 conv: `part = nisa.nc_matmul(..); acc += part`
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    at = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=at, src=a)
    bt = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=bt, src=b)
    acc = nl.zeros((128, 64), dtype=nl.float32, buffer=nl.psum)
    for i in nl.sequential_range(3):
        part = nisa.nc_matmul(at, bt)
        acc += part
    nisa.dma_copy(dst=out, src=nisa.tensor_copy(acc))
    return out


def test_iadd_named_psum_tile_into_psum_numpy():
    a, b = _rand((128, 128), (128, 64))
    ref = 3 * (a.astype(np.float64).T @ b)
    np.testing.assert_allclose(iadd_named_matmul(a, b), ref, rtol=1e-5)


@nki.jit
def psum_pair_ops(a, b, c, d):   # biquando hybrid.py: nl.subtract(nl.matmul, nl.matmul)
    outs = [nl.ndarray((128, 128), dtype=np.float32, buffer=nl.shared_hbm) for _ in range(5)]
    w1 = nl.matmul(nl.load(a), nl.load(b))
    w2 = nl.matmul(nl.load(c), nl.load(d))
    nl.store(outs[0], nl.subtract(w1, w2))
    nl.store(outs[1], w1 * w2)
    nl.store(outs[2], w1 - w2)
    nl.store(outs[3], nl.maximum(w1, w2))
    nl.store(outs[4], nl.where(w1 > w2, w1, 0.0))   # a comparison of PSUM tiles, then select
    return tuple(outs)


def test_nl_ops_of_two_psum_tiles_numpy():
    a, b, c, d = _rand(*[(128, 128)] * 4, seed=1)
    p, q = a.astype(np.float64) @ b, c.astype(np.float64) @ d
    o = psum_pair_ops(a, b, c, d)
    tol = dict(rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(o[0], p - q, **tol)
    np.testing.assert_allclose(o[1], p * q, rtol=1e-4, atol=1e-1)
    np.testing.assert_allclose(o[2], p - q, **tol)
    np.testing.assert_allclose(o[3], np.maximum(p, q), **tol)
    far = np.abs(p - q) > 1e-2   # the comparison decided the same as NumPy's
    np.testing.assert_allclose(o[4][far], np.where(p > q, p, 0)[far], **tol)


@nki.jit
def loop_reduce_psum(a, b):   # t[...] = nl.loop_reduce(x, op) with t and x in PSUM
    out = nl.ndarray((128, 128), dtype=np.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 128), dtype=np.float32, buffer=nl.psum)
    at, bt = nl.load(a), nl.load(b)
    for i in nl.sequential_range(2):
        acc[...] = nl.loop_reduce(nl.matmul(at, bt), op=np.add, loop_indices=[i])
    nl.store(out, acc)
    return out


def test_loop_reduce_psum_into_psum_numpy():
    a, b = _rand((128, 128), (128, 128), seed=2)
    np.testing.assert_allclose(loop_reduce_psum(a, b), 2 * (a.astype(np.float64) @ b),
                               rtol=1e-5)


@nki.jit
def isa_psum_pair(a, b):
    out = nl.ndarray((128, 128), dtype=np.float32, buffer=nl.shared_hbm)
    at, bt = nl.load(a), nl.load(b)
    p = nl.ndarray((128, 128), dtype=np.float32, buffer=nl.psum)
    q = nl.ndarray((128, 128), dtype=np.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=p, stationary=at, moving=bt)
    nisa.nc_matmul(dst=q, stationary=bt, moving=at)
    r = nl.ndarray((128, 128), dtype=np.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=r, data1=p, data2=q, op=nl.add)
    nl.store(out, r)
    return out


def test_isa_tensor_tensor_psum_pair_still_refused():
    a, b = _rand((128, 128), (128, 128), seed=3)
    with pytest.raises(TpbError, match="in0 and in1 cannot both be in PSUM"):
        isa_psum_pair(a, b)


@nki.jit
def store_number_elem():   # biquando 09_simulator: nl.store(dst=state[0, 0, 0], value=1.0)
    state = nl.ndarray((2, 128, 3), dtype=np.float32, buffer=nl.shared_hbm)
    nl.store(dst=state[0, 0:128, 0:3], value=0.0)
    nl.store(dst=state[1, 0:128, 0:3], value=0.0)
    nl.store(dst=state[0, 0, 0], value=1.0)
    nl.store(dst=state[1, 5, 2], value=-2.5)
    return state


def test_store_number_into_one_element_numpy():
    ref = np.zeros((2, 128, 3), np.float32)
    ref[0, 0, 0], ref[1, 5, 2] = 1.0, -2.5
    np.testing.assert_array_equal(store_number_elem(), ref)


@nki.jit
def nested_args(pairs, scale, extra=()):
    out = nl.ndarray((128, 64), dtype=np.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 64), dtype=np.float32, buffer=nl.sbuf)
    for a, b in pairs:
        acc[...] = nl.add(acc, nl.multiply(nl.load(a), nl.load(b)))
    for group in extra:
        for x in group[0]:
            acc[...] = nl.add(acc, nl.load(x))
    nl.store(out, nl.multiply(acc, scale[0]))
    return out


def test_arrays_in_list_and_tuple_arguments_numpy():
    xs = _rand(*[(128, 64)] * 8, seed=4)
    pairs = [(xs[0], xs[1]), (xs[2], xs[3]), (xs[4], xs[5])]
    f64 = [x.astype(np.float64) for x in xs]
    ref = f64[0] * f64[1] + f64[2] * f64[3] + f64[4] * f64[5]
    np.testing.assert_allclose(nested_args(pairs, [2.0]), 2 * ref, rtol=1e-5)
    # a tuple holding a list of arrays and a number, beside a plain list of numbers
    extra = ((([xs[6], xs[7]]), 1),)
    np.testing.assert_allclose(nested_args(pairs, (0.5,), extra=extra),
                               0.5 * (ref + f64[6] + f64[7]), rtol=1e-5)
    text = nested_args.trace(pairs, [2.0])[0]
    for n in ("pairs_0_0", "pairs_0_1", "pairs_2_1"):
        assert '"%s"' % n in text


@nki.jit
def dict_arg(d):
    out = nl.ndarray((128, 64), dtype=np.float32, buffer=nl.shared_hbm)
    nl.store(out, nl.load(d["x"]))
    return out


def test_array_in_dict_argument_names_the_cause():
    with pytest.raises(nki.NkiError, match=r"test_pkh_forms.py:\d+: nl.load: expected a tensor, "
                       r"got a NumPy array \[128, 64\] float32: only arrays passed as kernel "
                       r"arguments, or inside list / tuple arguments, become kernel inputs"):
        dict_arg({"x": np.zeros((128, 64), np.float32)})
