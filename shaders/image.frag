#version 330 core
// image.frag — a scene's image (a heat map, a large grid): its texels, nearest, times the colour.
in vec2 uv;
flat in vec4 fcolor;
flat in vec4 fb;

uniform sampler2D image;

out vec4 outColor;

void main()
{
	outColor = texture(image, mix(fb.xy, fb.zw, uv)) * fcolor;
}
