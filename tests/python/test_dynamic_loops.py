"""nl.dynamic_range / nl.fori_loop with a register trip count (docs/python.md,
docs/compiler.md "Dynamic loops"): the body is traced once into one
kernel-format dynamic_range op; one kernel runs with several trip counts
read from an input, against NumPy."""
import json

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


def _body(a, b, out, acc, i):
    ta = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
    tb = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a[i * 64:(i + 1) * 64, :])
    nisa.dma_copy(dst=tb, src=b[i * 64:(i + 1) * 64, :])
    nisa.tensor_tensor(dst=tb, data1=ta, data2=tb, op=nl.multiply)
    nisa.dma_copy(dst=out[i * 64:(i + 1) * 64, :], src=tb)
    nisa.tensor_tensor(dst=acc, data1=acc, data2=tb, op=nl.add)


def _kernel(use_fori):
    @nki.jit
    def k(a, b, n):
        out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        tot = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.shared_hbm)
        z = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=z, value=0.0)
        for j in nl.affine_range(a.shape[0] // 64):
            nisa.dma_copy(dst=out[j * 64:(j + 1) * 64, :], src=z)
        acc = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=acc, value=0.0)
        cnt = nisa.register_alloc()
        nisa.register_load(cnt, n)
        if use_fori:
            nl.fori_loop(1, cnt, lambda i: _body(a, b, out, acc, i), step=2)
        else:
            for i in nl.dynamic_range(cnt):
                _body(a, b, out, acc, i)
        nisa.dma_copy(dst=tot, src=acc)
        return out, tot
    return k


def _ref(a, b, idx):
    out = np.zeros_like(a)
    tot = np.zeros((64, 32), np.float32)
    for i in idx:
        blk = a[i * 64:(i + 1) * 64] * b[i * 64:(i + 1) * 64]
        out[i * 64:(i + 1) * 64] = blk
        tot = tot + blk
    return out, tot


@pytest.mark.parametrize("use_fori", [False, True])
def test_dynamic_range_numpy(use_fori):
    r = np.random.default_rng(14)
    a, b = (r.standard_normal((768, 32)).astype(np.float32) for _ in range(2))
    k = _kernel(use_fori)
    for n in (0, 1, 5, 12):   # the compile-time guess is 6 iterations
        out, tot = k(a, b, np.array([[n]], np.int32))
        idx = range(1, n, 2) if use_fori else range(n)
        want_out, want_tot = _ref(a, b, idx)
        np.testing.assert_array_equal(out, want_out)
        np.testing.assert_array_equal(tot, want_tot)


def test_dynamic_range_traced_once():
    a = np.zeros((768, 32), np.float32)
    text = tpbsim.kernel_json(_kernel(False), a, a, np.zeros((1, 1), np.int32))
    loops = [op for op in json.loads(text)["body"] if op["op"] == "dynamic_range"]
    assert len(loops) == 1 and loops[0]["range"][1].startswith("vreg")
    assert sum(op["op"] == "dma_copy" for op in loops[0]["body"]) == 3


def test_dynamic_range_int_bounds_and_errors():
    assert list(nl.dynamic_range(2, 7, 2)) == [2, 4, 6]

    with pytest.raises(tpbsim.NkiError, match="step must be a positive compile-time integer"):
        nl.dynamic_range(0, 8, 0)


# ---- the loop variable as a register (NKI: the body's i is a VirtualRegister) ----

