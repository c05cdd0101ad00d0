#version 330 core
// line.frag — anti-aliased shapes: line segments (coverage across the width and at the ends),
// arrow heads (a triangle from the base, full width, to the tip) and discs.
in vec2 uv;
flat in vec2 size;
flat in vec4 fcolor;
flat in int fkind;

out vec4 outColor;

void main()
{
	float cov;
	if (fkind == 3) {
		float d = abs(uv.y - 0.5) * size.y;      // size.y: the width plus a pixel each side
		float along = uv.x * size.x;
		cov = clamp((size.y - 2.0) * 0.5 + 0.5 - d, 0.0, 1.0) * clamp(min(along, size.x - along), 0.0, 1.0);
	} else if (fkind == 4) {
		float half_w = (size.y - 2.0) * 0.5;
		float y = abs(uv.y - 0.5) * size.y;
		float slope = half_w / max(size.x, 1e-3);
		cov = clamp(0.5 - (y - (1.0 - uv.x) * half_w) / sqrt(1.0 + slope * slope), 0.0, 1.0);
	} else {
		vec2 p = (uv - 0.5) * size;
		cov = clamp(0.5 * min(size.x, size.y) - length(p) + 0.5, 0.0, 1.0);
	}
	if (cov <= 0.0) discard;
	outColor = vec4(fcolor.rgb, fcolor.a * cov);
}
