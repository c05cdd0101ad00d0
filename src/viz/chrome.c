/*
 * chrome.c — what surrounds every scene: the title bar (scene title, what this step shows, step
 * count and play state), the counters panel, the one-line key hint that is always on screen, the
 * hover tooltip with the outline of the cell under the pointer, the key help (`?`) and the
 * short messages after a snapshot.
 *
 * All in screen coordinates (drawable pixels), sized from the font and the UI scale, so HiDPI
 * windows get the same layout at twice the pixels. Read next: viewer.c, panel.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "viz/vz_viewer.h"

#define V vz_V

/* The key line, in full when it fits the window, else the essentials. */
static const char *const hints[2][2] = {
	{"space play/pause \xC2\xB7 \xE2\x86\x90/\xE2\x86\x92 step \xC2\xB7 Home/End \xC2\xB7 +/\xE2\x88\x92 speed "
	 "\xC2\xB7 Tab variant \xC2\xB7 hover: details \xC2\xB7 wheel zoom \xC2\xB7 drag pan \xC2\xB7 0 fit \xC2\xB7 "
	 "s PNG \xC2\xB7 ? keys \xC2\xB7 Esc close",
	 "space play \xC2\xB7 \xE2\x86\x90/\xE2\x86\x92 step \xC2\xB7 Tab variant \xC2\xB7 s PNG \xC2\xB7 ? keys "
	 "\xC2\xB7 Esc close"},
	{"空格 播放/暂停 · ←/→ 单步 · Home/End 首/末步 · +/− 快/慢 · Tab 切换变体 · 悬停 看详情 · "
	 "滚轮 缩放 · 拖动 平移 · 0 适应窗口 · s 存 PNG · ? 按键 · Esc 关闭",
	 "空格 播放 · ←/→ 单步 · Tab 切换变体 · s 存 PNG · ? 按键 · Esc 关闭"},
};

/* The key help: a key, what it does in English and in Chinese. */
static const char *const help_lines[][3] = {
	{"space", "play / pause (from the start when at the end)", "播放 / 暂停（已到末步时从头播放）"},
	{"\xE2\x86\x92 / \xE2\x86\x90", "one step forward / back", "前进 / 后退一步"},
	{"Home / End", "first / last step", "第一步 / 最后一步"},
	{"+ / \xE2\x88\x92", "faster / slower", "加快 / 放慢"},
	{"Tab", "next variant (Shift+Tab: previous)", "下一个变体（Shift+Tab：上一个）"},
	{"mouse", "hover: what is under the pointer", "悬停：显示指针下的内容"},
	{"wheel, drag", "zoom and pan the picture; 0 fits it again", "缩放、平移画面；按 0 重新适应窗口"},
	{"s", "write a PNG of this frame (lumen-<scene>-<step>.png)", "把这一帧存为 PNG（lumen-<场景>-<步>.png）"},
	{"?", "show / hide these keys", "显示 / 隐藏本帮助"},
	{"Esc", "close the window (the REPL goes on)", "关闭窗口（REPL 继续运行）"},
	{NULL, NULL, NULL},
};

/* How a variant is shown in the title bar: its name is what viz.variant() takes (an algorithm,
 * a format: the API's words, kept), but the descriptive ones read in the labels' language. */
static const char *variant_label(const char *name, char *buf, size_t cap)
{
	static const char *const words[][2] = {
		{"side by side", "并排对比"}, {"blocks", "全部线程块"}, {"layers", "各层"},
		{"backward", "反向传播"}, {"linear", "线性坐标"}, {"log", "对数坐标"},
		{"view", "视图"},
	};
	int b;
	if (!vz_zh()) return name;
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strcmp(name, words[i][0]) == 0) return words[i][1];
	if (sscanf(name, "block %d", &b) == 1) return vz_fmt(buf, cap, "线程块 %d", b);
	if (sscanf(name, "%d stream", &b) == 1)
		return vz_fmt(buf, cap, "%d 个流%s", b, strstr(name, "(your run)") ? "（你的运行）" : "");
	return name;
}

void vz_chrome_layout(const vz_frame *f, vz_chrome *c)
{
	float s = f->scale, W = (float)f->width, H = (float)f->height;
	float title_h = vz_text_height(f, VZ_FONT_TITLE) + vz_text_height(f, VZ_FONT_BODY) + 14 * s;
	float hint_h = vz_text_height(f, VZ_FONT_SMALL) + 8 * s;
	float panel_h = vz_panel_height(&V.panel, f);
	if (panel_h > H * 0.4f) panel_h = H * 0.4f;
	c->title = vz_r(0, 0, W, title_h);
	c->hint = vz_r(0, H - hint_h, W, hint_h);
	c->panel = vz_r(0, H - hint_h - panel_h, W, panel_h);
	float top = title_h + 4 * s, bottom = c->panel.y - 4 * s;
	c->area = vz_r(8 * s, top, W - 16 * s, fmaxf(10, bottom - top));
}

