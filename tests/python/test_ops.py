"""Each nki.isa op's argument mapping: a one-op kernel written with the
Python API and the same op written in the kernel format (the docs'
examples, docs/kernel-format.md) compile to identical streams."""
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

TILES = [("t", [128, 512], "float32", "sbuf"), ("u", [128, 512], "float32", "sbuf"),
         ("g", [128, 64], "float32", "sbuf"), ("gT", [64, 128], "float32", "sbuf"),
         ("col", [128, 1], "float32", "sbuf"), ("sum", [128, 1], "float32", "sbuf"),
         ("row", [1, 512], "float32", "sbuf"), ("ix", [128, 4], "uint16", "sbuf"),
         ("lg", [128, 64, 2], "float32", "sbuf"), ("w8", [128, 128], "float8_e4m3fn", "sbuf"),
         ("m8", [128, 512], "float8_e4m3fn", "sbuf"), ("mv", [128, 512], "bfloat16", "sbuf"),
         ("sc", [128, 16], "uint8", "sbuf"), ("wt", [128, 128], "bfloat16", "sbuf"),
         ("ps", [128, 512], "float32", "psum"), ("top", [128, 8], "float32", "sbuf"),
         ("pos", [128, 8], "uint32", "sbuf"), ("ii", [128, 512], "int32", "sbuf"),
         ("tt", [32, 32], "float32", "sbuf"), ("tT", [32, 32], "float32", "sbuf"),
         ("ssc", [4, 128], "uint8", "sbuf"), ("msc", [4, 512], "uint8", "sbuf"),
         ("idx", [128, 1], "int32", "sbuf"), ("bs", [128, 6], "float32", "sbuf"),
         ("ba", [128, 2], "float32", "sbuf"), ("pr", [128, 512], "uint8", "sbuf"),
         ("gTb", [64, 128], "bfloat16", "sbuf"), ("sb", [1, 2, 512], "float32", "sbuf"),
         ("nzc", [128, 513], "int32", "sbuf"), ("tv", [128, 8], "bfloat16", "sbuf")]

