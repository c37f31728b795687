"""NKI direct allocation (docs/python.md "Direct allocation"): nki.compiler's
sbuf/psum mod_alloc and alloc(func) with modulo rotation honoured (logical
block i stored in physical block i % k, sharing storage with i + k),
accumulation groups per LOGICAL block, capacity errors, the compiler-option
decorators, and PSUM reuse of block-dim tiles that exceed PSUM.  Golden
values from NumPy."""
import functools
import json

import numpy as np
import pytest

import tpbsim
from tpbsim import NkiError, TpbError, nki
import tpbsim.nki.compiler as ncc
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(23)


def _rand(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


def _body(text):
    return json.dumps(json.loads(text)["body"])


@nki.jit
def rotate_copy(x):
    """n logical blocks over 2 physical ones: block i + 2's load must wait
    for block i's read (WAR), its read for its load (RAW)."""
    n = x.shape[1] // 64
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((n, nl.par_dim(128), 64), dtype=nl.float32,
                   buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)))
    for i in nl.affine_range(n):
        t[i] = nl.load(x[:, nl.ds(i * 64, 64)])
        r = nisa.tensor_scalar(data=t[i], op0=nl.multiply, operand0=2.0)
        nl.store(out[:, nl.ds(i * 64, 64)], r)
    return out


def test_rotation_war_raw_numpy():
    x = _rand(128, 6 * 64)
    text = tpbsim.kernel_json(rotate_copy, x)
    assert '"shape": [128, 2, 64]' in text   # 2 physical blocks stored
    assert '"t[:, (i%2)]"' in text           # logical block i -> physical i % 2
    np.testing.assert_array_equal(rotate_copy(x), 2 * x)


def test_rotation_shares_storage():
    """Logical blocks 0 and 2 of a 2-tile allocation are one storage: block
    0 read after block 2's write holds block 2's data (as NKI places it)."""
    @nki.jit
    def k(x, y):
        out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((4, nl.par_dim(128), 64), dtype=nl.float32,
                       buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)))
        t[0] = nl.load(x)
        t[1] = nl.load(x)
        t[2] = nl.load(y)
        nl.store(out, nl.copy(t[0]))
        return out
    x, y = (_rand(128, 64) for _ in range(2))
    np.testing.assert_array_equal(k(x, y), y)
    # @force_auto_alloc: the allocation is ignored, every block its own
    np.testing.assert_array_equal(ncc.force_auto_alloc(k)(x, y), x)


def _mm_into(ps, i, a, b, j, beta2):
    """Block i of ps, the matmul of a's and b's j-th 128-row K tiles
    (b's i-th 512 columns): beta-1 `+=`, or beta-2 with accumulate=None."""
    at = nl.load(a[nl.ds(j * 128, 128), :])
    bt = nl.load(b[nl.ds(j * 128, 128), nl.ds(i * 512, 512)])
    if beta2:
        nisa.nc_matmul(ps[i], at, bt)
    else:
        ps[i, :, :] += nisa.nc_matmul(stationary=at, moving=bt)


def _mm_blocks(alloc, loop=nl.affine_range, beta2=False):
    @nki.jit
    def k(a, b):
        kk, n = a.shape[0] // 128, b.shape[1] // 512
        out = nl.ndarray((128, n * 512), dtype=nl.float32, buffer=nl.shared_hbm)
        ps = nl.ndarray((n, nl.par_dim(128), 512), dtype=nl.float32, buffer=alloc())
        for i in loop(n):
            for j in nl.affine_range(kk):
                _mm_into(ps, i, a, b, j, beta2)
            nl.store(out[:, nl.ds(i * 512, 512)], nl.copy(ps[i]))
        return out
    return k


