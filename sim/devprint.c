/* devprint.c - device_print output (seed 002 codegenNeuronPrintInst): after
 * a run, every tensor the tensor map marks with a print_prefix (the
 * DebugDeviceBuffer a device_print stored into) is printed with its prefix.
 * docs/simulator.md. */
#include <inttypes.h>
#include <stdio.h>

#include "numeric.h"
#include "sim_int.h"

#define DEVPRINT_MAX_VALUES 64

static void print_one(const sim_t *s, const sim_tensor_t *t, FILE *f)
{
    uint64_t n = 1;
    fprintf(f, "device_print %s (%s [", t->print_prefix, t->name);
    for (int d = 0; d < t->ndim; d++) {
        n *= (uint64_t)t->shape[d];
        fprintf(f, "%s%" PRId64, d ? ", " : "", t->shape[d]);
    }
    fprintf(f, "] %s):", isa_dtype_numpy_name(t->dtype));
    unsigned sz = isa_dtype_size(t->dtype);
    bool fl = isa_dtype_kind(t->dtype) == ISA_DK_F;
    for (uint64_t i = 0; i < n && i < DEVPRINT_MAX_VALUES; i++) {
        uint64_t a = t->addr + i * sz;
        if (a + sz > s->hbm_bytes)
            break;
        if (fl)
            fprintf(f, " %.9g", (double)num_load_f32(s->hbm + a, t->dtype));
        else
            fprintf(f, " %" PRId64, num_load_i64(s->hbm + a, t->dtype));
    }
    if (n > DEVPRINT_MAX_VALUES)
        fprintf(f, " ... (%" PRIu64 " values)", n);
    fputc('\n', f);
}

void sim_device_prints(const sim_t *s, FILE *f)
{
    for (unsigned i = 0; i < s->ntensors; i++)
        if (s->tensors[i].print_prefix)
            print_one(s, &s->tensors[i], f);
}
