#include "txn.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"

#define TXN_STAGE "tpbtmp"
#define TXN_OLD "tpbold"
#define TXN_JOURNAL ".tpbtxn."

bool tpb_pid_dead(long pid)
{
    return pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

void tpb_dirname(const char *path, char *out, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, n, ".");
    else if (slash == path)
        snprintf(out, n, "/");
    else
        snprintf(out, n, "%.*s", (int)(slash - path), path);
}

int tpb_tmp_name(char *out, size_t n, const char *path, const char *kind, tpb_err_t *err)
{
    int w = snprintf(out, n, "%s.%s.%ld", path, kind, (long)getpid());
    if (w < 0 || (size_t)w >= n)
        return tpb_errf(err, "%s: path too long", path);
    return 0;
}

void tpb_txn_init(tpb_txn_t *t)
{
    memset(t, 0, sizeof *t);
}

static void txn_free(tpb_txn_t *t)
{
    for (int i = 0; i < t->n; i++) {
        free(t->final[i]);
        free(t->stage[i]);
    }
    free(t->final);
    free(t->stage);
    tpb_txn_init(t);
}

static bool dir_listed(const tpb_txn_t *t, int upto, const char *dir)
{
    char d[4096];
    for (int i = 0; i < upto; i++) {
        tpb_dirname(t->final[i], d, sizeof d);
        if (!strcmp(d, dir))
            return true;
    }
    return false;
}

int tpb_txn_stage(tpb_txn_t *t, const char *final, const char **stage, tpb_err_t *err)
{
    char dir[4096], st[4200];
    if (!final[0] || strchr(final, '\n'))
        return tpb_errf(err, "'%s': not a usable output path", final);
    size_t len = strlen(final);
    if (final[len - 1] == '/' || fio_is_dir(final))
        return tpb_errf(err, "%s: is a directory, expected a file name", final);
    tpb_dirname(final, dir, sizeof dir);
    if (!fio_is_dir(dir))
        return tpb_errf(err, "%s: directory %s does not exist", final, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return tpb_errf(err, "%s: cannot write in directory %s: %s", final, dir, strerror(errno));
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->final[i], final))
            return tpb_errf(err, "%s: named for two outputs of one run", final);
    if (tpb_tmp_name(st, sizeof st, final, TXN_STAGE, err))
        return -1;
    if (!dir_listed(t, t->n, dir))
        tpb_txn_recover_dir(dir);
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 8;
        char **f = realloc(t->final, (size_t)cap * sizeof *f);
        if (f)
            t->final = f;
        char **s = realloc(t->stage, (size_t)cap * sizeof *s);
        if (s)
            t->stage = s;
        if (!f || !s)
            return tpb_errf(err, "%s: out of memory", final);
        t->cap = cap;
    }
    t->final[t->n] = strdup(final);
    t->stage[t->n] = strdup(st);
    if (!t->final[t->n] || !t->stage[t->n]) {
        free(t->final[t->n]);
        free(t->stage[t->n]);
        return tpb_errf(err, "%s: out of memory", final);
    }
    unlink(st);
    *stage = t->stage[t->n++];
    return 0;
}

void tpb_txn_abort(tpb_txn_t *t)
{
    for (int i = 0; i < t->n; i++)
        unlink(t->stage[i]);
    txn_free(t);
}