@pytest.mark.parametrize("alloc,loop,beta2", [
    (lambda: ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(2,)), nl.affine_range, False),
    (lambda: ncc.psum.mod_alloc(base_bank=3, num_bank_tiles=(1,)), nl.sequential_range, False),
    (lambda: ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(2,)), range, True),
    (lambda: ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(3,)), nl.affine_range, True),
    (lambda: nl.psum, nl.affine_range, False),
    (lambda: nl.psum, range, False),
])
def test_accumulation_group_per_logical_block_numpy(alloc, loop, beta2):
    """Each logical block's first matmul overwrites, even when a previous
    logical block used the same physical PSUM block (k = 1, 2, 3 of 4
    blocks; beta-1 `+=` and beta-2 accumulate=None; traced once and
    unrolled), and without rotation too."""
    a = _rand(256, 128)
    b = _rand(256, 4 * 512)
    k = _mm_blocks(alloc, loop, beta2)
    text = tpbsim.kernel_json(k, a, b)
    if loop is not range:   # traced once: the group restarts per block
        assert '"accumulate": "(i_' in text and "(i != 0)" not in text
    np.testing.assert_allclose(k(a, b), a.T @ b, rtol=1e-4, atol=1e-4)


def test_psum_one_bank_for_all_blocks_in_nested_loops_numpy():
    """v9's pattern: a PSUM tile of n blocks on one bank, blocks indexed
    i + c, accumulated over two nested contraction loops."""
    @nki.jit
    def k(a, b):
        n = b.shape[1] // 128
        out = nl.ndarray((128, n * 128), dtype=nl.float32, buffer=nl.shared_hbm)
        ps = nl.ndarray((n + 1, nl.par_dim(128), 128), dtype=nl.float32,
                        buffer=ncc.psum.mod_alloc(base_bank=7, num_bank_tiles=(1,)))
        for i in nl.sequential_range(n):
            for j in nl.affine_range(2):
                for jj in nl.affine_range(2):
                    c = j * 2 + jj
                    at = nl.load(a[nl.ds(c * 128, 128), :])
                    bt = nl.load(b[nl.ds(c * 128, 128), nl.ds(i * 128, 128)])
                    ps[i + 1] += nisa.nc_matmul(at, bt)
            nl.store(out[:, nl.ds(i * 128, 128)], nl.copy(ps[i + 1]))
        return out
    a = _rand(512, 128)
    b = _rand(512, 3 * 128)
    np.testing.assert_allclose(k(a, b), a.T @ b, rtol=1e-4, atol=1e-4)


def _user_psum_mod_alloc(base_addr, *, base_bank=0, num_bank_tiles=()):
    """A user-written PSUM allocation function (as the SDK's example): block
    idx -> (bank, start partition, byte address)."""
    def f(idx, pdim_size, fdim_size):
        bank = base_bank
        if num_bank_tiles:
            bank += idx[0] % num_bank_tiles[0]
        return bank, 0, base_addr
    return f


def _bank_of(bank_map, idx, pdim_size, fdim_size):
    return (bank_map[idx], 0, 0)


