/* fuzz_trace: the viewer's trace reader (viz/trace_read.c).  Every input
 * ends in a trace or an error naming the file; an accepted trace is
 * internally consistent (sorted lane events, extents that cover them). */
#include <stdint.h>
#include <string.h>

#include "fuzz_util.h"
#include "trace_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 18)
        return 0;
    viz_trace_t t;
    tpb_err_t err = { { 0 } };
    memset(&t, 0, sizeof t);
    if (viz_trace_parse((const char *)data, size, "t.json", &t, &err) != 0) {
        FUZZ_CHECK(strstr(err.msg, "t.json") != NULL, "message without the file: %s", err.msg);
    } else {
        for (uint32_t i = 0; i < t.nlanes; i++) {
            const viz_lane_t *l = &t.lanes[i];
            FUZZ_CHECK(l->nev <= t.nev, "lane %u has %u of %u events", i, l->nev, t.nev);
            for (uint32_t j = 0; j < l->nev; j++) {
                FUZZ_CHECK(l->ev[j] < t.nev, "lane %u: event index %u", i, l->ev[j]);
                const viz_event_t *e = &t.ev[l->ev[j]];
                FUZZ_CHECK(e->end >= e->start && e->lane == i, "event %u", l->ev[j]);
                FUZZ_CHECK(j == 0 || t.ev[l->ev[j - 1]].start <= e->start, "lane %u unsorted", i);
            }
        }
        FUZZ_CHECK(t.nev == 0 || t.first_cycle <= t.last_cycle, "extent %llu..%llu",
                   (unsigned long long)t.first_cycle, (unsigned long long)t.last_cycle);
    }
    viz_trace_free(&t);
    return 0;
}
