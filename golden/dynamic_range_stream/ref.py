"""dynamic_range with a register trip count n = 5, which differs from the
compiler's compile-time guess (6); reference in golden/_dynamic_range.py."""
from _dynamic_range import inputs_with, reference  # noqa: F401

make_inputs = inputs_with(5)
