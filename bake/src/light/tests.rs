//! Tests of the lighting stage, on small levels built with the core Level API.

use glam::{DVec3, Vec3};
use pmfedit_core::format::pmf;
use pmfedit_core::map::Level;
use pmfedit_core::map::coords::{ChunkCoord, LatticeBox, MIN_CUBE_EDGE};
use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
use pmfedit_core::map::library::{Light, LightId, LightMode, LightShape, RealtimeLight};
use pmfedit_core::map::lighting::LevelLighting;
use pmfedit_core::map::octree::Cube;
use proptest::prelude::*;

use super::*;

fn stone() -> Cube {
    Cube::solid(MaterialId(1), PhysicsId(0), SoundId(0))
}

/// A level of 8-unit chunks whose world origin is the center of chunk (2, 2, 2): world
/// coordinates from -20 to +20 stay inside chunks 0..5.
fn level() -> Level {
    let mut l = Level::new("light", 3).unwrap();
    l.set_center_chunk(ChunkCoord::new(2, 2, 2)).unwrap();
    // The lights alone: sun, sky and bounce have their own tests.
    l.lighting = LevelLighting::none();
    l
}

fn lattice_box(level: &Level, lo: [f64; 3], hi: [f64; 3]) -> LatticeBox {
    let f = level.frame();
    LatticeBox::new(f.lattice_from_world(DVec3::from(lo)), f.lattice_from_world(DVec3::from(hi)))
}

fn solid(level: &mut Level, lo: [f64; 3], hi: [f64; 3]) {
    let b = lattice_box(level, lo, hi);
    level.fill_box(b, stone()).unwrap();
}

fn air(level: &mut Level, lo: [f64; 3], hi: [f64; 3]) {
    let b = lattice_box(level, lo, hi);
    level.clear_box(b).unwrap();
}

fn add_light(level: &mut Level, light: Light) -> LightId {
    level.objects.add(light).unwrap()
}

fn light(pos: [f32; 3], intensity: f32, range: f32, mode: LightMode) -> Light {
    Light { position: Vec3::from(pos), intensity, range, mode, ..Light::default() }
}

fn dynamic(id: u32) -> LightMode {
    LightMode::Dynamic { global_id: id, enabled: true, preserve: false }
}

fn fast(id: u32) -> LightMode {
    LightMode::Fast { global_id: id, initial_intensity: 200, enabled: true, preserve: true }
}

fn dark() -> LightSettings {
    LightSettings { ambient: [0; 3], ..LightSettings::default() }
}

/// The axis-aligned rectangle `lo..hi` (flat on `axis`) as a face with normal `±axis`.
fn rect(id: u32, axis: usize, positive: bool, lo: [f64; 3], hi: [f64; 3]) -> SurfaceFace {
    let (b, c) = ((axis + 1) % 3, (axis + 2) % 3);
    let corner = |sb: bool, sc: bool| {
        let mut p = DVec3::from(lo);
        p[axis] = lo[axis];
        p[b] = if sb { hi[b] } else { lo[b] };
        p[c] = if sc { hi[c] } else { lo[c] };
        p
    };
    let mut n = DVec3::ZERO;
    n[axis] = if positive { 1.0 } else { -1.0 };
    SurfaceFace::new(id, vec![corner(false, false), corner(true, false), corner(true, true), corner(false, true)], n)
}

/// The six faces of the box `lo..hi`, normals pointing out of the box (`outward`) or into it.
fn box_faces(first_id: u32, lo: [f64; 3], hi: [f64; 3], outward: bool) -> Vec<SurfaceFace> {
    let mut out = Vec::new();
    for axis in 0..3 {
        for positive in [true, false] {
            let mut flo = lo;
            let mut fhi = hi;
            let at = if positive { hi[axis] } else { lo[axis] };
            flo[axis] = at;
            fhi[axis] = at;
            let id = first_id + out.len() as u32;
            out.push(rect(id, axis, positive == outward, flo, fhi));
        }
    }
    out
}

fn chunk_at(level: &Level, p: [f64; 3]) -> ChunkCoord {
    let f = level.frame();
    f.chunk_from_world(DVec3::from(p))
}

fn bake(level: &Level, settings: LightSettings, faces: &[SurfaceFace], cells: &[DVec3]) -> ChunkLighting {
    let vertices = LitVertex::for_faces(faces);
    let scene = LightScene::new(level, settings);
    let input = ChunkInput { chunk: chunk_at(level, [0.0; 3]), faces, vertices: &vertices, air_cells: cells };
    bake_chunk(&scene, &input).unwrap()
}

/// The RGB luxels of face `k`'s patch in a lightmap (or layer) of the chunk, row-major.
fn patch_luxels(out: &ChunkLighting, k: usize, page_bytes: &[u8]) -> Vec<[u8; 3]> {
    let f = &out.faces[k];
    let edge = 1usize << f.placement.page_log2;
    let r = f.placement.rect;
    let mut v = Vec::new();
    for j in 0..r.height as usize {
        for i in 0..r.width as usize {
            let at = 3 * ((r.y as usize + j) * edge + r.x as usize + i);
            v.push([page_bytes[at], page_bytes[at + 1], page_bytes[at + 2]]);
        }
    }
    v
}

fn static_luxels(out: &ChunkLighting, k: usize) -> Vec<[u8; 3]> {
    patch_luxels(out, k, &out.lightmaps[usize::from(out.faces[k].page())].luxels)
}

/// The luxel of face `k` whose sample lies nearest to `p`.
fn luxel_near(out: &ChunkLighting, k: usize, p: [f64; 3]) -> [u8; 3] {
    let patch = &out.faces[k].patch;
    let p = DVec3::from(p);
    let best =
        (0..patch.len()).min_by(|&a, &b| patch.luxels[a].distance(p).total_cmp(&patch.luxels[b].distance(p))).unwrap();
    static_luxels(out, k)[best]
}

// ----- room ----------------------------------------------------------------------------------

/// A closed room: walls 1 unit thick, inside -5..5 on every axis, spanning several chunks.
fn room(level: &mut Level) {
    solid(level, [-6.0; 3], [6.0; 3]);
    air(level, [-5.0; 3], [5.0; 3]);
}

/// Inner faces (ids 0..6), outer faces (6..12), and a floor below the room, outside (12).
fn room_faces() -> Vec<SurfaceFace> {
    let mut faces = box_faces(0, [-5.0; 3], [5.0; 3], false);
    faces.extend(box_faces(6, [-6.0; 3], [6.0; 3], true));
    faces.push(rect(12, 1, true, [-14.0, -9.0, -14.0], [14.0, -9.0, 14.0]));
    faces
}

#[test]
fn light_in_a_closed_room_lights_the_inside_and_nothing_outside() {
    let mut lv = level();
    room(&mut lv);
    add_light(&mut lv, light([0.0; 3], 20.0, 30.0, LightMode::Static));
    let faces = room_faces();
    let out = bake(&lv, dark(), &faces, &[]);
    for k in 0..6 {
        let lux = static_luxels(&out, k);
        assert!(lux.iter().all(|l| l.iter().all(|&c| c > 0)), "inner face {k} has a dark luxel: {lux:?}");
    }
    for k in 6..13 {
        assert!(static_luxels(&out, k).iter().all(|l| *l == [0; 3]), "outside face {k} is lit");
    }
    // The same light without the room lights the floor outside: the shadow test can fail.
    let mut open = level();
    add_light(&mut open, light([0.0; 3], 20.0, 30.0, LightMode::Static));
    let out = bake(&open, dark(), &faces, &[]);
    assert!(static_luxels(&out, 12).iter().any(|l| l[0] > 10));
}

#[test]
fn ambient_reaches_every_luxel_and_is_exact() {
    let mut lv = level();
    room(&mut lv);
    let faces = room_faces();
    let settings = LightSettings { ambient: [8, 9, 10], ..LightSettings::default() };
    let out = bake(&lv, settings, &faces, &[]);
    for k in 0..faces.len() {
        assert!(static_luxels(&out, k).iter().all(|l| *l == [8, 9, 10]));
    }
}

#[test]
fn ambient_occlusion_darkens_corners_only() {
    let mut lv = level();
    room(&mut lv);
    let faces = room_faces();
    let settings = LightSettings {
        ambient: [100; 3],
        ao: Some(AoSettings::default()),
        luxels_per_unit: 1.0,
        ..LightSettings::default()
    };
    let out = bake(&lv, settings, &faces, &[]);
    // Floor (face 3 = -Y side, normal +Y): centre open, corner occluded.
    let floor = faces.iter().position(|f| f.normal == DVec3::Y && f.corners[0].y == -5.0).unwrap();
    assert_eq!(luxel_near(&out, floor, [0.0, -5.0, 0.0]), [100; 3]);
    let corner = luxel_near(&out, floor, [-5.0, -5.0, -5.0]);
    assert!(corner[0] < 80, "{corner:?}");
}

// ----- shadows -------------------------------------------------------------------------------