def _sdk_transpose(psum_buffer, sbuf_alloc):
    """The SDK's test_psum/sbuf_modulo_alloc kernel (a transpose through the
    PE with an identity), its output returned."""
    @nki.jit
    def k(a):
        n, m = a.shape
        out = nl.ndarray((m, n), dtype=a.dtype, buffer=nl.shared_hbm)
        identity = nl.shared_identity_matrix(n=128, dtype=nl.bfloat16)
        for n0 in nl.affine_range(n // 128):
            for m0 in nl.affine_range(m // 128):
                ix = nl.arange(0, 128)[:, None]
                iy = nl.arange(0, 128)[None, :]
                a_local = nl.ndarray((nl.par_dim(128), 128), dtype=a.dtype,
                                     buffer=sbuf_alloc(1024))
                a_local[ix, iy] = nl.load(a[n0 * 128 + ix, m0 * 128 + iy])
                ident = nl.ndarray((nl.par_dim(128), 128), dtype=a.dtype, buffer=sbuf_alloc(0))
                ident[ix, iy] = nl.load(identity, dtype=a.dtype)
                tp = nl.ndarray((nl.par_dim(128), 128), dtype=a.dtype, buffer=psum_buffer())
                tp[ix, iy] = nisa.nc_matmul(a_local[ix, iy], ident)
                t_sb = nl.ndarray((nl.par_dim(128), 128), dtype=a.dtype, buffer=sbuf_alloc(2048))
                t_sb[ix, iy] = nl.copy(tp[ix, iy])
                nl.store(out[m0 * 128 + ix, n0 * 128 + iy], value=t_sb[ix, iy])
        return out
    return k


@pytest.mark.parametrize("psum_buffer,sbuf_alloc", [
    (lambda: ncc.psum.alloc(_user_psum_mod_alloc(base_addr=0)),
     lambda addr: ncc.sbuf.mod_alloc(base_addr=addr)),
    (lambda: ncc.psum.mod_alloc(base_bank=0),
     lambda addr: ncc.sbuf.alloc(lambda idx, p, f: (0, addr))),
    # nki-samples allocated_attention: a partial binding the FIRST parameter
    # works only when NKI calls func(idx=, pdim_size=, fdim_size=)
    (lambda: ncc.psum.alloc(functools.partial(_bank_of, bank_map={(): 3})),
     lambda addr: ncc.sbuf.mod_alloc(base_addr=addr)),
])
def test_sdk_modulo_alloc_transpose_numpy(psum_buffer, sbuf_alloc):
    a = (RNG.random((512, 256)) * 100).astype(np.float32)
    np.testing.assert_allclose(_sdk_transpose(psum_buffer, sbuf_alloc)(a), a.T, rtol=1e-6)


def test_mod_alloc_multi_dim_blocks():
    """(2, 3) block dims, num_free_tiles (1, 2): physical (i % 1, j % 2)."""
    @nki.jit
    def k(x):
        out = nl.ndarray((128, 6 * 32), dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((2, 3, nl.par_dim(128), 32), dtype=nl.float32,
                       buffer=ncc.sbuf.mod_alloc(base_addr=4096, num_free_tiles=(1, 2)))
        for i in nl.affine_range(2):
            for j in nl.affine_range(3):
                c = i * 3 + j
                t[i, j] = nl.load(x[:, nl.ds(c * 32, 32)])
                nl.store(out[:, nl.ds(c * 32, 32)], nisa.tensor_scalar(t[i, j], nl.add, 1.0))
        return out
    x = _rand(128, 6 * 32)
    assert '"shape": [128, 1, 2, 32]' in tpbsim.kernel_json(k, x)
    np.testing.assert_array_equal(k(x), x + 1)


def _refused(kernel, what, *arrays):
    with pytest.raises(NkiError) as e:
        nki.jit(kernel)(*arrays)
    assert what in str(e.value), str(e.value)


def _decl(buffer, shape=(4, nl.par_dim(128), 512), dtype=nl.float32):
    def kernel(x):
        nl.ndarray(shape, dtype=dtype, buffer=buffer())
        out = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        return out
    return kernel


X = np.zeros((1, 1), np.float32)


@pytest.mark.parametrize("buffer,shape,what", [
    (lambda: ncc.psum.mod_alloc(base_bank=7, num_bank_tiles=(2,)), None,
     "block (1,): PSUM bank 8 outside 0..7"),
    (lambda: ncc.psum.mod_alloc(base_bank=0), (2, nl.par_dim(128), 1024),
     "a PSUM tile cannot cross a 2048-byte bank: 4096 bytes per partition"),
    (lambda: ncc.psum.mod_alloc(base_bank=0, base_addr=512), None,
     "a PSUM tile starts at partition 0, byte 0 of its bank"),
    (lambda: ncc.sbuf.mod_alloc(base_addr=224 * 1024 - 2048, num_free_tiles=(2,)), None,
     "block (1,): bytes 229376..231424 per partition do not fit in SBUF (229376 bytes"),
    (lambda: ncc.sbuf.mod_alloc(base_addr=0, base_partition=32), None,
     "start_partition 32 for a tile of 128 partitions"),
    (lambda: ncc.sbuf.alloc(lambda idx, p, f: (0, idx[0] * f // 2)), None,
     "physical tiles at bytes 0 and 1024 (2048 bytes each) overlap"),
    (lambda: ncc.sbuf.alloc(lambda idx, p, f: (0, (idx[0] // 2) * f)), None,
     "not a modulo per block dim"),
    (lambda: ncc.sbuf.alloc(lambda idx, p, f: 0), None,
     "expected 2 integers (start_partition, byte_addr)"),
    (lambda: ncc.psum.alloc(lambda idx, p, f: (0, 0)), None,
     "expected 3 integers (bank, start_partition, byte_addr)"),
])
def test_allocation_refused(buffer, shape, what):
    _refused(_decl(buffer, shape or (4, nl.par_dim(128), 512)), what, X)


def test_rotated_whole_tile_uses_refused():
    """nl.zeros, a whole-tile DMA and a block slice of a rotated tile."""
    def mk(use):
        def kernel(x):
            out = nl.ndarray((4, 128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
            b = ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,))
            if use == "zeros":
                nl.zeros((4, nl.par_dim(128), 64), dtype=nl.float32, buffer=b)
                return out
            t = nl.ndarray((4, nl.par_dim(128), 64), dtype=nl.float32, buffer=b)
            if use == "dma":
                nl.store(out, t)
            else:
                nl.store(out[0], t[1:3][0])
            return out
        return kernel
    _refused(mk("zeros"), "nl.zeros of a tile whose logical blocks share [2] physical", X)
    _refused(mk("dma"), "a DMA of every block of a tile whose logical blocks share", X)
    _refused(mk("slice"), "slicing block dim 0, whose 4 logical blocks rotate over 2", X)


def test_decorators_and_directives_accepted():
    @ncc.skip_middle_end_transformations
    @nki.jit(additional_compile_opt="--internal-skip-backend-allocation-opt-nki")
    def k1(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((2, nl.par_dim(128), 64), dtype=x.dtype, buffer=ncc.sbuf)
        for i in nl.sequential_range(2, directives=ncc.no_reorder()):
            t[i] = nl.load(x[:, nl.ds(i * 64, 64)])
            nl.store(out[:, nl.ds(i * 64, 64)], nl.exp(t[i]))
        return out

    @ncc.enable_stack_allocator
    @ncc.skip_middle_end_transformations()
    @nki.baremetal
    def k2(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=ncc.psum.auto_alloc())
        t[...] = nl.load(x)
        for i in nl.affine_range(1, directives=ncc.multi_buffer(2)):
            nl.store(out, nl.exp(t))
        return out

    @nki.benchmark(warmup=5, iters=10)
    def k3(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.exp(nl.load(x)))
        return out

    x = _rand(128, 128)
    for k in (k1, k2, k3, nki.baremetal(save_neff_name="f.neff")(k3.fn)):
        np.testing.assert_allclose(k(x), np.exp(x), rtol=1e-5)


def test_shared_constant_dtype_and_beta1_is_transpose_numpy():
    """nl.shared_constant(int8 identity, dtype=) and beta-1
    nc_matmul(..., is_transpose=True): the PE's transpose, in stationary's
    dtype (as attn_fwd_v8a / v11)."""
    @nki.jit
    def k(v):
        out = nl.ndarray((128, 128), dtype=v.dtype, buffer=nl.shared_hbm)
        ident = nl.shared_constant(np.identity(128, dtype=np.int8), dtype=v.dtype)
        i_sb = nl.ndarray((nl.par_dim(128), 128), dtype=v.dtype, buffer=nl.sbuf)
        i_sb[...] = nl.load(ident)
        ps = nl.ndarray((1, nl.par_dim(128), 128), dtype=nl.float32, buffer=nl.psum)
        ps[0] = nisa.nc_matmul(nl.load(v), i_sb, is_transpose=True, is_moving_onezero=True)
        nl.store(out, nl.copy(ps[0]))
        return out
    v = _rand(128, 128)
    np.testing.assert_array_equal(k(v), v.T)


def _psum_blocks(n, zeros=False):
    @nki.jit
    def k(a, b):
        kk = a.shape[0] // 128
        out = nl.ndarray((128, n * 512), dtype=nl.float32, buffer=nl.shared_hbm)
        mk = nl.zeros if zeros else nl.ndarray
        ps = mk((n, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
        for i in nl.affine_range(n):
            for j in nl.affine_range(kk):
                at = nl.load(a[nl.ds(j * 128, 128), :])
                bt = nl.load(b[nl.ds(j * 128, 128), nl.ds(i * 512, 512)])
                ps[i] += nisa.nc_matmul(at, bt)
            if not zeros:
                nl.store(out[:, nl.ds(i * 512, 512)], nl.copy(ps[i]))
        if zeros:   # every block live until here
            for i in nl.affine_range(n):
                nl.store(out[:, nl.ds(i * 512, 512)], nl.copy(ps[i]))
        return out
    return k


def test_psum_reuse_of_block_tiles_numpy():
    """12 blocks of 2 KiB (24 KiB, past PSUM's 16 KiB), each written and
    read in its iteration: one tile per logical block, the compiler reusing
    the storage of dead blocks.  4 blocks fit: one tile, as before."""
    a = _rand(256, 128)
    b = _rand(256, 12 * 512)
    k = _psum_blocks(12)
    text = tpbsim.kernel_json(k, a, b)
    assert '"shape": [128, 12, 512]' not in text and text.count('"buffer": "psum"') == 12
    np.testing.assert_allclose(k(a, b), a.T @ b, rtol=1e-4, atol=1e-4)
    assert '"shape": [128, 4, 512]' in tpbsim.kernel_json(_psum_blocks(4), a, b[:, :2048])
    # every block live at once: 24 KiB needed, the compiler's clear error
    with pytest.raises(TpbError, match="PSUM allocation failed"):
        _psum_blocks(12, zeros=True)(a, b)


def test_matmul_of_psum_operands_numpy():
    """nl.matmul of PSUM tiles (attn_fwd_v1: scores @ nl.transpose(v)):
    copied to SBUF first."""
    @nki.jit
    def k(x, v):
        out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        vt = nl.transpose(nl.load(v))                    # PSUM
        p = nl.matmul(nl.load(x), nl.load(v), transpose_x=True)   # PSUM
        nl.store(out, nl.copy(nl.matmul(p, vt)))
        return out
    x, v = (_rand(128, 128) for _ in range(2))
    np.testing.assert_allclose(k(x, v), (x.T @ v) @ v.T, rtol=1e-4, atol=1e-4)


def test_mgrid_block_index_under_rotation_numpy():
    """ps[i, m.p, m.x] += ... (the SDK's block + mgrid form) keeps the
    logical block: each block's group starts fresh on a shared bank."""
    @nki.jit
    def k(a, b):
        n = b.shape[1] // 512
        out = nl.ndarray((128, n * 512), dtype=nl.float32, buffer=nl.shared_hbm)
        ps = nl.ndarray((n, nl.par_dim(128), 512), dtype=nl.float32,
                        buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(2,)))
        m = nl.mgrid[0:128, 0:512]
        for i in nl.affine_range(n):
            for j in nl.affine_range(2):
                at = nl.load(a[nl.ds(j * 128, 128), :])
                bt = nl.load(b[nl.ds(j * 128, 128), nl.ds(i * 512, 512)])
                ps[i, m.p, m.x] += nisa.nc_matmul(at, bt)
            nl.store(out[:, nl.ds(i * 512, 512)], nl.copy(ps[i, m.p, m.x]))
        return out
    a = _rand(256, 128)
    b = _rand(256, 3 * 512)
    np.testing.assert_allclose(k(a, b), a.T @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("beta2", [False, True])
def test_iadd_after_another_write_accumulates_numpy(beta2):
    """A logical block written by a copy (beta-1 `=` or a beta-2 dst) is
    no fresh group: `+=` adds to it, on a rotated PSUM tile too."""
    @nki.jit
    def k(a, b, c):
        n = b.shape[1] // 512
        out = nl.ndarray((128, n * 512), dtype=nl.float32, buffer=nl.shared_hbm)
        ps = nl.ndarray((n, nl.par_dim(128), 512), dtype=nl.float32,
                        buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(2,)))
        for i in nl.affine_range(n):
            init = nl.load(c[:, nl.ds(i * 512, 512)])
            if beta2:
                nisa.tensor_copy(ps[i], init)
            else:
                ps[i] = nl.copy(init)
            for j in nl.affine_range(2):
                at = nl.load(a[nl.ds(j * 128, 128), :])
                bt = nl.load(b[nl.ds(j * 128, 128), nl.ds(i * 512, 512)])
                ps[i] += nisa.nc_matmul(at, bt)
            nl.store(out[:, nl.ds(i * 512, 512)], nl.copy(ps[i]))
        return out
    a = _rand(256, 128)
    b = _rand(256, 3 * 512)
    c = _rand(128, 3 * 512)
    np.testing.assert_allclose(k(a, b, c), c + a.T @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rotated", [False, True])
@pytest.mark.parametrize("beta2", [False, True])
def test_block_written_in_an_earlier_loop_accumulates_numpy(rotated, beta2):
    """ps[i] written in one loop, ps[j] in a later one: the same logical
    blocks, so the second loop's matmuls accumulate (a symbolic block index
    beside another block name is traced per iteration, where it is exact)."""
    @nki.jit
    def k(a, b):
        n = b.shape[1] // 512
        out = nl.ndarray((128, n * 512), dtype=nl.float32, buffer=nl.shared_hbm)
        buf = ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(4,)) if rotated else nl.psum
        ps = nl.ndarray((n, nl.par_dim(128), 512), dtype=nl.float32, buffer=buf)
        for half in (0, 1):
            for i in nl.affine_range(n):
                _mm_into(ps, i, a, b, half, beta2)
        for i in nl.affine_range(n):
            nl.store(out[:, nl.ds(i * 512, 512)], nl.copy(ps[i]))
        return out
    a = _rand(256, 128)
    b = _rand(256, 4 * 512)
    np.testing.assert_allclose(k(a, b), a.T @ b, rtol=1e-4, atol=1e-4)


def test_sbuf_capacity_follows_the_target_override(monkeypatch):
    """trn1 (NEURON_PLATFORM_TARGET_OVERRIDE): 192 KiB per partition."""
    buf = lambda: ncc.sbuf.mod_alloc(base_addr=190 * 1024, num_free_tiles=(2,))
    tpbsim.kernel_json(nki.jit(_decl(buf)), X)   # traces: fits trn2's 224 KiB
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    _refused(_decl(buf), "do not fit in SBUF (196608 bytes per partition)", X)


def test_sbuf_capacity_follows_the_simulated_target():
    """simulate(target="trn1") traces for trn1: 192 KiB per partition."""
    @nki.jit
    def kernel(x):
        nl.ndarray((4, nl.par_dim(128), 512), dtype=nl.float32,
                   buffer=ncc.sbuf.mod_alloc(base_addr=190 * 1024, num_free_tiles=(2,)))
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(x))
        return out
    r = tpbsim.simulate(kernel, X + 3, target="trn2")   # fits trn2's 224 KiB
    np.testing.assert_array_equal(r.outputs, X + 3)
    with pytest.raises(NkiError, match="196608 bytes per partition"):
        tpbsim.simulate(kernel, X, target="trn1")


def test_program_id_block_beside_another_refused():
    """ps[pid] and ps[0] are one block in program 0 only: refused in a
    kernel traced once for all programs (more than 256; fewer are traced
    per program, each knowing its block)."""
    def kernel(a, b):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        ps = nl.ndarray((2, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
        ps[nl.program_id(0)] += nisa.nc_matmul(nl.load(a), nl.load(b))
        ps[0] += nisa.nc_matmul(nl.load(a), nl.load(b))
        nl.store(out, nl.copy(ps[0]))
        return out
    a, b = np.zeros((128, 128), np.float32), np.zeros((128, 512), np.float32)
    with pytest.raises(NkiError, match="blocks t@pid and t@0, one indexed by nl.program_id"):
        tpbsim.kernel_json(nki.baremetal(kernel)[257], a, b)


def test_iadd_after_a_write_in_an_earlier_unrolled_iteration_numpy():
    """A PSUM tile written in iteration 0 of a loop traced per iteration
    (Python control flow on its variable): iteration 1's `+=` still adds
    (its ops are no longer in the traced body; the write is recorded)."""
    @nki.jit
    def k(a, b, c):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        for r in nl.sequential_range(2):
            if r == 0:
                nisa.tensor_copy(acc, nl.load(c))
            acc += nisa.nc_matmul(nl.load(a), nl.load(b))
        nl.store(out, nl.copy(acc))
        return out
    a = _rand(128, 128)
    b = _rand(128, 512)
    c = _rand(128, 512)
    np.testing.assert_allclose(k(a, b, c), c + 2 * (a.T @ b), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("loop", [range, nl.affine_range])
def test_iadd_into_column_ranges_of_one_psum_tile_numpy(loop):
    """acc[:, n*128:(n+1)*128] += ...: each column range is its own region
    (its first matmul overwrites), though the tile is one (regions are
    tracked by element, not by tile)."""
    @nki.jit
    def k(a, b):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        for n in loop(4):
            for j in nl.affine_range(2):
                acc[:, n * 128:(n + 1) * 128] += nisa.nc_matmul(
                    nl.load(a[nl.ds(j * 128, 128), :]),
                    nl.load(b[nl.ds(j * 128, 128), nl.ds(n * 128, 128)]))
        nl.store(out, nl.copy(acc))
        return out
    a = _rand(256, 128)
    b = _rand(256, 512)
    np.testing.assert_allclose(k(a, b), a.T @ b, rtol=1e-4, atol=1e-4)


def test_iadd_into_a_partly_written_region_refused():
    def kernel(a, b):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        acc[:, 0:256] += nisa.nc_matmul(nl.load(a), nl.load(b[:, 0:256]))
        acc[:, 128:384] += nisa.nc_matmul(nl.load(a), nl.load(b[:, 0:256]))
        nl.store(out, nl.copy(acc))
        return out
    a, b = np.zeros((128, 128), np.float32), np.zeros((128, 512), np.float32)
    _refused(kernel, "part of the region \"t[:, 128:384]\" was written before", a, b)



def test_psum_reuse_only_when_the_compiler_cannot_fit():
    """Two 12 KiB PSUM block tiles (24 KiB declared) used one after the
    other, the first by a DMA of every block (one tile per block could not
    do that): the compiler fits the two in turn, so they stay whole."""
    @nki.jit
    def k(x):
        out1 = nl.ndarray((6, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        out2 = nl.ndarray((6, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        xt, xm = nl.load(x[:, 0:128]), nl.load(x)
        p1 = nl.ndarray((6, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
        for i in nl.affine_range(6):
            p1[i] = nisa.nc_matmul(xt, xm)
        nl.store(out1, p1)
        p2 = nl.ndarray((6, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
        for i in nl.affine_range(6):
            p2[i] = nisa.nc_matmul(xt, xm)
            nl.store(out2[i], nl.copy(p2[i]))
        return out1, out2
    x = _rand(128, 512)
    want = x[:, :128].T @ x
    for got in k(x):
        np.testing.assert_allclose(got, np.broadcast_to(want, (6, 128, 512)), rtol=1e-4,
                                   atol=1e-4)
