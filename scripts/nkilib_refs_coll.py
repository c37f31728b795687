"""NumPy references for scripts/nki-library-check: the NKI Library's
collectives kernels (nkilib.experimental.collectives, and the kernels its
test/integration collectives test defines: all_reduce_hbm_kernel, ...), run
as collective ranks with tpbsim.nki.collectives.run_ranks (one core per
rank, each rank its own inputs), on parameter sets taken from the
library's tests (at most 8 ranks: tpbsim simulates up to 8 cores; LNC=1
per rank).  Each reference is written here from what the library's test
computes as its golden; nothing of the library is stored."""
import ast
import importlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys

import numpy as np

from nkilib_refs import _close
from tpbsim.nki import collectives as ncc
from tpbsim.nki import language as nl

TEST = "test/integration/nkilib/experimental/collectives/test_collectives.py"


def _all_close(outs, wants, rtol=1e-3, atol=1e-3):
    """True, or a line naming the first rank whose output differs."""
    for r, (o, w) in enumerate(zip(outs, wants)):
        c = _close(o, w, rtol, atol)
        if c is not True:
            return f"rank {r}: {c}"
    return True


def _repo(lib):
    """The nki-library checkout or bare git directory (nki-library-check's
    LIB argument)."""
    return getattr(lib, "repo", None) or sys.argv[1]


def _test_kernels(lib):
    """The @nki.jit kernels (and the enum they take) of the library's
    collectives test file, their import lines ported as nki-library-check
    ports the package's (the test harness imports, test.utils.*, left
    out), written to lib.work and imported."""
    path = os.path.join(lib.work, "nkilib_coll_test_kernels.py")
    if not os.path.exists(path):
        src = subprocess.run(["git", "-C", _repo(lib), "show", "HEAD:" + TEST], check=True,
                             capture_output=True, text=True).stdout
        keep = []
        for node in ast.parse(src).body:
            seg = ast.get_source_segment(src, node, padded=True)
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                mod = (node.module or "") if isinstance(node, ast.ImportFrom) else ""
                if not mod.startswith("test"):
                    keep.append(seg)
            elif isinstance(node, ast.ClassDef) and any(
                    getattr(b, "id", "") == "Enum" for b in node.bases):
                keep.append(seg)
            elif isinstance(node, ast.FunctionDef) and any(
                    "jit" in ast.unparse(d) for d in node.decorator_list):
                # the decorator lines too (the source segment starts at `def`)
                keep.append("\n".join("@" + ast.unparse(d) for d in node.decorator_list))
                keep.append(seg)
        text = "\n".join(keep) + "\n"
        chk = _lib_check()
        text, _ = chk._sdk.port(text, chk.RULES + [(r"^from nkilib_src\.nkilib\.", "from nkilib.")])
        with open(path, "w") as f:
            f.write(text)
    if lib.work not in sys.path:
        sys.path.insert(0, lib.work)
    return importlib.import_module("nkilib_coll_test_kernels")


def _lib_check():
    """scripts/nki-library-check as a module (its porting rules)."""
    here = os.path.dirname(os.path.abspath(__file__))
    name = "nki_library_check_rules"
    if name not in sys.modules:
        loader = importlib.machinery.SourceFileLoader(name, os.path.join(here, "nki-library-check"))
        mod = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
        loader.exec_module(mod)
        sys.modules[name] = mod
    return sys.modules[name]


def _rg(n):
    return ncc.ReplicaGroup([list(range(n))])


def _ranks(n, shape, dtype=np.float32, seed=42):
    x = np.random.default_rng(seed).standard_normal((n,) + shape).astype(np.float32)
    return x.astype(dtype)


# ---- the test file's kernels (test_collectives.py's goldens) ----

def _all_reduce(lib, n, same):
    k = _test_kernels(lib).all_reduce_hbm_kernel
    x = _ranks(n, (128, 512))
    if same:   # the library's test: one input on every rank -> x * ranks
        x[:] = x[0]
    outs = ncc.run_ranks(k, n, lambda r: {"input": x[r], "replica_group": _rg(n)}).outputs
    return _all_close(outs, [x.sum(0)] * n)


