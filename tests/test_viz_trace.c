/* test_viz_trace.c - the trace reader on good and malformed traces: clear
 * errors (file, offset or event index, field), never a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "fileio.h"
#include "trace_read.h"

#define SMALL TPB_SOURCE_DIR "/tests/data/traces/small.json"

static int parse(const char *json, viz_trace_t *t, tpb_err_t *err)
{
    memset(err, 0, sizeof *err);
    return viz_trace_parse(json, strlen(json), "t.json", t, err);
}

/* Parse must fail and the message must contain every given fragment. */
static void expect_error(const char *json, ...)
{
    viz_trace_t t;
    tpb_err_t err;
    int rc = parse(json, &t, &err);
    if (rc == 0)
        fail_msg("accepted: %s", json);
    va_list ap;
    va_start(ap, json);
    for (const char *frag; (frag = va_arg(ap, const char *)) != NULL;)
        if (!strstr(err.msg, frag))
            fail_msg("error '%s' lacks '%s' (input %s)", err.msg, frag, json);
    va_end(ap);
    viz_trace_free(&t);
}

static const viz_event_t *find_event(const viz_trace_t *t, const char *name)
{
    for (uint32_t i = 0; i < t->nev; i++)
        if (strcmp(viz_str(t, t->ev[i].name), name) == 0)
            return &t->ev[i];
    return NULL;
}

static void test_small_trace(void **state)
{
    (void)state;
    viz_trace_t t;
    tpb_err_t err = { { 0 } };
    assert_int_equal(viz_trace_load(SMALL, &t, &err), 0);
    assert_int_equal(t.nev, 8);
    assert_string_equal(t.kernel, "small");
    assert_string_equal(t.target, "trn2");
    assert_true(t.clock_ghz == 1.0);
    assert_int_equal(t.total_cycles, 1000);
    assert_true(t.total_from_trace);
    /* lanes: engines in tid order, then the DMA queue (both slots in one) */
    assert_int_equal(t.nlanes, 5);
    assert_string_equal(t.lanes[0].name, "core0 PE");
    assert_string_equal(t.lanes[1].name, "core0 Activation");
    assert_string_equal(t.lanes[2].name, "core0 DVE");
    assert_string_equal(t.lanes[3].name, "core0 SP");
    assert_string_equal(t.lanes[4].name, "core0 q0 qSyncIO0");
    assert_int_equal(t.lanes[4].kind, VIZ_LANE_DMA);
    assert_int_equal(t.lanes[4].nev, 2);
    assert_int_equal(t.lanes[4].nrows, 2);      /* the two transfers overlap */
    assert_int_equal(t.lanes[4].bytes, 65536 + 32768);
    assert_int_equal(t.n_overlaps, 0);          /* different slot tids: legal */

    const viz_event_t *act = find_event(&t, "Activation");
    assert_non_null(act);
    assert_int_equal(act->start, 600);
    assert_int_equal(act->end, 800);
    assert_int_equal(act->issue, 200);
    assert_int_equal(act->wait_cycles, 400);
    assert_string_equal(viz_str(&t, act->wait), "S1>=1");
    assert_string_equal(viz_str(&t, act->fields), "func=copy");
    assert_string_equal(viz_str(&t, act->src), "body[2]");
    assert_string_equal(viz_str(&t, act->buf), "t#1/2"); /* rotating buffer */
    assert_int_equal(act->iter1, 3 + 1);                 /* rolled loop: 4th run */
    assert_int_equal(act->cls, ISA_CLASS_ACT);
    assert_int_equal(act->n_waited, 1);
    viz_ref_t r = t.refs[act->waited_off];
    assert_int_equal(r.pid, 1);
    assert_int_equal(r.tid, 1);
    assert_int_equal(r.pc, 1);
    int64_t prod = viz_trace_find_ref(&t, r, act->start);
    assert_true(prod >= 0);
    assert_string_equal(viz_str(&t, t.ev[prod].name), "Matmul");

    /* no start_cycle: cycles from ts (0.05 us at 1 GHz = 50) */
    const viz_event_t *dma = find_event(&t, "dma A");
    assert_non_null(dma);
    assert_int_equal(dma->start, 50);
    assert_int_equal(dma->end, 450);
    assert_int_equal(dma->queue, 0);
    assert_int_equal(dma->descriptors, 16);
    assert_int_equal(dma->issuer.tid, 5);
    assert_int_equal(dma->pc, -1);

    assert_int_equal(t.nctr, 1);
    assert_string_equal(t.ctr[0].name, "sem S1 PE");
    assert_int_equal(t.ctr[0].n, 2);
    assert_int_equal(t.ctr[0].s[1].cycle, 600);
    assert_int_equal(t.ctr[0].vmax, 1);
    /* busy: PE runs [0,600) of 1000 */
    assert_int_equal(t.lanes[0].busy, 600);
    assert_int_equal(t.lanes[1].wait, 400);
    viz_trace_free(&t);
}

