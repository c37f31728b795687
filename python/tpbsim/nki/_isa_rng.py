"""nki.isa's random-number ops (kernel-format rng, rand2, rand_get_state,
rand_set_state, set_rng_seed; docs/semantics.md "Random numbers").
isa.py re-exports them."""
from . import _trace
from .isa import _common, _emit, _scalar, _t, engine


def rng(dst, engine=engine.vector, name=None):
    loc = _trace.caller_loc()
    _emit("rng", loc, _common([("dst", _t(dst, "dst", loc))], name, engine, loc))


def rand2(dst, min, max, name=None):
    loc = _trace.caller_loc()
    f = [("dst", _t(dst, "dst", loc)), ("min", _scalar(min, "min", loc)),
         ("max", _scalar(max, "max", loc))]
    _emit("rand2", loc, _common(f, name, None, loc))


def rand_get_state(dst, engine=engine.gpsimd, name=None):
    loc = _trace.caller_loc()
    _emit("rand_get_state", loc, _common([("dst", _t(dst, "dst", loc))], name, engine, loc))


def rand_set_state(src_seeds, engine=engine.gpsimd, name=None):
    loc = _trace.caller_loc()
    f = [("src_seeds", _t(src_seeds, "src_seeds", loc))]
    _emit("rand_set_state", loc, _common(f, name, engine, loc))


def set_rng_seed(src_seeds, name=None):
    loc = _trace.caller_loc()
    f = [("src_seeds", _t(src_seeds, "src_seeds", loc))]
    _emit("set_rng_seed", loc, _common(f, name, None, loc))
