/* trace_read.c - parse + validate a tpbsim trace (docs/trace-format.md).
 *
 * Every field the viewer uses is type- and range-checked; an error names
 * the file, the byte offset (JSON syntax) or the event index, and the field.
 * Events the viewer does not draw (B/E/i/flow...) are skipped, so traces
 * written by other Chrome-trace producers still open. */
#include "trace_read.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "layout.h"

/* ------------------------------------------------------------ helpers */

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elsz)
{
    if (need <= *cap)
        return 0;
    uint64_t nc = *cap ? (uint64_t)*cap * 2 : 64;
    while (nc < need)
        nc *= 2;
    if (nc > UINT32_MAX || nc * elsz > SIZE_MAX / 2)
        return -1;
    void *q = realloc(*p, (size_t)nc * elsz);
    if (!q)
        return -1;
    *p = q;
    *cap = (uint32_t)nc;
    return 0;
}

static viz_str_t str_add(viz_trace_t *t, const char *s)
{
    if (!s || !*s)
        return 0;
    size_t n = strlen(s) + 1;
    if (t->nstrings + n > UINT32_MAX)
        return 0; /* pool full: the string is dropped, never a crash */
    if (t->nstrings + n > t->cap_strings) {
        size_t nc = t->cap_strings ? t->cap_strings : 4096;
        while (nc < t->nstrings + n)
            nc *= 2;
        char *q = realloc(t->strings, nc);
        if (!q)
            return 0;
        t->strings = q;
        t->cap_strings = nc;
    }
    viz_str_t off = (viz_str_t)t->nstrings;
    memcpy(t->strings + off, s, n);
    t->nstrings += n;
    return off;
}

const char *viz_str(const viz_trace_t *t, viz_str_t s)
{
    if (!t->strings || s >= t->nstrings)
        return "";
    return t->strings + s;
}

isa_class_t viz_class_of(const char *cat)
{
    if (!cat)
        return ISA_CLASS_COUNT;
    for (int c = 0; c < ISA_CLASS_COUNT; c++)
        if (strcmp(cat, isa_class_name((isa_class_t)c)) == 0)
            return (isa_class_t)c;
    return ISA_CLASS_COUNT;
}

const char *viz_engine_of_tid(int32_t tid)
{
    static const char *const names[] = { NULL, "PE", "Activation", "Pool", "DVE", "SP" };
    return tid >= 1 && tid <= 5 ? names[tid] : NULL;
}

double viz_cycles_to_us(const viz_trace_t *t, double cycles)
{
    return cycles / (1000.0 * t->clock_ghz);
}

static const char *json_type_name(const cJSON *j)
{
    if (!j)
        return "nothing";
    if (cJSON_IsNumber(j))
        return "a number";
    if (cJSON_IsString(j))
        return "a string";
    if (cJSON_IsBool(j))
        return "a boolean";
    if (cJSON_IsNull(j))
        return "null";
    if (cJSON_IsArray(j))
        return "an array";
    if (cJSON_IsObject(j))
        return "an object";
    return "an invalid value";
}

/* Where an error happened: "<file>: traceEvents[<i>]" (+ ph / name). */
typedef struct {
    const char *file;
    long index;          /* event index, -1 for otherData */
    const char *what;    /* "traceEvents" or "otherData" */
    tpb_err_t *err;
} ctx_t;

static int fail(const ctx_t *c, const char *field, const char *fmt, const char *detail)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, detail);
    if (c->index >= 0)
        return tpb_errf(c->err, "%s: %s[%ld]: field '%s': %s", c->file, c->what,
                        c->index, field, msg);
    return tpb_errf(c->err, "%s: %s: field '%s': %s", c->file, c->what, field, msg);
}

static int fail_type(const ctx_t *c, const char *field, const char *expected, const cJSON *got)
{
    char msg[256];
    snprintf(msg, sizeof msg, "expected %s, got %s", expected, json_type_name(got));
    return fail(c, field, "%s", msg);
}