def _all_gather(lib, n):
    k = _test_kernels(lib).all_gather_hbm_kernel
    x = _ranks(n, (128, 512))
    outs = ncc.run_ranks(k, n, lambda r: {"input": x[r], "replica_group": _rg(n),
                                          "num_ranks": n}).outputs
    return _all_close(outs, [x.reshape(n * 128, 512)] * n)


def _reduce_scatter(lib, n):
    k = _test_kernels(lib).reduce_scatter_hbm_kernel
    x = _ranks(n, (128 * n, 512))
    s = x.sum(0)
    outs = ncc.run_ranks(k, n, lambda r: {"input": x[r], "replica_group": _rg(n),
                                          "num_ranks": n}).outputs
    return _all_close(outs, [s[r * 128:(r + 1) * 128] for r in range(n)])


def _all_to_all(lib, n, same):
    k = _test_kernels(lib).all_to_all_hbm_kernel
    x = _ranks(n, (128 * n, 512))
    if same:   # the library's test: one input -> every rank gets chunk 0 n times
        x[:] = x[0]
    c = 128
    outs = ncc.run_ranks(k, n, lambda r: {"input": x[r], "replica_group": _rg(n)}).outputs
    return _all_close(outs, [np.concatenate([x[s][r * c:(r + 1) * c] for s in range(n)])
                             for r in range(n)])


def _rank_id(lib, n):
    k = _test_kernels(lib).rank_id_kernel
    x = _ranks(1, (n, 128, 512))[0]
    outs = ncc.run_ranks(k, n, {"in_tensor": x}).outputs
    return _all_close(outs, [x[r] for r in range(n)])


def _dma_copy_rank_id(lib, n):
    k = _test_kernels(lib).dma_copy_rank_id_kernel
    x = _ranks(1, (n, 128, 64))[0]
    look = np.arange(n, dtype=np.int32).reshape(1, n)
    outs = ncc.run_ranks(k, n, {"in_tensor": x, "rank_id_lookup": look}).outputs
    return _all_close(outs, [x[r] for r in range(n)])


