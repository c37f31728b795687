/* The tile IR's pools (encoder/tir.c tir_ap_intern, tir_rare_intern): an
 * op's operands and rare fields point to kernel-owned records that equal
 * values share.  These tests fail on a pool that does not share, moves
 * records as it grows, hands out a record for the defaults, or leaves an
 * op copied into another kernel pointing into the first one's pool (run
 * them under -DTPB_SANITIZE=ON: a dangling pointer is a use after free
 * there). */
#include <limits.h>

#include "front_json_util.h"

static tir_ap_t ap_of(int tensor, int64_t offset, int64_t count)
{
    tir_ap_t a;
    memset(&a, 0, sizeof a);
    a.tensor = tensor;
    a.ndim = 2;
    a.offset = offset;
    a.step[0] = 512, a.count[0] = count;
    a.step[1] = 1, a.count[1] = 512;
    return a;
}

/* Equal APs share one record; any differing byte makes another. */
static void test_intern_shares(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    tir_ap_t a = ap_of(0, 1024, 128), b = a, c = ap_of(0, 1024, 64);
    const tir_ap_t *pa = tir_ap_intern(&k, &a), *pb = tir_ap_intern(&k, &b);
    const tir_ap_t *pc = tir_ap_intern(&k, &c);
    assert_non_null(pa);
    assert_ptr_equal(pa, pb);
    assert_ptr_not_equal(pa, pc);
    assert_ptr_not_equal(pa, &a);   /* a copy, not the caller's object */
    assert_memory_equal(pa, &a, sizeof a);
    assert_memory_equal(pc, &c, sizeof c);
    c.step[1] = 2;
    assert_ptr_not_equal(tir_ap_intern(&k, &c), pc);
    assert_int_equal(k.aps.n, 3);
    tir_kernel_free(&k);
}

/* The absent operand: every operand of a fresh op is the one shared "none"
 * AP (tensor -1, all else zero), and interning that value gives it back
 * without a pool record, in any kernel. */
static void test_none_ap(void **state)
{
    (void)state;
    tir_ap_t none;
    memset(&none, 0, sizeof none);
    none.tensor = -1;
    assert_memory_equal(&tir_ap_none, &none, sizeof none);
    tir_op_t op;
    tir_op_init(&op, TIR_ACTIVATION);
    const tir_ap_t *all[] = {op.dst, op.dst2, op.src[0], op.src[1], op.src[2],
                             op.src[3], op.index, op.bias, op.s0.ap, op.s1.ap};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        assert_ptr_equal(all[i], &tir_ap_none);
    assert_int_equal(op.bias->tensor, -1);   /* readable without a NULL check */
    tir_kernel_t k;
    tir_kernel_init(&k);
    assert_ptr_equal(tir_ap_intern(&k, &none), &tir_ap_none);
    assert_int_equal(k.aps.n, 0);
    none.offset = 5;   /* tensor -1 with another offset is an AP of its own */
    assert_ptr_not_equal(tir_ap_intern(&k, &none), &tir_ap_none);
    tir_scalar_t s = tir_scalar_imm(2.5);
    assert_false(s.is_ap);
    assert_ptr_equal(s.ap, &tir_ap_none);
    tir_kernel_free(&k);
}

/* The i-th AP of the runs below: tensor `tensor` (-1: i % 7), row i. */
static tir_ap_t run_ap(int tensor, int i)
{
    return ap_of(tensor >= 0 ? tensor : i % 7, (int64_t)i * 512, 1 + i % 128);
}

/* Each of the first n APs of run_ap(tensor, .) is held by p[i] and interns
 * to it. */
static void check_run(tir_kernel_t *k, const tir_ap_t **p, int n, int tensor)
{
    for (int i = 0; i < n; i++) {
        tir_ap_t a = run_ap(tensor, i);
        assert_memory_equal(p[i], &a, sizeof a);
        assert_ptr_equal(tir_ap_intern(k, &a), p[i]);
    }
}

/* Records never move: pointers taken before the pool grew (many chunks,
 * the set rehashed several times) still hold their values and are what
 * interning the value again returns. */
