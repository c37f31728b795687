/* Shared DRAM colouring (encoder/lnc_color.c, seed 003
 * coloring_allocator_dram_shared): two scratch tensors share bytes only
 * when an all-core rendezvous separates their lifetimes, and
 * verifyTensorMap accepts shared bytes only for disjoint live epochs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fileio.h"
#include "frontend.h"
#include "lnc.h"

#define KERNEL TPB_SOURCE_DIR "/golden/mc_dram_colour_2/kernel.json"

typedef struct {
    tir_kernel_t p[2];
    lnc_split_t s;
    enc_hbm_layout_t hbm;
    int s1, s2;
} colour_t;

static char *read_kernel(void)
{
    uint8_t *txt = NULL;
    size_t len = 0;
    tpb_err_t err = {{0}};
    assert_int_equal(fio_read_all(KERNEL, &txt, &len, &err), 0);
    char *s = malloc(len + 1);
    assert_non_null(s);
    memcpy(s, txt, len);
    s[len] = 0;
    free(txt);
    return s;
}

/* Drop the n-th (0-based) core_barrier line of the kernel text. */
static void drop_barrier(char *text, int nth)
{
    char *p = text;
    for (int i = 0; i <= nth; i++) {
        p = strstr(p, "{\"op\": \"core_barrier\"");
        assert_non_null(p);
        if (i < nth)
            p++;
    }
    char *e = strchr(p, '\n');
    assert_non_null(e);
    memmove(p, e + 1, strlen(e + 1) + 1);
}

static int tensor(const tir_kernel_t *k, const char *name)
{
    for (int i = 0; i < k->ntensors; i++)
        if (!strcmp(k->tensors[i].name, name))
            return i;
    return -1;
}

/* Edits core `core`'s split kernel before the layout. */
typedef void (*edit_fn)(tir_kernel_t *k, int core);

static void colour_edit(const char *text, colour_t *c, edit_fn edit)
{
    tpb_err_t err = {{0}};
    memset(c, 0, sizeof *c);
    for (int i = 0; i < 2; i++)
        assert_int_equal(enc_parse_kernel_json(text, strlen(text), "k.json", NULL, NULL, i,
                                               &c->p[i], &err), 0);
    assert_int_equal(lnc_split(c->p, 2, &c->s, &err), 0);
    for (int i = 0; edit && i < 2; i++)
        edit(&c->s.core_k[i], i);
    assert_int_equal(enc_hbm_layout(&c->s.core_k[0], &c->hbm, &err), 0);
    assert_int_equal(lnc_color_dram_shared(&c->s, &c->hbm, &err), 0);
    c->s1 = tensor(&c->s.core_k[0], "s1");
    c->s2 = tensor(&c->s.core_k[0], "s2");
    assert_true(c->s1 >= 0 && c->s2 >= 0);
}

static void colour(const char *text, colour_t *c)
{
    colour_edit(text, c, NULL);
}

/* The n-th core barrier of k. */
static tir_op_t *barrier(tir_kernel_t *k, int nth)
{
    for (int i = 0; i < k->nops; i++)
        if (k->ops[i].kind == TIR_CORE_BARRIER && nth-- == 0)
            return &k->ops[i];
    fail();
    return NULL;
}

/* the middle barrier names only the core itself: no rendezvous of all */
static void middle_self_only(tir_kernel_t *k, int core)
{
    tir_op_t *b = barrier(k, 1);
    tir_op_rare_t r = *b->rare;
    r.barrier_cores = 1u << core;
    b->rare = tir_rare_intern(k, &r);
    assert_non_null(b->rare);
}

/* core 1 loses its last barrier: the cores disagree on the epochs */
static void core1_drops_last(tir_kernel_t *k, int core)
{
    if (core == 1)
        barrier(k, 2)->kind = TIR_NOOP;
}

static void colour_free(colour_t *c)
{
    enc_hbm_layout_free(&c->hbm);
    lnc_split_free(&c->s);
    for (int i = 0; i < 2; i++)
        tir_kernel_free(&c->p[i]);
}

/* s1 live in epochs 0-1, s2 in 2-3: s2 takes s1's bytes; HBM shrinks by s2. */
static void test_disjoint_epochs_share(void **state)
{
    (void)state;
    char *text = read_kernel();
    colour_t c;
    colour(text, &c);
    assert_int_equal(c.hbm.addr[c.s1], c.hbm.addr[c.s2]);
    assert_non_null(c.hbm.live_lo);
    assert_int_equal(c.hbm.live_lo[c.s1], 0);
    assert_int_equal(c.hbm.live_hi[c.s1], 1);
    assert_int_equal(c.hbm.live_lo[c.s2], 2);
    assert_int_equal(c.hbm.live_hi[c.s2], 3);
    /* a [128, 8] in, [128, 8] out, one [2, 128, 4] scratch region */
    assert_int_equal(c.hbm.total, 3 * 4096);
    colour_free(&c);
    free(text);
}

