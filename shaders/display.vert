#version 330 core
// Draws the core's frame as one quad. The frontend passes the quad in clip
// space already letterboxed to the core's aspect ratio.
layout(location = 0) in vec2 position;
layout(location = 1) in vec2 texcoord;
out vec2 v_texcoord;

void main() {
    v_texcoord = texcoord;
    gl_Position = vec4(position, 0.0, 1.0);
}