static void test_pointers_survive_growth(void **state)
{
    (void)state;
    enum { N = 20000 };
    tir_kernel_t k;
    tir_kernel_init(&k);
    const tir_ap_t **p = malloc(N * sizeof *p);
    assert_non_null(p);
    for (int i = 0; i < N; i++) {
        tir_ap_t a = run_ap(-1, i);
        assert_non_null(p[i] = tir_ap_intern(&k, &a));
    }
    assert_int_equal(k.aps.n, N);
    check_run(&k, p, N, -1);
    assert_int_equal(k.aps.n, N);
    free(p);
    tir_kernel_free(&k);
}

/* A new record goes into the empty slot its lookup found (one hash), or,
 * when that insert grew the set, a slot found again in the new set: at
 * every size, in particular right at each growth, every record interned so
 * far is found again (a record put in a stale slot would be missed and
 * added twice), for APs and for tir_intern's strings. */
static void test_intern_one_hash_across_growth(void **state)
{
    (void)state;
    enum { N = 1500 };
    tir_kernel_t k;
    tir_kernel_init(&k);
    const tir_ap_t *p[N];
    const char *s[N];
    int grows = 0, last_cap = 0;
    for (int i = 0; i < N; i++) {
        tir_ap_t a = ap_of(i % 3, (int64_t)i, 1 + i % 5);
        char str[32];
        snprintf(str, sizeof str, "op[%d]", i);
        assert_non_null(p[i] = tir_ap_intern(&k, &a));
        assert_non_null(s[i] = tir_intern(&k, str));
        assert_int_equal(k.aps.n, i + 1);
        assert_int_equal(k.nstrs, i + 1);
        if (k.aps.cap != last_cap || (i & (i + 1)) == 0) {   /* grew, or a power of two */
            grows += k.aps.cap != last_cap;
            last_cap = k.aps.cap;
            for (int m = 0; m <= i; m++) {
                tir_ap_t b = ap_of(m % 3, (int64_t)m, 1 + m % 5);
                snprintf(str, sizeof str, "op[%d]", m);
                assert_ptr_equal(tir_ap_intern(&k, &b), p[m]);
                assert_ptr_equal(tir_intern(&k, str), s[m]);
                assert_string_equal(s[m], str);
            }
            assert_int_equal(k.aps.n, i + 1);
            assert_int_equal(k.nstrs, i + 1);
        }
    }
    assert_true(grows >= 3);   /* 256 -> 512 -> 1024 -> 2048 -> 4096 */
    tir_kernel_free(&k);
}

/* The set's growth places each record by its stored hash: a record is
 * hashed once per intern call, never again when the set grows (it grew
 * several times here), and every record is found again after. */
static void test_growth_hashes_nothing(void **state)
{
    (void)state;
    enum { N = 5000 };
    tir_kernel_t k;
    tir_kernel_init(&k);
    static const tir_ap_t *p[N];
    for (int i = 0; i < N; i++) {
        tir_ap_t a = ap_of(i % 7, (int64_t)i * 3, 1 + i % 4);
        assert_non_null(p[i] = tir_ap_intern(&k, &a));
    }
    assert_true(k.aps.cap >= 8192);   /* 256 -> 1024 -> 4096 -> 16384 */
    assert_int_equal(k.aps.nhash, N);
    for (int i = 0; i < N; i++) {
        tir_ap_t a = ap_of(i % 7, (int64_t)i * 3, 1 + i % 4);
        assert_ptr_equal(tir_ap_intern(&k, &a), p[i]);
    }
    assert_int_equal(k.aps.nhash, 2 * N);
    assert_int_equal(k.aps.n, N);
    tir_kernel_free(&k);
}

/* The set grows 4x while small (fewer regrowths for a stream of fresh
 * records), 2x from 2^16 slots on (bounded spare room); it stays at most
 * half full either way. */
static void test_set_growth_steps(void **state)
{
    (void)state;
    enum { N = 40000 };
    tir_kernel_t k;
    tir_kernel_init(&k);
    int caps[8], ncaps = 0;
    for (int i = 0; i < N; i++) {
        tir_ap_t a = ap_of(i % 7, (int64_t)i * 3, 1 + i % 4);
        assert_non_null(tir_ap_intern(&k, &a));
        if (ncaps == 0 || caps[ncaps - 1] != k.aps.cap) {
            assert_true(ncaps < 8);
            caps[ncaps++] = k.aps.cap;
        }
        assert_true(2 * k.aps.nset <= k.aps.cap);
    }
    /* 0: the chains hold the first records (no set yet) */
    static const int want[] = {0, 256, 1024, 4096, 16384, 65536, 131072};
    assert_int_equal(ncaps, 7);
    for (int i = 0; i < ncaps; i++)
        assert_int_equal(caps[i], want[i]);
    tir_kernel_free(&k);
}

