/* alloc_order.h - the allocator's rotation groups ordered by declaration
 * path without a strcmp per compared pair (encoder/alloc.c rot_init). */
#ifndef TPB_ALLOC_ORDER_H
#define TPB_ALLOC_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* perm[0..n) := the indices 0..n-1 ordered by strcmp of s[i], equal strings
 * in index order (a stable sort by string).  The distinct strings are ranked
 * once (hashed, then sorted among themselves), so a few distinct strings over
 * many indices cost O(n) string hashes instead of O(n log n) strcmp calls.
 * Returns 0, or -1 when out of memory (perm unspecified). */
int enc_stable_order_by_str(const char *const *s, int n, int *perm);

/* For grouping equal strings: as enc_stable_order_by_str, but returns the
 * number of distinct strings, and when every string is distinct (n) skips
 * the sort and leaves perm the identity (no two indices group together, so
 * their order carries nothing).  -1 when out of memory.  scratch: n ints
 * the call may use (the caller's memory it will touch anyway), or NULL to
 * allocate them. */
int enc_group_by_str(const char *const *s, int n, int *perm, int *scratch);

/* qsort(base, n, size, cmp) unless base is already in cmp's order (one
 * pass of n - 1 compares); true when it sorted.  Gives qsort's result
 * whenever cmp is a total order on the elements (no two compare equal
 * unless interchangeable).  keyof, when not NULL, gives each element an
 * integer key whose order is cmp's (false: out of range): the sort is then
 * enc_sort_by_u64's, stable like glibc's merging qsort, so the order is
 * the same, and qsort remains the fallback for a key out of range or
 * short memory. */
bool enc_sort_unless_sorted(void *base, size_t n, size_t size,
                            int (*cmp)(const void *, const void *),
                            bool (*keyof)(uint64_t *key, const void *elem));

/* Sort base (n elements of `size` bytes) by keys[i], element i's key,
 * keeping equal keys in their order (stable): a least-significant-digit
 * radix sort over the keys' significant bits, O(n) per 11 bits, against
 * qsort's n log n calls of a comparator (the allocator's orders by first
 * and last use are integer keys; spilling re-sorts them once per victim).
 * keys is left in the sorted order.  Returns 0, or -1 when out of memory
 * (base and keys unchanged). */
int enc_sort_by_u64(void *base, size_t n, size_t size, uint64_t *keys);

#endif