def _index_kernel(lower, upper_int=None):
    """Per iteration i of fori_loop(lower, n, step=2) (n from an input, or
    upper_int): col 0 of row i of out is i, through register_store of the
    loop variable and a run-time row select; col 1 the same through a
    register_move copy of it; row i of rows is row i of x (i as a DMA
    address, as before)."""
    @nki.jit
    def k(x, n):
        out = nl.ndarray((24, 2), dtype=nl.int32, buffer=nl.shared_hbm)
        rows = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        m1 = nl.ndarray((24, 2), dtype=nl.int32, buffer=nl.sbuf)
        nisa.memset(dst=m1, value=-1)
        nisa.dma_copy(dst=out, src=m1)
        z = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.memset(dst=z, value=0.0)
        nisa.dma_copy(dst=rows, src=z)
        cnt = nisa.register_alloc()
        nisa.register_load(cnt, n)
        copy = nisa.register_alloc()

        def body(i):
            t = nl.ndarray((1, 2), dtype=nl.int32, buffer=nl.sbuf)
            nisa.register_store(dst=t[0:1, 0:1], src=i)
            nisa.register_move(dst=copy, src=i)
            nisa.register_store(dst=t[0:1, 1:2], src=copy)
            at = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
            nisa.register_store(dst=at, src=i)
            nisa.dma_copy(dst=out.ap([[2, 1], [1, 2]], offset=0, scalar_offset=at,
                                     indirect_dim=0), src=t)
            r = nl.ndarray((1, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=r, src=x[i:i + 1, :])
            nisa.dma_copy(dst=rows[i:i + 1, :], src=r)
        nl.fori_loop(lower, cnt if upper_int is None else upper_int, body, step=2)
        return out, rows
    return k


def _index_ref(x, idx):
    out = np.full((24, 2), -1, np.int32)
    rows = np.zeros_like(x)
    for i in idx:
        out[i] = i
        rows[i] = x[i]
    return out, rows


def test_loop_variable_as_register_numpy():
    x = np.random.default_rng(9).standard_normal((24, 8)).astype(np.float32)
    k = _index_kernel(1)
    for n in (0, 1, 2, 8, 23):   # 23: 11 iterations, past the guess of 6
        out, rows = k(x, np.array([[n]], np.int32))
        want_out, want_rows = _index_ref(x, range(1, n, 2))
        np.testing.assert_array_equal(out, want_out)
        np.testing.assert_array_equal(rows, want_rows)


def test_loop_variable_as_register_int_bounds():
    # integer bounds: tpbsim unrolls the loop and i is an integer, which
    # register_store writes as NKI's register would hold it
    x = np.random.default_rng(10).standard_normal((24, 8)).astype(np.float32)
    out, rows = _index_kernel(3, 14)(x, np.zeros((1, 1), np.int32))
    want_out, want_rows = _index_ref(x, range(3, 14, 2))
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(rows, want_rows)


def test_loop_variable_register_in_kernel_file_and_errors():
    # the kernel file keeps the variable in a register ("reg") only when the
    # body reads it as one
    x = np.zeros((24, 8), np.float32)
    text = tpbsim.kernel_json(_index_kernel(1), x, np.zeros((1, 1), np.int32))
    loop, = [op for op in json.loads(text)["body"] if op["op"] == "dynamic_range"]
    assert loop["reg"] == loop["var"] + "_reg"
    text = tpbsim.kernel_json(_kernel(False), *(np.zeros((768, 32), np.float32),) * 2,
                              np.zeros((1, 1), np.int32))
    loop, = [op for op in json.loads(text)["body"] if op["op"] == "dynamic_range"]
    assert "reg" not in loop

    def kernel(write):
        @nki.jit
        def k(n):
            cnt = nisa.register_alloc()
            nisa.register_load(cnt, n)

            def body(i):
                if write:
                    nisa.register_move(dst=i, src=0)
                else:
                    nisa.register_store(dst=nl.ndarray((1, 1), dtype=nl.int32,
                                                       buffer=nl.sbuf), src=i * 2)
            nl.fori_loop(0, cnt, body)
            return n
        return k
    with pytest.raises(tpbsim.NkiError, match="field 'dst': the variable of a nl.fori_loop / "
                                              "nl.dynamic_range loop is read-only"):
        kernel(True)(np.zeros((1, 1), np.int32))
    with pytest.raises(tpbsim.NkiError, match="field 'src': expected a register from "
                                              "register_alloc, got Lin"):
        kernel(False)(np.zeros((1, 1), np.int32))


# ---- a register lower bound (NKI: lower and upper are ints or registers) ----

def _from_register_kernel(upper_int, step):
    """fori_loop(lo, hi, step) with lo (and hi, unless upper_int) read from
    an input: row i of out is 2 * row i of x and idx[i] = i, both through
    run-time row selects by the loop variable (a register: its value is
    known only at run time)."""
    @nki.jit
    def k(x, bounds):
        w = x.shape[1]
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        idx = nl.ndarray((x.shape[0], 1), dtype=nl.int32, buffer=nl.shared_hbm)
        z = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.memset(dst=z, value=0.0)
        nisa.dma_copy(dst=out, src=z)
        m1 = nl.ndarray((x.shape[0], 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.memset(dst=m1, value=-1)
        nisa.dma_copy(dst=idx, src=m1)
        b = nl.ndarray((1, 2), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=b, src=bounds)
        lo, hi = nisa.register_alloc(), nisa.register_alloc()
        nisa.register_load(lo, b[0:1, 0:1])
        nisa.register_load(hi, b[0:1, 1:2])

        def body(i):
            row = nl.ndarray((1, w), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=row, src=x.ap([[w, 1], [1, w]], offset=0, scalar_offset=i,
                                            indirect_dim=0))
            nisa.tensor_scalar(dst=row, data=row, op0=nl.multiply, operand0=2.0)
            nisa.dma_copy(dst=out.ap([[w, 1], [1, w]], offset=0, scalar_offset=i,
                                     indirect_dim=0), src=row)
            t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
            nisa.register_store(dst=t, src=i)
            nisa.dma_copy(dst=idx.ap([[1, 1], [1, 1]], offset=0, scalar_offset=t,
                                     indirect_dim=0), src=t)
        nl.fori_loop(lo, hi if upper_int is None else upper_int, body, step=step)
        return out, idx
    return k


@pytest.mark.parametrize("upper_int, step", [(None, 1), (None, 3), (13, 2)])
def test_fori_loop_register_lower_bound_numpy(upper_int, step):
    x = np.random.default_rng(11).standard_normal((24, 8)).astype(np.float32)
    k = _from_register_kernel(upper_int, step)
    # empty, one, a few, more than the guess of 6, an upper bound below the
    # lower one
    for lo, hi in ((5, 5), (4, 5), (3, 9), (2, 23), (9, 3)):
        out, idx = k(x, np.array([[lo, hi]], np.int32))
        want_out, want_idx = np.zeros_like(x), np.full((24, 1), -1, np.int32)
        for i in range(lo, hi if upper_int is None else upper_int, step):
            want_out[i], want_idx[i] = 2 * x[i], i
        np.testing.assert_array_equal(out, want_out)
        np.testing.assert_array_equal(idx, want_idx)


def test_fori_loop_register_lower_bound_kernel_file():
    # the loop counts hi - lo (computed in SBUF, loaded into a register) from
    # 0, and its variable's register starts at lo ("reg_start")
    text = tpbsim.kernel_json(_from_register_kernel(None, 1), np.zeros((24, 8), np.float32),
                              np.zeros((1, 2), np.int32))
    body = json.loads(text)["body"]
    loop, = [op for op in body if op["op"] == "dynamic_range"]
    assert loop["range"][0] == 0 and loop["reg"] == loop["var"] + "_reg"
    assert loop["reg_start"] == "vreg0"
    pre = body[body.index(loop) - 5:body.index(loop)]
    assert [op["op"] for op in pre] == ["register_store", "register_store", "tensor_tensor",
                                        "register_alloc", "register_load"]
    # located at the kernel's fori_loop line, not in tpbsim's language.py
    assert {op["loc"] for op in pre + [loop]} == {loop["loc"]}
    assert loop["loc"].startswith("test_dynamic_loops.py:")

    @nki.jit
    def sliced(x, n):
        lo = nisa.register_alloc()
        nisa.register_load(lo, n)
        nl.fori_loop(lo, 8, lambda i: nisa.dma_copy(dst=x[i:i + 1, :], src=x[0:1, :]))
        return x
    with pytest.raises(tpbsim.NkiError, match="holds a value known at run time only"):
        sliced(np.zeros((8, 8), np.float32), np.zeros((1, 1), np.int32))


# ---- nl.while_loop (NKI 0.6): a register condition tested before each iteration ----

def _while_kernel(other_reg):
    """NKI's while_loop example: acc += val while the count (from an input)
    is non-zero, counting down in SBUF and loading the condition back; each
    iteration also stores acc at row `count` of out (the register
    materialized with register_store as a run-time row select).  (Before
    the dynamic loops dropped a differing last template iteration, this
    body could not be rolled: the front-end's last guess iteration has no
    successor to wait for.)
    other_reg: the body loads the next condition into a register of its own
    and returns that one."""
    @nki.jit
    def k(data, count_input):
        out = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        tot = nl.ndarray((1, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        z = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=z, value=0.0)
        nisa.dma_copy(dst=out, src=z)
        val = nl.ndarray((1, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=val, src=data)
        acc = nl.ndarray((1, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=acc, value=0.0)
        count_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=count_sb, src=count_input)
        one_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.memset(dst=one_sb, value=1)
        row_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        reg = nisa.register_alloc()
        nisa.register_load(reg, count_sb)
        nxt = nisa.register_alloc() if other_reg else reg

        def body(r):
            nisa.tensor_tensor(dst=acc, data1=acc, data2=val, op=nl.add)
            nisa.register_store(row_sb, r)
            nisa.dma_copy(dst=out.ap([[8, 1], [1, 8]], offset=0, scalar_offset=row_sb,
                                     indirect_dim=0), src=acc)
            nisa.tensor_tensor(dst=count_sb, data1=count_sb, data2=one_sb, op=nl.subtract)
            nisa.register_load(nxt, count_sb)
            return nxt

        nl.while_loop(reg, body)
        nisa.dma_copy(dst=tot, src=acc)
        return out, tot
    return k


@pytest.mark.parametrize("other_reg", [False, True])
def test_while_loop_numpy(other_reg):
    """n = 0 (the body never runs), 1, below and above the compile-time
    guess (6 unrolled iterations): acc = n * val, row r of out holds acc
    after the iteration that ran with condition r, the others stay 0."""
    val = np.random.default_rng(5).standard_normal((1, 8)).astype(np.float32)
    k = _while_kernel(other_reg)
    for n in (0, 1, 4, 11):
        out, tot = k(val, np.array([[n]], np.int32))
        want = np.zeros((16, 8), np.float32)
        acc = np.zeros((1, 8), np.float32)
        for r in range(n, 0, -1):
            acc = acc + val
            want[r] = acc[0]
        np.testing.assert_array_equal(tot, acc)
        np.testing.assert_array_equal(out, want)


def test_while_loop_traced_once_and_errors():
    val = np.zeros((1, 8), np.float32)
    text = tpbsim.kernel_json(_while_kernel(True), val, np.zeros((1, 1), np.int32))
    loops = [op for op in json.loads(text)["body"] if op["op"] == "while_loop"]
    assert len(loops) == 1 and loops[0]["cond"].startswith("vreg")
    assert loops[0]["body"][-1]["op"] == "register_move"   # the returned register -> cond

    @nki.jit
    def bad(n):
        r = nisa.register_alloc()
        nisa.register_load(r, n)
        nl.while_loop(r, lambda r: None)
        return n
    with pytest.raises(tpbsim.NkiError, match="must return the register of the next condition"):
        bad(np.zeros((1, 1), np.int32))


# ---- register values at trace time: the documented NkiErrors ----

def _line(marker):
    """The line of this file that holds `marker` (a comment)."""
    with open(__file__) as f:
        lines = [n for n, ln in enumerate(f, 1) if ln.rstrip().endswith(marker)]
    assert len(lines) == 1
    return lines[0]


def test_register_start_variable_index_error():
    # dynamic_range(register, register) (the SDK's about/index loop header):
    # its variable is a register, whose value is known at run time only, so
    # t[i] is docs/python.md's NkiError, not a bare int() TypeError
    @nki.jit
    def k(t):
        out = nl.ndarray((16, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        lower_bound = nisa.register_alloc(0)
        upper_bound = nisa.register_alloc(10)
        for i in nl.dynamic_range(lower_bound, upper_bound):
            s = nl.ndarray((1, 64), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=s, src=t[i])   # index-reg-marker
            nisa.dma_copy(dst=out[0:1, :], src=s)
        return out
    with pytest.raises(tpbsim.NkiError) as e:
        k(np.zeros((16, 64), np.float32))
    assert str(e.value) == (
        "test_dynamic_loops.py:%d: VirtualRegister(dyn_i_reg) holds a value known at run time "
        "only (a register from register_alloc, or the variable of a nl.fori_loop / "
        "nl.dynamic_range from a register start): no arithmetic or slicing at trace time; "
        "index with .ap(scalar_offset=reg) or store it with register_store"
        % _line("# index-reg-marker"))
