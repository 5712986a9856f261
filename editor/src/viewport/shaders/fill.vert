uniform mat4 u_vp;
in vec3 a_pos;
in vec4 a_color;
out vec4 v_color;
void main() {
    v_color = a_color;
    gl_Position = u_vp * vec4(a_pos, 1.0);
}