#[test]
fn a_wall_casts_a_shadow() {
    let build = |wall: bool| {
        let mut lv = level();
        solid(&mut lv, [-10.0, -1.0, -10.0], [10.0, 0.0, 10.0]);
        if wall {
            solid(&mut lv, [2.0, 0.0, -2.0], [3.0, 4.0, 2.0]);
        }
        add_light(&mut lv, light([0.0, 2.0, 0.0], 10.0, 30.0, LightMode::Static));
        let faces = vec![rect(0, 1, true, [-10.0, 0.0, -10.0], [10.0, 0.0, 10.0])];
        bake(&lv, dark(), &faces, &[])
    };
    let with = build(true);
    let without = build(false);
    let behind = luxel_near(&with, 0, [6.0, 0.0, 0.0]);
    let beside = luxel_near(&with, 0, [6.0, 0.0, 6.0]);
    assert_eq!(behind, [0; 3]);
    assert!(beside[0] > 5, "{beside:?}");
    // Without the wall, the luxel behind it is the brighter one (it is closer to the light).
    let open_behind = luxel_near(&without, 0, [6.0, 0.0, 0.0]);
    assert!(open_behind[0] > beside[0], "{open_behind:?} vs {beside:?}");
    assert_eq!(luxel_near(&without, 0, [6.0, 0.0, 6.0]), beside);
}

#[test]
fn shadows_cross_chunk_borders_and_soft_lights_give_penumbrae() {
    // A big emitter: the luxel at the shadow's edge is partly lit.
    let mut lv = level();
    solid(&mut lv, [-10.0, -1.0, -10.0], [10.0, 0.0, 10.0]);
    solid(&mut lv, [2.0, 0.0, -2.0], [3.0, 4.0, 2.0]);
    let id = add_light(
        &mut lv,
        Light { size: Vec3::new(0.0, 0.0, 2.0), ..light([0.0, 2.0, 0.0], 10.0, 30.0, LightMode::Static) },
    );
    let scene = LightScene::new(&lv, dark());
    let l = scene.light(id).unwrap();
    assert_eq!(l.emitters.len(), 3);
    let n = Some(DVec3::Y);
    let full = scene.amount(l, DVec3::new(6.0, 0.0, 8.0), n);
    let none = scene.amount(l, DVec3::new(6.0, 0.0, 0.0), n);
    // From (8, 0, 7) only the emitter at z = +2/3 sees past the wall's edge (z = 2).
    let part = scene.amount(l, DVec3::new(8.0, 0.0, 7.0), n);
    let mut open = level();
    let id2 = add_light(
        &mut open,
        Light { size: Vec3::new(0.0, 0.0, 2.0), ..light([0.0, 2.0, 0.0], 10.0, 30.0, LightMode::Static) },
    );
    let s = LightScene::new(&open, dark());
    let part_open = s.amount(s.light(id2).unwrap(), DVec3::new(8.0, 0.0, 7.0), n);
    assert!(full > 0.0);
    assert_eq!(none, 0.0);
    assert!(part > 0.2 * part_open && part < 0.5 * part_open, "{part} vs {part_open}");
}

#[test]
fn sloped_faces_of_pushed_cubes_do_not_shadow_themselves() {
    let mut lv = level();
    solid(&mut lv, [-4.0, -1.0, -4.0], [4.0, 0.0, 4.0]);
    solid(&mut lv, [0.0; 3], [1.0; 3]);
    let f = lv.frame();
    let addr = pmfedit_core::map::coords::CubeAddr::new(f.lattice_from_world(DVec3::ZERO), 3).unwrap();
    // Both top corners on +X pushed down to the bottom: a wedge sloping down towards +X.
    for corner in [0, 2] {
        lv.push_corner(addr, corner, glam::IVec3::new(0, -16, 0)).unwrap();
    }
    assert!(lv.get(addr.min).unwrap().0.has_pushed_corners());
    add_light(&mut lv, light([3.0, 3.0, 0.5], 20.0, 20.0, LightMode::Static));
    let slope = SurfaceFace::new(
        0,
        vec![
            DVec3::new(0.0, 1.0, 0.0),
            DVec3::new(0.0, 1.0, 1.0),
            DVec3::new(1.0, 0.0, 1.0),
            DVec3::new(1.0, 0.0, 0.0),
        ],
        DVec3::new(1.0, 1.0, 0.0),
    );
    let out = bake(&lv, dark(), &[slope], &[]);
    let lux = static_luxels(&out, 0);
    assert!(lux.len() > 4);
    assert!(lux.iter().all(|l| l[0] > 20), "{lux:?}");
}

// ----- falloff, spot ---------------------------------------------------------------------------

#[test]
fn falloff_is_inverse_square_and_fades_to_zero_at_the_range() {
    let mut lv = level();
    let id = add_light(&mut lv, light([0.0; 3], 1.0, 100.0, LightMode::Static));
    let scene = LightScene::new(&lv, dark());
    let l = scene.light(id).unwrap();
    for d in [0.25, 0.5, 1.0, 2.0, 3.5, 10.0, 40.0, 74.0] {
        let got = scene.amount(l, DVec3::new(d, 0.0, 0.0), Some(-DVec3::X));
        let want = 255.0 / (d * d);
        assert!((got - want).abs() <= 1e-9 * want, "d = {d}: {got} vs {want}");
    }
    // 255 = a white light of intensity 1 at unit distance (K2).
    assert_eq!(scene.amount(l, DVec3::new(0.0, 1.0, 0.0), Some(-DVec3::Y)), 255.0);
    // Lambert: 60° off the normal gives half.
    let tilted = DVec3::new(-0.5, 0.75f64.sqrt(), 0.0);
    let got = scene.amount(l, DVec3::new(2.0, 0.0, 0.0), Some(tilted));
    assert!((got - 255.0 / 8.0).abs() < 1e-9, "{got}");
    // Behind the surface: nothing.
    assert_eq!(scene.amount(l, DVec3::new(2.0, 0.0, 0.0), Some(DVec3::X)), 0.0);
    // Zero at and beyond the range, and no step before it.
    assert_eq!(falloff(100.0, 100.0), 0.0);
    assert_eq!(falloff(150.0, 100.0), 0.0);
    let mut prev = falloff(74.0, 100.0);
    let mut d = 74.0;
    while d < 100.0 {
        d += 0.01;
        let f = falloff(d, 100.0);
        assert!(f <= prev && prev - f < 1e-5, "step at {d}: {prev} → {f}");
        prev = f;
    }
    assert!(falloff(99.99, 100.0) < 1e-7);
}

#[test]
fn spot_cone_lights_inside_and_fades_at_the_edge() {
    let mut lv = level();
    let shape = LightShape::Spot { direction: Vec3::new(0.0, -1.0, 0.0), cone_radius: 30.0 };
    let id = add_light(&mut lv, Light { shape, ..light([0.0, 10.0, 0.0], 100.0, 50.0, LightMode::Static) });
    let scene = LightScene::new(&lv, dark());
    let l = scene.light(id).unwrap();
    let at = |x: f64| scene.amount(l, DVec3::new(x, 0.0, 0.0), Some(DVec3::Y));
    let tan = |deg: f64| 10.0 * deg.to_radians().tan();
    assert!(at(0.0) > 0.0);
    // Full strength up to 24° (with cosine and distance), nothing past 30°, in between a fade.
    let unlit = |x: f64| {
        let d2 = 100.0 + x * x;
        255.0 * 100.0 * (10.0 / d2.sqrt()) / d2
    };
    assert!((at(tan(20.0)) - unlit(tan(20.0))).abs() < 1e-9);
    assert_eq!(at(tan(30.5)), 0.0);
    let mid = at(tan(27.0));
    assert!(mid > 0.0 && mid < unlit(tan(27.0)));
}

// ----- dynamic and fast lights ---------------------------------------------------------------

#[test]
fn dynamic_light_gets_a_layer_and_no_static_contribution() {
    let mut lv = level();
    solid(&mut lv, [-10.0, -1.0, -10.0], [10.0, 0.0, 10.0]);
    let id = add_light(&mut lv, Light { color: [255, 128, 0], ..light([0.0, 2.0, 0.0], 10.0, 12.0, dynamic(7)) });
    let faces = vec![rect(0, 1, true, [-10.0, 0.0, -10.0], [10.0, 0.0, 10.0])];
    let settings = LightSettings { ambient: [8; 3], ..LightSettings::default() };
    let cells = [DVec3::new(0.0, 1.0, 0.0), DVec3::new(0.0, 1.0, 19.0)];
    let out = bake(&lv, settings, &faces, &cells);
    assert_eq!(out.dynamic_ids, vec![id]);
    assert_eq!(out.dynamic_lights, vec![pmf::DynamicLight { flags: pmf::light_flags::ENABLE, global_id: 7 }]);
    let client = &out.client_dynamic_lights[0];
    assert_eq!(client.color, [255, 128, 0]);
    assert_eq!(client.layers.len(), 1);
    let layer = &client.layers[0];
    let page = &out.lightmaps[usize::from(layer.lightmap)];
    assert_eq!(layer.luxels.len(), page.luxels.len());
    assert_eq!(layer.luxels.len(), pmf::Lightmap::byte_len(page.size_exp));
    let lux = patch_luxels(&out, 0, &layer.luxels);
    assert!(lux.iter().any(|l| l[0] > 100 && l[2] == 0 && l[1] < l[0]), "no coloured luxel");
    // The static lightmap holds only the ambient term.
    assert!(static_luxels(&out, 0).iter().all(|l| *l == [8; 3]));
    assert!(out.fast_lights.is_empty());
    // The cell near the light refers to it; base = ambient only. The far one has no reference.
    let near = out.cells[0].as_ref().unwrap();
    assert_eq!(near.base, [8; 3]);
    assert_eq!(near.dynamic().len(), 1);
    assert_eq!(near.dynamic()[0].index, 0);
    assert!(near.dynamic()[0].amount > 0);
    assert_eq!(out.cells[1], Some(pmf::CubeLighting::from_base([8; 3])));
}

