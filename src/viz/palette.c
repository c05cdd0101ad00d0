/*
 * palette.c — the visualizer's colours: Okabe & Ito's colour-blind-safe categories, viridis for
 * heat maps, and the theme that gives each meaning one colour in every scene.
 *
 * Viridis is sampled from the published 256-entry map at 16 points and interpolated linearly
 * (the error is below one 8-bit step). Read next: draw.c.
 */
#include <math.h>

#include "viz/vz.h"

/* Okabe, M. and Ito, K. (2002), "Color Universal Design": black, orange, sky blue, bluish green,
 * yellow, blue, vermillion, reddish purple. */
const vz_color vz_okabe_ito[VZ_OI_COUNT] = {
	VZ_RGB(0, 0, 0),       VZ_RGB(230, 159, 0),  VZ_RGB(86, 180, 233), VZ_RGB(0, 158, 115),
	VZ_RGB(240, 228, 66),  VZ_RGB(0, 114, 178),  VZ_RGB(213, 94, 0),   VZ_RGB(204, 121, 167),
};

vz_color vz_category(int i)
{
	/* blue, orange, green, purple, sky, vermillion, yellow: neighbours stay far apart */
	static const int order[] = {VZ_OI_BLUE, VZ_OI_ORANGE, VZ_OI_GREEN, VZ_OI_PURPLE, VZ_OI_SKY,
	                            VZ_OI_VERMILLION, VZ_OI_YELLOW};
	int n = (int)(sizeof order / sizeof order[0]);
	return vz_okabe_ito[order[((i % n) + n) % n]];
}

/* viridis (matplotlib, van der Walt & Smith) at 0, 1/15, ..., 1 */
static const uint8_t viridis16[16][3] = {
	{68, 1, 84},    {72, 26, 108},  {71, 47, 125},  {65, 68, 135},  {57, 86, 140},  {49, 104, 142},
	{42, 120, 142}, {35, 136, 142}, {31, 152, 139}, {34, 168, 132}, {53, 183, 121}, {84, 197, 104},
	{122, 209, 81}, {165, 219, 54}, {210, 226, 27}, {253, 231, 37},
};

vz_color vz_viridis(double t)
{
	if (!(t > 0)) t = 0; /* NaN too */
	if (t > 1) t = 1;
	double x = t * 15.0;
	int i = (int)x;
	if (i >= 15) i = 14;
	double u = x - i;
	vz_color c;
	c.r = (uint8_t)lround(viridis16[i][0] + u * (viridis16[i + 1][0] - viridis16[i][0]));
	c.g = (uint8_t)lround(viridis16[i][1] + u * (viridis16[i + 1][1] - viridis16[i][1]));
	c.b = (uint8_t)lround(viridis16[i][2] + u * (viridis16[i + 1][2] - viridis16[i][2]));
	c.a = 255;
	return c;
}

vz_color vz_mix(vz_color a, vz_color b, double t)
{
	if (t < 0) t = 0;
	if (t > 1) t = 1;
	vz_color c;
	c.r = (uint8_t)lround(a.r + t * (b.r - a.r));
	c.g = (uint8_t)lround(a.g + t * (b.g - a.g));
	c.b = (uint8_t)lround(a.b + t * (b.b - a.b));
	c.a = (uint8_t)lround(a.a + t * (b.a - a.a));
	return c;
}

vz_color vz_fade(vz_color c, double alpha)
{
	if (alpha < 0) alpha = 0;
	if (alpha > 1) alpha = 1;
	c.a = (uint8_t)lround(c.a * alpha);
	return c;
}

vz_color vz_text_on(vz_color bg)
{
	/* relative luminance (sRGB approximated by squares) */
	double l = 0.2126 * bg.r * bg.r + 0.7152 * bg.g * bg.g + 0.0722 * bg.b * bg.b;
	return l > 0.28 * 255.0 * 255.0 ? VZ_RGB(20, 20, 20) : VZ_RGB(255, 255, 255);
}

const vz_theme vz_th = {
	.bg = VZ_RGB(252, 252, 250),
	.panel = VZ_RGB(241, 241, 237),
	.panel_line = VZ_RGB(205, 205, 200),
	.text = VZ_RGB(26, 26, 26),
	.text_dim = VZ_RGB(100, 100, 100),
	.grid = VZ_RGB(220, 220, 216),
	.active = VZ_RGB(230, 159, 0),    /* Okabe-Ito orange */
	.idle = VZ_RGB(222, 222, 222),
	.idle_text = VZ_RGB(112, 112, 112),
	.pending = VZ_RGB(244, 244, 241),
	.arrow = VZ_RGB(150, 150, 150),
	.arrow_now = VZ_RGB(0, 114, 178), /* Okabe-Ito blue */
	.hatch = VZ_RGB(170, 170, 170),
	.highlight = VZ_RGB(213, 94, 0),  /* Okabe-Ito vermillion */
	.path_a = VZ_RGB(0, 114, 178),    /* blue */
	.path_b = VZ_RGB(230, 159, 0),    /* orange */
	.common = VZ_RGB(0, 158, 115),    /* bluish green */
};
