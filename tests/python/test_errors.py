"""Bad Python kernels raise NkiError/TpbError naming the kernel file:line
and the field; a library error never aborts the interpreter."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

HERE = os.path.basename(__file__)


def _line(fn, text):
    import inspect
    src, start = inspect.getsourcelines(fn)
    return start + next(i for i, l in enumerate(src) if text in l)


def bad_shape(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 256), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)       # a is [128, 512]
    nisa.dma_copy(dst=out, src=t)
    return out


def bad_buffer(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.tensor_tensor(dst=out, data1=a, data2=a, op=nl.add)   # HBM operands
    return out


def bad_arg(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, source=a)
    return out


def bad_dtype(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype="float64x", buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    return out


@pytest.mark.parametrize("fn,text,field", [
    (bad_shape, "nisa.dma_copy(dst=t, src=a)", "field 'src'"),
    (bad_buffer, "nisa.tensor_tensor", "field 'dst'"),
    (bad_arg, "source=a", "source"),
    (bad_dtype, "float64x", "dtype"),
])
def test_error_names_file_line_and_field(fn, text, field):
    a = np.zeros((128, 512), np.float32)
    with pytest.raises(tpbsim.TpbError) as e:
        nki.jit(fn)(a)
    msg = str(e.value)
    assert "%s:%d" % (HERE, _line(fn, text)) in msg, msg
    assert field in msg, msg


def test_loc_reaches_sidecars_and_trace(tmp_path):
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        nisa.activation(dst=t, op=nl.relu, data=t)
        nisa.dma_copy(dst=out, src=t)
        return out
    a = np.linspace(-1, 1, 128 * 512, dtype=np.float32).reshape(128, 512)
    tr = str(tmp_path / "t.json")
    r = tpbsim.simulate(nki.jit(k), a, trace=tr, keep=str(tmp_path / "art"))
    np.testing.assert_array_equal(r.outputs, np.maximum(a, 0))
    assert r.cycles > 0 and r.stats["total_cycles"] == r.cycles
    want = "%s:%d" % (HERE, _line(k, "nisa.activation"))
    side = json.load(open(tmp_path / "art" / "nc0" / "sg0" / "Activation.json"))
    assert any(d["src"] == want for d in side["debug"]), side["debug"]
    assert '"src":"%s"' % want in open(tr).read()


def test_program_id_control_flow_past_256_programs_rejected():
    # a grid of more than 256 programs is traced once for all programs:
    # Python control flow on nl.program_id() stays an error there (smaller
    # grids, beta-1 entry points too, trace per program:
    # tests/python/test_per_program.py)
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        if nl.program_id(0) == 0:
            pass
        return out
    with pytest.raises(tpbsim.NkiError, match="control flow may not depend on nl.program_id"
                                              r"\(\) in a kernel traced once for all programs "
                                              r"\(a launch grid of more than 256 programs"):
        tpbsim.kernel_json(nki.baremetal(k)[257], np.zeros((4, 4), np.float32))


def test_library_errors_do_not_abort(tmp_path):
    code = r"""
import tpbsim
from tpbsim._lib import Context
c = Context()
for text in ['{', '{"body": [{"op": "nope"}]}', '{"body": 3}', '']:
    try:
        c.compile_json(text, "k.json", "%s")
    except tpbsim.TpbError as e:
        print("ERR", e)
try:
    c.sim_load("/nonexistent")
except tpbsim.TpbError as e:
    print("ERR", e)
try:
    c.sim_run()
except tpbsim.TpbError as e:
    print("ERR", e)