/* Integer field in [lo, hi]; absent -> *out = dflt unless required. */
static int get_int(const ctx_t *c, const cJSON *obj, const char *field, bool required,
                   double lo, double hi, int64_t dflt, int64_t *out)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, field);
    if (!j) {
        if (required)
            return fail(c, field, "%s", "missing");
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsNumber(j))
        return fail_type(c, field, "an integer", j);
    double v = j->valuedouble;
    if (!isfinite(v) || v != floor(v))
        return fail(c, field, "%s", "expected an integer");
    if (v < lo || v > hi) {
        char msg[160];
        snprintf(msg, sizeof msg, "value %.17g out of range [%.17g, %.17g]", v, lo, hi);
        return fail(c, field, "%s", msg);
    }
    *out = (int64_t)v;
    return 0;
}

/* Non-negative finite number; absent -> NAN unless required. */
static int get_time(const ctx_t *c, const cJSON *obj, const char *field, bool required, double *out)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, field);
    *out = NAN;
    if (!j)
        return required ? fail(c, field, "%s", "missing") : 0;
    if (!cJSON_IsNumber(j))
        return fail_type(c, field, "a number", j);
    double v = j->valuedouble;
    if (!isfinite(v))
        return fail(c, field, "%s", "not a finite number");
    if (v < 0) {
        char msg[96];
        snprintf(msg, sizeof msg, "negative time %.17g", v);
        return fail(c, field, "%s", msg);
    }
    *out = v;
    return 0;
}

/* Optional string field; wrong type is an error. */
static int get_str(const ctx_t *c, const cJSON *obj, const char *field, bool required,
                   const char **out)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, field);
    *out = NULL;
    if (!j)
        return required ? fail(c, field, "%s", "missing") : 0;
    if (!cJSON_IsString(j) || !j->valuestring)
        return fail_type(c, field, "a string", j);
    *out = j->valuestring;
    return 0;
}

static int get_obj(const ctx_t *c, const cJSON *obj, const char *field, const cJSON **out)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, field);
    *out = NULL;
    if (!j || cJSON_IsNull(j))
        return 0;
    if (!cJSON_IsObject(j))
        return fail_type(c, field, "an object", j);
    *out = j;
    return 0;
}

/* Microseconds -> reference cycles, range-checked. */
static int us_to_cycles(const ctx_t *c, const viz_trace_t *t, const char *field, double us,
                        uint64_t *out)
{
    double cyc = us * 1000.0 * t->clock_ghz;
    if (!(cyc <= (double)VIZ_MAX_CYCLE)) {
        char msg[128];
        snprintf(msg, sizeof msg, "time %.17g us is beyond the largest supported cycle 2^53", us);
        return fail(c, field, "%s", msg);
    }
    *out = (uint64_t)llround(cyc);
    return 0;
}

/* Copy with truncation (names longer than the model's buffers are cut). */
static void copy_name(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= cap)
        n = cap - 1;
    if (n)
        memcpy(dst, src, n);
    dst[n] = 0;
}

/* ------------------------------------------------------------ otherData */

