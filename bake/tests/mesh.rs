//! Layout, meshing and chunk glue against small hand-built maps.

use glam::{IVec3, Vec3};
use pmfedit_bake::BakeSettings;
use pmfedit_bake::chunk::{BakeError, ChunkGeometry, bake_geometry};
use pmfedit_bake::layout::ChunkLayout;
use pmfedit_bake::mesh::{
    FaceId, FaceShape, LightmapRect, Mesh, mesh_chunk, mesh_chunk_reference, mesh_visible_faces,
    mesh_visible_faces_into, visible_faces,
};
use pmfedit_core::format::pmf;
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr, Face, LatticeBox};
use pmfedit_core::map::library::Material;
use pmfedit_core::map::octree::{Cube, CubeKind, ExtGeometry, MaterialId, Octree, PhysicsId, SoundId};
use pmfedit_core::map::{Level, Map};
use proptest::prelude::*;

/// The chunk most tests use (the default center chunk, 16 map units).
const C: ChunkCoord = Level::DEFAULT_CENTER;

struct World {
    map: Map,
    stone: MaterialId,
    glass: MaterialId,
    water: MaterialId,
}

fn world() -> World {
    let mut map = Map::new("test");
    let (p, s) = (PhysicsId(0), SoundId(0));
    let stone = MaterialId(0);
    let glass = map.library.add(Material { transparent: true, ..Material::new("glass", p, s) }).unwrap();
    let water = map.library.add(Material { liquid: true, ..Material::new("water", p, s) }).unwrap();
    World { map, stone, glass, water }
}

impl World {
    fn level(&mut self) -> &mut Level {
        &mut self.map.levels[0]
    }

    /// The 1-unit cube at map-unit offset `p` from the minimum corner of chunk `C`.
    fn unit(&self, p: IVec3) -> CubeAddr {
        let f = self.map.levels[0].frame();
        CubeAddr::new(f.chunk_min_lattice(C) + p * 8, 3).unwrap()
    }

    fn set(&mut self, a: CubeAddr, cube: Cube) {
        self.level().set_cube(a, cube).unwrap();
    }

    fn put(&mut self, p: IVec3, m: MaterialId) {
        let a = self.unit(p);
        self.level().set_cube(a, Cube::solid(m, PhysicsId(0), SoundId(0))).unwrap();
    }

    fn bake(&self, chunk: ChunkCoord) -> ChunkGeometry {
        bake_geometry(&self.map, 0, chunk, &BakeSettings::default()).unwrap()
    }

    fn mesh(&self) -> Mesh {
        self.bake(C).mesh
    }
}

fn faces_of(m: &Mesh, material: MaterialId) -> usize {
    m.faces.iter().filter(|f| f.material == material).count()
}

fn v(x: i32, y: i32, z: i32) -> IVec3 {
    IVec3::new(x, y, z)
}

#[test]
fn a_lone_cube_has_six_faces() {
    let mut w = world();
    w.put(v(3, 4, 5), w.stone);
    let m = w.mesh();
    assert_eq!(m.faces.len(), 6);
    assert_eq!(m.quad_count(), 6);
    assert_eq!(m.vertices.len(), 24);
    assert_eq!(m.cubes.len(), 1);
    assert_eq!(m.cubes[0].face_bits, 0b11_1111);
    // Faces in PMF order.
    let order: Vec<Face> = m.faces.iter().map(|f| f.face).collect();
    assert_eq!(order, Face::ALL.to_vec());
    // Positions relative to the chunk center (8, 8, 8) in map units.
    for vx in &m.vertices {
        for (i, &c) in vx.position.iter().enumerate() {
            let lo = [3.0, 4.0, 5.0][i] - 8.0;
            assert!(c == lo || c == lo + 1.0, "{:?}", vx.position);
        }
    }
    // The vertices are the world corners of the cube.
    let corners = m.world_corners(FaceId(0));
    let f = w.map.levels[0].frame();
    let min = f.world_from_lattice(w.unit(v(3, 4, 5)).min);
    assert!(corners.iter().all(|c| c.x == min.x + 1.0));
}

#[test]
fn two_touching_cubes_have_ten_faces() {
    let mut w = world();
    w.put(v(3, 4, 5), w.stone);
    w.put(v(4, 4, 5), w.stone);
    let m = w.mesh();
    assert_eq!(m.faces.len(), 10);
    assert_eq!(m.cubes[0].face_bits & m.cubes[1].face_bits, 0b11_0110);
    // Not touching (diagonal): 12.
    let mut w = world();
    w.put(v(3, 4, 5), w.stone);
    w.put(v(4, 5, 5), w.stone);
    assert_eq!(w.mesh().faces.len(), 12);
}

#[test]
fn chunk_borders_cull_on_both_sides() {
    let mut w = world();
    w.put(v(15, 0, 7), w.stone); // last cell of C along +X
    w.put(v(16, 0, 7), w.stone); // first cell of the next chunk
    let east = ChunkCoord::new(C.x + 1, C.y, C.z);
    let a = w.bake(C).mesh;
    let b = w.bake(east).mesh;
    assert_eq!(a.faces.len(), 5);
    assert_eq!(b.faces.len(), 5);
    assert!(a.faces.iter().all(|f| f.face != Face::PosX));
    assert!(b.faces.iter().all(|f| f.face != Face::NegX));
    // And below: the cube at y = 0 of C touches chunk y − 1.
    w.put(v(15, -1, 7), w.stone);
    let a = w.bake(C).mesh;
    assert_eq!(a.faces.len(), 4);
    let below = w.bake(ChunkCoord::new(C.x, C.y - 1, C.z)).mesh;
    assert_eq!(below.faces.len(), 5);
}