/* The AP hash reads only the dims below ndim: APs that differ only past
 * ndim (same hash) are still distinct records, found again by contents
 * after the set has grown; APs with an ndim outside 0..TIR_MAX_DIMS (bad
 * input, reported later by validation) intern like any other. */
static void test_hash_past_ndim(void **state)
{
    (void)state;
    enum { N = 3000 };
    tir_kernel_t k;
    tir_kernel_init(&k);
    const tir_ap_t **p = malloc(N * sizeof *p);
    assert_non_null(p);
    for (int i = 0; i < N; i++) {
        tir_ap_t a = ap_of(1, 0, 128);
        a.step[4] = i;   /* past ndim 2: all N share one hash */
        a.count[5] = i % 3 == 0 ? 0 : i;
        if (i % 5 == 0)
            a.ndim = i % 2 ? -1 : TIR_MAX_DIMS + 1;
        assert_non_null(p[i] = tir_ap_intern(&k, &a));
        assert_memory_equal(p[i], &a, sizeof a);
    }
    assert_int_equal(k.aps.n, N);
    for (int i = N - 1; i >= 0; i--) {
        tir_ap_t a = ap_of(1, 0, 128);
        a.step[4] = i;
        a.count[5] = i % 3 == 0 ? 0 : i;
        if (i % 5 == 0)
            a.ndim = i % 2 ? -1 : TIR_MAX_DIMS + 1;
        assert_ptr_equal(tir_ap_intern(&k, &a), p[i]);
    }
    assert_int_equal(k.aps.n, N);
    free(p);
    tir_kernel_free(&k);
}

/* tir_op_copy_into: the op's operands become records of the destination
 * kernel, so the op stays valid after the source kernel is freed. */
static void test_copy_into_survives_source(void **state)
{
    (void)state;
    tir_kernel_t src, dst;
    tir_kernel_init(&src);
    tir_kernel_init(&dst);
    tir_ap_t d = ap_of(1, 0, 128), s0 = ap_of(2, 512, 128), sc = ap_of(3, 0, 128);
    sc.ndim = 1, sc.count[1] = 0, sc.step[1] = 0;
    tir_op_t op;
    tir_op_init(&op, TIR_TENSOR_SCALAR);
    op.dst = tir_ap_intern(&src, &d);
    op.src[0] = tir_ap_intern(&src, &s0);
    op.s0.is_ap = true;
    op.s0.ap = tir_ap_intern(&src, &sc);
    const tir_ap_t *old_dst = op.dst;
    assert_int_equal(tir_op_copy_into(&dst, &op), 0);
    assert_ptr_not_equal(op.dst, old_dst);
    assert_ptr_equal(op.dst, tir_ap_intern(&dst, &d));
    assert_ptr_equal(op.bias, &tir_ap_none);   /* absent stays the shared none */
    assert_int_equal(dst.aps.n, 3);
    tir_kernel_free(&src);
    assert_memory_equal(op.dst, &d, sizeof d);
    assert_memory_equal(op.src[0], &s0, sizeof s0);
    assert_memory_equal(op.s0.ap, &sc, sizeof sc);
    assert_int_equal(tir_add_op(&dst, &op), 0);
    tir_kernel_free(&dst);
}

/* The rare fields: the defaults are the one shared tir_rare_default (every
 * fresh op points at it), equal blocks share a record, and an op copied
 * into another kernel gets that kernel's record. */