static void test_run_directory(void **state)
{
    (void)state;
    char dir[] = TPB_BINARY_DIR "/viz_rundir_test";
    tpb_err_t err = { { 0 } };
    assert_int_equal(fio_mkdirs(dir, &err), 0);
    uint8_t *buf;
    size_t len;
    assert_int_equal(fio_read_all(SMALL, &buf, &len, &err), 0);
    assert_int_equal(fio_write_atomic(TPB_BINARY_DIR "/viz_rundir_test/trace.json", buf, len, &err), 0);
    free(buf);
    viz_trace_t t;
    assert_int_equal(viz_trace_load(dir, &t, &err), 0);
    assert_int_equal(t.nev, 8);
    viz_trace_free(&t);
    /* a directory without a trace says so */
    char empty[] = TPB_BINARY_DIR "/viz_rundir_empty";
    assert_int_equal(fio_mkdirs(empty, &err), 0);
    assert_int_not_equal(viz_trace_load(empty, &t, &err), 0);
    assert_non_null(strstr(err.msg, "trace.json"));
    viz_trace_free(&t);
    assert_int_not_equal(viz_trace_load(TPB_BINARY_DIR "/no/such/trace.json", &t, &err), 0);
    assert_non_null(strstr(err.msg, "no/such/trace.json"));
    viz_trace_free(&t);
}