/* Line 1: the scene's title; line 2: what this step shows, and at the right the step, the play
 * state and the variant. What does not fit ends in an ellipsis (the whole title is the window's). */
static void draw_title(vz_frame *f, const vz_chrome *c)
{
	float s = f->scale, pad = 10 * s;
	vz_fill(f, vz_r(0, c->title.h - fmaxf(1, s), c->title.w, fmaxf(1, s)), vz_th.panel_line);
	vz_clip(f, c->title);
	char title[256];
	snprintf(title, sizeof title, "%s", V.scene ? V.title
	         : vz_tr("Lumen visualizer: no scene yet (viz.show(info) or viz.scene(name))",
	                 "Lumen 可视化：还没有场景（viz.show(info) 或 viz.scene(name)）"));
	vz_text_fit(f, VZ_FONT_TITLE, title, sizeof title, c->title.w - 2 * pad);
	vz_text_draw(f, pad, pad * 0.5f, VZ_FONT_TITLE, VZ_ALIGN_LEFT, vz_th.text, title);
	if (!V.scene) {
		vz_screen(f);
		return;
	}
	char status[200], vb[48];
	VZ_SNPRINTF_TR(status, sizeof status, "step %d of %d%s \xC2\xB7 %.3g steps/s", "第 %d 步，共 %d 步%s · 每秒 %.3g 步",
	               V.step, V.steps - 1, V.playing ? vz_tr(" \xE2\x96\xB6 playing", " ▶ 播放中") : "", V.speed);
	if (V.variants > 1)
		VZ_APPEND_TR(status, sizeof status, " \xC2\xB7 Tab %d/%d: %s", " · Tab %d/%d：%s", V.variant + 1, V.variants,
		             variant_label(V.cls->variant_name(V.scene, V.variant), vb, sizeof vb));
	float y2 = pad * 0.5f + vz_text_height(f, VZ_FONT_TITLE) + 2 * s;
	float sw = vz_text_width(f, VZ_FONT_BODY, status);
	vz_text_draw(f, c->title.w - pad, y2, VZ_FONT_BODY, VZ_ALIGN_RIGHT, vz_th.text_dim, status);
	char label[256];
	V.cls->step_label(V.scene, V.step, label, sizeof label);
	vz_text_fit(f, VZ_FONT_BODY, label, sizeof label, c->title.w - sw - 3 * pad);
	vz_text_draw(f, pad, y2, VZ_FONT_BODY, VZ_ALIGN_LEFT, vz_th.text, label);
	vz_screen(f);
}

static void draw_hint(vz_frame *f, const vz_chrome *c)
{
	float pad = 10 * f->scale;
	vz_fill(f, c->hint, vz_th.panel);
	vz_clip(f, c->hint);
	const char *const *h = hints[vz_zh()];
	const char *line = vz_text_width(f, VZ_FONT_SMALL, h[0]) + 2 * pad <= c->hint.w ? h[0] : h[1];
	vz_text_draw(f, pad, c->hint.y + 4 * f->scale, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, line);
	vz_screen(f);
}

/* A box of lines near (x, y), kept inside the window; a line wider than the window is wrapped
 * (between words, or between Chinese characters). */
static void text_box(vz_frame *f, float x, float y, const char *text, vz_color bg, vz_color fg)
{
	float s = f->scale, pad = 6 * s, lh = vz_text_height(f, VZ_FONT_SMALL);
	int cols = (int)(((float)f->width - 2 * pad - 4 * s) / vz_char_width(f, VZ_FONT_SMALL));
	char lines[16][200];
	int n = 0;
	float w = 0;
	for (const char *p = text; *p && n < 16; n++) {
		size_t skip, len = vz_wrap_line(p, cols, &skip);
		snprintf(lines[n], sizeof lines[n], "%.*s", (int)len, p);
		float lw = vz_text_width(f, VZ_FONT_SMALL, lines[n]);
		if (lw > w) w = lw;
		p += len + skip;
	}
	float bw = w + 2 * pad, bh = (float)n * lh + 2 * pad;
	if (x + bw > f->width) x = (float)f->width - bw - 2 * s;
	if (y + bh > f->height) y = (float)f->height - bh - 2 * s;
	if (x < 0) x = 0;
	if (y < 0) y = 0;
	vz_fill(f, vz_r(x + 2 * s, y + 2 * s, bw, bh), (vz_color){0, 0, 0, 40}); /* shadow */
	vz_fill(f, vz_r(x, y, bw, bh), bg);
	vz_outline(f, vz_r(x, y, bw, bh), fmaxf(1, s), vz_th.panel_line);
	vz_clip(f, vz_r(x, y, bw, bh));
	for (int i = 0; i < n; i++)
		vz_text_draw(f, x + pad, y + pad + (float)i * lh, VZ_FONT_SMALL, VZ_ALIGN_LEFT, fg, lines[i]);
	vz_screen(f);
}