# (python call on the tiles dict T and input a, the same op as JSON)
CASES = {
    "dma_copy_qos": (lambda T, a: nisa.dma_copy(dst=T["t"], src=a[128:256, :], priority=3,
                                                dge_mode=nisa.dge_mode.swdge),
                     {"op": "dma_copy", "dst": "t", "src": "a[128:256, :]", "dma_qos": 3,
                      "dge_mode": "sw"}),
    "gather_skip": (lambda T, a: nisa.dma_copy(
        dst=T["g"], src=a.ap(pattern=[[512, 128], [1, 64]], offset=64, vector_offset=T["idx"],
                             indirect_dim=0), oob_mode=nisa.oob_mode.skip),
        {"op": "dma_copy", "dst": "g", "src": {"tensor": "a[0:, 64:128]", "index": "idx"},
         "oob_mode": "skip"}),
    "dma_transpose": (lambda T, a: nisa.dma_transpose(dst=T["gT"], src=a[0:128, 0:64]),
                      {"op": "dma_transpose", "dst": "gT", "src": "a[0:128, 0:64]"}),
    "memset_pool": (lambda T, a: nisa.memset(dst=T["t"], value=1.5, engine=nisa.engine.gpsimd),
                    {"op": "memset", "dst": "t", "value": 1.5, "engine": "pool"}),
    "tensor_copy_act": (lambda T, a: nisa.tensor_copy(dst=T["mv"], src=T["t"],
                                                      engine=nisa.engine.scalar),
                        {"op": "tensor_copy", "dst": "mv", "src": "t", "engine": "act"}),
    "matmul_acc": (lambda T, a: nisa.nc_matmul(T["ps"][0:32, :], T["wt"][0:32, 0:32],
                                               T["mv"][0:32, :], accumulate=True,
                                               tile_position=(0, 0), tile_size=(32, 32)),
                   {"op": "matmul", "dst": "ps[0:32, :]", "stationary": "wt[0:32, 0:32]",
                    "moving": "mv[0:32, :]", "accumulate": True, "tile_position": [0, 0],
                    "tile_size": [32, 32]}),
    "matmul_mx": (lambda T, a: nisa.nc_matmul_mx(T["ps"], T["w8"], T["m8"], T["ssc"], T["msc"]),
                  {"op": "matmul_mx", "dst": "ps", "stationary": "w8", "moving": "m8",
                   "stationary_scale": "ssc", "moving_scale": "msc"}),
    "transpose_dve": (lambda T, a: nisa.nc_transpose(dst=T["tT"], data=T["tt"],
                                                     engine=nisa.engine.vector),
                      {"op": "transpose", "dst": "tT", "src": "tt", "engine": "dve"}),
    "activation_reduce": (lambda T, a: nisa.activation_reduce(
        dst=T["t"], op=nl.exp, data=T["u"], reduce_op=nl.add, reduce_res=T["sum"],
        bias=T["col"], scale=0.5),
        {"op": "activation", "dst": "t", "src": "u", "func": "exp", "scale": 0.5,
         "bias": "col", "reduce_op": "add", "reduce_res": "sum"}),
    "activate2": (lambda T, a: nisa.activate2(dst=T["t"], op=nl.tanh, data=T["t"], imm0=2.0,
                                              imm1=1.0, op0=nl.multiply, op1=nl.add),
                  {"op": "activate2", "dst": "t", "src": "t", "op0": "multiply", "imm0": 2.0,
                   "op1": "add", "imm1": 1.0, "func": "tanh"}),
    "tensor_scalar_rev": (lambda T, a: nisa.tensor_scalar(dst=T["t"], data=T["t"],
                                                          op0=nl.subtract, operand0=1.0,
                                                          reverse0=True),
                          {"op": "tensor_scalar", "dst": "t", "src": "t", "op0": "subtract",
                           "operand0": 1.0, "reverse0": True}),
    "scalar_tensor_tensor": (lambda T, a: nisa.scalar_tensor_tensor(
        dst=T["t"], data=T["t"], op0=nl.multiply, operand0=-1.0, op1=nl.add, operand1=T["u"]),
        {"op": "scalar_tensor_tensor", "dst": "t", "in0": "t", "op0": "multiply",
         "scalar": -1.0, "op1": "add", "in1": "u"}),
    "partition_reduce": (lambda T, a: nisa.tensor_partition_reduce(dst=T["row"], op=nl.add,
                                                                   data=T["t"]),
                         {"op": "tensor_partition_reduce", "dst": "row", "src": "t",
                          "operator": "add"}),
    "scan": (lambda T, a: nisa.tensor_tensor_scan(dst=T["t"], data0=T["u"], data1=T["t"],
                                                  initial=0.0, op0=nl.multiply, op1=nl.add),
             {"op": "tensor_tensor_scan", "dst": "t", "in0": "u", "in1": "t", "initial": 0.0,
              "op0": "multiply", "op1": "add"}),
    "iota": (lambda T, a: nisa.iota(dst=T["ii"], pattern=[[1, 512]], offset=0,
                                    channel_multiplier=512),
             {"op": "iota", "dst": "ii", "pattern": [[1, 512]], "offset": 0,
              "channel_multiplier": 512}),
    "affine_select": (lambda T, a: nisa.affine_select(dst=T["t"], pattern=[[-1, 512]],
                                                      channel_multiplier=1, on_true_tile=T["t"],
                                                      on_false_value=-30000.0,
                                                      cmp_op=nl.greater_equal),
                      {"op": "affine_select", "dst": "t", "on_true": "t",
                       "pattern": [[-1, 512]], "channel_multiplier": 1, "cmp_op": "ge",
                       "on_false_value": -30000.0}),
    "local_gather": (lambda T, a: nisa.local_gather(dst=T["lg"], src_buffer=T["g"],
                                                    index=T["ix"], num_elem_per_idx=2,
                                                    num_valid_indices=64),
                     {"op": "local_gather", "dst": "lg", "src_buffer": "g", "index": "ix",
                      "num_elem_per_idx": 2, "num_valid_indices": 64}),
    "stream_shuffle": (lambda T, a: nisa.nc_stream_shuffle(
        dst=T["g"][0:32, :], src=T["g"][0:32, :], shuffle_mask=[i ^ 1 for i in range(32)]),
        {"op": "stream_shuffle", "dst": "g[0:32, :]", "src": "g[0:32, :]",
         "shuffle_mask": [i ^ 1 for i in range(32)]}),
    "dropout": (lambda T, a: nisa.dropout(dst=T["t"], data=T["t"], prob=0.1),
                {"op": "dropout", "dst": "t", "src": "t", "prob": 0.1}),
    "max8": (lambda T, a: nisa.max8(dst=T["top"], src=T["t"]),
             {"op": "max8", "dst": "top", "src": "t"}),
    "find_index8": (lambda T, a: nisa.nc_find_index8(dst=T["pos"], data=T["t"], vals=T["top"]),
                    {"op": "find_index8", "dst": "pos", "src": "t", "vals": "top"}),
    "match_replace8": (lambda T, a: nisa.nc_match_replace8(dst=T["u"], data=T["t"],
                                                           vals=T["top"], imm=-1e9,
                                                           dst_idx=T["pos"]),
                       {"op": "match_replace8", "dst": "u", "src": "t", "vals": "top",
                        "imm": -1e9, "dst_idx": "pos"}),
    "quantize_mx": (lambda T, a: nisa.quantize_mx(dst=T["m8"], src=T["mv"], dst_scale=T["sc"]),
                    {"op": "quantize_mx", "dst": "m8", "src": "mv", "scale": "sc"}),
    "range_select": (lambda T, a: nisa.range_select(dst=T["u"], on_true_tile=T["t"],
                                                    comp_op0=nl.greater_equal, comp_op1=nl.less,
                                                    bound0=T["col"], bound1=T["sum"],
                                                    reduce_res=T["col"], range_start=4),
                     {"op": "range_select", "dst": "u", "on_true": "t",
                      "comp_op0": "greater_equal", "comp_op1": "less", "bound0": "col",
                      "bound1": "sum", "reduce_res": "col", "range_start": 4}),
    "select_reduce": (lambda T, a: nisa.select_reduce(dst=T["u"], predicate=T["pr"],
                                                      on_true=T["t"], on_false=T["col"],
                                                      reduce_res=T["sum"], reverse_pred=True),
                      {"op": "select_reduce", "dst": "u", "predicate": "pr", "on_true": "t",
                       "on_false": "col", "reduce_res": "sum", "reverse_pred": True}),
    "tensor_scalar_cumulative": (lambda T, a: nisa.tensor_scalar_cumulative(
        dst=T["u"], src=T["t"], op0=nl.multiply, op1=nl.add, imm0=T["col"], imm1=2.0,
        reduce_cmd=nisa.reduce_cmd.load_reduce),
        {"op": "tensor_scalar_cumulative", "dst": "u", "src": "t", "op0": "multiply",
         "op1": "add", "imm0": "col", "imm1": 2.0, "reduce_cmd": "load_reduce"}),
    "tensor_scalar_reduce": (lambda T, a: nisa.tensor_scalar_reduce(
        dst=T["u"], data=T["t"], op0=nl.subtract, operand0=1.5, reduce_op=nl.maximum,
        reduce_res=T["sum"], reverse0=True, reduce_res_negate=True),
        {"op": "tensor_scalar_reduce", "dst": "u", "data": "t", "op0": "subtract",
         "operand0": 1.5, "reduce_op": "maximum", "reduce_res": "sum", "reverse0": True,
         "reduce_res_negate": True}),
    "sequence_bounds": (lambda T, a: nisa.sequence_bounds(dst=T["sb"], segment_ids=T["row"]),
                        {"op": "sequence_bounds", "dst": "sb", "segment_ids": "row"}),
    "nonzero_with_count": (lambda T, a: nisa.nonzero_with_count(dst=T["nzc"], src=T["ii"],
                                                                index_offset=3, padding_val=0),
                           {"op": "nonzero_with_count", "dst": "nzc", "src": "ii",
                            "index_offset": 3, "padding_val": 0}),
    "topk": (lambda T, a: nisa.topk(val_dst=T["tv"], idx_dst=T["pos"], src=T["mv"], n=100),
             {"op": "topk", "val_dst": "tv", "idx_dst": "pos", "src": "mv", "n": 100}),
    "bn_stats": (lambda T, a: nisa.bn_stats(dst=T["bs"], data=T["t"]),
                 {"op": "bn_stats", "dst": "bs", "data": "t"}),
    "bn_aggr": (lambda T, a: nisa.bn_aggr(dst=T["ba"], data=T["bs"]),
                {"op": "bn_aggr", "dst": "ba", "data": "bs"}),
    "reciprocal": (lambda T, a: nisa.reciprocal(dst=T["u"], data=T["t"]),
                   {"op": "reciprocal", "dst": "u", "data": "t"}),
    "reciprocal_as_tensor_scalar": (lambda T, a: nisa.reciprocal(dst=T["u"], data=T["t"]),
                                    {"op": "tensor_scalar", "dst": "u", "src": "t",
                                     "op0": "reciprocal", "engine": "dve"}),
    "exponential": (lambda T, a: nisa.exponential(dst=T["u"], src=T["t"], max_value=2.0,
                                                  reduce_res=T["sum"],
                                                  reduce_cmd=nisa.reduce_cmd.reset_reduce),
                    {"op": "exponential", "dst": "u", "src": "t", "max_value": 2.0,
                     "reduce_res": "sum", "reduce_cmd": "reset_reduce"}),
    "copy_predicated": (lambda T, a: nisa.tensor_copy_predicated(dst=T["u"], src=T["t"],
                                                                 predicate=T["pr"]),
                        {"op": "tensor_copy_predicated", "dst": "u", "src": "t",
                         "predicate": "pr"}),
    "nc_n_gather": (lambda T, a: nisa.nc_n_gather(dst=T["top"], data=T["g"], indices=T["pos"]),
                    {"op": "gather_flattened", "dst": "top", "data": "g", "indices": "pos"}),
    "dma_transpose_cast": (lambda T, a: nisa.dma_transpose(dst=T["gTb"], src=a[0:128, 0:64]),
                           {"op": "dma_transpose", "dst": "gTb", "src": "a[0:128, 0:64]",
                            "axes": [1, 0]}),
    "reduce_keepdims": (lambda T, a: nisa.tensor_reduce(dst=T["col"], op=nl.max, data=T["t"],
                                                        axis=1, negate=True, keepdims=True),
                        {"op": "tensor_reduce", "dst": "col", "src": "t", "operator": "max",
                         "axis": 1, "negate": True, "keepdims": True}),
}


