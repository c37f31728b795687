/* cli_view.c - `tpb view`: open the timeline viewer on a trace, render a
 * screenshot headless, or print the summary. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "render.h"
#include "trace_read.h"

int tpb_cmd_view(int argc, char **argv);

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tpb view [options] <trace.json | run-dir>\n"
            "\n"
            "Timeline of a simulated run (the trace written by `tpb sim --trace`): one lane\n"
            "per core x engine and per DMA queue, instruction boxes coloured by class,\n"
            "semaphore tracks, utilisation, dependency arrows. A run directory is read\n"
            "through its trace.json. Press ? in the window for the key bindings.\n"
            "\n"
            "options:\n"
            "  --screenshot FILE  render without a display into FILE (24-bit BMP) and exit\n"
            "  --summary          print the summary (cycles, busy %%, stalls, DMA bytes) and exit\n"
            "  --width W          window / screenshot width in pixels (default 1280)\n"
            "  --height H         window / screenshot height in pixels (default 720)\n"
            "  --from CYCLE       first cycle shown (default: 0)\n"
            "  --to CYCLE         last cycle shown (default: end of the trace)\n"
            "  --select N         select the N-th instruction event of the trace (0-based,\n"
            "                     file order): its details and dependency arrows are shown\n"
            "  --exit-after N     quit the window after N event-loop iterations (scripts, tests)\n"
            "  -h, --help         this help\n"
            "\n"
            "exit status: 0 ok, 1 bad trace or no display, 2 bad usage\n");
}

static int parse_u64(const char *opt, const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-') {
        fprintf(stderr, "tpb view: %s needs a non-negative integer\n", opt);
        return -1;
    }
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max) {
        fprintf(stderr, "tpb view: %s: '%s' is not an integer in 0..%llu\n", opt, s, max);
        return -1;
    }
    *out = v;
    return 0;
}

static void print_summary(const viz_trace_t *t)
{
    uint64_t total = t->total_cycles ? t->total_cycles : 1, stall = 0, bytes = 0;
    printf("kernel %s  target %s  clock %.3g GHz\n", t->kernel[0] ? t->kernel : "-",
           t->target[0] ? t->target : "-", t->clock_ghz);
    printf("total_cycles %llu (%s)  instructions %u  lanes %u  semaphores %u\n",
           (unsigned long long)t->total_cycles, t->total_from_trace ? "from trace" : "from events",
           t->nev, t->nlanes, t->nctr);
    for (uint32_t i = 0; i < t->nlanes; i++) {
        const viz_lane_t *l = &t->lanes[i];
        stall += l->wait;
        bytes += l->bytes;
        printf("  %-28s events %8u  busy %5.1f%%  stall %llu cycles", l->name, l->nev,
               100.0 * (double)l->busy / (double)total, (unsigned long long)l->wait);
        if (l->kind == VIZ_LANE_DMA)
            printf("  bytes %llu", (unsigned long long)l->bytes);
        printf("\n");
    }
    printf("stall_cycles %llu  dma_bytes %llu  (lane totals %s)\n", (unsigned long long)stall,
           (unsigned long long)bytes, t->stats_used ? "from otherData.stats" : "computed from events");
    if (t->n_overlaps)
        printf("warning: %u event(s) overlap another on the same tid (drawn on extra rows)\n",
               t->n_overlaps);
}

typedef struct {
    const char *trace, *screenshot;
    bool summary;
    unsigned long long width, height, from, to, select, exit_after;
    bool has_from, has_to, has_select;
} view_args_t;

/* Returns 0 ok, 1 help printed, 2 usage error. */
static int parse_args(int argc, char **argv, view_args_t *a)
{
    memset(a, 0, sizeof *a);
    a->width = 1280;
    a->height = 720;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        unsigned long long *num = NULL, max = 0;
        bool *flag = NULL;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(o, "--summary")) {
            a->summary = true;
            continue;
        } else if (!strcmp(o, "--screenshot")) {
            if (!val) {
                fprintf(stderr, "tpb view: --screenshot needs a file name\n");
                return 2;
            }
            a->screenshot = val;
            i++;
            continue;
        } else if (!strcmp(o, "--width")) {
            num = &a->width, max = 8192;
        } else if (!strcmp(o, "--height")) {
            num = &a->height, max = 8192;
        } else if (!strcmp(o, "--from")) {
            num = &a->from, max = VIZ_MAX_CYCLE, flag = &a->has_from;
        } else if (!strcmp(o, "--to")) {
            num = &a->to, max = VIZ_MAX_CYCLE, flag = &a->has_to;
        } else if (!strcmp(o, "--select")) {
            num = &a->select, max = UINT32_MAX, flag = &a->has_select;
        } else if (!strcmp(o, "--exit-after")) {
            num = &a->exit_after, max = 1000000000ULL;
        } else if (o[0] == '-' && o[1]) {
            fprintf(stderr, "tpb view: unknown option '%s' (see tpb view --help)\n", o);
            return 2;
        } else {
            if (a->trace) {
                fprintf(stderr, "tpb view: more than one trace given ('%s', '%s')\n", a->trace, o);
                return 2;
            }
            a->trace = o;
            continue;
        }
        if (parse_u64(o, val, max, num))
            return 2;
        if (flag)
            *flag = true;
        i++;
    }
    if (!a->trace) {
        fprintf(stderr, "tpb view: no trace given\n");
        usage(stderr);
        return 2;
    }
    if (a->width < 200 || a->height < 150) {
        fprintf(stderr, "tpb view: --width/--height must be at least 200 x 150\n");
        return 2;
    }
    if (a->has_from && a->has_to && a->to <= a->from) {
        fprintf(stderr, "tpb view: --to (%llu) must be after --from (%llu)\n", a->to, a->from);
        return 2;
    }
    return 0;
}

