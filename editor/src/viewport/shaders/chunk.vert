// The material table: per material two texels, (texture layer, u offset, v offset, 0) and
// (emission, 0), 256 materials per texel row.
uniform sampler2D u_fx;
uniform mat4 u_vp;
uniform vec3 u_offset;
in vec3 a_pos;
in vec4 a_color;
in vec2 a_lm;
in vec4 a_uv;
in vec4 a_edge;
in uint a_cube;
out vec4 v_color;
out vec2 v_lm;
out vec2 v_uv;
// The material's (texture layer, u offset, v offset) and emission, from the material table.
flat out vec3 v_fx;
flat out vec3 v_emission;
out vec4 v_edge;
out vec3 v_rel;
flat out uint v_cube;
void main() {
    vec3 rel = a_pos + u_offset;
    v_cube = a_cube;
    v_color = a_color;
    v_lm = a_lm;
    v_uv = a_uv.xy;
    // Only materials with frames, scroll or emission have a row; looked up per vertex (a
    // material is constant over a face), not per fragment.
    int row = int(a_uv.w + 0.5);
    ivec2 size = textureSize(u_fx, 0);
    int y = row / 256;
    if (row > 0 && y < size.y) {
        // three-d flips rows on upload: data row 0 is the last GL row.
        ivec2 at = ivec2((row - y * 256) * 2, size.y - 1 - y);
        v_fx = texelFetch(u_fx, at, 0).xyz;
        v_emission = texelFetch(u_fx, at + ivec2(1, 0), 0).rgb;
    } else {
        v_fx = vec3(a_uv.z, 0.0, 0.0);
        v_emission = vec3(0.0);
    }
    v_edge = a_edge;
    v_rel = rel;
    gl_Position = u_vp * vec4(rel, 1.0);
}
