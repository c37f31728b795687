"""nki.isa random-number ops (rng, rand2, rand_get_state, rand_set_state,
set_rng_seed), dma_compute, the register ops, a gather over a reshaped HBM
tensor and the rounding nl functions (floor, ceil,
trunc, negative, fmod): each Python call maps to the same kernel-format op
(identical streams), and they run against NumPy."""
import os
import sys

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_ops import mapping_identical  # noqa: E402

TILES = [("r", [16, 32], "uint32", "sbuf"), ("r8", [16, 32], "int8", "sbuf"),
         ("u", [16, 32], "float32", "sbuf"), ("col", [16, 1], "float32", "sbuf"),
         ("st6", [16, 6], "uint32", "sbuf"), ("st24", [16, 24], "uint32", "sbuf"),
         ("seed", [1, 1], "uint32", "sbuf")]

CASES = {
    "rng": (lambda T: nisa.rng(dst=T["r"]), {"op": "rng", "dst": "r"}),
    "rng_gpsimd": (lambda T: nisa.rng(dst=T["r8"], engine=nisa.engine.gpsimd),
                   {"op": "rng", "dst": "r8", "engine": "pool"}),
    "rand2": (lambda T: nisa.rand2(dst=T["u"], min=T["col"], max=4.0),
              {"op": "rand2", "dst": "u", "min": "col", "max": 4.0}),
    "rand_get_state": (lambda T: nisa.rand_get_state(dst=T["st6"]),
                       {"op": "rand_get_state", "dst": "st6"}),
    "rand_set_state_vector": (lambda T: nisa.rand_set_state(src_seeds=T["st24"],
                                                            engine=nisa.engine.vector),
                              {"op": "rand_set_state", "src_seeds": "st24", "engine": "dve"}),
    "set_rng_seed": (lambda T: nisa.set_rng_seed(src_seeds=T["seed"]),
                     {"op": "set_rng_seed", "src_seeds": "seed"}),
    "dma_compute": (lambda T: nisa.dma_compute(dst=T["u"], srcs=[T["u"], T["u"]],
                                               reduce_op=nl.add, scales=[0.5, 2.0]),
                    {"op": "dma_compute", "dst": "u", "srcs": ["u", "u"], "reduce_op": "add",
                     "scales": [0.5, 2.0]}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_rng_mapping_identical(tmp_path, case):
    call, op = CASES[case]
    mapping_identical(tmp_path, TILES, lambda T, a: call(T), op, shape=(16, 32))


@nki.jit
def state_roundtrip(seeds):
    """rand_set_state, rand_get_state, rng twice around a restore."""
    P = seeds.shape[0]
    outs = [nl.ndarray((P, 64), dtype=nl.uint32, buffer=nl.shared_hbm) for _ in range(2)]
    s = nl.ndarray((P, 24), dtype=nl.uint32, buffer=nl.sbuf)
    g = nl.ndarray((P, 24), dtype=nl.uint32, buffer=nl.sbuf)
    a = nl.ndarray((P, 64), dtype=nl.uint32, buffer=nl.sbuf)
    b = nl.ndarray((P, 64), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=seeds)
    nisa.rand_set_state(src_seeds=s, engine=nisa.engine.vector)
    nisa.rand_get_state(dst=g, engine=nisa.engine.vector)
    nisa.rng(dst=a)
    nisa.rand_set_state(src_seeds=g, engine=nisa.engine.vector)
    nisa.rng(dst=b)
    nisa.dma_copy(dst=outs[0], src=a)
    nisa.dma_copy(dst=outs[1], src=b)
    return tuple(outs)


def test_state_save_restore_repeats():
    seeds = np.random.default_rng(3).integers(1, 2**32, (32, 24), dtype=np.uint64)
    a, b = state_roundtrip(seeds.astype(np.uint32))
    np.testing.assert_array_equal(a, b)
    assert len(np.unique(a)) > a.size - 4      # 32-bit draws: (almost) no repeats


@nki.jit
def uniform(seed):
    out = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    sd = nl.ndarray((1, 1), dtype=nl.uint32, buffer=nl.sbuf)
    u = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=sd, src=seed)
    nisa.set_rng_seed(src_seeds=sd)
    nisa.rand2(dst=u, min=-2.0, max=6.0)
    nisa.dma_copy(dst=out, src=u)
    return out


def test_rand2_distribution_and_determinism():
    a = uniform(np.array([[11]], np.uint32))
    assert a.min() >= -2.0 and a.max() <= 6.0
    assert abs(a.mean() - 2.0) < 0.05           # 32768 draws: 3 sigma is 0.04
    hist, _ = np.histogram(a, bins=8, range=(-2.0, 6.0))
    assert hist.min() > 0.9 * a.size / 8        # flat within 10 % per bin
    np.testing.assert_array_equal(a, uniform(np.array([[11]], np.uint32)))
    assert not np.array_equal(a, uniform(np.array([[12]], np.uint32)))


@nki.jit
def rounding(x, y):
    outs = [nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm) for _ in range(5)]
    tx, ty = nl.load(x), nl.load(y)
    for o, v in zip(outs, (nl.floor(tx), nl.ceil(tx), nl.trunc(tx), nl.negative(tx),
                           nl.fmod(tx, ty))):
        nl.store(o, value=v)
    return tuple(outs)


