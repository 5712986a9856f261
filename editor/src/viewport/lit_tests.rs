//! The lit and lightmap views draw what the export holds (issue 13, "what you see is what you
//! export"; docs/spec/PMF-NOTES.md K5): the view defaults, the lightmap upload against the
//! exported file's luxels and the shader's luxel decode. And the built-in demo's exported light
//! as a designer sees it (issue 13's "done when"): bright in the open, a sun shadow behind the
//! building, rooms lit by their lamp and by bounce. Luxels are looked up at world points through
//! the viewport's own mesh of each chunk record ([`build_chunk_mesh`]), so what is checked is
//! what the view samples.

use eframe::egui_glow::glow;
use glam::{DVec3, IVec3, Vec2, Vec3};

use pmfedit_bake::compile::{ChunkBake, CompileSettings, Grid, bake_chunk};
use pmfedit_bake::inspect::luxel_stats;
use pmfedit_core::format::pmf;
use pmfedit_core::map::Map;
use pmfedit_core::map::coords::ChunkCoord;
use pmfedit_core::sample;

use super::Viewport;
use super::mesh::{ChunkMesh, build_chunk_mesh, pack_atlas};
use super::regions::{LIGHTMAP_FORMAT, lightmap_bytes};
use super::render::MESH_FS;
use super::visibility::tests::baked_demo;

/// A chunk record as the viewport meshes it.
fn mesh_of(map: &Map, chunk: ChunkCoord, record: &pmf::Chunk) -> ChunkMesh {
    let bake = ChunkBake {
        level: 0,
        chunk,
        generation: 0,
        pmf: record.clone(),
        stats: Default::default(),
        reads: Vec::new(),
        top_layer: None,
        vis: None,
    };
    build_chunk_mesh(&bake, &map.library)
}

/// The chunks of level 0 of `file` with their level chunk coordinates.
fn file_chunks<'a>(map: &Map, file: &'a pmf::File) -> Vec<(ChunkCoord, &'a pmf::Chunk)> {
    let min = Grid::of(&map.levels[0]).min.as_ivec3();
    let level = &file.levels[0];
    level
        .chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let at = level.grid.index_of(i);
            (ChunkCoord::from_ivec3(min + IVec3::new(i32::from(at.x), i32::from(at.y), i32::from(at.z))), c)
        })
        .collect()
}

/// A luxel the view samples: the world point of a face, the face's unit normal, the mean of the
/// luxel's channels.
struct Sample {
    at: DVec3,
    normal: Vec3,
    brightness: f64,
}

/// Luxels at points spread over every triangle of the chunks (nearest atlas texel at the
/// interpolated lightmap UV, as the lit view samples it without filtering).
fn samples<'a>(map: &Map, chunks: impl IntoIterator<Item = (ChunkCoord, &'a pmf::Chunk)>) -> Vec<Sample> {
    let frame = map.levels[0].frame();
    let mut out = Vec::new();
    for (c, record) in chunks {
        let center = frame.chunk_center_world(c);
        let mesh = mesh_of(map, c, record);
        let atlas = &mesh.atlas;
        for list in mesh.lists() {
            for t in list.indices.chunks_exact(3) {
                let t = [t[0], t[1], t[2]];
                let p = t.map(|i| Vec3::from_array(list.positions[i as usize]));
                let uv = t.map(|i| Vec2::from_array(list.lightmap_uv[i as usize]));
                let Some(normal) = (p[1] - p[0]).cross(p[2] - p[0]).try_normalize() else { continue };
                for (a, b) in [(0.2, 0.2), (0.6, 0.2), (0.2, 0.6), (0.33, 0.33)] {
                    let w = 1.0 - a - b;
                    let q = p[0] * w + p[1] * a + p[2] * b;
                    let u = uv[0] * w + uv[1] * a + uv[2] * b;
                    let x = ((u.x * atlas.width as f32) as u32).min(atlas.width - 1);
                    let y = ((u.y * atlas.height as f32) as u32).min(atlas.height - 1);
                    let texel = atlas.texels[(y * atlas.width + x) as usize];
                    let brightness = texel.iter().map(|&v| f64::from(v)).sum::<f64>() / 3.0;
                    out.push(Sample { at: center + q.as_dvec3(), normal, brightness });
                }
            }
        }
    }
    out
}

