/* font.h - the viewer's built-in 5x7 bitmap font (printable ASCII), drawn
 * in a 6x9 cell (g, p, q, y hang two rows below the baseline).  SDL-free: render.c turns lit pixels into rectangles. */
#ifndef TPB_VIZ_FONT_H
#define TPB_VIZ_FONT_H

#include <stdbool.h>

#define VIZ_GLYPH_W 5
#define VIZ_GLYPH_ROWS 7  /* rows stored per glyph */
#define VIZ_GLYPH_H 9     /* rows drawn: descenders (g p q y) sit 2 rows lower */
#define VIZ_CELL_W 6      /* advance per character, pixels at scale 1 */
#define VIZ_CELL_H 9      /* line height */

/* Is pixel (x, y) of character c lit?  Characters outside 32..126 draw as
 * a hollow box. */
bool viz_font_pixel(char c, int x, int y);

/* Width in pixels of a string at a scale (no trailing gap). */
int viz_font_width(const char *s, int scale);

/* How many leading characters of s fit in max_px at a scale. */
int viz_font_fit(const char *s, int scale, int max_px);

#endif
