"""Python control flow on nl.program_id(): the kernel is traced once per
program (docs/python.md "Control flow on nl.program_id()"); results
checked against NumPy."""
import json

import numpy as np
import pytest

import tpbsim
from tpbsim import NkiError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(7)


@nki.jit
def branchy(a):
    """Core 0: exp of its half; core 1: its half times (pid + 2) in a loop
    whose trip count is the program id, through a tile only it declares."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    rows = a.shape[0] // nl.num_programs()
    t = nl.ndarray((rows, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[pid * rows:(pid + 1) * rows, :])
    if pid == 0:
        nisa.activation(dst=t, op=nl.exp, data=t)
        nisa.dma_copy(dst=out[0:rows, :], src=t)
    else:
        acc = nl.ndarray((rows, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=acc, data1=t, data2=t, op=nl.add)
        for _ in range(pid):   # a Python loop over the program id
            nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
        nisa.dma_copy(dst=out[pid * rows:(pid + 1) * rows, :], src=acc)
    return out


def test_branch_on_program_id_two_cores():
    a = RNG.uniform(-1, 1, (256, 64)).astype(np.float32)
    want = np.concatenate([np.exp(a[:128]), a[128:] * 3])
    np.testing.assert_allclose(branchy[2](a), want, rtol=1e-6, atol=1e-6)


def test_per_program_kernel_file():
    # one `if pid == p` body per program, each with its own ops; the HBM
    # tensors declared once
    a = np.zeros((256, 64), np.float32)
    text = branchy[2].trace(a)[0]
    doc = json.loads(text)
    assert doc["grid"] == ["nc(2)"]
    assert [op["op"] for op in doc["body"]] == ["if", "if"]
    assert [op["cond"] for op in doc["body"]] == ["pid == 0", "pid == 1"]
    ops = [[op["op"] for op in b["body"]] for b in doc["body"]]
    assert "activation" in ops[0] and "tensor_tensor" not in ops[0]
    assert ops[1].count("tensor_tensor") == 2 and "activation" not in ops[1]
    assert len(doc["outputs"]) == 1 and len(doc["inputs"]) == 1
    assert "pid" not in json.dumps(doc["body"][1]["body"])   # concrete ids only


def test_uniform_kernel_traced_once():
    # a kernel that only slices by the program id keeps its one symbolic trace
    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        pid = nl.program_id(0)
        t = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[pid * 128:(pid + 1) * 128, :])
        nisa.dma_copy(dst=out[pid * 128:(pid + 1) * 128, :], src=t)
        return out
    a = RNG.standard_normal((256, 32)).astype(np.float32)
    doc = json.loads(k[2].trace(a)[0])
    assert doc["body"][0]["op"] != "if" and "pid" in json.dumps(doc["body"])
    np.testing.assert_array_equal(k[2](a), a)


@nki.jit
def grid_kernel(a):
    """A [3, 2] grid on one core: program (i, j) handles block (i, j);
    the list of per-row scales is indexed by program_id(0), and column 1
    is negated only by an `if` on program_id(1)."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i, j = nl.program_id(0), nl.program_id(1)
    scale = [1.0, 0.5, 4.0][i]
    t = nl.ndarray((32, 16), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[i * 32:(i + 1) * 32, j * 16:(j + 1) * 16])
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=scale)
    if j == 1:
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=-1.0)
    nisa.dma_copy(dst=out[i * 32:(i + 1) * 32, j * 16:(j + 1) * 16], src=t)
    return out


def test_grid_branch_on_program_ids():
    a = RNG.standard_normal((96, 32)).astype(np.float32)
    want = a.copy()
    for i, s in enumerate([1.0, 0.5, 4.0]):
        want[i * 32:(i + 1) * 32] *= s
    want[:, 16:] *= -1
    np.testing.assert_array_equal(grid_kernel[3, 2](a), want)


