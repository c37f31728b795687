/* fuzz_sim: artifact loading and simulation (sim_load + sim_run).  The
 * input is cut into one instruction stream per engine (the first five
 * bytes give the bundle counts of PE, Activation, Pool and DVE; SP gets the
 * rest) of a one-core artifact directory with an input, an output and a
 * scratch tensor (a and out are [32, 32] fp32 at HBM 0 and 4096, the
 * layout tpb compile gives tests/fuzz/sim-kernels/, whose streams seed
 * this harness with programs that run to the end).  Every run ends in success or an error naming a place;
 * two runs of the same directory agree exactly (result, message, cycles):
 * the simulator is deterministic, and the second run, which records a
 * trace, writes one the viewer's reader accepts; a third run with two
 * threads splitting every splittable instruction (tpb sim --threads 2
 * --split-all) agrees too, and the runs that finish write the same output
 * bytes.  Small memories, plain file writes and a cycle limit keep one
 * input fast (docs/reliability.md). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_art.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void setup(void)
{
    if (!fuzz_art_setup("sim"))
        return;
    static const char map[] =
        "{\"format\":\"tpbsim-tensor-map\",\"version\":1,\"kernel\":\"fuzz\",\"target\":\"trn2\","
        "\"num_cores\":1,\"hbm_bytes\":12288,\"tensors\":["
        "{\"name\":\"a\",\"kind\":\"input\",\"dtype\":\"float32\",\"shape\":[32,32],"
        "\"hbm_addr\":0,\"bytes\":4096},"
        "{\"name\":\"out\",\"kind\":\"output\",\"dtype\":\"float32\",\"shape\":[32,32],"
        "\"hbm_addr\":4096,\"bytes\":4096},"
        "{\"name\":\"s\",\"kind\":\"scratch\",\"dtype\":\"float32\",\"shape\":[1024],"
        "\"hbm_addr\":8192,\"bytes\":4096}]}\n";
    fuzz_art_write("tensor-map.json", map, sizeof map - 1);
}

static bool same_bytes(const npy_array_t *a, const npy_array_t *b)
{
    return a->dtype == b->dtype && a->count == b->count &&
           !memcmp(a->data, b->data, a->count * isa_dtype_size(a->dtype));
}

/* One load and run; *out gets the output's bytes when the run finishes. */
static int run_once(sim_options_t *o, tpb_err_t *err, uint64_t *cycles, npy_array_t *out)
{
    sim_t *s = NULL;
    *cycles = 0;
    memset(out, 0, sizeof *out);
    if (sim_load(fuzz_dir, o, &s, err) != 0)
        return 1;
    npy_array_t a;
    int64_t shape[2] = { 32, 32 };
    FUZZ_CHECK(npy_alloc(&a, ISA_DT_FP32, 2, shape, err) == 0, "%s", err->msg);
    for (size_t i = 0; i < a.count; i++)
        ((float *)a.data)[i] = (float)i * 0.25f;
    int rc = sim_set_input(s, "a", &a, err) != 0 ? 2 : sim_run(s, err) != 0 ? 3 : 0;
    npy_free(&a);
    sim_summary_t sum;
    sim_get_summary(s, &sum);
    *cycles = sum.total_cycles;
    if (o->trace && rc != 2) /* the trace of any run, failed or not, reads back */
        fuzz_art_check_trace(s);
    tpb_err_t ge = { { 0 } };
    if (rc == 0)
        FUZZ_CHECK(sim_get_tensor_as(s, "out", true, out, &ge) == 0, "%s", ge.msg);
    sim_free(s);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5 || size > 5 + 64 * 64)
        return 0;
    setup();
    size_t off = 5;
    for (unsigned e = 0; e < 5; e++) {
        size_t n = e < 4 ? (size_t)(data[e] % 16) * ISA_BUNDLE_BYTES : size - off;
        if (n > size - off)
            n = size - off;
        char rel[64];
        snprintf(rel, sizeof rel, "nc0/sg0/%s.bin", isa_engine_name(isa_tpb_engines[e]));
        fuzz_art_write(rel, data + off, n); /* n == 0: an engine without a stream */
        off += n;
    }
    tpb_target_t small = *tpb_target_get("trn2");
    /* small memory images: SBUF 96 KiB and PSUM 64 KiB (8 banks of 64 B) in
     * all, each below ASan's 128 KiB primary-allocator limit, so the
     * buffers of one run are recycled by the next instead of being mmap'ed,
     * page-faulted in and unmapped twice per input */
    small.sbuf_partition_bytes = 768;
    small.psum_partition_bytes = 512;
    sim_options_t o;
    sim_options_default(&o);
    o.target = &small;
    o.max_cycles = 100000;
    tpb_err_t e1 = { { 0 } }, e2 = { { 0 } }, e3 = { { 0 } };
    uint64_t c1, c2, c3;
    npy_array_t a1, a2, a3;
    int r1 = run_once(&o, &e1, &c1, &a1);
    o.trace = true; /* recording the trace changes nothing else */
    int r2 = run_once(&o, &e2, &c2, &a2);
    FUZZ_CHECK(r1 == r2 && c1 == c2 && !strcmp(e1.msg, e2.msg), "two runs differ: %d/%d '%s' '%s'", r1,
               r2, e1.msg, e2.msg);
    /* nor does splitting instructions over threads (not tried on artifacts
     * refused at load: nothing runs; a worker that is not scheduled costs
     * wall time on a busy machine) */
    o.trace = false;
    o.threads = 2;
    o.split_all = true;
    int r3 = r1 == 1 ? 1 : run_once(&o, &e3, &c3, &a3);
    if (r1 == 1) {
        memset(&a3, 0, sizeof a3);
        c3 = c1;
        strcpy(e3.msg, e1.msg);
    }
    FUZZ_CHECK(r1 == r3 && c1 == c3 && !strcmp(e1.msg, e3.msg),
               "the split run differs: %d/%d cycles %llu/%llu '%s' '%s'", r1, r3,
               (unsigned long long)c1, (unsigned long long)c3, e1.msg, e3.msg);
    FUZZ_CHECK(r1 == 0 || e1.msg[0], "an error without a message");
    if (r1 == 0) {
        FUZZ_CHECK(same_bytes(&a1, &a2), "the traced run wrote other output bytes");
        FUZZ_CHECK(same_bytes(&a1, &a3), "the split run wrote other output bytes");
    }
    npy_free(&a1);
    npy_free(&a2);
    npy_free(&a3);
    return 0;
}
