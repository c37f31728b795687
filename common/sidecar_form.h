/* sidecar_form.h - the two forms of an <Engine>.json sidecar's debug table
 * (docs/artifacts.md "Compact sidecars").
 *
 * A stream with at least TPB_SIDECAR_COMPACT_MIN debug entries gets a
 * compact sidecar: "debug_form": "compact" before "debug", no whitespace,
 * and in each debug entry the members that repeat what the entry before
 * it implies are left out:
 *   pc    absent: the previous entry's pc + 1 (the first entry: 0);
 *   name  absent: the same op as the previous entry: its name, and its
 *         op_index and buf (when it has them), unless given;
 *   inst  absent: equal to name;
 *   src   absent: the previous entry's src;
 *   op    absent: the previous entry's op.
 * Otherwise op_index and buf are written as in the full form.  The readers
 * built on cJSON (tpb dis, the multi-core linker) call tpb_sidecar_expand
 * right after parsing; the simulator's reader (sim/sidecar.c) applies the
 * same rules while it scans. */
#ifndef TPB_SIDECAR_FORM_H
#define TPB_SIDECAR_FORM_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#define TPB_SIDECAR_COMPACT_MIN 4096

/* The threshold in effect: TPB_SIDECAR_COMPACT_MIN, or the environment's
 * TPB_SIDECAR_COMPACT_MIN when it is a decimal number (0: always compact;
 * tests use it to write both forms of one kernel). */
long long tpb_sidecar_compact_min(void);

/* true when root declares "debug_form": "compact". */
bool tpb_sidecar_is_compact(const cJSON *root);

/* A compact sidecar (root, as parsed) becomes the full form in place: every
 * debug entry gets its pc, inst, src and op back, and "debug_form" is
 * removed.  A full-form document is left as it is.  0, or -1 when out of
 * memory. */
int tpb_sidecar_expand(cJSON *root);

#endif