def _own_block(a):
    """In a kernel on 2 cores: its output, the program id and the
    program's 128-row block of a [256, 32] input loaded into a tile."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    t = nl.ndarray((128, 32), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[pid * 128:(pid + 1) * 128, :])
    return out, pid, t


def test_grid_on_two_cores_with_barrier():
    # per-core SBUF and a barrier still behave: each core writes its half of
    # a shared scratch, meets the other at the barrier, then reads the other
    # half (branching on which core it is)
    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        scratch = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        pid = nl.program_id(0)
        t = nl.ndarray((128, 32), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[pid * 128:(pid + 1) * 128, :])
        if pid == 0:
            nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)
        else:
            nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=3.0)
        nisa.dma_copy(dst=scratch[pid * 128:(pid + 1) * 128, :], src=t)
        nisa.core_barrier(scratch, (0, 1))
        other = 1 - pid
        u = nl.ndarray((128, 32), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=u, src=scratch[other * 128:(other + 1) * 128, :])
        nisa.dma_copy(dst=out[pid * 128:(pid + 1) * 128, :], src=u)
        return out
    a = RNG.standard_normal((256, 32)).astype(np.float32)
    want = np.concatenate([a[128:] * 3, a[:128] + 1])
    np.testing.assert_allclose(k[2](a), want, rtol=1e-6)


def test_diverging_barriers_rejected():
    @nki.jit
    def k(a):
        out, pid, t = _own_block(a)
        nisa.dma_copy(dst=out[pid * 128:(pid + 1) * 128, :], src=t)
        if pid == 0:
            nisa.core_barrier(out, (0, 1))
        return out
    with pytest.raises(tpbsim.TpbError, match="control flow diverges on the program id: "
                                              "exchange 0"):
        k[2](np.zeros((256, 32), np.float32))


@nki.jit
def tiles_by_program(x):
    """Each program takes its share of x's 128-row tiles (exp of each); with
    fewer tiles than programs the last programs get none, and NKI leaves
    their cores idle."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tiles = (x.shape[0] + 127) // 128
    share = (tiles + nl.num_programs() - 1) // nl.num_programs()
    first = min(tiles, nl.program_id(0) * share)
    for i in range(first, min(tiles, first + share)):
        rows = min(128, x.shape[0] - i * 128)
        t = nl.ndarray((rows, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i * 128:i * 128 + rows, :])
        nisa.activation(dst=t, op=nl.exp, data=t)
        nisa.dma_copy(dst=out[i * 128:i * 128 + rows, :], src=t)
    return out


@pytest.mark.parametrize("rows", [100, 128, 300])
def test_idle_program_on_two_cores(rows):
    # 100 and 128 rows: one tile, program 1 (core 1) runs no op
    x = RNG.uniform(-1, 1, (rows, 48)).astype(np.float32)
    np.testing.assert_allclose(tiles_by_program[2](x), np.exp(x), rtol=1e-6, atol=1e-6)


def test_idle_program_skipping_a_barrier_rejected():
    # program 1 runs nothing, so it never meets program 0 at the barrier:
    # refused at compile time (it would leave core 0 waiting)
    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        if nl.program_id(0) == 0:
            nisa.dma_copy(dst=out, src=a)
            nisa.core_barrier(out, (0, 1))
        return out
    a = np.zeros((128, 32), np.float32)
    assert json.loads(k[2].trace(a)[0])["body"][1]["body"] == []   # program 1: no op
    with pytest.raises(tpbsim.TpbError, match="exchange 0 .* is missing in program 1 but "
                                              "core_barrier in program 0"):
        k[2](a)


def test_beta1_grid_branches_per_program_numpy():
    """A beta-1 entry point's grid (nki.baremetal(k)[2]: two instances on
    one core) is traced per program as well: only program 1 copies."""
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        if nl.program_id(0) == 1:
            nisa.dma_copy(dst=out, src=a)
        return out
    a = RNG.standard_normal((4, 4)).astype(np.float32)
    doc = json.loads(tpbsim.kernel_json(nki.baremetal(k)[2], a))
    assert doc["grid"] == [2] and doc["body"][0]["body"] == []   # program 0: no op
    np.testing.assert_array_equal(nki.baremetal(k)[2](a), a)


def test_private_hbm_is_per_program():
    # nl.private_hbm (and nl.hbm) is every program's own (NKI): both cores
    # stage their block through the same-named private scratch at offset 0;
    # one tensor shared by the two cores would race
    @nki.jit
    def k(a):
        out, pid, t = _own_block(a)
        stage = nl.ndarray((128, 32), dtype=a.dtype, buffer=nl.private_hbm)
        nisa.dma_copy(dst=stage, src=t)
        u = nl.ndarray((128, 32), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=u, src=stage)
        nisa.tensor_scalar(dst=u, data=u, op0=nl.add, operand0=1.0)
        nisa.dma_copy(dst=out[pid * 128:(pid + 1) * 128, :], src=u)
        return out
    a = RNG.standard_normal((256, 32)).astype(np.float32)
    doc = json.loads(k[2].trace(a)[0])
    assert len(doc["scratch"]) == 2   # one staging tensor per program
    np.testing.assert_allclose(k[2](a), a + 1, rtol=1e-6)


