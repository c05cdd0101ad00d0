#version 330 core
// fill.frag — rectangles: fills (b.x > 0: with a border of b.x pixels in color2), hatching (idle
// lanes: diagonal stripes of color2 over color, fixed to the screen) and outlines (b.x pixels wide).
// One of four fragment programs (fill, glyph, line, image) sharing batch.vert; each is kept small
// because under Mesa llvmpipe the cost of a frame is mostly the cost of its fragments.
in vec2 uv;
flat in vec2 size;
flat in vec4 fcolor;
flat in vec4 fcolor2;
flat in vec4 fb;
flat in int fkind;

out vec4 outColor;

void main()
{
	vec2 p = uv * size;
	// to the nearest edge; a border takes d <= width, so an edge exactly half a pixel past the last
	// pixel centre (d = 1 there) still gets its line
	float d = min(min(p.x, size.x - p.x), min(p.y, size.y - p.y));
	vec4 c = fcolor;
	if (fkind == 1) {
		c = mod(gl_FragCoord.x + gl_FragCoord.y, 6.0) < 2.0 ? fcolor2 : fcolor;
	} else if (fkind == 5) {
		if (d > fb.x) discard;
	} else if (fb.x > 0.0 && d <= fb.x) {
		c = fcolor2;
	}
	outColor = c;
}
