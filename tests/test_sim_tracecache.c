/* The trace writer caches the text of each distinct instruction (wait,
 * update, fields) in a fixed-size cache: every event must still carry the
 * text of its own instruction, whether it hits, misses, or evicts another
 * entry.  A stream mixes more distinct instructions than the cache holds
 * with one instruction repeated at many pcs; each event's strings are
 * checked against isa_format_inst() and the documented wait/update forms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cJSON.h"
#include "dis.h"
#include "fileio.h"
#include "sim_testlib.h"

#define NINST 9000 /* more than the writer's 4 096 cache slots */

static const char *str_arg(const cJSON *args, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Instruction i: every third one is the same plain Nop, the others differ
 * by wait semaphore (always satisfied: waits for >= 0) and update value. */
static isa_inst_t inst_at(unsigned i)
{
    isa_inst_t in = tb_op(ISA_OP_NOP);
    if (i % 3 == 0)
        return in;
    tb_wait(&in, i % 100, 0);
    tb_upd(&in, 100 + i % 7, ISA_SEMOP_SEM_WR_IMM, i, i % 2 == 0);
    return in;
}

static void test_each_event_has_its_instruction_text(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    isa_inst_t *prog = malloc(NINST * sizeof *prog);
    uint8_t *bin = malloc((size_t)NINST * ISA_BUNDLE_BYTES);
    assert_non_null(prog);
    assert_non_null(bin);
    /* one bundle per instruction, so pc == i (tb_add is quadratic) */
    for (unsigned i = 0; i < NINST; i++) {
        prog[i] = inst_at(i);
        isa_err_t ie;
        if (isa_encode(&prog[i], bin + (size_t)i * ISA_BUNDLE_BYTES, &ie) != ISA_OK)
            fail_msg("%s", ie.msg);
    }
    tb_write(&b);
    tb_write_raw(&b, 0, TB_DVE, bin, (size_t)NINST * ISA_BUNDLE_BYTES);
    free(bin);
    sim_options_t o;
    sim_options_default(&o);
    o.trace = true;
    sim_t *s = tb_load(&b, &o);
    tpb_err_t err;
    if (sim_run(s, &err))
        fail_msg("%s", err.msg);
    char path[600];
    snprintf(path, sizeof path, "%s/trace.json", b.dir);
    assert_int_equal(sim_write_trace(s, path, &err), 0);
    sim_free(s);

    uint8_t *buf;
    size_t len;
    if (fio_read_all(path, &buf, &len, &err) != 0)
        fail_msg("%s", err.msg);
    cJSON *root = cJSON_ParseWithLength((const char *)buf, len);
    free(buf);
    assert_non_null(root);
    const cJSON *e;
    unsigned seen = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
    {
        const cJSON *ph = cJSON_GetObjectItem(e, "ph");
        if (strcmp(ph->valuestring, "X") != 0 || cJSON_GetObjectItem(e, "tid")->valueint != 4)
            continue;
        const cJSON *args = cJSON_GetObjectItem(e, "args");
        unsigned pc = (unsigned)cJSON_GetObjectItem(args, "pc")->valuedouble;
        assert_true(pc < NINST);
        const isa_inst_t *in = &prog[pc];
        char want[1024];
        isa_format_inst(in, want, sizeof want);
        const char *fields = str_arg(args, "fields");
        assert_non_null(fields);
        if (strcmp(fields, want) != 0)
            fail_msg("pc %u: fields '%s', want '%s'", pc, fields, want);
        const char *wait = str_arg(args, "wait"), *upd = str_arg(args, "update");
        if (pc % 3 == 0) {
            assert_null(wait);
            assert_null(upd);
        } else {
            snprintf(want, sizeof want, "S%u>=0", pc % 100);
            assert_non_null(wait);
            assert_string_equal(wait, want);
            snprintf(want, sizeof want, "S%u sem_wr_imm %u @%s", 100 + pc % 7, pc,
                     pc % 2 == 0 ? "read" : "complete");
            assert_non_null(upd);
            assert_string_equal(upd, want);
        }
        seen++;
    }
    assert_int_equal(seen, NINST);
    cJSON_Delete(root);
    free(prog);
    tb_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_event_has_its_instruction_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
