/* Trace JSON (docs/trace-format.md) and stats JSON structure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cJSON.h"
#include "fileio.h"
#include "sim_testlib.h"

#define PITCH ISA_DMA_PARTITION_PITCH
#define F32 ISA_DT_FP32

static cJSON *read_json_file(const char *path)
{
    uint8_t *buf;
    size_t len;
    tpb_err_t err;
    if (fio_read_all(path, &buf, &len, &err) != 0)
        fail_msg("%s", err.msg);
    cJSON *j = cJSON_ParseWithLength((const char *)buf, len);
    free(buf);
    assert_non_null(j);
    return j;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v))
        fail_msg("missing number '%s'", k);
    return v->valuedouble;
}

static void build(tb_t *b)
{
    tb_init(b, 1);
    int64_t sh[2] = { 16, 32 };
    uint64_t a = tb_tensor(b, "a", "input", F32, 2, sh);
    uint64_t o = tb_tensor(b, "out", "output", F32, 2, sh);
    tb_add(b, 0, TB_SP, tb_dma(tb_sb(0, 0, F32, 4, 32, PITCH, 16), tb_hbm(a, F32, 4, 32, 128, 16), 3));
    isa_inst_t t = tb_trig(3, 1);
    tb_upd(&t, 5, ISA_SEMOP_SEM_INC, 0, false);
    tb_add(b, 0, TB_SP, t);                                         /* pc 1 */
    isa_inst_t w = tb_op(ISA_OP_NOP);
    tb_wait(&w, 5, 1);
    tb_upd(&w, 6, ISA_SEMOP_SEM_INC, 0, false);
    tb_add(b, 0, TB_ACT, w);                                        /* ACT pc 0 */
    isa_inst_t d = tb_dma(tb_hbm(o, F32, 4, 32, 128, 16), tb_sb(0, 0, F32, 4, 32, PITCH, 16), 4);
    tb_wait(&d, 6, 1);
    tb_add(b, 0, TB_PE, d);                                         /* PE pc 0 */
    tb_add(b, 0, TB_PE, tb_trig(4, 1));
    for (int i = 0; i < 5; i++)
        tb_add(b, 0, TB_DVE, tb_op(ISA_OP_NOP));
    tb_write(b);
    tb_write_file(b, "nc0/sg0/Activation.json",
                  "{\"engine\":\"Activation\",\"core\":0,\"instructions\":1,"
                  "\"debug\":[{\"pc\":0,\"name\":\"wait_load\",\"src\":\"body[2]\",\"op\":\"nop\"}]}");
    tb_write_file(b, "nc0/sg0/def.json",
                  "{\"core\":0,\"semaphores\":[{\"id\":5,\"name\":\"qLoad\"}],"
                  "\"queues\":[{\"id\":3,\"name\":\"qSyncIO0\",\"engine\":\"SP\",\"semaphore\":5}]}");
}

