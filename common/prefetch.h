/* prefetch.h - a hint to start loading a cache line that a walk will read
 * a few iterations later.  Walks over the unrolled program's instructions
 * by an index list (an engine's debug entries) jump 152-byte records apart
 * in no pattern the hardware prefetcher follows, so each record is a
 * cache miss the walk waits for; asking for it a few entries ahead
 * overlaps those waits.  A hint only: no effect on any result, and nothing
 * on a compiler without the builtin. */
#ifndef TPB_PREFETCH_H
#define TPB_PREFETCH_H

#if defined(__GNUC__) || defined(__clang__)
#define TPB_PREFETCH(p) __builtin_prefetch((p))
#else
#define TPB_PREFETCH(p) ((void)(p))
#endif

#endif