static void test_rare_fields(void **state)
{
    (void)state;
    tir_op_t op;
    tir_op_init(&op, TIR_DMA_TRANSPOSE);
    assert_ptr_equal(op.rare, &tir_rare_default);
    for (int i = 0; i < 32; i++)
        assert_int_equal(op.rare->shuffle_mask[i], 255);
    for (int i = 0; i < 8; i++)
        assert_int_equal(op.rare->rgroup[i], -1), assert_int_equal(op.rare->perm_from[i], -1);
    assert_int_equal(op.rare->n_transpose_axes, 0);
    tir_kernel_t src, dst;
    tir_kernel_init(&src);
    tir_kernel_init(&dst);
    tir_op_rare_t r = tir_rare_default;
    assert_ptr_equal(tir_rare_intern(&src, &r), &tir_rare_default);
    assert_int_equal(src.rares.n, 0);
    r.n_transpose_axes = 2, r.transpose_axes[0] = 1;
    op.rare = tir_rare_intern(&src, &r);
    assert_non_null(op.rare);
    assert_ptr_equal(tir_rare_intern(&src, &r), op.rare);
    assert_int_equal(src.rares.n, 1);
    assert_int_equal(tir_op_copy_into(&dst, &op), 0);
    tir_kernel_free(&src);
    assert_memory_equal(op.rare, &r, sizeof r);
    assert_ptr_equal(tir_rare_intern(&dst, &r), op.rare);
    tir_kernel_free(&dst);
}

/* A shallow copy of a kernel (the compile's work copy) detaches the pool:
 * what it interns is its own and the original's pool is untouched. */
static void test_detach(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    tir_ap_t a = ap_of(0, 0, 128), b = ap_of(0, 512, 128);
    const tir_ap_t *pa = tir_ap_intern(&k, &a);
    tir_kernel_t w = k;
    tir_pools_detach(&w);
    const tir_ap_t *pb = tir_ap_intern(&w, &b), *pa2 = tir_ap_intern(&w, &a);
    assert_ptr_not_equal(pa2, pa);   /* w's own record */
    assert_int_equal(k.aps.n, 1);
    assert_int_equal(w.aps.n, 2);
    tir_pools_free(&w);
    assert_memory_equal(pa, &a, sizeof a);
    assert_ptr_equal(tir_ap_intern(&k, &a), pa);
    (void)pb;
    tir_kernel_free(&k);
}

/* The front-end interns: 64 iterations of a loop that reuse one tile and
 * step through an input share their records (the pool holds the distinct
 * APs, not one per op). */
static void test_loop_iterations_share(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("w", "[1, 512]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [0, 64], 'body': ["
           " {'op': 'load', 'dst': 'w', 'src': 'a[i % 2:i % 2 + 1, :]'},"
           " {'op': 'store', 'dst': 'out[0:1, :]', 'src': 'w'}]}",
           &k);
    assert_int_equal(k.nops, 128);
    assert_int_equal(k.aps.n, 4);   /* w, a[0], a[1], out[0] */
    for (int i = 4; i < 128; i++)   /* two iterations back: the same a row */
        assert_ptr_equal(k.ops[i].src[0], k.ops[i - 4].src[0]);
    assert_ptr_equal(k.ops[0].dst, k.ops[1].src[0]);
    tir_kernel_free(&k);
}

/* A flat body's plain operands (fj_intern_ap_str's quick path) intern the
 * records the full parser's do: each pair reads the same slices, the
 * second through an expression the quick reader leaves to the parser. */
static void test_flat_quick_operands(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("w", "[1, 512]", "float32") T("h", "[1, 256]", "float32")
           "{'op': 'load', 'dst': 'w', 'src': 'a[3:4, :]'},"
           "{'op': 'load', 'dst': 'w', 'src': 'a[1+2:4, :]'},"
           "{'op': 'load', 'dst': 'h', 'src': 'a[7:8, 256:512]'},"
           "{'op': 'load', 'dst': 'h', 'src': 'a[7:8, 2*128:512]'},"
           "{'op': 'store', 'dst': 'out[ 9 : 10 ,: ]', 'src': 'w'},"
           "{'op': 'store', 'dst': 'out[(9):10, :]', 'src': 'w'}",
           &k);
    assert_int_equal(k.nops, 6);
    for (int i = 0; i < 6; i += 2) {
        assert_ptr_equal(k.ops[i].src[0], k.ops[i + 1].src[0]);
        assert_ptr_equal(k.ops[i].dst, k.ops[i + 1].dst);
    }
    assert_int_equal(k.ops[0].src[0]->offset, 3 * 512);
    assert_int_equal(k.ops[2].src[0]->offset, 7 * 512 + 256);
    assert_int_equal(k.ops[2].src[0]->count[1], 256);
    assert_int_equal(k.ops[4].dst->offset, 9 * 512);
    tir_kernel_free(&k);
}

