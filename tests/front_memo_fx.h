/* front_memo_fx.h - the builder fixture of the front-end memo tests
 * (test_front_opmemo.c, test_front_slots.c): an input a [256,64] and two
 * SBUF tiles t, u [128,64] fp32 in a trn2 kernel. */
#ifndef TPB_FRONT_MEMO_FX_H
#define TPB_FRONT_MEMO_FX_H

#include "front_json_util.h"

#include "builder.h"

typedef struct {
    tir_kernel_t k;
    tpb_err_t err;
    enc_builder_t b;
    int a, t, u;
} fx_t;

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof *f);
    assert_int_equal(enc_builder_init(&f->b, &f->k, "memo", "trn2", &f->err), 0);
    f->a = enc_input(&f->b, "a", ISA_DT_FP32, 2, (int64_t[]){256, 64});
    f->t = enc_tile(&f->b, "t", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 64});
    f->u = enc_tile(&f->b, "u", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 64});
    assert_false(f->b.failed);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    enc_builder_free(&f->b);
    tir_kernel_free(&f->k);
    free(f);
    return 0;
}

#endif
