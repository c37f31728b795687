"""NKI's ring collectives (ncc.collective_permute_implicit, _reduce and
current_processing_rank_id; python/tpbsim/nki/_ring.py): an all-gather
written as the NKI Library's fine-grained kernels write it -- each step
stores the chunk it holds at the place of the rank it came from, read from
current_processing_rank_id as a run-time offset -- on SBUF and HBM, one and
two channels, steps unrolled and in a sequential_range; a ring reduce;
checked against NumPy."""
import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.collectives as ncc
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl
from tpbsim.nki.collectives import ReplicaGroup

RNG = np.random.default_rng(11)
ROWS, COLS = 16, 32


@nki.jit
def ring_gather(x, n, groups, buf, channels, loop):
    """x [ROWS, COLS] of this rank -> out [n * ROWS, COLS]: the group's
    chunks at their ranks' rows (ranks outside the group: zeros)."""
    rg = ReplicaGroup(groups)
    out = nl.ndarray((n * ROWS, COLS), dtype=x.dtype, buffer=nl.shared_hbm)
    zero = nl.ndarray((n * ROWS, COLS), dtype=x.dtype, buffer=nl.sbuf)
    nisa.memset(dst=zero, value=0.0)
    nisa.dma_copy(dst=out, src=zero)
    space = nl.sbuf if buf == "sbuf" else nl.shared_hbm
    bufs = [nl.ndarray((ROWS, COLS), dtype=x.dtype, buffer=space, name="b%d" % i)
            for i in range(2)]
    nisa.dma_copy(dst=bufs[0], src=x)
    per = COLS // channels   # channels split the free dim, as fg_allgather's do

    def place(b, step):
        for c in range(channels):
            who = ncc.collective_permute_implicit_current_processing_rank_id(
                iteration_id=step, replica_group=rg, channel_id=c)
            t = nl.ndarray((ROWS, per), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=b[:, c * per:(c + 1) * per])
            # the rank's chunk: dim 0 of the [n, ROWS * COLS] view moves by whole chunks
            nisa.dma_copy(dst=out.reshape((n, ROWS * COLS)).ap(
                [[COLS, ROWS], [1, per]], offset=c * per, scalar_offset=who,
                indirect_dim=0), src=t)

    def send(src, dst):
        ncc.collective_permute_implicit(
            srcs_by_channel=[[src[:, c * per:(c + 1) * per]] for c in range(channels)],
            dsts_by_channel=[[dst[:, c * per:(c + 1) * per]] for c in range(channels)],
            replica_group=rg, channel_ids=list(range(channels)))

    size = len(groups[0])
    place(bufs[0], 0)
    if loop:
        for s in nl.sequential_range(1, size):
            send(bufs[0], bufs[1])
            nisa.dma_copy(dst=bufs[0], src=bufs[1])
            place(bufs[0], s)
    else:
        for s in range(1, size):
            send(bufs[(s - 1) % 2], bufs[s % 2])
            place(bufs[s % 2], s)
    return out


def want_gather(xs, n, groups):
    want = np.zeros((n * ROWS, COLS), np.float32)
    outs = []
    for r in range(n):
        g = next(g for g in groups if r in g)
        w = want.copy()
        for q in g:
            w[q * ROWS:(q + 1) * ROWS] = xs[q]
        outs.append(w)
    return outs


@pytest.mark.parametrize("buf", ["sbuf", "hbm"])
@pytest.mark.parametrize("n,groups,channels,loop", [
    (4, [[0, 1, 2, 3]], 1, False),
    (4, [[0, 1, 2, 3]], 2, False),
    (4, [[0, 1, 2, 3]], 1, True),
    (4, [[0, 1], [2, 3]], 2, True),
    (4, [[3, 1, 0, 2]], 1, False),     # a ring in the group's listed order
])
def test_ring_all_gather_numpy(buf, n, groups, channels, loop):
    xs = RNG.standard_normal((n, ROWS, COLS)).astype(np.float32)
    outs = ncc.run_ranks(ring_gather, n, lambda r: dict(
        x=xs[r], n=n, groups=groups, buf=buf, channels=channels, loop=loop)).outputs
    for got, want in zip(outs, want_gather(xs, n, groups)):
        np.testing.assert_array_equal(got, want)


