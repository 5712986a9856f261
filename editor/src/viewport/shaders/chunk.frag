// The region's lightmap atlas (rows as uploaded: row 0 at v = 0).
uniform sampler2D u_lightmaps;
uniform sampler2DArray u_textures;
// u_mode (the view's shading, one of the SHADING_* constants), u_textured, u_edges, u_box_mode
// and u_clipped are not uniforms: each program is compiled for one combination of them, declared
// as `const int` before this source (render.rs, `MeshKey::prelude`), so the compiler drops the
// branches the view does not take and the varyings only they read; software GL otherwise runs
// every branch for every fragment. Without a clip plane or a box the shader has no `discard`, so
// a GPU may test depth before shading.
// The tint of chunks waiting for a re-bake.
uniform vec4 u_tint;
uniform float u_exposure;
uniform float u_ambient;
// The clip plane: fragments higher than this (camera-relative Y) are cut away (interiors).
uniform float u_clip;
// Hide or isolate a box (camera-relative; u_box_mode: 0 none, 1 only the box shows, 2 the box
// is hidden).
uniform vec3 u_box_min;
uniform vec3 u_box_max;
// Visibility view: the region's cubes, one texel each from the chunk's v_vis_base (rows as
// uploaded).
uniform sampler2D u_vis_bits;
in vec4 v_color;
in vec2 v_lm;
in vec2 v_uv;
flat in vec3 v_fx;
flat in vec3 v_emission;
in vec4 v_edge;
in vec3 v_rel;
flat in uint v_cube;
// The chunk's pending flag and visibility mode: VIS_HIDDEN, VIS_ALL, VIS_LOOKUP (per cube,
// u_vis_bits) or VIS_WAITING (for the full bake).
flat in int v_pending;
flat in int v_vis;
flat in int v_vis_base;
out vec4 fragColor;
// 1 when this fragment's cube is visible from the air cube, 0 when not.
float visible() {
    if (v_vis == VIS_LOOKUP) {
        ivec2 size = textureSize(u_vis_bits, 0);
        int i = v_vis_base + int(v_cube);
        int row = i / size.x;
        if (row >= size.y) {
            return 0.0;
        }
        return texelFetch(u_vis_bits, ivec2(i - row * size.x, row), 0).r > 0.5 ? 1.0 : 0.0;
    }
    return v_vis == VIS_HIDDEN ? 0.0 : 1.0;
}
vec3 to_linear(vec3 c) { return pow(c, vec3(2.2)); }
vec3 to_srgb(vec3 c) { return pow(clamp(c, 0.0, 1.0), vec3(1.0 / 2.2)); }
void main() {
    if (u_clipped != 0 && v_rel.y > u_clip) {
        discard;
    }
    if (u_box_mode != 0) {
        // A point just behind the face, inside the cube it belongs to.
        vec3 p = v_rel + normalize(v_rel) * 0.01;
        bool inside = all(greaterThan(p, u_box_min)) && all(lessThan(p, u_box_max));
        if (inside != (u_box_mode == 1)) {
            discard;
        }
    }
    vec3 n = normalize(cross(dFdx(v_rel), dFdy(v_rel)));
    vec3 lm = texture(u_lightmaps, v_lm).rgb;
    vec3 emission = v_emission;
    vec4 tex = u_textured != 0 ? texture(u_textures, vec3(v_uv + v_fx.yz, v_fx.x)) : vec4(1.0);
    vec3 albedo = v_color.rgb * tex.rgb;
    vec3 c = albedo;
    float alpha = v_color.a * tex.a;
    // A fixed directional shade: the fullbright view, and the editor ambient of the lit view
    // (so faces of one material stay apart where the bake is flat).
    float shade = 0.72 + 0.28 * dot(n, normalize(vec3(0.35, 0.85, 0.4)));
    if (u_mode == SHADING_LIT) {
        c = to_srgb(to_linear(albedo) * (lm * u_exposure + vec3(u_ambient * shade)) + to_linear(emission));
    } else if (u_mode == SHADING_FULLBRIGHT) {
        c = min(albedo * shade + emission, vec3(1.0));
    } else if (u_mode == SHADING_LIGHTMAP) {
        // The raw luxels: no exposure, no transfer curve.
        c = lm;
        alpha = 1.0;
    } else if (u_mode == SHADING_VISIBILITY) {
        c = albedo * shade;
        if (v_vis == VIS_WAITING) {
            // Waiting for the full bake: dimmed, with diagonal amber hatching.
            float hatch = mod(gl_FragCoord.x + gl_FragCoord.y, 12.0) < 4.0 ? 1.0 : 0.0;
            c = mix(c * 0.4, vec3(0.85, 0.6, 0.2), 0.35 * hatch);
        } else if (visible() < 0.5) {
            // Hidden from the air cube: 20 %, blue-grey.
            c = c * 0.2 + vec3(0.05, 0.07, 0.1);
        }
    } else if (u_mode == SHADING_WIREFRAME) {
        float d = min(min(v_edge.x, v_edge.y), min(v_edge.z, v_edge.w));
        float w = max(fwidth(d), 1e-5);
        float line = 1.0 - smoothstep(0.5 * w, 1.5 * w, d);
        c = mix(albedo * 0.18, mix(albedo, vec3(1.0), 0.5), line);
        alpha = max(alpha, line);
    }
    if (u_edges != 0 && (u_mode == SHADING_LIT || u_mode == SHADING_FULLBRIGHT || u_mode == SHADING_VISIBILITY)) {
        // Face outlines from the wireframe attribute (quad diagonals hidden), one pixel, 30 %.
        float d = min(min(v_edge.x, v_edge.y), min(v_edge.z, v_edge.w));
        float w = max(fwidth(d), 1e-5);
        c *= 1.0 - 0.3 * (1.0 - smoothstep(0.5 * w, 1.5 * w, d));
    }
    if (v_pending != 0) {
        c = mix(c, u_tint.rgb, u_tint.a);
    }
    fragColor = vec4(c, alpha);
}