/* The affine pattern lives in the rare record: an iota repeated by a
 * loop shares one record holding it, an op without a pattern keeps the
 * shared defaults, and a record copied, edited and interned back equals
 * the original byte for byte when nothing changed (no padding bytes). */
static void test_pattern_in_rare(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("iv", "[128, 4, 16]", "int32")
           "{'op': 'for', 'var': 'i', 'range': [0, 16], 'body': ["
           " {'op': 'iota', 'dst': 'iv', 'pattern': [[16, 4], [1, 16]], 'offset': 3,"
           "  'channel_multiplier': 64},"
           " {'op': 'store', 'dst': 'out[0:1, 0:4]', 'src': 'iv[0:1, 0, 0:4]'}]}",
           &k);
    assert_int_equal(k.nops, 32);
    const tir_op_rare_t *r = k.ops[0].rare;
    assert_ptr_not_equal(r, &tir_rare_default);
    assert_int_equal(r->pat_ndim, 2);
    assert_int_equal(r->pat_step[0], 16);
    assert_int_equal(r->pat_step[1], 1);
    assert_int_equal(r->pat_offset, 3);
    assert_int_equal(r->pat_cm, 64);
    for (int i = 0; i < 32; i += 2) {
        assert_ptr_equal(k.ops[i].rare, r);
        assert_ptr_equal(k.ops[i + 1].rare, &tir_rare_default);
    }
    tir_op_rare_t copy = *r;
    assert_ptr_equal(tir_rare_intern(&k, &copy), r);
    assert_int_equal(tir_rare_default.barrier_id, -1);
    assert_int_equal(tir_rare_default.peer, -1);
    assert_int_equal(sizeof(tir_op_rare_t), offsetof(tir_op_rare_t, pad_) + sizeof copy.pad_);
    tir_kernel_free(&k);
}

/* The per-kind scalars moved out of tir_op_t (the PE tile fields,
 * num_elem_per_idx / num_valid, index_bound, reg_imm, prob) live in the
 * rare record too: a loop's dropouts with one probability share one
 * record, a different probability gets its own, and an edited copy
 * interns to a new record while the original stays as it was. */
static void test_op_scalars_in_rare(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("r", "[128, 64]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [0, 8], 'body': ["
           " {'op': 'dropout', 'dst': 'r', 'src': 'r', 'prob': 0.25},"
           " {'op': 'dropout', 'dst': 'r', 'src': 'r', 'prob': 0.5}]}",
           &k);
    assert_int_equal(k.nops, 16);
    const tir_op_rare_t *a = k.ops[0].rare, *b = k.ops[1].rare;
    assert_true(a->prob == 0.25 && b->prob == 0.5);
    assert_ptr_not_equal(a, b);
    for (int i = 2; i < 16; i++)
        assert_ptr_equal(k.ops[i].rare, k.ops[i - 2].rare);
    assert_true(tir_rare_default.prob == 0 && tir_rare_default.index_bound == 0 &&
                tir_rare_default.reg_imm == 0 && tir_rare_default.num_valid == 0 &&
                tir_rare_default.tile_size[0] == 0 && tir_rare_default.compress_ratio == 0);
    tir_op_rare_t e = *a;
    e.index_bound = 77, e.reg_imm = -5, e.num_valid = 9, e.tile_pos[1] = 32;
    const tir_op_rare_t *p = tir_rare_intern(&k, &e);
    assert_ptr_not_equal(p, a);
    assert_true(p->prob == 0.25 && p->index_bound == 77 && p->reg_imm == -5 &&
                p->num_valid == 9 && p->tile_pos[1] == 32);
    assert_true(a->index_bound == 0 && a->tile_pos[1] == 0);
    assert_ptr_equal(tir_rare_intern(&k, &e), p);
    tir_kernel_free(&k);
}

/* The fields moved out of tir_op_t (304 -> 152 bytes): the ops of a plain
 * body (load, tensor_scalar, activation, store: compile-mixed's) all keep
 * the shared default record, so the op array carries no per-op rare
 * record; the fields a kernel does set (memset value, affine_select fill,
 * a DMA's dge / oob / qos, explicit deps, a reduce's axes and reduce_cmd)
 * read back from op->rare, and a loop's iterations share one record. */