@nki.jit
def ring_steps(x, groups, steps):
    """Each rank's x sent `steps` times round the ring; out = what it holds
    and, in row 0 of `who`, current_processing_rank_id(steps)."""
    rg = ReplicaGroup(groups)
    a = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    b = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=x)
    for _ in range(steps):
        ncc.collective_permute_implicit([[a]], [[b]], rg)
        nisa.tensor_copy(dst=a, src=b)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=a)
    who = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.register_store(who, ncc.collective_permute_implicit_current_processing_rank_id(
        steps, rg))
    w = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=w, src=who)
    return out, w


@pytest.mark.parametrize("steps", [0, 1, 2, 5])
def test_processing_rank_is_where_the_data_came_from(steps):
    groups = [[0, 2, 1]]
    xs = RNG.standard_normal((3, 8, 8)).astype(np.float32)
    res = ncc.run_ranks(ring_steps, 3, lambda r: dict(x=xs[r], groups=groups,
                                                      steps=steps)).outputs
    g = groups[0]
    for r, (got, who) in enumerate(res):
        src = g[(g.index(r) - steps) % 3]
        assert int(np.asarray(who).reshape(-1)[0]) == src
        np.testing.assert_array_equal(got, xs[src])


@nki.jit
def ring_reduce(a, b, op):
    rg = ReplicaGroup([[0, 1, 2, 3]])
    ta = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    tb = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    d = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    nisa.dma_copy(dst=tb, src=b)
    ncc.collective_permute_implicit_reduce([[ta]], [[tb]], [[d]], rg, op)
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=d)
    return out


@pytest.mark.parametrize("op,np_op", [(nl.add, np.add), (nl.maximum, np.maximum),
                                      (nl.minimum, np.minimum)])
def test_ring_reduce_numpy(op, np_op):
    a = RNG.standard_normal((4, 8, 16)).astype(np.float32)
    b = RNG.standard_normal((4, 8, 16)).astype(np.float32)
    outs = ncc.run_ranks(ring_reduce, 4, lambda r: dict(a=a[r], b=b[r], op=op)).outputs
    for r, got in enumerate(outs):
        p = (r - 1) % 4    # the predecessor's reduced pair
        np.testing.assert_array_equal(got, np_op(a[p], b[p]))


def test_nc_grid_ring():
    """kernel[nl.nc(4)]: rank = program id; the same gather (shared HBM:
    each program writes its own output)."""
    @nki.jit
    def k(x):
        rg = ReplicaGroup([[0, 1, 2, 3]])
        p = nl.program_id(0)
        out = nl.ndarray((4, 4 * ROWS, COLS), dtype=x.dtype, buffer=nl.shared_hbm)
        a = nl.ndarray((ROWS, COLS), dtype=x.dtype, buffer=nl.sbuf)
        b = nl.ndarray((ROWS, COLS), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a, src=x[p])
        for s in range(4):
            if s:
                ncc.collective_permute_implicit([[a]], [[b]], rg)
                nisa.tensor_copy(dst=a, src=b)
            who = ncc.collective_permute_implicit_current_processing_rank_id(s, rg)
            nisa.dma_copy(dst=out[p].reshape((4, ROWS * COLS)).ap(
                [[COLS, ROWS], [1, COLS]], offset=0, scalar_offset=who, indirect_dim=0), src=a)
        return out
    xs = RNG.standard_normal((4, ROWS, COLS)).astype(np.float32)
    got = k[nl.nc(4)](xs)
    for p in range(4):
        np.testing.assert_array_equal(got[p], xs.reshape(4 * ROWS, COLS))


def test_rings_of_one_rank_copy_numpy():
    """Groups of one rank: each rank is its own successor (dst = its src,
    after the dst was filled with something else)."""
    @nki.jit
    def k(x):
        rg = ReplicaGroup([[0], [1]])
        a = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        b = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a, src=x)
        nisa.memset(dst=b, value=7.0)
        ncc.collective_permute_implicit([[a]], [[b]], rg)
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=b)
        return out
    xs = RNG.standard_normal((2, 8, 8)).astype(np.float32)
    outs = ncc.run_ranks(k, 2, lambda r: dict(x=xs[r])).outputs
    for r in range(2):
        np.testing.assert_array_equal(outs[r], xs[r])
