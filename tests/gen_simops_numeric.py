#!/usr/bin/python3
"""Regenerate tests/data/simops_numeric.bin: fp32 -> fp16/bf16/fp8 bit
patterns from independent references (NumPy's float16 cast; golden/lowp.py
for bf16 and fp8), checked by tests/test_numeric.c.

Record: u32 fp32 bits, u16 fp16, u16 bf16, u8 e4m3fn, u8 e5m2 (little endian),
after an 8-byte magic "TPBNUM01" and a u32 count.  Run with /usr/bin/python3.
"""
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "golden"))
import lowp  # noqa: E402


def inputs():
    rng = np.random.default_rng(20261129)
    v = [0.0, -0.0, 1.0, -1.0, 448.0, 464.0, 465.0, 480.0, 57344.0, 61440.0, 65504.0,
         65520.0, 2.0 ** -24, 2.0 ** -25, 2.0 ** -9, 2.0 ** -10, 2.0 ** -16, 2.0 ** -17,
         2.0 ** -133, float("inf"), float("-inf")]
    bits = list(np.array(v, dtype=np.float32).view(np.uint32))
    bits += list(rng.integers(0, 2 ** 32, 1500, dtype=np.uint64).astype(np.uint32))
    # values on and next to rounding ties inside the fp8/fp16 ranges
    for e in range(-20, 17):
        for k in range(0, 64):
            x = np.float32((1.0 + k / 64.0) * 2.0 ** e)
            b = int(x.view(np.uint32))
            bits += [b, b + 1, b - 1, b | 0x80000000]
    bits += list(np.float32(rng.normal(0, 100, 600)).view(np.uint32))
    x = np.array(bits, dtype=np.uint32).view(np.float32)
    return x[~np.isnan(x)]


def main():
    x = inputs()
    with np.errstate(over="ignore"):
        f16 = x.astype(np.float16).view(np.uint16)
    bf16 = lowp.to_bits(x, "bfloat16")
    e4 = lowp.to_bits(x, "float8_e4m3fn")
    e5 = lowp.to_bits(x, "float8_e5m2")
    out = bytearray(b"TPBNUM01" + struct.pack("<I", len(x)))
    for i in range(len(x)):
        out += struct.pack("<IHHBB", int(x[i:i + 1].view(np.uint32)[0]), int(f16[i]),
                           int(bf16[i]), int(e4[i]), int(e5[i]))
    path = os.path.join(HERE, "data", "simops_numeric.bin")
    with open(path + ".tmp", "wb") as f:
        f.write(out)
    os.replace(path + ".tmp", path)
    print("wrote %d records to %s" % (len(x), path))


if __name__ == "__main__":
    main()