static int read_other_data(const ctx_t *c0, const cJSON *root, viz_trace_t *t)
{
    ctx_t c = *c0;
    c.what = "otherData";
    c.index = -1;
    const cJSON *od;
    if (get_obj(&c, root, "otherData", &od))
        return -1;
    if (!od)
        return 0;
    const char *s;
    if (get_str(&c, od, "kernel", false, &s))
        return -1;
    copy_name(t->kernel, sizeof t->kernel, s);
    if (get_str(&c, od, "target", false, &s))
        return -1;
    copy_name(t->target, sizeof t->target, s);
    const char *fmt;
    if (get_str(&c, od, "format", false, &fmt))
        return -1;
    int64_t v;
    if (fmt && strcmp(fmt, "tpbsim-trace") == 0) {
        if (get_int(&c, od, "version", false, 1, 1, 1, &v))
            return -1;
    }
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(od, "clock_ghz");
    if (j) {
        if (!cJSON_IsNumber(j))
            return fail_type(&c, "clock_ghz", "a number", j);
        if (!(j->valuedouble > 0.0 && j->valuedouble <= 1000.0))
            return fail(&c, "clock_ghz", "%s", "must be in (0, 1000]");
        t->clock_ghz = j->valuedouble;
        t->clock_from_trace = true;
    }
    if (get_int(&c, od, "num_cores", false, 1, 4096, 0, &v))
        return -1;
    t->num_cores = (int)v;
    if (get_int(&c, od, "total_cycles", false, 0, (double)VIZ_MAX_CYCLE, -1, &v))
        return -1;
    if (v >= 0) {
        t->total_cycles = (uint64_t)v;
        t->total_from_trace = true;
    }
    /* stats is the --stats-json object; the viewer only needs its total. */
    const cJSON *st;
    if (get_obj(&c, od, "stats", &st))
        return -1;
    if (st) {
        c.what = "otherData.stats";
        if (get_int(&c, st, "total_cycles", false, 0, (double)VIZ_MAX_CYCLE, -1, &v))
            return -1;
        if (v >= 0) {
            t->total_cycles = (uint64_t)v;
            t->total_from_trace = true;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ events */

typedef struct {
    uint32_t cap_ev, cap_refs, cap_ctr, cap_threads, cap_procs;
    uint32_t *cap_samples;      /* per counter */
    uint32_t last_ctr;          /* lookup cache */
} caps_t;

static int oom(const ctx_t *c)
{
    return tpb_errf(c->err, "%s: out of memory", c->file);
}

static int read_metadata(const ctx_t *c, const cJSON *e, viz_trace_t *t, caps_t *k)
{
    const char *name;
    if (get_str(c, e, "name", true, &name))
        return -1;
    bool thread = strncmp(name, "thread_", 7) == 0;
    bool proc = strncmp(name, "process_", 8) == 0;
    if (!thread && !proc)
        return 0;
    int64_t pid, tid = 0;
    if (get_int(c, e, "pid", true, 0, INT32_MAX, 0, &pid))
        return -1;
    if (thread && get_int(c, e, "tid", true, 0, INT32_MAX, 0, &tid))
        return -1;
    const cJSON *args;
    if (get_obj(c, e, "args", &args))
        return -1;
    if (!args)
        return fail(c, "args", "%s", "missing");
    viz_meta_t **arr = thread ? &t->threads : &t->procs;
    uint32_t *n = thread ? &t->nthreads : &t->nprocs;
    uint32_t *cap = thread ? &k->cap_threads : &k->cap_procs;
    viz_meta_t *m = NULL;
    for (uint32_t i = 0; i < *n; i++)
        if ((*arr)[i].pid == pid && (*arr)[i].tid == tid)
            m = &(*arr)[i];
    if (!m) {
        if (grow((void **)arr, cap, *n + 1, sizeof **arr))
            return oom(c);
        m = &(*arr)[(*n)++];
        memset(m, 0, sizeof *m);
        m->pid = (int32_t)pid;
        m->tid = (int32_t)tid;
    }
    if (strcmp(name + (thread ? 7 : 8), "name") == 0) {
        const char *s;
        if (get_str(c, args, "name", true, &s))
            return -1;
        copy_name(m->name, sizeof m->name, s);
    } else if (strcmp(name + (thread ? 7 : 8), "sort_index") == 0) {
        int64_t si;
        if (get_int(c, args, "sort_index", true, -1e15, 1e15, 0, &si))
            return -1;
        m->sort_index = si;
        m->has_sort = true;
    }
    return 0;
}

static int read_ref(const ctx_t *c, const cJSON *o, const char *field, viz_ref_t *r)
{
    if (!cJSON_IsObject(o))
        return fail_type(c, field, "an object {pid, tid, pc}", o);
    int64_t pid = 0, tid = 0, pc = 0; /* set by get_int on success (-O3 cannot see it) */
    if (get_int(c, o, "pid", true, 0, INT32_MAX, 0, &pid))
        return tpb_err_prefix(c->err, "%s", field);
    if (get_int(c, o, "tid", true, 0, INT32_MAX, 0, &tid))
        return tpb_err_prefix(c->err, "%s", field);
    if (get_int(c, o, "pc", true, 0, INT32_MAX, 0, &pc))
        return tpb_err_prefix(c->err, "%s", field);
    int64_t start;
    if (get_int(c, o, "start_cycle", false, 0, (double)VIZ_MAX_CYCLE, -1, &start))
        return tpb_err_prefix(c->err, "%s", field);
    r->pid = (int32_t)pid;
    r->tid = (int32_t)tid;
    r->pc = (int32_t)pc;
    r->start = start;
    return 0;
}

static int read_waited_for(const ctx_t *c, const cJSON *args, viz_trace_t *t, caps_t *k,
                           viz_event_t *ev)
{
    const cJSON *wf = cJSON_GetObjectItemCaseSensitive(args, "waited_for");
    ev->waited_off = t->nrefs;
    ev->n_waited = 0;
    if (!wf || cJSON_IsNull(wf))
        return 0;
    if (!cJSON_IsArray(wf))
        return fail_type(c, "args.waited_for", "an array", wf);
    int i = 0;
    for (const cJSON *o = wf->child; o; o = o->next, i++) {
        char f[48];
        snprintf(f, sizeof f, "args.waited_for[%d]", i);
        viz_ref_t r;
        if (read_ref(c, o, f, &r))
            return -1;
        if (grow((void **)&t->refs, &k->cap_refs, t->nrefs + 1, sizeof *t->refs))
            return oom(c);
        t->refs[t->nrefs++] = r;
        ev->n_waited++;
    }
    return 0;
}

/* Cycle interval of an X event: args.start_cycle/end_cycle if given, else
 * ts/dur at the reference clock. */
static int read_interval(const ctx_t *c, const cJSON *e, const cJSON *args,
                         const viz_trace_t *t, viz_event_t *ev)
{
    double ts, dur;
    if (get_time(c, e, "ts", true, &ts) || get_time(c, e, "dur", true, &dur))
        return -1;
    int64_t s = -1, en = -1;
    if (args) {
        if (get_int(c, args, "start_cycle", false, 0, (double)VIZ_MAX_CYCLE, -1, &s) ||
            get_int(c, args, "end_cycle", false, 0, (double)VIZ_MAX_CYCLE, -1, &en))
            return tpb_err_prefix(c->err, "%s", "(args)");
    }
    uint64_t a = 0, b = 0;
    if (s >= 0) {
        a = (uint64_t)s;
    } else if (us_to_cycles(c, t, "ts", ts, &a)) {
        return -1;
    }
    if (en >= 0) {
        b = (uint64_t)en;
    } else {
        uint64_t d = 0;
        if (us_to_cycles(c, t, "dur", dur, &d))
            return -1;
        b = a + d;
        if (b > VIZ_MAX_CYCLE)
            return fail(c, "dur", "%s", "event ends beyond the largest supported cycle 2^53");
    }
    if (b < a) {
        char msg[128];
        snprintf(msg, sizeof msg, "end_cycle %llu is before start_cycle %llu",
                 (unsigned long long)b, (unsigned long long)a);
        return fail(c, "args.end_cycle", "%s", msg);
    }
    ev->start = a;
    ev->end = b;
    return 0;
}

static int read_x_args(const ctx_t *c, const cJSON *args, viz_trace_t *t, caps_t *k,
                       viz_event_t *ev)
{
    int64_t v;
    ev->issue = ev->start;
    if (!args)
        return read_waited_for(c, NULL, t, k, ev);
    const ctx_t *cc = c;
#define ARG_INT(key, lo, hi, dflt) \
    (get_int(cc, args, key, false, lo, hi, dflt, &v) ? tpb_err_prefix(cc->err, "%s", "(args)") : 0)
    if (ARG_INT("pc", 0, INT32_MAX, -1))
        return -1;
    ev->pc = (int32_t)v;
    if (ARG_INT("opcode", 0, 255, -1))
        return -1;
    ev->opcode = (int32_t)v;
    if (ARG_INT("issue_cycle", 0, (double)VIZ_MAX_CYCLE, (int64_t)ev->start))
        return -1;
    ev->issue = (uint64_t)v;
    if (ARG_INT("wait_cycles", 0, (double)VIZ_MAX_CYCLE, 0))
        return -1;
    ev->wait_cycles = (uint64_t)v;
    if (ARG_INT("bytes", 0, (double)VIZ_MAX_CYCLE, 0))
        return -1;
    ev->bytes = (uint64_t)v;
    if (ARG_INT("queue", 0, INT32_MAX, -1))
        return -1;
    ev->queue = (int32_t)v;
    if (ARG_INT("descriptors", 0, INT32_MAX, -1))
        return -1;
    ev->descriptors = (int32_t)v;
    if (ARG_INT("iter", 0, INT32_MAX - 1, -1))
        return -1;
    ev->iter1 = v >= 0 ? (int32_t)v + 1 : 0;
#undef ARG_INT
    static const char *const keys[] = { "fields", "wait", "src", "op_name", "buf" };
    viz_str_t *dst[] = { &ev->fields, &ev->wait, &ev->src, &ev->op_name, &ev->buf };
    for (int i = 0; i < 5; i++) {
        const char *s;
        char f[32];
        snprintf(f, sizeof f, "args.%s", keys[i]);
        const cJSON *j = cJSON_GetObjectItemCaseSensitive(args, keys[i]);
        if (j && !cJSON_IsNull(j) && !cJSON_IsString(j))
            return fail_type(c, f, "a string", j);
        s = j && cJSON_IsString(j) ? j->valuestring : NULL;
        *dst[i] = str_add(t, s);
    }
    const cJSON *iss = cJSON_GetObjectItemCaseSensitive(args, "issuer");
    if (iss && !cJSON_IsNull(iss) && read_ref(c, iss, "args.issuer", &ev->issuer))
        return -1;
    return read_waited_for(c, args, t, k, ev);
}

static int read_complete(const ctx_t *c, const cJSON *e, viz_trace_t *t, caps_t *k)
{
    viz_event_t ev;
    memset(&ev, 0, sizeof ev);
    int64_t pid, tid;
    if (get_int(c, e, "pid", true, 0, INT32_MAX, 0, &pid) ||
        get_int(c, e, "tid", true, 0, INT32_MAX, 0, &tid))
        return -1;
    ev.pid = (int32_t)pid;
    ev.tid = (int32_t)tid;
    const char *name, *cat;
    if (get_str(c, e, "name", true, &name) || get_str(c, e, "cat", false, &cat))
        return -1;
    const cJSON *args;
    if (get_obj(c, e, "args", &args))
        return -1;
    if (read_interval(c, e, args, t, &ev))
        return -1;
    ev.name = str_add(t, name);
    ev.cat = str_add(t, cat);
    ev.cls = viz_class_of(cat);
    if (read_x_args(c, args, t, k, &ev))
        return -1;
    if (ev.tid >= 100 && ev.queue < 0)
        ev.queue = (ev.tid - 100) / 8;
    if (grow((void **)&t->ev, &k->cap_ev, t->nev + 1, sizeof *t->ev))
        return oom(c);
    t->ev[t->nev++] = ev;
    return 0;
}

static int counter_add(const ctx_t *c, viz_trace_t *t, caps_t *k, int32_t pid,
                       const char *name, uint64_t cyc, int64_t value)
{
    uint32_t i = k->last_ctr;
    if (!(i < t->nctr && t->ctr[i].pid == pid && strcmp(t->ctr[i].name, name) == 0)) {
        for (i = 0; i < t->nctr; i++)
            if (t->ctr[i].pid == pid && strncmp(t->ctr[i].name, name, sizeof t->ctr[i].name - 1) == 0)
                break;
        if (i == t->nctr) {
            uint32_t old = k->cap_ctr;
            if (grow((void **)&t->ctr, &k->cap_ctr, t->nctr + 1, sizeof *t->ctr))
                return oom(c);
            if (k->cap_ctr != old) {
                uint32_t *q = realloc(k->cap_samples, k->cap_ctr * sizeof *q);
                if (!q)
                    return oom(c);
                k->cap_samples = q;
            }
            viz_counter_t *n = &t->ctr[t->nctr++];
            memset(n, 0, sizeof *n);
            n->pid = pid;
            copy_name(n->name, sizeof n->name, name);
            n->vmin = n->vmax = value;
            k->cap_samples[i] = 0;
        }
        k->last_ctr = i;
    }
    viz_counter_t *ct = &t->ctr[i];
    if (grow((void **)&ct->s, &k->cap_samples[i], ct->n + 1, sizeof *ct->s))
        return oom(c);
    ct->s[ct->n].cycle = cyc;
    ct->s[ct->n].value = value;
    ct->n++;
    if (value < ct->vmin)
        ct->vmin = value;
    if (value > ct->vmax)
        ct->vmax = value;
    return 0;
}

/* Counter event: one series per numeric args member ("value" keeps the
 * event's name; any other key is appended: "name.key"). */
static int read_counter(const ctx_t *c, const cJSON *e, viz_trace_t *t, caps_t *k)
{
    int64_t pid;
    const char *name;
    double ts;
    if (get_int(c, e, "pid", true, 0, INT32_MAX, 0, &pid) ||
        get_str(c, e, "name", true, &name) || get_time(c, e, "ts", true, &ts))
        return -1;
    uint64_t cyc = 0;
    if (us_to_cycles(c, t, "ts", ts, &cyc))
        return -1;
    const cJSON *args;
    if (get_obj(c, e, "args", &args))
        return -1;
    if (!args)
        return fail(c, "args", "%s", "missing (a counter needs {\"value\": N})");
    for (const cJSON *m = args->child; m; m = m->next) {
        char f[96];
        snprintf(f, sizeof f, "args.%s", m->string ? m->string : "?");
        if (!cJSON_IsNumber(m))
            return fail_type(c, f, "a number", m);
        double v = m->valuedouble;
        if (!isfinite(v) || fabs(v) > 9e15)
            return fail(c, f, "%s", "counter value out of range");
        char series[160];
        if (m->string && strcmp(m->string, "value") == 0)
            snprintf(series, sizeof series, "%s", name);
        else
            snprintf(series, sizeof series, "%s.%s", name, m->string ? m->string : "?");
        if (counter_add(c, t, k, (int32_t)pid, series, cyc, (int64_t)llround(v)))
            return -1;
    }
    return 0;
}

static int read_event(const ctx_t *c, const cJSON *e, viz_trace_t *t, caps_t *k)
{
    if (!cJSON_IsObject(e))
        return tpb_errf(c->err, "%s: traceEvents[%ld]: expected an object, got %s",
                        c->file, c->index, json_type_name(e));
    const char *ph;
    if (get_str(c, e, "ph", true, &ph))
        return -1;
    if (strcmp(ph, "M") == 0)
        return read_metadata(c, e, t, k);
    if (strcmp(ph, "X") == 0)
        return read_complete(c, e, t, k);
    if (strcmp(ph, "C") == 0)
        return read_counter(c, e, t, k);
    return 0; /* other phases are not drawn */
}

static int cmp_sample(const void *a, const void *b)
{
    const viz_sample_t *x = a, *y = b;
    return x->cycle < y->cycle ? -1 : x->cycle > y->cycle;
}

/* Samples are emitted in time order; sort only if a producer did not. */
static void sort_counters(viz_trace_t *t)
{
    for (uint32_t i = 0; i < t->nctr; i++) {
        viz_counter_t *ct = &t->ctr[i];
        bool sorted = true;
        for (uint32_t j = 1; j < ct->n && sorted; j++)
            sorted = ct->s[j - 1].cycle <= ct->s[j].cycle;
        if (!sorted) /* keep emission order for equal cycles: a stable merge is not needed
                        for display (last value per cycle wins either way within a pixel) */
            qsort(ct->s, ct->n, sizeof *ct->s, cmp_sample);
    }
}

static void compute_extent(viz_trace_t *t)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t i = 0; i < t->nev; i++) {
        if (t->ev[i].start < lo)
            lo = t->ev[i].start;
        if (t->ev[i].end > hi)
            hi = t->ev[i].end;
    }
    for (uint32_t i = 0; i < t->nctr; i++)
        for (uint32_t j = 0; j < t->ctr[i].n; j++) {
            uint64_t cy = t->ctr[i].s[j].cycle;
            if (cy < lo)
                lo = cy;
            if (cy > hi)
                hi = cy;
        }
    if (lo == UINT64_MAX)
        lo = 0;
    t->first_cycle = lo;
    t->last_cycle = hi;
    if (!t->total_from_trace)
        t->total_cycles = hi;
}

/* ------------------------------------------------------------ stats */

/* Non-negative integer member of a stats object, or -1.  The stats object
 * is the simulator's --stats-json (not part of the trace contract's fixed
 * fields), so it is read leniently: anything unexpected is ignored and the
 * totals computed from the events stay. */
static int64_t stat_u(const cJSON *o, const char *key)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(j) || !(j->valuedouble >= 0) || j->valuedouble > (double)VIZ_MAX_CYCLE)
        return -1;
    return (int64_t)j->valuedouble;
}