static void test_bad_files(void **state)
{
    (void)state;
    static const struct { const char *file, *frag1, *frag2; } cases[] = {
        { "truncated.json", "byte 68", "truncated" },
        { "wrong_type.json", "traceEvents[1]", "'pid'" },
        { "missing_field.json", "traceEvents[0]", "'dur': missing" },
        { "negative_ts.json", "'ts'", "negative" },
        { "huge_cycle.json", "'ts'", "2^53" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/data/traces/bad/%s", TPB_SOURCE_DIR, cases[i].file);
        viz_trace_t t;
        tpb_err_t err = { { 0 } };
        assert_int_not_equal(viz_trace_load(path, &t, &err), 0);
        if (!strstr(err.msg, cases[i].file) || !strstr(err.msg, cases[i].frag1) ||
            !strstr(err.msg, cases[i].frag2))
            fail_msg("%s: unexpected message '%s'", cases[i].file, err.msg);
        viz_trace_free(&t);
    }
}

static void test_truncated_everywhere(void **state)
{
    (void)state;
    uint8_t *buf;
    size_t len;
    tpb_err_t err = { { 0 } };
    assert_int_equal(fio_read_all(SMALL, &buf, &len, &err), 0);
    /* cut the good trace at many points: every cut is an error, never a crash */
    for (size_t cut = 0; cut + 2 < len; cut += 7) {
        viz_trace_t t;
        int rc = viz_trace_parse((const char *)buf, cut, "cut.json", &t, &err);
        if (rc == 0)
            fail_msg("a trace cut at byte %zu was accepted", cut);
        assert_non_null(strstr(err.msg, "cut.json: byte "));
        viz_trace_free(&t);
    }
    free(buf);
}

static void test_wrong_types(void **state)
{
    (void)state;
    expect_error("42", "t.json", "'traceEvents'", "an array", NULL);
    expect_error("{}", "'traceEvents': missing", NULL);
    expect_error("{\"traceEvents\":{}}", "'traceEvents'", "an array", "an object", NULL);
    expect_error("{\"traceEvents\":[1]}", "traceEvents[0]", "expected an object", NULL);
    expect_error("{\"traceEvents\":[{\"pid\":1}]}", "traceEvents[0]", "'ph': missing", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":7}]}", "'ph'", "expected a string", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"ts\":\"0\",\"dur\":1}]}",
                 "traceEvents[0]", "'ts'", "a number", "a string", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":5,\"ts\":0,\"dur\":1}]}",
                 "'name'", "expected a string", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1.5,\"name\":\"a\",\"ts\":0,\"dur\":1}]}",
                 "'tid'", "integer", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"cat\":3,\"ts\":0,\"dur\":1}]}",
                 "'cat'", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"ts\":0,\"dur\":1,\"args\":[]}]}",
                 "'args'", "an object", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"ts\":0,\"dur\":1,"
                 "\"args\":{\"waited_for\":{}}}]}", "'args.waited_for'", "an array", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"ts\":0,\"dur\":1,"
                 "\"args\":{\"waited_for\":[{\"pid\":1,\"tid\":1}]}}]}", "args.waited_for[0]", "'pc': missing", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"ts\":0,\"dur\":1,"
                 "\"args\":{\"fields\":12}}]}", "'args.fields'", "a string", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"ts\":0,\"dur\":1,"
                 "\"args\":{\"opcode\":300}}]}", "'opcode'", "out of range", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"C\",\"pid\":1,\"name\":\"sem\",\"ts\":0,\"args\":{\"value\":\"x\"}}]}",
                 "'args.value'", "a number", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":1,\"args\":{\"name\":1}}]}",
                 "'name'", "a string", NULL);
    expect_error("{\"otherData\":{\"clock_ghz\":\"fast\"},\"traceEvents\":[]}", "otherData", "'clock_ghz'", NULL);
    expect_error("{\"otherData\":{\"format\":\"tpbsim-trace\",\"version\":2},\"traceEvents\":[]}",
                 "otherData", "'version'", NULL);
    expect_error("{\"otherData\":[],\"traceEvents\":[]}", "'otherData'", "an object", NULL);
}

static void test_missing_fields(void **state)
{
    (void)state;
    static const char *const fields[] = { "pid", "tid", "name", "ts", "dur" };
    for (size_t i = 0; i < 5; i++) {
        /* the complete event minus one field */
        char json[512] = "{\"traceEvents\":[{\"ph\":\"X\"";
        if (i != 0) strcat(json, ",\"pid\":1");
        if (i != 1) strcat(json, ",\"tid\":1");
        if (i != 2) strcat(json, ",\"name\":\"Matmul\"");
        if (i != 3) strcat(json, ",\"ts\":0");
        if (i != 4) strcat(json, ",\"dur\":1");
        strcat(json, "}]}");
        char frag[64];
        snprintf(frag, sizeof frag, "'%s': missing", fields[i]);
        expect_error(json, "traceEvents[0]", frag, NULL);
    }
    expect_error("{\"traceEvents\":[{\"ph\":\"C\",\"pid\":1,\"name\":\"s\",\"ts\":0}]}", "'args'", "missing", NULL);
}

static void test_bad_times(void **state)
{
    (void)state;
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"ts\":0,\"dur\":-1}]}",
                 "'dur'", "negative", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"C\",\"pid\":1,\"name\":\"s\",\"ts\":-1,\"args\":{\"value\":1}}]}",
                 "'ts'", "negative", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"ts\":0,\"dur\":1,"
                 "\"args\":{\"start_cycle\":10,\"end_cycle\":5}}]}", "'args.end_cycle'", "before start_cycle", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"ts\":0,\"dur\":1,"
                 "\"args\":{\"start_cycle\":1e17}}]}", "'start_cycle'", "out of range", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"ts\":0,\"dur\":1e300}]}",
                 "'dur'", "2^53", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":-1,\"tid\":1,\"name\":\"a\",\"ts\":0,\"dur\":1}]}",
                 "'pid'", "out of range", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1e12,\"tid\":1,\"name\":\"a\",\"ts\":0,\"dur\":1}]}",
                 "'pid'", "out of range", NULL);
    expect_error("{\"otherData\":{\"clock_ghz\":0},\"traceEvents\":[]}", "'clock_ghz'", NULL);
    expect_error("{\"otherData\":{\"total_cycles\":-5},\"traceEvents\":[]}", "'total_cycles'", NULL);
}

