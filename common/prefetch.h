/* prefetch.h - a hint to start loading a cache line that a walk will read
 * a few iterations later.  Used where a walk's records are larger than the
 * caches hold and met in an order the hardware prefetcher does not follow
 * (the compiler's debug entries reach 152-byte instructions through an
 * index list) or are read late in each step (the simulator's decoded
 * instructions): asking for one a few entries ahead overlaps the waits.
 * A hint only: no effect on any result, and nothing on a compiler without
 * the builtin. */
#ifndef TPB_PREFETCH_H
#define TPB_PREFETCH_H

#if defined(__GNUC__) || defined(__clang__)
#define TPB_PREFETCH(p) __builtin_prefetch((p))
#else
#define TPB_PREFETCH(p) ((void)(p))
#endif

#endif