static viz_lane_t *stats_lane(viz_trace_t *t, int32_t pid, viz_lane_kind_t kind, const char *engine,
                              int32_t queue)
{
    for (uint32_t i = 0; i < t->nlanes; i++) {
        viz_lane_t *l = &t->lanes[i];
        if (l->pid != pid || l->kind != kind)
            continue;
        if (kind == VIZ_LANE_DMA ? l->queue == queue
                                 : (engine && viz_engine_of_tid(l->tid) &&
                                    strcmp(viz_engine_of_tid(l->tid), engine) == 0))
            return l;
    }
    return NULL;
}

/* otherData.stats.cores[].engines[] {name, busy_cycles, sem_wait_cycles}
 * and .queues[] {queue, bytes, busy_cycles} override the per-lane totals:
 * the simulator also counts waits that no instruction event shows. */
static void apply_stats(const cJSON *root, viz_trace_t *t)
{
    const cJSON *od = cJSON_GetObjectItemCaseSensitive(root, "otherData");
    const cJSON *st = cJSON_IsObject(od) ? cJSON_GetObjectItemCaseSensitive(od, "stats") : NULL;
    const cJSON *cores = cJSON_IsObject(st) ? cJSON_GetObjectItemCaseSensitive(st, "cores") : NULL;
    if (!cJSON_IsArray(cores))
        return;
    int idx = 0;
    for (const cJSON *co = cores->child; co; co = co->next, idx++) {
        if (!cJSON_IsObject(co))
            continue;
        int64_t core = stat_u(co, "core");
        int32_t pid = (int32_t)((core >= 0 && core < INT32_MAX ? core : idx) + 1);
        const cJSON *engs = cJSON_GetObjectItemCaseSensitive(co, "engines");
        for (const cJSON *e = cJSON_IsArray(engs) ? engs->child : NULL; e; e = e->next) {
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
            viz_lane_t *l = cJSON_IsString(nm) ? stats_lane(t, pid, VIZ_LANE_ENGINE, nm->valuestring, -1)
                                               : NULL;
            int64_t busy = stat_u(e, "busy_cycles"), wait = stat_u(e, "sem_wait_cycles");
            if (!l || busy < 0 || wait < 0)
                continue;
            l->busy = (uint64_t)busy;
            l->wait = (uint64_t)wait;
            l->from_stats = t->stats_used = true;
        }
        const cJSON *qs = cJSON_GetObjectItemCaseSensitive(co, "queues");
        for (const cJSON *q = cJSON_IsArray(qs) ? qs->child : NULL; q; q = q->next) {
            int64_t qn = stat_u(q, "queue"), bytes = stat_u(q, "bytes"), busy = stat_u(q, "busy_cycles");
            viz_lane_t *l = qn >= 0 && qn < INT32_MAX ? stats_lane(t, pid, VIZ_LANE_DMA, NULL, (int32_t)qn)
                                                      : NULL;
            if (!l || bytes < 0 || busy < 0)
                continue;
            l->bytes = (uint64_t)bytes;
            l->busy = (uint64_t)busy;
            l->from_stats = t->stats_used = true;
        }
    }
}

