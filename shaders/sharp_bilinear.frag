#version 330 core
// Sharp bilinear scaling: nearest-neighbour inside each source pixel, linear
// blending only across the last output pixel at its edge. Pixel art stays
// crisp at non-integer scales without nearest's uneven pixel widths.
// The texture must be sampled with GL_LINEAR.
in vec2 v_texcoord;
out vec4 colour;

uniform sampler2D frame;
uniform vec2 source_size;   // the core's frame in pixels (width, height)
uniform vec2 output_size;   // the quad on screen in pixels

void main() {
    vec2 texel = v_texcoord * source_size;
    vec2 scale = max(floor(output_size / source_size), vec2(1.0));
    vec2 region = 0.5 - 0.5 / scale;
    vec2 centre_distance = fract(texel) - 0.5;
    vec2 f = (centre_distance - clamp(centre_distance, -region, region)) * scale + 0.5;
    vec2 sample_at = floor(texel) + f;
    colour = vec4(texture(frame, sample_at / source_size).rgb, 1.0);
}
