"""tpbsim.nki.collectives (NKI's nki.collectives) and the LNC launch
kernel[n]: every collective against a NumPy reference on 2 and 4 ranks
whose inputs differ, replica-group subsets, the refusals; kernel[2] on two
cores, kernel[1], too many cores (docs/python.md "Collectives", "Launch:
LNC and grids")."""
import json
import os

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.collectives as ncc
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl
from tpbsim.nki.collectives import ReplicaGroup

RNG = np.random.default_rng(7)


def per_rank(n, shape, **kw):
    """n different arrays (one per rank)."""
    xs = RNG.standard_normal((n,) + shape).astype(np.float32)
    return xs, (lambda r: dict(kw, x=xs[r]))


# ---- kernels written as the NKI Library's collectives tests write them ----

@nki.jit
def collective(x, rg, kind, dst_shape, dim=0, op=nl.add, buf="hbm"):
    """x -> a copy in buf (HBM, as the NKI Library's collectives tests
    write it, or an SBUF tile) -> the collective into a dst in buf -> out."""
    if buf == "hbm":
        src = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm, name="src")
        dst = nl.ndarray(dst_shape, dtype=x.dtype, buffer=nl.shared_hbm, name="dst")
    else:
        src = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        dst = nl.ndarray(dst_shape, dtype=x.dtype, buffer=nl.sbuf)
    out = nl.ndarray(dst_shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=src, src=x)
    if kind == "all_reduce":
        ncc.all_reduce(dsts=[dst], srcs=[src], op=op, replica_group=rg)
    elif kind == "all_gather":
        ncc.all_gather(dsts=[dst], srcs=[src], replica_group=rg, collective_dim=dim)
    elif kind == "reduce_scatter":
        ncc.reduce_scatter(dsts=[dst], srcs=[src], op=op, replica_group=rg, collective_dim=dim)
    elif kind == "all_to_all":
        ncc.all_to_all(dsts=[dst], srcs=[src], replica_group=rg, collective_dim=dim)
    else:   # a permute: rg is the pair list
        ncc.collective_permute(dsts=[dst], srcs=[src], source_target_pairs=rg)
    nisa.dma_copy(dst=out, src=dst)
    return out


def groups_of(n, rg):
    return rg.replica_groups if rg is not None else [list(range(n))]


def group_of(r, n, rg):
    return next(g for g in groups_of(n, rg) if r in g)


NP_OP = {"add": lambda a: a.sum(0), "maximum": lambda a: a.max(0), "minimum": lambda a: a.min(0)}


def run(kernel, n, shape, **kw):
    xs, inputs = per_rank(n, shape, **kw)
    return xs, ncc.run_ranks(kernel, n, inputs).outputs


# ---- every collective on 2 and 4 ranks, inputs differing ----

@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("buf,op", [("hbm", "add"), ("sbuf", "add"), ("sbuf", "maximum"),
                                    ("sbuf", "minimum")])
