// The material table: per material two texels, (texture layer, u offset, v offset, 0) and
// (emission, 0), 256 materials per texel row.
uniform sampler2D u_fx;
// The region's chunk table: per slot (lightmap corner x, y in texels; flags: 1 pending, 2 × the
// VIS_* mode; first cube in u_vis_bits), TABLE_EDGE texels per row, rows as uploaded.
uniform sampler2D u_chunks;
uniform mat4 u_vp;
// The region origin relative to the eye.
uniform vec3 u_offset;
// The region's lightmap atlas size, texels.
uniform vec2 u_lm_size;
// The packed vertex (gpu_mesh.rs VERTEX_ATTRIBUTES): position relative to the region origin,
// colour, lightmap texel in the chunk's atlas and the chunk's slot, texture (u, v, layer,
// material row), face outline, cube index.
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec4 a_color;
layout(location = 2) in vec3 a_lm;
layout(location = 3) in vec4 a_uv;
layout(location = 4) in vec4 a_edge;
layout(location = 5) in uint a_cube;
out vec4 v_color;
out vec2 v_lm;
out vec2 v_uv;
// The material's (texture layer, u offset, v offset) and emission, from the material table.
flat out vec3 v_fx;
flat out vec3 v_emission;
out vec4 v_edge;
out vec3 v_rel;
flat out uint v_cube;
// The chunk's pending flag and visibility mode, and its first cube in u_vis_bits.
flat out int v_pending;
flat out int v_vis;
flat out int v_vis_base;
void main() {
    vec3 rel = a_pos + u_offset;
    // One table read per vertex: what varies per chunk of the region.
    int slot = int(a_lm.z + 0.5);
    vec4 chunk = texelFetch(u_chunks, ivec2(slot % TABLE_EDGE, slot / TABLE_EDGE), 0);
    int flags = int(chunk.z + 0.5);
    v_pending = flags & 1;
    v_vis = flags >> 1;
    v_vis_base = int(chunk.w + 0.5);
    v_cube = a_cube;
    v_color = a_color;
    v_lm = (a_lm.xy + chunk.xy) / u_lm_size;
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
