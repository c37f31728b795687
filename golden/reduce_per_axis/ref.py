"""tensor_reduce with per_axis (seed 001 NeuronReduceMacro: one Reduce per
axis, the first reads the source, the rest fold the partial) over axes 1 and
3 of [128, 3, 6, 4]: a sum, and a negated max."""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((128, 3, 6, 4))}


def reference(x):
    return {"sum13": x.sum(axis=(1, 3)), "negmax13": -x.max(axis=(1, 3))}
