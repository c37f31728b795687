"""dropout keeps each element with probability 0.7 (no rescaling, as nki.isa.dropout).
The random mask is the simulator's; expected/out.npy holds the 'all kept' values
and case.json checks out in {0, x} with the kept fraction in bounds."""
import numpy as np


def make_inputs(rng):
    return {"x": rng.uniform(0.5, 1.5, (128, 256))}   # never 0: a 0 output means dropped


def reference(x):
    return {"out": x}