#[test]
fn dynamic_light_layers_only_for_pages_it_lights() {
    let mut lv = level();
    add_light(&mut lv, light([0.0, 2.0, 0.0], 10.0, 6.0, dynamic(1)));
    // Two faces too big to share a 64-luxel page: the far one is out of the light's range.
    let faces = vec![
        rect(0, 1, true, [-15.0, 0.0, -15.0], [15.0, 0.0, 15.0]),
        rect(1, 1, true, [-15.0, -15.0, -15.0], [15.0, -15.0, 15.0]),
    ];
    let settings =
        LightSettings { ambient: [0; 3], max_page_log2: 6, luxels_per_unit: 2.0, ..LightSettings::default() };
    let out = bake(&lv, settings, &faces, &[]);
    assert_eq!(out.lightmaps.len(), 2);
    let layers = &out.client_dynamic_lights[0].layers;
    assert_eq!(layers.len(), 1);
    assert_eq!(layers[0].lightmap, out.faces[0].page());
}

#[test]
fn unreached_switchable_lights_are_left_out_of_the_chunk() {
    let mut lv = level();
    room(&mut lv);
    // Inside the closed room but the faces baked are outside: nothing is lit.
    add_light(&mut lv, light([0.0; 3], 10.0, 30.0, dynamic(1)));
    add_light(&mut lv, light([1.0; 3], 10.0, 30.0, fast(2)));
    let faces = box_faces(0, [-6.0; 3], [6.0; 3], true);
    let out = bake(&lv, dark(), &faces, &[DVec3::new(0.0, -8.0, 0.0)]);
    assert!(out.dynamic_lights.is_empty() && out.client_dynamic_lights.is_empty());
    assert!(out.fast_lights.is_empty() && out.client_fast_lights.is_empty());
    assert_eq!(out.cells, vec![None]);
}

#[test]
fn fast_light_multipliers_only_for_vertices_in_range() {
    let mut lv = level();
    let id = add_light(&mut lv, Light { color: [10, 20, 30], ..light([0.0, 1.0, 0.0], 4.0, 10.0, fast(5)) });
    // Vertices on a line across the floor, then a gap of far ones, then near ones again.
    let mut verts: Vec<LitVertex> = (0..40)
        .map(|k| {
            let p = DVec3::new(f64::from(k) * 0.5, 0.0, 0.0);
            LitVertex { position: p, normal: DVec3::Y, inside: p }
        })
        .collect();
    let far = DVec3::new(0.0, 0.0, 15.0);
    verts.extend((0..20).map(|_| LitVertex { position: far, normal: DVec3::Y, inside: far }));
    verts.extend((0..3).map(|k| {
        let p = DVec3::new(f64::from(k), 0.0, 1.0);
        LitVertex { position: p, normal: DVec3::Y, inside: p }
    }));
    let scene = LightScene::new(&lv, dark());
    let cells = [DVec3::new(2.0, 1.0, 0.0), DVec3::new(0.0, 1.0, 19.0)];
    let input = ChunkInput { chunk: chunk_at(&lv, [0.0; 3]), faces: &[], vertices: &verts, air_cells: &cells };
    let out = bake_chunk(&scene, &input).unwrap();
    assert_eq!(out.fast_ids, vec![id]);
    assert_eq!(
        out.fast_lights,
        vec![pmf::FastLight {
            flags: pmf::light_flags::ENABLE | pmf::light_flags::PRESERVE,
            initial_intensity: 200,
            global_id: 5
        }]
    );
    let client = &out.client_fast_lights[0];
    assert_eq!(client.color, [10, 20, 30]);
    let m = decode_fast_ranges(&client.ranges, verts.len());
    let light_pos = DVec3::new(0.0, 1.0, 0.0);
    for (k, v) in verts.iter().enumerate() {
        let d = v.position.distance(light_pos);
        if d >= 10.0 {
            assert_eq!(m[k], 0, "vertex {k} at distance {d} is out of range");
        } else if d < 7.0 {
            assert!(m[k] > 0, "vertex {k} at distance {d} is in range");
        }
    }
    // White-light units: a vertex right under the light gets 255 · 4 / 1 → clamped 255.
    assert_eq!(m[0], 255);
    // Two ranges: the far vertices are skipped, not stored.
    assert_eq!(client.ranges.len(), 2);
    assert!(client.ranges[1].skip >= 20);
    let stored: usize = client.ranges.iter().map(|r| r.multipliers.len()).sum();
    assert!(stored <= 20 + 3, "{stored}");
    // Cells: the near one refers to the fast light.
    let near = out.cells[0].as_ref().unwrap();
    assert_eq!(
        near.fast(),
        [pmf::LightRef { index: 0, amount: to_amount(scene.amount(scene.light(id).unwrap(), cells[0], None)) }]
    );
    assert!(near.dynamic().is_empty());
    assert_eq!(out.cells[1], None);
    // Nothing was baked into lightmaps.
    assert!(out.lightmaps.is_empty());
}

fn to_amount(v: f64) -> u8 {
    v.round().clamp(0.0, 255.0) as u8
}

#[test]
fn fast_range_encoding_examples() {
    assert!(encode_fast_ranges(&[0, 0, 0]).is_empty());
    let r = encode_fast_ranges(&[0, 0, 5, 6, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0]);
    assert_eq!(
        r,
        vec![
            pmf::FastLightRange { skip: 2, multipliers: vec![5, 6, 0, 0, 7] },
            pmf::FastLightRange { skip: 9, multipliers: vec![9] },
        ]
    );
}

#[test]
fn tight_packing_wastes_fewer_luxels_and_keeps_groups_whole() {
    let total = |pk: &Packing| pk.pages.iter().map(|p| u64::from(p.edge()).pow(2)).sum::<u64>();
    // Never worse than one page at the cap.
    let p: Vec<Patch> = (0..5).map(|k| fake_patch(k, 40, 40)).collect();
    let one = pack(&p, 9).unwrap();
    let tight = pack_tight(&p, 9).unwrap();
    check_packing(&p, &tight, 9);
    assert!(total(&tight) <= total(&one));
    // 17 patches of 32×32: one page must be 256×256 (65 536 luxels for 17 408 used); 64×64 pages
    // hold four each, five pages = 20 480 luxels.
    let p: Vec<Patch> = (0..17).map(|k| fake_patch(k, 32, 32)).collect();
    let one = pack(&p, 9).unwrap();
    assert_eq!((one.pages.len(), one.pages[0].size_log2), (1, 8));
    let tight = pack_tight(&p, 9).unwrap();
    check_packing(&p, &tight, 9);
    assert!(total(&tight) * 3 < total(&one), "{} vs {}", total(&tight), total(&one));
    assert!(tight.pages.iter().all(|pg| pg.size_log2 >= MIN_TIGHT_PAGE_LOG2 || pg.patches.len() == 1));
    // Groups stay on one page: a group of six 20×20 faces never splits, whatever the cap tried.
    let p: Vec<Patch> = (0..18).map(|k| Patch { group: 100 + k / 6, ..fake_patch(k, 20, 20) }).collect();
    let tight = pack_tight(&p, 9).unwrap();
    check_packing(&p, &tight, 9);
    for g in 0..3 {
        let pages: std::collections::BTreeSet<u8> =
            (0..18).filter(|k| k / 6 == g).map(|k| tight.placements[k as usize].page).collect();
        assert_eq!(pages.len(), 1, "group {g} split over pages {pages:?}");
    }
    // Deterministic.
    assert_eq!(pack_tight(&p, 9).unwrap(), tight);
}

proptest! {
    #[test]
    fn fast_ranges_round_trip(m in prop::collection::vec(prop_oneof![3 => Just(0u8), 1 => any::<u8>()], 0..200)) {
        let r = encode_fast_ranges(&m);
        prop_assert_eq!(decode_fast_ranges(&r, m.len()), m.clone());
        for range in &r {
            prop_assert!(range.multipliers.first().is_some_and(|&x| x != 0));
            prop_assert!(range.multipliers.last().is_some_and(|&x| x != 0));
        }
    }
}

