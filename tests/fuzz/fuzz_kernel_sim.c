/* fuzz_kernel_sim: fuzz_kernel plus the compile-and-simulate oracle
 * (tests/oracle.h, docs/reliability.md): whatever compiles must simulate
 * without an instruction field refusal. */
#define FUZZ_KERNEL_SIM 1
#include "fuzz_kernel.c"
