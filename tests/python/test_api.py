"""tpbsim's API: launch forms, compile() for the tpb CLI, several outputs,
stats, bf16 inputs."""
import json
import os
import subprocess

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

from conftest import ROOT


@nki.jit
def relu_rows(x):
    """Each program handles 128 rows (program id along axis 0)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    p = nl.program_id(0)
    t = nl.ndarray((128, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[p * 128:(p + 1) * 128, :])
    nisa.activation(dst=t, op=nl.relu, data=t)
    nisa.dma_copy(dst=out[p * 128:(p + 1) * 128, :], src=t)
    return out


@pytest.mark.parametrize("grid", [2, nl.nc(2), nl.spmd_dim(4, nl.nc(2)), nl.nc(2) * 2],
                         ids=["g2", "nc2", "spmd_dim4_nc2", "nc2x2"])
def test_launch_forms(grid):
    n = grid if isinstance(grid, int) else grid.n
    x = np.random.default_rng(1).standard_normal((128 * n, 64)).astype(np.float32)
    np.testing.assert_array_equal(relu_rows[grid](x), np.maximum(x, 0))
    text = tpbsim.kernel_json(relu_rows[grid], x)
    assert '"grid"' in text and "pid" in text


@nki.jit
def spmd_copy(a):
    """NKI's SPMD grid example: instance (i, j) copies a[i, j]."""
    b = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i = nl.program_id(0)
    j = nl.program_id(1)
    t = nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[i, j])
    nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=i * 10 + j)
    nisa.dma_copy(dst=b[i, j], src=t)
    return b


# NKI's placements (test_nki_spmd_grid.py): [4, 2] on one core; nc(2) * 2 and
# spmd_dim(nc(2), 2) blocked (core 0: i = 0, 1); 2 * nc(2) and spmd_dim(2, nc(2))
# interleaved (core 0: i = 0, 2)
GRIDS = [((4, 2), '[4, 2]', [0, 0, 0, 0]),
         ((nl.nc(2) * 2, 2), '["nc(2)*2", 2]', [0, 0, 1, 1]),
         ((nl.spmd_dim(nl.nc(2), 2), 2), '["nc(2)*2", 2]', [0, 0, 1, 1]),
         ((2 * nl.nc(2), 2), '["2*nc(2)", 2]', [0, 1, 0, 1]),
         ((nl.spmd_dim(2, nl.nc(2)), 2), '["2*nc(2)", 2]', [0, 1, 0, 1]),
         ((2, nl.nc(4)), '[2, "nc(4)"]', None)]


@pytest.mark.parametrize("grid,text,cores", GRIDS,
                         ids=["4x2", "nc2x2", "spmd_nc2_2", "2xnc2", "spmd_2_nc2", "2_nc4"])
def test_multi_axis_grids(tmp_path, grid, text, cores):
    n = [g if isinstance(g, int) else g.n for g in grid]
    a = np.random.default_rng(2).standard_normal(n + [1, 1]).astype(np.float32)
    k = spmd_copy[grid]
    assert '"grid": %s' % text in tpbsim.kernel_json(k, a)
    want = a + (10 * np.arange(n[0])[:, None] + np.arange(n[1]))[:, :, None, None]
    np.testing.assert_allclose(k(a), want, rtol=1e-6)
    art = tpbsim.compile(k, a, out_dir=str(tmp_path / "art"))
    place = json.load(open(os.path.join(art, "placement.json")))
    by_i = {}
    for inst in place["instances"]:
        by_i.setdefault(inst["program_id"][0], set()).add(inst["core"])
    if cores is None:   # nc(4) on axis 1: instance (i, j) on core j
        assert all(inst["core"] == inst["program_id"][1] for inst in place["instances"])
    else:
        assert [by_i[i] for i in range(4)] == [{c} for c in cores]


def test_bad_grid_annotations():
    with pytest.raises(tpbsim.NkiError, match="one launch-grid axis"):
        spmd_copy[nl.nc(2), nl.nc(2)]
    with pytest.raises(tpbsim.NkiError, match="exactly one argument"):
        nl.spmd_dim(2, 2)


def test_nki_simulate_spelling():
    x = np.ones((128, 64), np.float32)
    np.testing.assert_array_equal(nki.simulate(relu_rows)(x), x)