static void test_overlaps_are_drawn_not_rejected(void **state)
{
    (void)state;
    viz_trace_t t;
    tpb_err_t err = { { 0 } };
    assert_int_equal(viz_trace_load(TPB_SOURCE_DIR "/tests/data/traces/overlap.json", &t, &err), 0);
    assert_int_equal(t.nev, 3);
    assert_int_equal(t.nlanes, 1);
    /* [0,500) and [200,700) overlap on tid 1; [600,700) overlaps the second */
    assert_int_equal(t.n_overlaps, 2);
    assert_int_equal(t.lanes[0].nrows, 2);
    assert_int_equal(t.ev[t.lanes[0].ev[0]].row, 0);
    assert_int_equal(t.ev[t.lanes[0].ev[1]].row, 1);
    assert_int_equal(t.ev[t.lanes[0].ev[2]].row, 0);
    assert_int_equal(t.lanes[0].busy, 700); /* union, not the sum */
    assert_int_equal(t.total_cycles, 700);  /* computed: no otherData total */
    assert_false(t.total_from_trace);
    viz_trace_free(&t);
}

static void test_lenient_parts(void **state)
{
    (void)state;
    viz_trace_t t;
    tpb_err_t err;
    /* bare array container, unknown cat, phases the viewer does not draw */
    assert_int_equal(parse("[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"a\",\"cat\":\"weird\",\"ts\":0,\"dur\":1},"
                           "{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"name\":\"mark\",\"ts\":0},"
                           "{\"ph\":\"B\",\"pid\":1,\"tid\":1,\"name\":\"x\",\"ts\":0}]", &t, &err), 0);
    assert_int_equal(t.nev, 1);
    assert_int_equal(t.ev[0].cls, ISA_CLASS_COUNT);
    assert_true(t.clock_ghz == 1.0);
    assert_int_equal(t.ev[0].end, 1000); /* 1 us at the default 1 GHz */
    viz_trace_free(&t);
    /* empty trace: loads, nothing to draw */
    assert_int_equal(parse("{\"traceEvents\":[]}", &t, &err), 0);
    assert_int_equal(t.nev, 0);
    assert_int_equal(t.nlanes, 0);
    viz_trace_free(&t);
    /* unsorted counter samples get sorted */
    assert_int_equal(parse("{\"otherData\":{\"clock_ghz\":1},\"traceEvents\":["
                           "{\"ph\":\"C\",\"pid\":1,\"name\":\"s\",\"ts\":2,\"args\":{\"value\":2}},"
                           "{\"ph\":\"C\",\"pid\":1,\"name\":\"s\",\"ts\":1,\"args\":{\"value\":1}}]}", &t, &err), 0);
    assert_int_equal(t.nctr, 1);
    assert_int_equal(t.ctr[0].s[0].cycle, 1000);
    assert_int_equal(t.ctr[0].s[0].value, 1);
    viz_trace_free(&t);
    /* a loop: the same pc runs twice; the producer is the latest one before the waiter */
    assert_int_equal(parse("{\"otherData\":{\"clock_ghz\":1},\"traceEvents\":["
                           "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"m\",\"ts\":0,\"dur\":1,\"args\":{\"pc\":3}},"
                           "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"m\",\"ts\":2,\"dur\":1,\"args\":{\"pc\":3}},"
                           "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"m\",\"ts\":9,\"dur\":1,\"args\":{\"pc\":3}}]}",
                           &t, &err), 0);
    viz_ref_t r = { 1, 1, 3, -1 };
    assert_int_equal(viz_trace_find_ref(&t, r, 5000), 1);
    assert_int_equal(viz_trace_find_ref(&t, r, 0), 0);
    r.start = 0; /* the producer's start_cycle picks the execution exactly */
    assert_int_equal(viz_trace_find_ref(&t, r, 5000), 0);
    r.start = 9000;
    assert_int_equal(viz_trace_find_ref(&t, r, 0), 2);
    r.start = 1;
    assert_int_equal(viz_trace_find_ref(&t, r, 5000), -1);
    r.start = -1;
    r.pc = 4;
    assert_int_equal(viz_trace_find_ref(&t, r, 5000), -1);
    viz_trace_free(&t);
    /* a reference to a DMA queue tid names the transfer issued at that pc */
    assert_int_equal(parse("{\"otherData\":{\"clock_ghz\":1},\"traceEvents\":["
                           "{\"ph\":\"X\",\"pid\":1,\"tid\":5,\"name\":\"DmaTrigger\",\"ts\":0,\"dur\":1,\"args\":{\"pc\":9}},"
                           "{\"ph\":\"X\",\"pid\":1,\"tid\":116,\"name\":\"DMA q2\",\"ts\":1,\"dur\":3,"
                           "\"args\":{\"issuer\":{\"pid\":1,\"tid\":5,\"pc\":8}}},"
                           "{\"ph\":\"X\",\"pid\":1,\"tid\":117,\"name\":\"DMA q2\",\"ts\":1.5,\"dur\":3,"
                           "\"args\":{\"issuer\":{\"pid\":1,\"tid\":5,\"pc\":9}}},"
                           "{\"ph\":\"X\",\"pid\":1,\"tid\":124,\"name\":\"DMA q3\",\"ts\":1,\"dur\":3,"
                           "\"args\":{\"issuer\":{\"pid\":1,\"tid\":5,\"pc\":9}}}]}", &t, &err), 0);
    viz_ref_t dr = { 1, 116, 9, -1 };
    int64_t hit = viz_trace_find_ref(&t, dr, 10000);
    assert_true(hit >= 0);
    assert_int_equal(t.ev[hit].tid, 117); /* queue 2's transfer from pc 9, in slot 1 */
    dr.pc = 7;
    assert_int_equal(viz_trace_find_ref(&t, dr, 10000), -1);
    viz_trace_free(&t);
    /* waited_for entries may carry start_cycle */
    assert_int_equal(parse("{\"otherData\":{\"clock_ghz\":1},\"traceEvents\":["
                           "{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"name\":\"w\",\"ts\":5,\"dur\":1,\"args\":"
                           "{\"waited_for\":[{\"pid\":1,\"tid\":1,\"pc\":3,\"start_cycle\":2000},"
                           "{\"pid\":1,\"tid\":1,\"pc\":4}]}}]}", &t, &err), 0);
    assert_int_equal(t.ev[0].n_waited, 2);
    assert_int_equal(t.refs[t.ev[0].waited_off].start, 2000);
    assert_int_equal(t.refs[t.ev[0].waited_off + 1].start, -1);
    viz_trace_free(&t);
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"name\":\"w\",\"ts\":5,\"dur\":1,"
                 "\"args\":{\"waited_for\":[{\"pid\":1,\"tid\":1,\"pc\":3,\"start_cycle\":-4}]}}]}",
                 "args.waited_for[0]", "'start_cycle'", NULL);
}

