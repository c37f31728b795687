"""tpbsim: run NKI kernels written in Python on the tpbsim simulator.

    from tpbsim import nki
    import tpbsim.nki.isa as nisa
    import tpbsim.nki.language as nl

    out = kernel(a, b)                               # NumPy in, NumPy out
    r = tpbsim.simulate(kernel, a, b, trace="t.json")
    r.outputs, r.cycles, r.stats
    tpbsim.compile(kernel, a, b, out_dir="art")      # then tpb dis/sim/view art

A kernel is traced in Python (each nki.isa call appends one op, tagged with
its file:line), handed to libtpb as a kernel description and compiled by
the same front-end and back-end as `tpb compile`.  docs/python.md."""
import json
import os
import re
import shutil
import tempfile

from . import _ndtypes
# NKI's narrow floats as NumPy types (nl.bfloat16 & co.); their scalar
# types are named tpbsim.<name>, so pickle finds them here
from ._ndtypes import bfloat16, float8_e4m3, float8_e4m3fn, float8_e5m2  # noqa: F401
from ._lib import Context, TpbError
from .nki._trace import NkiError

__all__ = ["simulate", "compile", "kernel_json", "Result", "TpbError", "NkiError", "nki"]


class Result:
    """simulate()'s result: outputs (array or tuple), cycles, stats (the
    stats.json dict: per-engine busy cycles, instructions, ...)."""

    def __init__(self, outputs, cycles, stats, artifacts=None):
        self.outputs, self.cycles, self.stats, self.artifacts = outputs, cycles, stats, artifacts

    def engines(self, core=0):
        """Per-engine stats of one core: {"PE": {"instructions", "busy_cycles",
        "utilisation", "sem_wait_cycles", ...}, ...} (engines it uses)."""
        for c in self.stats.get("cores", []):
            if c.get("core") == core:
                return {e["name"]: e for e in c["engines"] if e.get("present")}
        raise KeyError("no core %d in this run" % core)

    def __repr__(self):
        return "Result(cycles=%d)" % self.cycles


_NEURON_TARGETS = {"trn1": "trn1", "inf2": "trn1", "gen2": "trn1", "trn2": "trn2", "gen3": "trn2",
                   "trn3": "trn3", "gen4": "trn3"}


def _target(target):
    """target=, else NKI's NEURON_PLATFORM_TARGET_OVERRIDE (trn1|inf2|gen2 ->
    trn1, trn2|gen3 -> trn2, trn3|gen4 -> trn3), else the kernel's default
    (trn2).  NKI's
    aliases in target= are mapped too; other names go to the compiler,
    which names the targets it knows."""
    if target:
        return _NEURON_TARGETS.get(target, target)
    env = os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE")
    if not env:
        return None
    if env not in _NEURON_TARGETS:
        raise TpbError("NEURON_PLATFORM_TARGET_OVERRIDE=%s: tpbsim models trn1 (trn1, inf2, "
                       "gen2), trn2 (trn2, gen3) and trn3 (trn3, gen4)" % env)
    return _NEURON_TARGETS[env]


def _kernel(k):
    from .nki import Kernel
    return k if isinstance(k, Kernel) else Kernel(k)


def kernel_json(kernel, *args, **kwargs):
    """The traced kernel as kernel-format JSON text (docs/kernel-format.md)."""
    return _kernel(kernel).trace(*args, **kwargs)[0]


def _compile(ctx, k, text, out_dir, target):
    try:
        ctx.compile_json(text, k.fn.__name__, out_dir, target=target)
    except TpbError as e:
        raise TpbError(str(e)) from None


def compile(kernel, *args, out_dir, target=None, inputs_dir=None, max_memory=None, **kwargs):
    """Trace and compile into the artifact directory out_dir (for `tpb dis`,
    `tpb sim`, `tpb view`).  inputs_dir: also write each input array there
    as <name>.npy, for `tpb sim out_dir --inputs inputs_dir`.  max_memory:
    the compile's memory budget in bytes (default: three quarters of
    physical memory; `tpb compile --max-memory`).  Returns out_dir."""
    import numpy as np
    k = _kernel(kernel)
    target = k.target(target)
    text, _, arrays, _ = k.trace_for(target, args, kwargs)
    _compile(Context(max_memory), k, text, out_dir, target)
    if inputs_dir is not None:
        os.makedirs(inputs_dir, exist_ok=True)
        for name, a in arrays.items():
            # bf16/fp8 arrays as float32, as tpb sim reads them (docs/artifacts.md)
            np.save(os.path.join(inputs_dir, name + ".npy"),
                    np.ascontiguousarray(_ndtypes.to_exchange(np.asarray(a))))
    return out_dir


