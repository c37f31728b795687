/* A loop body's bare operand names (thirteenth session, #16: fj_operands.c
 * fj_intern_ap_str, builder_memo.c enc_ap_full_interned): an operand text
 * compiled with no slices is answered from its tensor's whole access
 * pattern without the slice and memo path.  A loop's ops must equal the
 * same statements written out flat at the top level, where nothing is
 * compiled (the general path): the same tensors (by name) and the same
 * access patterns, iteration by iteration. */
#include "front_json_util.h"

/* The op's operand records in a fixed order (absent: &tir_ap_none). */
static const tir_ap_t *op_ap(const tir_op_t *op, int i)
{
    const tir_ap_t *aps[] = {op->dst, op->src[0], op->src[1], op->src[2], op->bias, op->s0.ap,
                             op->s1.ap};
    return aps[i];
}

static void same_ap(const tir_kernel_t *a, const tir_ap_t *x, const tir_kernel_t *b,
                    const tir_ap_t *y, int op)
{
    if ((x == &tir_ap_none) != (y == &tir_ap_none))
        fail_msg("op %d: an operand present in one kernel only", op);
    if (x == &tir_ap_none)
        return;
    assert_true(x->tensor >= 0 && y->tensor >= 0);
    if (strcmp(a->tensors[x->tensor].name, b->tensors[y->tensor].name))
        fail_msg("op %d: tensor %s, flat %s", op, a->tensors[x->tensor].name,
                 b->tensors[y->tensor].name);
    assert_int_equal(x->offset, y->offset);
    assert_int_equal(x->ndim, y->ndim);
    for (int d = 0; d < x->ndim; d++) {
        assert_int_equal(x->step[d], y->step[d]);
        assert_int_equal(x->count[d], y->count[d]);
    }
}

/* loop and flat parse to the same ops */
static void same_ops(const char *loop, const char *flat)
{
    tir_kernel_t a, b;
    parses(loop, &a);
    parses(flat, &b);
    assert_int_equal(a.nops, b.nops);
    for (int i = 0; i < a.nops; i++) {
        assert_int_equal(a.ops[i].kind, b.ops[i].kind);
        for (int s = 0; s < 7; s++)
            same_ap(&a, op_ap(&a.ops[i], s), &b, op_ap(&b.ops[i], s), i);
    }
    tir_kernel_free(&a);
    tir_kernel_free(&b);
}

#define COPY(d, s) "{'op': 'tensor_copy', 'dst': '" d "', 'src': '" s "', 'engine': 'dve'}"
#define ADD(d, x, y) "{'op': 'tensor_tensor', 'dst': '" d "', 'in0': '" x "', 'in1': '" y \
                     "', 'operator': 'add', 'engine': 'pool'}"
#define LOAD(d, s) "{'op': 'load', 'dst': '" d "', 'src': '" s "'}"

/* fresh body tiles named bare in several ops each, an outer tile, and a
 * sliced operand between them */
#define BODY(ld) T("x", "[128, 64]", "float32") T("y", "[128, 64]", "float32") \
    LOAD("x", ld) "," COPY("y", "x") "," ADD("o", "y", "x") "," COPY("x", "o")

static void test_loop_equals_flat(void **state)
{
    (void)state;
    same_ops(T("o", "[128, 64]", "float32")
             "{'op': 'for', 'var': 'i', 'range': [0, 3], 'body': ["
             BODY("a[i*64:i*64+128, 0:64]") "]}",
             T("o", "[128, 64]", "float32")
             BODY("a[0:128, 0:64]") "," BODY("a[64:192, 0:64]") "," BODY("a[128:256, 0:64]"));
}

/* A body tile whose shape follows i: the same bare text names a tile of
 * another shape every iteration (its own whole pattern, not the last
 * one's). */
#define GROW(p, q) T("g", "[" q ", 64]", "float32") LOAD("g", "a[0:" p ", 0:64]") "," COPY("g", "g")

static void test_shape_per_iteration(void **state)
{
    (void)state;
    same_ops("{'op': 'for', 'var': 'i', 'range': [0, 3], 'body': [" GROW("i*32+32", "'i*32+32'") "]}",
             GROW("32", "32") "," GROW("64", "64") "," GROW("96", "96"));
}

/* A bare name that resolves to an outer tile before a body tile of that
 * name is declared, every iteration (the body's scope ends each time). */
static void test_shadowed_name(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("x", "[128, 64]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [0, 3], 'body': ["
           T("y", "[128, 64]", "float32") COPY("y", "x") ","
           T("x", "[128, 64]", "float32") COPY("x", "y") "]}", &k);
    assert_int_equal(k.nops, 6);
    for (int i = 0; i < 6; i += 2)
        assert_string_equal(k.tensors[k.ops[i].src[0]->tensor].name, "x");
    for (int i = 1; i < 6; i += 2)
        assert_string_not_equal(k.tensors[k.ops[i].dst->tensor].name, "x");
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loop_equals_flat),
        cmocka_unit_test(test_shape_per_iteration),
        cmocka_unit_test(test_shadowed_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
