"""out = max(a * 2 + 1, b); four 128-row programs spread over two cores
(interleaved: programs 0,2 on core 0 and 1,3 on core 1)"""
from _common import max_affine_inputs, max_affine_reference


def make_inputs(rng):
    return max_affine_inputs(rng)


def reference(a, b):
    return max_affine_reference(a, b)
