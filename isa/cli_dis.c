/* tpb dis - disassemble a .bin stream, or every stream of an artifact
 * directory (nc<i>/sg<j>/<Engine>.bin). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/fileio.h"
#include "../common/sidecar_form.h"
#include "dis.h"

int tpb_cmd_dis(int argc, char **argv);

typedef struct {
    isa_dis_opts_t opts;
    bool engine_forced;   /* --engine given: do not infer from file names */
    bool annotate;        /* show names from def.json / <Engine>.json sidecars */
    unsigned nfiles;
    unsigned nbad;        /* files with problems */
} dis_run_t;

static void dis_usage(FILE *f)
{
    fprintf(f,
            "usage: tpb dis <file.bin | artifact-dir> [options]\n\n"
            "Disassemble 64-byte bundles: offset, bundle index, instruction with every\n"
            "field by name, and the raw bytes.  For an artifact directory every stream\n"
            "ncN/sgM/<Engine>.bin is printed under a header.  Undecodable bundles are\n"
            "printed as `.bundle` data with the reason; the exit status is 1 when any\n"
            "bundle is invalid, illegal on its engine, or the size is not a multiple\n"
            "of 64 (the trailing bytes are reported).\n\n"
            "options:\n"
            "  --engine NAME   check each opcode is legal on NAME (PE, Activation, Pool,\n"
            "                  DVE, SP); default: the engine named by the file name\n"
            "                  (<Engine>.bin), none otherwise; 'any' disables the check\n"
            "  --no-hex        do not print the raw bytes\n"
            "  --no-notes      do not show the names found in the compiler's sidecar\n"
            "                  files next to a stream (def.json: semaphore and queue\n"
            "                  names; <Engine>.json: the op each bundle came from)\n"
            "  --canonical     print only the assembly text (input for `tpb as`)\n"
            "  -h, --help      show this help\n");
}

/* Engine named by a path's base name "<Engine>.bin", or UNASSIGNED. */
static isa_engine_t engine_from_path(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    char name[64];
    size_t n = strlen(b);
    if (n < 5 || n - 4 >= sizeof name || strcmp(b + n - 4, ".bin") != 0)
        return ISA_ENG_UNASSIGNED;
    memcpy(name, b, n - 4);
    name[n - 4] = '\0';
    int e = isa_engine_by_name(name);
    return (e >= 0 && isa_engine_is_tpb((isa_engine_t)e)) ? (isa_engine_t)e : ISA_ENG_UNASSIGNED;
}


/* ---- compiler sidecars next to a stream: <Engine>.json and def.json ---- */
typedef struct {
    char **v;      /* per bundle index, malloc'ed strings or NULL */
    size_t n;
} notes_t;

static void notes_free(notes_t *nt)
{
    for (size_t i = 0; i < nt->n; i++)
        free(nt->v[i]);
    free(nt->v);
    memset(nt, 0, sizeof *nt);
}

static cJSON *load_json(const char *path)
{
    uint8_t *buf;
    size_t len;
    tpb_err_t err;
    if (!fio_exists(path) || fio_read_all(path, &buf, &len, &err))
        return NULL;
    cJSON *j = cJSON_ParseWithLength((const char *)buf, len);
    free(buf);
    if (!j)
        fprintf(stderr, "tpb dis: %s: not valid JSON, ignored\n", path);
    return j;
}

