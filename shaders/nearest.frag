#version 330 core
// Nearest neighbour: each output pixel shows the one source pixel under its
// centre, fetched exactly (no filtering), so at an integer scale every
// source pixel becomes an exact block of identical output pixels.
in vec2 v_texcoord;
out vec4 colour;

uniform sampler2D frame;
uniform vec2 source_size;   // the core's frame in pixels (width, height)
uniform vec2 output_size;   // the quad on screen in pixels (unused here)

void main() {
    ivec2 texel = ivec2(clamp(floor(v_texcoord * source_size), vec2(0.0), source_size - 1.0));
    colour = vec4(texelFetch(frame, texel, 0).rgb, 1.0);
}