#[test]
fn transparency_rules() {
    // Glass next to stone: both faces stay.
    let mut w = world();
    w.put(v(3, 4, 5), w.glass);
    w.put(v(4, 4, 5), w.stone);
    let m = w.mesh();
    assert_eq!(faces_of(&m, w.glass), 6);
    assert_eq!(faces_of(&m, w.stone), 6);
    // Two glass cubes: the shared faces go.
    let mut w = world();
    w.put(v(3, 4, 5), w.glass);
    w.put(v(4, 4, 5), w.glass);
    assert_eq!(w.mesh().faces.len(), 10);
    // Water next to glass: both stay.
    let mut w = world();
    w.put(v(3, 4, 5), w.water);
    w.put(v(4, 4, 5), w.glass);
    let m = w.mesh();
    assert_eq!((faces_of(&m, w.water), faces_of(&m, w.glass)), (6, 6));
    // Water in a stone basin: the water's top stays, its walls stay (kept against different
    // materials), the stone walls facing the water stay.
    let mut w = world();
    w.put(v(3, 4, 5), w.water);
    w.put(v(3, 4, 6), w.water);
    w.put(v(3, 3, 5), w.stone);
    let m = w.mesh();
    assert_eq!(faces_of(&m, w.water), 10);
    assert_eq!(faces_of(&m, w.stone), 6);
}

#[test]
fn partial_coverage_keeps_the_whole_face() {
    // A 2-unit stone cube with its +X side covered by four 1-unit cubes: culled.
    let mut w = world();
    let f = w.map.levels[0].frame();
    let big = CubeAddr::new(f.chunk_min_lattice(C) + v(2, 2, 2) * 8, 4).unwrap();
    w.set(big, Cube::solid(w.stone, PhysicsId(0), SoundId(0)));
    for (y, z) in [(2, 2), (2, 3), (3, 2), (3, 3)] {
        w.put(v(4, y, z), w.stone);
    }
    let m = w.mesh();
    assert!(m.faces.iter().filter(|f| f.size == 2.0).all(|f| f.face != Face::PosX));
    assert_eq!(m.faces.iter().filter(|f| f.size == 2.0).count(), 5);
    // Take one small cube away: the big face comes back, whole.
    let a = w.unit(v(4, 3, 3));
    w.level().clear_cube(a).unwrap();
    let m = w.mesh();
    let px: Vec<_> = m.faces.iter().filter(|f| f.size == 2.0 && f.face == Face::PosX).collect();
    assert_eq!(px.len(), 1);
    assert_eq!(px[0].vertex_count, 4);
    // A small cube against a big one is covered.
    assert!(m.faces.iter().filter(|f| f.size == 1.0).all(|f| f.face != Face::NegX));
}

#[test]
fn quads_are_ccw_from_outside_and_start_at_the_smallest_uv() {
    let mut w = world();
    w.put(v(3, 4, 5), w.stone);
    let f = w.map.levels[0].frame();
    let big = CubeAddr::new(f.chunk_min_lattice(C) + v(8, 8, 8) * 8, 5).unwrap();
    w.set(big, Cube::solid(w.glass, PhysicsId(0), SoundId(0)));
    let m = w.mesh();
    assert_eq!(m.faces.len(), 12);
    for id in m.face_ids() {
        let face = m.face(id);
        let vs = m.face_vertices(id);
        assert_eq!(vs.len(), 4);
        let p: Vec<Vec3> = vs.iter().map(|v| Vec3::from_array(v.position)).collect();
        let n = face.face.normal().as_vec3();
        for (a, b, c) in [(0, 1, 2), (0, 2, 3)] {
            let cross = (p[b] - p[a]).cross(p[c] - p[a]);
            assert!(cross.dot(n) > 0.0, "{:?}: triangle ({a},{b},{c}) is not CCW from outside", face.face);
            assert_eq!(cross.normalize(), n);
        }
        let uv0 = vs[0].uv;
        for v in vs {
            assert!(v.uv[0] >= uv0[0] && v.uv[1] >= uv0[1], "{:?}: first corner is not the smallest uv", face.face);
        }
        // One texture repeat per map unit; the smallest uv lies in [0, 1).
        let span = vs.iter().map(|v| v.uv[0]).fold(f32::MIN, f32::max) - uv0[0];
        assert_eq!(f64::from(span), face.size);
        assert!((0.0..1.0).contains(&uv0[0]) && (0.0..1.0).contains(&uv0[1]));
        // Lightmap UVs start at 0.
        assert!(vs.iter().all(|v| v.lightmap_uv == [0.0, 0.0]));
    }
    // Walls are upright: v grows downward (−Y) on side faces.
    let side = m.faces.iter().position(|f| f.face == Face::PosZ).unwrap() as u32;
    let vs = m.face_vertices(FaceId(side));
    assert!(vs[1].position[1] < vs[0].position[1] && vs[1].uv[1] > vs[0].uv[1]);
}

