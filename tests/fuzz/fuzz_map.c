/* fuzz_map: the artifact's JSON files and what is written from them.  The
 * input is cut at its first two NUL bytes into tensor-map.json, def.json
 * and placement.json (an empty or missing part: no such file) of a
 * one-core artifact directory whose streams are fixed (SP loads a
 * [128, 64] fp32 tensor at HBM 0x0 into SBUF and stores it at 0x8000, with
 * a DVE copy between; c.npy, a [128, 64] fp32 array, is there for a
 * constant tensor).  Every load ends in success or an error naming the
 * file; an accepted map gets an input array of each input tensor's dtype
 * and shape, runs, and then the stats text must be JSON, the trace must be
 * written and read back by the viewer's reader (viz/trace_read.c), and every
 * output must read back with its declared shape.  A small target (1 MiB of
 * HBM, small SBUF/PSUM) bounds what a map may ask for (docs/reliability.md). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cJSON.h"
#include "fuzz_art.h"
#include "sim_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void assemble_to(const char *rel, const char *src)
{
    isa_asm_opts_t ao = { ISA_ENG_UNASSIGNED };
    isa_asm_result_t r;
    memset(&r, 0, sizeof r);
    FUZZ_CHECK(isa_assemble(src, strlen(src), &ao, &r) == 0, "%s: line %u: %s", rel,
               r.ndiags ? r.diags[0].line : 0, r.ndiags ? r.diags[0].msg : "?");
    fuzz_art_write(rel, r.bytes, r.len);
    isa_asm_result_free(&r);
}

static void setup(void)
{
    if (!fuzz_art_setup("map"))
        return;
    assemble_to("nc0/sg0/SP.bin",
                "PseudoDmaDirect2d dst=sbuf[0]@0x0:fp32<4x64,262144x128> "
                "src=hbm@0x0:fp32<4x64,256x128> queue=0 transpose=0 dge=none compute=bypass qos=0 "
                "src_reg=255 dst_reg=255\n"
                "DmaTrigger queue=0 ndesc=1 upd=S1.sem_inc@complete\n"
                "PseudoDmaDirect2d dst=hbm@0x8000:fp32<4x64,256x128> "
                "src=sbuf[0]@0x100:fp32<4x64,262144x128> queue=1 transpose=0 dge=none "
                "compute=bypass qos=0 src_reg=255 dst_reg=255 wait=S2>=1\n"
                "DmaTrigger queue=1 ndesc=1 upd=S3.sem_inc@complete\n"
                "Halt\n");
    assemble_to("nc0/sg0/DVE.bin",
                "TensorCopy in=sbuf[0:128]@0x0:fp32<1x64> out=sbuf[0:128]@0x100:fp32<1x64> "
                "wait=S1>=1 upd=S2.sem_inc@complete\n"
                "Halt\n");
    tpb_err_t err;
    /* c.npy: what a constant tensor of a fuzzed map may name */
    npy_array_t c;
    int64_t shape[2] = { 128, 64 };
    FUZZ_CHECK(npy_alloc(&c, ISA_DT_FP32, 2, shape, &err) == 0, "%s", err.msg);
    uint8_t *buf;
    size_t len;
    FUZZ_CHECK(npy_serialize(&c, &buf, &len, &err) == 0, "%s", err.msg);
    fuzz_art_write("c.npy", buf, len);
    free(buf);
    npy_free(&c);
}

/* An array of t's dtype and shape (bounded by the small HBM). */
static void bind_input(sim_t *s, const sim_tensor_t *t)
{
    npy_array_t a;
    tpb_err_t err = { { 0 } };
    if (npy_alloc(&a, t->dtype, t->ndim, t->shape, &err) != 0) {
        FUZZ_CHECK(err.msg[0], "npy_alloc failed without a message");
        return;
    }
    memset(a.data, 0x3c, a.count * isa_dtype_size(a.dtype));
    if (sim_set_input(s, t->name, &a, &err) != 0)
        FUZZ_CHECK(strstr(err.msg, t->name) != NULL, "input error without the name: %s", err.msg);
    npy_free(&a);
}

static void check_written(sim_t *s)
{
    char *stats = sim_stats_json(s);
    FUZZ_CHECK(stats != NULL, "sim_stats_json: out of memory");
    cJSON *j = cJSON_Parse(stats);
    FUZZ_CHECK(j != NULL, "the stats are not JSON:\n%s", stats);
    cJSON_Delete(j);
    free(stats);
    fuzz_art_check_trace(s);
    tpb_err_t err = { { 0 } };
    for (unsigned i = 0; i < s->ntensors; i++) {
        const sim_tensor_t *x = &s->tensors[i];
        if (strcmp(x->kind, "output"))
            continue;
        npy_array_t a;
        FUZZ_CHECK(sim_get_tensor(s, x->name, &a, &err) == 0, "output %s: %s", x->name, err.msg);
        FUZZ_CHECK(a.ndim == x->ndim && a.count * isa_dtype_size(x->dtype) == x->bytes,
                   "output %s: wrong shape", x->name);
        npy_free(&a);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    setup();
    static const char *const parts[3] = { "tensor-map.json", "nc0/sg0/def.json", "placement.json" };
    size_t off = 0;
    for (unsigned p = 0; p < 3; p++) {
        const uint8_t *nul = off < size ? memchr(data + off, 0, size - off) : NULL;
        size_t n = p == 2 || !nul ? size - off : (size_t)(nul - (data + off));
        fuzz_art_write(parts[p], data + off, n);
        off += n + (off + n < size);
    }
    tpb_target_t small = *tpb_target_get("trn2");
    small.sbuf_partition_bytes = 768;
    small.psum_partition_bytes = 512;
    small.hbm_bytes = 1 << 20;
    sim_options_t o;
    sim_options_default(&o);
    o.target = &small;
    o.max_cycles = 100000;
    o.trace = true;
    sim_t *s = NULL;
    tpb_err_t err = { { 0 } };
    if (sim_load(fuzz_dir, &o, &s, &err) != 0) {
        FUZZ_CHECK(strstr(err.msg, fuzz_dir) != NULL, "a load error without the file: %s", err.msg);
        return 0;
    }
    for (unsigned i = 0; i < s->ntensors; i++)
        if (!strcmp(s->tensors[i].kind, "input"))
            bind_input(s, &s->tensors[i]);
    if (sim_run(s, &err) != 0)
        FUZZ_CHECK(err.msg[0], "a run error without a message");
    check_written(s);
    sim_free(s);
    return 0;
}