def test_rounding_functions_numpy():
    r = np.random.default_rng(8)
    x = r.uniform(-9.0, 9.0, (64, 32)).astype(np.float32)
    y = (r.uniform(0.5, 3.0, (64, 32)) * r.choice([-1.0, 1.0], (64, 32))).astype(np.float32)
    fl, ce, tr, ng, fm = rounding(x, y)
    for got, want in ((fl, np.floor(x)), (ce, np.ceil(x)), (tr, np.trunc(x)), (ng, -x),
                      (fm, np.fmod(x, y))):
        np.testing.assert_array_equal(got, want)


@nki.jit
def fma(a, b):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_compute(dst=t, srcs=[a, b], reduce_op=nl.add, scales=[1.5, -2.0])
    nisa.dma_copy(dst=out, src=t)
    return out


def test_dma_compute_numpy():
    r = np.random.default_rng(9)
    a, b = (r.standard_normal((32, 40)).astype(np.float32) for _ in range(2))
    np.testing.assert_array_equal(fma(a, b), a * np.float32(1.5) + b * np.float32(-2.0))


@nki.jit
def registers(off):
    """register_alloc / move / load / store through SBUF and HBM."""
    outs = [nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm) for _ in range(3)]
    t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    a = nisa.register_alloc(5)
    b = nisa.register_alloc()
    nisa.register_load(b, off)                 # from HBM
    c = nisa.register_alloc(None)
    nisa.register_move(c, b)
    nisa.register_store(t, c)                  # to SBUF
    nisa.dma_copy(dst=outs[0], src=t)
    nisa.register_store(outs[1], a)            # to HBM
    nisa.register_move(a, -3)
    nisa.register_store(outs[2], a)
    return tuple(outs)


def test_registers_numpy():
    x, y, z = registers(np.array([[1234]], np.int32))
    assert (int(x[0, 0]), int(y[0, 0]), int(z[0, 0])) == (1234, 5, -3)
    with pytest.raises(tpbsim.NkiError, match="expected a register"):
        nki.jit(lambda o: nisa.register_move(5, 1) or o)(np.zeros((1, 1), np.int32))


@nki.jit
def gather_reshaped(table, idx):
    """A vector_offset gather over a 3-D HBM table viewed as 2-D (reshape)."""
    out = nl.ndarray((32, 24), dtype=nl.float32, buffer=nl.shared_hbm)
    ti = nl.ndarray((32, 1), dtype=nl.int32, buffer=nl.sbuf)
    tg = nl.ndarray((32, 24), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ti, src=idx)
    t2 = table.reshape((128, 24))
    nisa.dma_copy(dst=tg, src=t2.ap(pattern=[[24, 32], [1, 24]], offset=0, vector_offset=ti,
                                    indirect_dim=0))
    nisa.dma_copy(dst=out, src=tg)
    return out


def test_gather_over_reshape_numpy():
    r = np.random.default_rng(10)
    t = r.standard_normal((8, 16, 24)).astype(np.float32)
    i = r.integers(0, 128, (32, 1)).astype(np.int32)
    np.testing.assert_array_equal(gather_reshaped(t, i), t.reshape(128, 24)[i[:, 0]])
