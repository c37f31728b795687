/* builder_place.c - a tile at a fixed address (the kernel format's "addr",
 * docs/kernel-format.md "Fixed placement").
 *
 * The kernel names the byte offset in every partition where the tile
 * lives; the allocator then places it there (alloc.c), overlapping other
 * fixed tiles if the kernel says so, and places the other tiles around
 * it.  Checked here, once per declaration: the offset is a whole number
 * of elements, the tile ends inside the memory's partition, and a PSUM
 * tile keeps to the bank rule every PSUM tile follows (at most 2 KiB:
 * inside one 2 KiB bank; larger: from a bank boundary). */
#include "backend.h"
#include "builder.h"

#include <inttypes.h>

#define PSUM_BANK 2048u

int enc_tile_place(enc_builder_t *b, int id, int64_t addr)
{
    if (b->failed || id < 0 || id >= b->k->ntensors)
        return -1;
    tir_tensor_t *t = &b->k->tensors[id];
    bool psum = t->kind == TIR_T_PSUM;
    const char *mem = psum ? "PSUM" : "SBUF";
    const char *sep = b->path[0] ? ": " : "";
    if (t->kind != TIR_T_SBUF && !psum)
        return enc_fail(b, "%s%stensor '%s': field 'addr': only an SBUF or PSUM tile has a "
                           "fixed address", b->path, sep, t->name);
    uint64_t size = isa_dtype_size(t->dtype);
    uint64_t bytes = enc_tensor_bytes(t) / (uint64_t)t->shape[0];
    uint64_t cap = psum ? b->target->psum_partition_bytes : b->target->sbuf_partition_bytes;
    if (addr < 0)
        return enc_fail(b, "%s%stile '%s': field 'addr': %" PRId64 " is negative", b->path,
                        sep, t->name, addr);
    uint64_t a = (uint64_t)addr;
    if (a % size)
        return enc_fail(b, "%s%stile '%s': field 'addr': %" PRIu64 " is not a multiple of "
                           "the %s element size (%" PRIu64 " bytes)", b->path, sep, t->name, a,
                        isa_dtype_name(t->dtype), size);
    if (a > cap || bytes > cap - a)
        return enc_fail(b, "%s%stile '%s': field 'addr': bytes %" PRIu64 "..%" PRIu64 " per "
                           "partition are past the %s partition size (%" PRIu64 " bytes on %s)",
                        b->path, sep, t->name, a, a + bytes, mem, cap, b->target->name);
    if (psum && bytes <= PSUM_BANK && a % PSUM_BANK + bytes > PSUM_BANK)
        return enc_fail(b, "%s%stile '%s': field 'addr': bytes %" PRIu64 "..%" PRIu64 " cross "
                           "a 2 KiB PSUM bank boundary (a PSUM tile of at most 2 KiB per "
                           "partition lies inside one bank)", b->path, sep, t->name, a,
                        a + bytes);
    if (psum && bytes > PSUM_BANK && a % PSUM_BANK)
        return enc_fail(b, "%s%stile '%s': field 'addr': %" PRIu64 " is not on a 2 KiB PSUM "
                           "bank boundary (a PSUM tile of more than 2 KiB per partition "
                           "starts on one)", b->path, sep, t->name, a);
    t->fixed1 = a + 1;
    return 0;
}
