/* fuzz_sidecar: the <Engine>.json sidecar reader.  The fast plain-JSON
 * scanner (sim/sidecar.c) and the cJSON path must agree on every input:
 * same result, same message, same debug table.  A compact sidecar
 * (common/sidecar_form.h) that reads, expanded by tpb_sidecar_expand (the
 * other implementation of the rules, used by tpb dis and the linker) and
 * read again, gives the same debug table.  The parser behind the cJSON path
 * (tpb_json_parse_arena, an arena tree) gives cJSON's result and message. */
#include <stdint.h>
#include <string.h>

#include "cJSON.h"
#include "fuzz_util.h"
#include "jsonread.h"
#include "sidecar_form.h"
#include "sim_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* a stream of n NOP bundles and a HALT: the sidecar's pcs index it */
static void make_engine(sim_engine_t *e, unsigned n)
{
    memset(e, 0, sizeof *e);
    uint8_t buf[9][ISA_BUNDLE_BYTES];
    isa_err_t ie;
    isa_inst_t in;
    for (unsigned i = 0; i <= n; i++) {
        memset(&in, 0, sizeof in);
        in.op = i == n ? ISA_OP_HALT : ISA_OP_NOP;
        FUZZ_CHECK(isa_encode(&in, buf[i], &ie) == ISA_OK, "%s", ie.msg);
    }
    FUZZ_CHECK(isa_stream_decode(&buf[0][0], n ? (n + 1) * ISA_BUNDLE_BYTES : 0, ISA_ENG_UNASSIGNED,
                                 &e->stream, &ie) == ISA_OK, "%s", ie.msg);
}

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static void same_table(const sim_engine_t *f, const sim_engine_t *c, const char *what)
{
    FUZZ_CHECK((f->debug == NULL) == (c->debug == NULL), "%s: one has a debug table", what);
    for (size_t i = 0; f->debug && i < f->stream.count; i++)
        FUZZ_CHECK(same_str(f->debug[i].name, c->debug[i].name) &&
                       same_str(f->debug[i].src, c->debug[i].src) &&
                       same_str(f->debug[i].buf, c->debug[i].buf), "%s: entry %zu differs", what, i);
}

/* An accepted compact sidecar, expanded to the full form and read again. */
static void check_expanded(const sim_engine_t *f, const uint8_t *buf, size_t len, unsigned n)
{
    cJSON *root = cJSON_ParseWithLength((const char *)buf, len);
    if (!root || !tpb_sidecar_is_compact(root)) {
        cJSON_Delete(root);
        return;
    }
    FUZZ_CHECK(tpb_sidecar_expand(root) == 0, "out of memory");
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    FUZZ_CHECK(text != NULL, "out of memory");
    sim_engine_t x;
    make_engine(&x, n);
    tpb_err_t ex = { { 0 } };
    int rx = sim_sidecar_parse(&x, "x/DVE.json", (const uint8_t *)text, strlen(text), false, NULL,
                               &ex);
    FUZZ_CHECK(rx == 0, "the expanded form does not read: %s\n%s", ex.msg, text);
    same_table(f, &x, "compact vs expanded");
    free(text);
    sim_debug_free(&x);
    isa_stream_free(&x.stream);
}

/* tpb_json_parse_arena against tpb_json_parse (cJSON) on the same text. */
static void check_arena_reader(const uint8_t *buf, size_t len)
{
    cJSON *c = NULL, *a = NULL;
    tpb_err_t ec = { { 0 } }, ea = { { 0 } };
    tpb_arena_t arena = { 0 };
    int rc = tpb_json_parse(buf, len, "x/DVE.json", &c, &ec);
    int ra = tpb_json_parse_arena(&arena, buf, len, "x/DVE.json", &a, &ea);
    FUZZ_CHECK(rc == ra && (rc ? !strcmp(ec.msg, ea.msg) : a != NULL),
               "cJSON %d '%s', arena %d '%s'", rc, ec.msg, ra, ea.msg);
    cJSON_Delete(c);
    tpb_arena_free(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 1 << 16)
        return 0;
    unsigned n = data[0] % 9; /* 0 = an empty stream */
    uint8_t *buf = malloc(size);
    FUZZ_CHECK(buf != NULL, "oom");
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = 0;
    sim_engine_t f, c;
    make_engine(&f, n);
    make_engine(&c, n);
    tpb_err_t ef = { { 0 } }, ec = { { 0 } };
    int rf = sim_sidecar_parse(&f, "x/DVE.json", buf, size - 1, true, NULL, &ef);
    int rc = sim_sidecar_parse(&c, "x/DVE.json", buf, size - 1, false, NULL, &ec);
    FUZZ_CHECK(rf == rc, "scanner %d '%s', cJSON %d '%s'", rf, ef.msg, rc, ec.msg);
    check_arena_reader(buf, size - 1);
    if (rf) {
        FUZZ_CHECK(!strcmp(ef.msg, ec.msg), "'%s' vs '%s'", ef.msg, ec.msg);
        FUZZ_CHECK(strstr(ef.msg, "x/DVE.json") != NULL, "message without the file: %s", ef.msg);
    } else {
        same_table(&f, &c, "scanner vs cJSON");
        check_expanded(&f, buf, size - 1, n);
    }
    sim_debug_free(&f);
    sim_debug_free(&c);
    isa_stream_free(&f.stream);
    isa_stream_free(&c.stream);
    free(buf);
    return 0;
}