/* Deterministic byte mutations of a good trace: accept or reject, never crash
 * (run under ASan+UBSan by scripts/test). */
static void test_mutations_never_crash(void **state)
{
    (void)state;
    uint8_t *buf;
    size_t len;
    tpb_err_t err = { { 0 } };
    assert_int_equal(fio_read_all(SMALL, &buf, &len, &err), 0);
    char *copy = malloc(len + 1);
    assert_non_null(copy);
    static const char alphabet[] = "{}[]\":,-0123456789eE.xX \\";
    uint32_t seed = 12345;
    int accepted = 0, rejected = 0;
    for (int iter = 0; iter < 1500; iter++) {
        memcpy(copy, buf, len);
        for (int k = 0; k < 3; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t pos = (seed >> 8) % len;
            seed = seed * 1103515245u + 12345u;
            copy[pos] = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
        }
        viz_trace_t t;
        if (viz_trace_parse(copy, len, "m.json", &t, &err) == 0) {
            accepted++;
            assert_true(t.nev <= 8);
        } else {
            rejected++;
            assert_non_null(strstr(err.msg, "m.json"));
        }
        viz_trace_free(&t);
    }
    assert_true(rejected > 0);
    assert_true(accepted + rejected == 1500);
    free(copy);
    free(buf);
}

