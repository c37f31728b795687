"""dynamic_range with a register trip count n = 0: the body never runs (the
guard branches skip it; the exit barrier still orders the zero stores
before the loop); reference in golden/_dynamic_range.py."""
from _dynamic_range import inputs_with, reference  # noqa: F401

make_inputs = inputs_with(0)