void vz_chrome_describe(vz_cell *c, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (V.scene && V.cls->describe) V.cls->describe(V.scene, c, buf, cap);
	if (buf[0]) return;
	vz_append(buf, cap, "%s", c->kind ? c->kind : vz_tr("cell", "单元"));
	if (c->index >= 0) vz_append(buf, cap, " %d", c->index);
	if (c->has_value) vz_append(buf, cap, " = %g", c->value);
	if (c->thread >= 0) VZ_APPEND_TR(buf, cap, "\nthread %d", "\n线程 %d", c->thread);
	if (c->block >= 0) VZ_APPEND_TR(buf, cap, ", block %d", "，线程块 %d", c->block);
	if (c->warp >= 0) VZ_APPEND_TR(buf, cap, ", warp %d", "，线程束 %d", c->warp);
	if (c->lane >= 0) VZ_APPEND_TR(buf, cap, ", lane %d", "，通道 %d", c->lane);
	if (c->step >= 0) VZ_APPEND_TR(buf, cap, "\nstep %d", "\n第 %d 步", c->step);
	if (c->event >= 0) VZ_APPEND_TR(buf, cap, ", trace event %lld", "，trace 事件 %lld", (long long)c->event + 1);
}

static void draw_hover(vz_frame *f, const vz_chrome *c)
{
	if (!V.mouse_in || V.dragging || !vz_contains(c->area, V.mouse_x, V.mouse_y)) return;
	vz_cell cell;
	if (!vz_frame_pick(f, V.mouse_x, V.mouse_y, &cell)) return;
	float s = f->scale;
	vz_rect r = cell.r;
	if (cell.rows > 0 && cell.cols > 0) { /* one cell of a grid */
		float cw = cell.full.w / (float)cell.cols, ch = cell.full.h / (float)cell.rows;
		r = vz_r(cell.full.x + (float)cell.col * cw, cell.full.y + (float)cell.row * ch, cw, ch);
	}
	vz_clip(f, c->area);
	vz_layer(f);
	vz_outline(f, vz_r(r.x - s, r.y - s, r.w + 2 * s, r.h + 2 * s), 2 * s, vz_th.highlight);
	vz_screen(f);
	vz_layer(f);
	char text[512];
	vz_chrome_describe(&cell, text, sizeof text);
	text_box(f, V.mouse_x + 14 * s, V.mouse_y + 16 * s, text, VZ_RGB(255, 255, 250), vz_th.text);
}

/* The keys in a column padded to the widest (in columns: a Chinese key name is two a character). */
static void draw_help(vz_frame *f)
{
	int zh = vz_zh(), key_cols = 0, line_cols = 0;
	static const char *const key_zh[][2] = {{"space", "空格"}, {"mouse", "鼠标"}, {"wheel, drag", "滚轮、拖动"}};
	const char *keys[16];
	for (int i = 0; help_lines[i][0]; i++) {
		keys[i] = help_lines[i][0];
		for (size_t k = 0; zh && k < sizeof key_zh / sizeof key_zh[0]; k++)
			if (strcmp(keys[i], key_zh[k][0]) == 0) keys[i] = key_zh[k][1];
		if ((int)vz_utf8_cols(keys[i]) > key_cols) key_cols = (int)vz_utf8_cols(keys[i]);
	}
	char text[2048];
	snprintf(text, sizeof text, "%s", vz_tr("Keys", "按键"));
	for (int i = 0; help_lines[i][0]; i++) {
		int pad = key_cols + 3 - (int)vz_utf8_cols(keys[i]);
		const char *what = help_lines[i][1 + zh];
		vz_append(text, sizeof text, "\n%s%*s%s", keys[i], pad, "", what);
		int cols = key_cols + 3 + (int)vz_utf8_cols(what);
		if (cols > line_cols) line_cols = cols;
	}
	float w = (float)line_cols * vz_char_width(f, VZ_FONT_SMALL) + 12 * f->scale;
	text_box(f, ((float)f->width - w) / 2, (float)f->height * 0.22f, text, VZ_RGB(255, 255, 250),
	         vz_th.text);
}

void vz_chrome_draw(vz_frame *f, const vz_chrome *c)
{
	draw_title(f, c);
	vz_clip(f, c->panel);
	vz_panel_draw(&V.panel, f, c->panel);
	vz_screen(f);
	draw_hint(f, c);
	draw_hover(f, c);
	vz_layer(f);
	if (V.help) draw_help(f);
	vz_layer(f);
	if (V.toast[0])
		text_box(f, 10 * f->scale, c->panel.y - 34 * f->scale, V.toast, vz_th.text, vz_th.bg);
}
