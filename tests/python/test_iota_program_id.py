"""nisa.iota of expressions holding nl.program_id(): a program id is a
per-program constant, so the iota's offset is an expression in it (the
compiler binds `pid` per program) and the kernel stays traced once for all
programs -- also NKI beta-1 kernels, which are never traced per program.
Values against NumPy (docs/python.md "Beta-1 call forms")."""
import json

import numpy as np
import pytest

from tpbsim import NkiError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

G0, G1 = 2, 3


def iota_forms(a):
    """Per program (p0, p1) of a [2, 3] grid, one row of out: the program id
    alone (vLLM's `iota(nl.program_id(1)).reshape((1, 1))`), a row of 8
    offset by it, a mgrid sum with both ids, and a causal-style
    affine_select whose offset holds a program id."""
    out = nl.ndarray((G0 * G1, 1 + 8 + 32 + 16), dtype=nl.int32, buffer=nl.shared_hbm)
    p0, p1 = nl.program_id(0), nl.program_id(1)
    row = out[p0 * G1 + p1]
    one = nisa.iota(p1, dtype=nl.int32).reshape((1, 1))
    nl.store(row[0:1], one[0])
    r8 = nisa.iota(nl.arange(8)[None, :] + p1 * 8 - p0, dtype=nl.int32)
    nl.store(row[1:9], r8[0])
    g = nl.mgrid[0:1, 0:4, 0:8]
    grid = nisa.iota(g.x * 8 + g.y + 100 * p0 + 10 * p1, dtype=nl.int32)
    nl.store(row[9:41], grid.reshape((1, 32))[0])
    ones = nl.full((1, 16), 1, dtype=nl.int32)
    i_p, i_f = nl.arange(1)[:, None], nl.arange(16)[None, :]
    sel = nisa.affine_select(i_f < i_p + 4 * p1 + p0, ones, 0)
    nl.store(row[41:57], sel[0])
    return out


def _want():
    w = np.zeros((G0 * G1, 57), np.int32)
    for p0 in range(G0):
        for p1 in range(G1):
            r = w[p0 * G1 + p1]
            r[0] = p1
            r[1:9] = np.arange(8) + p1 * 8 - p0
            r[9:41] = np.arange(32) + 100 * p0 + 10 * p1
            r[41:57] = np.arange(16) < 4 * p1 + p0
    return w


@pytest.mark.parametrize("entry", [nki.jit, nki.baremetal])
def test_iota_of_program_ids_numpy(entry):
    a = np.zeros((1, 1), np.float32)
    np.testing.assert_array_equal(entry(iota_forms)[G0, G1](a), _want())


def test_iota_of_program_ids_traced_once():
    # one trace for every program: the offsets are expressions in the ids
    k = nki.jit(iota_forms)[G0, G1]
    body = json.dumps(json.loads(k.trace(np.zeros((1, 1), np.float32))[0])["body"])
    assert '"op": "if"' not in body
    assert '"offset": "pid1"' in body and '"offset": "-1*pid0 + 8*pid1"' in body


@nki.jit
def iota_beta2(a):
    """The beta-2 call: offset= a program-id expression."""
    out = nl.ndarray((4, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    t = nl.ndarray((1, 8), dtype=nl.float32, buffer=nl.sbuf)
    nisa.iota(t, [[2, 8]], offset=pid * 16 + 1, channel_multiplier=0)
    nisa.dma_copy(dst=out[pid:pid + 1, :], src=t)
    return out


def test_iota_beta2_program_id_offset_numpy():
    a = np.zeros((1, 1), np.float32)
    want = (np.arange(4)[:, None] * 16 + 1 + 2 * np.arange(8)).astype(np.float32)
    np.testing.assert_array_equal(iota_beta2[4, 1](a), want)
    assert '"op": "if"' not in iota_beta2[4, 1].trace(a)[0]   # not traced per program


def test_program_id_division_refused_naming_it():
    # the one trace for all programs of a grid past 256 programs takes
    # + - * of program ids; a // is arithmetic, not control flow: the error
    # says which
    def k(a):
        out = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
        nl.store(out, nisa.iota(nl.program_id(1) // 2, dtype=nl.int32))
        return out
    with pytest.raises(NkiError, match=r"test_iota_program_id.py:\d+: \(pid1\) // 2: "
                                       r"nl.program_id\(\) takes \+ - and \* by integers"):
        nki.baremetal(k)[2, 129](np.zeros((1, 1), np.float32))

    def k2(a):
        out = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
        nl.store(out, nisa.iota(7 % nl.program_id(0), dtype=nl.int32))
        return out
    with pytest.raises(NkiError, match=r"7 % \(pid\): nl.program_id\(\) takes"):
        nki.baremetal(k2)[257](np.zeros((1, 1), np.float32))
