/* alloc_order.h - the allocator's rotation groups ordered by declaration
 * path without a strcmp per compared pair (encoder/alloc.c rot_init). */
#ifndef TPB_ALLOC_ORDER_H
#define TPB_ALLOC_ORDER_H

/* perm[0..n) := the indices 0..n-1 ordered by strcmp of s[i], equal strings
 * in index order (a stable sort by string).  The distinct strings are ranked
 * once (hashed, then sorted among themselves), so a few distinct strings over
 * many indices cost O(n) string hashes instead of O(n log n) strcmp calls.
 * Returns 0, or -1 when out of memory (perm unspecified). */
int enc_stable_order_by_str(const char *const *s, int n, int *perm);

#endif
