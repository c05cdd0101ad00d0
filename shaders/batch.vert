#version 330 core
// batch.vert — the vertex program of every shape the visualizer draws (src/viz/gpu.c), shared by
// the four fragment programs: fill.frag, glyph.frag, line.frag, image.frag.
// A shape is four vertices that carry the same numbers and their corner of the unit quad (not
// instancing: llvmpipe runs its vertex pipeline once per instance). a = the shape's geometry in
// pixels (origin top-left), b = extra numbers,
// kind = what to draw (the VZ_KIND_* of src/viz/vz.h):
//   0 fill (b.x > 0: with a border of b.x pixels in color2), 1 hatch, 5 outline, 6 disc:
//     a = (x, y, w, h)
//   2 glyph, 7 image: a = (x, y, w, h), b = (u0, v0, u1, v1) in the texture
//   3 line, 4 arrow head: a = (x0, y0, x1, y1), b.x = width (the head: its base width)
// The corner of the unit quad (0..1)^2 is placed so that the fragment shader gets local coordinates (uv) and
// the size in pixels (size) for anti-aliased edges. Read next: fill.frag.
layout(location = 0) in vec2 corner;
layout(location = 1) in vec4 a;
layout(location = 2) in vec4 b;
layout(location = 3) in vec4 color;
layout(location = 4) in vec4 color2;
layout(location = 5) in float kind;

uniform vec2 viewport; // drawable size in pixels

// Only uv varies across a shape; the rest is per instance (flat: nothing to interpolate, which is
// most of the cost of a fragment under llvmpipe).
out vec2 uv;
flat out vec2 size;
flat out vec4 fcolor;
flat out vec4 fcolor2;
flat out vec4 fb;
flat out int fkind;

void main()
{
	int k = int(kind + 0.5);
	vec2 p;
	if (k == 3 || k == 4) {
		// a segment from (a.x, a.y) to (a.z, a.w), b.x wide, plus a pixel of margin for AA
		vec2 d = a.zw - a.xy;
		float len = max(length(d), 1e-4);
		vec2 dir = d / len, nrm = vec2(-dir.y, dir.x);
		float w = b.x + 2.0;
		float along = (k == 3) ? len + 2.0 : len;
		vec2 start = (k == 3) ? a.xy - dir : a.xy;
		p = start + dir * corner.x * along + nrm * (corner.y - 0.5) * w;
		size = vec2(along, w);
	} else {
		p = a.xy + corner * a.zw;
		size = a.zw;
	}
	uv = corner;
	fcolor = color;
	fcolor2 = color2;
	fb = b;
	fkind = k;
	vec2 ndc = vec2(p.x / viewport.x * 2.0 - 1.0, 1.0 - p.y / viewport.y * 2.0);
	gl_Position = vec4(ndc, 0.0, 1.0);
}