/* Note for bundle pc: "<name>  <src>" from the sidecar's debug entries. */
static void load_notes(const char *binpath, size_t nbundles, notes_t *nt)
{
    memset(nt, 0, sizeof *nt);
    char path[4096];
    size_t n = strlen(binpath);
    if (n < 4 || n >= sizeof path || strcmp(binpath + n - 4, ".bin") != 0)
        return;
    memcpy(path, binpath, n - 4);
    strcpy(path + n - 4, ".json");
    cJSON *j = load_json(path);
    if (!j)
        return;
    if (tpb_sidecar_expand(j)) { /* out of memory: no notes */
        cJSON_Delete(j);
        return;
    }
    const cJSON *dbg = cJSON_GetObjectItemCaseSensitive(j, "debug");
    nt->v = nbundles ? calloc(nbundles, sizeof *nt->v) : NULL;
    nt->n = nt->v ? nbundles : 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, dbg) {
        const cJSON *pc = cJSON_GetObjectItemCaseSensitive(e, "pc");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(e, "src");
        if (!cJSON_IsNumber(pc) || pc->valuedouble < 0 || pc->valuedouble >= (double)nt->n ||
            !cJSON_IsString(name) || nt->v[(size_t)pc->valuedouble])
            continue;
        char text[512];
        snprintf(text, sizeof text, "%s%s%s", name->valuestring, cJSON_IsString(src) ? "  " : "",
                 cJSON_IsString(src) ? src->valuestring : "");
        for (char *c = text; *c; c++)
            if (*c == '\n' || *c == '\r')
                *c = ' '; /* notes are one comment line */
        nt->v[(size_t)pc->valuedouble] = strdup(text);
    }
    cJSON_Delete(j);
}

/* "S5=qSyncIO0 ..." and "q0=qSyncIO0(S5) ..." from the def.json next to a stream. */
static void print_defs(const char *binpath, bool canonical)
{
    char path[4096];
    const char *slash = strrchr(binpath, '/');
    int dl = slash ? (int)(slash - binpath) : 1;
    if (snprintf(path, sizeof path, "%.*s/def.json", dl, slash ? binpath : ".") >= (int)sizeof path)
        return;
    cJSON *j = load_json(path);
    if (!j)
        return;
    const char *kinds[2] = { "semaphores", "queues" };
    for (int k = 0; k < 2; k++) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, kinds[k]), *e;
        if (!cJSON_GetArraySize(arr))
            continue;
        printf("%s%s:", canonical ? "# " : "", kinds[k]);
        cJSON_ArrayForEach(e, arr) {
            const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
            const cJSON *sem = cJSON_GetObjectItemCaseSensitive(e, "semaphore");
            if (!cJSON_IsNumber(id) || !cJSON_IsString(name))
                continue;
            printf(" %s%d=%s", k ? "q" : "S", id->valueint, name->valuestring);
            if (cJSON_IsNumber(sem))
                printf("(S%d)", sem->valueint);
        }
        printf("\n");
    }
    cJSON_Delete(j);
}