// ----- packing -------------------------------------------------------------------------------

fn fake_patch(face: u32, width: u32, height: u32) -> Patch {
    Patch {
        group: face,
        face,
        index: face as usize,
        width,
        height,
        normal: DVec3::Y,
        u_axis: DVec3::Z,
        v_axis: DVec3::X,
        u_min: 0.0,
        v_min: 0.0,
        u_step: 0.5,
        v_step: 0.5,
        luxels: vec![DVec3::ZERO; (width * height) as usize],
    }
}

fn check_packing(patches: &[Patch], packing: &Packing, cap_log2: u8) {
    assert_eq!(packing.placements.len(), patches.len());
    assert!(packing.pages.len() <= 255);
    let mut seen = vec![false; patches.len()];
    for (pi, page) in packing.pages.iter().enumerate() {
        assert!(page.size_log2 <= cap_log2);
        let edge = page.edge();
        for (a, &k) in page.patches.iter().enumerate() {
            assert!(!seen[k]);
            seen[k] = true;
            let pl = packing.placements[k];
            assert_eq!(usize::from(pl.page), pi);
            assert_eq!(pl.page_log2, page.size_log2);
            assert_eq!((pl.rect.width, pl.rect.height), (patches[k].width, patches[k].height));
            assert!(pl.rect.x + pl.rect.width <= edge && pl.rect.y + pl.rect.height <= edge, "{pl:?} on {edge}");
            for &other in &page.patches[..a] {
                assert!(!pl.rect.overlaps(&packing.placements[other].rect), "{k} overlaps {other}");
            }
            let [u0, v0, u1, v1] = pl.uv_rect;
            assert!(0.0 < u0 && u0 <= u1 && u1 < 1.0 && 0.0 < v0 && v0 <= v1 && v1 < 1.0);
        }
    }
    assert!(seen.iter().all(|&s| s));
}

#[test]
fn patches_of_one_group_share_a_page() {
    // Three cubes' worth of six 20×20 faces each: at a 64-luxel cap a group needs most of a page
    // (its box is 60×40), so the groups land on different pages, never split.
    let p: Vec<Patch> = (0..18).map(|k| Patch { group: 100 + k / 6, ..fake_patch(k, 20, 20) }).collect();
    let pk = pack(&p, 6).unwrap();
    check_packing(&p, &pk, 6);
    for g in 0..3 {
        let pages: std::collections::BTreeSet<u8> =
            (0..18).filter(|k| k / 6 == g).map(|k| pk.placements[k as usize].page).collect();
        assert_eq!(pages.len(), 1, "group {g} split over pages {pages:?}");
    }
    assert_eq!(pk.pages.len(), 3);
    // A group that cannot fit one page is refused.
    let p: Vec<Patch> = (0..5).map(|k| Patch { group: 7, ..fake_patch(k, 40, 40) }).collect();
    assert!(matches!(pack(&p, 6), Err(LightError::PatchTooBig { .. })));
}

#[test]
fn packing_examples() {
    // One 33×33 patch (a 16-unit face at 2 luxels/unit) gets a 64-luxel page.
    let p = vec![fake_patch(0, 33, 33)];
    let pk = pack(&p, 9).unwrap();
    assert_eq!(pk.pages.len(), 1);
    assert_eq!(pk.pages[0].size_log2, 6);
    // A single luxel gets a 1×1 page.
    let pk = pack(&[fake_patch(0, 1, 1)], 9).unwrap();
    assert_eq!(pk.pages[0].size_log2, 0);
    assert_eq!(pk.placements[0].uv_rect, [0.5; 4]);
    // Four 32×32 patches fill exactly one 64 page.
    let p: Vec<Patch> = (0..4).map(|k| fake_patch(k, 32, 32)).collect();
    let pk = pack(&p, 9).unwrap();
    assert_eq!(pk.pages.len(), 1);
    assert_eq!(pk.pages[0].size_log2, 6);
    check_packing(&p, &pk, 9);
    // Pages grow only to the cap; then new pages open.
    let p: Vec<Patch> = (0..5).map(|k| fake_patch(k, 40, 40)).collect();
    let pk = pack(&p, 6).unwrap();
    assert_eq!(pk.pages.len(), 5);
    check_packing(&p, &pk, 6);
    // Errors.
    assert!(matches!(pack(&[fake_patch(3, 65, 1)], 6), Err(LightError::PatchTooBig { id: 3, .. })));
    let many: Vec<Patch> = (0..256).map(|k| fake_patch(k, 2, 2)).collect();
    assert_eq!(pack(&many, 1), Err(LightError::TooManyPages(256)));
    assert!(pack(&many[..255], 1).is_ok());
    assert_eq!(pack(&[], 13), Err(LightError::PageSize(13)));
}

proptest! {
    #[test]
    fn packing_never_overlaps_and_respects_the_page_size(
        sizes in prop::collection::vec((1u32..=128, 1u32..=128), 0..120),
        cap in 7u8..=9,
    ) {
        let patches: Vec<Patch> = sizes
            .iter()
            .enumerate()
            .map(|(k, &(w, h))| Patch { face: k as u32 % 7, ..fake_patch(k as u32, w, h) })
            .collect();
        let packing = pack(&patches, cap).unwrap();
        check_packing(&patches, &packing, cap);
        prop_assert_eq!(pack(&patches, cap).unwrap(), packing);
    }

    #[test]
    fn grouped_packing_keeps_groups_together(
        sizes in prop::collection::vec((1u32..=32, 1u32..=32, 0u32..20), 0..120),
        cap in 7u8..=9,
    ) {
        // Cube-like groups: at most six faces each (the group id is the index / 6 plus noise).
        let patches: Vec<Patch> = sizes
            .iter()
            .enumerate()
            .map(|(k, &(w, h, g))| Patch { group: (k as u32 / 6) * 20 + g % 2, ..fake_patch(k as u32, w, h) })
            .collect();
        let packing = pack(&patches, cap).unwrap();
        check_packing(&patches, &packing, cap);
        for (a, pa) in patches.iter().enumerate() {
            for (b, pb) in patches.iter().enumerate() {
                if pa.group == pb.group {
                    prop_assert_eq!(packing.placements[a].page, packing.placements[b].page);
                }
            }
        }
    }
}

// ----- patches and UVs -----------------------------------------------------------------------

#[test]
fn patches_pad_half_a_luxel_and_uvs_hit_luxel_centres() {
    let faces = vec![
        rect(0, 1, true, [0.0, 0.0, 0.0], [4.0, 0.0, 2.0]),
        rect(1, 0, false, [3.0, 0.0, 0.0], [3.0, 0.125, 0.125]),
        SurfaceFace::new(2, vec![DVec3::ZERO, DVec3::new(2.0, 0.0, 0.0), DVec3::new(0.0, 2.0, 0.0)], DVec3::Z),
    ];
    let s = LightSettings::default();
    let patches = plan_patches(&faces, &s).unwrap();
    // 4 × 2 units at 2 luxels/unit: 9 × 5 luxel centres, 0.5 apart, on the face's extent.
    let p = &patches[0];
    assert_eq!((p.width, p.height), (5, 9)); // u = Z (2 units), v = X (4 units) for a +Y face
    assert_eq!((p.u_step, p.v_step), (0.5, 0.5));
    // Samples stay inside the face by the inset.
    for l in &p.luxels {
        assert!(l.x >= s.edge_inset - 1e-12 && l.x <= 4.0 - s.edge_inset + 1e-12, "{l}");
        assert!(l.z >= s.edge_inset - 1e-12 && l.z <= 2.0 - s.edge_inset + 1e-12, "{l}");
        assert_eq!(l.y, 0.0);
    }
    // A 1/8-unit face gets one luxel.
    assert_eq!((patches[1].width, patches[1].height), (1, 1));
    assert!((patches[1].luxels[0] - DVec3::new(3.0, 0.0625, 0.0625)).length() < 1e-12);
    // Triangle: every sample inside the triangle.
    for l in &patches[2].luxels {
        assert!(l.x >= 0.0 && l.y >= 0.0 && l.x + l.y <= 2.0 + 1e-9, "{l}");
    }
    let packing = pack(&patches, s.max_page_log2).unwrap();
    for (face, (patch, pl)) in faces.iter().zip(patches.iter().zip(&packing.placements)) {
        let [u0, v0, u1, v1] = pl.uv_rect;
        for &c in &face.corners {
            let [u, v] = pl.uv_at(patch, c);
            assert!(
                u >= u0 - 1e-6 && u <= u1 + 1e-6 && v >= v0 - 1e-6 && v <= v1 + 1e-6,
                "{u},{v} vs {:?}",
                pl.uv_rect
            );
        }
    }
    // The quad's corners are exactly the corner luxels' centres.
    let pl = &packing.placements[0];
    let corner_uvs: Vec<[f32; 2]> = faces[0].corners.iter().map(|&c| pl.uv_at(&patches[0], c)).collect();
    let [u0, v0, u1, v1] = pl.uv_rect;
    for uv in [[u0, v0], [u1, v0], [u1, v1], [u0, v1]] {
        assert!(corner_uvs.iter().any(|c| (c[0] - uv[0]).abs() < 1e-6 && (c[1] - uv[1]).abs() < 1e-6));
    }
    // Bad input.
    let bad = SurfaceFace::new(9, vec![DVec3::ZERO, DVec3::X], DVec3::Y);
    assert_eq!(plan_patches(&[bad], &s), Err(LightError::BadFace { id: 9, reason: "fewer than 3 corners" }));
}