static void test_stats_override(void **state)
{
    (void)state;
    viz_trace_t t;
    tpb_err_t err;
    /* PE waited 500 cycles without an instruction event saying so; the
     * queue's bytes come from the stats; malformed stats parts are ignored */
    assert_int_equal(parse("{\"otherData\":{\"clock_ghz\":1,\"stats\":{\"total_cycles\":900,\"cores\":[{\"core\":0,"
                           "\"engines\":[{\"name\":\"PE\",\"busy_cycles\":10,\"sem_wait_cycles\":500},"
                           "{\"name\":\"DVE\",\"busy_cycles\":\"x\",\"sem_wait_cycles\":1},{\"name\":7}],"
                           "\"queues\":[{\"queue\":2,\"bytes\":4096,\"busy_cycles\":300},{\"queue\":-1}]}]}},"
                           "\"traceEvents\":["
                           "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"PE\"}},"
                           "{\"ph\":\"X\",\"pid\":1,\"tid\":4,\"name\":\"TensorTensor\",\"ts\":0,\"dur\":0.02},"
                           "{\"ph\":\"X\",\"pid\":1,\"tid\":116,\"name\":\"dma\",\"ts\":0,\"dur\":0.1,"
                           "\"args\":{\"bytes\":1}}]}", &t, &err), 0);
    assert_int_equal(t.total_cycles, 900);
    assert_true(t.stats_used);
    assert_int_equal(t.nlanes, 3);
    /* the PE lane exists (named by metadata) although it ran nothing */
    assert_string_equal(t.lanes[0].name, "core0 PE");
    assert_int_equal(t.lanes[0].nev, 0);
    assert_int_equal(t.lanes[0].wait, 500);
    assert_int_equal(t.lanes[0].busy, 10);
    assert_true(t.lanes[0].from_stats);
    /* DVE stats malformed: the computed totals stay */
    assert_string_equal(t.lanes[1].name, "core0 DVE");
    assert_false(t.lanes[1].from_stats);
    assert_int_equal(t.lanes[1].busy, 20);
    assert_int_equal(t.lanes[2].queue, 2);
    assert_int_equal(t.lanes[2].bytes, 4096);
    assert_int_equal(t.lanes[2].busy, 300);
    viz_trace_free(&t);
}

/* A trace written by `tpb sim --trace` (golden/dma_transpose) loads: its
 * lanes, DMA queues, semaphore tracks and stats are all found. */
static void test_simulator_trace(void **state)
{
    (void)state;
    viz_trace_t t;
    tpb_err_t err = { { 0 } };
    if (viz_trace_load(TPB_SOURCE_DIR "/tests/data/traces/sim_dma_transpose.json", &t, &err))
        fail_msg("%s", err.msg);
    assert_true(t.nev > 0);
    assert_true(t.nctr > 0);
    assert_true(t.stats_used);
    int engines = 0, queues = 0;
    for (uint32_t i = 0; i < t.nlanes; i++) {
        engines += t.lanes[i].kind == VIZ_LANE_ENGINE;
        queues += t.lanes[i].kind == VIZ_LANE_DMA;
        assert_int_equal(strncmp(t.lanes[i].name, "core0 ", 6), 0);
    }
    assert_true(engines >= 1);
    assert_true(queues >= 1);
    for (uint32_t i = 0; i < t.nev; i++) {
        assert_true(t.ev[i].end >= t.ev[i].start);
        assert_true(t.ev[i].end <= t.total_cycles);
        assert_true(t.ev[i].cls != ISA_CLASS_COUNT); /* every cat is an ISA class */
    }
    viz_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_trace),
        cmocka_unit_test(test_run_directory),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_truncated_everywhere),
        cmocka_unit_test(test_wrong_types),
        cmocka_unit_test(test_missing_fields),
        cmocka_unit_test(test_bad_times),
        cmocka_unit_test(test_overlaps_are_drawn_not_rejected),
        cmocka_unit_test(test_lenient_parts),
        cmocka_unit_test(test_mutations_never_crash),
        cmocka_unit_test(test_stats_override),
        cmocka_unit_test(test_simulator_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