int tpb_cmd_view(int argc, char **argv)
{
    view_args_t a;
    int prc = parse_args(argc, argv, &a);
    if (prc)
        return prc == 1 ? 0 : 2;
    viz_trace_t t;
    tpb_err_t err = { { 0 } };
    if (viz_trace_load(a.trace, &t, &err)) {
        fprintf(stderr, "tpb view: %s\n", err.msg);
        viz_trace_free(&t);
        return 1;
    }
    int rc = 0;
    if (a.has_select && a.select >= t.nev) {
        fprintf(stderr, "tpb view: --select %llu: the trace has %u instruction events\n", a.select,
                t.nev);
        viz_trace_free(&t);
        return 2;
    }
    double from = a.has_from ? (double)a.from : 0;
    double to = a.has_to ? (double)a.to
                         : (double)(t.total_cycles > t.last_cycle ? t.total_cycles : t.last_cycle);
    if (!(to > from))
        to = from + 1;
    int64_t sel = a.has_select ? (int64_t)a.select : -1;
    (void)sel;
    if (a.summary) {
        print_summary(&t);
    } else if (a.screenshot) {
#ifdef TPB_WITH_VIEWER
        if (tpb_sdl_load(&err) != 0) {
            fprintf(stderr, "tpb view: %s\n", err.msg);
            rc = 1;
        } else if (viz_render_screenshot(&t, (int)a.width, (int)a.height, from, to, sel, a.screenshot,
                                  &err)) {
            fprintf(stderr, "tpb view: %s\n", err.msg);
            rc = 1;
        }
#else
        fprintf(stderr, "tpb view: built without the viewer (TPB_WITH_VIEWER=OFF)\n");
        rc = 1;
#endif
    } else {
#ifdef TPB_WITH_VIEWER
        viz_app_opts_t o = { (int)a.width, (int)a.height, from, to, sel, (long)a.exit_after };
        if (tpb_sdl_load(&err) != 0) {
            fprintf(stderr, "tpb view: %s\n", err.msg);
            rc = 1;
        } else if (viz_app_run(&t, &o, &err)) {
            fprintf(stderr, "tpb view: %s (use --screenshot FILE without a display)\n", err.msg);
            rc = 1;
        }
#else
        fprintf(stderr, "tpb view: built without the viewer (TPB_WITH_VIEWER=OFF); "
                        "--summary still works\n");
        rc = 1;
#endif
    }
    viz_trace_free(&t);
    return rc;
}