/* ------------------------------------------------------------ entry points */

static void json_position(const char *json, size_t off, long *line, long *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (json[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* Nesting depth left open at the end of the text (strings skipped): > 0
 * means the file was cut short. */
static long open_depth(const char *json, size_t len)
{
    long depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        char ch = json[i];
        if (in_str) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_str = false;
        } else if (ch == '"') {
            in_str = true;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if (ch == '}' || ch == ']') {
            depth--;
        }
    }
    return in_str ? depth + 1 : depth;
}

static int parse_root(const char *json, size_t len, const char *name, cJSON **root, tpb_err_t *err)
{
    const char *end = NULL;
    *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    if (*root)
        return 0;
    size_t off = end && end >= json && end <= json + len ? (size_t)(end - json) : 0;
    long line, col;
    json_position(json, off, &line, &col);
    if (off >= len || open_depth(json, len) > 0)
        return tpb_errf(err, "%s: byte %zu (line %ld, column %ld): invalid JSON: unexpected end of "
                        "file (truncated trace?)", name, off, line, col);
    /* quote what follows, bounded by len (the text need not be NUL-terminated) */
    char near[17];
    size_t n = 0;
    for (size_t i = off; i < len && n < sizeof near - 1; i++)
        near[n++] = (json[i] >= 32 && json[i] < 127) ? json[i] : '?';
    near[n] = 0;
    return tpb_errf(err, "%s: byte %zu (line %ld, column %ld): invalid JSON near '%s'",
                    name, off, line, col, near);
}

int viz_trace_parse(const char *json, size_t len, const char *name, viz_trace_t *t, tpb_err_t *err)
{
    memset(t, 0, sizeof *t);
    t->clock_ghz = 1.0;
    ctx_t c = { name, -1, "traceEvents", err };
    t->strings = malloc(4096); /* offset 0 is the empty string: "absent" */
    if (!t->strings)
        return oom(&c);
    t->cap_strings = 4096;
    t->nstrings = 1;
    t->strings[0] = 0;
    cJSON *root;
    if (parse_root(json, len, name, &root, err))
        return -1;
    caps_t k;
    memset(&k, 0, sizeof k);
    int rc = -1;
    const cJSON *events = root;
    if (cJSON_IsObject(root)) {
        if (read_other_data(&c, root, t))
            goto out;
        events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
        if (!events) {
            tpb_errf(err, "%s: top level: field 'traceEvents': missing", name);
            goto out;
        }
    }
    if (!cJSON_IsArray(events)) {
        tpb_errf(err, "%s: top level: field 'traceEvents': expected an array, got %s", name,
                 json_type_name(events));
        goto out;
    }
    c.index = 0;
    for (const cJSON *e = events->child; e; e = e->next, c.index++)
        if (read_event(&c, e, t, &k))
            goto out;
    sort_counters(t);
    compute_extent(t);
    if (viz_lanes_build(t, err)) {
        tpb_err_prefix(err, "%s", name);
        goto out;
    }
    if (cJSON_IsObject(root))
        apply_stats(root, t);
    rc = 0;
out:
    free(k.cap_samples);
    cJSON_Delete(root);
    return rc;
}

int viz_trace_load(const char *path, viz_trace_t *t, tpb_err_t *err)
{
    memset(t, 0, sizeof *t);
    char file[4096];
    if (fio_is_dir(path)) {
        if (fio_join(file, sizeof file, path, "trace.json", err))
            return -1;
        if (!fio_exists(file))
            return tpb_errf(err, "%s: run directory has no trace.json (run `tpb sim --trace`)", path);
    } else {
        snprintf(file, sizeof file, "%s", path);
    }
    uint8_t *buf;
    size_t len;
    if (fio_read_all(file, &buf, &len, err))
        return -1;
    int rc = viz_trace_parse((const char *)buf, len, file, t, err);
    free(buf);
    return rc;
}

void viz_trace_free(viz_trace_t *t)
{
    if (!t)
        return;
    for (uint32_t i = 0; i < t->nlanes; i++) {
        free(t->lanes[i].ev);
        free(t->lanes[i].max_end);
    }
    for (uint32_t i = 0; i < t->nctr; i++)
        free(t->ctr[i].s);
    free(t->lanes);
    free(t->ctr);
    free(t->ev);
    free(t->refs);
    free(t->strings);
    free(t->threads);
    free(t->procs);
    memset(t, 0, sizeof *t);
}

/* Does reference r name event e?  An instruction is named by its own
 * (pid, tid, pc).  A DMA transfer has no pc of its own: a reference to a
 * DMA queue tid names the transfer of that queue whose issuer has that pc
 * (docs/trace-format.md). */
static bool ref_names(const viz_event_t *e, viz_ref_t r)
{
    if (r.tid >= 100 && e->pc < 0)
        return e->tid >= 100 && (e->tid - 100) / 8 == (r.tid - 100) / 8 &&
               e->issuer.pid == r.pid && e->issuer.pc == r.pc;
    return e->tid == r.tid && e->pc == r.pc;
}

int64_t viz_trace_find_ref(const viz_trace_t *t, viz_ref_t r, uint64_t before)
{
    /* A pc runs once per loop iteration: the producer is its latest
     * execution that started no later than the waiter. */
    int64_t best = -1;
    for (uint32_t l = 0; l < t->nlanes; l++) {
        const viz_lane_t *ln = &t->lanes[l];
        if (ln->pid != r.pid)
            continue;
        for (uint32_t i = 0; i < ln->nev; i++) {
            const viz_event_t *e = &t->ev[ln->ev[i]];
            if (r.start >= 0 ? e->start > (uint64_t)r.start : e->start > before)
                break;
            if (ref_names(e, r) && (r.start < 0 || e->start == (uint64_t)r.start))
                best = ln->ev[i];
        }
    }
    return best;
}
