"""nl.ndarray(..., address=(partition_offset, free_offset)): NKI 0.x's
direct allocation of one tile (docs/python.md "Direct allocation"; the NKI
Library's SBUF manager places every tile so).

The tile gets the kernel format's fixed placement ("addr": the byte offset
in every partition, docs/kernel-format.md), so tiles placed on the same
bytes share them as in NKI: the back-end orders the accesses by address,
and a read sees what the other name wrote there.  In PSUM the free offset
counts bytes across the banks (bank b at b * 2048), as the tile's "addr"
does; the back-end checks the bank rules, SBUF bounds and alignment.

The address is taken once per call site (tpbsim.nki._sites): NKI traces a
loop body once, so a Python counter the kernel advances after the call
(an allocator's stack pointer) moves once there; tpbsim's later passes
over the body reuse the first pass's address, as NKI's single trace has
it.  What tpbsim cannot place is refused: a start partition other than 0
(tiles are placed from partition 0), an address on an HBM tensor, an
address with block dims (nl.par_dim)."""
import numpy as np

from ._trace import NkiError


def _int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def place(address, shape, nblk, dt, buffer, loc):
    """The new_tensor `place` of a tile declared at loc with address=."""
    from . import _trace
    what = "nl.ndarray(address=%r)" % (address,)
    if buffer not in ("sbuf", "psum"):
        raise NkiError("%s: %s: an address on a %s tensor (only SBUF and PSUM tiles are "
                       "placed)" % (loc, what, buffer))
    if (not isinstance(address, (tuple, list)) or len(address) != 2 or
            not all(_int(v) for v in address)):
        raise NkiError("%s: %s: expected two integers (partition_offset, free_offset)" %
                       (loc, what))
    if nblk:
        raise NkiError("%s: %s: a tile with block dims (nl.par_dim) at a fixed address is "
                       "not supported by tpbsim" % (loc, what))
    part, addr = _trace.current().sites.once(loc, (tuple(shape), dt, buffer, "address"),
                                             lambda: (int(address[0]), int(address[1])))
    if part != 0:
        raise NkiError("%s: %s: start partition %d: tpbsim places tiles from partition 0, so "
                       "this tile cannot share storage with the tiles NKI would place it on"
                       % (loc, what, part))
    if addr < 0:
        raise NkiError("%s: %s: a negative free offset" % (loc, what))
    return addr, None