static void dis_file(dis_run_t *r, const char *path, bool with_header)
{
    uint8_t *buf;
    size_t len;
    tpb_err_t err;
    r->nfiles++;
    if (fio_read_all(path, &buf, &len, &err)) {
        fprintf(stderr, "tpb dis: %s\n", err.msg);
        r->nbad++;
        return;
    }
    isa_dis_opts_t o = r->opts;
    if (!r->engine_forced)
        o.engine = engine_from_path(path);
    if (with_header) {
        if (o.canonical)
            printf("# %s\n", path);
        else
            printf("== %s: %zu bundles%s%s ==\n", path, len / ISA_BUNDLE_BYTES,
                   o.engine ? ", engine " : "", o.engine ? isa_engine_name(o.engine) : "");
    }
    if (r->annotate)
        print_defs(path, o.canonical);
    notes_t nt = { 0 };
    if (r->annotate)
        load_notes(path, len / ISA_BUNDLE_BYTES, &nt);
    o.notes = (const char *const *)nt.v;
    o.nnotes = nt.n;
    isa_text_t t = { 0 };
    isa_dis_report_t rep;
    if (isa_disassemble(buf, len, &o, &t, &rep)) {
        fprintf(stderr, "tpb dis: %s: out of memory\n", path);
        r->nbad++;
    } else {
        if (t.s)
            fputs(t.s, stdout);
        if (rep.ninvalid || rep.nillegal || rep.trailing) {
            fflush(stdout);
            fprintf(stderr, "%s: offset 0x%zx: error: %s\n", path, rep.first_error_offset, rep.first_error);
            fprintf(stderr, "%s: %zu invalid bundle%s, %zu illegal on the engine, %zu trailing byte%s\n",
                    path, rep.ninvalid, rep.ninvalid == 1 ? "" : "s", rep.nillegal, rep.trailing,
                    rep.trailing == 1 ? "" : "s");
            r->nbad++;
        }
    }
    if (with_header && !o.canonical)
        printf("\n");
    isa_text_free(&t);
    notes_free(&nt);
    free(buf);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the entries of dir starting with prefix (directories). */
static size_t list_dirs(const char *dir, const char *prefix, char ***out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0, cap = 0;
    char **v = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        char p[4096];
        if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p || !fio_is_dir(p))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            char **nv = realloc(v, cap * sizeof *nv);
            if (!nv)
                break;
            v = nv;
        }
        v[n] = strdup(e->d_name);
        if (v[n])
            n++;
    }
    closedir(d);
    if (n)
        qsort(v, n, sizeof *v, cmp_str);
    *out = v;
    return n;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int dis_artifact_dir(dis_run_t *r, const char *dir)
{
    char **cores;
    size_t nc = list_dirs(dir, "nc", &cores);
    for (size_t i = 0; i < nc; i++) {
        char cdir[4096];
        snprintf(cdir, sizeof cdir, "%s/%s", dir, cores[i]);
        char **sgs;
        size_t ns = list_dirs(cdir, "sg", &sgs);
        for (size_t j = 0; j < ns; j++) {
            for (int k = 0; k < 5; k++) {
                char p[4096];
                if (snprintf(p, sizeof p, "%s/%s/%s.bin", cdir, sgs[j],
                             isa_engine_name(isa_tpb_engines[k])) >= (int)sizeof p)
                    continue;
                if (fio_exists(p))
                    dis_file(r, p, true);
            }
        }
        free_list(sgs, ns);
    }
    free_list(cores, nc);
    if (!r->nfiles) {
        fprintf(stderr, "tpb dis: %s: no nc<i>/sg<j>/<Engine>.bin streams in this directory\n", dir);
        return 1;
    }
    return 0;
}

int tpb_cmd_dis(int argc, char **argv)
{
    dis_run_t r;
    memset(&r, 0, sizeof r);
    r.opts.hex = true;
    r.annotate = true;
    const char *in = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            dis_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--no-hex")) {
            r.opts.hex = false;
        } else if (!strcmp(a, "--no-notes")) {
            r.annotate = false;
        } else if (!strcmp(a, "--canonical")) {
            r.opts.canonical = true;
        } else if (!strcmp(a, "--engine")) {
            if (++i >= argc) {
                fprintf(stderr, "tpb dis: --engine needs an engine name\n");
                return 2;
            }
            r.engine_forced = true;
            if (!strcmp(argv[i], "any"))
                continue;
            int e = isa_engine_by_name(argv[i]);
            if (e < 0 || !isa_engine_is_tpb((isa_engine_t)e)) {
                fprintf(stderr, "tpb dis: unknown engine '%s' (PE, Activation, Pool, DVE, SP, any)\n", argv[i]);
                return 2;
            }
            r.opts.engine = (isa_engine_t)e;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "tpb dis: unknown option '%s'\n", a);
            dis_usage(stderr);
            return 2;
        } else if (!in) {
            in = a;
        } else {
            fprintf(stderr, "tpb dis: more than one input ('%s')\n", a);
            return 2;
        }
    }
    if (!in) {
        fprintf(stderr, "tpb dis: missing input file or artifact directory\n");
        dis_usage(stderr);
        return 2;
    }
    int rc = 0;
    if (fio_is_dir(in))
        rc = dis_artifact_dir(&r, in);
    else
        dis_file(&r, in, false);
    fflush(stdout);
    return (rc || r.nbad) ? 1 : 0;
}