def _bins(d):
    return {os.path.relpath(f, d): open(f, "rb").read()
            for f in sorted(glob.glob(os.path.join(d, "**", "*.bin"), recursive=True))}


def mapping_identical(tmp_path, tiles, call, op, shape=(300, 512)):
    """call(T, a) traced with the Python API and the kernel-format op `op`
    over the same tiles compile to identical streams."""
    def kernel(a):
        out = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm, name="out")
        T = {n: nl.ndarray(s, dtype=d, buffer=b, name=n) for n, s, d, b in tiles}
        call(T, a)
        return out
    a = np.zeros(shape, np.float32)
    tpbsim.compile(nki.jit(kernel), a, out_dir=str(tmp_path / "py"))
    body = [{"op": "tile", "name": n, "shape": s, "dtype": d, "buffer": b}
            for n, s, d, b in tiles] + [op]
    k = {"kernel": "kernel", "inputs": [{"name": "a", "shape": list(shape), "dtype": "float32"}],
         "outputs": [{"name": "out", "shape": [1, 1], "dtype": "float32"}], "body": body}
    Context().compile_json(json.dumps(k), "k.json", str(tmp_path / "json"))
    a_, b_ = _bins(str(tmp_path / "json")), _bins(str(tmp_path / "py"))
    assert a_ and a_ == b_


