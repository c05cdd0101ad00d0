#version 330 core
// glyph.frag — text: the glyph's coverage from the atlas (one channel) times the text colour.
in vec2 uv;
flat in vec4 fcolor;
flat in vec4 fb;

uniform sampler2D atlas;

out vec4 outColor;

void main()
{
	float cov = texture(atlas, mix(fb.xy, fb.zw, uv)).r;
	if (cov <= 0.0) discard;
	outColor = vec4(fcolor.rgb, fcolor.a * cov);
}
