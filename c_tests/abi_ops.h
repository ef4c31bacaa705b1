/* Drives the C ABI with a program of calls read from bytes (abi_ops.c). */
#ifndef MINIMALLOC_C_TESTS_ABI_OPS_H
#define MINIMALLOC_C_TESTS_ABI_OPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void minimalloc_abi_drive(const uint8_t *data, size_t size);

/* What the programs driven so far did: operations run, solves made and
 * those that placed, and the problems' sizes summed over operations. */
typedef struct {
  unsigned long calls, solves, solved, buffers;
} minimalloc_abi_counts;

minimalloc_abi_counts minimalloc_abi_counted(void);

#ifdef __cplusplus
}
#endif

#endif