#[test]
fn lightmap_assignment_maps_the_square_onto_the_rect() {
    let mut w = world();
    w.put(v(3, 4, 5), w.stone);
    let mut m = w.mesh();
    let rect = LightmapRect { min: [0.25, 0.5], max: [0.5, 0.75] };
    m.assign_lightmap(FaceId(2), 3, rect);
    let vs = m.face_vertices(FaceId(2));
    assert_eq!(vs[0].lightmap_uv, [0.25, 0.5]);
    assert_eq!(vs[1].lightmap_uv, [0.25, 0.75]);
    assert_eq!(vs[2].lightmap_uv, [0.5, 0.75]);
    assert_eq!(vs[3].lightmap_uv, [0.5, 0.5]);
    assert_eq!(m.face(FaceId(2)).lightmap, Some((3, rect)));
    // Other faces untouched.
    assert!(m.face_vertices(FaceId(1)).iter().all(|v| v.lightmap_uv == [0.0, 0.0]));
}

#[test]
fn pushed_corners_make_triangles_and_collapsed_faces_none() {
    let mut w = world();
    let a = w.unit(v(3, 4, 5));
    let cube = Cube::solid(w.stone, PhysicsId(0), SoundId(0))
        .with_corner_pushed(0, [0, -16, 0]) // +X+Y+Z down to the bottom
        .with_corner_pushed(1, [0, -16, 0]); // −X+Y+Z down to the bottom
    w.set(a, cube);
    // A stone cube on top of it: its −Y face is not covered by the slanted top.
    w.put(v(3, 5, 5), w.stone);
    let g = w.bake(C);
    let m = &g.mesh;
    let cm = m.cubes.iter().find(|c| c.extended).unwrap();
    // +X: one corner onto another (1 triangle); +Y: slanted plane (2); +Z: collapsed to a line (0).
    assert_eq!(cm.triangle_counts, [1, 2, 0, 1, 2, 2]);
    assert_eq!(cm.face_bits, 0b11_1011);
    let tris: usize = cm.triangle_counts.iter().map(|&n| usize::from(n)).sum();
    let ext_vertices = m.faces.iter().filter(|f| matches!(f.shape, FaceShape::Triangles(_)));
    assert_eq!(ext_vertices.map(|f| f.vertex_count as usize).sum::<usize>(), 3 * tris);
    // Every triangle is CCW from outside the wedge (y + z <= 1 in the cube): its normal points
    // away from a point inside.
    let center = Vec3::new(3.5, 4.25, 5.25) - Vec3::splat(8.0);
    for f in m.faces.iter().filter(|f| f.cube == cm.cube) {
        let vs = &m.vertices[f.first_vertex as usize..(f.first_vertex + f.vertex_count) as usize];
        for t in vs.chunks(3) {
            let p = t.iter().map(|v| Vec3::from_array(v.position)).collect::<Vec<_>>();
            let n = (p[1] - p[0]).cross(p[2] - p[0]);
            assert!(n.length() > 0.0);
            assert!(n.dot(p[0] - center) > 0.0, "{:?} triangle faces inward", f.face);
        }
    }
    // The stone cube above keeps its bottom face (the neighbour's top is pushed).
    let top = m.cubes.iter().find(|c| !c.extended).unwrap();
    assert_ne!(top.face_bits & (1 << Face::NegY.index()), 0);
    // The common cube record: moved points only, relative to the cube center (C4).
    let pmf::CubeKind::ExtGeometry(e) = &g.cubes[cm.cube as usize].kind else { panic!("not extended") };
    assert_eq!(e.points.get(0), Some([0.5, -0.5, 0.5]));
    assert_eq!(e.points.get(1), Some([-0.5, -0.5, 0.5]));
    assert!(e.points.corners()[2..].iter().all(Option::is_none));
}

#[test]
fn an_unpushed_extended_cube_culls_and_is_culled_like_a_plain_one() {
    let mut w = world();
    w.put(v(3, 4, 5), w.stone);
    let a = w.unit(v(4, 4, 5));
    let painted = Cube::solid(w.stone, PhysicsId(0), SoundId(0)).with_face_material(Face::PosY, w.glass);
    assert!(matches!(painted.kind, CubeKind::Extended(_)));
    w.set(a, painted);
    let m = w.mesh();
    assert_eq!(m.faces.len(), 10);
    let ext = m.cubes.iter().find(|c| c.extended).unwrap();
    assert_eq!(ext.triangle_counts, [2, 2, 2, 0, 2, 2]);
}