def _batch_shard(lib, nbsd, input_rank, n=4, G=2, batch=8):
    """attn_q_batch_shard, TP4 -> TP2DP2 (the test's only enabled case):
    all_gather of the heads in groups of G, then this rank's batch slice."""
    m = _test_kernels(lib)
    S, d, bpr = 1, 64, batch // G
    q = _ranks(1, (n, batch, S, d) if nbsd else (n, d, batch, S))[0]
    rg = ncc.ReplicaGroup([[i * G + j for j in range(G)] for i in range(n // G)])
    lay = m.AttnQBatchShardLayout.NBSd if nbsd else m.AttnQBatchShardLayout.dBnS
    buf = (G, 1, batch, S, d) if nbsd else (G, d, batch, 1, S)

    def inputs(r):
        kw = {"input": q[r:r + 1] if nbsd else q[r:r + 1].reshape(d, batch, 1, S),
              "iota_workers": np.array([(k % G) * bpr for k in range(n)],
                                       np.int32).reshape(1, n),
              "gathered_buf": np.zeros(buf, np.float32), "gqa_group_size": G,
              "replica_group": rg, "layout": lay}
        if input_rank:
            kw["rank_id_in"] = np.array([[r]], np.int32)
        return kw
    outs = ncc.run_ranks(m.attn_q_batch_shard, n, inputs).outputs
    wants = []
    for r in range(n):
        h0, b0 = r // G * G, r % G * bpr
        wants.append(q[h0:h0 + G, b0:b0 + bpr] if nbsd else q[h0:h0 + G, :, b0:b0 + bpr])
    return _all_close(outs, wants)


# ---- nkilib.experimental.collectives ----

def _sb2sb(lib, m, k, dtype, tp, tiled=False):
    mod = lib.mod("experimental.collectives.sb2sb_allgather")
    kern = mod.allgather_sb2sb_tiled if tiled else mod.allgather_sb2sb
    x = _ranks(tp, (m, k), dtype)
    outs = ncc.run_ranks(kern, tp, lambda r: {"inp": x[r], "replica_groups": _rg(tp),
                                              "tp_degree": tp}).outputs
    want = np.concatenate(list(x), axis=1)   # exact: a gather moves bits
    return _all_close(outs, [want] * tp, rtol=0, atol=0)


def _fg_allgather(lib, m, K, tp, hbm=False):
    mod = lib.mod("experimental.collectives.fg_allgather")
    x = _ranks(1, (m * tp, K), nl.bfloat16)[0]
    outs = ncc.run_ranks(mod.fine_grained_allgather, tp, lambda r: {
        "lhs": x[r * m:(r + 1) * m], "tp_degree": tp, "num_groups": 1,
        "force_hbm_cc": hbm}).outputs
    # the result is [RANK_N, LNC, CHANNEL, local_M, K]: the test compares it with the
    # gathered [M, K] element for element (the same row order)
    return _all_close([np.asarray(o).reshape(x.shape) for o in outs], [x] * tp, rtol=0, atol=0)


def _fgcc(lib, m, K, N, tp, hbm=False):
    """allgather_compute_matmul: lhs row-sharded, rhs column-sharded; rank r
    gets lhs_global @ rhs[:, its columns] in bf16 (the test's golden and
    tolerance, rtol = atol = 1e-2)."""
    mod = lib.mod("experimental.collectives.fgcc")
    lhs = _ranks(1, (m * tp, K), nl.bfloat16)[0]
    rhs = _ranks(1, (K, N), nl.bfloat16, seed=43)[0]
    w = N // tp
    outs = ncc.run_ranks(mod.allgather_compute_matmul, tp, lambda r: {
        "lhs": lhs[r * m:(r + 1) * m], "rhs": rhs[:, r * w:(r + 1) * w], "tp_degree": tp,
        "num_groups": 1, "force_hbm_cc": hbm}).outputs
    full = (lhs.astype(np.float32) @ rhs.astype(np.float32)).astype(nl.bfloat16)
    wants = [full[:, r * w:(r + 1) * w] for r in range(tp)]
    return _all_close([np.asarray(o).reshape(wt.shape) for o, wt in zip(outs, wants)], wants,
                      rtol=1e-2, atol=1e-2)


def _topk_reduce(lib, lnc, ranks, T, K, H):
    """topk_reduce (experimental/collectives): the test's input (T * K rows of
    randn bf16, each with its token id packed as an int32 in its last two bf16
    columns, scattered into ranks * T rows padded with -1); out[t] = the sum
    of token t's K rows, rtol = atol = 5e-2 as the test."""
    mod = lib.mod("experimental.collectives.topk_reduce")
    bf = nl.bfloat16
    rng = np.random.RandomState(42)
    n = ranks * T
    buf = np.full((n, H + 2), -1, dtype=bf)
    vals = rng.randn(T * K, H).astype(bf)
    ids = np.arange(T, dtype=np.int32).repeat(K).reshape(T * K, 1).view(bf)
    buf[rng.permutation(n)[:T * K]] = np.concatenate([vals, ids], axis=1)
    want = vals.astype(np.float32).reshape(T, K, H).sum(1)
    kern = mod.topk_reduce if lnc == 1 else mod.topk_reduce[lnc]
    return _close(kern(buf, T, K), want, 5e-2, 5e-2)


def checks(lib):
    bf16 = nl.bfloat16
    return [
        ("coll all_reduce_hbm 2 ranks same input", lambda: _all_reduce(lib, 2, True)),
        ("coll all_reduce_hbm 2 ranks", lambda: _all_reduce(lib, 2, False)),
        ("coll all_gather_hbm 2 ranks", lambda: _all_gather(lib, 2)),
        ("coll reduce_scatter_hbm 2 ranks", lambda: _reduce_scatter(lib, 2)),
        ("coll all_to_all_hbm 4 ranks same input", lambda: _all_to_all(lib, 4, True)),
        ("coll all_to_all_hbm 8 ranks same input", lambda: _all_to_all(lib, 8, True)),
        ("coll all_to_all_hbm 4 ranks", lambda: _all_to_all(lib, 4, False)),
        ("coll rank_id_kernel 2 ranks", lambda: _rank_id(lib, 2)),
        ("coll dma_copy_rank_id 2 ranks", lambda: _dma_copy_rank_id(lib, 2)),
        ("coll attn_q_batch_shard NBSd TP2DP2", lambda: _batch_shard(lib, True, False)),
        ("coll attn_q_batch_shard dBnS TP2DP2", lambda: _batch_shard(lib, False, False)),
        ("coll attn_q_batch_shard NBSd input_rank", lambda: _batch_shard(lib, True, True)),
        ("coll sb2sb m128 k512 bf16 tp8", lambda: _sb2sb(lib, 128, 512, bf16, 8)),
        ("coll sb2sb m64 k1024 bf16 tp8", lambda: _sb2sb(lib, 64, 1024, bf16, 8)),
        ("coll sb2sb m128 k512 fp32 tp8", lambda: _sb2sb(lib, 128, 512, np.float32, 8)),
        ("coll sb2sb m64 k1024 fp16 tp8", lambda: _sb2sb(lib, 64, 1024, np.float16, 8)),
        ("coll sb2sb_tiled m256 k512 bf16 tp8", lambda: _sb2sb(lib, 256, 512, bf16, 8, True)),
        ("coll sb2sb_tiled m256 k512 fp32 tp8", lambda: _sb2sb(lib, 256, 512, np.float32, 8,
                                                                True)),
        # the test's one enabled set is LNC 2 (each rank two cores: tpbsim runs a rank per
        # core), whose SBUF buffers do not fit one core; LNC 1 at sizes that fit:
        ("coll fine_grained_allgather m1024 K4096 tp4", lambda: _fg_allgather(lib, 1024, 4096, 4)),
        ("coll fine_grained_allgather m512 K2048 tp4", lambda: _fg_allgather(lib, 512, 2048, 4)),
        ("coll fine_grained_allgather m256 K1024 tp8", lambda: _fg_allgather(lib, 256, 1024, 8)),
        # the test's sets (lnc, source ranks, T, K, H); 128 ranks x 128 tokens left out (size)
        ("coll topk_reduce lnc1 r8 T4 K4 H2880", lambda: _topk_reduce(lib, 1, 8, 4, 4, 2880)),
        ("coll topk_reduce lnc2 r8 T4 K4 H2880", lambda: _topk_reduce(lib, 2, 8, 4, 4, 2880)),
        ("coll topk_reduce lnc2 r8 T4 K8 H4096", lambda: _topk_reduce(lib, 2, 8, 4, 8, 4096)),
        ("coll topk_reduce lnc2 r8 T128 K4 H2880", lambda: _topk_reduce(lib, 2, 8, 128, 4, 2880)),
        ("coll topk_reduce lnc2 r8 T128 K8 H4096", lambda: _topk_reduce(lib, 2, 8, 128, 8, 4096)),
        ("coll topk_reduce lnc2 r128 T4 K8 H4096", lambda: _topk_reduce(lib, 2, 128, 4, 8, 4096)),
        ("coll fgcc m256 K1024 N1024 tp4", lambda: _fgcc(lib, 256, 1024, 1024, 4)),
        ("coll fgcc m256 K1024 N1024 tp4 hbm", lambda: _fgcc(lib, 256, 1024, 1024, 4, True)),
        ("coll fine_grained_allgather m512 K2048 tp4 hbm", lambda: _fg_allgather(lib, 512, 2048, 4,
                                                                                 True)),
    ]