print("alive")
""" % str(tmp_path / "o")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.path.join(
                           os.path.dirname(__file__), "..", "..", "python")))
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("ERR") == 6 and p.stdout.strip().endswith("alive"), p.stdout


def test_unsupported_and_python_errors_name_the_line():
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
        v = t.permute((1, 0))
        return out
    with pytest.raises(tpbsim.NkiError) as e:
        nki.jit(k)(np.zeros((128, 512), np.float32))
    assert "%s:%d" % (HERE, _line(k, "t.permute")) in str(e.value)

    def k2(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.topk(val_dst=out, idx_dst=out, src=a, n=4)
        return out
    with pytest.raises(tpbsim.TpbError, match="field 'n'") as e:
        nki.jit(k2)(np.zeros((128, 512), np.float32))
    assert "%s:%d" % (HERE, _line(k2, "nisa.topk")) in str(e.value)

    def k3(a):
        t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
        return t.no_such_attribute
    with pytest.raises(tpbsim.NkiError, match="AttributeError") as e:
        nki.jit(k3)(np.zeros((128, 512), np.float32))
    assert "%s:%d" % (HERE, _line(k3, "no_such_attribute")) in str(e.value)


def test_slice_and_select_methods():
    def k(a):
        out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a.slice(1, 64, 128))
        nisa.dma_copy(dst=out, src=t)
        return out
    a = np.arange(128 * 512, dtype=np.float32).reshape(128, 512)
    np.testing.assert_array_equal(nki.jit(k)(a), a[:, 64:128])


def test_new_op_limits_name_the_line():
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
        m = nl.ndarray((128, 2), dtype=a.dtype, buffer=nl.sbuf)
        nisa.exponential(dst=t, src=t, max_value=m)
        return out
    with pytest.raises(tpbsim.TpbError, match="max_value") as e:
        nki.jit(k)(np.zeros((128, 512), np.float32))
    assert "%s:%d" % (HERE, _line(k, "nisa.exponential")) in str(e.value)


def _copy_kernel(body):
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        body(t)
        nisa.dma_copy(dst=out, src=t)
        return out
    return nki.jit(k)


def test_huge_traced_loop_is_refused_not_walked():
    """affine_range(10**12) used to hang the tracer (min()/max() of the
    range walked every iteration); the front-end's loop limit refuses it."""
    p = subprocess.run([sys.executable, "-c", "import sys; sys.path[:0] = %r\n"
                        "import test_errors as m, numpy as np, tpbsim\n"
                        "try:\n    m._copy_kernel(m._huge_body)(np.zeros((128, 512), np.float32))\n"
                        "except tpbsim.TpbError as e:\n    print(e)\n"
                        % ([os.path.dirname(__file__),
                            os.path.join(os.path.dirname(__file__), "..", "..", "python")],)],
                       capture_output=True, text=True, timeout=60)
    assert "field 'range'" in p.stdout and "runaway loop" in p.stdout, (p.stdout, p.stderr)


def _huge_body(t):
    for i in nl.affine_range(10 ** 12):
        nisa.tensor_copy(dst=t, src=t)


@pytest.mark.parametrize("grid,msg", [
    ("x", "'x' is not an integer"),          # was a bare ValueError
    (2.7, "2.7 is not an integer"),          # was truncated to 2
    (nl.nc(2) * 1, None),
])
def test_launch_grid_sizes_are_integers(grid, msg):
    k = _copy_kernel(lambda t: None)
    if msg is None:
        assert k[grid].grid[0].n == 2
        return
    with pytest.raises(tpbsim.NkiError, match="launch grid axis: " + msg):
        k[grid]


def test_nc_sizes_are_integers():
    with pytest.raises(tpbsim.NkiError, match="nl.nc\\(k\\): '2' is not an integer"):
        nl.nc("2")
    with pytest.raises(tpbsim.NkiError, match="1.5 is not an integer"):
        nl.nc(2) * 1.5


@pytest.mark.parametrize("value,msg", [
    (10 ** 400, "out of the range of a float"),    # was a bare OverflowError
    (float("nan"), "NaN is not a valid immediate"),  # was "unknown tensor or tile 'nan'"
], ids=["huge-int", "nan"])
def test_bad_immediates_name_the_field(value, msg):
    k = _copy_kernel(lambda t: nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=value))
    with pytest.raises(tpbsim.NkiError, match=msg) as e:
        k(np.zeros((128, 512), np.float32))
    assert "field 'operand0'" in str(e.value) and HERE in str(e.value), str(e.value)


def test_negative_ds_size_is_an_error_not_a_numpy_index():
    """nl.ds(0, -64) used to become the slice 0:-64 (448 elements)."""
    def body(t):
        nisa.tensor_copy(dst=t[:, 0:448], src=t[:, nl.ds(0, -64)])
    with pytest.raises(tpbsim.NkiError, match=r"nl.ds\(0, -64\): the start must be >= 0"):
        _copy_kernel(body)(np.zeros((128, 512), np.float32))