// ----- dependencies --------------------------------------------------------------------------

#[test]
fn chunk_dependencies_follow_the_light_sphere() {
    let mut lv = level();
    // World origin is the centre of chunk (2, 2, 2); chunks are 8 units.
    let a = add_light(&mut lv, light([0.0; 3], 1.0, 5.0, LightMode::Static));
    let b = add_light(&mut lv, light([3.0, 0.0, 0.0], 1.0, 2.0, dynamic(1)));
    let rt =
        Light { mode: LightMode::Realtime(RealtimeLight::default()), ..light([0.0; 3], 1.0, 50.0, LightMode::Static) };
    add_light(&mut lv, rt);
    let sized = add_light(
        &mut lv,
        Light { size: Vec3::new(6.0, 0.0, 0.0), ..light([-13.0, 0.0, 0.0], 1.0, 1.5, LightMode::Static) },
    );
    let home = ChunkCoord::new(2, 2, 2);
    assert_eq!(chunk_light_deps(&lv, home), vec![a, b]);
    // +X neighbour starts at x = 4: a (range 5) and b (3 + 2 = 5) reach it.
    assert_eq!(chunk_light_deps(&lv, ChunkCoord::new(3, 2, 2)), vec![a, b]);
    // -X neighbour spans x in [-12, -4): a, and the sized light, whose reach is its range plus
    // half its size (1.5 + 3 around x = -13).
    assert_eq!(chunk_light_deps(&lv, ChunkCoord::new(1, 2, 2)), vec![a, sized]);
    // Chunk 0 spans x in [-20, -12): only the sized light.
    assert_eq!(chunk_light_deps(&lv, ChunkCoord::new(0, 2, 2)), vec![sized]);
    assert!(chunk_light_deps(&lv, ChunkCoord::new(4, 4, 4)).is_empty());
}

// ----- determinism ---------------------------------------------------------------------------

fn busy_scene() -> (Level, Vec<SurfaceFace>, Vec<DVec3>) {
    let mut lv = level();
    room(&mut lv);
    solid(&mut lv, [-1.0, -5.0, -1.0], [1.0, 1.0, 1.0]);
    add_light(&mut lv, light([3.0, 2.0, 3.0], 15.0, 20.0, LightMode::Static));
    add_light(&mut lv, Light { size: Vec3::new(1.0, 0.0, 1.0), ..light([-3.0, 3.0, -3.0], 8.0, 12.0, dynamic(4)) });
    add_light(&mut lv, light([3.0, -3.0, -3.0], 8.0, 12.0, fast(9)));
    let mut faces = box_faces(0, [-5.0; 3], [5.0; 3], false);
    faces.extend(box_faces(6, [-1.0, -5.0, -1.0], [1.0, 1.0, 1.0], true));
    let cells = (0..8).map(|k| DVec3::new(f64::from(k) - 4.0, 2.5, -3.5)).collect();
    (lv, faces, cells)
}

#[test]
fn bake_is_deterministic_and_independent_of_face_order() {
    let (lv, faces, cells) = busy_scene();
    let settings = LightSettings {
        ao: Some(AoSettings { rays: 4, distance: 1.5 }),
        luxels_per_unit: 1.0,
        ..LightSettings::default()
    };
    let a = bake(&lv, settings.clone(), &faces, &cells);
    let b = bake(&lv, settings.clone(), &faces, &cells);
    assert_eq!(a, b);
    assert!(!a.client_dynamic_lights.is_empty() && !a.client_fast_lights.is_empty());
    assert!(a.cells.iter().all(|c| c.is_some()));
    // Reversed faces with the same ids: the same pages, the same placement per face id.
    let mut rev = faces.clone();
    rev.reverse();
    let c = bake(&lv, settings, &rev, &cells);
    assert_eq!(a.lightmaps, c.lightmaps);
    assert_eq!(a.client_dynamic_lights, c.client_dynamic_lights);
    for f in &a.faces {
        let g = c.faces.iter().find(|g| g.patch.face == f.patch.face).unwrap();
        assert_eq!(g.placement, f.placement);
    }
}

#[test]
fn scene_from_map_and_missing_level() {
    let mut map = pmfedit_core::map::Map::new("m");
    map.levels[0].objects.add(light([0.0; 3], 1.0, 5.0, LightMode::Static)).unwrap();
    let s = LightScene::from_level(&map, 0, LightSettings::default()).unwrap();
    assert_eq!(s.lights().len(), 1);
    assert!(matches!(LightScene::from_level(&map, 1, LightSettings::default()), Err(LightError::NoLevel(1))));
}

// ----- throughput ----------------------------------------------------------------------------

/// Direct lighting with shadows on a simple scene: a 32 × 32-unit floor with a grid of pillars,
/// 4 static point lights. Run with
/// `cargo test --release -p pmfedit-bake light_throughput -- --ignored --nocapture`.
#[test]
#[ignore]
fn light_throughput() {
    let mut lv = Level::new("bench", 4).unwrap();
    lv.lighting = LevelLighting::none();
    lv.set_center_chunk(ChunkCoord::new(2, 2, 2)).unwrap();
    solid(&mut lv, [-16.0, -1.0, -16.0], [16.0, 0.0, 16.0]);
    let mut faces = vec![rect(0, 1, true, [-16.0, 0.0, -16.0], [16.0, 0.0, 16.0])];
    for x in (-12..=12).step_by(6) {
        for z in (-12..=12).step_by(6) {
            let (x, z) = (f64::from(x), f64::from(z));
            solid(&mut lv, [x, 0.0, z], [x + 1.0, 4.0, z + 1.0]);
            let first = faces.len() as u32;
            faces.extend(box_faces(first, [x, 0.0, z], [x + 1.0, 4.0, z + 1.0], true));
        }
    }
    for p in [[-8.0, 3.0, -8.0], [8.0, 3.0, -8.0], [-8.0, 3.0, 8.0], [8.0, 3.0, 8.0]] {
        add_light(&mut lv, light(p, 30.0, 24.0, LightMode::Static));
    }
    let scene = LightScene::new(&lv, dark());
    let input = ChunkInput { chunk: chunk_at(&lv, [0.0; 3]), faces: &faces, vertices: &[], air_cells: &[] };
    let mut best = f64::INFINITY;
    let mut out = ChunkLighting::default();
    for _ in 0..5 {
        let t = std::time::Instant::now();
        out = bake_chunk(&scene, &input).unwrap();
        best = best.min(t.elapsed().as_secs_f64());
    }
    let luxels: usize = out.faces.iter().map(|f| f.patch.len()).sum();
    println!(
        "{luxels} luxels × 4 lights, best of 5: {best:.4} s: {:.0} luxels/s, {:.0} luxel-lights/s; {} pages",
        luxels as f64 / best,
        4.0 * luxels as f64 / best,
        out.lightmaps.len()
    );
}

// ----- sun, sky, bounce, emission ------------------------------------------------------------

/// The starter library plus material 1 "stone" (grey, the [`stone`] cubes) and material 2
/// "glow" (white, emitting `emission`), both with texture `textures/t.png`.
fn library(emission: [u8; 3]) -> pmfedit_core::map::Library {
    use pmfedit_core::map::library::Material;
    let mut lib = pmfedit_core::map::Library::starter();
    let textured = |name: &str| Material {
        texture: "textures/t.png".into(),
        color: [128; 3],
        ..Material::new(name, PhysicsId(0), SoundId(0))
    };
    lib.add(textured("stone")).unwrap();
    lib.add(Material { color: [255; 3], emission, ..textured("glow") }).unwrap();
    lib
}

/// [`library`] with the stone's colour set to `color`.
fn library_colored(color: [u8; 3]) -> pmfedit_core::map::Library {
    let mut lib = library([0; 3]);
    let mut stone = lib.materials().get(MaterialId(1)).unwrap().clone();
    stone.color = color;
    lib.replace(MaterialId(1), stone).unwrap();
    lib
}

fn glow() -> Cube {
    Cube::solid(MaterialId(2), PhysicsId(0), SoundId(0))
}

/// Sun (azimuth and elevation, degrees) and sky at their default strength, one bounce.
fn daylight(level: &mut Level, azimuth: f32, elevation: f32) {
    level.lighting = LevelLighting::default();
    level.lighting.sun.azimuth = azimuth;
    level.lighting.sun.elevation = elevation;
}