def test_program_error_names_the_program():
    # an error only one program's trace meets names that program
    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        pid = nl.program_id(0)
        if pid == 1:
            raise ValueError("no program 1 here")
        nisa.dma_copy(dst=out, src=a)
        return out
    with pytest.raises(NkiError, match=r"no program 1 here \(traced for program 1 of 2, "
                                       r"nl.program_id\(\) 1\)"):
        k[2](np.zeros((4, 4), np.float32))


def test_jit_mode_trace_is_an_lnc_launch():
    """@nki.jit(mode="trace") (the NKI Library's moe_cte) on a kernel in NKI
    0.x forms: kernel[2] is the LNC launch (two cores), and Python control
    flow on the program id is traced per program."""
    @nki.jit(mode="trace")
    def k(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        p = nl.program_id(0)
        t = nl.ndarray((128, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[p * 128:(p + 1) * 128, :])
        if p == 0:                      # Python control flow on the program id
            nisa.activation(dst=t, op=nl.copy, data=t, scale=-1.0)
        nisa.dma_copy(dst=out[p * 128:(p + 1) * 128, :], src=t)
        return out
    x = np.random.default_rng(3).standard_normal((256, 32)).astype(np.float32)
    assert '"grid": ["nc(2)"]' in tpbsim.kernel_json(k[2], x)
    np.testing.assert_array_equal(k[2](x), np.concatenate([-x[:128], x[128:]]))


def test_uniform_programs_exchange_tile_pinned():
    """Programs with the same tensors and op kinds whose operands differ with
    the program id (here which big tile stays live): their allocations differ,
    so the tile sendrecv pulls is pinned to one address on both cores (the
    NKI Library's moe_cte shard_on_I failed with "a direct pull needs one
    address on every core")."""
    @nki.jit
    def k(x):
        out = nl.ndarray((2, 128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
        p = nl.program_id(0)
        a = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.sbuf)
        b = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=a, value=1.0)
        nisa.memset(dst=b, value=2.0)
        keep, drop = (a, b) if p == 0 else (b, a)
        nisa.dma_copy(dst=out[p, :, 0:1], src=drop[:, 0:1])
        t = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[p])
        r = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
        nisa.sendrecv(src=t, dst=r, send_to_rank=1 - p, recv_from_rank=1 - p, pipe_id=0)
        nisa.tensor_tensor(dst=r, data1=r, data2=keep[:, 0:64], op=nl.add)
        nisa.dma_copy(dst=out[p], src=r)
        return out
    x = np.random.default_rng(4).standard_normal((2, 128, 64)).astype(np.float32)
    got = k[2](x)
    np.testing.assert_array_equal(got[0], x[1] + np.float32(1))
    np.testing.assert_array_equal(got[1], x[0] + np.float32(2))


@nki.jit
def head_of_pid(x):
    """pid // 2 and pid % 2 pick the row: arithmetic only a concrete program
    id answers."""
    h = nl.program_id(1) // 2 + nl.program_id(1) % 2
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((1, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[h:h + 1, :])
    nisa.activation(dst=t, op=nl.exp, data=t)
    nisa.dma_copy(dst=out[h:h + 1, :], src=t)
    return out


def test_one_program_grid_takes_program_id_arithmetic():
    """A k[1, 1] grid is one program, program id 0: `pid // n` and `pid % n`
    are traced with that number, as for k[1, 2] (they raised, blaming
    beta-1 forms)."""
    x = RNG.uniform(-1, 1, (4, 8)).astype(np.float32)
    np.testing.assert_allclose(head_of_pid[1, 1](x)[0], np.exp(x[0]), rtol=1e-6)
    both = head_of_pid[1, 2](x)
    np.testing.assert_allclose(both[0:2], np.exp(x[0:2]), rtol=1e-6)


def test_dynamic_loop_on_a_grid_refused_at_the_kernel_line():
    """A run-time loop in a launch of several programs is refused (the split
    per program drops it: docs/compiler.md "Dynamic loops"), naming the
    kernel's fori_loop line and the program count, not tpbsim's own line."""
    @nki.jit
    def k(x, n):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((1, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[0:1, :])
        r = nisa.register_alloc()
        nisa.register_load(r, n)
        nl.fori_loop(0, r, lambda i: nisa.activation(dst=t, op=nl.exp, data=t))
        nisa.dma_copy(dst=out[0:1, :], src=t)
        return out
    line = k.fn.__code__.co_firstlineno + 7   # the decorator's line + 7: nl.fori_loop
    x = np.zeros((2, 8), np.float32)
    with pytest.raises(tpbsim.TpbError, match=r"test_per_program.py:%d: dynamic_range / "
                       r"fori_loop is supported in kernels of one program on one core only "
                       r"\(this launch has 2 programs" % line):
        k[2](x, np.array([[3]], np.int32))
