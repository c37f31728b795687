/* hugepage.h - advice for large, freshly allocated blocks. */
#ifndef TPB_HUGEPAGE_H
#define TPB_HUGEPAGE_H

#include <stdbool.h>
#include <stddef.h>

/* Ask the OS to back the pages of [p, p + len) with transparent huge pages
 * when the block is large (>= 2 MiB).  Writing a fresh block then takes a
 * page fault per 2 MiB instead of per 4 KiB, which dominates filling
 * SBUF/HBM or reading a large file on machines where faults are expensive
 * (virtual machines).  Advice only: no effect on contents, never fails,
 * ignored where unsupported; p stays ordinary malloc'ed memory.  Call it
 * before the block is first written. */
void tpb_advise_huge_pages(void *p, size_t len);

/* The same advice for a growing array that realloc() just returned (len =
 * its new capacity in bytes): the range is rounded out to whole pages, so
 * a block glibc serves from its own mapping is advised whole and stays one
 * mapping (advising only its interior would split it, and realloc could
 * then no longer move it with mremap but would copy it).  Where the block
 * shares pages with neighbours they get the (harmless) advice too. */
void tpb_advise_huge_pages_array(void *p, size_t len);

/* A growing array of 10^5+ elements (tile-IR ops and tensors, BIR blocks) in
 * its own 2 MiB-aligned mapping once it reaches TPB_ARRAY_MAP_MIN bytes,
 * smaller ones in malloc'ed memory.  The threshold is 1 MiB: every
 * mapping of its own costs at least one 2 MiB page fault, however little
 * of it is used, while in a process that made the heap reserve
 * (tpb_heap_reserve: `tpb compile`) malloc keeps blocks below the
 * threshold in that huge-paged heap, where mid-size arrays share pages.
 * 128 KiB from the twelfth to the twenty-seventh session, when every
 * array, arena chunk and stream buffer past it took a page of its own:
 * 14 fresh 2 MiB pages for a 6 000-op compile, 10 now (performance-log.md
 * "Mid-size blocks in the heap"); in a process without the reserve a block
 * of 128 KiB-1 MiB is glibc's own mapping in 4 KiB pages.  An owner that
 * sizes its block with tpb_array_room wastes nothing.  Growing it moves
 * no bytes: the mapping is extended in place where the address space
 * after it is free, else its pages are moved (mremap) to a new 2 MiB-aligned mapping, which keeps the
 * huge pages whole -- realloc's move shifted the offset within 2 MiB, split
 * them, and they had to be rebuilt by copying (MADV_COLLAPSE, no longer
 * used).
 * old_bytes: the capacity p was obtained with (0 for NULL); new_bytes >=
 * old_bytes (arrays only grow: a shrink below TPB_ARRAY_MAP_MIN would hand
 * a mapping to realloc); returns the new
 * block or NULL when out of memory (p then stays valid).  Free it with
 * tpb_array_free(p, its capacity in bytes), never free(): which allocator
 * holds a block follows from its capacity alone. */
#define TPB_ARRAY_MAP_MIN ((size_t)1 << 20)
void *tpb_array_grow(void *p, size_t old_bytes, size_t new_bytes);
void tpb_array_free(void *p, size_t bytes);
/* A new zero-filled block of `bytes` (at least 1) for an array whose size is
 * known up front: a fresh mapping in huge pages from TPB_ARRAY_MAP_MIN on,
 * else calloc'ed; NULL when out of memory.  Free with tpb_array_free(p,
 * bytes). */
void *tpb_array_zalloc(size_t bytes);
/* The common growth step of such an array of elem-byte elements with
 * capacity *cap (in elements): the block with twice the room (`first`
 * elements when *cap is 0), *cap updated; NULL when out of memory or past
 * INT_MAX elements (p and *cap unchanged).  Free with
 * tpb_array_free(p, *cap * elem). */
void *tpb_array_double(void *p, int *cap, size_t elem, int first);
/* Whether a new block, tpb_array_grow(NULL, 0, bytes), comes zero-filled
 * (a fresh anonymous mapping), so its owner need not clear it. */