fn bake_lib(
    level: &Level,
    lib: &pmfedit_core::map::Library,
    settings: LightSettings,
    faces: &[SurfaceFace],
    cells: &[DVec3],
) -> ChunkLighting {
    let scene = LightScene::with_library(level, lib, settings);
    let input = ChunkInput { chunk: chunk_at(level, [0.0; 3]), faces, vertices: &[], air_cells: cells };
    bake_chunk(&scene, &input).unwrap()
}

/// Mean of the three channels.
fn brightness(l: [u8; 3]) -> f64 {
    l.iter().map(|&c| f64::from(c)).sum::<f64>() / 3.0
}

/// Mean brightness of face `k`'s luxels whose sample lies in the box `lo..hi`.
fn mean_in(out: &ChunkLighting, k: usize, lo: [f64; 3], hi: [f64; 3]) -> f64 {
    let patch = &out.faces[k].patch;
    let lux = static_luxels(out, k);
    let (lo, hi) = (DVec3::from(lo), DVec3::from(hi));
    let picked: Vec<f64> = patch
        .luxels
        .iter()
        .zip(&lux)
        .filter(|(p, _)| p.cmpge(lo).all() && p.cmple(hi).all())
        .map(|(_, &l)| brightness(l))
        .collect();
    assert!(!picked.is_empty(), "no luxel of face {k} in {lo}..{hi}");
    picked.iter().sum::<f64>() / picked.len() as f64
}

/// A floor slab over x, z in -16..16 (top at y = 0).
fn floor_slab(level: &mut Level) {
    solid(level, [-16.0, -1.0, -16.0], [16.0, 0.0, 16.0]);
}

#[test]
fn a_sunlit_floor_has_a_wall_shadow_on_the_side_away_from_the_sun() {
    let mut lv = level();
    floor_slab(&mut lv);
    // A wall 4 units high along Z at x 0..1; the sun stands in the west (-X), 45° up.
    solid(&mut lv, [0.0, 0.0, -6.0], [1.0, 4.0, 6.0]);
    daylight(&mut lv, 270.0, 45.0);
    let faces =
        vec![rect(0, 1, true, [-8.0, 0.0, -4.0], [0.0, 0.0, 4.0]), rect(1, 1, true, [1.0, 0.0, -4.0], [9.0, 0.0, 4.0])];
    let lib = library([0; 3]);
    let out = bake_lib(&lv, &lib, LightSettings::default(), &faces, &[]);
    let sunny_west = mean_in(&out, 0, [-7.0, -1.0, -3.0], [-1.0, 1.0, 3.0]);
    let shadow = mean_in(&out, 1, [1.5, -1.0, -3.0], [4.0, 1.0, 3.0]);
    let sunny_east = mean_in(&out, 1, [6.0, -1.0, -3.0], [8.5, 1.0, 3.0]);
    assert!(shadow * 3.0 <= sunny_west && shadow * 3.0 <= sunny_east, "{shadow} vs {sunny_west}, {sunny_east}");
    // The shadow is east of the wall, away from the sun: the west side right at the wall is lit.
    let at_wall_west = mean_in(&out, 0, [-2.0, -1.0, -3.0], [-0.2, 1.0, 3.0]);
    assert!(at_wall_west > 2.0 * shadow, "{at_wall_west} vs {shadow}");
    // With the sun in the east, the shadow moves west.
    daylight(&mut lv, 90.0, 45.0);
    let out = bake_lib(&lv, &lib, LightSettings::default(), &faces, &[]);
    let (west, east) =
        (mean_in(&out, 0, [-3.5, -1.0, -3.0], [-1.0, 1.0, 3.0]), mean_in(&out, 1, [1.5, -1.0, -3.0], [4.0, 1.0, 3.0]));
    assert!(west * 3.0 <= east, "{west} vs {east}");
}

#[test]
fn a_closed_room_without_a_lamp_stays_dark_in_daylight_however_big() {
    let dark_value = LightSettings::default().ambient;
    let mut lv = level();
    room(&mut lv);
    daylight(&mut lv, 30.0, 60.0);
    let faces = room_faces();
    let cells = [DVec3::ZERO, DVec3::new(3.0, 3.0, -3.0)];
    let out = bake_lib(&lv, &library([0; 3]), LightSettings::default(), &faces, &cells);
    for k in 0..6 {
        assert!(static_luxels(&out, k).iter().all(|&l| l == dark_value), "inner face {k} got daylight");
    }
    assert!(out.cells.iter().all(|c| c.as_ref().unwrap().base == dark_value));
    // The outside of the roof is lit: the test can fail.
    let roof = faces.iter().position(|f| f.normal == DVec3::Y && f.corners[0].y == 6.0).unwrap();
    assert!(static_luxels(&out, roof).iter().all(|l| brightness(*l) > 100.0));

    // A hall wider than the gather distance: rays that meet nothing still end under its roof.
    let mut hall = level();
    solid(&mut hall, [-19.0, -3.0, -19.0], [19.0, 6.0, 19.0]);
    air(&mut hall, [-18.0, -2.0, -18.0], [18.0, 5.0, 18.0]);
    daylight(&mut hall, 30.0, 60.0);
    assert!(36.0 > LightSettings::default().gather.distance * 2.0);
    let floor = [rect(0, 1, true, [-18.0, -2.0, -18.0], [18.0, -2.0, 18.0])];
    let out = bake_lib(&hall, &library([0; 3]), LightSettings::default(), &floor, &[DVec3::new(0.0, 1.5, 0.0)]);
    assert!(static_luxels(&out, 0).iter().all(|&l| l == dark_value));
    assert_eq!(out.cells[0].as_ref().unwrap().base, dark_value);
}

#[test]
fn light_through_a_doorway_reaches_the_door_wall_only_by_bounce() {
    // A light stone room x, z in -5..5, y 0..5, walls 1 thick, a doorway in the west wall
    // (x -6..-5) at z -2..2, y 0..4; the sun in the west shines through it onto the floor.
    let build = |bounces: u8| {
        let mut lv = level();
        floor_slab(&mut lv);
        solid(&mut lv, [-6.0, 0.0, -6.0], [6.0, 6.0, 6.0]);
        air(&mut lv, [-5.0, 0.0, -5.0], [5.0, 5.0, 5.0]);
        air(&mut lv, [-6.0, 0.0, -2.0], [-5.0, 4.0, 2.0]);
        daylight(&mut lv, 270.0, 35.0);
        lv.lighting.bounces = bounces;
        // The door wall's inside (normal +X) and the floor.
        let faces = [
            rect(0, 0, true, [-5.0, 0.0, -5.0], [-5.0, 5.0, 5.0]),
            rect(1, 1, true, [-5.0, 0.0, -5.0], [5.0, 0.0, 5.0]),
        ];
        bake_lib(&lv, &library_colored([220; 3]), LightSettings::default(), &faces, &[])
    };
    let ambient = brightness(LightSettings::default().ambient);
    let direct = build(0);
    let bounced = build(1);
    // The floor behind the doorway is sunlit either way.
    let sunny = mean_in(&direct, 1, [-3.0, -1.0, -0.5], [-1.0, 1.0, 0.5]);
    assert!(sunny > 60.0, "{sunny}");
    // The door wall away from the opening: ambient alone without bounce, clearly lit with it.
    let (lo, hi) = ([-6.0, 0.2, 3.0], [-4.0, 2.5, 4.8]);
    let without = mean_in(&direct, 0, lo, hi);
    let with = mean_in(&bounced, 0, lo, hi);
    assert!((without - ambient).abs() < 0.5, "{without}");
    assert!(with > without + 3.0, "{with} vs {without}");
}

#[test]
fn an_emissive_cube_lights_the_floor_under_it() {
    let build = |emission: [u8; 3]| {
        let mut lv = level();
        floor_slab(&mut lv);
        lv.fill_box(lattice_box(&lv, [-0.5, 1.0, -0.5], [0.5, 2.0, 0.5]), glow()).unwrap();
        let faces = [rect(0, 1, true, [-8.0, 0.0, -8.0], [8.0, 0.0, 8.0])];
        // No sun, no sky, no bounce: the cube's emission alone.
        bake_lib(&lv, &library(emission), LightSettings::default(), &faces, &[DVec3::new(0.0, 0.5, 0.0)])
    };
    let ambient = brightness(LightSettings::default().ambient);
    let lit = build([255, 200, 100]);
    let under = mean_in(&lit, 0, [-0.6, -1.0, -0.6], [0.6, 1.0, 0.6]);
    let far = mean_in(&lit, 0, [6.0, -1.0, 6.0], [8.0, 1.0, 8.0]);
    assert!(under > ambient + 15.0 && under > far + 15.0, "under {under}, far {far}");
    // Warm: the emission's colour.
    let c = luxel_near(&lit, 0, [0.0, 0.0, 0.0]);
    assert!(c[0] > c[2], "{c:?}");
    assert!(brightness(lit.cells[0].as_ref().unwrap().base) > ambient + 15.0);
    // Without emission the floor has the ambient term only.
    let unlit = build([0; 3]);
    assert!(static_luxels(&unlit, 0).iter().all(|&l| l == LightSettings::default().ambient));
}

