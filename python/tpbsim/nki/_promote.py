"""The result dtype of an nl binary op on two tiles of different dtypes,
when no dtype= is given: NKI's type promotion (its beta-1 API docs, "NKI
Type Promotion"; NumPy's rules, which the current docs point to with
"similar to numpy.add", agree on these):

- (float, integer): the float;
- (float, float): the wider; float16 with bfloat16 widens to float32, two
  different float8s to bfloat16;
- (integer, integer): the wider; a signed and an unsigned one of at least
  its width widen to the signed type of twice that width (int8, uint8 ->
  int16), and past 32 bits to float32 (no int64 on the hardware).

A Python number keeps the tile's dtype (NumPy's weak scalars), except in
nl.divide (language._divide_dtype).  docs/python.md "Tile arithmetic"."""

_FLOAT_BITS = {"float8_e4m3": 8, "float8_e4m3fn": 8, "float8_e5m2": 8, "bfloat16": 16,
               "float16": 16, "float32": 32}
_INT = {"bool": (False, 8), "uint8": (False, 8), "int8": (True, 8), "uint16": (False, 16),
        "int16": (True, 16), "uint32": (False, 32), "int32": (True, 32)}


def promote(a, b):
    """The promoted dtype of dtype names a and b (a for names it does not
    know: the op then keeps its first tile's dtype, as before)."""
    if a == b:
        return a
    fa, fb = _FLOAT_BITS.get(a), _FLOAT_BITS.get(b)
    if fa and fb:
        if fa != fb:
            return a if fa > fb else b
        return "float32" if fa == 16 else "bfloat16"   # f16/bf16; two float8s
    if fa or fb:
        return a if fa else b
    if a not in _INT or b not in _INT:
        return a
    (sa, na), (sb, nb) = _INT[a], _INT[b]
    if sa == sb:
        return a if na >= nb else b
    (ss, ns), (nu, un) = ((a, na), (b, nb)) if sa else ((b, nb), (a, na))
    if ns > un:
        return ss
    return {8: "int16", 16: "int32"}.get(un, "float32")
