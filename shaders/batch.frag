#version 330 core
// batch.frag — the fragment side of batch.vert: solid fills, hatching (idle lanes), glyphs from
// the text atlas (a one-channel texture), anti-aliased lines, arrow heads, outlines, discs and
// images (heat maps uploaded by scenes). Colours arrive non-premultiplied; blending is
// SRC_ALPHA, ONE_MINUS_SRC_ALPHA.
in vec2 uv;
in vec2 size;
in vec4 fcolor;
in vec4 fcolor2;
in vec4 fb;
flat in int fkind;

uniform sampler2D atlas;
uniform sampler2D image;

out vec4 outColor;

void main()
{
	vec4 c = fcolor;
	if (fkind == 1) {
		// hatch: diagonal stripes of color2 over color, 6 px period, fixed to the screen
		float s = mod(gl_FragCoord.x + gl_FragCoord.y, 6.0);
		c = s < 2.0 ? fcolor2 : fcolor;
	} else if (fkind == 2) {
		float cov = texture(atlas, mix(fb.xy, fb.zw, uv)).r;
		c = vec4(fcolor.rgb, fcolor.a * cov);
	} else if (fkind == 3) {
		// line: coverage across its width (size.y includes a pixel of margin each side)
		float d = abs(uv.y - 0.5) * size.y;
		float half_w = (size.y - 2.0) * 0.5;
		float along = uv.x * size.x;
		float cov = clamp(half_w + 0.5 - d, 0.0, 1.0) * clamp(min(along, size.x - along), 0.0, 1.0);
		c = vec4(fcolor.rgb, fcolor.a * cov);
	} else if (fkind == 4) {
		// arrow head: a triangle from the base (uv.x = 0, full width) to the tip (uv.x = 1)
		float half_w = (size.y - 2.0) * 0.5;
		float y = abs(uv.y - 0.5) * size.y;
		float edge = (1.0 - uv.x) * half_w;
		// distance to the slanted edge, in pixels, approximately
		float slope = half_w / max(size.x, 1e-3);
		float d = (y - edge) / sqrt(1.0 + slope * slope);
		c = vec4(fcolor.rgb, fcolor.a * clamp(0.5 - d, 0.0, 1.0));
	} else if (fkind == 5) {
		// outline of fb.x pixels inside the rectangle
		vec2 p = uv * size;
		float d = min(min(p.x, size.x - p.x), min(p.y, size.y - p.y));
		if (d >= fb.x) discard;
	} else if (fkind == 6) {
		vec2 p = (uv - 0.5) * size;
		float r = 0.5 * min(size.x, size.y);
		c = vec4(fcolor.rgb, fcolor.a * clamp(r - length(p) + 0.5, 0.0, 1.0));
	} else if (fkind == 7) {
		c = texture(image, mix(fb.xy, fb.zw, uv)) * fcolor;
	}
	if (c.a <= 0.0) discard;
	outColor = c;
}
