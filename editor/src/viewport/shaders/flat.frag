uniform float u_alpha;
in vec4 v_color;
out vec4 fragColor;
void main() {
    fragColor = vec4(v_color.rgb, v_color.a * u_alpha);
}