@pytest.mark.parametrize("case", sorted(CASES))
def test_op_mapping_identical(tmp_path, case):
    call, op = CASES[case]
    mapping_identical(tmp_path, TILES, call, op)


@nki.jit
def new_ops(x, ix, pred, ui):
    """The newly supported ops against NumPy."""
    P, F = x.shape
    outs = [nl.ndarray(s, dtype=nl.float32, buffer=nl.shared_hbm)
            for s in ((P, 2), (P, F), (P, 1), (P, F), (P, F), (P, 32, 2), (P, 8))]
    t = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    i16 = nl.ndarray(ix.shape, dtype=nl.uint16, buffer=nl.sbuf)
    p8 = nl.ndarray(pred.shape, dtype=nl.uint8, buffer=nl.sbuf)
    u32 = nl.ndarray(ui.shape, dtype=nl.uint32, buffer=nl.sbuf)
    for dst, src in ((t, x), (i16, ix), (p8, pred), (u32, ui)):
        nisa.dma_copy(dst=dst, src=src)
    bs = nl.ndarray((P, 6), dtype=nl.float32, buffer=nl.sbuf)
    res = [nl.ndarray(o.shape, dtype=nl.float32, buffer=nl.sbuf) for o in outs]
    nisa.bn_stats(dst=bs, data=t)
    nisa.bn_aggr(dst=res[0], data=bs)
    nisa.exponential(dst=res[1], src=t, max_value=1.0, reduce_res=res[2],
                     reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nisa.memset(dst=res[3], value=7.0)
    nisa.tensor_copy_predicated(dst=res[3], src=t, predicate=p8)
    nisa.reciprocal(dst=res[4], data=t)
    nisa.local_gather(dst=res[5], src_buffer=t, index=i16, num_elem_per_idx=2,
                      num_valid_indices=32)
    nisa.nc_n_gather(dst=res[6], data=t, indices=u32)
    for o, r in zip(outs, res):
        nisa.dma_copy(dst=o, src=r)
    return tuple(outs)


def test_new_ops_numpy():
    rng = np.random.default_rng(5)
    P, F = 128, 64
    x = rng.uniform(0.5, 2.0, (P, F)).astype(np.float32)
    ix = (rng.integers(0, F // 2, (P, 4)) * 2).astype(np.uint16)
    pred = rng.integers(0, 2, (P, F)).astype(np.uint8)
    ui = rng.integers(0, F, (P, 8)).astype(np.uint32)
    st, ex, s, cp, rc, lg, ng = new_ops(x, ix, pred, ui)
    np.testing.assert_allclose(st[:, 0], x.mean(1), rtol=1e-5)
    np.testing.assert_allclose(st[:, 1], x.var(1), rtol=1e-4)
    np.testing.assert_allclose(ex, np.exp(x - 1.0), rtol=1e-5)
    np.testing.assert_allclose(s[:, 0], np.exp(x - 1.0).sum(1), rtol=1e-4)
    np.testing.assert_array_equal(cp, np.where(pred != 0, x, np.float32(7.0)))
    np.testing.assert_allclose(rc, 1.0 / x, rtol=1e-6)
    want = np.empty((P, 32, 2), np.float32)
    for c in range(8):
        idx = ix[16 * c:16 * c + 16].T.reshape(-1)[:32]     # partition-first per core
        for j, off in enumerate(idx):
            want[16 * c:16 * c + 16, j, :] = x[16 * c:16 * c + 16, off:off + 2]
    np.testing.assert_array_equal(lg, want)
    np.testing.assert_array_equal(ng, np.take_along_axis(x, ui.astype(np.int64), 1))


@nki.jit
def transpose_cast(x):
    """dma_transpose into a bf16 tile (NKI's load_transpose2d(dtype=))."""
    out = nl.ndarray((x.shape[1], x.shape[0]), dtype=nl.float32, buffer=nl.shared_hbm)
    tb = nl.ndarray((x.shape[1], x.shape[0]), dtype=nl.bfloat16, buffer=nl.sbuf)
    tf = nl.ndarray((x.shape[1], x.shape[0]), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_transpose(dst=tb, src=x)
    nisa.tensor_copy(dst=tf, src=tb)
    nisa.dma_copy(dst=out, src=tf)
    return out


def test_dma_transpose_cast_numpy():
    # values with at most 8 significant bits: exact in bf16; then one that rounds
    x = (np.random.default_rng(6).integers(-128, 128, (128, 64)) / 8.0).astype(np.float32)
    np.testing.assert_array_equal(transpose_cast(x), x.T)
    x[3, 5] = 1.0 + 2.0 ** -10          # bf16 keeps 8 bits: rounds to 1.0
    assert transpose_cast(x)[5, 3] == 1.0


@nki.jit
def where_kernel(c, x, y):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    out2 = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tc, tx, ty = nl.load(c), nl.load(x), nl.load(y)
    nl.store(out, value=nl.where(tc, tx, ty))
    nl.store(out2, value=nl.where(tc, tx, -2.5))
    return out, out2


def test_nl_where_numpy():
    rng = np.random.default_rng(7)
    c = rng.integers(0, 2, (128, 64)).astype(np.float32)
    x, y = (rng.standard_normal((128, 64)).astype(np.float32) for _ in range(2))
    a, b = where_kernel(c, x, y)
    np.testing.assert_array_equal(a, np.where(c != 0, x, y))
    np.testing.assert_array_equal(b, np.where(c != 0, x, np.float32(-2.5)))
