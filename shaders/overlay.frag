#version 330 core
// The overlay (stats panel, graph, notices): an RGBA picture drawn over
// the game, blended by its alpha, texels fetched exactly.
in vec2 v_texcoord;
out vec4 colour;

uniform sampler2D frame;
uniform vec2 source_size;   // the overlay picture in pixels
uniform vec2 output_size;   // its quad on screen in pixels (unused here)

void main() {
    ivec2 texel = ivec2(clamp(floor(v_texcoord * source_size), vec2(0.0), source_size - 1.0));
    colour = texelFetch(frame, texel, 0);
}