static void test_trace_structure(void **state)
{
    (void)state;
    tb_t b;
    build(&b);
    sim_options_t o;
    sim_options_default(&o);
    o.trace = true;
    sim_t *s = tb_load(&b, &o);
    float in[512] = { 0 };
    int64_t sh[2] = { 16, 32 };
    tb_input_f32(s, "a", in, 2, sh);
    tpb_err_t err;
    if (sim_run(s, &err))
        fail_msg("%s", err.msg);
    char path[600];
    snprintf(path, sizeof path, "%s/trace.json", b.dir);
    assert_int_equal(sim_write_trace(s, path, &err), 0);
    uint64_t total = 0;
    {
        sim_summary_t sum;
        sim_get_summary(s, &sum);
        total = sum.total_cycles;
    }
    sim_free(s);

    cJSON *root = read_json_file(path);
    const cJSON *od = cJSON_GetObjectItemCaseSensitive(root, "otherData");
    assert_string_equal(cJSON_GetObjectItem(od, "format")->valuestring, "tpbsim-trace");
    assert_int_equal((uint64_t)num(od, "total_cycles"), total);
    assert_true(num(od, "clock_ghz") == 1.2);
    assert_true(cJSON_IsObject(cJSON_GetObjectItem(od, "engine_clock_ghz")));
    assert_int_equal((uint64_t)num(cJSON_GetObjectItem(od, "stats"), "total_cycles"), total);
    const cJSON *evs = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    assert_true(cJSON_IsArray(evs));

    bool lane_named[700] = { false };
    double last_end[700], last_end_cycle[700];
    for (int i = 0; i < 700; i++)
        last_end[i] = last_end_cycle[i] = -1;
    int ninst = 0, ndma = 0, ncnt = 0;
    bool saw_waited = false, saw_src = false, saw_qname = false;
    const cJSON *e;
    cJSON_ArrayForEach(e, evs)
    {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        int pid = (int)num(e, "pid");
        assert_true(pid >= 1);
        if (!strcmp(ph, "M")) {
            assert_null(cJSON_GetObjectItem(e, "ts"));
            if (!strcmp(cJSON_GetObjectItem(e, "name")->valuestring, "thread_name")) {
                int tid = (int)num(e, "tid");
                lane_named[tid] = true;
                const char *nm = cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "name")->valuestring;
                if (tid == 100 + 3 * 8)
                    saw_qname = strstr(nm, "q3 qSyncIO0") != NULL;
                if (tid == 2)
                    assert_string_equal(nm, "Activation");
            }
            continue;
        }
        double ts = num(e, "ts");
        assert_true(ts >= 0);
        if (!strcmp(ph, "C")) {
            ncnt++;
            assert_non_null(strstr(cJSON_GetObjectItem(e, "name")->valuestring, "sem S"));
            num(cJSON_GetObjectItem(e, "args"), "value");
            continue;
        }
        assert_string_equal(ph, "X");
        int tid = (int)num(e, "tid");
        assert_true(tid > 0 && tid < 700);
        double dur = num(e, "dur");
        assert_true(dur >= 0);
        /* X events of one lane never overlap (events are in time order per lane) */
        assert_true(ts >= last_end[tid] - 1e-9);
        last_end[tid] = ts + dur;
        const cJSON *args = cJSON_GetObjectItem(e, "args");
        /* ... nor in cycles (the viewer draws from start_cycle/end_cycle) */
        assert_true(num(args, "start_cycle") >= last_end_cycle[tid]);
        assert_true(num(args, "end_cycle") >= num(args, "start_cycle"));
        last_end_cycle[tid] = num(args, "end_cycle");
        if (tid >= 100) {
            ndma++;
            assert_string_equal(cJSON_GetObjectItem(e, "cat")->valuestring, "dma");
            num(args, "queue");
            assert_int_equal((int)num(args, "bytes"), 16 * 32 * 4);
            num(args, "descriptors");
            const cJSON *is = cJSON_GetObjectItem(args, "issuer");
            assert_true(num(is, "pid") == 1);
            assert_true(num(is, "tid") == 5 || num(is, "tid") == 1);
            continue;
        }
        ninst++;
        assert_true(tid >= 1 && tid <= 5);
        num(args, "pc");
        num(args, "opcode");
        double sc = num(args, "start_cycle"), ec = num(args, "end_cycle"), ic = num(args, "issue_cycle");
        assert_true(ec >= sc);
        assert_true(sc >= ic);
        assert_true(num(args, "wait_cycles") == sc - ic);
        assert_true(cJSON_IsString(cJSON_GetObjectItem(args, "fields")));
        assert_true(cJSON_IsArray(cJSON_GetObjectItem(args, "waited_for")));
        if (tid == 2) { /* the ACT Nop waited for the DMA of q3, triggered by SP pc 1 */
            assert_string_equal(cJSON_GetObjectItem(args, "wait")->valuestring, "S5>=1");
            const cJSON *wf = cJSON_GetArrayItem(cJSON_GetObjectItem(args, "waited_for"), 0);
            assert_non_null(wf);
            assert_true(num(wf, "pid") == 1 && num(wf, "tid") == 100 + 3 * 8 && num(wf, "pc") == 1);
            assert_true(num(args, "wait_cycles") > 1000);
            assert_string_equal(cJSON_GetObjectItem(args, "src")->valuestring, "body[2]");
            assert_string_equal(cJSON_GetObjectItem(args, "op_name")->valuestring, "wait_load");
            saw_waited = saw_src = true;
        }
        if (tid == 1 && num(args, "pc") == 0) { /* PE descriptor waited for the ACT Nop */
            const cJSON *wf = cJSON_GetArrayItem(cJSON_GetObjectItem(args, "waited_for"), 0);
            assert_true(num(wf, "tid") == 2 && num(wf, "pc") == 0);
        }
    }
    assert_int_equal(ninst, 2 + 1 + 2 + 5);
    assert_int_equal(ndma, 2);
    assert_true(ncnt >= 2);
    assert_true(saw_waited && saw_src && saw_qname);
    for (int t = 1; t <= 5; t++)
        assert_true(lane_named[t] || t == 3);
    assert_true(lane_named[100 + 3 * 8] && lane_named[100 + 4 * 8]);
    cJSON_Delete(root);
    tb_free(&b);
}

static void test_stats_json(void **state)
{
    (void)state;
    tb_t b;
    build(&b);
    sim_t *s = tb_load(&b, NULL);
    float in[512] = { 0 };
    int64_t sh[2] = { 16, 32 };
    tb_input_f32(s, "a", in, 2, sh);
    tpb_err_t err;
    assert_int_equal(sim_run(s, &err), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/stats.json", b.dir);
    assert_int_equal(sim_write_stats_json(s, path, &err), 0);
    /* no trace recorded without opt.trace */
    assert_int_not_equal(sim_write_trace(s, path, &err), 0);
    sim_free(s);
    cJSON *j = read_json_file(path);
    assert_true(num(j, "total_cycles") > 0);
    assert_int_equal((int)num(j, "instructions"), 10);
    const cJSON *cls = cJSON_GetObjectItem(j, "instructions_by_class");
    assert_int_equal((int)num(cls, "dma"), 4);
    assert_int_equal((int)num(cls, "sync"), 6);
    assert_int_equal((int)num(j, "dma_bytes"), 2 * 16 * 32 * 4);
    const cJSON *core = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cores"), 0);
    const cJSON *engs = cJSON_GetObjectItem(core, "engines");
    assert_int_equal(cJSON_GetArraySize(engs), 5);
    const cJSON *act = cJSON_GetArrayItem(engs, 1);
    assert_string_equal(cJSON_GetObjectItem(act, "name")->valuestring, "Activation");
    assert_true(num(act, "sem_wait_cycles") > 1000);
    assert_true(num(act, "utilisation") > 0 && num(act, "utilisation") < 1);
    const cJSON *q = cJSON_GetArrayItem(cJSON_GetObjectItem(core, "queues"), 0);
    assert_int_equal((int)num(q, "queue"), 3);
    assert_string_equal(cJSON_GetObjectItem(q, "name")->valuestring, "qSyncIO0");
    assert_true(num(q, "bandwidth_gbps") > 0);
    num(j, "wall_seconds");
    num(j, "sim_instructions_per_second");
    cJSON_Delete(j);
    tb_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_structure),
        cmocka_unit_test(test_stats_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
