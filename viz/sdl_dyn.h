/* sdl_dyn.h - SDL2 loaded with dlopen when the viewer first needs it.
 *
 * Linking SDL2 made every `tpb` command (tpb sim, tpb compile, ...) load
 * it and the ~50 libraries it depends on (X11, Wayland, PulseAudio, ...):
 * about 25 ms of process start.  The viewer's sources include this header
 * after <SDL.h>: each SDL function they call becomes a call through a
 * table filled from libSDL2-2.0.so.0 on first use (sdl_dyn.c), so only
 * `tpb view` (and the viewer tests) load SDL2.  Add a function to
 * TPB_SDL_FUNCS and to the #define list below before calling it. */
#ifndef TPB_VIZ_SDL_DYN_H
#define TPB_VIZ_SDL_DYN_H

#include <SDL.h>

#include "diag.h"

#define TPB_SDL_FUNCS(X) \
    X(CreateRGBSurfaceWithFormat) X(CreateRenderer) X(CreateSoftwareRenderer) \
    X(CreateWindow) X(DestroyRenderer) X(DestroyWindow) X(FreeSurface) \
    X(GetCurrentVideoDriver) X(GetError) X(GetModState) X(GetRGB) \
    X(GetRendererOutputSize) X(GetTicks64) X(Init) X(LockSurface) X(PollEvent) X(Quit) \
    X(RenderDrawLine) X(RenderDrawRect) X(RenderFillRect) X(RenderFillRects) \
    X(RenderPresent) X(RenderSetClipRect) X(SetRenderDrawColor) X(StartTextInput) \
    X(StopTextInput) X(UnlockSurface) X(WaitEventTimeout)

typedef struct {
#define TPB_SDL_PTR(n) __typeof__(SDL_##n) *n;
    TPB_SDL_FUNCS(TPB_SDL_PTR)
#undef TPB_SDL_PTR
} tpb_sdl_t;

/* Load SDL2 (once per process); 0, or -1 with err naming the library and
 * dlerror()'s reason. */
int tpb_sdl_load(tpb_err_t *err);
/* The loaded table; loads on first use and exits with the message when
 * SDL2 cannot be loaded (callers that can report it call tpb_sdl_load
 * first). */
const tpb_sdl_t *tpb_sdl(void);

#ifndef TPB_SDL_DYN_IMPL
#define SDL_CreateRGBSurfaceWithFormat (tpb_sdl()->CreateRGBSurfaceWithFormat)
#define SDL_CreateRenderer (tpb_sdl()->CreateRenderer)
#define SDL_CreateSoftwareRenderer (tpb_sdl()->CreateSoftwareRenderer)
#define SDL_CreateWindow (tpb_sdl()->CreateWindow)
#define SDL_DestroyRenderer (tpb_sdl()->DestroyRenderer)
#define SDL_DestroyWindow (tpb_sdl()->DestroyWindow)
#define SDL_FreeSurface (tpb_sdl()->FreeSurface)
#define SDL_GetCurrentVideoDriver (tpb_sdl()->GetCurrentVideoDriver)
#define SDL_GetError (tpb_sdl()->GetError)
#define SDL_GetModState (tpb_sdl()->GetModState)
#define SDL_GetRGB (tpb_sdl()->GetRGB)
#define SDL_GetRendererOutputSize (tpb_sdl()->GetRendererOutputSize)
#define SDL_GetTicks64 (tpb_sdl()->GetTicks64)
#define SDL_Init (tpb_sdl()->Init)
#define SDL_LockSurface (tpb_sdl()->LockSurface)
#define SDL_PollEvent (tpb_sdl()->PollEvent)
#define SDL_Quit (tpb_sdl()->Quit)
#define SDL_RenderDrawLine (tpb_sdl()->RenderDrawLine)
#define SDL_RenderDrawRect (tpb_sdl()->RenderDrawRect)
#define SDL_RenderFillRect (tpb_sdl()->RenderFillRect)
#define SDL_RenderFillRects (tpb_sdl()->RenderFillRects)
#define SDL_RenderPresent (tpb_sdl()->RenderPresent)
#define SDL_RenderSetClipRect (tpb_sdl()->RenderSetClipRect)
#define SDL_SetRenderDrawColor (tpb_sdl()->SetRenderDrawColor)
#define SDL_StartTextInput (tpb_sdl()->StartTextInput)
#define SDL_StopTextInput (tpb_sdl()->StopTextInput)
#define SDL_UnlockSurface (tpb_sdl()->UnlockSurface)
#define SDL_WaitEventTimeout (tpb_sdl()->WaitEventTimeout)
#endif

#endif