/// Mean brightness of the samples inside the world box `lo..hi` on faces with `normal`.
fn mean_in(samples: &[Sample], lo: [f64; 3], hi: [f64; 3], normal: Vec3) -> f64 {
    let (lo, hi) = (DVec3::from(lo), DVec3::from(hi));
    let picked: Vec<f64> = samples
        .iter()
        .filter(|s| s.normal.dot(normal) > 0.99 && s.at.cmpge(lo).all() && s.at.cmple(hi).all())
        .map(|s| s.brightness)
        .collect();
    assert!(picked.len() >= 8, "only {} samples in {lo}..{hi} facing {normal}", picked.len());
    picked.iter().sum::<f64>() / picked.len() as f64
}

/// The chunk holding a world point of the demo.
fn chunk_at(map: &Map, p: DVec3) -> ChunkCoord {
    let f = map.levels[0].frame();
    f.chunk_from_world(p)
}

#[test]
fn the_view_defaults_draw_the_luxels_as_they_are() {
    let v = Viewport::new(None);
    assert_eq!((v.exposure, v.ambient), (1.0, 0.0), "the lit view must start at exposure 1 with no editor ambient");
    // The lit view: the luxel times the exposure plus the editor ambient; at the defaults the
    // luxel's linear value lights the material's linear colour, then the display's transfer
    // curve, as the game draws it (K5). The lightmap view draws the raw luxels.
    let lit = "c = to_srgb(to_linear(albedo) * (lm * u_exposure + vec3(u_ambient * shade)) + to_linear(emission));";
    assert!(MESH_FS.contains(lit), "the lit view's luxel decode changed: update K5, the README and this test");
    // The luxel is read as stored (the region atlas, no decode; see regions::LIGHTMAP_FORMAT).
    assert!(MESH_FS.contains("vec3 lm = texture(u_lightmaps, v_lm).rgb;"));
    assert!(MESH_FS.contains("c = lm;"), "the lightmap view no longer draws the raw luxels");
}

#[test]
fn the_lightmaps_the_view_uploads_are_the_exported_luxels() {
    let state = baked_demo();
    // What Export writes, read back as the game would.
    let bytes = pmf::write(&state.compile().unwrap()).unwrap();
    let file = pmf::read(&bytes).unwrap();
    let map = &state.map;
    let chunks = file_chunks(map, &file);
    assert_eq!(chunks.len(), 25);
    // Stored as 8-bit normalized RGB: an sRGB or float format would change what a luxel reads as.
    assert_eq!(LIGHTMAP_FORMAT, (glow::RGB8, glow::RGB, glow::UNSIGNED_BYTE));
    for (c, record) in &chunks {
        let shown = state.bake.slots()[&(0, *c)].shown.as_ref().expect("every chunk baked");
        let drawn = build_chunk_mesh(&shown.bake, &map.library);
        let (exported, _) = pack_atlas(&record.client.lightmaps);
        assert!(drawn.atlas == exported, "chunk {c:?}: the uploaded atlas is not the exported luxels");
        // Uploaded as they are: 8-bit normalized RGB, no sRGB decode.
        let bytes: Vec<u8> = exported.texels.iter().flatten().copied().collect();
        assert!(lightmap_bytes(&drawn.atlas) == bytes, "chunk {c:?}: the uploaded bytes are not the luxels");
    }

    // The done-when figures of issue 13 on the exported file.
    let stats = luxel_stats(&file);
    assert!(stats.share_ge_64 >= 0.40 && stats.mean >= 60.0, "the exported demo is too dark: {stats:?}");

    // The building (x 0..16, z −8..8, roof at y 7..8 overhanging a unit) casts its shadow away
    // from the sun (azimuth 300°, 50° up: north-west): on the ground south-east of it.
    assert!(map.levels[0].lighting.sun.azimuth == 300.0 && map.levels[0].lighting.sun.elevation == 50.0);
    let ground = samples(map, chunks.iter().copied());
    let shadow = mean_in(&ground, [17.0, -0.1, -6.0], [20.0, 0.1, -1.0], Vec3::Y);
    let sunlit = mean_in(&ground, [17.0, -0.1, -20.0], [20.0, 0.1, -15.0], Vec3::Y);
    assert!(shadow * 2.0 <= sunlit, "no clear shadow behind the building: {shadow} vs {sunlit} in the sun");
    // North-west of the building, towards the sun, the ground is sunlit too.
    let sunward = mean_in(&ground, [-6.0, -0.1, 10.0], [-3.0, 0.1, 14.0], Vec3::Y);
    eprintln!("demo export: {stats:?}; ground in the shadow {shadow:.1}, sunlit {sunlit:.1}, sunward {sunward:.1}");
    assert!(shadow * 2.0 <= sunward, "{shadow} vs {sunward}");
}

