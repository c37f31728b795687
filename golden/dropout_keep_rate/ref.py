"""dropout with keep_rate 0.3 (seed 001 set_keep_rate / is_keep_rate: the
immediate is the keep probability, so about 30 % of the elements survive).
The random mask is the simulator's; expected/out.npy holds the 'all kept'
values and case.json checks out in {0, x} with the kept fraction in bounds."""
import numpy as np


def make_inputs(rng):
    return {"x": rng.uniform(0.5, 1.5, (128, 64))}   # never 0: a 0 output means dropped


def reference(x):
    return {"out": x}