#[test]
fn the_air_above_a_sunlit_floor_is_brighter_than_inside_a_closed_room() {
    let mut lv = level();
    floor_slab(&mut lv);
    // A closed room on the floor at x 6..14.
    solid(&mut lv, [6.0, 0.0, -4.0], [14.0, 6.0, 4.0]);
    air(&mut lv, [7.0, 0.0, -3.0], [13.0, 5.0, 3.0]);
    daylight(&mut lv, 200.0, 50.0);
    let cells = [DVec3::new(-6.0, 1.0, 0.0), DVec3::new(10.0, 2.0, 0.0)];
    let out = bake_lib(&lv, &library([0; 3]), LightSettings::default(), &[], &cells);
    let outside = out.cells[0].as_ref().unwrap().base;
    let inside = out.cells[1].as_ref().unwrap().base;
    assert_eq!(inside, LightSettings::default().ambient);
    assert!(brightness(outside) > 4.0 * brightness(inside), "{outside:?} vs {inside:?}");
}

#[test]
fn sky_light_on_an_open_plain_is_uniform() {
    let mut lv = level();
    floor_slab(&mut lv);
    lv.lighting = LevelLighting::default();
    lv.lighting.sun.intensity = 0.0;
    lv.lighting.bounces = 0;
    let faces = [rect(0, 1, true, [-12.0, 0.0, -12.0], [12.0, 0.0, 12.0])];
    let out = bake_lib(&lv, &library([0; 3]), LightSettings::default(), &faces, &[]);
    let lux = static_luxels(&out, 0);
    let sky = lv.lighting.sky;
    for c in 0..3 {
        let (lo, hi) = lux.iter().fold((u8::MAX, 0u8), |(lo, hi), l| (lo.min(l[c]), hi.max(l[c])));
        assert!(f64::from(hi) <= 1.05 * f64::from(lo), "channel {c}: {lo}..{hi}");
        // An open floor sees the whole sky: ambient + 255 · intensity · colour / 255.
        let expected =
            f64::from(LightSettings::default().ambient[c]) + f64::from(sky.color[c]) * f64::from(sky.intensity);
        assert!((f64::from(lo) - expected).abs() <= 1.0, "channel {c}: {lo} vs {expected}");
    }
}

#[test]
fn bounce_reflects_the_material_colour() {
    // A red floor in the sun, a white sky, and a north wall whose face looks south over the floor.
    let build = |floor_color: [u8; 3]| {
        let mut lv = level();
        floor_slab(&mut lv);
        solid(&mut lv, [-8.0, 0.0, 6.0], [8.0, 8.0, 7.0]);
        // The sun behind the wall: the wall's face gets sky, ambient and bounce, all white but
        // the bounce.
        daylight(&mut lv, 0.0, 60.0);
        lv.lighting.sun.color = [255; 3];
        lv.lighting.sky.color = [255; 3];
        let lib = library_colored(floor_color);
        let faces = [rect(0, 2, false, [-8.0, 0.0, 6.0], [8.0, 8.0, 6.0])];
        bake_lib(&lv, &lib, LightSettings::default(), &faces, &[])
    };
    let (lo, hi) = ([-4.0, 0.5, 5.0], [4.0, 2.5, 7.0]);
    let red = build([255, 40, 40]);
    let c = luxel_near(&red, 0, [0.0, 1.0, 6.0]);
    assert!(c[0] > c[2] + 10, "the wall is tinted by the red floor: {c:?}");
    // A black floor reflects nothing: the wall gets only sky and ambient, and is darker.
    let black = build([0; 3]);
    let k = luxel_near(&black, 0, [0.0, 1.0, 6.0]);
    assert!(k[0] < c[0] && k[0].abs_diff(k[2]) <= 1, "{k:?} vs {c:?}");
    assert!(mean_in(&black, 0, lo, hi) + 10.0 < mean_in(&red, 0, lo, hi));
}

#[test]
fn far_rays_record_the_chunks_they_cross() {
    // The sun 30° up in the east; a pillar two chunks east shadows the origin.
    let build = |pillar: bool| {
        let mut lv = level();
        floor_slab(&mut lv);
        if pillar {
            solid(&mut lv, [13.0, 0.0, -1.0], [15.0, 10.0, 1.0]);
        }
        daylight(&mut lv, 90.0, 30.0);
        lv.lighting.sun.angle = 0.0;
        let faces = [rect(0, 1, true, [-1.0, 0.0, -1.0], [1.0, 0.0, 1.0])];
        bake_lib(&lv, &library([0; 3]), LightSettings::default(), &faces, &[])
    };
    let shaded = build(true);
    let open = build(false);
    assert!(brightness(luxel_near(&shaded, 0, [0.0; 3])) * 2.0 < brightness(luxel_near(&open, 0, [0.0; 3])));
    // The bake's chunk is (2, 2, 2); the pillar's chunks (4, 2, 2) and (4, 3, 2) are read, the
    // neighbours are not listed.
    let home = ChunkCoord::new(2, 2, 2);
    assert!(
        shaded.reads.contains(&ChunkCoord::new(4, 2, 2)) || shaded.reads.contains(&ChunkCoord::new(4, 3, 2)),
        "{:?}",
        shaded.reads
    );
    assert!(shaded.reads.iter().all(|c| (c.as_ivec3() - home.as_ivec3()).abs().max_element() > 1));
    assert!(shaded.reads.windows(2).all(|w| w[0] < w[1]), "sorted");
    // Lights alone read nothing far.
    let mut lv = level();
    floor_slab(&mut lv);
    let faces = [rect(0, 1, true, [-1.0, 0.0, -1.0], [1.0, 0.0, 1.0])];
    assert!(bake_lib(&lv, &library([0; 3]), LightSettings::default(), &faces, &[]).reads.is_empty());
}

#[test]
fn daylight_bakes_are_deterministic_and_drafts_are_cheaper_approximations() {
    let (mut lv, faces, cells) = busy_scene();
    daylight(&mut lv, 120.0, 40.0);
    air(&mut lv, [-6.0, 2.0, -1.0], [-5.0, 4.0, 1.0]);
    let lib = library([40, 40, 10]);
    let settings = LightSettings { luxels_per_unit: 1.0, ..LightSettings::default() };
    let a = bake_lib(&lv, &lib, settings.clone(), &faces, &cells);
    let b = bake_lib(&lv, &lib, settings.clone(), &faces, &cells);
    assert_eq!(a, b);
    let mut rev = faces.clone();
    rev.reverse();
    let c = bake_lib(&lv, &lib, settings.clone(), &rev, &cells);
    assert_eq!(a.lightmaps, c.lightmaps, "luxels do not depend on the face order");
    let draft = LightSettings { gather: settings.gather.draft(), ..settings };
    let d = bake_lib(&lv, &lib, draft, &faces, &cells);
    assert_eq!(d.faces, a.faces, "a draft has the same layout");
    assert_ne!(d.lightmaps, a.lightmaps);
}

#[test]
fn rays_from_inside_a_pushed_cube_skip_their_first_cast_exactly() {
    // Wedges (pushed corners), one in the middle of chunk (2, 2, 2), one of edge 2 (cells of a
    // unit inside it) at the chunk's +X +Z corner, and one half a unit wide inside a subtree.
    let mut lv = level();
    floor_slab(&mut lv);
    let f = lv.frame();
    let wedges = [([0.0, 0.0, 0.0], 3), ([2.0, 0.0, 2.0], 4), ([-2.0, 0.0, 1.5], 1)];
    for (lo, log2) in wedges {
        let min = f.lattice_from_world(DVec3::from(lo));
        let edge = f64::from(1 << log2) * MIN_CUBE_EDGE;
        solid(&mut lv, lo, [lo[0] + edge, lo[1] + edge, lo[2] + edge]);
        let addr = pmfedit_core::map::coords::CubeAddr::new(min, log2).unwrap();
        for corner in [0, 2] {
            lv.push_corner(addr, corner, glam::IVec3::new(0, -16, 0)).unwrap();
        }
        assert!(lv.get(addr.min).unwrap().0.has_pushed_corners());
    }
    daylight(&mut lv, 90.0, 30.0);
    let scene = LightScene::with_library(&lv, &library([0; 3]), LightSettings::default());
    let mut dirs = gather::sphere(96);
    dirs.extend([DVec3::X, DVec3::Y, DVec3::Z, -DVec3::X, -DVec3::Y, -DVec3::Z, DVec3::ONE.normalize()]);
    let reads = |s: &LightScene<'_>| std::mem::take(&mut s.far.reads.borrow_mut().far);
    let mut inside = 0;
    for (lo, log2) in wedges {
        let min = f.lattice_from_world(DVec3::from(lo)).as_dvec3();
        let edge = f64::from(1 << log2);
        // Points strictly inside (on inner lattice lines too), on the box's faces and corners.
        let inner = [[0.5, 0.5, 0.5], [0.25, 0.25, 0.75], [0.5, 0.25, 0.5], [0.3, 0.6, 0.1]];
        let outer = [[0.0, 0.5, 0.5], [1.0, 0.5, 0.5], [0.5, 1.0, 0.5], [0.5, 0.5, 0.0], [0.0; 3], [1.0; 3]];
        for frac in inner.iter().chain(&outer) {
            let origin = min + DVec3::from(*frac) * edge;
            let mut shared = gather::Start::Unknown;
            for (i, &d) in dirs.iter().enumerate() {
                for max in [f64::INFINITY, 56.0, 0.5] {
                    *scene.far.reads.borrow_mut() = gather::ReadSet::default();
                    let fresh = scene.trace(origin, d, max, &mut gather::Start::Unknown);
                    let fresh_reads = reads(&scene);
                    *scene.far.reads.borrow_mut() = gather::ReadSet::default();
                    let skipped = scene.trace(origin, d, max, &mut shared);
                    assert_eq!(fresh, skipped, "from {origin} along {d} within {max} (ray {i})");
                    assert_eq!(fresh_reads, reads(&scene), "chunks entered from {origin} along {d}");
                }
            }
            inside += usize::from(matches!(shared, gather::Start::Inside { .. }));
        }
    }
    // The shortcut was taken at every point strictly inside a wedge, and only there.
    assert_eq!(inside, 3 * 4);
}