/* Without the barrier between s1's reads and s2's writes a fast core
 * would overwrite s1 while the other still reads it: no sharing. */
static void test_no_rendezvous_no_sharing(void **state)
{
    (void)state;
    char *text = read_kernel();
    drop_barrier(text, 1);
    colour_t c;
    colour(text, &c);
    assert_int_not_equal(c.hbm.addr[c.s1], c.hbm.addr[c.s2]);
    assert_true(c.hbm.addr[c.s2] >= c.hbm.addr[c.s1] + 4096 ||
                c.hbm.addr[c.s1] >= c.hbm.addr[c.s2] + 4096);
    assert_int_equal(c.hbm.live_lo[c.s1], 0);
    assert_int_equal(c.hbm.live_hi[c.s1], 1);
    assert_int_equal(c.hbm.live_lo[c.s2], 1);
    assert_int_equal(c.hbm.total, 4 * 4096);
    colour_free(&c);
    free(text);
}

static void test_partial_barriers(void **state)
{
    (void)state;
    char *text = read_kernel();
    colour_t c;
    colour_edit(text, &c, middle_self_only);
    assert_int_not_equal(c.hbm.addr[c.s1], c.hbm.addr[c.s2]);
    assert_int_equal(c.hbm.live_hi[c.s1], 1);
    assert_int_equal(c.hbm.live_lo[c.s2], 1);
    colour_free(&c);
    colour_edit(text, &c, core1_drops_last);
    assert_null(c.hbm.live_lo);   /* dense */
    assert_int_equal(c.hbm.addr[c.s2], c.hbm.addr[c.s1] + 4096);
    colour_free(&c);
    free(text);
}

/* No all-core barrier at all: the dense layout, no epochs recorded. */
static void test_one_epoch_is_dense(void **state)
{
    (void)state;
    char *text = read_kernel();
    drop_barrier(text, 2);
    drop_barrier(text, 1);
    drop_barrier(text, 0);
    char *d = strstr(text, ", \"deps\": [\"b1\"]");   /* the memset waited for b1 */
    assert_non_null(d);
    memmove(d, d + 16, strlen(d + 16) + 1);
    colour_t c;
    colour(text, &c);
    assert_null(c.hbm.live_lo);
    assert_int_equal(c.hbm.addr[c.s2], c.hbm.addr[c.s1] + 4096);
    colour_free(&c);
    free(text);
}

static int verify(const char *s1_epochs, const char *s2_epochs, tpb_err_t *err)
{
    char dir[] = "/tmp/tpb_colour_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64], text[1024];
    snprintf(path, sizeof path, "%s/tensor-map.json", dir);
    snprintf(text, sizeof text,
             "{\"hbm_bytes\": 65536, \"tensors\": ["
             "{\"name\": \"a\", \"hbm_addr\": 0, \"bytes\": 4096, \"sbuf_compatible\": true},"
             "{\"name\": \"s1\", \"hbm_addr\": 4096, \"bytes\": 4096, \"sbuf_compatible\": true%s},"
             "{\"name\": \"s2\", \"hbm_addr\": 4096, \"bytes\": 2048, \"sbuf_compatible\": true%s}"
             "]}", s1_epochs, s2_epochs);
    assert_int_equal(fio_write_atomic(path, text, strlen(text), err), 0);
    lnc_module_t lnk;
    lnc_module_init(&lnk, "k/sgLnk", -1);
    int rc = lnc_verify_tensor_map(&lnk, path, err);
    lnc_module_free(&lnk);
    fio_rmtree(dir);
    return rc;
}

static void test_verify_shared_bytes(void **state)
{
    (void)state;
    tpb_err_t err = {{0}};
    assert_int_equal(verify(", \"live_epochs\": [0, 1]", ", \"live_epochs\": [2, 3]", &err), 0);
    assert_int_not_equal(verify(", \"live_epochs\": [0, 2]", ", \"live_epochs\": [2, 3]", &err),
                         0);
    assert_non_null(strstr(err.msg, "tensors 's1' and 's2' overlap"));
    assert_int_not_equal(verify("", ", \"live_epochs\": [2, 3]", &err), 0);
    assert_non_null(strstr(err.msg, "overlap"));
    assert_int_not_equal(verify(", \"live_epochs\": [1, 0]", ", \"live_epochs\": [2, 3]", &err),
                         0);
    assert_non_null(strstr(err.msg, "tensor 's1': live_epochs must be [first, last]"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disjoint_epochs_share),
        cmocka_unit_test(test_no_rendezvous_no_sharing),
        cmocka_unit_test(test_partial_barriers),
        cmocka_unit_test(test_one_epoch_is_dense),
        cmocka_unit_test(test_verify_shared_bytes),
    };
    return cmocka_run_group_tests(tests, 0, 0);
}
