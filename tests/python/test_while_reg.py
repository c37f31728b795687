"""`while reg:` on a VirtualRegister (NKI's dynamic while loop, the parser
front end's form; docs/python.md "Dynamic loops"): the body runs at run
time while the register is non-zero, the condition tested before each
iteration.  tpbsim traces the body once into a kernel-format while_loop op
(the nl.while_loop machinery); one kernel runs with several counts read
from an input, against NumPy."""
import json

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


def _line(marker):
    """The line of this file that holds `marker` (a comment)."""
    with open(__file__) as f:
        lines = [n for n, ln in enumerate(f, 1) if ln.rstrip().endswith(marker)]
    assert len(lines) == 1
    return lines[0]


def _countdown(form, passes=None):
    """NKI's migration-guide loop: `while reg:` whose body stores the
    register to SBUF, decrements it there (tensor_scalar add -1) and loads
    it back.  Each iteration adds val to acc and stores acc at row `reg`
    of out (the register as a run-time row select).
    form: "load" (register_alloc() + register_load), "elem"
    (register_alloc(t[0, 0]), the NKI Library moe_tkg's form), "other"
    (the body loads a register of its own and rebinds the name), "else"
    (a `while ... else:` clause: acc * 10 once after the loop)."""
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
        cond = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=cond, src=count_input)
        if form == "elem":
            reg = nisa.register_alloc(cond[0, 0])
        else:
            reg = nisa.register_alloc()
            nisa.register_load(reg, cond)
        while reg:
            if passes is not None:
                passes.append(1)
            nisa.tensor_tensor(dst=acc, data1=acc, data2=val, op=nl.add)
            nisa.register_store(cond, reg)
            nisa.dma_copy(dst=out.ap([[8, 1], [1, 8]], offset=0, scalar_offset=cond,
                                     indirect_dim=0), src=acc)
            nisa.tensor_scalar(cond, cond, nl.add, -1)
            if form == "other":
                nxt = nisa.register_alloc()
                nisa.register_load(nxt, cond)
                reg = nxt
            else:
                nisa.register_load(reg, cond)
        else:
            if form == "else":
                nisa.tensor_scalar(dst=acc, data=acc, op0=nl.multiply, operand0=10.0)
        nisa.dma_copy(dst=tot, src=acc)
        return out, tot
    return k


@pytest.mark.parametrize("form", ["load", "elem", "other", "else"])
def test_while_reg_countdown_numpy(form):
    """n = 0 (the body never runs), 1, below and above the compiler's guess
    (6 unrolled iterations): acc = n * val, row r of out holds acc after
    the iteration that ran with register value r, the other rows stay 0."""
    val = np.random.default_rng(7).standard_normal((1, 8)).astype(np.float32)
    k = _countdown(form)
    for n in (0, 1, 4, 11):
        out, tot = k(val, np.array([[n]], np.int32))
        want = np.zeros((16, 8), np.float32)
        acc = np.zeros((1, 8), np.float32)
        for r in range(n, 0, -1):
            acc = acc + val
            want[r] = acc[0]
        if form == "else":
            acc = acc * np.float32(10)
        np.testing.assert_array_equal(tot, acc)
        np.testing.assert_array_equal(out, want)


def test_while_reg_traced_once():
    """The body is traced once into one while_loop op on the register, the
    ops after the loop outside it; a rebound register is moved into the
    condition at the end of the body (as nl.while_loop's returned one)."""
    passes = []
    val = np.zeros((1, 8), np.float32)
    text = tpbsim.kernel_json(_countdown("load", passes), val, np.zeros((1, 1), np.int32))
    assert passes == [1]
    body = json.loads(text)["body"]
    loops = [op for op in body if op["op"] == "while_loop"]
    assert len(loops) == 1 and loops[0]["cond"].startswith("vreg")
    assert body[-1]["op"] == "dma_copy" and loops[0]["body"][-1]["op"] == "register_load"
    other = json.loads(tpbsim.kernel_json(_countdown("other"), val, np.zeros((1, 1), np.int32)))
    loop, = [op for op in other["body"] if op["op"] == "while_loop"]
    assert loop["body"][-1] == {"op": "register_move", "dst": loop["cond"],
                                "src": loop["body"][-2]["dst"], "loc": loop["loc"]}


