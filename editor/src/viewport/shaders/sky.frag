uniform vec3 u_bottom;
uniform vec3 u_side;
uniform vec3 u_top;
in vec3 v_dir;
out vec4 fragColor;
void main() {
    float y = normalize(v_dir).y;
    vec3 c = y >= 0.0 ? mix(u_side, u_top, min(y, 1.0)) : mix(u_side, u_bottom, min(-y, 1.0));
    fragColor = vec4(c, 1.0);
}