static int journal_path(char *out, size_t n, const char *dir, long pid)
{
    int w = snprintf(out, n, "%s/" TXN_JOURNAL "%ld", dir, pid);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* Write the journal into every output directory (fsync'ed). */
static int write_journals(const tpb_txn_t *t, tpb_err_t *err)
{
    size_t cap = 16;
    for (int i = 0; i < t->n; i++)
        cap += strlen(t->stage[i]) + strlen(t->final[i]) + 2;
    char *text = malloc(cap), *p = text;
    if (!text)
        return tpb_errf(err, "out of memory");
    p += sprintf(p, "tpbtxn 1\n");
    for (int i = 0; i < t->n; i++)
        p += sprintf(p, "%s\n%s\n", t->stage[i], t->final[i]);
    int rc = 0;
    for (int i = 0; i < t->n && !rc; i++) {
        char dir[4096], jp[4200];
        tpb_dirname(t->final[i], dir, sizeof dir);
        if (dir_listed(t, i, dir))
            continue;
        if (journal_path(jp, sizeof jp, dir, (long)getpid()))
            rc = tpb_errf(err, "%s: path too long", dir);
        else
            rc = fio_write_atomic_sync(jp, text, (size_t)(p - text), t->durable, err);
    }
    free(text);
    return rc;
}

static void remove_journals(const tpb_txn_t *t)
{
    for (int i = 0; i < t->n; i++) {
        char dir[4096], jp[4200];
        tpb_dirname(t->final[i], dir, sizeof dir);
        if (!dir_listed(t, i, dir) && !journal_path(jp, sizeof jp, dir, (long)getpid()))
            unlink(jp);
    }
}

int tpb_txn_commit(tpb_txn_t *t, tpb_err_t *err)
{
    for (int i = 0; i < t->n; i++) {
        struct stat st;
        if (stat(t->stage[i], &st) != 0) {
            tpb_errf(err, "%s: was not written", t->final[i]);
            tpb_txn_abort(t);
            return -1;
        }
    }
    /* one output needs no journal: its rename is atomic */
    if (t->n > 1 && write_journals(t, err)) {
        remove_journals(t);
        tpb_txn_abort(t);
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < t->n; i++) {
        if (rc) {
            unlink(t->stage[i]);
        } else if (rename(t->stage[i], t->final[i]) != 0) {
            rc = tpb_errf(err, "%s: cannot rename into place: %s", t->final[i], strerror(errno));
            unlink(t->stage[i]);
        }
    }
    remove_journals(t);
    txn_free(t);
    return rc;
}

void tpb_txn_fix_msg(const tpb_txn_t *t, tpb_err_t *err)
{
    if (!err)
        return;
    for (int i = 0; i < t->n; i++) {
        char *hit = strstr(err->msg, t->stage[i]);
        if (!hit)
            continue;
        size_t sl = strlen(t->stage[i]);
        /* also swallow a writer's own ".tpbtmp.<pid>" on the staged name */
        const char *rest = hit + sl;
        char inner[64];
        snprintf(inner, sizeof inner, "." TXN_STAGE ".%ld", (long)getpid());
        if (!strncmp(rest, inner, strlen(inner)))
            rest += strlen(inner);
        char buf[sizeof err->msg];
        snprintf(buf, sizeof buf, "%.*s%s%s", (int)(hit - err->msg), err->msg, t->final[i], rest);
        memcpy(err->msg, buf, sizeof buf);
    }
}

/* "<base>.<kind>.<digits>": the pid, or -1 when name is not of that form. */
static long tmp_pid(const char *name, const char *kind)
{
    size_t n = strlen(name), d = n;
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
        d--;
    size_t kl = strlen(kind);
    if (d == n || n - d > 10 || d < kl + 3 || name[d - 1] != '.' ||
        strncmp(name + d - 1 - kl, kind, kl) != 0 || name[d - 2 - kl] != '.')
        return -1;
    return strtol(name + d, NULL, 10);
}

/* Finish the renames listed in a dead process's journal. */
static int roll_forward(const char *jpath)
{
    uint8_t *buf;
    size_t len;
    int done = 0;
    if (fio_read_all(jpath, &buf, &len, NULL))
        return 0;
    char *save = NULL, *line = strtok_r((char *)buf, "\n", &save);
    if (line && !strcmp(line, "tpbtxn 1")) {
        for (;;) {
            char *stage = strtok_r(NULL, "\n", &save);
            char *final = strtok_r(NULL, "\n", &save);
            if (!stage || !final)
                break;
            if (fio_exists(stage) && rename(stage, final) == 0)
                done++;
        }
    }
    free(buf);
    unlink(jpath);
    return done + 1;
}

/* dir/name into p; false when it does not fit. */
static bool entry_path(char *p, size_t n, const char *dir, const char *name)
{
    int w = snprintf(p, n, "%s/%s", dir, name);
    return w >= 0 && (size_t)w < n;
}

int tpb_txn_recover_dir(const char *dir)
{
    int n = 0;
    bool temps = false;   /* pass 0 saw a name a temporary might have */
    for (int pass = 0; pass < 2 && (pass == 0 || temps); pass++) {
        DIR *d = opendir(dir);
        if (!d)
            return n;
        struct dirent *de;
        while ((de = readdir(d))) {
            /* the entry's path is built only for names of ours (the
             * directory may be a busy one such as /tmp) */
            const char *nm = de->d_name;
            if (pass == 0 && !temps)   /* else the usual directory is listed only once */
                temps = strstr(nm, TXN_STAGE) || strstr(nm, TXN_OLD);
            char p[4400];
            if (pass == 0) { /* journals first: they may name staged files */
                if (!strncmp(nm, TXN_JOURNAL, strlen(TXN_JOURNAL)) &&
                    strspn(nm + strlen(TXN_JOURNAL), "0123456789") == strlen(nm + strlen(TXN_JOURNAL)) &&
                    tpb_pid_dead(strtol(nm + strlen(TXN_JOURNAL), NULL, 10)) &&
                    entry_path(p, sizeof p, dir, nm))
                    n += roll_forward(p);
                continue;
            }
            long pid = tmp_pid(nm, TXN_STAGE);
            if (pid > 0 && tpb_pid_dead(pid)) {
                if (entry_path(p, sizeof p, dir, nm))
                    n += fio_rmtree(p) == 0;
                continue;
            }
            pid = tmp_pid(nm, TXN_OLD);
            if (pid > 0 && tpb_pid_dead(pid) && entry_path(p, sizeof p, dir, nm)) {
                /* killed between moving the old artifact directory aside
                 * and moving the new one in: put the old one back */
                char base[4400];
                snprintf(base, sizeof base, "%.*s", (int)(strlen(p) - strlen(TXN_OLD) - 2 -
                         strlen(strrchr(nm, '.') + 1)), p);
                if (!fio_exists(base) && rename(p, base) == 0)
                    n++;
                else
                    n += fio_rmtree(p) == 0;
            }
        }
        closedir(d);
    }
    return n;
}
