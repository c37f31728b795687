/* The malloc heap reserve (common/hugepage.c tpb_heap_reserve,
 * tpb_heap_trim) and `tpb compile`'s use of it.  main() takes the reserve
 * before cmocka allocates anything: it only works while malloc has no heap
 * yet. */
#define _GNU_SOURCE /* sbrk */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "hugepage.h"

/* The sanitizers bring their own malloc: no glibc heap to reserve. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#if defined(__GLIBC__) && defined(__linux__) && !defined(UNDER_ASAN) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#define RESERVE_EXPECTED 1
#endif

typedef struct {
    bool reserved;   /* what tpb_heap_reserve returned in main() */
    char *brk_before; /* the break before it */
    char *brk_after; /* the break right after it */
} heap_state_t;

/* The small-page head main() asks for. */
#define TEST_HEAD ((size_t)256 << 10)

#ifdef RESERVE_EXPECTED
/* Whether transparent huge pages can back a madvised range here. */
static bool thp_usable(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128] = "";
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = 0;
        fclose(f);
    }
    return strstr(line, "[always]") || strstr(line, "[madvise]");
}

/* AnonHugePages of the mappings named [heap] in /proc/self/smaps, KiB. */
static unsigned long heap_huge_kib(void)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    assert_non_null(f);
    char line[512];
    bool in_heap = false;
    unsigned long sum = 0, kib, lo, hi;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2)   /* a mapping's first line */
            in_heap = strstr(line, "[heap]") != NULL;
        if (in_heap && sscanf(line, "AnonHugePages: %lu kB", &kib) == 1)
            sum += kib;
    }
    fclose(f);
    return sum;
}
#endif

#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
/* How many of the n pages from p are resident. */
static size_t resident_pages(uintptr_t p, size_t n)
{
    unsigned char v[64];
    assert_true(n <= sizeof v);
    assert_int_equal(mincore((void *)p, n * 4096, v), 0);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += v[i] & 1;
    return k;
}

/* Kept out of line: its frame is the one tpb_stack_prefault works below. */
static __attribute__((noinline)) void prefault_from_here(size_t *before, size_t *after)
{
    uintptr_t top = (uintptr_t)__builtin_frame_address(0) & ~(uintptr_t)4095;
    uintptr_t lo = top - TPB_STACK_PREFAULT;
    size_t n = TPB_STACK_PREFAULT / 4096;
    *before = resident_pages(lo, n);
    tpb_stack_prefault(TPB_STACK_PREFAULT);
    *after = resident_pages(lo, n);
}
#endif

/* tpb_stack_prefault makes the whole range below the caller's frame
 * resident in one call (run first: the pages deep below are untouched in a
 * fresh test process, so none is resident before). */
static void test_stack_prefault(void **state)
{
    (void)state;
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    long ps = sysconf(_SC_PAGESIZE);
    char *probe = mmap(NULL, (size_t)ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(probe != MAP_FAILED);
    int supported = madvise(probe, (size_t)ps, MADV_POPULATE_WRITE) == 0;
    munmap(probe, (size_t)ps);
    if (!supported || ps != 4096)
        skip();   /* a kernel before 5.14 */
    size_t before, after;
    prefault_from_here(&before, &after);
    assert_true(before < TPB_STACK_PREFAULT / 4096 / 2);
    assert_int_equal(after, TPB_STACK_PREFAULT / 4096);
#else
    tpb_stack_prefault(TPB_STACK_PREFAULT);   /* nothing to see, must not fail */
#endif
}

/* The reserve is taken on a fresh process, and a second call is too late. */
static void test_reserve_taken_once(void **state)
{
    const heap_state_t *hs = *state;
#ifdef RESERVE_EXPECTED
    assert_true(hs->reserved);
    /* the heap grew by the whole reserve at once */
    assert_true(mallinfo2().arena >= TPB_HEAP_RESERVE);
    assert_false(tpb_heap_reserve(TPB_HEAP_RESERVE, 0));
#else
    assert_false(hs->reserved);
#endif
}

#ifdef RESERVE_EXPECTED
/* The [heap] mappings of /proc/self/smaps in address order: up to `max`
 * of (start, end, whether VmFlags has "hg" (MADV_HUGEPAGE)). */
static int heap_vmas(uintptr_t lo[], uintptr_t hi[], bool hg[], int max)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    assert_non_null(f);
    char line[512];
    int n = 0;
    bool in_heap = false;
    unsigned long a, b;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%lx-%lx", &a, &b) == 2) {   /* a mapping's first line */
            in_heap = strstr(line, "[heap]") != NULL && n < max;
            if (in_heap) {
                lo[n] = a;
                hi[n] = b;
                hg[n++] = false;
            }
        } else if (in_heap && !strncmp(line, "VmFlags:", 8)) {
            hg[n - 1] = strstr(line, " hg") != NULL;
        }
    }
    fclose(f);
    return n;
}
#endif

/* The heap starts with the small-page head main() asked for: a mapping of
 * its own, not advised for huge pages, that ends at a 2 MiB boundary,
 * where the advised part (the reserve's size) begins. */
