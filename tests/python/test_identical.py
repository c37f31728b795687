"""The same kernel written in JSON (examples/kernels/*.json) and in Python
compiles to byte-identical .bin streams.  The JSON files use load/store;
Python kernels use nisa.dma_copy, so the JSON is compared with load/store
spelt dma_copy (the NKI beta-2 name)."""
import glob
import json
import os

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl
from tpbsim._lib import Context

from conftest import ROOT


def tensor_add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    M, N = a.shape
    for i in nl.affine_range((M + 127) // 128):
        rows = min(128, M - i * 128)
        ta = nl.ndarray((128, N), dtype=nl.float32, buffer=nl.sbuf)
        tb = nl.ndarray((128, N), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=ta[0:rows, :], src=a[i * 128:(i + 1) * 128, :])
        nisa.dma_copy(dst=tb[0:rows, :], src=b[i * 128:(i + 1) * 128, :])
        nisa.tensor_tensor(dst=ta[0:rows, :], data1=ta[0:rows, :], data2=tb[0:rows, :],
                           op=nl.add)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=ta[0:rows, :])
    return out


def matmul(aT, b):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    sa = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
    sb = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=sa, src=aT)
    nisa.dma_copy(dst=sb, src=b)
    nisa.nc_matmul(dst=ps, stationary=sa, moving=sb)
    nisa.tensor_copy(dst=res, src=ps)
    nisa.dma_copy(dst=out, src=res)
    return out


def softmax(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        negmax = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        sm = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        e = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
        nisa.tensor_reduce(dst=negmax, op=nl.max, data=t, axis=[1], negate=True)
        nisa.activation(dst=e, op=nl.exp, data=t, bias=negmax, reduce_op=nl.add,
                        reduce_res=sm)
        nisa.tensor_scalar(dst=e, data=e, op0=nl.divide, operand0=sm)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=e)
    return out


def attention(qT, kT, v):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    q = nl.ndarray((64, 128), dtype=nl.bfloat16)
    k = nl.ndarray((64, 128), dtype=nl.bfloat16)
    vt = nl.ndarray((128, 64), dtype=nl.bfloat16)
    nisa.dma_copy(dst=q, src=qT)
    nisa.dma_copy(dst=k, src=kT)
    nisa.dma_copy(dst=vt, src=v)
    s_ps = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=s_ps, stationary=q, moving=k, name="qk")
    s = nl.ndarray((128, 128), dtype=nl.float32)
    nisa.tensor_copy(dst=s, src=s_ps, engine=nisa.engine.vector)
    nisa.affine_select(dst=s, pattern=[[-1, 128]], channel_multiplier=1, on_true_tile=s,
                       on_false_value=-30000.0, cmp_op=nl.greater_equal, name="causal_mask")
    negmax = nl.ndarray((128, 1), dtype=nl.float32)
    rowsum = nl.ndarray((128, 1), dtype=nl.float32)
    p = nl.ndarray((128, 128), dtype=nl.bfloat16)
    nisa.tensor_reduce(dst=negmax, op=nl.max, data=s, axis=[1], negate=True)
    nisa.tensor_scalar(dst=negmax, data=negmax, op0=nl.multiply, operand0=0.125)
    nisa.activation(dst=p, op=nl.exp, data=s, scale=0.125, bias=negmax, reduce_op=nl.add,
                    reduce_res=rowsum, name="softmax_exp")
    pT_ps = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.psum)
    nisa.nc_transpose(dst=pT_ps, data=p, engine=nisa.engine.tensor)
    pT = nl.ndarray((128, 128), dtype=nl.bfloat16)
    nisa.tensor_copy(dst=pT, src=pT_ps)
    o_ps = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=o_ps, stationary=pT, moving=vt, name="pv")
    o = nl.ndarray((128, 64), dtype=nl.float32)
    nisa.tensor_scalar(dst=o, data=o_ps, op0=nl.divide, operand0=rowsum)
    nisa.dma_copy(dst=out, src=o)
    return out


def multicore_relu(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    base = nl.program_id(0) * (512 // nl.num_programs())
    for i in nl.affine_range(2):
        t = nl.ndarray((128, 256), dtype=nl.float32)
        nisa.dma_copy(dst=t, src=x[nl.ds(base + i * 128, 128), :])
        nisa.activation(dst=t, op=nl.relu, data=t)
        nisa.dma_copy(dst=out[base + i * 128:base + (i + 1) * 128, :], src=t)
    return out


def _bf16(shape):
    return nki.typed(np.zeros(shape, np.float32), nl.bfloat16)


CASES = [
    ("tensor_add", nki.jit(tensor_add), (np.zeros((300, 512), np.float32),) * 2),
    ("matmul", nki.jit(matmul), (_bf16((128, 128)), _bf16((128, 512)))),
    ("softmax", nki.jit(softmax), (np.zeros((256, 512), np.float32),)),
    ("attention", nki.jit(attention), (_bf16((64, 128)), _bf16((64, 128)), _bf16((128, 64)))),
    ("multicore_relu", nki.jit(multicore_relu)[nl.nc(2)], (np.zeros((512, 256), np.float32),)),
]


def _bins(d):
    files = sorted(glob.glob(os.path.join(d, "**", "*.bin"), recursive=True))
    return {os.path.relpath(f, d): open(f, "rb").read() for f in files}


@pytest.mark.parametrize("name,kernel,args", CASES, ids=[c[0] for c in CASES])
def test_json_and_python_streams_identical(tmp_path, name, kernel, args):
    text = open(os.path.join(ROOT, "examples", "kernels", name + ".json")).read()
    k = json.loads(text)

    def respell(body):
        for op in body:
            if op.get("op") in ("load", "store"):
                op["op"] = "dma_copy"
            respell(op.get("body", []))
    respell(k["body"])
    ctx = Context()
    ctx.compile_json(json.dumps(k), name + ".json", str(tmp_path / "json"))
    tpbsim.compile(kernel, *args, out_dir=str(tmp_path / "py"))
    a, b = _bins(str(tmp_path / "json")), _bins(str(tmp_path / "py"))
    assert a and sorted(a) == sorted(b)
    for f in a:
        assert a[f] == b[f], "%s: %s differs" % (name, f)