#[test]
fn rays_straight_up_through_open_air_skip_their_casts_exactly() {
    // Hills of stacked boxes over two chunk layers, an overhang, and a roof with a skybox.
    let mut lv = level();
    floor_slab(&mut lv);
    solid(&mut lv, [-3.0, 0.0, -3.0], [-1.0, 6.0, -1.0]);
    solid(&mut lv, [2.0, 0.0, -6.0], [5.0, 9.5, 2.0]);
    solid(&mut lv, [-8.0, 7.0, 3.0], [8.0, 7.25, 8.0]);
    solid(&mut lv, [4.0, 12.0, -2.0], [4.125, 12.125, 10.0]);
    daylight(&mut lv, 90.0, 30.0);
    let scene = LightScene::with_library(&lv, &library([0; 3]), LightSettings::default());
    let f = lv.frame();
    let mut clear = 0;
    let mut points = 0;
    for i in 0..40 {
        for k in 0..40 {
            for y in [-0.5, 0.0, 0.03125, 1.0, 5.999, 6.0, 7.1, 7.25, 9.5, 12.0, 12.125, 15.9, 19.0, 23.99] {
                let world = DVec3::new(-10.0 + 0.5 * f64::from(i) + 0.01, y, -10.0 + 0.5 * f64::from(k));
                let p = f.lattice_from_world_f(world);
                *scene.far.reads.borrow_mut() = gather::ReadSet::default();
                let fast = scene.clear_straight_up(p);
                let fast_reads = std::mem::take(&mut scene.far.reads.borrow_mut().far);
                *scene.far.reads.borrow_mut() = gather::ReadSet::default();
                let (hit, topped) = scene.trace(p, DVec3::Y, f64::INFINITY, &mut gather::Start::Unknown);
                let reads = std::mem::take(&mut scene.far.reads.borrow_mut().far);
                points += 1;
                if fast {
                    clear += 1;
                    assert!(hit.is_none() && topped, "{world}: {hit:?}");
                    assert_eq!(fast_reads, reads, "{world}");
                } else {
                    assert!(fast_reads.is_empty());
                }
            }
        }
    }
    // Most points are in open air, and the shortcut answers them.
    assert!(clear * 2 > points, "{clear} of {points}");
}

/// Bit of block `(x, y, z)` in a [`track::Blocks`] mask.
fn block_bit(mask: &track::Blocks, x: i32, y: i32, z: i32) -> bool {
    let n = track::BLOCKS_PER_AXIS;
    let b = (x + n * (y + n * z)) as usize;
    mask[b / 64] & (1 << (b % 64)) != 0
}

fn block_count(mask: &track::Blocks) -> u32 {
    mask.iter().map(|w| w.count_ones()).sum()
}

#[test]
fn a_rays_blocks_are_those_its_segment_touches_up_to_its_end() {
    let edge = 128.0;
    let size = edge / f64::from(track::BLOCKS_PER_AXIS);
    let row = 1.5 * size;
    // Across the chunk along +X in the middle of block row (y 1, z 1).
    let across = track::segment_blocks(DVec3::new(-10.0, row, row), DVec3::X, 1e9, edge);
    assert_eq!(block_count(&across), track::BLOCKS_PER_AXIS as u32);
    assert!((0..track::BLOCKS_PER_AXIS).all(|x| block_bit(&across, x, 1, 1)));
    // Stopped by a hit in block 1: blocks 0 and 1 only.
    let stopped = track::segment_blocks(DVec3::new(-10.0, row, row), DVec3::X, 10.0 + 1.5 * size, edge);
    assert_eq!(block_count(&stopped), 2);
    assert!(block_bit(&stopped, 0, 1, 1) && block_bit(&stopped, 1, 1, 1));
    // Along the plane between block rows y 0 and y 1: both rows.
    let grazing = track::segment_blocks(DVec3::new(-10.0, size, row), DVec3::X, 1e9, edge);
    assert_eq!(block_count(&grazing), 2 * track::BLOCKS_PER_AXIS as u32);
    assert!((0..track::BLOCKS_PER_AXIS).all(|x| block_bit(&grazing, x, 0, 1) && block_bit(&grazing, x, 1, 1)));
    // Starting inside the chunk, going out: from its block on.
    let out = track::segment_blocks(DVec3::new(2.5 * size, row, row), -DVec3::X, 1e9, edge);
    assert_eq!(block_count(&out), 3);
    assert!(!block_bit(&out, 3, 1, 1));
}

proptest! {
    /// Every point of a segment lies in a block of its mask (the mask may hold more: slack).
    #[test]
    fn every_point_of_a_segment_is_in_one_of_its_blocks(
        o in prop::array::uniform3(-200.0f64..328.0),
        d in prop::array::uniform3(-1.0f64..1.0),
        end in 0.0f64..400.0,
    ) {
        let edge = 128.0;
        let Some(dir) = DVec3::from(d).try_normalize() else { return Ok(()) };
        let o = DVec3::from(o);
        let mask = track::segment_blocks(o, dir, end, edge);
        let size = edge / f64::from(track::BLOCKS_PER_AXIS);
        for k in 0..=200 {
            let p = o + dir * (end * f64::from(k) / 200.0);
            if p.cmplt(DVec3::ZERO).any() || p.cmpge(DVec3::splat(edge)).any() {
                continue;
            }
            let b = (p / size).floor().as_ivec3();
            prop_assert!(block_bit(&mask, b.x, b.y, b.z), "{p} (block {b}) not in the mask");
        }
    }
}

#[test]
fn changed_blocks_are_where_solid_leaves_differ() {
    use pmfedit_core::map::coords::CubeAddr;
    use pmfedit_core::map::octree::Octree;
    let edge = 128;
    let size = edge / track::BLOCKS_PER_AXIS;
    let mut old = Octree::new(7);
    old.fill_box(LatticeBox::new(glam::IVec3::ZERO, glam::IVec3::new(edge, 16, edge)), stone());
    assert_eq!(block_count(&track::changed_blocks(Some(&old), Some(&old.clone()), edge)), 0);
    // A cube set in the air of block (1, 2, 3): that block only (the air's leaves split around
    // it, but no solid leaf changed elsewhere).
    let mut new = old.clone();
    let at = glam::IVec3::new(size + 8, 2 * size + 8, 3 * size + 8);
    new.set_cube(CubeAddr::containing(at, 3), stone()).unwrap();
    let mask = track::changed_blocks(Some(&old), Some(&new), edge);
    assert_eq!(block_count(&mask), 1);
    assert!(block_bit(&mask, 1, 2, 3));
    // A cube carved out of the floor of block (2, 0, 1).
    let mut carved = old.clone();
    carved.set_cube(CubeAddr::containing(glam::IVec3::new(2 * size + 8, 8, size + 8), 3), Cube::EMPTY).unwrap();
    let mask = track::changed_blocks(Some(&old), Some(&carved), edge);
    assert!(block_bit(&mask, 2, 0, 1));
    assert!(!block_bit(&mask, 0, 3, 0), "the air above the floor did not change");
    // A chunk that appeared or went: every block.
    let all = (track::BLOCKS_PER_AXIS as u32).pow(3);
    assert_eq!(block_count(&track::changed_blocks(None, Some(&old), edge)), all);
    assert_eq!(block_count(&track::changed_blocks(None, None, edge)), 0);
}