static void test_small_head_before_huge(void **state)
{
    const heap_state_t *hs = *state;
#ifdef RESERVE_EXPECTED
    if (!hs->reserved)
        skip();
    uintptr_t lo[8], hi[8];
    bool hg[8];
    int n = heap_vmas(lo, hi, hg, 8);
    assert_true(n >= 2);
    assert_false(hg[0]);
    assert_int_equal(hi[0] & (((uintptr_t)2 << 20) - 1), 0);
    assert_true(hi[0] - lo[0] >= TEST_HEAD);
    assert_true(hi[0] - (uintptr_t)hs->brk_before < TEST_HEAD + ((uintptr_t)2 << 20));
    assert_true(hg[1]);
    assert_int_equal(lo[1], hi[0]);
    assert_true(hi[1] - lo[1] >= TPB_HEAP_RESERVE);
#else
    (void)hs;
    skip();
#endif
}

/* Small blocks written across the heap's first 1.5 MiB land on a huge
 * page: the first 2 MiB range above the heap's start is left whole. */
static void test_small_blocks_on_huge_pages(void **state)
{
    (void)state;
#ifdef RESERVE_EXPECTED
    if (!thp_usable())
        skip();
    enum { N = 1536 * 1024 / 64 };
    char **b = malloc(N * sizeof *b);
    assert_non_null(b);
    for (int i = 0; i < N; i++) {
        b[i] = malloc(48);
        assert_non_null(b[i]);
        memset(b[i], i & 0xff, 48);
    }
    unsigned long kib = heap_huge_kib();
    for (int i = 0; i < N; i++)
        free(b[i]);
    free(b);
    assert_true(kib >= 2048);
#else
    skip();
#endif
}

/* Once the reserve is made, a growing array below TPB_ARRAY_MAP_MIN
 * (tpb_array_grow: realloc) lies in the heap, where its pages are the
 * heap's huge ones, even past glibc's own 128 KiB mmap threshold; from
 * TPB_ARRAY_MAP_MIN on it is a mapping of its own, outside the heap. */
static void test_mid_blocks_in_heap(void **state)
{
    const heap_state_t *hs = *state;
#ifdef RESERVE_EXPECTED
    if (!hs->reserved)
        skip();
    /* more than the reserve and whatever the earlier tests freed: the heap
     * has to grow for some (where glibc would map a block past its own
     * mmap threshold instead) */
    enum { N = 40 };
    size_t mid = TPB_ARRAY_MAP_MIN / 2 + 4096;
    assert_true(mid > ((size_t)128 << 10) && N * mid > 2 * TPB_HEAP_RESERVE);
    char *a[N];
    for (int i = 0; i < N; i++) {
        a[i] = tpb_array_grow(NULL, 0, mid);
        assert_non_null(a[i]);
        memset(a[i], i, mid);
    }
    char *lo = hs->brk_after - 2 * TPB_HEAP_RESERVE, *top = sbrk(0);   /* about where the heap starts */
    for (int i = 0; i < N; i++)
        assert_true(a[i] >= lo && a[i] + mid <= top);
    char *big = tpb_array_grow(a[0], mid, TPB_ARRAY_MAP_MIN);   /* becomes a mapping */
    assert_non_null(big);
    assert_true(big + TPB_ARRAY_MAP_MIN <= lo || big >= (char *)sbrk(0));
    assert_int_equal(big[mid - 1], 0);
    tpb_array_free(big, TPB_ARRAY_MAP_MIN);
    for (int i = 1; i < N; i++) {
        assert_int_equal(a[i][mid - 1], i);
        tpb_array_free(a[i], mid);
    }
#else
    (void)hs;
    skip();
#endif
}

/* tpb_heap_trim leaves the reserve alone, and when it does give freed
 * blocks back it keeps the free block at the heap's top. */
static void test_trim_keeps_reserve(void **state)
{
    const heap_state_t *hs = *state;
#ifdef RESERVE_EXPECTED
    if (!hs->reserved)
        skip();
    tpb_heap_trim();
    assert_true((char *)sbrk(0) >= hs->brk_after);   /* the reserve stayed */
    /* 6 MiB of blocks under a fence block, freed: they cannot join the top */
    enum { N = 6 * 1024 * 1024 / 4096 };
    void **b = malloc(N * sizeof *b);
    assert_non_null(b);
    for (int i = 0; i < N; i++) {
        b[i] = malloc(4000);
        assert_non_null(b[i]);
        memset(b[i], 1, 4000);
    }
    void *volatile fence = malloc(4000);
    assert_non_null(fence);
    for (int i = 0; i < N; i++)
        free(b[i]);
    size_t top0 = mallinfo2().keepcost;
    assert_true(top0 >= (1 << 20));
    assert_true(mallinfo2().fordblks - top0 >= ((size_t)5 << 20));
    tpb_heap_trim();
    assert_true(mallinfo2().keepcost + 65536 >= top0);   /* the top block was kept */
    free(fence);
    free(b);
#else
    (void)hs;
    skip();
#endif
}

/* Runs `tpb compile --stats` on a flat kernel of n tiles; whether its
 * statistics name the heap reserve, the KiB of freed mappings they say
 * were reused (0 without the line) into *reused and the KiB of the heap's
 * small-page head (0 without one) into *head. */
