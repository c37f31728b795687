/* render.h - draw the timeline into an SDL renderer (window or surface). */
#ifndef TPB_VIZ_RENDER_H
#define TPB_VIZ_RENDER_H

#include <stdbool.h>
#include <stdint.h>

#include "layout.h"
#include "trace_read.h"

/* Palette (0xRRGGBB).  Class colours are also listed in docs/viewer.md. */
#define VIZ_RGB_BG       0x16181dU  /* window background, between lanes */
#define VIZ_RGB_LANE_BG  0x23262eU  /* a lane's row band where no box is */
#define VIZ_RGB_TEXT     0xe6e6e6U
#define VIZ_RGB_DIM      0x8a8f99U
#define VIZ_RGB_UTIL     0x5fbf6fU
#define VIZ_RGB_ARROW    0xff8c1aU
#define VIZ_RGB_CURSOR   0xff4081U
#define VIZ_RGB_SELECT   0xffffffU
#define VIZ_RGB_MATCH    0xffeb3bU
#define VIZ_RGB_SEM      0xd4a5ffU

/* Colour of an instruction class (ISA_CLASS_COUNT = unknown `cat`). */
uint32_t viz_class_rgb(isa_class_t c);

/* What the user is doing: everything the frame depends on besides the
 * trace and the layout. */
typedef struct {
    int64_t hover;          /* event under the mouse, -1 none */
    int64_t selected;       /* clicked / stepped-to event, -1 none */
    bool show_help;         /* ? */
    bool show_legend;       /* l */
    bool searching;         /* typing after / */
    char search[64];        /* mnemonic substring, "" none */
    uint32_t matches;       /* events whose mnemonic contains search */
    bool playing;
    double cursor;          /* play cursor cycle, < 0 hidden */
    double speed;           /* play speed, cycles per second of wall time */
    char status[160];       /* one-line message (errors, hints) */
} viz_ui_t;

void viz_ui_init(viz_ui_t *ui);

#ifdef TPB_WITH_VIEWER
#include "sdl_dyn.h"  /* <SDL.h>, its functions loaded on first use */

/* Draw one frame. */
void viz_render(SDL_Renderer *r, const viz_trace_t *t, const viz_layout_t *L, const viz_ui_t *ui);

/* Headless: render [from, to) (to <= from: the whole trace) into a
 * width x height software surface and write a 24-bit BMP atomically. */
int viz_render_screenshot(const viz_trace_t *t, int width, int height, double from, double to,
                          int64_t selected, const char *out_bmp, tpb_err_t *err);

/* Write a surface as an uncompressed 24-bit BMP (atomic). */
int viz_save_bmp(SDL_Surface *s, const char *path, tpb_err_t *err);
#endif

#endif