static void test_moved_fields_in_rare(void **state)
{
    (void)state;
    assert_true(sizeof(tir_op_t) <= 152);
    tir_kernel_t k;
    parses(T("t", "[128, 512]", "float32") T("u", "[128, 512]", "float32")
           T("m", "[128, 1]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [0, 4], 'body': ["
           " {'op': 'load', 'dst': 't', 'src': 'a[0:128, :]'},"
           " {'op': 'tensor_scalar', 'dst': 'u', 'src': 't', 'op0': 'add', 'operand0': 1.0,"
           "  'engine': 'dve'},"
           " {'op': 'activation', 'dst': 't', 'src': 'u', 'func': 'exp'},"
           " {'op': 'store', 'dst': 'out[0:128, :]', 'src': 't'}]},"
           "{'op': 'for', 'var': 'i', 'range': [0, 2], 'body': ["
           " {'op': 'memset', 'dst': 'u', 'value': 2.5, 'name': 'ms'},"
           " {'op': 'affine_select', 'dst': 't', 'on_true': 'u', 'pattern': [[1, 512]],"
           "  'offset': 0, 'channel_multiplier': 1, 'cmp_op': 'greater_equal',"
           "  'on_false_value': -9.0},"
           " {'op': 'dma_copy', 'dst': 'out[0:128, :]', 'src': 't', 'dma_qos': 7,"
           "  'oob_mode': 'skip', 'deps': ['ms']},"
           " {'op': 'tensor_reduce', 'dst': 'm', 'src': 'u', 'operator': 'add', 'axis': 1},"
           " {'op': 'activation', 'dst': 't', 'src': 'u', 'func': 'exp', 'reduce_op': 'add',"
           "  'reduce_res': 'm', 'reduce_cmd': 'reduce'}]}",
           &k);
    assert_int_equal(k.nops, 16 + 10);
    for (int i = 0; i < 16; i++)
        assert_ptr_equal(k.ops[i].rare, &tir_rare_default);
    const tir_op_t *o = &k.ops[16];
    assert_int_equal(o[0].kind, TIR_MEMSET);
    assert_true(o[0].rare->value == 2.5);
    assert_int_equal(o[1].kind, TIR_AFFINE_SELECT);
    assert_true(o[1].rare->fill == -9.0);
    assert_int_equal(o[1].cmp, ISA_CMP_GE);
    assert_int_equal(o[2].kind, TIR_DMA_COPY);
    assert_int_equal(o[2].rare->qos, 7);
    assert_int_equal(o[2].rare->oob_mode, ISA_OOB_SKIP);
    assert_int_equal(o[2].rare->ndeps, 1);
    assert_int_equal(o[2].rare->deps[0], 16);
    assert_int_equal(o[7].rare->deps[0], 21);   /* the 2nd iteration's memset */
    assert_int_equal(o[3].kind, TIR_TENSOR_REDUCE);
    assert_int_equal(o[3].rare->axes, 1);
    assert_int_equal(o[4].kind, TIR_ACTIVATION);
    assert_int_equal(o[4].reduce_op, ISA_ALU_ADD);
    assert_int_equal(o[4].rare->reduce_cmd, ISA_REDCMD_REDUCE);
    for (int i = 0; i < 5; i++)
        if (i != 2)   /* the dma_copy's deps name each iteration's memset */
            assert_ptr_equal(o[i].rare, o[i + 5].rare);
    tir_kernel_free(&k);
}

/* The per-tensor chains: 20 000 tensors with two APs each (a fresh tile
 * per iteration) intern without the hash set (nothing hashed, no set
 * allocated), equal APs give one pointer, and every record is found again
 * after by_tensor grew (tensors seen in a scattered order). */
static void test_chain_per_tensor(void **state)
{
    (void)state;
    enum { T = 20000 };
    tir_kernel_t k;
    tir_kernel_init(&k);
    const tir_ap_t **p = malloc(2 * T * sizeof *p);
    assert_non_null(p);
    for (int i = 0; i < T; i++) {
        int t = (int)((i * 7919L) % T);   /* 7919 prime: every tensor once */
        tir_ap_t a = ap_of(t, 0, 128), b = ap_of(t, 64, 64);
        assert_non_null(p[2 * t] = tir_ap_intern(&k, &a));
        assert_non_null(p[2 * t + 1] = tir_ap_intern(&k, &b));
        assert_ptr_equal(tir_ap_intern(&k, &a), p[2 * t]);
        assert_ptr_not_equal(p[2 * t], p[2 * t + 1]);
    }
    assert_int_equal(k.aps.n, 2 * T);
    assert_int_equal(k.aps.nset, 0);
    assert_int_equal(k.aps.nhash, 0);
    assert_null(k.aps.set);
    assert_true(k.aps.cap_tensors >= T);
    for (int t = 0; t < T; t++) {
        tir_ap_t a = ap_of(t, 0, 128), b = ap_of(t, 64, 64);
        assert_ptr_equal(tir_ap_intern(&k, &a), p[2 * t]);
        assert_ptr_equal(tir_ap_intern(&k, &b), p[2 * t + 1]);
        assert_memory_equal(p[2 * t + 1], &b, sizeof b);
    }
    assert_int_equal(k.aps.n, 2 * T);
    free(p);
    tir_kernel_free(&k);
}

/* A tensor with many distinct APs: past a chain's length its records move
 * to the set (all of them: the pointers handed out while they were in the
 * chain are still what interning returns), the other tensors keep their
 * chains, and nothing is stored twice. */
static void test_chain_spills_to_set(void **state)
{
    (void)state;
    enum { N = 3000 };
    tir_kernel_t k;
    tir_kernel_init(&k);
    static const tir_ap_t *p[N];
    tir_ap_t other = ap_of(9, 0, 128);
    const tir_ap_t *po = tir_ap_intern(&k, &other);
    for (int i = 0; i < N; i++) {
        tir_ap_t a = run_ap(3, i);
        assert_non_null(p[i] = tir_ap_intern(&k, &a));
        assert_ptr_equal(tir_ap_intern(&k, &a), p[i]);
        if (i < 20)   /* across the move: all of them */
            check_run(&k, p, i + 1, 3);
    }
    assert_int_equal(k.aps.n, N + 1);
    assert_int_equal(k.aps.nset, N);   /* tensor 3's, none of tensor 9's */
    check_run(&k, p, N, 3);
    assert_ptr_equal(tir_ap_intern(&k, &other), po);
    assert_int_equal(k.aps.n, N + 1);
    tir_kernel_free(&k);
}

/* Tensor indices without a chain (negative, or past the chains' bound:
 * bad operands that validation reports later) intern in the set, each
 * value once, apart from a valid tensor's equal-looking AP. */
static void test_chain_bad_tensor(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    const int bad[] = {-2, -1, INT_MAX, 1 << 22, 1 << 30};
    const tir_ap_t *p[5];
    for (int i = 0; i < 5; i++) {
        tir_ap_t a = ap_of(bad[i], 0, 128);
        assert_non_null(p[i] = tir_ap_intern(&k, &a));
        assert_ptr_not_equal(p[i], &tir_ap_none);
        assert_ptr_equal(tir_ap_intern(&k, &a), p[i]);
    }
    assert_int_equal(k.aps.nset, 5);
    assert_true(k.aps.cap_tensors < (1 << 22));   /* no chain slot made for them */
    tir_ap_t a = ap_of(0, 0, 128);
    assert_ptr_not_equal(tir_ap_intern(&k, &a), p[0]);
    assert_int_equal(k.aps.n, 6);
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intern_shares),
        cmocka_unit_test(test_none_ap),
        cmocka_unit_test(test_pointers_survive_growth),
        cmocka_unit_test(test_intern_one_hash_across_growth),
        cmocka_unit_test(test_hash_past_ndim),
        cmocka_unit_test(test_copy_into_survives_source),
        cmocka_unit_test(test_rare_fields),
        cmocka_unit_test(test_detach),
        cmocka_unit_test(test_growth_hashes_nothing),
        cmocka_unit_test(test_set_growth_steps),
        cmocka_unit_test(test_loop_iterations_share),
        cmocka_unit_test(test_flat_quick_operands),
        cmocka_unit_test(test_pattern_in_rare),
        cmocka_unit_test(test_op_scalars_in_rare),
        cmocka_unit_test(test_moved_fields_in_rare),
        cmocka_unit_test(test_chain_per_tensor),
        cmocka_unit_test(test_chain_spills_to_set),
        cmocka_unit_test(test_chain_bad_tensor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
