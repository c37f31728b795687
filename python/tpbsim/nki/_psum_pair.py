"""The nl-level element-wise ops (nl.add / subtract / ..., the tile
operators + - * / and the rest, `t += tile`, nl.loop_reduce, nl.where) on
two tiles both in PSUM.  The ISA's tensor_tensor (and select) cannot read
both inputs from PSUM, and tpbsim refuses that for nisa calls as NKI
documents; the nl functions document no such restriction (device kernels
subtract two nl.matmul results, CS149 convs `acc += part` of a named
nc_matmul result), so, as NKI's compiler must, the second operand is first
copied to a new SBUF tile (an exact tensor_copy in its own dtype).
docs/python.md "Tile arithmetic"."""
from . import _trace, _wide
from ._trace import NkiTensor


def off_psum(x, y, loc):
    """y, or its copy in a new SBUF tile when x and y are both PSUM tiles."""
    if not (isinstance(x, NkiTensor) and isinstance(y, NkiTensor) and
            x.buffer == "psum" and y.buffer == "psum"):
        return y
    c = _trace.current().new_tensor(tuple(y.shape), y.dtype, "sbuf", "", loc)
    _wide.emit("tensor_copy", loc, [("dst", c.text()), ("src", y.text())], {"dst": c, "src": y})
    return c