def test_all_reduce(n, buf, op):
    rg = ReplicaGroup([list(range(n))])
    xs, outs = run(collective, n, (64, 32), rg=rg, kind="all_reduce", dst_shape=(64, 32),
                   op=getattr(nl, op), buf=buf)
    want = NP_OP[op](xs)
    for r in range(n):   # every rank the group's reduction, summed in rank order
        np.testing.assert_allclose(outs[r], want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("buf,dim", [("hbm", 0), ("sbuf", 0), ("sbuf", 1)])
def test_all_gather(n, buf, dim):
    rg = ReplicaGroup([list(range(n))])
    shape = (128 // n if dim == 0 else 32, 16)
    dst = (shape[0] * n, shape[1]) if dim == 0 else (shape[0], shape[1] * n)
    xs, outs = run(collective, n, shape, rg=rg, kind="all_gather", dst_shape=dst, dim=dim,
                   buf=buf)
    want = np.concatenate(list(xs), axis=dim)
    for r in range(n):
        np.testing.assert_array_equal(outs[r], want)


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("buf,op", [("hbm", "add"), ("sbuf", "add"), ("sbuf", "maximum")])
def test_reduce_scatter(n, buf, op):
    rg = ReplicaGroup([list(range(n))])
    rows = 32
    xs, outs = run(collective, n, (rows * n, 16), rg=rg, kind="reduce_scatter",
                   dst_shape=(rows, 16), op=getattr(nl, op), buf=buf)
    red = NP_OP[op](xs)
    for r in range(n):   # rank r keeps piece r of the reduction
        np.testing.assert_allclose(outs[r], red[r * rows:(r + 1) * rows], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n", [2, 4])
def test_all_to_all(n):
    rg = ReplicaGroup([list(range(n))])
    rows = 8
    xs, outs = run(collective, n, (rows * n, 16), rg=rg, kind="all_to_all",
                   dst_shape=(rows * n, 16))
    for r in range(n):   # piece k of rank r's dst = piece r of rank k's src
        want = np.concatenate([xs[k][r * rows:(r + 1) * rows] for k in range(n)])
        np.testing.assert_array_equal(outs[r], want)


@pytest.mark.parametrize("n", [2, 4])
def test_collective_permute_ring(n):
    pairs = [(r, (r + 1) % n) for r in range(n)]
    xs, outs = run(collective, n, (16, 32), rg=pairs, kind="permute", dst_shape=(16, 32))
    for r in range(n):   # each rank receives its predecessor's src
        np.testing.assert_array_equal(outs[r], xs[(r - 1) % n])


@nki.jit
def rank_of(x):
    """rank_id() (a register) stored into a tile, then to HBM."""
    t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    out = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    nisa.register_store(t, ncc.rank_id())
    nisa.dma_copy(dst=out, src=t)
    return out


@pytest.mark.parametrize("n", [2, 4])
def test_rank_id(n):
    outs = ncc.run_ranks(rank_of, n, {"x": np.zeros((1, 1), np.float32)}).outputs
    assert [int(o[0, 0]) for o in outs] == list(range(n))


# ---- replica-group subsets ----

@pytest.mark.parametrize("groups", [[[0, 2], [1, 3]], [[0, 1], [2, 3]]])
def test_all_reduce_subgroups(groups):
    rg = ReplicaGroup(groups)
    xs, outs = run(collective, 4, (32, 16), rg=rg, kind="all_reduce", dst_shape=(32, 16),
                   buf="sbuf")
    for r in range(4):
        g = group_of(r, 4, rg)
        np.testing.assert_allclose(outs[r], xs[g].sum(0), rtol=1e-6, atol=1e-6)


def test_all_gather_and_reduce_scatter_subgroups():
    rg = ReplicaGroup([[0, 2], [1, 3]])
    xs, outs = run(collective, 4, (16, 8), rg=rg, kind="all_gather", dst_shape=(32, 8))
    for r in range(4):
        np.testing.assert_array_equal(outs[r], np.concatenate(xs[group_of(r, 4, rg)]))
    xs, outs = run(collective, 4, (32, 8), rg=rg, kind="reduce_scatter", dst_shape=(16, 8))
    for r in range(4):
        g = group_of(r, 4, rg)
        i = g.index(r)
        np.testing.assert_allclose(outs[r], xs[g].sum(0)[i * 16:(i + 1) * 16], rtol=1e-6,
                                   atol=1e-6)


@nki.jit
def gather_per_core(x):
    """tpbsim's own form: kernel[nl.nc(n)], rank = core = program id; the
    shared HBM input holds every rank's part."""
    p = nl.program_id(0)
    t = nl.ndarray(x.shape[1:], dtype=x.dtype, buffer=nl.sbuf)
    d = nl.ndarray((x.shape[1], x.shape[2] * nl.num_programs()), dtype=x.dtype, buffer=nl.sbuf)
    out = nl.ndarray((x.shape[0],) + d.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=t, src=x[p])
    ncc.all_gather(srcs=[t], dsts=[d], replica_group=ReplicaGroup([[0, 1, 2, 3]]),
                   collective_dim=1)
    nisa.dma_copy(dst=out[p], src=d)
    return out


def test_program_grid_form():
    x = RNG.standard_normal((4, 32, 8)).astype(np.float32)
    got = gather_per_core[nl.nc(4)](x)
    for r in range(4):
        np.testing.assert_array_equal(got[r], np.concatenate(list(x), axis=1))


# ---- refusals ----

@nki.jit
def calls(x, what):
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    u = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=t, src=x)
    rg = ReplicaGroup([[0, 1]])
    if what == "coalesced":
        ncc.all_reduce(srcs=[t, t], dsts=[u, u], replica_group=rg, op=nl.add)
    elif what == "all_gather_v":
        ncc.all_gather_v(srcs=[t], dsts=[u], replica_group=rg, metadata_tensor=t)
    elif what == "all_to_all_v":
        ncc.all_to_all_v(srcs=[t], dsts=[u], replica_group=rg, metadata_tensor=t)
    elif what == "permute_sbuf":
        ncc.collective_permute(srcs=[t], dsts=[u], source_target_pairs=[[0, 1], [1, 0]])
    elif what == "channels":
        ncc.collective_permute_implicit(srcs_by_channel=[[t]], dsts_by_channel=[[u]],
                                        replica_group=rg, channel_ids=[1])
    elif what == "implicit_reduce_op":
        ncc.collective_permute_implicit_reduce([[t]], [[t]], [[u]], rg, nl.subtract)
    elif what == "unsorted":
        ncc.all_reduce(srcs=[t], dsts=[u], replica_group=ReplicaGroup([[1, 0]]), op=nl.add)
    elif what == "priority":
        ncc.all_reduce(srcs=[t], dsts=[u], replica_group=rg, op=nl.add, priority=7)
    else:
        ncc.all_reduce(srcs=[t], dsts=[u], replica_group=rg, op=nl.add)
    nisa.dma_copy(dst=out, src=u)
    return out


@pytest.mark.parametrize("what,msg", [
    ("coalesced", "coalesced collectives"),
    ("all_gather_v", "ncc.all_gather_v is not implemented by tpbsim"),
    ("all_to_all_v", "ncc.all_to_all_v is not implemented by tpbsim"),
    ("permute_sbuf", "NKI's collective_permute takes HBM tensors"),
    ("channels", "consecutive channel ids from 0"),
    ("implicit_reduce_op", "nl.add, nl.minimum or nl.maximum"),
    ("unsorted", "in increasing order"),
    ("priority", "priority"),
])
def test_refusals(what, msg):
    x = np.ones((8, 8), np.float32)
    with pytest.raises(tpbsim.NkiError, match=msg):
        ncc.run_ranks(calls, 2, {"x": x, "what": what})


def test_refusal_names_kernel_line():
    with pytest.raises(tpbsim.NkiError, match=r"test_collectives\.py:\d+: ncc\.all_gather_v"):
        ncc.run_ranks(calls, 2, {"x": np.ones((8, 8), np.float32), "what": "all_gather_v"})


def test_bad_replica_groups():
    with pytest.raises(tpbsim.NkiError, match="more than one group"):
        ReplicaGroup([[0, 1], [1, 2]])
    with pytest.raises(tpbsim.NkiError, match="list of rank lists"):
        ReplicaGroup(3)
    with pytest.raises(tpbsim.NkiError, match="empty group"):
        ReplicaGroup([[]])


def test_all_reduce_hbm_max_refused_by_compiler():
    """A limit of the kernel format (the DMA computes add only), named."""
    xs, inputs = per_rank(2, (8, 8), rg=ReplicaGroup([[0, 1]]), kind="all_reduce",
                          dst_shape=(8, 8), op=nl.maximum)
    with pytest.raises(tpbsim.TpbError, match="add only"):
        ncc.run_ranks(collective, 2, inputs)


def test_run_ranks_refusals():
    x = np.ones((8, 8), np.float32)
    with pytest.raises(tpbsim.NkiError, match="differs between the ranks"):
        ncc.run_ranks(calls, 2, lambda r: {"x": x, "what": "plain" if r else "other"})
    with pytest.raises(tpbsim.NkiError, match="different shapes"):
        ncc.run_ranks(calls, 2, lambda r: {"x": np.ones((8, 8 + r), np.float32), "what": "x"})
    with pytest.raises(tpbsim.NkiError, match="launch grid"):
        ncc.run_ranks(calls[2], 2, {"x": x, "what": "plain"})
    with pytest.raises(tpbsim.NkiError, match="1 to 8 cores"):
        ncc.run_ranks(calls, 9, {"x": x, "what": "plain"})


def test_collective_in_lnc_launch_refused():
    """kernel[2] is ONE rank on two cores (NKI 0.x): tpbsim's ranks are cores."""
    x = np.ones((8, 8), np.float32)
    with pytest.raises(tpbsim.NkiError, match=r"LNC launch \(kernel\[2\]\)"):
        calls[2](x, "plain")


# ---- LNC launch: kernel[n] with one integer ----

@nki.jit
def lnc_recip(x):
    """The SDK's LNC example (nki/get-started/about/lnc.rst): one tile per
    core under LNC=2, both tiles in a loop otherwise."""
    a = nl.ndarray(x.shape[1:], x.dtype, buffer=nl.sbuf)
    b = nl.ndarray(x.shape[1:], x.dtype, buffer=nl.sbuf)
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    if nl.num_programs() == 1:
        for i in range(x.shape[0]):
            nisa.dma_copy(a, x[i])
            nisa.reciprocal(b, a)
            nisa.dma_copy(out[i], b)
    else:
        i = nl.program_id(0)
        nisa.dma_copy(a, x[i])
        nisa.reciprocal(b, a)
        nisa.dma_copy(out[i], b)
    return out


def _cores(art):
    p = os.path.join(art, "placement.json")
    if not os.path.exists(p):
        return None
    return {i["program_id"][0]: i["core"] for i in json.load(open(p))["instances"]}


@pytest.mark.parametrize("launch", ["plain", "1", "2"])
def test_lnc_launch(tmp_path, launch):
    x = RNG.uniform(1, 2, (2, 128, 64)).astype(np.float32)
    k = {"plain": lnc_recip, "1": lnc_recip[1], "2": lnc_recip[2]}[launch]
    art = str(tmp_path / "art")
    r = tpbsim.simulate(k, x, keep=art)
    np.testing.assert_allclose(r.outputs, 1 / x, rtol=1e-3)
    if launch == "2":   # program i on core i, the work split between them
        assert _cores(art) == {0: 0, 1: 1}
        assert r.stats["num_cores"] == 2
        assert '"grid": ["nc(2)"]' in tpbsim.kernel_json(k, x)
    else:
        assert _cores(art) is None and r.stats["num_cores"] == 1


def test_lnc_too_many_cores():
    x = np.ones((4, 128, 64), np.float32)
    with pytest.raises(tpbsim.NkiError, match=r"lnc_recip\[4\]: one integer is the Logical "
                       r"NeuronCore degree .* 1\.\.2 on trn2"):
        lnc_recip[4](x)
    with pytest.raises(tpbsim.NkiError, match=r"1\.\.1 on trn1"):
        tpbsim.simulate(lnc_recip[2], x[:2], target="trn1")


def test_beta1_entry_points_keep_the_grid(tmp_path):
    """Through a beta-1 entry point kernel[n] is beta-1's launch grid: n
    instances one after the other on one core (any n)."""
    x = RNG.uniform(1, 2, (4, 128, 64)).astype(np.float32)
    for k in (nki.baremetal(lnc_recip.fn)[4], nki.jit(lnc_recip.fn, mode="simulation")[4],
              nki.jit(lnc_recip.fn, platform_target="trn2")[2]):
        n = k.grid[0]
        art = str(tmp_path / ("b%d" % n))
        r = tpbsim.simulate(k, x[:n], keep=art)
        np.testing.assert_allclose(r.outputs, 1 / x[:n], rtol=1e-3)
        assert set(_cores(art).values()) == {0}
    np.testing.assert_allclose(nki.simulate_kernel(lnc_recip[4], x), 1 / x, rtol=1e-3)


@nki.jit
def beta1_recip(x):
    """Beta-1 forms (nl.load, an nki.isa op returning its result, nl.store
    with an nl.arange mask): its kernel[n] is beta-1's launch grid."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    i = nl.program_id(0)
    i_f = nl.arange(x.shape[2])[None, :]
    t = nl.load(x[i])
    nl.store(out[i], value=nisa.reciprocal(t), mask=(i_f < x.shape[2]))
    return out


@pytest.mark.parametrize("n", [2, 4])
def test_beta1_forms_keep_the_grid(tmp_path, n):
    x = RNG.uniform(1, 2, (n, 128, 64)).astype(np.float32)
    art = str(tmp_path / "art")
    r = tpbsim.simulate(beta1_recip[n], x, keep=art)
    np.testing.assert_allclose(r.outputs, 1 / x, rtol=1e-3)
    assert set(_cores(art).values()) == {0} and r.stats["num_cores"] == 1


@nki.jit
def pick_rows(tab, idx):
    """tab[rank_id()] (a static per-rank offset) and tab[idx] (idx a
    run-time index read from the rank's own input)."""
    G, H, W = tab.shape
    i = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    a = nl.ndarray((H, W), dtype=tab.dtype, buffer=nl.sbuf)
    b = nl.ndarray((H, W), dtype=tab.dtype, buffer=nl.sbuf)
    out = nl.ndarray((2, H, W), dtype=tab.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=a, src=tab.ap(pattern=[[W, H], [1, W]], scalar_offset=ncc.rank_id(),
                                    indirect_dim=0))
    nisa.dma_copy(dst=i, src=idx)
    nisa.dma_copy(dst=b, src=tab.ap(pattern=[[W, H], [1, W]], offset=0, scalar_offset=i,
                                    indirect_dim=0))
    nisa.dma_copy(dst=out[0], src=a)
    nisa.dma_copy(dst=out[1], src=b)
    return out


def test_rank_offsets_under_run_ranks():
    """Each rank's tab differs; the offsets count the rank's own [G, H, W]."""
    n = 4
    tabs = RNG.standard_normal((n, n, 8, 16)).astype(np.float32)
    idx = [(r + 1) % n for r in range(n)]
    outs = ncc.run_ranks(pick_rows, n, lambda r: {
        "tab": tabs[r], "idx": np.array([[idx[r]]], np.int32)}).outputs
    for r in range(n):
        np.testing.assert_array_equal(outs[r][0], tabs[r][r])
        np.testing.assert_array_equal(outs[r][1], tabs[r][idx[r]])
