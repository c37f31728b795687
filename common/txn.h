/* txn.h - the outputs of one run as one transaction (docs/reliability.md).
 *
 * A command stages every output it will write (npy files, stats, trace):
 * tpb_txn_stage() checks the final path (its directory exists and is
 * writable, it is not a directory) and returns a staging path
 * "<final>.tpbtmp.<pid>" beside it, which the command's writers fill.
 * tpb_txn_commit() then writes a journal (".tpbtxn.<pid>" in each output
 * directory, the staged/final pairs), renames every staged file over its
 * final path and removes the journals.  tpb_txn_abort() removes every
 * staged file: on any failure nothing of the run is left behind and the
 * previous outputs are untouched.
 *
 * A process killed part-way leaves staged files, and after the journal
 * was written possibly a half-renamed set.  tpb_txn_recover_dir() (called
 * for each output directory by tpb_txn_stage, and by the compiler for the
 * directory beside which it builds) finishes the renames of a dead
 * process's journal (so the set is the new one, never mixed), then deletes
 * every "*.tpbtmp.<pid>" file or directory and "*.tpbold.<pid>" directory
 * whose process is gone.  Live processes' temporaries are never touched. */
#ifndef TPB_TXN_H
#define TPB_TXN_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

typedef struct {
    int n, cap;
    char **final;                   /* the paths the user asked for */
    char **stage;                   /* <final>.tpbtmp.<pid> */
    bool durable;                   /* fsync the journal (the writers of staged files
                                       fsync those themselves when asked: sim --fsync) */
} tpb_txn_t;

void tpb_txn_init(tpb_txn_t *t);
/* Stage `final`; *stage points into t (valid until commit/abort). */
int tpb_txn_stage(tpb_txn_t *t, const char *final, const char **stage, tpb_err_t *err);
/* Rename every staged file into place (all staged files must exist). On
 * failure every staged file not yet renamed is removed.  Frees t. */
int tpb_txn_commit(tpb_txn_t *t, tpb_err_t *err);
/* Remove every staged file; frees t.  Safe on an empty transaction. */
void tpb_txn_abort(tpb_txn_t *t);
/* In err->msg, replace each staging path by the final path it stands for,
 * so messages name what the user gave. */
void tpb_txn_fix_msg(const tpb_txn_t *t, tpb_err_t *err);

/* Name of a temporary beside `path` for this process:
 * "<path>.<kind>.<pid>", kind "tpbtmp" or "tpbold". */
int tpb_tmp_name(char *out, size_t n, const char *path, const char *kind, tpb_err_t *err);
/* Clean up after dead processes in `dir` (see above).  Returns the number
 * of entries removed or rolled forward. */
int tpb_txn_recover_dir(const char *dir);
/* The directory part of a path ("." for a bare name). */
void tpb_dirname(const char *path, char *out, size_t n);
/* Is process pid gone (kill(pid, 0) fails with ESRCH)? */
bool tpb_pid_dead(long pid);

#endif