def test_while_reg_immediate_zero():
    """register_alloc(0): the loop runs zero times, the ops after it run."""
    @nki.jit
    def k(x):
        out = nl.ndarray((4, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((4, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        c = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.memset(dst=c, value=0)
        reg = nisa.register_alloc(0)
        while reg:
            nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=100.0)
            nisa.register_load(reg, c)
        nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)
        nisa.dma_copy(dst=out, src=t)
        return out
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    np.testing.assert_array_equal(k(x), x + 1)


# ---- the forms refused: an NkiError (or compile error) naming the line ----

def _refused(form):
    @nki.jit
    def k(n):
        c = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=c, src=n)
        reg = nisa.register_alloc()
        nisa.register_load(reg, c)
        if form == "if":
            if reg:   # if-marker
                nisa.register_load(reg, c)
        elif form == "not":
            while not reg:   # not-marker
                nisa.register_load(reg, c)
        elif form == "and":
            while reg and n is not None:   # and-marker
                nisa.register_load(reg, c)
        elif form == "bool":
            flag = bool(reg)   # bool-marker
            assert flag is None
        elif form == "ne":
            while reg != 0:   # ne-marker
                nisa.register_load(reg, c)
        elif form == "break":
            while reg:
                nisa.register_load(reg, c)
                for _ in range(2):
                    break   # a loop's own break: taken
                break   # break-marker
        elif form == "return":
            while reg:
                nisa.register_load(reg, c)
                return n   # return-marker
        elif form == "empty":
            while reg:   # empty-marker
                pass
        out = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=c)
        return out
    return k


_TRUTH = ("a register's truth value is known at run time only: it can be the whole condition "
          "of a `while` loop (`while reg:`, NKI's dynamic while loop, run on the device), "
          "nothing else (`if reg:`, `not reg`, `reg and ...`, bool(reg))")
_LEAVE = ("the loop runs on the device while the register is non-zero, its body traced once, "
          "so it ends only by its condition (set the register to 0)")


@pytest.mark.parametrize("form, want", [
    ("if", "VirtualRegister(vreg0): " + _TRUTH),
    ("not", "VirtualRegister(vreg0): " + _TRUTH),
    ("and", "VirtualRegister(vreg0): " + _TRUTH),
    ("bool", "VirtualRegister(vreg0): " + _TRUTH),
    ("ne", "VirtualRegister(vreg0) compared with 0: a register's value is known at run time "
     "only; the condition of NKI's dynamic while loop is the register itself (`while reg:`, "
     "run while it is non-zero)"),
    ("break", "`break` in the body of `while reg:` (line %d): " + _LEAVE),
    ("return", "`return` in the body of `while reg:` (line %d): " + _LEAVE),
])
def test_while_reg_refused(form, want):
    """Each before any op of the body is traced (a Python loop that would
    unroll forever, a register counted as true or as != 0, before)."""
    line = _line("# %s-marker" % form)
    if "%d" in want:   # the `while reg:` line above the marker
        want = want % (line - (4 if form == "break" else 2))
    with pytest.raises(tpbsim.NkiError) as e:
        _refused(form)(np.zeros((1, 1), np.int32))
    assert str(e.value) == "test_while_reg.py:%d: %s" % (line, want)


def test_while_reg_empty_body_refused():
    """A body with no instruction never sets the register: at run time a
    non-zero condition loops forever, so the compiler refuses it (before,
    the empty loop was dropped and the kernel ran on)."""
    with pytest.raises(tpbsim.TpbError) as e:
        _refused("empty")(np.zeros((1, 1), np.int32))
    assert ("test_while_reg.py:%d: while_loop: the body does not set the condition register "
            "(it has no instruction: a non-zero condition would loop forever)"
            % _line("# empty-marker")) in str(e.value)
