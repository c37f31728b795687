"""The op families and how often each is drawn."""
from . import ops_acc, ops_gather, ops_isa, ops_mm, ops_more, ops_move, ops_nl, ops_pe, ops_sel

# name -> (function, weight)
FAMILIES = {
    "nl_binary": (ops_nl.nl_binary, 2), "nl_unary": (ops_nl.nl_unary, 2),
    "nl_logical_not": (ops_nl.nl_logical_not, 0.1), "nl_reduce": (ops_nl.nl_reduce, 1),
    "nl_where": (ops_nl.nl_where, 1), "broadcast": (ops_nl.broadcast, 1),
    "softmax": (ops_nl.softmax, 1), "transpose": (ops_pe.transpose, 1),
    "matmul": (ops_pe.matmul, 1), "tensor_tensor": (ops_isa.tensor_tensor, 0.75),
    "tensor_tensor_int": (ops_isa.tensor_tensor_int, 0.5),
    "tensor_scalar": (ops_isa.tensor_scalar, 2), "ts_bitwise": (ops_isa.ts_bitwise, 1),
    "activation": (ops_isa.activation, 2), "tensor_reduce": (ops_isa.tensor_reduce, 1),
    "tensor_copy": (ops_isa.tensor_copy, 1), "iota_memset": (ops_pe.iota_memset, 1),
    "scan": (ops_pe.scan, 1), "stt": (ops_pe.stt, 1), "copy_predicated": (ops_pe.copy_predicated, 1),
    "act_reduce": (ops_acc.act_reduce, 1), "ts_reduce": (ops_acc.ts_reduce, 1),
    "ts_cumulative": (ops_acc.ts_cumulative, 0.5), "exponential": (ops_acc.exponential, 0.5),
    "reciprocal": (ops_acc.reciprocal, 0.5), "bn_stats": (ops_acc.bn_stats, 1),
    "max8": (ops_sel.max8, 0.5), "find_index8": (ops_sel.find_index8, 0.5),
    "match_replace8": (ops_sel.match_replace8, 0.5), "select_reduce": (ops_sel.select_reduce, 1),
    "range_select": (ops_sel.range_select, 0.5), "affine_select": (ops_sel.affine_select, 1),
    "dma_cast": (ops_move.dma_cast, 1.5), "nc_transpose": (ops_move.nc_transpose, 1),
    "partition_reduce": (ops_move.partition_reduce, 0.5), "nl_extra": (ops_move.nl_extra, 1),
    "nl_var_axes": (ops_move.nl_var_axes, 0.2),
    "n_gather": (ops_gather.n_gather, 1), "local_gather": (ops_gather.local_gather, 1),
    "nonzero": (ops_gather.nonzero, 0.5), "sequence_bounds": (ops_gather.sequence_bounds, 0.5),
    "stream_shuffle": (ops_gather.stream_shuffle, 1), "dma_transpose": (ops_gather.dma_transpose, 1),
    "matmul_params": (ops_mm.matmul_params, 1), "copy_pred2": (ops_more.copy_pred2, 1),
    "gather_flattened": (ops_more.gather_flattened, 0.5), "dma_compute": (ops_more.dma_compute, 1),
}
# families whose models depend on summation order: no inf / NaN / 1e30 inputs,
# where fp32 overflow to inf then inf - inf = NaN is order-dependent
NO_SPECIAL = frozenset(["matmul", "nl_reduce", "tensor_reduce", "scan", "activation", "act_reduce",
                        "ts_reduce", "ts_cumulative", "exponential", "bn_stats", "max8",
                        "find_index8", "match_replace8", "matmul_params"])
# families with an open finding against tpbsim: the model follows NKI's
# documentation and tpbsim does not yet.  Drop a name once tpbsim is fixed.
OPEN = {}


def select(family=None, exclude=()):
    """(names, weights) to draw from: the listed families (comma-separated
    text or a list) or all, minus exclude."""
    if isinstance(family, str):
        family = [f for f in family.split(",") if f]
    names = list(family) if family else list(FAMILIES)
    unknown = [n for n in list(names) + list(exclude) if n not in FAMILIES]
    if unknown:
        raise ValueError("unknown family %s (known: %s)" % (", ".join(unknown), ", ".join(FAMILIES)))
    names = [n for n in names if n not in exclude]
    if not names:
        raise ValueError("no family left to draw from")
    return names, [FAMILIES[n][1] for n in names]
