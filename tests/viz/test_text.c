/*
 * test_text.c — the glyph atlas and the arithmetic of a monospace grid with Chinese in it, without
 * a window: columns (a wide character counts two), line breaking (at spaces, between Chinese
 * characters, never before closing punctuation), and glyphs rendered on demand: the atlas grows
 * and keeps the glyphs it had (their pixels where their texture coordinates say), says which rows
 * changed, and starts over when it is full at its largest.
 * Read next: test_labels.lua (the labels of every scene), src/viz/text.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "viz/vz.h"

static void test_columns(void **state)
{
	(void)state;
	assert_int_equal(vz_utf8_cols("abc"), 3);
	assert_int_equal(vz_utf8_cols("线程块"), 6);
	assert_int_equal(vz_utf8_cols("a线b"), 4);
	assert_int_equal(vz_utf8_cols("\xE2\x86\x92 \xC3\x97"), 3); /* → and × are narrow */
	assert_int_equal(vz_utf8_cols("（共享）"), 8);             /* full-width punctuation is wide */
	assert_int_equal(vz_utf8_cols(""), 0);
	assert_true(vz_cp_wide(0x4E2D) && vz_cp_wide(0xFF0C) && vz_cp_wide(0x3002));
	assert_false(vz_cp_wide('a') || vz_cp_wide(0x2192) || vz_cp_wide(0x00B7));
	char cut[8] = "ab\xE7\xBA"; /* 线 without its last byte */
	vz_utf8_trim(cut);
	assert_string_equal(cut, "ab");
	char whole[8] = "ab线";
	vz_utf8_trim(whole);
	assert_string_equal(whole, "ab线");
}

static void test_wrapping(void **state)
{
	(void)state;
	size_t skip;
	assert_int_equal(vz_wrap_line("hello world foo", 11, &skip), 11); /* "hello world" */
	assert_int_equal(skip, 1);
	assert_int_equal(vz_wrap_line("hello world", 8, &skip), 5);
	assert_int_equal(vz_wrap_line("abcdefghij", 4, &skip), 4); /* no space: cut the word */
	assert_int_equal(skip, 0);
	assert_int_equal(vz_wrap_line("ab\ncd", 10, &skip), 2);
	assert_int_equal(skip, 1);
	/* between any two Chinese characters: 4 columns hold two of them (6 bytes) */
	assert_int_equal(vz_wrap_line("各线程块扫描", 4, &skip), 6);
	assert_int_equal(skip, 0);
	/* never before a closing mark: "线程，" does not fit 5 columns and cannot end after 程 */
	assert_int_equal(vz_wrap_line("线程，块", 5, &skip), 3);
	/* a Chinese word after an English one breaks at the space or between the characters */
	assert_int_equal(vz_wrap_line("step 第三步", 8, &skip), 8); /* "step 第" */
	assert_int_equal(vz_wrap_line("short", 10, &skip), 5);
}

/* The coverage under a glyph's texture box (w x h bytes). */
static void copy_glyph(vz_text *t, const vz_glyph *g, uint8_t *out)
{
	int w, h;
	const uint8_t *a = vz_text_atlas(t, &w, &h);
	int x0 = (int)(g->u0 * (float)w + 0.5f), y0 = (int)(g->v0 * (float)h + 0.5f);
	for (int y = 0; y < (int)g->h; y++) memcpy(out + (size_t)y * (size_t)g->w, a + (size_t)(y0 + y) * (size_t)w + x0, (size_t)g->w);
}

static void test_atlas_on_demand(void **state)
{
	(void)state;
	if (!vz_cjk_font(NULL)) skip(); /* no CJK font here: Chinese labels fall back to English */
	vz_text *t = vz_text_new(2, "test");
	if (!t) fail_msg("%s", lm_last_error());
	int w, h, y0, y1;
	vz_text_atlas(t, &w, &h);
	assert_int_equal(h, 1024);
	unsigned gen = vz_text_generation(t);
	vz_glyph first;
	assert_true(vz_text_glyph(t, VZ_FONT_TITLE, 0x7EBF, &first)); /* 线 */
	assert_true(first.w > 4 && first.h > 4);
	assert_true(vz_text_take_dirty(t, &y0, &y1));
	assert_false(vz_text_take_dirty(t, &y0, &y1)); /* taken */
	uint8_t *before = malloc((size_t)first.w * (size_t)first.h), *after = malloc((size_t)first.w * (size_t)first.h);
	assert_non_null(before);
	assert_non_null(after);
	copy_glyph(t, &first, before);
	/* 1,500 more ideographs at the title size, twice the pixels: more than 1024 rows hold */
	for (uint32_t cp = 0x4E00; cp < 0x4E00 + 1500; cp++) {
		vz_glyph g;
		vz_text_glyph(t, VZ_FONT_TITLE, cp, &g);
	}
	vz_text_atlas(t, &w, &h);
	assert_true(h > 1024);
	assert_true(vz_text_generation(t) != gen);
	assert_true(vz_text_take_dirty(t, &y0, &y1));
	assert_int_equal(y0, 0);
	assert_int_equal(y1, h); /* a taller atlas goes up whole */
	vz_glyph again;
	assert_true(vz_text_glyph(t, VZ_FONT_TITLE, 0x7EBF, &again));
	assert_true(again.v0 < first.v0); /* the same rows of a taller texture */
	copy_glyph(t, &again, after);
	assert_memory_equal(before, after, (size_t)first.w * (size_t)first.h);
	/* full at its largest: it starts over and still draws the character asked for */
	gen = vz_text_generation(t);
	for (uint32_t cp = 0x5000; cp < 0x5000 + 6000; cp++) {
		vz_glyph g;
		assert_true(vz_text_glyph(t, VZ_FONT_TITLE, cp, &g));
	}
	vz_text_atlas(t, &w, &h);
	assert_int_equal(h, 4096);
	assert_true(vz_text_generation(t) != gen);
	/* ASCII is untouched by all of it */
	vz_glyph a;
	assert_true(vz_text_glyph(t, VZ_FONT_BODY, 'A', &a));
	assert_true(a.v1 <= 1024.0f / 4096.0f + 1e-6f);
	free(before);
	free(after);
	vz_text_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_columns),
		cmocka_unit_test(test_wrapping),
		cmocka_unit_test(test_atlas_on_demand),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
