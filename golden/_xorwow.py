"""Independent NumPy/Python model of tpbsim's engine PRNG (docs/semantics.md
"Random numbers"): XORWOW (Marsaglia 2003) per lane and generator slot,
state words x, y, z, w, v, d; seeding by splitmix64.  Shared by the golden
references of the random ops (rng_*)."""
import numpy as np

M64 = (1 << 64) - 1
M32 = (1 << 32) - 1
GENS_VECTOR = 4


def _splitmix64(z):
    z = (z + 0x9E3779B97F4A7C15) & M64
    r = z
    r = ((r ^ (r >> 30)) * 0xBF58476D1CE4E5B9) & M64
    r = ((r ^ (r >> 27)) * 0x94D049BB133111EB) & M64
    return z, r ^ (r >> 31)


def seed_state(seed, lane, gen):
    """The six words of generator (lane, gen) after SetRngSeed(seed)."""
    z = (seed + (lane * 4 + gen + 1) * 0xD1B54A32D192ED03) & M64
    words = []
    for _ in range(6):
        z, r = _splitmix64(z)
        words.append(r >> 32)
    if not any(words[:5]):
        words[0] = 1
    return words


def step(s):
    """One XORWOW output; s (a list of 6 ints) is updated in place."""
    t = s[0] ^ (s[0] >> 2)
    s[0], s[1], s[2], s[3] = s[1], s[2], s[3], s[4]
    s[4] = (s[4] ^ ((s[4] << 4) & M32)) ^ (t ^ ((t << 1) & M32))
    s[5] = (s[5] + 362437) & M32
    return (s[5] + s[4]) & M32


def draw(states, nparts, nfree, gens):
    """[nparts, nfree] uint32: element i of partition p from states[p][i % gens]."""
    out = np.zeros((nparts, nfree), dtype=np.uint32)
    for p in range(nparts):
        for i in range(nfree):
            out[p, i] = step(states[p][i % gens])
    return out


def unit(bits):
    """uniform fp32 in [0, 1) from the top 24 bits"""
    return (bits >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -24)