static bool compile_stats(int n, unsigned long *reused, unsigned long *head)
{
    char dir[] = "/tmp/tpb_heap_reserve_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char kf[128], out[128], cmd[512];
    snprintf(kf, sizeof kf, "%s/k.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    FILE *f = fopen(kf, "w");
    assert_non_null(f);
    fprintf(f, "{\"kernel\": \"k\", \"target\": \"trn2\", \"inputs\": [{\"name\": \"a\", \"shape\": [%d, 4], "
               "\"dtype\": \"float32\"}], \"outputs\": [{\"name\": \"out\", \"shape\": [%d, 4], "
               "\"dtype\": \"float32\"}], \"body\": [", n, n);
    for (int i = 0; i < n; i++)
        fprintf(f, "{\"op\": \"tile\", \"name\": \"t%d\", \"shape\": [1, 4], \"dtype\": \"float32\"}, "
                   "{\"op\": \"load\", \"dst\": \"t%d\", \"src\": \"a[%d:%d, :]\"}, "
                   "{\"op\": \"store\", \"dst\": \"out[%d:%d, :]\", \"src\": \"t%d\"}%s",
                i, i, i, i + 1, i, i + 1, i, i + 1 < n ? ", " : "");
    fprintf(f, "]}\n");
    assert_int_equal(fclose(f), 0);
    snprintf(cmd, sizeof cmd, "%s/bin/tpb compile %s -o %s --stats", TPB_BINARY_DIR, kf, out);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[256];
    bool seen = false, peak = false;
    *reused = 0;
    *head = 0;
    while (fgets(line, sizeof line, p)) {
        seen |= strncmp(line, "heap reserve ", 13) == 0;
        unsigned long kib;
        if (sscanf(line, "heap reserve %lu KiB in huge pages after %lu KiB in 4 KiB pages", &kib,
                   head) == 2)
            assert_int_equal(kib, TPB_HEAP_RESERVE >> 10);
        if (sscanf(line, "freed mappings reused %lu KiB", reused) == 1)
            assert_true(*reused > 0);
        peak |= strncmp(line, "peak memory ", 12) == 0;
    }
    assert_int_equal(pclose(p), 0);
    assert_true(peak);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    return seen;
}

static bool compile_reports_reserve(int n)
{
    unsigned long reused, head;
    return compile_stats(n, &reused, &head);
}

/* A compile whose JSON tree and op array are mappings hands their pages
 * to the later passes (common/spare.h): 3 000 tiles' tree (~3.8 MB with
 * the text) alone is two 2 MiB pages; a 4-tile one has no mapping to
 * hand on, and says nothing.  Sanitizer builds too: the spares do not
 * go through malloc. */
static void test_compile_reuses_freed_mappings(void **state)
{
    (void)state;
    unsigned long reused, head;
    (void)compile_stats(4, &reused, &head);
    assert_int_equal(reused, 0);
    (void)compile_stats(3000, &reused, &head);
#ifdef __linux__
    assert_true(reused >= 4096);
#endif
}

/* Every compile takes the reserve, a small kernel text (12 ops) as well as
 * a large one (~110 KB); where the reserve cannot be made (ASan's malloc)
 * neither reports it. */
static void test_compile_takes_reserve(void **state)
{
    (void)state;
#ifdef RESERVE_EXPECTED
    assert_true(compile_reports_reserve(4));
    assert_true(compile_reports_reserve(600));
#else
    assert_false(compile_reports_reserve(4));
    assert_false(compile_reports_reserve(600));
#endif
}

/* A small kernel text (4 tiles, ~0.7 KB) gets the small-page head, a
 * large one (600 tiles, ~110 KB) none; without the reserve, neither. */
static void test_compile_small_head(void **state)
{
    (void)state;
    unsigned long reused, head;
    bool r = compile_stats(4, &reused, &head);
#ifdef RESERVE_EXPECTED
    assert_true(r);
    assert_int_equal(head, TPB_HEAP_SMALL_HEAD >> 10);
#else
    assert_false(r);
    assert_int_equal(head, 0);
#endif
    r = compile_stats(600, &reused, &head);
    assert_int_equal(head, 0);
    (void)r;
}

int main(void)
{
    static heap_state_t hs;
    hs.brk_before = sbrk(0);
    hs.reserved = tpb_heap_reserve(TPB_HEAP_RESERVE, TEST_HEAD);
    hs.brk_after = sbrk(0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stack_prefault),
        cmocka_unit_test_prestate(test_reserve_taken_once, &hs),
        cmocka_unit_test_prestate(test_small_head_before_huge, &hs),
        cmocka_unit_test_prestate(test_small_blocks_on_huge_pages, &hs),
        cmocka_unit_test_prestate(test_mid_blocks_in_heap, &hs),
        cmocka_unit_test_prestate(test_trim_keeps_reserve, &hs),
        cmocka_unit_test(test_compile_reuses_freed_mappings),
        cmocka_unit_test(test_compile_takes_reserve),
        cmocka_unit_test(test_compile_small_head),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
