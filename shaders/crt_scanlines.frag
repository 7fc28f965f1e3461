#version 330 core
// A light CRT look: each source row becomes a bright scanline that fades
// towards its edges, and columns blend like a slightly soft beam. The
// texture must be sampled with GL_LINEAR.
in vec2 v_texcoord;
out vec4 colour;

uniform sampler2D frame;
uniform vec2 source_size;   // the core's frame in pixels (width, height)
uniform vec2 output_size;   // the quad on screen in pixels

const float PI = 3.14159265;

void main() {
    vec2 texel = v_texcoord * source_size;
    // Rows sampled at their centre (no vertical blur), columns linearly.
    vec2 sample_at = vec2(texel.x, floor(texel.y) + 0.5);
    vec3 rgb = texture(frame, sample_at / source_size).rgb;
    // Scanline: full brightness mid-row, darker between rows; the dip
    // fades when the picture is too small to show lines (under 2x).
    float rows_visible = clamp(output_size.y / source_size.y - 1.0, 0.0, 1.0);
    float line = sin(PI * fract(texel.y));
    float weight = mix(1.0, 0.55 + 0.45 * line * line, rows_visible);
    // Boost so the average brightness stays close to the source's.
    colour = vec4(min(rgb * weight * 1.15, vec3(1.0)), 1.0);
}