/// The demo's hall is lit by its lamp and by bounced light: each compared with a bake of the same
/// chunk without that light. (The vault has no static lamp, and glass blocks baked light, so its
/// static light is the little that comes through the doorway.)
#[test]
fn the_demo_rooms_are_lit_by_their_lamp_and_by_bounce() {
    let settings = CompileSettings::default();
    let demo = sample::demo();
    let wall_brightness = |map: &Map, lo: [f64; 3], hi: [f64; 3], normal: Vec3| {
        let c = chunk_at(map, (DVec3::from(lo) + DVec3::from(hi)) * 0.5);
        let bake = bake_chunk(map, 0, c, &settings).unwrap();
        mean_in(&samples(map, [(c, &bake.pmf)]), lo, hi, normal)
    };

    // The hall's floor under its lamp (4.5, 6.5, 0), away from the sun patch the entrance lets
    // in (x < 3.3): lit by the lamp; without the lamp only by daylight bounced in.
    let (lo, hi) = ([3.5, 0.9, -1.5], [5.5, 1.1, 1.5]);
    let lit = wall_brightness(&demo, lo, hi, Vec3::Y);
    let mut unlit = demo.clone();
    let lamp = unlit.levels[0].objects.lights().iter().find(|(_, l)| l.name == "hall_lamp").map(|(id, _)| id).unwrap();
    unlit.levels[0].objects.remove(lamp).unwrap();
    let without_lamp = wall_brightness(&unlit, lo, hi, Vec3::Y);

    // The hall's ceiling in its far corner (x 1..3, z 4..7), beside the lamp's height: the lamp
    // half a unit below the ceiling meets it almost edge-on there; what lights it is bounced off
    // the lamp-lit floor and the sun patch the entrance lets in.
    let (lo, hi) = ([1.2, 6.9, 4.0], [3.0, 7.1, 6.8]);
    let bounced = wall_brightness(&demo, lo, hi, Vec3::NEG_Y);
    let mut direct = demo.clone();
    direct.levels[0].lighting.bounces = 0;
    let without_bounce = wall_brightness(&direct, lo, hi, Vec3::NEG_Y);
    eprintln!(
        "hall floor {lit:.1} ({without_lamp:.1} without the lamp); hall ceiling corner {bounced:.1} ({without_bounce:.1} without bounce)"
    );
    assert!(lit >= without_lamp + 10.0, "the hall lamp does not light the hall: {lit} vs {without_lamp} without it");
    // Above the baked ambient, bounce at least doubles the light there (it gives 3.4 against 1.2
    // luxel units of direct lamp light when this was written).
    let ambient = f64::from(settings.light.ambient[0]);
    assert!(
        bounced - ambient >= 2.0 * (without_bounce - ambient) && bounced >= without_bounce + 1.5,
        "no bounced light in the hall: {bounced} vs {without_bounce} without it (ambient {ambient})"
    );
}
