"""NKI tensor_tensor's engine default for integers: when every tile (dst,
data1, data2) is int32/uint32 the op runs on GpSimd, whose native integer
arithmetic is exact for all 32-bit values; the default falls back to the
Vector engine when a tile is in PSUM (GpSimd cannot read it).  Bitwise ops
stay on Vector (bit patterns there already).  The nl element-wise ops on
two tiles, the tile operators and `+=` are tensor_tensor too and take the
same default.  docs/python.md "Integer tensor_tensor"."""
from ._trace import NkiTensor

_BITVEC = frozenset("bitwise_and bitwise_or bitwise_xor bitwise_not invert left_shift "
                    "right_shift".split())


def on_pool(op_name, tiles):
    """Whether a tensor_tensor of op_name on tiles (no engine given) runs
    on GpSimd (Pool)."""
    from . import language
    if op_name in _BITVEC:
        return False
    return all(isinstance(t, NkiTensor) and t.buffer != "psum" and
               language._dtype(t.dtype) in ("int32", "uint32") for t in tiles)


def engine_field(op_name, tiles):
    """The kernel-format engine field of that default: [] or Pool's."""
    return [("engine", '"pool"')] if on_pool(op_name, tiles) else []