/// Two slope cubes side by side, their tops pushed down to follow one surface (as the terrain's
/// are): the faces they share have the same outline and hide each other, whichever chunk each is
/// in; where the outlines differ (or a material is clear) both stay.
#[test]
fn slopes_side_by_side_hide_the_faces_they_share() {
    // Top corners (bits 0..=3: +X+Y+Z, −X+Y+Z, +X+Y−Z, −X+Y−Z) pushed down by the surface height
    // at that corner: `drop(x, z)` steps.
    let slope = |w: &World, drops: [i32; 4], m: MaterialId| {
        let mut c = Cube::solid(w.stone, PhysicsId(0), SoundId(0));
        for (corner, d) in drops.into_iter().enumerate() {
            if d != 0 {
                c = c.with_corner_pushed(corner, [0, -d, 0]);
            }
        }
        if m != w.stone {
            for f in Face::ALL {
                c = c.with_face_material(f, m);
            }
        }
        c
    };
    let shared = |m: &Mesh, cube_face: Face| {
        m.cubes.iter().filter(|c| c.extended && c.face_bits & (1 << cube_face.index()) != 0).count()
    };
    // x = 15 in chunk C and x = 0 in the chunk east of it: a surface falling along +X, the same
    // height (4 steps) on the shared edge.
    let east = ChunkCoord::new(C.x + 1, C.y, C.z);
    for (own_drops, matching) in [([4, 0, 4, 0], true), ([6, 0, 6, 0], false)] {
        let mut w = world();
        let a = w.unit(v(15, 4, 5));
        let f = w.map.levels[0].frame();
        let b = CubeAddr::new(f.chunk_min_lattice(east) + v(0, 4, 5) * 8, 3).unwrap();
        // West cube: +X corners (0, 2) dropped 4 steps (or 6), −X corners at rest.
        let west_cube = slope(&w, own_drops, w.stone);
        // East cube: −X corners (1, 3) dropped 4 steps, +X corners 8.
        let east_cube = slope(&w, [8, 4, 8, 4], w.stone);
        w.set(a, west_cube);
        w.set(b, east_cube);
        let (mw, me) = (w.bake(C).mesh, w.bake(east).mesh);
        assert_eq!(shared(&mw, Face::PosX), usize::from(!matching), "west +X, matching {matching}");
        assert_eq!(shared(&me, Face::NegX), usize::from(!matching), "east −X, matching {matching}");
        // The reference mesher agrees.
        let s = BakeSettings::default();
        let layout = ChunkLayout::build(w.map.levels[0].chunk(C).unwrap().octree(), &s);
        let reference = mesh_chunk_reference(&w.map.levels[0], &w.map.library, C, &layout, &s);
        assert_eq!(reference.faces.len(), mw.faces.len());
        // Every other face of both cubes stays (nothing else touches them).
        let faces = |m: &Mesh| m.cubes.iter().find(|c| c.extended).unwrap().face_bits.count_ones();
        assert_eq!(faces(&mw) + faces(&me), 10 + 2 * u32::from(!matching));
    }
    // A clear slope beside an opaque one of the same outline: both faces stay (the stone is seen
    // through the glass, and a clear face is kept against another material, G4).
    let mut w = world();
    let (a, b) = (w.unit(v(3, 4, 5)), w.unit(v(4, 4, 5)));
    let west = slope(&w, [4, 0, 4, 0], w.stone);
    let east = slope(&w, [8, 4, 8, 4], w.glass);
    w.set(a, west);
    w.set(b, east);
    let m = w.mesh();
    assert_eq!(m.cubes.len(), 2);
    assert!(m.cubes.iter().all(|c| c.face_bits == 0b11_1111), "every face of both stays");
}

fn pmf_file(w: &World, chunk: pmf::Chunk) -> pmf::File {
    let lib = &w.map.library;
    let (materials, client_materials): (Vec<_>, Vec<_>) = lib.materials().iter().map(|(_, m)| m.to_pmf()).unzip();
    let level = pmf::Level {
        common: pmf::LevelCommon {
            materials,
            physics_materials: lib.physics_materials().iter().map(|(_, p)| p.to_pmf()).collect(),
            sound_materials: lib.sound_materials().iter().map(|(_, s)| s.to_pmf()).collect(),
            ..pmf::LevelCommon::default()
        },
        client: pmf::LevelClient { materials: client_materials, ..pmf::LevelClient::default() },
        chunk_size_exp: w.map.levels[0].chunk_size_log2(),
        chunks: vec![chunk],
        ..pmf::Level::default()
    };
    pmf::File {
        header: pmf::Header { name: "t".into(), ..pmf::Header::default() },
        levels: vec![level],
        ..pmf::File::default()
    }
}

#[test]
fn the_pmf_chunk_writes_and_reads_back() {
    let mut w = world();
    w.put(v(3, 4, 5), w.stone);
    w.put(v(4, 4, 5), w.glass);
    w.put(v(0, 0, 0), w.water);
    let a = w.unit(v(9, 9, 9));
    let pushed = Cube::solid(w.glass, PhysicsId(0), SoundId(0)).with_corner_pushed(7, [4, 2, 16]);
    w.set(a, Cube { draw_backfaces: true, ..pushed });
    let mut g = w.bake(C);
    for id in g.mesh.face_ids().collect::<Vec<_>>() {
        g.mesh.assign_lightmap(id, 0, LightmapRect { min: [0.0, 0.0], max: [1.0, 1.0] });
    }
    let chunk = g.to_pmf().unwrap();
    // Pre-order: the glass cube at (9, 9, 9) (octant +X+Y+Z) first, then (4, 4, 5), (3, 4, 5), (0, 0, 0).
    assert_eq!(chunk.common.used_materials, ["glass", "default", "water"]);
    assert_eq!(chunk.common.used_sound_materials, ["0"]);
    assert_eq!(chunk.client.vertices.len(), g.mesh.vertices.len());
    assert!(chunk.common.cubes.iter().any(|c| c.draw_backfaces));
    let file = pmf_file(&w, chunk);
    let bytes = pmf::write(&file).unwrap();
    let back = pmf::read(&bytes).unwrap();
    assert_eq!(back, file);
    // The geometry records index the vertex array within bounds.
    let n = back.levels[0].chunks[0].client.vertices.len() as u32;
    for c in &back.levels[0].chunks[0].client.cubes {
        match &c.geometry {
            pmf::ClientGeometry::Geometry(g) => assert!(g.first_vertex + 4 * g.faces.count_ones() <= n),
            pmf::ClientGeometry::ExtGeometry(g) => {
                let t: u32 = g.triangle_counts.iter().map(|&t| u32::from(t)).sum();
                assert!(g.first_vertex + 3 * t <= n);
            }
            pmf::ClientGeometry::None => {}
        }
    }
    // An empty chunk is one empty root cube.
    let empty = w.bake(ChunkCoord::new(0, 0, 0)).to_pmf().unwrap();
    assert_eq!(empty.common.cubes, vec![pmf::Cube::default()]);
    let file = pmf_file(&w, empty);
    assert_eq!(pmf::read(&pmf::write(&file).unwrap()).unwrap(), file);
}

