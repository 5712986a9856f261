uniform mat4 u_inv_vp;
in vec2 a_corner;
out vec3 v_dir;
void main() {
    vec4 far = u_inv_vp * vec4(a_corner, 1.0, 1.0);
    v_dir = far.xyz / far.w;
    gl_Position = vec4(a_corner, 1.0, 1.0);
}