@nki.jit
def two_outputs(a):
    s = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm, name="s")
    d = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm, name="d")
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    u = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.tensor_scalar(dst=u, data=t, op0=nl.multiply, operand0=2.0)
    nisa.activation(dst=t, op=nl.square, data=t)
    nisa.dma_copy(dst=s, src=t)
    nisa.dma_copy(dst=d, src=u)
    return s, d


def test_two_outputs_bf16_and_stats(tmp_path):
    a = (np.arange(128 * 32, dtype=np.float32).reshape(128, 32) % 16) / 4  # bf16-exact
    r = tpbsim.simulate(two_outputs, nki.typed(a, nl.bfloat16))
    s, d = r.outputs
    np.testing.assert_array_equal(s, a * a)     # squares of these are bf16-exact too
    np.testing.assert_array_equal(d, 2 * a)     # bf16 output as float32 values
    assert r.cycles == r.stats["total_cycles"] > 0
    eng = r.engines()
    assert eng and all(e["instructions"] > 0 for e in eng.values())
    assert sum(e["instructions"] for e in eng.values()) <= r.stats["instructions"]


def test_compile_for_the_cli(tmp_path):
    x = np.random.default_rng(2).standard_normal((128, 64)).astype(np.float32)
    art = str(tmp_path / "art")
    ind = tmp_path / "in"
    assert tpbsim.compile(relu_rows, x, out_dir=art, inputs_dir=str(ind)) == art
    tpb = os.path.join(os.path.dirname(os.path.dirname(os.environ["TPBSIM_LIB"])), "bin", "tpb")
    if not os.access(tpb, os.X_OK):
        pytest.skip("tpb CLI not next to libtpb")
    dis = subprocess.run([tpb, "dis", art], capture_output=True, text=True)
    assert dis.returncode == 0 and "Activation" in dis.stdout + dis.stderr
    sim = subprocess.run([tpb, "sim", art, "--inputs", str(ind), "-q", "-o", str(tmp_path / "out")],
                         capture_output=True, text=True)
    assert sim.returncode == 0, sim.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "out.npy"), np.maximum(x, 0))


@nki.jit
def exchange(x):
    """out[block p] = x[block p] - x[block 1-p] (golden case mc_sendrecv)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    p = nl.program_id(0)
    mine = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    theirs = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=mine, src=x[p * 128:(p + 1) * 128, :])
    nisa.sendrecv(src=mine, dst=theirs, send_to_rank=1 - p, recv_from_rank=1 - p, pipe_id=0)
    nisa.tensor_tensor(dst=mine, data1=mine, data2=theirs, op=nl.subtract)
    nisa.dma_copy(dst=out[p * 128:(p + 1) * 128, :], src=mine)
    return out


def test_sendrecv_two_programs():
    x = np.random.default_rng(3).standard_normal((256, 64)).astype(np.float32)
    out = exchange[nl.nc(2)](x)
    np.testing.assert_array_equal(out[:128], x[:128] - x[128:])
    np.testing.assert_array_equal(out[128:], x[128:] - x[:128])


@nki.jit
def via_scratch(x):
    """An HBM tensor the kernel does not return is scratch."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tmp = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.hbm, name="tmp")
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=tmp, src=x)
    nisa.dma_copy(dst=t, src=tmp)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)
    nisa.dma_copy(dst=out, src=t)
    return out


def test_scratch_hbm():
    x = np.arange(128 * 8, dtype=np.float32).reshape(128, 8)
    assert '"scratch": [{"name": "tmp"' in tpbsim.kernel_json(via_scratch, x)
    np.testing.assert_array_equal(via_scratch(x), x + 1)