def simulate(kernel, *args, target=None, trace=None, keep=None, max_memory=None, **kwargs):
    """Trace, compile and simulate; returns a Result.  trace: write the
    Chrome/Perfetto trace there; keep: keep the artifact directory there;
    max_memory: the compile's memory budget in bytes, as in compile()."""
    return _run(_kernel(kernel), args, kwargs, target, trace, keep, False, max_memory)


def _run(k, args, kwargs, target, trace, keep, writeback, max_memory=None):
    """simulate(); writeback: also copy each input tensor the kernel writes
    back into its argument array (NKI beta-1's simulate_kernel, whose
    kernels take their outputs as arguments)."""
    target = k.target(target)
    traced = k.trace_for(target, args, kwargs)
    text, outs, arrays, many = traced
    ctx = Context(max_memory)
    tmp = tempfile.mkdtemp(prefix="tpbsim-")
    art = keep or os.path.join(tmp, "art")
    try:
        _compile(ctx, k, text, art, target)
        ctx.sim_load(art, target=target, trace=trace is not None)
        for name, a in arrays.items():
            ctx.sim_set_input(name, a)
        try:
            ctx.sim_run()
        except TpbError as e:
            _index_error(e, traced.indirect)
            raise
        # a returned reshape of an output tensor (t.reshape(...)) has its shape
        # bf16 / fp8 outputs as their bits: every stored byte (NaN payloads too)
        res = tuple(_ndtypes.from_exchange(ctx.sim_fetch(
            o.base.name, bits=_ndtypes.numpy_dtype(o.dtype) is not None).reshape(o.shape), o.dtype)
            for o in outs)
        if traced.prints:
            _device_prints(ctx, art)
        if writeback:
            for name in traced.written:
                a = arrays[name]
                a[...] = ctx.sim_fetch(name).reshape(a.shape).astype(a.dtype, copy=False)
        if trace is not None:
            ctx.sim_write_trace(trace)
        stats = json.loads(ctx.sim_stats_json())
        cycles = ctx.sim_cycles()
    finally:
        ctx.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return Result(res if many else (res[0] if res else None), cycles, stats, keep)


_OOB = re.compile(r"index (-?\d+) \(idx element \d+\) is out of range \[0, (\d+)\) of the "
                  r"indexed (?:src|dst) side \(oob=error\)")


def _index_error(e, indirect):
    """An indirect DMA's out-of-bounds index with oob_mode error is NKI's
    IndexError: raised as a plain IndexError (from e, our message), saying
    what NumPy says for the flat element index when one a[idx_tile, cols]
    access of that many rows explains it (or one run-time index t[:, q] of
    a dim that size: (rows, 1, 0, its axis)), else our message."""
    m = _OOB.search(str(e))
    if not m:
        return
    ix, rows = int(m.group(1)), int(m.group(2))
    cand = {tuple(x[1:]) for x in indirect if x[0] == rows}
    if len(cand) == 1:
        (cols, c0, *axis), = cand
        raise IndexError("index %d is out of bounds for axis %d with size %d" %
                         (ix * cols + c0, axis[0] if axis else 0, rows * cols)) from e
    raise IndexError(str(e)) from e


def _device_prints(ctx, art):
    """Print the kernel's nl.device_print buffers (the tensors the tensor
    map marks with a print_prefix), in kernel order: the prefix, then the
    values as NumPy prints them."""
    with open(os.path.join(art, "tensor-map.json")) as f:
        tensors = json.load(f)["tensors"]
    for t in tensors:
        if "print_prefix" in t:
            print(t["print_prefix"], ctx.sim_fetch(t["name"]), flush=True)


from . import nki  # noqa: E402
