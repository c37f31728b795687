"""device_print: the printed tiles land in compiler-made output buffers
(print_loaded_x, print_doubled) that tpb sim prints; ctest
seed_device_print checks them. out = 2x."""
import numpy as np


def make_inputs(rng):
    return {"x": rng.integers(-50, 50, (4, 8)).astype(np.float32)}


def reference(x):
    return {"out": 2 * x}
