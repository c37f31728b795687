/* trace_read.h - parse and validate a tpbsim trace (docs/trace-format.md)
 * into an in-memory model the viewer can index and draw.
 *
 * The reader is SDL-free so its tests run with or without the viewer.
 * All times in the model are reference-clock cycles (uint64); the trace's
 * microsecond `ts`/`dur` are only used when `start_cycle`/`end_cycle` are
 * absent. */
#ifndef TPB_VIZ_TRACE_READ_H
#define TPB_VIZ_TRACE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "isa.h"

/* Largest cycle value accepted: beyond 2^53 a double (JSON number) no longer
 * holds every integer, so such a trace cannot be exact. */
#define VIZ_MAX_CYCLE ((uint64_t)1 << 53)

/* A reference to an instruction as the trace writes it: (pid, tid, pc). */
typedef struct {
    int32_t pid, tid, pc;
    int64_t start;             /* producer's start_cycle if the trace gives it, else -1 */
} viz_ref_t;

/* Offsets into viz_trace_t.strings; 0 means "absent" (the pool starts with
 * an empty string). */
typedef uint32_t viz_str_t;

typedef struct {
    uint64_t start, end;       /* cycles, end exclusive (end >= start) */
    uint64_t issue;            /* cycles; == start when not given */
    uint64_t wait_cycles;      /* cycles spent waiting on a semaphore */
    uint64_t bytes;            /* DMA bytes (0 for instructions) */
    uint32_t lane;             /* index into viz_trace_t.lanes */
    uint32_t row;              /* sub-row inside the lane (overlaps), set by layout */
    int32_t pid, tid;
    int32_t pc;                /* -1 when absent */
    int32_t opcode;            /* -1 when absent */
    int32_t queue;             /* DMA queue, -1 when absent */
    int32_t descriptors;       /* -1 when absent */
    isa_class_t cls;           /* from `cat`; ISA_CLASS_COUNT = unknown */
    viz_str_t name, fields, wait, src, op_name, cat;
    viz_str_t buf;               /* rotating buffers of its operands ("t#2/4"), 0: none */
    int32_t iter1;               /* args.iter + 1: earlier runs of this instruction (rolled
                                    loops) plus one; 0: none */
    uint32_t waited_off, n_waited; /* into viz_trace_t.refs */
    viz_ref_t issuer;          /* DMA issuer; pid 0 when absent */
} viz_event_t;

typedef enum { VIZ_LANE_ENGINE, VIZ_LANE_DMA, VIZ_LANE_OTHER } viz_lane_kind_t;

typedef struct {
    int32_t pid;
    int32_t tid;               /* engine tid, or first slot tid of a DMA queue */
    int32_t queue;             /* DMA queue, -1 otherwise */
    viz_lane_kind_t kind;
    int64_t sort_index;        /* thread_sort_index, or derived */
    char name[96];             /* "core0 PE", "core0 q3 qSyncIO0" */
    uint32_t *ev;              /* event indices sorted by start cycle */
    uint32_t nev;
    uint64_t *max_end;         /* max_end[i] = max end of ev[0..i] (for search) */
    uint32_t nrows;            /* sub-rows (>1 only when events overlap) */
    uint64_t busy;             /* cycles covered by at least one event */
    uint64_t wait;             /* semaphore-wait cycles of its events */
    uint64_t bytes;            /* DMA bytes moved */
    bool from_stats;           /* busy/wait/bytes taken from otherData.stats */
} viz_lane_t;

typedef struct {
    uint64_t cycle;
    int64_t value;
} viz_sample_t;

typedef struct {
    int32_t pid;
    char name[96];             /* "sem S5 qSyncIO0" */
    viz_sample_t *s;           /* sorted by cycle */
    uint32_t n;
    int64_t vmin, vmax;
} viz_counter_t;

/* Lane-naming metadata events (process_name / thread_name / *_sort_index). */
typedef struct {
    int32_t pid, tid;          /* tid 0 for a process */
    char name[64];
    int64_t sort_index;
    bool has_sort;
} viz_meta_t;

typedef struct {
    /* otherData (defaults when absent) */
    char kernel[96], target[32];
    double clock_ghz;          /* reference clock; 1.0 when absent */
    bool clock_from_trace;
    uint64_t total_cycles;     /* otherData.stats / otherData / computed */
    bool total_from_trace;     /* total_cycles came from otherData */
    int num_cores;

    viz_event_t *ev;
    uint32_t nev;
    viz_lane_t *lanes;         /* sorted for display: by core, engines, DMA */
    uint32_t nlanes;
    viz_counter_t *ctr;
    uint32_t nctr;
    viz_meta_t *threads, *procs;
    uint32_t nthreads, nprocs;
    viz_ref_t *refs;           /* waited_for lists */
    uint32_t nrefs;
    char *strings;
    size_t nstrings;           /* bytes used */
    size_t cap_strings;

    uint64_t first_cycle, last_cycle; /* extent of all events and samples */
    uint32_t n_overlaps;       /* events overlapping a predecessor on one tid */
    bool stats_used;           /* some lane totals came from otherData.stats */
} viz_trace_t;

/* Load `path`; a directory is taken as a run directory holding trace.json.
 * On error fills err with "<file>: <where>: <what>" and returns -1 (the
 * trace is left empty and may be freed). */
int viz_trace_load(const char *path, viz_trace_t *t, tpb_err_t *err);

/* Parse a trace held in memory; `name` is used in messages. */
int viz_trace_parse(const char *json, size_t len, const char *name,
                    viz_trace_t *t, tpb_err_t *err);

void viz_trace_free(viz_trace_t *t);

/* String of the pool ("" when absent). */
const char *viz_str(const viz_trace_t *t, viz_str_t s);

/* The event a reference names: the execution of (pid, tid, pc) that starts
 * at r.start when the trace gives it, else the latest one starting at or
 * before cycle `before` (a pc runs once per loop iteration); -1 if none. */
int64_t viz_trace_find_ref(const viz_trace_t *t, viz_ref_t r, uint64_t before);

/* Class of a `cat` string, ISA_CLASS_COUNT when unknown. */
isa_class_t viz_class_of(const char *cat);

/* TPB engine name of an engine tid (1..5) or NULL. */
const char *viz_engine_of_tid(int32_t tid);

/* Microseconds of a cycle count at the trace's reference clock. */
double viz_cycles_to_us(const viz_trace_t *t, double cycles);

#endif