bool tpb_array_fresh_zero(size_t bytes);
/* The bytes a block asked for with `bytes` really has: a mapping's size
 * rounded up to whole 2 MiB pages (which the first touch of each page
 * faults in whole), else `bytes`.  An owner that sizes its block to this
 * uses what it pays for. */
size_t tpb_array_room(size_t bytes);
/* Give back the pages of the head [p, p + upto) of a block from
 * tpb_array_grow (capacity `bytes`) whose contents are no longer needed
 * while the rest still is (the tile-IR ops behind the lowering's cursor):
 * whole 2 MiB blocks, and only when the block is a mapping of its own (a
 * malloc'ed one keeps its pages until tpb_array_free).  The range stays
 * mapped (no other allocation can land in it; tpb_array_free is unchanged)
 * and reads zeros afterwards.  done: what the previous call returned (0 at
 * first); returns the bytes from p given back so far. */
size_t tpb_array_discard_head(void *p, size_t bytes, size_t done, size_t upto);
/* The malloc heap reserve: tpb_heap_reserve's size and what tpb_heap_trim
 * keeps at the heap's top. */
#define TPB_HEAP_RESERVE ((size_t)8 << 20)
/* Give the pages of freed malloc memory back to the system (glibc:
 * malloc_trim, when at least 4 MiB of the heap is free beyond a free top
 * block of up to TPB_HEAP_RESERVE, which is kept; elsewhere nothing).  A
 * pass that frees many small blocks before the next one allocates fresh
 * pages calls it, or the freed ones stay resident and both count in the
 * peak. */
void tpb_heap_trim(void);
/* Make malloc's heap start with `bytes` (>= 2 MiB) advised for transparent
 * huge pages, for a process about to make many small blocks: glibc's heap
 * otherwise takes a page fault per 4 KiB it touches (~12 us each on a VM,
 * docs/performance-log.md "Page faults on a virtual machine"), one 2 MiB page
 * takes one.  The heap's first `small_head` bytes (rounded up to whole
 * pages, at least one, at most `bytes`) come before that range, in 4 KiB
 * pages: a process that touches less than that never clears a 2 MiB page
 * (~0.1-0.5 ms here), one that touches more pays a small fault per 4 KiB
 * of the head.  The heap then grows in steps of `bytes`, free() keeps
 * them (M_TOP_PAD, M_TRIM_THRESHOLD), and it holds the blocks below
 * TPB_ARRAY_MAP_MIN (M_MMAP_THRESHOLD).  Only before malloc has made its heap
 * (glibc on Linux): call it first thing.  Returns whether the reserve was
 * made; a process where it was not runs as before. */
bool tpb_heap_reserve(size_t bytes, size_t small_head);
/* The small-page head `tpb compile` gives a kernel text under
 * TPB_SMALL_TEXT bytes: such compiles (the examples, the golden cases)
 * touch 0.1-1 MiB of heap.  A larger text touches more than the head
 * would hold and gets a one-page head, as before
 * (docs/performance-log.md "Fixed cost of a small compile"). */
#define TPB_HEAP_SMALL_HEAD ((size_t)1 << 20)
#define TPB_SMALL_TEXT ((size_t)8 << 10)
/* The stack a compile uses: its deepest frames reach some 70 KiB below
 * main's (sched_synchronise_budget, prelink, compile_staged), 18 pages,
 * and ~100 KiB in a tpb linked with LTO (TPB_LTO: frames of functions
 * inlined across files add up).  Below the 128 KiB the kernel maps for
 * the main thread's stack at exec. */
#define TPB_STACK_PREFAULT ((size_t)104 << 10)
/* Fault in the `bytes` of stack below the caller's frame in one system
 * call (Linux MADV_POPULATE_WRITE, 5.14+) instead of one page fault per
 * 4 KiB as the frames first reach them: on a VM a fault costs ~10 us, a
 * populated page ~6 (docs/performance-log.md "Process start-up and big
 * arrays").  Advice only: contents unchanged, never fails, nothing where
 * unsupported or when the range is not all stack yet (the kernel maps the
 * main thread's first 128 KiB at exec). */
void tpb_stack_prefault(size_t bytes);

#endif