#[test]
fn used_lists_follow_first_use_and_sound_names_are_export_indices() {
    let mut w = world();
    let s1 = w.map.library.add(pmfedit_core::map::library::SoundMaterial::new("metal")).unwrap();
    let s2 = w.map.library.add(pmfedit_core::map::library::SoundMaterial::new("wood")).unwrap();
    // Cube order in pre-order: bit 0 (+X+Y+Z) octants come first, so the cube at the top corner
    // of the chunk is listed before the one at the bottom corner.
    let hi = w.unit(v(15, 15, 15));
    let lo = w.unit(v(0, 0, 0));
    w.set(lo, Cube::solid(w.stone, PhysicsId(0), s1));
    w.set(hi, Cube::solid(w.water, PhysicsId(0), s2));
    let g = w.bake(C);
    assert_eq!(g.used.materials, [w.water, w.stone]);
    assert_eq!(g.used.sounds, [s2, s1]);
    assert_eq!(g.sound_names, ["2", "1"]);
}

#[test]
fn more_than_255_materials_in_a_chunk_is_refused() {
    let mut w = world();
    let mut mats = Vec::new();
    for i in 0..256 {
        mats.push(w.map.library.add(Material::new(format!("m{i}"), PhysicsId(0), SoundId(0))).unwrap());
    }
    for (i, &m) in mats.iter().enumerate() {
        let i = i as i32;
        w.put(v(i % 16, i / 16, 0), m);
    }
    let err = bake_geometry(&w.map, 0, C, &BakeSettings::default()).unwrap_err();
    assert!(matches!(err, BakeError::TooManyUsed { count: 256, .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("chunk (x 2048, y 128, z 2048)") && msg.contains("256 materials"), "{msg}");
    // 255 is fine.
    let last = w.unit(v(15, 15, 0));
    w.set(last, Cube::solid(mats[0], PhysicsId(0), SoundId(0)));
    assert!(bake_geometry(&w.map, 0, C, &BakeSettings::default()).is_ok());
}

#[test]
fn bakes_are_deterministic_and_independent_of_far_edits() {
    let mut w = world();
    let mut seed = 0x1234_5678_u32;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    for _ in 0..400 {
        let p = v((rnd() % 18) as i32 - 1, (rnd() % 18) as i32 - 1, (rnd() % 18) as i32 - 1);
        let m = [w.stone, w.glass, w.water][(rnd() % 3) as usize];
        w.put(p, m);
        if rnd() % 5 == 0 {
            let a = w.unit(p);
            let k = (rnd() % 8) as usize;
            w.level().push_corner(a, k, IVec3::new(-3, 5, 2)).unwrap();
        }
    }
    let a = w.bake(C);
    assert_eq!(a, w.bake(C));
    let snapshot = w.map.snapshot();
    // An edit two chunks away changes nothing here; an edit of the neighbour does.
    w.put(v(40, 0, 0), w.stone);
    assert_eq!(bake_geometry(&w.map, 0, C, &BakeSettings::default()).unwrap(), a);
    assert_eq!(bake_geometry(&snapshot, 0, C, &BakeSettings::default()).unwrap(), a);
    let bytes = |g: &ChunkGeometry, w: &World| pmf::write(&pmf_file(w, g.to_pmf().unwrap())).unwrap();
    assert_eq!(bytes(&a, &w), bytes(&w.bake(C), &w));
}

#[test]
fn layout_indices_match_the_pmf_cubes() {
    let mut w = world();
    w.put(v(3, 4, 5), w.stone);
    let g = w.bake(C);
    assert_eq!(g.cubes.len(), g.layout.len());
    for (i, c) in g.layout.cubes().iter().enumerate() {
        assert_eq!(g.layout.index_of(c.addr), Some(i as u32));
        match (&g.cubes[i].kind, c.is_parent(), c.is_air(), c.is_solid()) {
            (pmf::CubeKind::Parent(p), true, false, false) => {
                assert_eq!(p.indices().map(|k| k.unwrap()), c.children.unwrap());
                assert!(p.present().all(|k| k as usize > i), "pre-order");
            }
            (pmf::CubeKind::Empty, false, true, false) | (pmf::CubeKind::Geometry(_), false, false, true) => {}
            other => panic!("cube {i}: {other:?}"),
        }
    }
    assert_eq!(g.layout.solid_cubes().len(), 1);
    assert!(g.layout.air_cells().len() > 500);
}

#[test]
fn culling_matches_a_cell_by_cell_check() {
    // Random unit cubes of three materials over chunk C and its +X neighbour; merged 2-unit and
    // bigger cubes appear where eight equal cubes meet, so partial coverage is exercised.
    for seed in [1u32, 77, 4242] {
        let mut w = world();
        let mut s = seed;
        let mut rnd = move || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s
        };
        let f = w.map.levels[0].frame();
        // A solid 4-unit block to get big faces, then holes and different materials around it.
        let block = CubeAddr::new(f.chunk_min_lattice(C) + v(12, 4, 4) * 8, 5).unwrap();
        w.set(block, Cube::solid(w.stone, PhysicsId(0), SoundId(0)));
        for _ in 0..1500 {
            let p = v((rnd() % 24) as i32, (rnd() % 16) as i32, (rnd() % 16) as i32);
            match rnd() % 5 {
                0 => {
                    let a = w.unit(p);
                    w.level().clear_cube(a).unwrap();
                }
                1 => w.put(p, w.glass),
                2 => w.put(p, w.water),
                _ => w.put(p, w.stone),
            }
        }
        let lib = &w.map.library;
        let clear = |m: MaterialId| lib.materials().get(m).is_some_and(|m| m.transparent || m.liquid);
        let level = &w.map.levels[0];
        let g = w.bake(C);
        let mut checked = 0;
        for &i in g.layout.solid_cubes() {
            let c = &g.layout.cubes()[i as usize];
            let CubeKind::Geometry(geo) = c.cube.unwrap().kind else { panic!("only plain cubes here") };
            let addr = c.addr.translated(f.chunk_min_lattice(C));
            let cells = addr.edge() / 8;
            let mut expected = 0u8;
            for face in Face::ALL {
                let (a, b) = ((face.axis() + 1) % 3, (face.axis() + 2) % 3);
                let mut visible = false;
                for da in 0..cells {
                    for db in 0..cells {
                        let mut p = addr.min;
                        p[a] += da * 8;
                        p[b] += db * 8;
                        p[face.axis()] =
                            if face.is_positive() { addr.max()[face.axis()] } else { addr.min[face.axis()] - 1 };
                        let (n, _) = level.get(p).unwrap();
                        let covered = match n.kind {
                            CubeKind::Geometry(ng) if clear(geo.material) => ng.material == geo.material,
                            CubeKind::Geometry(ng) => !clear(ng.material),
                            _ => false,
                        };
                        visible |= !covered;
                    }
                }
                expected |= u8::from(visible) << face.index();
            }
            assert_eq!(g.mesh.cube_mesh(i).unwrap().face_bits, expected, "seed {seed}, cube {:?}", c.addr);
            checked += 1;
        }
        assert!(checked > 500, "{checked}");
        assert!(g.layout.solid_cubes().iter().any(|&i| g.layout.cubes()[i as usize].addr.size_log2 > 3));
    }
}

/// Phase 1 alone: the face bits and counts of a small scene, by hand.
#[test]
fn phase_one_decides_the_faces_and_counts_them() {
    // A 3×3×3 stone block with a glass cube in its centre, a water cube on top of the block and
    // a lone glass cube two units away (glass against glass culls, against stone and water not).
    let mut w = world();
    for x in 2..5 {
        for y in 2..5 {
            for z in 2..5 {
                let m = if (x, y, z) == (3, 3, 3) { w.glass } else { w.stone };
                w.put(v(x, y, z), m);
            }
        }
    }
    w.put(v(3, 5, 3), w.water);
    w.put(v(7, 3, 3), w.glass);
    w.put(v(8, 3, 3), w.glass);
    let s = BakeSettings::default();
    let level = &w.map.levels[0];
    let layout = ChunkLayout::build(level.chunk(C).unwrap().octree(), &s);
    let faces = visible_faces(level, &w.map.library, C, &layout);
    assert_eq!(faces.len(), layout.solid_cubes().len());
    let bits_at = |p: IVec3| {
        let addr = w.unit(p).translated(-level.frame().chunk_min_lattice(C));
        let k = layout.solid_cubes().iter().position(|&i| layout.cubes()[i as usize].addr == addr).unwrap();
        faces.face_bits(k)
    };
    // The glass centre sees stone all round: every face kept; the stone faces around it too.
    assert_eq!(bits_at(v(3, 3, 3)), 0b11_1111);
    assert_eq!(bits_at(v(2, 3, 3)), 1 << Face::PosX.index() | 1 << Face::NegX.index());
    // The stone above the glass, under the water, keeps its top (water is clear) and its bottom
    // (glass); the water keeps all six faces.
    assert_eq!(bits_at(v(3, 4, 3)), 1 << Face::PosY.index() | 1 << Face::NegY.index());
    assert_eq!(bits_at(v(3, 5, 3)), 0b11_1111);
    // Two glass cubes side by side hide the faces they share.
    assert_eq!(bits_at(v(7, 3, 3)), 0b11_1111 & !(1 << Face::PosX.index()));
    assert_eq!(bits_at(v(8, 3, 3)), 0b11_1111 & !(1 << Face::NegX.index()));
    // Block: 54 outer faces, 6 around the glass; glass 6; water 6; glass pair 10.
    assert_eq!(faces.face_count(), 54 + 6 + 6 + 6 + 10);
    assert_eq!(faces.vertex_count(), 4 * faces.face_count());
    assert!((0..faces.len()).all(|k| !faces.is_extended(k)));
    // Phase 2 turns them into the reference's records.
    let mesh = mesh_visible_faces(level, C, &layout, &s, &faces);
    assert_eq!(mesh.faces.len(), faces.face_count());
    assert_eq!(mesh, mesh_chunk_reference(level, &w.map.library, C, &layout, &s));
}

/// Phase 2 floors texture coordinates by integer shifts where the scale allows it; at the ends
/// of `texture_repeat_log2` (scales beyond 2^-62 or above 1 per 1/16 lattice unit) it falls back
/// to `f64` floors. Every vertex bit is still the reference's, in a chunk far from the origin.
#[test]
fn extreme_texture_repeats_give_the_reference_bits() {
    let mut w = world();
    w.put(v(3, 4, 5), w.stone);
    w.put(v(1, 2, 2), w.glass);
    let a = w.unit(v(9, 9, 9));
    w.set(a, Cube::solid(w.water, PhysicsId(0), SoundId(0)).with_corner_pushed(7, [4, 2, 16]));
    let f = w.map.levels[0].frame();
    let big = CubeAddr::new(f.chunk_min_lattice(C) + v(12, 0, 12) * 8, 5).unwrap();
    w.set(big, Cube::solid(w.stone, PhysicsId(0), SoundId(0)));
    let level = &w.map.levels[0];
    let layout = ChunkLayout::build(level.chunk(C).unwrap().octree(), &BakeSettings::default());
    let bits = |m: &Mesh| -> Vec<u32> {
        m.vertices.iter().flat_map(|v| v.position.into_iter().chain(v.uv)).map(f32::to_bits).collect()
    };
    for repeat_log2 in [i8::MIN, -9, -8, -7, -1, 0, 55, 56, 57, i8::MAX] {
        let s = BakeSettings { texture_repeat_log2: repeat_log2, ..BakeSettings::default() };
        let fast = mesh_chunk(level, &w.map.library, C, &layout, &s);
        let reference = mesh_chunk_reference(level, &w.map.library, C, &layout, &s);
        assert_eq!(fast.faces.len(), 6 + 6 + 6 + 6);
        assert_eq!(bits(&fast), bits(&reference), "texture_repeat_log2 {repeat_log2}");
        assert_eq!(fast, reference, "texture_repeat_log2 {repeat_log2}");
    }
}

/// Phase 1 against the faces the reference emits, and phase 2 into a reused mesh: for each
/// chunk, every solid cube's face bits and extended flag, and the face and vertex counts.
fn check_phases(w: &World, s: &BakeSettings, chunks: &[ChunkCoord]) -> Result<(), TestCaseError> {
    let level = &w.map.levels[0];
    let f = level.frame();
    // A mesh left over from another chunk: phase 2 must not keep anything of it.
    let mut reused = Mesh::default();
    for &chunk in chunks {
        let empty = Octree::new(f.chunk_lattice_log2());
        let layout = ChunkLayout::build(level.chunk(chunk).map_or(&empty, |c| c.octree()), s);
        let reference = mesh_chunk_reference(level, &w.map.library, chunk, &layout, s);
        let faces = visible_faces(level, &w.map.library, chunk, &layout);
        prop_assert_eq!(faces.len(), reference.cubes.len(), "chunk {:?}", chunk);
        for (k, cm) in reference.cubes.iter().enumerate() {
            let addr = layout.cubes()[cm.cube as usize].addr;
            prop_assert_eq!(faces.face_bits(k), cm.face_bits, "chunk {:?}, cube {:?}", chunk, addr);
            prop_assert_eq!(faces.is_extended(k), cm.extended, "chunk {:?}, cube {:?}", chunk, addr);
        }
        prop_assert_eq!(
            faces.iter_face_bits().collect::<Vec<_>>(),
            reference.cubes.iter().map(|c| c.face_bits).collect::<Vec<_>>()
        );
        prop_assert_eq!(faces.face_count(), reference.faces.len(), "chunk {:?}", chunk);
        prop_assert_eq!(faces.vertex_count(), reference.vertices.len(), "chunk {:?}", chunk);
        mesh_visible_faces_into(level, chunk, &layout, s, &faces, &mut reused);
        prop_assert_eq!(&reused, &reference, "chunk {:?}", chunk);
        prop_assert!(reused.vertices.capacity() >= reference.vertices.len());
    }
    Ok(())
}

/// One random edit of [`random_chunks`]: `(chunk, size_log2, lattice offset from the chunk's
/// minimum corner, cube, fill a box instead of one cube)`.
type RandomEdit = (ChunkCoord, u8, IVec3, Cube, bool);

fn random_cube() -> impl Strategy<Value = Cube> {
    // Library ids of `world()`: stone 0 (opaque), glass 1, water 2, and 3 (not in the library:
    // opaque).
    let mat = (0u16..4).prop_map(MaterialId);
    let plain = mat.clone().prop_map(|m| Cube::solid(m, PhysicsId(0), SoundId(0)));
    let extended = (
        prop::array::uniform6(mat),
        prop::collection::vec((0usize..8, 0usize..3, -16i8..=16), 0..3),
        prop::bool::weighted(0.5),
    )
        .prop_map(|(m, pushes, along_faces)| {
            let mut corners = [[0i8; 3]; 8];
            for (c, a, v) in pushes {
                corners[c][a] = v;
            }
            // Half of them push only within the face planes (faces stay in their planes but not
            // at rest: they are culled and never cover).
            if along_faces {
                for (c, corner) in corners.iter_mut().enumerate() {
                    corner[c % 3] = 0;
                }
            }
            Cube {
                kind: CubeKind::Extended(ExtGeometry {
                    face_materials: m,
                    face_physics: [PhysicsId(0); 6],
                    sound: SoundId(0),
                    corners,
                }),
                ..Cube::EMPTY
            }
        });
    let kind = prop_oneof![2 => Just(Cube::EMPTY), 6 => plain, 2 => extended];
    (kind, prop::bool::weighted(0.1)).prop_map(|(c, b)| Cube { draw_backfaces: b, ..c }.normalized())
}

fn random_edit() -> impl Strategy<Value = RandomEdit> {
    // Chunk C (16 units, 128 lattice units) and the grid's corner chunk (out-of-grid neighbours);
    // offsets reach a few units into the neighbours.
    let chunk = prop_oneof![4 => Just(C), 1 => Just(ChunkCoord::new(0, 0, 0))];
    (chunk, 1u8..=6, prop::array::uniform3(-24i32..152), random_cube(), prop::bool::weighted(0.15))
        .prop_map(|(c, s, p, cube, fill)| (c, s, IVec3::from_array(p), cube, fill))
}

/// Applies [`random_edit`]s to `w`'s level; edits the level refuses (outside the grid) are
/// skipped.
fn apply_edits(w: &mut World, edits: Vec<RandomEdit>) {
    let f = w.map.levels[0].frame();
    for (chunk, size_log2, p, cube, fill) in edits {
        let at = f.chunk_min_lattice(chunk) + p;
        let a = CubeAddr::containing(at, size_log2);
        if fill {
            let b = LatticeBox::new(at, at + IVec3::new(40, 8, 24));
            let _ = w.level().fill_box(b, cube.flattened());
        } else {
            let _ = w.level().set_cube(a, cube);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// The cell grid's shortcut meshes random chunks (leaves from 1/4 to 8 units, opaque, clear
    /// and unknown materials, extended cubes pushed or at rest, neighbours present, missing or
    /// outside the grid) exactly as asking the leaves face by face does, and computes the same
    /// vertex bits by integers as the reference does in `f64` vectors.
    #[test]
    fn the_cell_grid_meshes_like_the_reference(edits in prop::collection::vec(random_edit(), 1..80), repeat_log2 in -3i8..=3) {
        let mut w = world();
        apply_edits(&mut w, edits);
        let f = w.map.levels[0].frame();
        let level = &w.map.levels[0];
        let s = BakeSettings { texture_repeat_log2: repeat_log2, ..BakeSettings::default() };
        for chunk in [C, ChunkCoord::new(0, 0, 0), ChunkCoord::new(C.x + 1, C.y, C.z)] {
            let empty = Octree::new(f.chunk_lattice_log2());
            let layout = ChunkLayout::build(level.chunk(chunk).map_or(&empty, |c| c.octree()), &s);
            let fast = mesh_chunk(level, &w.map.library, chunk, &layout, &s);
            let reference = mesh_chunk_reference(level, &w.map.library, chunk, &layout, &s);
            // Bit for bit (`==` on floats would let -0.0 pass for 0.0).
            let bits = |m: &Mesh| -> Vec<u32> {
                m.vertices.iter().flat_map(|v| v.position.into_iter().chain(v.uv).chain(v.lightmap_uv)).map(f32::to_bits).collect()
            };
            prop_assert_eq!(bits(&fast), bits(&reference), "chunk {:?}", chunk);
            let origins = |m: &Mesh| -> Vec<[u64; 3]> { m.faces.iter().map(|f| f.origin.to_array().map(f64::to_bits)).collect() };
            prop_assert_eq!(origins(&fast), origins(&reference), "chunk {:?}", chunk);
            prop_assert_eq!(fast, reference, "chunk {:?}", chunk);
        }
    }

    /// Phase 1's face bits are the faces the reference emits, and phase 2 makes its mesh, on the
    /// same random chunks (mixed sizes, clear and unknown materials, extended cubes, borders).
    #[test]
    fn phase_one_decides_the_reference_faces(edits in prop::collection::vec(random_edit(), 1..80)) {
        let mut w = world();
        apply_edits(&mut w, edits);
        check_phases(&w, &BakeSettings::default(), &[C, ChunkCoord::new(0, 0, 0), ChunkCoord::new(C.x + 1, C.y, C.z)])?;
    }

    /// The same on sloped terrain across a chunk border: columns whose top cubes follow one
    /// surface of random corner heights (neighbouring slopes share outlines, so the faces they
    /// share hide each other), some glass or water, cube sizes 1 or 2 units, random edits on top.
    #[test]
    fn phase_one_decides_the_reference_faces_on_slopes(
        heights in prop::collection::vec(0i32..=16, 81),
        mats in prop::collection::vec(prop_oneof![6 => Just(0u16), 2 => Just(1u16), 1 => Just(2u16)], 64),
        size_log2 in 3u8..=4,
        flat_every in 0u32..4,
        edits in prop::collection::vec(random_edit(), 0..12),
    ) {
        let mut w = world();
        let f = w.map.levels[0].frame();
        let e = 1i32 << size_log2;
        // 8 × 8 columns centred on the +X border of chunk C, tops at lattice y = 48.
        let origin = f.chunk_min_lattice(C) + IVec3::new(128 - 4 * e, 48 - e, 32);
        for cx in 0..8 {
            for cz in 0..8 {
                let min = origin + IVec3::new(cx * e, 0, cz * e);
                let mat = MaterialId(mats[(cx * 8 + cz) as usize]);
                let mut top = Cube::solid(mat, PhysicsId(0), SoundId(0));
                // Corners 0..=3 are the top ones; corner i sits at +X if bit 0 is clear, +Z if bit 1 is.
                for corner in 0..4 {
                    let (dx, dz) = (i32::from(corner & 1 == 0), i32::from(corner & 2 == 0));
                    let h = heights[((cx + dx) * 9 + cz + dz) as usize];
                    // Now and then a flat column (a plain neighbour of a slope).
                    if flat_every == 0 || !((cx + cz) as u32).is_multiple_of(flat_every + 1) {
                        top = top.with_corner_pushed(corner, [0, -h, 0]);
                    }
                }
                w.set(CubeAddr::new(min, size_log2).unwrap(), top);
                w.set(CubeAddr::new(min - IVec3::new(0, e, 0), size_log2).unwrap(), Cube::solid(w.stone, PhysicsId(0), SoundId(0)));
            }
        }
        apply_edits(&mut w, edits);
        check_phases(&w, &BakeSettings::default(), &[C, ChunkCoord::new(C.x + 1, C.y, C.z)])?;
    }
}