@nki.jit
def nl_expressions(x, y):
    """nl.load / nl.store and nl.<op>(...) tile expressions."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    a = nl.load(x)
    b = nl.load(y)
    col = nl.load(x[:, 0:1])
    s = nl.add(nl.exp(a), b)               # tensor_tensor of an activation
    s = nl.multiply(s, col)                # [P, 1] operand: tensor_scalar
    s = nl.subtract(1.0, s)                # scalar first: reverse0
    nl.store(out, value=nl.maximum(s, 0.5))
    return out


def test_nl_expressions():
    r = np.random.default_rng(4)
    x, y = r.standard_normal((128, 32)).astype(np.float32), r.standard_normal((128, 32)).astype(np.float32)
    ref = np.maximum(1.0 - (np.exp(x.astype(np.float64)) + y) * x[:, 0:1], 0.5)
    np.testing.assert_allclose(nl_expressions(x, y), ref, rtol=1e-5, atol=1e-5)
    with pytest.raises(tpbsim.NkiError, match="shapes"):
        nki.jit(lambda x: nl.add(nl.load(x), nl.load(x[0:64])))(x)


def test_threads_trace_and_simulate_independently():
    """No global state: kernels traced, compiled and simulated on several
    threads at once (ctypes releases the GIL inside libtpb)."""
    import threading
    import norms
    r = np.random.default_rng(5)
    xs = [r.standard_normal((128 * (i + 1), 256)).astype(np.float32) for i in range(4)]
    res, errs = [None] * 4, []

    def run(i):
        try:
            res[i] = norms.nki_softmax_kernel(xs[i]) if i % 2 else relu_rows[i + 1, 1](xs[i][:, :64].copy())
        except Exception as e:   # reported below
            errs.append(e)
    th = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    assert not errs, errs
    for i in range(4):
        if i % 2:
            e = np.exp(xs[i] - xs[i].max(1, keepdims=True))
            np.testing.assert_allclose(res[i], e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
        else:
            np.testing.assert_array_equal(res[i], np.maximum(xs[i][:, :64], 0))


@nki.jit
def gather_rows(data, indices):
    """out[p, :] = data[indices[p], :] (NKI's vector_offset gather)."""
    P, F = indices.shape[0], data.shape[1]
    output = nl.ndarray((P, F), dtype=data.dtype, buffer=nl.shared_hbm)
    idx = nl.ndarray((P, 1), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=indices)
    dst = nl.ndarray((P, F), dtype=data.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=dst, src=data.ap(pattern=[[F, P], [1, F]], vector_offset=idx,
                                       indirect_dim=0))
    nisa.dma_copy(dst=output, src=dst)
    return output


@nki.jit
def scatter_rows(src_data, indices, base):
    """out = base; out[indices[p], 8:24] = src_data[p, :] (vector_offset on dst)."""
    P, F = src_data.shape
    out = nl.ndarray(base.shape, dtype=base.dtype, buffer=nl.shared_hbm)
    b = nl.ndarray(base.shape, dtype=base.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=b, src=base)
    nisa.dma_copy(dst=out, src=b)
    src = nl.ndarray((P, F), dtype=src_data.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=src, src=src_data)
    idx = nl.ndarray((P, 1), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=indices)
    nisa.dma_copy(dst=out.ap(pattern=[[base.shape[1], P], [1, F]], offset=8, vector_offset=idx,
                             indirect_dim=0), src=src)
    return out


@nki.jit
def gather_transpose(data, indices):
    """out = data[indices[:, 0], :].T in one DMA (NKI's indirect dma_transpose)."""
    P, F = data.shape[1], indices.shape[0]
    output = nl.ndarray((P, F), dtype=data.dtype, buffer=nl.shared_hbm)
    idx = nl.ndarray((F, 1), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=indices)
    dst = nl.ndarray((P, F), dtype=data.dtype, buffer=nl.sbuf)
    nisa.memset(dst=dst, value=0)
    nisa.dma_transpose(dst=dst, src=data.ap(pattern=[[P, F], [1, P]], vector_offset=idx,
                                            indirect_dim=0), axes=(1, 0))
    nisa.dma_copy(dst=output, src=dst)
    return output


def test_gather_transpose():
    r = np.random.default_rng(9)
    data = r.standard_normal((300, 32)).astype(np.float32)
    ind = r.integers(0, 300, 128).astype(np.uint32).reshape(128, 1)
    np.testing.assert_array_equal(gather_transpose(data, ind), data[ind[:, 0]].T)
    text = tpbsim.kernel_json(gather_transpose, data, ind)
    assert '"axes": [2, 1, 0]' in text and "reshape(300, 1, 32)" in text


@nki.jit
def gather_dims(data, indices, cidx):
    """rows[p, :] = data[2, indices[p], :] (indirect_dim=1) and
    cols[p, :] = data[1, :, cidx[p]] (indirect_dim=2, a strided row)."""
    A, B, C = data.shape
    P, Q = indices.shape[0], cidx.shape[0]
    rows = nl.ndarray((P, C), dtype=data.dtype, buffer=nl.shared_hbm)
    cols = nl.ndarray((Q, B), dtype=data.dtype, buffer=nl.shared_hbm)
    idx = nl.ndarray((P, 1), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=indices)
    ci = nl.ndarray((Q, 1), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ci, src=cidx)
    g = nl.ndarray((P, C), dtype=data.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=g, src=data.ap(pattern=[[C, P], [1, C]], offset=2 * B * C,
                                     vector_offset=idx, indirect_dim=1))
    c = nl.ndarray((Q, B), dtype=data.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=c, src=data.ap(pattern=[[1, Q], [C, B]], offset=B * C,
                                     vector_offset=ci, indirect_dim=2))
    nisa.dma_copy(dst=rows, src=g)
    nisa.dma_copy(dst=cols, src=c)
    return rows, cols


def test_vector_offset_indirect_dim():
    """NKI's indirect_dim: the index scales that dim's stride."""
    r = np.random.default_rng(7)
    data = r.standard_normal((4, 40, 24)).astype(np.float32)
    ind = r.integers(0, 40, 128).astype(np.uint32).reshape(128, 1)
    cid = r.integers(0, 24, 16).astype(np.uint32).reshape(16, 1)
    rows, cols = gather_dims(data, ind, cid)
    np.testing.assert_array_equal(rows, data[2][ind[:, 0], :])
    np.testing.assert_array_equal(cols, data[1][:, cid[:, 0]].T)
    text = tpbsim.kernel_json(gather_dims, data, ind, cid)
    assert '"indirect_dim": 1' in text and '"indirect_dim": 2' in text

    def bad(d, i):   # partition stride 7 is not dim 1's stride (24)
        t = nl.ndarray((128, 1), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=i)
        return d.ap(pattern=[[7, 128], [1, 24]], vector_offset=t, indirect_dim=1)
    with pytest.raises(tpbsim.NkiError, match=r"indirect_dim=1\): pattern"):
        nki.jit(bad)(data, ind)


def test_vector_offset_gather_and_scatter():
    r = np.random.default_rng(6)
    data = r.standard_normal((300, 64)).astype(np.float32)
    ind = r.permutation(300)[:128].astype(np.uint32).reshape(128, 1)
    np.testing.assert_array_equal(gather_rows(data, ind), data[ind[:, 0]])
    src = r.standard_normal((128, 16)).astype(np.float32)
    base = np.zeros((128, 32), np.float32)
    perm = r.permutation(128).astype(np.uint32).reshape(128, 1)
    ref = base.copy()
    ref[perm[:, 0], 8:24] = src
    np.testing.assert_array_equal(scatter_rows(src, perm, base), ref)
    with pytest.raises(tpbsim.NkiError, match="vector_offset"):
        nki.jit(lambda d, i: d.ap(pattern=[[1, 128], [1, 64]], vector_offset=None,
                                  indirect_dim=1))(data, ind)


@nki.jit
def relu_loop(x, n):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    for _ in nl.sequential_range(n):
        nisa.activation(dst=t, op=nl.relu, data=t)
    nisa.dma_copy(dst=out, src=t)
    return out


def test_compile_memory_budget(tmp_path):
    """simulate() / compile() compile under tpb compile's memory budget
    (max_memory=, default 3/4 of physical memory): a loop that unrolls
    past it, or a grid whose programs do not fit, is refused with the
    note that names the budget, and nothing is written."""
    x = np.random.default_rng(3).standard_normal((128, 64)).astype(np.float32)
    with pytest.raises(tpbsim.TpbError, match=r"(?s)field 'range'.*note: the op limit of \d+ comes "
                       r"from the memory limit of 16\.0 MiB.*give a larger max_memory"):
        tpbsim.simulate(relu_loop, x, 60000, max_memory=16 << 20)
    np.testing.assert_array_equal(tpbsim.simulate(relu_loop, x, 60000).outputs, np.maximum(x, 0))
    xs = np.concatenate([x, -x])
    art = str(tmp_path / "art")
    with pytest.raises(tpbsim.TpbError, match=r"estimated memory .* \(2 programs x .*give a larger "
                       r"max_memory to try anyway"):
        tpbsim.compile(relu_rows[2], xs, out_dir=art, max_memory=64 << 10)
    assert not os.path.exists(art)
    assert tpbsim.compile(relu_rows[2], xs, out_dir=art) == art and os.path.isdir(art)
    with pytest.raises(ValueError, match="max_memory"):
        tpbsim.simulate(relu_loop, x, 1, max_memory=-1)
