/* fuzz_util.h - shared by the libFuzzer harnesses (tests/fuzz/, built with
 * -DTPB_FUZZ=ON and clang; run by scripts/fuzz).  A harness aborts (which
 * libFuzzer reports as a crash, with the input saved) when an invariant
 * does not hold: a round trip that changes bytes, two parsers that
 * disagree, an error message without a location. */
#ifndef TPB_FUZZ_UTIL_H
#define TPB_FUZZ_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond, ...)                                                  \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "fuzz invariant failed: %s: ", #cond);             \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            abort();                                                           \
        }                                                                      \
    } while (0)

#endif
