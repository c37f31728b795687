"""nl.ndarray(address=) in loop bodies (docs/python.md "Direct allocation"):
NKI 0.x unrolls every loop, nl.affine_range included, so the address is
evaluated in each iteration and a tile gets its own iteration's address --
the NKI Library's qkv_cte puts its PSUM accumulators at
`address=(0, bank_id * 2048)` in an affine_range, and its BufferManager
advances a stack pointer per allocation.  Each kernel is checked against
NumPy."""
import json

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(5)
N, F = 4, 64           # tiles, fp32 elements a row (256 bytes)


def _rows(x, i):
    return x[i * 128:(i + 1) * 128, :]


def _gather_then_store(x, tiles):
    """(inside a kernel) every tile of the list stored after the loop, in
    order: tile i holds what its iteration loaded only if no later
    iteration's tile shares its bytes."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in range(len(tiles)):
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=tiles[i])
    return out


@nki.jit
def by_loop_variable(x):
    """Each iteration's tile at 1024 + i * 256: an address in the loop
    variable."""
    tiles = []
    for i in nl.affine_range(N):
        t = nl.ndarray((128, F), dtype=nl.float32, buffer=nl.sbuf, address=(0, 1024 + i * 4 * F))
        nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
        tiles.append(t)
    return _gather_then_store(x, tiles)


class _Stack:
    """A stack allocator as the NKI Library's BufferManager: every
    allocation at the current pointer, which then moves past it."""

    def __init__(self, base):
        self.cur = base

    def alloc(self, shape):
        t = nl.ndarray(shape, dtype=nl.float32, buffer=nl.sbuf, address=(0, self.cur))
        self.cur += int(np.prod(shape[1:])) * 4
        return t


@nki.jit
def by_stack_pointer(x, loop):
    """Each iteration allocates from one stack allocator (one call site
    for every tile): iteration i's tile is at 2048 + i * 256."""
    sbm, tiles = _Stack(2048), []
    rng = {"affine": nl.affine_range, "sequential": nl.sequential_range, "python": range}[loop]
    for i in rng(N):
        t = sbm.alloc((128, F))
        nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
        tiles.append(t)
    return _gather_then_store(x, tiles)


@pytest.mark.parametrize("loop", ["affine", "sequential", "python"])
def test_address_from_a_stack_pointer_per_iteration_numpy(loop):
    x = RNG.standard_normal((N * 128, F)).astype(np.float32)
    np.testing.assert_array_equal(by_stack_pointer(x, loop), x)
    text = tpbsim.kernel_json(by_stack_pointer, x, loop)
    for i in range(N):
        assert '"addr": %d' % (2048 + i * 4 * F) in text


def test_address_in_the_loop_variable_numpy():
    x = RNG.standard_normal((N * 128, F)).astype(np.float32)
    np.testing.assert_array_equal(by_loop_variable(x), x)
    text = tpbsim.kernel_json(by_loop_variable, x)
    for i in range(N):
        assert '"addr": %d' % (1024 + i * 4 * F) in text


@nki.jit
def psum_bank_per_iteration(x, w):
    """qkv_cte's accumulators: one PSUM tile per bank, allocated in an
    affine_range at address=(0, bank * 2048), each filled by its own
    matmul and read after the loop."""
    ws = nl.ndarray(w.shape, dtype=w.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ws, src=w)
    acc = []
    for b in nl.affine_range(N):
        xs = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=xs, src=x[:, b * 128:(b + 1) * 128])
        ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum, address=(0, b * 2048))
        nisa.nc_matmul(dst=ps, stationary=xs, moving=ws)
        acc.append(ps)
    out = nl.ndarray((N, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    for b in range(N):
        o = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=o, src=acc[b])
        nisa.dma_copy(dst=out[b], src=o)
    return out


def test_psum_bank_per_iteration_numpy():
    x = RNG.standard_normal((128, N * 128)).astype(np.float32)
    w = RNG.standard_normal((128, 512)).astype(np.float32)
    want = np.stack([x[:, b * 128:(b + 1) * 128].T @ w for b in range(N)])
    np.testing.assert_allclose(psum_bank_per_iteration(x, w), want, rtol=1e-4, atol=1e-3)


@nki.jit
def scoped_in_loop(x):
    """A body that allocates from a scope it closes (the library's
    open_scope / close_scope around a block): every iteration uses the
    same bytes, so the body is still traced once."""
    sbm = _Stack(4096)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(N):
        top = sbm.cur
        t = sbm.alloc((128, F))
        u = sbm.alloc((128, F))
        nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
        nisa.tensor_scalar(dst=u, data=t, op0=nl.multiply, operand0=3.0)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=u)
        sbm.cur = top
    return out


def test_address_reused_by_every_iteration_stays_traced_once_numpy():
    x = RNG.standard_normal((N * 128, F)).astype(np.float32)
    body = json.loads(tpbsim.kernel_json(scoped_in_loop, x))["body"]
    loops = [op for op in body if op["op"] == "affine_range"]
    assert len(loops) == 1 and "var" in loops[0]   # one body with a loop variable
    np.testing.assert_array_equal(scoped_in_loop(x), x * np.float32(3.0))


@nki.jit
def pid_placed(x, beta1):
    """Program p's rows through a tile at address 1024 + p * 4F, scaled by
    2 + p; beta1: the activation in its beta-1 form (returns its tile)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    p = nl.program_id(0)
    t = nl.ndarray((128, F), dtype=nl.float32, buffer=nl.sbuf, address=(0, 1024 + p * 4 * F))
    nisa.dma_copy(dst=t, src=x[p * 128:(p + 1) * 128, :])
    if beta1:
        u = nisa.activation(op=nl.copy, data=t, scale=2.0)
    else:
        u = nl.ndarray((128, F), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=u, op=nl.copy, data=t, scale=2.0 + p)
    nisa.dma_copy(dst=out[p * 128:(p + 1) * 128, :], src=u)
    return out


def test_address_in_a_program_id_per_program():
    """An address computed from nl.program_id(): the kernel is traced once per
    program (docs/python.md "Control flow on nl.program_id()"), each program
    its own tile at its own address, and each half comes out of its own program."""
    x = RNG.standard_normal((256, F)).astype(np.float32)
    body = json.loads(tpbsim.kernel_json(pid_placed[2], x, False))["body"]
    assert [op["op"] for op in body] == ["if", "if"]     # one body per program
    want = np.concatenate([x[:128] * np.float32(2.0), x[128:] * np.float32(3.0)])
    np.testing.assert_array_equal(pid_placed[2](x, False), want)


def test_address_in_a_program_id_beta1_per_program_numpy():
    """The same kernel in beta-1 forms (ops that return their tile) is traced
    per program too (its kernel[2] is then beta-1's grid of 2 instances);
    only a grid of more than 256 programs, traced once for all, refuses the
    per-program address by name."""
    x = RNG.standard_normal((256, F)).astype(np.float32)
    body = json.loads(tpbsim.kernel_json(pid_placed[2], x, True))["body"]
    assert [op["op"] for op in body] == ["if", "if"]     # one body per program
    np.testing.assert_array_equal(pid_placed[2](x, True), x * np.float32(2.0))
    with pytest.raises(tpbsim.NkiError, match="an address that depends on nl.program_id"):
        tpbsim.kernel_json(pid_placed[257, 1], np.zeros((257 * 128, F), np.float32), True)
