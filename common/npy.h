/* npy.h - NumPy .npy read/write (format versions 1.0, 2.0, 3.0).
 *
 * Element types map to isa dtypes: <f4 fp32, <f2 fp16, |i1 <i2 <i4 int8/16/32,
 * |u1 <u2 <u4 uint8/16/32, |b1 bool (as uint8).  <f8 is accepted on read and
 * converted to fp32 (npy_array_t.converted_from_f64 is set).  bf16 and fp8
 * tensors are exchanged as float32 arrays holding exactly representable
 * values (see docs/artifacts.md); a file of NumPy void elements (np.save
 * of an ml_dtypes / tpbsim_dtypes array) is read as their raw bits: '<V2'
 * bfloat16, '|V1' the fp8 dtype of the input tensor it is read into
 * (npy_read_into; refused elsewhere).  Fortran order and big-endian data are
 * rejected with a clear message. */
#ifndef TPB_NPY_H
#define TPB_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"

#define NPY_MAX_DIMS 8
/* Documented limits (docs/reliability.md): a header is at most 1 MiB and
 * an array's data at most 64 GiB.  Sizes from a header are checked against
 * these and against the bytes actually in the file before any allocation. */
#define NPY_MAX_HEADER (1 << 20)
#define NPY_MAX_BYTES (64ULL << 30)

typedef struct {
    unsigned dtype;                 /* isa_dtype_t of data[] */
    int ndim;
    int64_t shape[NPY_MAX_DIMS];
    size_t count;                   /* number of elements */
    bool converted_from_f64;
    void *data;                     /* little-endian, C order, count * size */
} npy_array_t;

/* Parse an in-memory .npy; `name` is used in error messages. */
int npy_parse(const uint8_t *buf, size_t len, const char *name, npy_array_t *out, tpb_err_t *err);
int npy_read(const char *path, npy_array_t *out, tpb_err_t *err);
/* npy_read, except that a file holding exactly want's dtype and shape
 * (want->count elements, not float64) is read straight into dst, and a
 * float32 file of want's shape for a bf16/fp16/fp8 want is converted into
 * dst a chunk at a time (num_store_f32_array: nearest even): then out
 * describes the file's array with out->data NULL.  Otherwise, and on a file the
 * direct read cannot take, exactly npy_read (same results and errors); a
 * failed read may have overwritten dst. */
int npy_read_into(const char *path, const npy_array_t *want, void *dst, npy_array_t *out,
                  tpb_err_t *err);
/* Atomic write (temp + rename).  dtype must be one with a NumPy type
 * (not bf16/fp8: convert to fp32 first). */
int npy_write(const char *path, const npy_array_t *a, tpb_err_t *err);
/* The .npy header npy_serialize writes before the elements: at most
 * NPY_HEADER_MAX bytes into buf, its length in *len. */
#define NPY_HEADER_MAX 640
int npy_header(const npy_array_t *a, uint8_t *buf, size_t *len, tpb_err_t *err);
/* Serialise to a malloc'ed buffer. */
int npy_serialize(const npy_array_t *a, uint8_t **buf, size_t *len, tpb_err_t *err);
/* Allocate a zeroed array. */
int npy_alloc(npy_array_t *a, unsigned dtype, int ndim, const int64_t *shape, tpb_err_t *err);
void npy_free(npy_array_t *a);
/* The .npy descr string for a dtype ("<f4"), or NULL when NumPy has none. */
const char *npy_descr(unsigned dtype);

#endif
