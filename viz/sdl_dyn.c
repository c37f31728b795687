/* sdl_dyn.c - the table of sdl_dyn.h, filled with dlopen/dlsym on first
 * use.  The table is the one piece of process-wide state of the viewer:
 * a shared library is loaded once per process, whoever asks first. */
#ifdef TPB_WITH_VIEWER
#define TPB_SDL_DYN_IMPL
#include "sdl_dyn.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TPB_SDL_LIB "libSDL2-2.0.so.0"

typedef struct {
    tpb_sdl_t fn;
    void *handle;
    char why[200];
} sdl_state_t;

static sdl_state_t *state(void)
{
    static sdl_state_t st;
    return &st;
}

static int load(sdl_state_t *st)
{
    if (st->handle)
        return 0;
    if (st->why[0])
        return -1;
    void *h = dlopen(TPB_SDL_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(st->why, sizeof st->why, "cannot load %s: %s", TPB_SDL_LIB, e ? e : "?");
        return -1;
    }
    tpb_sdl_t t;
    void *sym;
#define TPB_SDL_SYM(n)                                                                    \
    sym = dlsym(h, "SDL_" #n);                                                             \
    memcpy(&t.n, &sym, sizeof sym); /* object to function pointer (POSIX) */               \
    if (!sym) {                                                                            \
        snprintf(st->why, sizeof st->why, "%s has no symbol SDL_" #n, TPB_SDL_LIB);        \
        dlclose(h);                                                                        \
        return -1;                                                                         \
    }
    TPB_SDL_FUNCS(TPB_SDL_SYM)
#undef TPB_SDL_SYM
    st->fn = t;
    st->handle = h;
    return 0;
}

int tpb_sdl_load(tpb_err_t *err)
{
    sdl_state_t *st = state();
    if (load(st) != 0)
        return tpb_errf(err, "%s", st->why);
    return 0;
}

const tpb_sdl_t *tpb_sdl(void)
{
    sdl_state_t *st = state();
    if (load(st) != 0) {
        fprintf(stderr, "tpb view: %s\n", st->why);
        exit(1);
    }
    return &st->fn;
}
#else
typedef int tpb_sdl_dyn_unused; /* ISO C: a translation unit is not empty */
#endif
