"""Call sites as NKI's trace sees them (docs/python.md "Direct allocation").

NKI traces the body of an `nl.affine_range` / `nl.sequential_range` loop
once, so the Python code in it -- an `nl.ndarray(..., buffer=
ncc.sbuf.mod_alloc(base_addr=cur_addr))` followed by `cur_addr += ...`, as
nki-samples' allocated kernels write -- runs once per loop, not once per
iteration.  tpbsim runs such a body more than once: twice when it traces the
loop once (the second pass checks for state carried between iterations) and
once per iteration when the kernel is traced per iteration.  A counter like
`cur_addr` then grows at every run, and the direct allocations made after
the first run land at addresses NKI never uses (past SBUF, for the
allocated SD attention kernel).

A site is the path of (source location, occurrence) pairs from the kernel
down through the open nl loops: the occurrence counts the runs of that
location since the enclosing loop's current iteration (or pass) began, so a
plain Python loop inside the body still makes distinct sites, as it does in
NKI.  Every iteration and pass of a loop sees the same sites, so a direct
allocation is evaluated at its site's first run and reused by the later
ones: what NKI's single trace gives."""
import contextlib


class Sites:
    def __init__(self):
        self._scopes = [((), {})]   # (path of the scope, runs per location in it)
        self._memo = {}

    def _next(self, loc):
        path, runs = self._scopes[-1]
        n = runs.get(loc, 0)
        runs[loc] = n + 1
        return path + ((loc, n),)

    def enter_loop(self, loc):
        """An nl loop starts at loc: its key, for iteration()."""
        return self._next(loc)

    @contextlib.contextmanager
    def iteration(self, key):
        """One iteration or pass of the loop `key` runs inside this."""
        self._scopes.append((key, {}))
        try:
            yield
        finally:
            self._scopes.pop()

    def once(self, loc, what, make):
        """make()'s value at this site's first run (with the same `what`:
        shape, dtype, buffer), reused at the later runs."""
        key = (self._next(loc), what)
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]
