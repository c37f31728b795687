"""nl.ndarray(..., address=(partition_offset, free_offset)): NKI 0.x's
direct allocation of one tile (docs/python.md "Direct allocation"; the NKI
Library's SBUF manager places every tile so).

The tile gets the kernel format's fixed placement ("addr": the byte offset
in every partition, docs/kernel-format.md), so tiles placed on the same
bytes share them as in NKI: the back-end orders the accesses by address,
and a read sees what the other name wrote there.  In PSUM the free offset
counts bytes across the banks (bank b at b * 2048), as the tile's "addr"
does; the back-end checks the bank rules, SBUF bounds and alignment.

The address is evaluated at every call, unlike beta-2's traced-once
`ncc.*.mod_alloc` (_sites.py): NKI 0.x unrolls every loop, affine_range
included, so a tile allocated in a loop body gets the address of its own
iteration (`address=(0, bank_id * 2048)`, or the library's BufferManager
advancing its stack pointer).  A traced-once loop body whose passes then
place a tile differently, or an address in the symbolic loop variable,
makes the kernel be traced per iteration (Retrace), where each iteration
is placed as NKI places it.  What tpbsim cannot place is refused: a start
partition other than 0 (tiles are placed from partition 0), an address on
an HBM tensor, an address with block dims (nl.par_dim)."""
import numpy as np

from ._lin import Lin
from ._trace import NkiError, need_retrace


def _int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def place(address, shape, nblk, dt, buffer, loc):
    """The new_tensor `place` of a tile declared at loc with address=."""
    what = "nl.ndarray(address=%r)" % (address,)
    if buffer not in ("sbuf", "psum"):
        raise NkiError("%s: %s: an address on a %s tensor (only SBUF and PSUM tiles are "
                       "placed)" % (loc, what, buffer))
    if (isinstance(address, (tuple, list)) and
            any(isinstance(v, Lin) and v.loop_trace() is not None for v in address)):
        need_retrace()   # in a traced-once loop's variable: every iteration its own tile
    if isinstance(address, (tuple, list)) and any(isinstance(v, Lin) for v in address):
        raise NkiError("%s: %s: an address that depends on nl.program_id() is not supported "
                       "in a kernel traced once for all programs (more than 256 programs)" %
                       (loc, what))
    if (not isinstance(address, (tuple, list)) or len(address) != 2 or
            not all(_int(v) for v in address)):
        raise NkiError("%s: %s: expected two integers (partition_offset, free_offset)" %
                       (loc, what))
    if nblk:
        raise NkiError("%s: %s: a tile with block dims (nl.par_dim) at a fixed address is "
                       "not supported by tpbsim" % (loc, what))
    part, addr = int(address[0]), int(address[1])
    if part != 0:
        raise NkiError("%s: %s: start partition %d: tpbsim places tiles from partition 0, so "
                       "this tile cannot share storage with the tiles NKI would place it on"
                       % (loc, what, part))
    if addr < 0:
        raise NkiError("%s: %s: a negative free offset" % (loc, what))
    return addr, None
