uniform mat4 u_vp;
uniform vec2 u_viewport;
uniform float u_width;
in vec3 a_pos;
in vec3 a_other;
in float a_side;
in vec4 a_color;
out vec4 v_color;
void main() {
    vec4 a = u_vp * vec4(a_pos, 1.0);
    vec4 b = u_vp * vec4(a_other, 1.0);
    vec2 sa = a.xy / a.w * u_viewport;
    vec2 sb = b.xy / b.w * u_viewport;
    vec2 d = sb - sa;
    vec2 dir = length(d) > 1e-6 ? normalize(d) : vec2(1.0, 0.0);
    vec2 n = vec2(-dir.y, dir.x);
    a.xy += n * a_side * u_width / u_viewport * a.w;
    a.z -= 0.0004 * a.w;
    v_color = a_color;
    gl_Position = a;
}
