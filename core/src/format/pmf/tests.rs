//! Tests of the PMF reader and writer: byte vectors for each record (read and write), round trips
//! (records and whole files, proptest), hostile input (truncation, forged counts, broken octrees,
//! draft layout) and writer refusals.

use std::sync::Arc;

use proptest::prelude::*;
use proptest::{array, collection::vec, option};

use super::read::{self as rd, CubeHeader};
use super::strings::{StringTable, StringTableBuilder};
use super::types::*;
use super::write as wr;
use super::{read, write};
use crate::format::bin::{ReadError, ReadErrorKind, ReadResult, Reader, Writer};
use crate::format::lz4_block::Compression;
use crate::format::lz4f;

// =============================================================================================
// Small helpers

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn u32b(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

fn f32b(v: f32) -> [u8; 4] {
    v.to_le_bytes()
}

fn f32sb(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn ci(y: u8, x: u16, z: u16) -> ChunkIndex {
    ChunkIndex { y, x, z }
}

/// A parent cube of these children (cube indices in bit order, none 0).
fn parent(children: [Option<u32>; 8]) -> CubeKind {
    CubeKind::Parent(ParentCube::from_indices(children).expect("no child is the root"))
}

fn read_err(bytes: &[u8]) -> ReadError {
    match read(bytes) {
        Ok(_) => panic!("expected a read error"),
        Err(e) => e,
    }
}

fn assert_err_contains(bytes: &[u8], needle: &str) -> ReadError {
    let e = read_err(bytes);
    assert!(e.to_string().contains(needle), "error {e:?} does not mention {needle:?}");
    e
}

/// A forged count must fail fast: by the count cap or by running out of bytes, never by trying.
fn assert_count_refused(e: &ReadError) {
    assert!(
        matches!(e.kind, ReadErrorKind::CountTooLarge { .. } | ReadErrorKind::Truncated { .. }),
        "forged count was not refused by the count cap / bounds check: {e}"
    );
}

// =============================================================================================
// Record test vectors: one table drives both the read test and the write test.

/// The string table shared by the vectors: `""` at 0, `"stone"` at 1, `"rock"` at 7.
const VECTOR_TABLE: &[u8] = b"\0stone\0rock\0";

fn vector_builder() -> StringTableBuilder {
    let mut b = StringTableBuilder::new();
    b.intern("stone");
    b.intern("rock");
    b
}

/// One record of any kind, so that a single table can hold vectors of all of them.
#[derive(Debug, Clone, PartialEq)]
enum Rec {
    ChunkIndex(ChunkIndex),
    Grid(GridSize),
    Vertex(Vertex),
    Region(Region),
    EnvRegion(EnvironmentRegion),
    Material(Material),
    /// A whole common level block: its own string table, then the materials.
    LevelCommon(LevelCommon),
    Physics(PhysicsMaterial),
    Sound(SoundMaterial),
    Lightmap(Lightmap),
    Cube(Cube, CubeHeader),
    Visibility(Visibility),
    Lighting(CubeLighting),
    PathAttr(PathAttribute),
    ClientGeometry(ClientGeometryCube),
    ClientExtGeometry(ClientExtGeometryCube),
    DynamicLight(DynamicLight),
    FastLight(FastLight),
    ClientFastLight(ClientFastLight),
}

/// Writes `rec` with a builder pre-seeded like [`VECTOR_TABLE`]; returns the record bytes and the
/// final table bytes.
fn write_rec(rec: &Rec) -> Result<(Vec<u8>, Vec<u8>), super::WriteError> {
    let mut w = Writer::new();
    let mut b = vector_builder();
    match rec {
        Rec::ChunkIndex(c) => wr::write_chunk_index(&mut w, *c),
        Rec::Grid(g) => wr::write_grid_size(&mut w, *g, "t")?,
        Rec::Vertex(v) => wr::write_vertex(&mut w, v),
        Rec::Region(r) => wr::write_region(&mut w, r, "t")?,
        Rec::EnvRegion(r) => wr::write_environment_region(&mut w, &mut b, r, "t")?,
        Rec::Material(m) => wr::write_material(&mut w, &mut b, m, "t")?,
        Rec::LevelCommon(c) => w.bytes(&wr::write_level_common(c, "t")?),
        Rec::Physics(m) => wr::write_physics_material(&mut w, &mut b, m, "t")?,
        Rec::Sound(m) => wr::write_sound_material(&mut w, m),
        Rec::Lightmap(l) => wr::write_lightmap(&mut w, l, "t")?,
        Rec::Cube(c, h) => wr::write_cube(&mut w, c, *h, "t")?,
        Rec::Visibility(v) => wr::write_visibility(&mut w, v, "t")?,
        Rec::Lighting(l) => wr::write_lighting(&mut w, l, "t")?,
        Rec::PathAttr(a) => wr::write_path_attribute(&mut w, &mut b, a, "t")?,
        Rec::ClientGeometry(g) => wr::write_client_geometry_cube(&mut w, g, "t")?,
        Rec::ClientExtGeometry(g) => wr::write_client_ext_geometry_cube(&mut w, g),
        Rec::DynamicLight(l) => wr::write_dynamic_light(&mut w, l),
        Rec::FastLight(l) => wr::write_fast_light(&mut w, l),
        Rec::ClientFastLight(l) => wr::write_client_fast_light(&mut w, l, "t")?,
    }
    Ok((w.into_inner(), b.bytes().to_vec()))
}

/// Reads a record of the same kind as `template` from `bytes`, strings resolving through `table`.
/// The record must consume `bytes` exactly.
fn read_rec(template: &Rec, bytes: &[u8], table: &[u8]) -> ReadResult<Rec> {
    let mut tbytes = u32b(table.len() as u32).to_vec();
    tbytes.extend_from_slice(table);
    let mut tr = Reader::new(&tbytes, "table");
    let t = StringTable::read(&mut tr)?;
    let mut r = Reader::new(bytes, "vector");
    let out = match template {
        Rec::ChunkIndex(_) => Rec::ChunkIndex(rd::read_chunk_index(&mut r)?),
        Rec::Grid(_) => Rec::Grid(rd::read_grid_size(&mut r)?),
        Rec::Vertex(_) => Rec::Vertex(rd::read_vertex(&mut r)?),
        Rec::Region(_) => Rec::Region(rd::read_region(&mut r)?),
        Rec::EnvRegion(_) => Rec::EnvRegion(rd::read_environment_region(&mut r, &t)?),
        Rec::Material(_) => Rec::Material(rd::read_material(&mut r, &t)?),
        Rec::LevelCommon(_) => Rec::LevelCommon(rd::read_level_common(&mut r)?),
        Rec::Physics(_) => Rec::Physics(rd::read_physics_material(&mut r, &t)?),
        Rec::Sound(_) => Rec::Sound(rd::read_sound_material(&mut r)?),
        Rec::Lightmap(_) => Rec::Lightmap(rd::read_lightmap(&mut r)?),
        Rec::Cube(..) => {
            let (c, h) = rd::read_cube(&mut r, &mut Default::default())?;
            Rec::Cube(c, h)
        }
        Rec::Visibility(_) => Rec::Visibility(rd::read_visibility(&mut r, &mut Default::default())?),
        Rec::Lighting(_) => Rec::Lighting(rd::read_lighting(&mut r)?),
        Rec::PathAttr(_) => Rec::PathAttr(rd::read_path_attribute(&mut r, &t)?),
        Rec::ClientGeometry(_) => Rec::ClientGeometry(rd::read_client_geometry_cube(&mut r)?),
        Rec::ClientExtGeometry(_) => Rec::ClientExtGeometry(rd::read_client_ext_geometry_cube(&mut r)?),
        Rec::DynamicLight(_) => Rec::DynamicLight(rd::read_dynamic_light(&mut r)?),
        Rec::FastLight(_) => Rec::FastLight(rd::read_fast_light(&mut r)?),
        Rec::ClientFastLight(_) => Rec::ClientFastLight(rd::read_client_fast_light(&mut r)?),
    };
    r.expect_end()?;
    Ok(out)
}

fn vectors() -> Vec<(&'static str, Rec, Vec<u8>)> {
    let one = [0x00, 0x00, 0x80, 0x3F]; // 1.0
    let m_one = [0x00, 0x00, 0x80, 0xBF]; // -1.0
    let half = [0x00, 0x00, 0x00, 0x3F]; // 0.5
    let m_two = [0x00, 0x00, 0x00, 0xC0]; // -2.0
    let quarter = [0x00, 0x00, 0x80, 0x3E]; // 0.25
    let zero = [0u8; 4];
    let corners: [[f32; 3]; 8] = std::array::from_fn(|i| [i as f32, -(i as f32), 0.5 * i as f32]);
    let corner_bytes: Vec<u8> = corners.iter().flat_map(|c| f32sb(c)).collect();
    vec![
        ("chunk index y1 x2 z3", Rec::ChunkIndex(ci(1, 2, 3)), vec![0x03, 0x20, 0x00, 0x01]),
        ("chunk index max", Rec::ChunkIndex(ci(255, 4095, 4095)), vec![0xFF, 0xFF, 0xFF, 0xFF]),
        ("chunk index x only", Rec::ChunkIndex(ci(0, 1, 0)), vec![0x00, 0x10, 0x00, 0x00]),
        ("grid 1x1x1", Rec::Grid(GridSize { y: 1, x: 1, z: 1 }), vec![0, 0, 0, 0]),
        ("grid 256x4096x1", Rec::Grid(GridSize { y: 256, x: 4096, z: 1 }), vec![0x00, 0xF0, 0xFF, 0xFF]),
        ("grid 2x3x4", Rec::Grid(GridSize { y: 2, x: 3, z: 4 }), vec![0x03, 0x20, 0x00, 0x01]),
        (
            "vertex",
            Rec::Vertex(Vertex { position: [1.0, -2.0, 0.5], uv: [0.25, 1.0], lightmap_uv: [0.0, -1.0] }),
            cat(&[&one, &m_two, &half, &quarter, &one, &zero, &m_one]),
        ),
        (
            "region",
            Rec::Region(Region {
                max: [1.0, 1.0, 1.0],
                min: [-1.0, -1.0, -1.0],
                other_chunks: vec![ci(0, 1, 0), ci(2, 0, 5)],
            }),
            cat(&[&one, &one, &one, &m_one, &m_one, &m_one, &[2, 0, 0, 0], &[0x00, 0x10, 0, 0], &[5, 0, 0, 2]]),
        ),
        (
            "environment region",
            Rec::EnvRegion(EnvironmentRegion { corners, environment: "rock".into() }),
            cat(&[&corner_bytes, &[7, 0, 0, 0]]),
        ),
        (
            "material",
            Rec::Material(Material {
                name: "stone".into(),
                user_type: String::new(),
                flags: material_flags::LIQUID | material_flags::TRANSPARENT,
                render_mode: RenderMode::Add,
            }),
            vec![1, 0, 0, 0, 0, 0, 0, 0, 3, 1],
        ),
        (
            "level common block with a material table",
            Rec::LevelCommon(LevelCommon {
                materials: vec![Material {
                    name: "stone".into(),
                    user_type: "solid".into(),
                    flags: 0,
                    render_mode: RenderMode::Normal,
                }],
                sound_materials: vec![SoundMaterial { volume_dampening: 0.5, frequency_dampening: 0.25 }],
                air_physics_material: "stone".into(),
                ..Default::default()
            }),
            cat(&[
                &[13, 0, 0, 0],
                b"\0stone\0solid\0",
                &[1, 0],
                &[1, 0, 0, 0, 7, 0, 0, 0, 0, 0],
                &[0, 0],
                &[1, 0],
                &half,
                &quarter,
                &[1, 0, 0, 0],
                &[0, 0],
                &[0, 0, 0, 0, 0, 0, 0, 0],
            ]),
        ),
        (
            "physics material",
            Rec::Physics(PhysicsMaterial {
                name: "rock".into(),
                flags: physics_flags::NOT_SOLID,
                friction_or_max_speed: 1.0,
                traction: 0.5,
                bounce: 0.25,
                damage_min_speed: -1.0,
                damage_base: -2.0,
                damage_per_mps: 0.0,
            }),
            cat(&[&[7, 0, 0, 0, 1], &one, &half, &quarter, &m_one, &m_two, &zero]),
        ),
        (
            "sound material",
            Rec::Sound(SoundMaterial { volume_dampening: 0.25, frequency_dampening: -1.0 }),
            cat(&[&quarter, &m_one]),
        ),
        (
            "lightmap exp 1",
            Rec::Lightmap(Lightmap { size_exp: 1, luxels: (1..=12).collect() }),
            vec![1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
        ),
        ("lightmap exp 0", Rec::Lightmap(Lightmap { size_exp: 0, luxels: vec![9, 8, 7] }), vec![0, 9, 8, 7]),
        (
            "parent cube (flags and child order)",
            Rec::Cube(
                Cube {
                    draw_backfaces: true,
                    visibility: None,
                    kind: parent([Some(1), None, None, Some(2), None, None, None, Some(0x0403_0201)]),
                },
                CubeHeader { lighting: true, pathfinding: false },
            ),
            vec![0xA1, 0x89, 1, 0, 0, 0, 2, 0, 0, 0, 0x01, 0x02, 0x03, 0x04],
        ),
        (
            "geometry cube",
            Rec::Cube(
                Cube {
                    draw_backfaces: false,
                    visibility: None,
                    kind: CubeKind::Geometry(GeometryCube { material: 1, physics_material: 0, sound_material: 2 }),
                },
                CubeHeader { lighting: false, pathfinding: true },
            ),
            vec![0x42, 1, 0, 2],
        ),
        (
            "extended geometry cube with 2 moved points",
            Rec::Cube(
                Cube {
                    draw_backfaces: false,
                    visibility: None,
                    kind: CubeKind::ExtGeometry(ExtGeometryCube {
                        materials: [0, 1, 2, 3, 4, 5],
                        physics_materials: [5, 4, 3, 2, 1, 0],
                        sound_material: 7,
                        points: MovedPoints::new([
                            None,
                            Some([1.0, -1.0, 0.5]),
                            None,
                            None,
                            None,
                            None,
                            Some([0.25, 0.0, -2.0]),
                            None,
                        ]),
                    }),
                },
                CubeHeader::default(),
            ),
            cat(&[&[0x03, 0, 1, 2, 3, 4, 5, 5, 4, 3, 2, 1, 0, 7, 0x42], &one, &m_one, &half, &quarter, &zero, &m_two]),
        ),
        (
            "empty cube with visibility, lighting and pathfinding flags",
            Rec::Cube(
                Cube {
                    draw_backfaces: false,
                    visibility: Some(Box::new(Visibility { cubes: vec![3].into(), chunks: vec![].into() })),
                    kind: CubeKind::Empty,
                },
                CubeHeader { lighting: true, pathfinding: true },
            ),
            vec![0x70, 1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0],
        ),
        (
            "visibility data",
            Rec::Visibility(Visibility {
                cubes: vec![2, 5].into(),
                chunks: vec![
                    VisibleChunk { chunk: ci(1, 0, 2), cubes: vec![] },
                    VisibleChunk { chunk: ci(0, 0, 0), cubes: vec![7] },
                ]
                .into(),
            }),
            vec![
                2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, //
                2, 0, 0, 0, //
                2, 0, 0, 1, 0, 0, 0, 0, //
                0, 0, 0, 0, 1, 0, 0, 0, 7, 0, 0, 0,
            ],
        ),
        (
            "lighting data",
            Rec::Lighting(CubeLighting::new(
                [10, 20, 30],
                vec![LightRef { index: 0, amount: 255 }],
                vec![LightRef { index: 1, amount: 128 }, LightRef { index: 0, amount: 64 }],
            )),
            vec![10, 20, 30, 1, 0, 255, 2, 1, 128, 0, 64],
        ),
        (
            "pathfinding attribute",
            Rec::PathAttr(PathAttribute { name: "stone".into(), direction: [0.0, 0.0, 1.0] }),
            cat(&[&[1, 0, 0, 0], &zero, &zero, &one]),
        ),
        (
            "client geometry cube",
            Rec::ClientGeometry(ClientGeometryCube { lightmap: 2, first_vertex: 0x0102_0304, faces: 0b10_0101 }),
            vec![2, 4, 3, 2, 1, 0x25],
        ),
        (
            "client extended geometry cube",
            Rec::ClientExtGeometry(ClientExtGeometryCube {
                first_vertex: 9,
                lightmaps: [1, 2, 3, 4, 5, 6],
                triangle_counts: [0, 1, 2, 0, 4, 255],
            }),
            vec![9, 0, 0, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 0, 4, 255],
        ),
        (
            "dynamic light",
            Rec::DynamicLight(DynamicLight {
                flags: light_flags::ENABLE | light_flags::PRESERVE,
                global_id: 0x0A0B_0C0D,
            }),
            vec![3, 0x0D, 0x0C, 0x0B, 0x0A],
        ),
        (
            "fast light",
            Rec::FastLight(FastLight { flags: light_flags::ENABLE, initial_intensity: 200, global_id: 1 }),
            vec![1, 200, 1, 0, 0, 0],
        ),
        (
            "client fast light",
            Rec::ClientFastLight(ClientFastLight {
                color: [1, 2, 3],
                ranges: vec![FastLightRange { skip: 4, multipliers: vec![9, 8] }],
            }),
            vec![1, 2, 3, 1, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 9, 8],
        ),
    ]
}

#[test]
fn vectors_read() {
    for (name, rec, bytes) in vectors() {
        let got = read_rec(&rec, &bytes, VECTOR_TABLE).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got, rec, "{name}");
    }
}

#[test]
fn vectors_write() {
    for (name, rec, bytes) in vectors() {
        let (got, table) = write_rec(&rec).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got, bytes, "{name}");
        assert_eq!(table, VECTOR_TABLE, "{name}: the vector used a string outside the shared table");
    }
}

#[test]
fn vectors_truncated_fail() {
    for (name, rec, bytes) in vectors() {
        for n in 0..bytes.len() {
            assert!(read_rec(&rec, &bytes[..n], VECTOR_TABLE).is_err(), "{name} truncated to {n} bytes");
        }
    }
}

// =============================================================================================
// Strategies

fn fl() -> BoxedStrategy<f32> {
    prop_oneof![
        4 => -1.0e6f32..1.0e6f32,
        1 => Just(0.0f32),
        1 => Just(f32::MAX),
        1 => Just(f32::MIN),
        1 => Just(f32::MIN_POSITIVE),
        1 => Just(-1.0e-40f32),
    ]
    .boxed()
}

fn f2() -> BoxedStrategy<[f32; 2]> {
    array::uniform2(fl()).boxed()
}

fn f3() -> BoxedStrategy<[f32; 3]> {
    array::uniform3(fl()).boxed()
}

/// Strings without NUL; often short and repeated (to exercise deduplication).
fn st() -> BoxedStrategy<String> {
    prop_oneof!["[ab]{0,2}", "[^\\x00]{0,10}"].boxed()
}

fn arb_chunk_index() -> BoxedStrategy<ChunkIndex> {
    (any::<u8>(), 0u16..4096, 0u16..4096).prop_map(|(y, x, z)| ChunkIndex { y, x, z }).boxed()
}

fn arb_grid() -> BoxedStrategy<GridSize> {
    (1u16..=256, 1u16..=4096, 1u16..=4096).prop_map(|(y, x, z)| GridSize { y, x, z }).boxed()
}

fn arb_vertex() -> BoxedStrategy<Vertex> {
    (f3(), f2(), f2()).prop_map(|(position, uv, lightmap_uv)| Vertex { position, uv, lightmap_uv }).boxed()
}

fn arb_region() -> BoxedStrategy<Region> {
    (f3(), f3(), vec(arb_chunk_index(), 0..4))
        .prop_map(|(max, min, other_chunks)| Region { max, min, other_chunks })
        .boxed()
}

fn arb_env_region() -> BoxedStrategy<EnvironmentRegion> {
    (array::uniform8(f3()), st()).prop_map(|(corners, environment)| EnvironmentRegion { corners, environment }).boxed()
}

fn arb_material() -> BoxedStrategy<Material> {
    (st(), st(), any::<u8>(), prop_oneof![Just(RenderMode::Normal), Just(RenderMode::Add)])
        .prop_map(|(name, user_type, flags, render_mode)| Material { name, user_type, flags, render_mode })
        .boxed()
}

fn arb_client_material() -> BoxedStrategy<ClientMaterial> {
    (
        (st(), vec(st(), 0..3), any::<u32>(), f2()),
        (any::<[u8; 3]>(), any::<u8>(), any::<[u8; 3]>(), any::<u8>(), any::<u8>()),
        (st(), f3(), fl(), fl(), fl()),
    )
        .prop_map(
            |(
                (texture, extra_textures, texture_advance_time_us, uv_scroll),
                (color, alpha, emission, shading, shine),
                (matcap_texture, velocity, wind_influence, offset, scale),
            )| ClientMaterial {
                texture,
                extra_textures,
                texture_advance_time_us,
                uv_scroll,
                color,
                alpha,
                emission,
                shading,
                shine,
                matcap_texture,
                wave: WaveInfo { velocity, wind_influence, offset, scale },
            },
        )
        .boxed()
}

fn arb_physics() -> BoxedStrategy<PhysicsMaterial> {
    (st(), any::<u8>(), array::uniform6(fl()))
        .prop_map(|(name, flags, f)| PhysicsMaterial {
            name,
            flags,
            friction_or_max_speed: f[0],
            traction: f[1],
            bounce: f[2],
            damage_min_speed: f[3],
            damage_base: f[4],
            damage_per_mps: f[5],
        })
        .boxed()
}

fn arb_sound() -> BoxedStrategy<SoundMaterial> {
    (fl(), fl())
        .prop_map(|(volume_dampening, frequency_dampening)| SoundMaterial { volume_dampening, frequency_dampening })
        .boxed()
}

fn arb_lightmap() -> BoxedStrategy<Lightmap> {
    (0u8..=3)
        .prop_flat_map(|size_exp| {
            vec(any::<u8>(), Lightmap::byte_len(size_exp)).prop_map(move |luxels| Lightmap { size_exp, luxels })
        })
        .boxed()
}

fn arb_visibility() -> BoxedStrategy<Visibility> {
    (
        vec(any::<u32>(), 0..4),
        vec(
            (arb_chunk_index(), vec(any::<u32>(), 0..3)).prop_map(|(chunk, cubes)| VisibleChunk { chunk, cubes }),
            0..3,
        ),
    )
        .prop_map(|(cubes, chunks)| Visibility { cubes: cubes.into(), chunks: chunks.into() })
        .boxed()
}

fn arb_light_refs() -> BoxedStrategy<Vec<LightRef>> {
    vec(any::<(u8, u8)>().prop_map(|(index, amount)| LightRef { index, amount }), 0..4).boxed()
}

fn arb_lighting() -> BoxedStrategy<CubeLighting> {
    (any::<[u8; 3]>(), arb_light_refs(), arb_light_refs())
        .prop_map(|(base, dynamic, fast)| CubeLighting::new(base, dynamic, fast))
        .boxed()
}

fn arb_path_attr() -> BoxedStrategy<PathAttribute> {
    (st(), f3()).prop_map(|(name, direction)| PathAttribute { name, direction }).boxed()
}

fn arb_cube_kind() -> BoxedStrategy<CubeKind> {
    prop_oneof![
        Just(CubeKind::Empty),
        // Any child but 0, the root (`ChildIndex` has no 0; the reader refuses it).
        array::uniform8(option::of(1..=u32::MAX)).prop_map(parent),
        any::<[u8; 3]>().prop_map(|[material, physics_material, sound_material]| CubeKind::Geometry(GeometryCube {
            material,
            physics_material,
            sound_material
        })),
        (any::<[u8; 6]>(), any::<[u8; 6]>(), any::<u8>(), array::uniform8(option::of(f3()))).prop_map(
            |(materials, physics_materials, sound_material, points)| CubeKind::ExtGeometry(ExtGeometryCube {
                materials,
                physics_materials,
                sound_material,
                points: MovedPoints::new(points)
            })
        ),
    ]
    .boxed()
}

fn arb_cube() -> BoxedStrategy<(Cube, CubeHeader)> {
    (any::<bool>(), option::of(arb_visibility()), arb_cube_kind(), any::<bool>(), any::<bool>())
        .prop_map(|(draw_backfaces, visibility, kind, lighting, pathfinding)| {
            (Cube { draw_backfaces, visibility: visibility.map(Box::new), kind }, CubeHeader { lighting, pathfinding })
        })
        .boxed()
}

fn arb_level_common() -> BoxedStrategy<LevelCommon> {
    (
        vec(arb_material(), 0..3),
        vec(arb_physics(), 0..3),
        vec(arb_sound(), 0..3),
        st(),
        vec(
            (st(), f3(), any::<u32>(), f3(), fl(), any::<u32>(), fl(), fl()).prop_map(|t| WeatherEnvironment {
                name: t.0,
                wind: t.1,
                wind_direction_seed: t.2,
                wind_direction_randomness: t.3,
                wind_direction_noise_speed: t.4,
                wind_velocity_seed: t.5,
                wind_velocity_randomness: t.6,
                wind_velocity_noise_speed: t.7,
            }),
            0..3,
        ),
        vec((st(), f3()).prop_map(|(name, gravity)| GravityEnvironment { name, gravity }), 0..3),
        st(),
        st(),
    )
        .prop_map(|(materials, physics_materials, sound_materials, air, weather, gravity, dw, dg)| LevelCommon {
            materials,
            physics_materials,
            sound_materials,
            air_physics_material: air,
            weather_environments: weather,
            gravity_environments: gravity,
            default_weather: dw,
            default_gravity: dg,
        })
        .boxed()
}

fn arb_level_client(materials: usize) -> BoxedStrategy<LevelClient> {
    (
        vec(
            (st(), array::uniform7(fl())).prop_map(|(name, f)| SoundEnvironment {
                name,
                low_pass: f[0],
                high_pass: f[1],
                reverb_delay: f[2],
                reverb_feedback: f[3],
                reverb_mix: f[4],
                reverb_low_pass: f[5],
                reverb_high_pass: f[6],
            }),
            0..3,
        ),
        vec(
            (st(), any::<u8>(), array::uniform6(st()), st(), st(), arb_chunk_index()).prop_map(
                |(name, flags, skybox, cloud_top, cloud_bottom, skybox_chunk)| SkyEnvironment {
                    name,
                    flags,
                    skybox,
                    cloud_top,
                    cloud_bottom,
                    skybox_chunk,
                },
            ),
            0..3,
        ),
        st(),
        st(),
        vec(arb_client_material(), materials),
    )
        .prop_map(|(sound_environments, sky_environments, default_sound, default_sky, materials)| LevelClient {
            sound_environments,
            sky_environments,
            default_sound,
            default_sky,
            materials,
        })
        .boxed()
}

// ---------------------------------------------------------------------------------------------
// Whole chunks: a random octree (recursive strategy), its array order shuffled (the reader accepts
// any order), per-cube data consistent with the chunk's lists.

#[derive(Debug, Clone)]
enum Shape {
    Empty,
    Geometry,
    Ext,
    Parent(Vec<Option<Shape>>),
}

fn arb_shape() -> BoxedStrategy<Shape> {
    let leaf = prop_oneof![Just(Shape::Empty), Just(Shape::Geometry), Just(Shape::Ext)];
    leaf.prop_recursive(3, 24, 8, |inner| vec(option::of(inner), 8).prop_map(Shape::Parent)).boxed()
}

struct Node {
    /// 0 empty, 1 parent, 2 geometry, 3 extended geometry.
    ty: u8,
    depth: u32,
    children: [Option<u32>; 8],
}

/// Pre-order flattening; returns the node's index.
fn flatten(s: &Shape, depth: u32, out: &mut Vec<Node>) -> u32 {
    let at = out.len();
    out.push(Node { ty: 0, depth, children: [None; 8] });
    let (ty, mut children) = (
        match s {
            Shape::Empty => 0,
            Shape::Parent(_) => 1,
            Shape::Geometry => 2,
            Shape::Ext => 3,
        },
        [None; 8],
    );
    if let Shape::Parent(ch) = s {
        for (bit, c) in ch.iter().enumerate() {
            if let Some(c) = c {
                children[bit] = Some(flatten(c, depth + 1, out));
            }
        }
    }
    out[at] = Node { ty, depth, children };
    at as u32
}

fn count_nodes(s: &Shape) -> usize {
    match s {
        Shape::Parent(ch) => 1 + ch.iter().flatten().map(count_nodes).sum::<usize>(),
        _ => 1,
    }
}

/// Raw (y, x, z) of a chunk index, wrapped into the grid by [`build_chunk`].
type RawChunk = (u8, u16, u16);
/// Visible cubes of the same chunk, then per other chunk its raw index and cubes.
type RawVisibility = (Vec<u32>, Vec<(RawChunk, Vec<u32>)>);
/// A dynamic light, its client color and its layers as (lightmap selector, luxel fill).
type RawDynamicLight = (DynamicLight, [u8; 3], Vec<(u8, u8)>);

/// Random data for one cube; mapped onto valid values by [`build_chunk`].
#[derive(Debug, Clone)]
struct Detail {
    backfaces: bool,
    visibility: Option<RawVisibility>,
    lighting: Option<CubeLighting>,
    pathfinding: Option<Vec<PathAttribute>>,
    bytes: [u8; 16],
    points: [Option<[f32; 3]>; 8],
    first_vertex: u32,
    faces: u8,
}

fn unit() -> BoxedStrategy<f32> {
    prop_oneof![-1.0f32..=1.0, Just(1.0f32), Just(-1.0f32)].boxed()
}

fn arb_detail() -> BoxedStrategy<Detail> {
    (
        any::<bool>(),
        option::of((vec(any::<u32>(), 0..3), vec((any::<(u8, u16, u16)>(), vec(any::<u32>(), 0..3)), 0..3))),
        option::of(arb_lighting()),
        option::of(vec(arb_path_attr(), 0..3)),
        any::<[u8; 16]>(),
        array::uniform8(option::of(array::uniform3(unit()))),
        any::<u32>(),
        any::<u8>(),
    )
        .prop_map(|(backfaces, visibility, lighting, pathfinding, bytes, points, first_vertex, faces)| Detail {
            backfaces,
            visibility,
            lighting,
            pathfinding,
            bytes,
            points,
            first_vertex,
            faces,
        })
        .boxed()
}

#[derive(Debug, Clone)]
struct ChunkParts {
    shape: Shape,
    order: Vec<usize>,
    details: Vec<Detail>,
    used: (Vec<String>, Vec<String>, Vec<String>),
    env_regions: (Vec<EnvironmentRegion>, Vec<EnvironmentRegion>, Vec<EnvironmentRegion>, Vec<EnvironmentRegion>),
    dynamic: Vec<RawDynamicLight>,
    fast: Vec<(FastLight, ClientFastLight)>,
    lightmaps: Vec<Lightmap>,
    vertices: Vec<Vertex>,
    load_regions: Vec<(Region, Vec<RawChunk>)>,
}

fn arb_chunk_parts() -> BoxedStrategy<ChunkParts> {
    let tree = arb_shape().prop_flat_map(|shape| {
        let n = count_nodes(&shape);
        (Just(shape), Just((1..n).collect::<Vec<usize>>()).prop_shuffle())
    });
    let light = (any::<u8>(), any::<u8>(), any::<u32>());
    (
        tree,
        vec(arb_detail(), 1..6),
        (vec(st(), 1..3), vec(st(), 1..3), vec("[0-9]{1,2}", 1..3)),
        (
            vec(arb_env_region(), 0..2),
            vec(arb_env_region(), 0..2),
            vec(arb_env_region(), 0..2),
            vec(arb_env_region(), 0..2),
        ),
        vec(
            (light, any::<[u8; 3]>(), vec(any::<(u8, u8)>(), 0..3))
                .prop_map(|((flags, _, global_id), color, layers)| (DynamicLight { flags, global_id }, color, layers)),
            0..3,
        ),
        vec(
            (light, any::<[u8; 3]>(), vec((any::<u32>(), vec(any::<u8>(), 0..4)), 0..3)).prop_map(
                |((flags, initial_intensity, global_id), color, ranges)| {
                    (
                        FastLight { flags, initial_intensity, global_id },
                        ClientFastLight {
                            color,
                            ranges: ranges
                                .into_iter()
                                .map(|(skip, multipliers)| FastLightRange { skip, multipliers })
                                .collect(),
                        },
                    )
                },
            ),
            0..3,
        ),
        vec(arb_lightmap(), 0..3),
        vec(arb_vertex(), 0..6),
        vec((arb_region(), vec(any::<(u8, u16, u16)>(), 0..3)), 0..2),
    )
        .prop_map(|((shape, order), details, used, env_regions, dynamic, fast, lightmaps, vertices, load_regions)| {
            ChunkParts { shape, order, details, used, env_regions, dynamic, fast, lightmaps, vertices, load_regions }
        })
        .boxed()
}

fn wrap_chunk(grid: GridSize, (y, x, z): (u8, u16, u16)) -> ChunkIndex {
    ChunkIndex { y: (u16::from(y) % grid.y) as u8, x: x % grid.x, z: z % grid.z }
}

fn build_chunk(p: ChunkParts, exp: u8, grid: GridSize) -> Chunk {
    let mut nodes = Vec::new();
    flatten(&p.shape, 0, &mut nodes);
    let n = nodes.len();
    // New position of old cube i: the root stays at 0, the others follow the shuffled order.
    let mut new_pos = vec![0usize; n];
    for (pos, &old) in p.order.iter().enumerate() {
        new_pos[old] = pos + 1;
    }
    let (used_materials, used_physics_materials, used_sound_materials) = p.used;
    let n_dyn = p.dynamic.len();
    let n_fast = p.fast.len();
    let pick = |b: u8, len: usize| (usize::from(b) % len) as u8;

    let mut cubes = vec![Cube::default(); n];
    let mut client_cubes = vec![ClientCube::default(); n];
    let mut server_cubes = vec![ServerCube::default(); n];
    for (old, node) in nodes.iter().enumerate() {
        let d = &p.details[old % p.details.len()];
        let b = d.bytes;
        let half = 2f32.powi(i32::from(exp) - node.depth as i32 - 1);
        let (kind, geometry) = match node.ty {
            0 => (CubeKind::Empty, ClientGeometry::None),
            1 => (
                // Children are never the root: `new_pos` puts every other cube at 1 or later.
                CubeKind::Parent(ParentCube {
                    children: node.children.map(|c| c.and_then(|c| ChildIndex::new(new_pos[c as usize] as u32))),
                }),
                ClientGeometry::None,
            ),
            2 => (
                CubeKind::Geometry(GeometryCube {
                    material: pick(b[0], used_materials.len()),
                    physics_material: pick(b[1], used_physics_materials.len()),
                    sound_material: pick(b[2], used_sound_materials.len()),
                }),
                ClientGeometry::Geometry(ClientGeometryCube {
                    lightmap: b[3],
                    first_vertex: d.first_vertex,
                    faces: d.faces & 0x3F,
                }),
            ),
            _ => (
                CubeKind::ExtGeometry(ExtGeometryCube {
                    materials: std::array::from_fn(|i| pick(b[i], used_materials.len())),
                    physics_materials: std::array::from_fn(|i| pick(b[6 + i], used_physics_materials.len())),
                    sound_material: pick(b[12], used_sound_materials.len()),
                    points: MovedPoints::new(d.points.map(|p| p.map(|p| p.map(|v| v * half)))),
                }),
                ClientGeometry::ExtGeometry(ClientExtGeometryCube {
                    first_vertex: d.first_vertex,
                    lightmaps: std::array::from_fn(|i| b[i]),
                    triangle_counts: std::array::from_fn(|i| b[10 - i]),
                }),
            ),
        };
        let visibility = d.visibility.as_ref().map(|(cubes, chunks)| {
            Box::new(Visibility {
                cubes: cubes.iter().map(|&c| c % n as u32).collect(),
                chunks: chunks
                    .iter()
                    .map(|(c, cubes)| VisibleChunk { chunk: wrap_chunk(grid, *c), cubes: cubes.clone() })
                    .collect(),
            })
        });
        let lighting = d.lighting.as_ref().map(|l| {
            CubeLighting::new(
                l.base,
                if n_dyn == 0 {
                    vec![]
                } else {
                    l.dynamic().iter().map(|r| LightRef { index: pick(r.index, n_dyn), amount: r.amount }).collect()
                },
                if n_fast == 0 {
                    vec![]
                } else {
                    l.fast().iter().map(|r| LightRef { index: pick(r.index, n_fast), amount: r.amount }).collect()
                },
            )
        });
        let at = new_pos[old];
        cubes[at] = Cube { draw_backfaces: d.backfaces, visibility, kind };
        client_cubes[at] = ClientCube { lighting, geometry };
        server_cubes[at] = ServerCube { pathfinding: d.pathfinding.clone().map(Vec::into_boxed_slice) };
    }

    let lightmaps = p.lightmaps;
    let (dynamic_lights, client_dynamic): (Vec<_>, Vec<_>) = p
        .dynamic
        .into_iter()
        .map(|(l, color, layers)| {
            let layers = if lightmaps.is_empty() {
                vec![]
            } else {
                layers
                    .into_iter()
                    .map(|(sel, fill)| {
                        let lightmap = pick(sel, lightmaps.len());
                        let len = Lightmap::byte_len(lightmaps[usize::from(lightmap)].size_exp);
                        LightmapLayer { lightmap, luxels: vec![fill; len] }
                    })
                    .collect()
            };
            (l, ClientDynamicLight { color, layers })
        })
        .unzip();
    let (fast_lights, client_fast): (Vec<_>, Vec<_>) = p.fast.into_iter().unzip();
    let (weather_regions, gravity_regions, sound_regions, sky_regions) = p.env_regions;
    Chunk {
        common: ChunkCommon {
            used_materials,
            used_physics_materials,
            used_sound_materials,
            weather_regions,
            gravity_regions,
            dynamic_lights,
            fast_lights,
            cubes,
        },
        client: ChunkClient {
            sound_regions,
            sky_regions,
            lightmaps,
            vertices: p.vertices,
            dynamic_lights: client_dynamic,
            fast_lights: client_fast,
            cubes: client_cubes,
        },
        server: ChunkServer {
            load_regions: p
                .load_regions
                .into_iter()
                .map(|(r, other)| Region {
                    other_chunks: other.into_iter().map(|c| wrap_chunk(grid, c)).collect(),
                    ..r
                })
                .collect(),
            cubes: server_cubes,
            entities: vec![],
        },
    }
}

fn arb_level() -> BoxedStrategy<Level> {
    (0u8..=4, 1u16..=2, 1u16..=2, 1u16..=2, arb_level_common())
        .prop_flat_map(|(exp, y, x, z, common)| {
            let grid = GridSize { y, x, z };
            let n_materials = common.materials.len();
            (
                any::<u8>(),
                Just(common),
                arb_level_client(n_materials),
                vec(arb_chunk_parts(), grid.len()),
                (0..y, 0..x, 0..z),
            )
                .prop_map(move |(flags, common, client, parts, (cy, cx, cz))| Level {
                    flags,
                    common,
                    client,
                    server: LevelServer::default(),
                    chunk_size_exp: exp,
                    grid,
                    center_chunk: ChunkIndex { y: cy as u8, x: cx, z: cz },
                    chunks: parts.into_iter().map(|p| build_chunk(p, exp, grid)).collect(),
                })
        })
        .boxed()
}

fn arb_file() -> BoxedStrategy<File> {
    (
        (any::<u64>(), st(), st(), st(), st(), vec("[a-z]{1,15}", 0..4)),
        vec(any::<u8>(), 0..16),
        vec(vec(any::<u8>(), 0..8), 0..3),
        vec(arb_level(), 1..=2),
    )
        .prop_map(
            |((creation_time, name, description, authors, compiler_info, gamemodes), archive, extensions, levels)| {
                File {
                    header: Header { creation_time, name, description, authors, compiler_info, gamemodes },
                    archive,
                    extensions,
                    levels,
                    entities: vec![],
                }
            },
        )
        .boxed()
}

// =============================================================================================
// Round trips

fn record_round_trip(rec: Rec) -> Result<(), TestCaseError> {
    let (bytes, table) = write_rec(&rec).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back = read_rec(&rec, &bytes, &table).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(back, rec);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn rt_chunk_index(c in arb_chunk_index()) { record_round_trip(Rec::ChunkIndex(c))?; }
    #[test]
    fn rt_grid(g in arb_grid()) { record_round_trip(Rec::Grid(g))?; }
    #[test]
    fn rt_vertex(v in arb_vertex()) { record_round_trip(Rec::Vertex(v))?; }
    #[test]
    fn rt_region(r in arb_region()) { record_round_trip(Rec::Region(r))?; }
    #[test]
    fn rt_env_region(r in arb_env_region()) { record_round_trip(Rec::EnvRegion(r))?; }
    #[test]
    fn rt_material(m in arb_material()) { record_round_trip(Rec::Material(m))?; }
    #[test]
    fn rt_level_common(c in arb_level_common()) { record_round_trip(Rec::LevelCommon(c))?; }
    #[test]
    fn rt_physics(m in arb_physics()) { record_round_trip(Rec::Physics(m))?; }
    #[test]
    fn rt_sound(m in arb_sound()) { record_round_trip(Rec::Sound(m))?; }
    #[test]
    fn rt_lightmap(l in arb_lightmap()) { record_round_trip(Rec::Lightmap(l))?; }
    #[test]
    fn rt_cube((c, h) in arb_cube()) { record_round_trip(Rec::Cube(c, h))?; }
    #[test]
    fn rt_visibility(v in arb_visibility()) { record_round_trip(Rec::Visibility(v))?; }
    #[test]
    fn rt_lighting(l in arb_lighting()) { record_round_trip(Rec::Lighting(l))?; }
    #[test]
    fn rt_path_attr(a in arb_path_attr()) { record_round_trip(Rec::PathAttr(a))?; }
    #[test]
    fn rt_client_geometry(lightmap in any::<u8>(), first_vertex in any::<u32>(), faces in 0u8..64) {
        record_round_trip(Rec::ClientGeometry(ClientGeometryCube { lightmap, first_vertex, faces }))?;
    }
    #[test]
    fn rt_client_ext_geometry(first_vertex in any::<u32>(), lightmaps in any::<[u8; 6]>(), triangle_counts in any::<[u8; 6]>()) {
        record_round_trip(Rec::ClientExtGeometry(ClientExtGeometryCube { first_vertex, lightmaps, triangle_counts }))?;
    }
    #[test]
    fn rt_lights(flags in any::<u8>(), i in any::<u8>(), id in any::<u32>(), ranges in vec((any::<u32>(), vec(any::<u8>(), 0..5)), 0..3)) {
        record_round_trip(Rec::DynamicLight(DynamicLight { flags, global_id: id }))?;
        record_round_trip(Rec::FastLight(FastLight { flags, initial_intensity: i, global_id: id }))?;
        let ranges = ranges.into_iter().map(|(skip, multipliers)| FastLightRange { skip, multipliers }).collect();
        record_round_trip(Rec::ClientFastLight(ClientFastLight { color: [flags, i, 7], ranges }))?;
    }
}

/// Reads `lists` written one after another, as a chunk's cubes hold them, sharing equal parts.
fn read_lists_in_order(lists: &[Visibility]) -> Vec<Visibility> {
    let mut w = Writer::new();
    for v in lists {
        wr::write_visibility(&mut w, v, "t").unwrap();
    }
    let bytes = w.into_inner();
    let mut r = Reader::new(&bytes, "t");
    let mut last = rd::LastVisibility::default();
    let out = lists.iter().map(|_| rd::read_visibility(&mut r, &mut last).unwrap()).collect();
    r.expect_end().unwrap();
    out
}

#[test]
fn equal_visibility_parts_in_a_row_are_shared_and_others_read_as_written() {
    let far: Arc<[VisibleChunk]> = (0..50u16).map(|x| VisibleChunk { chunk: ci(0, x, 1), cubes: Vec::new() }).collect();
    let a = Visibility { cubes: vec![1, 2, 3].into(), chunks: far.clone() };
    // The same far list with other own cubes; then own cubes equal to `b`'s with a far list
    // whose first elements match (a longer encoding that starts like the last one but for its count).
    let b = Visibility { cubes: vec![4].into(), chunks: far.clone() };
    let longer: Arc<[VisibleChunk]> =
        far.iter().cloned().chain([VisibleChunk { chunk: ci(1, 0, 0), cubes: vec![9] }]).collect();
    let c = Visibility { cubes: vec![4].into(), chunks: longer };
    let lists = [a.clone(), a.clone(), b.clone(), c.clone(), a.clone()];
    let got = read_lists_in_order(&lists);
    assert_eq!(got, lists);
    assert!(Arc::ptr_eq(&got[0].cubes, &got[1].cubes) && Arc::ptr_eq(&got[0].chunks, &got[1].chunks));
    assert!(Arc::ptr_eq(&got[1].chunks, &got[2].chunks), "same far list, other own cubes");
    assert!(!Arc::ptr_eq(&got[1].cubes, &got[2].cubes));
    assert!(Arc::ptr_eq(&got[2].cubes, &got[3].cubes), "same own cubes, other far list");
    assert!(!Arc::ptr_eq(&got[2].chunks, &got[3].chunks));
    // Only the last list read is compared: `a` again is read afresh (equal, not shared).
    assert!(!Arc::ptr_eq(&got[0].chunks, &got[4].chunks));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Lists read in a row with sharing equal the lists written, repeats and near-repeats
    /// included (each list followed by itself and by a copy with one part changed).
    #[test]
    fn visibility_lists_in_a_row_read_back(lists in vec(arb_visibility(), 1..6), other in arb_visibility()) {
        let mut seq = Vec::new();
        for v in &lists {
            seq.push(v.clone());
            seq.push(v.clone());
            seq.push(Visibility { cubes: v.cubes.clone(), chunks: other.chunks.clone() });
            seq.push(Visibility { cubes: other.cubes.clone(), chunks: v.chunks.clone() });
        }
        prop_assert_eq!(read_lists_in_order(&seq), seq);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// `read(write(x)) == x` and `write(read(write(x))) == write(x)` for whole generated files.
    #[test]
    fn rt_whole_file(file in arb_file()) {
        let bytes = write(&file).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let back = read(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&back, &file);
        let again = write(&back).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(again == bytes, "second write differs");
    }

    /// Chunks encoded apart, in reverse order by one reused encoder (as a compiler's thread
    /// might), and placed with `write_with_chunks` give `write`'s bytes, in one buffer and
    /// written in pieces to a writer that takes a few bytes at a time.
    #[test]
    fn chunks_encoded_apart_give_the_same_bytes(file in arb_file()) {
        let bytes = write(&file).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut encoded: Vec<Vec<Option<wr::EncodedChunk>>> =
            file.levels.iter().map(|l| vec![None; l.chunks.len()]).collect();
        let mut encoder = wr::ChunkEncoder::new();
        for (li, level) in file.levels.iter().enumerate().rev() {
            for (i, chunk) in level.chunks.iter().enumerate().rev() {
                let e = encoder.encode(chunk, li, i, level.chunk_size_exp, level.grid)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                let alone = wr::encode_chunk(chunk, li, i, level.chunk_size_exp, level.grid)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(e.sizes(), alone.sizes());
                prop_assert!(e.frames() == alone.frames(), "a reused encoder gives other frames");
                encoded[li][i] = Some(e);
            }
        }
        let encoded: Vec<Vec<wr::EncodedChunk>> =
            encoded.into_iter().map(|l| l.into_iter().map(|e| e.expect("encoded")).collect()).collect();
        let mut shell = file.clone();
        for l in &mut shell.levels {
            l.chunks.clear();
        }
        let again = wr::write_with_chunks(&shell, &encoded, Compression::Fast).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(again.len(), bytes.len());
        prop_assert!(again.to_vec() == bytes, "pre-encoded chunks give other bytes");
        let mut stingy = Stingy::new(13);
        again.write_to(&mut stingy).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(stingy.out == bytes, "written in pieces, other bytes");
        // Streamed: each chunk's frames written as it comes, the rest at the end, over a
        // buffer holding older, longer content (every byte must be overwritten).
        let mut out = std::io::Cursor::new(vec![0xA5; bytes.len() + 100]);
        let mut stream = wr::ChunkStream::new(&shell, &mut out, Compression::Fast).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for c in encoded.iter().flatten() {
            stream.push(c).map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
        let (_, len) = stream.finish().map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(len, bytes.len() as u64);
        prop_assert!(out.get_ref()[..bytes.len()] == bytes[..], "streamed, other bytes");
    }

    /// Corrupting any single byte never panics (it may or may not be an error).
    #[test]
    fn corrupt_byte_never_panics(file in arb_file(), at in any::<prop::sample::Index>(), v in any::<u8>()) {
        let mut bytes = write(&file).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let i = at.index(bytes.len());
        bytes[i] = v;
        let _ = read(&bytes);
    }
}

// =============================================================================================
// A hand-built rich file

fn rich_chunk() -> Chunk {
    let cube = |kind| Cube { draw_backfaces: false, visibility: None, kind };
    let env = |name: &str| EnvironmentRegion {
        corners: std::array::from_fn(|i| [i as f32, 1.0, -(i as f32)]),
        environment: name.into(),
    };
    let cubes = vec![
        // 0: the root, children in bit order at bits 0, 1, 5, 7.
        cube(parent([Some(1), Some(2), None, None, None, Some(3), None, Some(4)])),
        // 1: geometry
        Cube {
            draw_backfaces: true,
            ..cube(CubeKind::Geometry(GeometryCube { material: 1, physics_material: 0, sound_material: 1 }))
        },
        // 2: extended geometry, depth 1 in a chunk of edge 16: half edge 4.
        cube(CubeKind::ExtGeometry(ExtGeometryCube {
            materials: [0, 1, 0, 1, 0, 1],
            physics_materials: [0; 6],
            sound_material: 0,
            points: MovedPoints::new([
                Some([4.0, 3.5, 4.0]),
                None,
                None,
                None,
                None,
                None,
                Some([-1.0, -4.0, 2.0]),
                None,
            ]),
        })),
        // 3: air with visibility (lighting and pathfinding on the client / server side)
        Cube {
            visibility: Some(Box::new(Visibility {
                cubes: vec![1, 2, 5].into(),
                chunks: vec![
                    VisibleChunk { chunk: ci(0, 1, 0), cubes: vec![] },
                    VisibleChunk { chunk: ci(0, 0, 1), cubes: vec![0] },
                ]
                .into(),
            })),
            ..cube(CubeKind::Empty)
        },
        // 4: a parent with one child
        cube(parent([None, None, Some(5), None, None, None, None, None])),
        // 5: geometry
        cube(CubeKind::Geometry(GeometryCube { material: 0, physics_material: 0, sound_material: 0 })),
    ];
    let mut client_cubes = vec![ClientCube::default(); 6];
    client_cubes[1].geometry =
        ClientGeometry::Geometry(ClientGeometryCube { lightmap: 0, first_vertex: 0, faces: 0b11 });
    client_cubes[2].geometry = ClientGeometry::ExtGeometry(ClientExtGeometryCube {
        first_vertex: 8,
        lightmaps: [0, 0, 1, 1, 0, 0],
        triangle_counts: [1, 0, 0, 0, 0, 0],
    });
    client_cubes[3].lighting = Some(CubeLighting::new(
        [10, 20, 30],
        vec![LightRef { index: 0, amount: 200 }, LightRef { index: 1, amount: 50 }],
        vec![LightRef { index: 0, amount: 100 }],
    ));
    client_cubes[5].geometry = ClientGeometry::Geometry(ClientGeometryCube { lightmap: 1, first_vertex: 4, faces: 1 });
    let mut server_cubes = vec![ServerCube::default(); 6];
    server_cubes[3].pathfinding = Some(Box::new([
        PathAttribute { name: "walk".into(), direction: [0.0; 3] },
        PathAttribute { name: "ledge".into(), direction: [1.0, 0.0, 0.0] },
    ]));
    Chunk {
        common: ChunkCommon {
            used_materials: vec!["stone".into(), "water".into()],
            used_physics_materials: vec!["rock".into()],
            used_sound_materials: vec!["0".into(), "1".into()],
            weather_regions: vec![env("rain")],
            gravity_regions: vec![env("low")],
            dynamic_lights: vec![
                DynamicLight { flags: light_flags::ENABLE, global_id: 7 },
                DynamicLight { flags: light_flags::PRESERVE, global_id: 8 },
            ],
            fast_lights: vec![FastLight { flags: light_flags::ENABLE, initial_intensity: 255, global_id: 9 }],
            cubes,
        },
        client: ChunkClient {
            sound_regions: vec![env("hall")],
            sky_regions: vec![env("night"), env("stone")],
            lightmaps: vec![
                Lightmap { size_exp: 1, luxels: (0..12).collect() },
                Lightmap { size_exp: 0, luxels: vec![1, 2, 3] },
            ],
            vertices: (0..11)
                .map(|i| Vertex {
                    position: [i as f32, 0.5, -1.0],
                    uv: [0.0, i as f32 / 8.0],
                    lightmap_uv: [0.25, 0.75],
                })
                .collect(),
            dynamic_lights: vec![
                ClientDynamicLight {
                    color: [255, 128, 0],
                    layers: vec![
                        LightmapLayer { lightmap: 0, luxels: vec![5; 12] },
                        LightmapLayer { lightmap: 1, luxels: vec![6; 3] },
                    ],
                },
                ClientDynamicLight { color: [0, 0, 255], layers: vec![] },
            ],
            fast_lights: vec![ClientFastLight {
                color: [1, 2, 3],
                ranges: vec![FastLightRange { skip: 2, multipliers: vec![10, 20, 30] }],
            }],
            cubes: client_cubes,
        },
        server: ChunkServer {
            load_regions: vec![Region { max: [8.0; 3], min: [-8.0; 3], other_chunks: vec![ci(0, 1, 1)] }],
            cubes: server_cubes,
            entities: vec![],
        },
    }
}

fn minimal_level() -> Level {
    Level { chunks: vec![Chunk::default()], ..Level::default() }
}

fn rich_file() -> File {
    let stone = Material { name: "stone".into(), user_type: "solid".into(), flags: 0, render_mode: RenderMode::Normal };
    let water = Material {
        name: "water".into(),
        user_type: String::new(),
        flags: material_flags::LIQUID | material_flags::TRANSPARENT,
        render_mode: RenderMode::Add,
    };
    let client_material = |texture: &str| ClientMaterial {
        texture: texture.into(),
        extra_textures: vec!["extra".into(), texture.into()],
        texture_advance_time_us: 100_000,
        uv_scroll: [0.5, 0.0],
        color: [200, 100, 50],
        alpha: 128,
        emission: [0, 0, 1],
        shading: 3,
        shine: 4,
        matcap_texture: "matcap".into(),
        wave: WaveInfo { velocity: [1.0, 0.0, 0.0], wind_influence: 0.5, offset: 0.0, scale: 2.0 },
    };
    let grid = GridSize { y: 1, x: 2, z: 2 };
    let mut chunks = vec![Chunk::default(); grid.len()];
    chunks[0] = rich_chunk();
    let level0 = Level {
        flags: level_flags::KEEP_VELOCITY | level_flags::KEEP_IN_CHUNK_OFFSET,
        common: LevelCommon {
            materials: vec![stone, water],
            physics_materials: vec![PhysicsMaterial {
                name: "rock".into(),
                flags: 0,
                friction_or_max_speed: 1.0,
                traction: 0.9,
                bounce: 0.1,
                damage_min_speed: 20.0,
                damage_base: 5.0,
                damage_per_mps: 1.5,
            }],
            sound_materials: vec![
                SoundMaterial { volume_dampening: 0.5, frequency_dampening: 0.1 },
                SoundMaterial { volume_dampening: 0.9, frequency_dampening: 0.8 },
            ],
            air_physics_material: "air".into(),
            weather_environments: vec![WeatherEnvironment {
                name: "rain".into(),
                wind: [1.0, 0.0, 0.0],
                wind_direction_seed: 42,
                wind_direction_randomness: [0.1, 0.0, 0.1],
                wind_direction_noise_speed: 0.5,
                wind_velocity_seed: 43,
                wind_velocity_randomness: 0.2,
                wind_velocity_noise_speed: 0.3,
            }],
            gravity_environments: vec![GravityEnvironment { name: "low".into(), gravity: [0.0, -1.6, 0.0] }],
            default_weather: "rain".into(),
            default_gravity: String::new(),
        },
        client: LevelClient {
            sound_environments: vec![SoundEnvironment { name: "hall".into(), reverb_mix: 0.7, ..Default::default() }],
            sky_environments: vec![SkyEnvironment {
                name: "night".into(),
                flags: sky_flags::SKYBOX_3D,
                skybox: ["px".into(), "py".into(), "pz".into(), "nx".into(), "ny".into(), "nz".into()],
                cloud_top: "clouds".into(),
                cloud_bottom: String::new(),
                skybox_chunk: ci(0, 1, 1),
            }],
            default_sound: "hall".into(),
            default_sky: "night".into(),
            materials: vec![client_material("stone.ptf"), client_material("")],
        },
        server: LevelServer::default(),
        chunk_size_exp: 4,
        grid,
        center_chunk: ci(0, 0, 1),
        chunks,
    };
    File {
        header: Header {
            creation_time: 1_700_000_000,
            name: "Rich".into(),
            description: "A test map with everything".into(),
            authors: "pmfedit tests".into(),
            compiler_info: "tests.rs".into(),
            gamemodes: vec!["dm".into(), "ctf".into(), "x".repeat(15)],
        },
        archive: b"PAF\0 not really".to_vec(),
        extensions: vec![vec![1, 2, 3], vec![]],
        levels: vec![level0, minimal_level()],
        entities: vec![],
    }
}

#[test]
fn rich_file_round_trips() {
    let file = rich_file();
    let bytes = write(&file).unwrap();
    let back = read(&bytes).unwrap();
    assert_eq!(back, file);
    assert_eq!(write(&back).unwrap(), bytes, "write(read(b)) == b");
    // Deterministic.
    assert_eq!(write(&file).unwrap(), bytes);
}

#[test]
fn chunk_common_table_serves_client_regions() {
    // The client chunk's region names go into the common chunk table, after the common strings.
    let chunk = rich_chunk();
    let mut b = StringTableBuilder::new();
    let mut w = Writer::new();
    wr::write_chunk_common(&mut w, &mut b, &chunk, 4, GridSize { y: 1, x: 2, z: 2 }, "t").unwrap();
    let mut lw = Writer::new();
    wr::write_chunk_client(&mut lw, &mut b, &chunk.client, &chunk.common, "t").unwrap();
    assert_eq!(b.bytes(), b"\0stone\0water\0rock\x000\x001\0rain\0low\0hall\0night\0");
}

#[test]
fn reader_accepts_any_cube_order() {
    // Same tree as cube 0 → {1: geometry}, but stored with the child before an unrelated parent.
    let mut file = rich_file();
    let chunk = &mut file.levels[0].chunks[0];
    // Swap cubes 4 and 5 (a parent and its child) and fix the references.
    chunk.common.cubes.swap(4, 5);
    chunk.client.cubes.swap(4, 5);
    chunk.server.cubes.swap(4, 5);
    chunk.common.cubes[0].kind = parent([Some(1), Some(2), None, None, None, Some(3), None, Some(5)]);
    chunk.common.cubes[5].kind = parent([None, None, Some(4), None, None, None, None, None]);
    if let Some(v) = &mut chunk.common.cubes[3].visibility {
        v.cubes = vec![1, 2, 4].into();
    }
    let bytes = write(&file).unwrap();
    assert_eq!(read(&bytes).unwrap(), file);
}

#[test]
fn empty_sections_write_empty_tables() {
    // Data (no global entities), level server and chunk common / server intern nothing: size 0.
    let bytes = write(&minimal_file()).unwrap();
    assert_eq!(bytes, assemble(&[minimal_raw_level()]));
}

// =============================================================================================
// Hand-assembled files (independent of the writer)

const LEVEL_COMMON: &[u8] = &[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
const LEVEL_CLIENT: &[u8] = &[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
const LEVEL_SERVER: &[u8] = &[0, 0, 0, 0, 0, 0, 0, 0];
/// Empty table, 7 zero counts, cube count 1, one empty cube.
const CHUNK_COMMON: &[u8] = &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0];
const CHUNK_CLIENT: &[u8] = &[0, 0, 0, 0, 0, 0, 0];
const CHUNK_SERVER: &[u8] = &[0, 0, 0, 0, 0, 0, 0, 0, 0];
/// Header of the assembled files: "PMF", version 0, time 0, four empty strings, no gamemodes.
const HEADER_LEN: usize = 17;
/// Offset of level 0 in an assembled file with one level.
const LEVEL0: usize = HEADER_LEN + 4 + 4 + 2 + 1 + 4;

#[derive(Clone)]
struct RawLevel {
    blocks: [Vec<u8>; 3],
    exp: u8,
    grid: u32,
    center: u32,
    chunks: Vec<[Vec<u8>; 3]>,
}

fn minimal_raw_level() -> RawLevel {
    RawLevel {
        blocks: [LEVEL_COMMON.to_vec(), LEVEL_CLIENT.to_vec(), LEVEL_SERVER.to_vec()],
        exp: 0,
        grid: 0,
        center: 0,
        chunks: vec![[CHUNK_COMMON.to_vec(), CHUNK_CLIENT.to_vec(), CHUNK_SERVER.to_vec()]],
    }
}

fn raw_with_chunk(common: &[u8], client: &[u8], server: &[u8]) -> Vec<u8> {
    let mut l = minimal_raw_level();
    l.chunks = vec![[common.to_vec(), client.to_vec(), server.to_vec()]];
    assemble(&[l])
}

fn frames(blocks: &[Vec<u8>; 3]) -> (Vec<u8>, Vec<u8>) {
    let f: Vec<Vec<u8>> = blocks.iter().map(|b| lz4f::compress(b)).collect();
    let mut sizes = Vec::new();
    for x in &f {
        sizes.extend_from_slice(&u32b(x.len() as u32));
    }
    for b in blocks {
        sizes.extend_from_slice(&u32b(b.len() as u32));
    }
    (sizes, f.concat())
}

fn assemble(levels: &[RawLevel]) -> Vec<u8> {
    let mut out = cat(&[b"PMF\0", &[0; 8], &[0, 0, 0, 0], &[0]]);
    assert_eq!(out.len(), HEADER_LEN);
    out.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // table, archive, extensions
    out.push(levels.len() as u8);
    let raw: Vec<Vec<u8>> = levels
        .iter()
        .map(|l| {
            let (sizes, data) = frames(&l.blocks);
            let mut v = cat(&[&[0], &sizes, &data, &[l.exp], &u32b(l.grid), &u32b(l.center)]);
            let chunk_frames: Vec<(Vec<u8>, Vec<u8>)> = l.chunks.iter().map(frames).collect();
            for (s, _) in &chunk_frames {
                v.extend_from_slice(s);
            }
            for (_, d) in &chunk_frames {
                v.extend_from_slice(d);
            }
            v
        })
        .collect();
    for r in &raw {
        out.extend_from_slice(&u32b(r.len() as u32));
    }
    for r in &raw {
        out.extend_from_slice(r);
    }
    out.extend_from_slice(&[0, 0, 0, 0]); // global entities
    out
}

fn minimal_file() -> File {
    File { levels: vec![minimal_level()], ..File::default() }
}

#[test]
fn assembled_minimal_file_reads_and_matches_writer() {
    let bytes = assemble(&[minimal_raw_level()]);
    assert_eq!(read(&bytes).unwrap(), minimal_file());
    assert_eq!(write(&minimal_file()).unwrap(), bytes);
}

// =============================================================================================
// Hostile input

#[test]
fn every_truncation_of_a_rich_file_fails() {
    let bytes = write(&rich_file()).unwrap();
    for n in 0..bytes.len() {
        assert!(read(&bytes[..n]).is_err(), "truncated to {n} of {} bytes", bytes.len());
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(read(&longer).unwrap_err().to_string().contains("trailing"));
}

/// Byte offsets of the top-level fields of a written file (walked by hand).
struct Top {
    table_size: usize,
    archive_size: usize,
    ext_count: usize,
    ext_sizes: usize,
    level_sizes: usize,
    level0: usize,
    entity_count: usize,
}

fn top_offsets(bytes: &[u8]) -> Top {
    let mut r = Reader::new(bytes, "walk");
    r.skip(12).unwrap();
    for _ in 0..4 {
        r.cstr().unwrap();
    }
    let g = r.u8().unwrap();
    for _ in 0..g {
        r.cstr().unwrap();
    }
    let table_size = r.position();
    let n = r.u32().unwrap();
    r.skip(n as usize).unwrap();
    let archive_size = r.position();
    let n = r.u32().unwrap();
    r.skip(n as usize).unwrap();
    let ext_count = r.position();
    let n = r.u16().unwrap();
    let ext_sizes = r.position();
    let mut total = 0;
    for _ in 0..n {
        total += r.u32().unwrap() as usize;
    }
    r.skip(total).unwrap();
    let levels = r.u8().unwrap();
    let level_sizes = r.position();
    let mut total = 0;
    for _ in 0..levels {
        total += r.u32().unwrap() as usize;
    }
    let level0 = r.position();
    r.skip(total).unwrap();
    let entity_count = r.position();
    assert_eq!(entity_count + 4, bytes.len());
    Top { table_size, archive_size, ext_count, ext_sizes, level_sizes, level0, entity_count }
}

fn forged(bytes: &[u8], at: usize, value: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at..at + value.len()].copy_from_slice(value);
    b
}

const FFFF: [u8; 4] = [0xFF; 4];

#[test]
fn forged_top_level_counts_fail_fast() {
    let bytes = write(&rich_file()).unwrap();
    let t = top_offsets(&bytes);
    assert_eq!(t.level0, t.level_sizes + 8);
    for (what, at, v) in [
        ("string table size", t.table_size, &FFFF[..]),
        ("archive size", t.archive_size, &FFFF[..]),
        ("extension count", t.ext_count, &FFFF[..2]),
        ("extension size", t.ext_sizes, &FFFF[..]),
        ("level size", t.level_sizes, &FFFF[..]),
        ("entity count", t.entity_count, &FFFF[..]),
    ] {
        let e = read_err(&forged(&bytes, at, v));
        assert_count_refused(&e);
        eprintln!("{what}: {e}");
    }
}

#[test]
fn forged_level_block_sizes_fail() {
    let bytes = write(&rich_file()).unwrap();
    let t = top_offsets(&bytes);
    // Compressed size of the level's common block, then its decompressed size.
    let e = read_err(&forged(&bytes, t.level0 + 1, &FFFF));
    assert_count_refused(&e);
    let e = read_err(&forged(&bytes, t.level0 + 13, &FFFF));
    assert!(matches!(e.kind, ReadErrorKind::SizeTooLarge { .. }), "{e}");
}

#[test]
fn wrong_decompressed_size_is_an_error() {
    let bytes = assemble(&[minimal_raw_level()]);
    let declared = LEVEL0 + 13;
    assert_eq!(bytes[declared], LEVEL_COMMON.len() as u8);
    for v in [LEVEL_COMMON.len() as u8 - 1, LEVEL_COMMON.len() as u8 + 1] {
        let e = read_err(&forged(&bytes, declared, &[v]));
        assert!(e.to_string().contains("declared"), "{e}");
        assert!(e.section.contains("LZ4 frame at byte"), "{e}");
    }
}

#[test]
fn forged_cube_count_fails_fast() {
    let mut common = CHUNK_COMMON.to_vec();
    common[11..15].copy_from_slice(&FFFF);
    let e = read_err(&raw_with_chunk(&common, CHUNK_CLIENT, CHUNK_SERVER));
    assert_count_refused(&e);
    assert!(e.section.contains("chunk y0 x0 z0 / common data"), "{e}");
    assert_eq!(e.offset, 15, "offset within the decompressed block, after the count: {e}");
    // Zero cubes.
    common[11..15].copy_from_slice(&[0; 4]);
    assert_err_contains(&raw_with_chunk(&common, CHUNK_CLIENT, CHUNK_SERVER), "cube count is 0");
}

#[test]
fn forged_vertex_count_fails_fast() {
    let mut client = CHUNK_CLIENT.to_vec();
    client[3..7].copy_from_slice(&FFFF);
    let e = read_err(&raw_with_chunk(CHUNK_COMMON, &client, CHUNK_SERVER));
    assert_count_refused(&e);
    assert!(e.section.contains("client data"), "{e}");
}

/// A chunk with one dynamic light (common) and one lightmap of exp 0 (client); `layers` follows the
/// light's color in the client block.
fn chunk_with_light_layers(layers: &[u8]) -> Vec<u8> {
    let common = cat(&[&[0, 0, 0, 0], &[0, 0, 0, 0, 0], &[1, 1, 7, 0, 0, 0], &[0], &[1, 0, 0, 0], &[0]]);
    let client = cat(&[&[0, 0], &[1, 0, 9, 9, 9], &[0, 0, 0, 0], &[1, 2, 3], layers]);
    raw_with_chunk(&common, &client, CHUNK_SERVER)
}

#[test]
fn lightmap_layers_are_checked() {
    // Valid: one layer for lightmap 0 with 3 luxel bytes.
    let file = read(&chunk_with_light_layers(&[1, 0, 4, 5, 6])).unwrap();
    assert_eq!(file.levels[0].chunks[0].client.dynamic_lights[0].layers[0].luxels, vec![4, 5, 6]);
    // Forged layer count.
    assert_count_refused(&read_err(&chunk_with_light_layers(&[0xFF, 0, 4, 5, 6])));
    // Target out of range.
    assert_err_contains(&chunk_with_light_layers(&[1, 1, 4, 5, 6]), "targets lightmap 1");
    // Wrong luxel count: too few bytes / one byte too many.
    assert!(read(&chunk_with_light_layers(&[1, 0, 4, 5])).is_err());
    assert!(read(&chunk_with_light_layers(&[1, 0, 4, 5, 6, 7])).is_err());
}

/// A chunk whose common cubes are `cubes` (raw records); client and server cubes carry nothing.
fn chunk_with_cubes(count: u32, cubes: &[u8]) -> Vec<u8> {
    let common = cat(&[&[0, 0, 0, 0], &[0; 7], &u32b(count), cubes]);
    raw_with_chunk(&common, CHUNK_CLIENT, CHUNK_SERVER)
}

#[test]
fn forged_visibility_counts_fail_fast() {
    // Empty root with visibility: cube count forged, then chunk count forged.
    let e = read_err(&chunk_with_cubes(1, &cat(&[&[0x10], &FFFF, &[0, 0, 0, 0]])));
    assert_count_refused(&e);
    let e = read_err(&chunk_with_cubes(1, &cat(&[&[0x10], &[0, 0, 0, 0], &FFFF])));
    assert_count_refused(&e);
    // Valid visibility, out-of-range cube index, chunk outside the grid.
    assert!(read(&chunk_with_cubes(1, &cat(&[&[0x10], &[1, 0, 0, 0], &[0, 0, 0, 0], &[0, 0, 0, 0]]))).is_ok());
    assert_err_contains(
        &chunk_with_cubes(1, &cat(&[&[0x10], &[1, 0, 0, 0], &[1, 0, 0, 0], &[0, 0, 0, 0]])),
        "visible cube 1 is out of range",
    );
    assert_err_contains(
        &chunk_with_cubes(1, &cat(&[&[0x10], &[0, 0, 0, 0], &[1, 0, 0, 0], &[1, 0, 0, 0], &[0, 0, 0, 0]])),
        "outside the grid",
    );
}

#[test]
fn forged_entity_counts_fail_fast() {
    let mut server = CHUNK_SERVER.to_vec();
    server[5..9].copy_from_slice(&FFFF);
    assert_count_refused(&read_err(&raw_with_chunk(CHUNK_COMMON, CHUNK_CLIENT, &server)));
    let mut l = minimal_raw_level();
    l.blocks[2][4..8].copy_from_slice(&FFFF);
    assert_count_refused(&read_err(&assemble(&[l])));
}

#[test]
fn forged_level_common_counts_fail_fast() {
    // Material count 0xFFFF.
    let mut l = minimal_raw_level();
    l.blocks[0][5..7].copy_from_slice(&[0xFF, 0xFF]);
    assert_count_refused(&read_err(&assemble(&[l])));
}

#[test]
fn broken_octrees_are_rejected() {
    // Root parent with child 5 in a chunk of 1 cube.
    let e = assert_err_contains(&chunk_with_cubes(1, &cat(&[&[1, 1], &u32b(5)])), "child index 5 is out of range");
    assert_eq!(e.offset, 15, "reported at the parent's record: {e}");
    // Shared child: root → 1, 2; cube 1 → 2.
    let e = assert_err_contains(
        &chunk_with_cubes(3, &cat(&[&[1, 0b11], &u32b(1), &u32b(2), &[1, 1], &u32b(2), &[0]])),
        "cube 2 is the child of two parents",
    );
    assert!(e.section.contains("level 0 / chunk y0 x0 z0 / common data (LZ4 frame at byte"), "{e}");
    // Cycle: root empty; 1 → 2, 2 → 1.
    assert_err_contains(&chunk_with_cubes(3, &cat(&[&[0], &[1, 1], &u32b(2), &[1, 1], &u32b(1)])), "cycle");
    // Self-loop.
    assert_err_contains(&chunk_with_cubes(2, &cat(&[&[1, 1], &u32b(1), &[1, 1], &u32b(1)])), "two parents");
    // Root as a child: refused as the index is read (`ChildIndex` has no 0), at its offset.
    let e = assert_err_contains(
        &chunk_with_cubes(2, &cat(&[&[1, 1], &u32b(1), &[1, 1], &u32b(0)])),
        "the root cube 0 cannot be a child",
    );
    assert_eq!(e.offset, 23, "reported at the child index: {e}");
    // Orphan.
    assert_err_contains(&chunk_with_cubes(2, &[0, 0]), "nobody's child");
    // Same child twice.
    assert_err_contains(&chunk_with_cubes(2, &cat(&[&[1, 0b11], &u32b(1), &u32b(1), &[0]])), "twice");
    // Valid: children stored before their parent.
    assert!(read(&chunk_with_cubes(3, &cat(&[&[1, 1], &u32b(2), &[0], &[1, 1], &u32b(1)]))).is_ok());
}

#[test]
fn bad_cube_fields_are_rejected() {
    assert_err_contains(&chunk_with_cubes(1, &[4]), "cube type 4");
    assert_err_contains(&chunk_with_cubes(1, &[0x0F]), "cube type 15");
    // Geometry cube with material 0 but the chunk uses no materials.
    assert_err_contains(&chunk_with_cubes(1, &[2, 0, 0, 0]), "material index 0 is out of range");
    // Moved point outside the cube: chunk exp 0 → root half edge 0.5. One used name of each
    // kind (offset 0 = "" in a 1-byte table), an extended geometry root with point 0 moved.
    let names = cat(&[&[1, 0, 0, 0, 0], &[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0], &[0; 4], &[1, 0, 0, 0]]);
    let common = |v: f32| cat(&[&names, &[3], &[0; 13], &[1], &f32b(v), &f32b(0.0), &f32b(-0.5)]);
    let client = cat(&[&[0; 7], &[0; 16]]);
    assert_err_contains(&raw_with_chunk(&common(0.75), &client, CHUNK_SERVER), "outside the cube");
    assert_err_contains(&raw_with_chunk(&common(f32::NAN), &client, CHUNK_SERVER), "outside the cube");
    assert!(read(&raw_with_chunk(&common(0.5), &client, CHUNK_SERVER)).is_ok());
}

#[test]
fn reserved_face_bits_are_rejected() {
    // One geometry root cube with one used name of each kind.
    let common =
        cat(&[&[1, 0, 0, 0, 0], &[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0], &[0; 4], &[1, 0, 0, 0], &[2, 0, 0, 0]]);
    let client = |faces: u8| cat(&[&[0, 0, 0, 0, 0, 0, 0], &[0, 0, 0, 0, 0, faces]]);
    assert!(read(&raw_with_chunk(&common, &client(0x3F), CHUNK_SERVER)).is_ok());
    assert_err_contains(&raw_with_chunk(&common, &client(0x40), CHUNK_SERVER), "reserved bits 6–7");
}

#[test]
fn light_references_are_checked() {
    // Empty root cube with the lighting flag, no lights in the chunk, one dynamic reference.
    let client = cat(&[&[0, 0, 0, 0, 0, 0, 0], &[1, 2, 3, 1, 0, 9, 0]]);
    assert_err_contains(&chunk_with_client(&[0x20], &client), "dynamic light reference 0 is out of range");
    let client = cat(&[&[0, 0, 0, 0, 0, 0, 0], &[1, 2, 3, 0, 0]]);
    assert!(read(&chunk_with_client(&[0x20], &client)).is_ok());
}

fn chunk_with_client(root: &[u8], client: &[u8]) -> Vec<u8> {
    let common = cat(&[&[0, 0, 0, 0], &[0; 7], &[1, 0, 0, 0], root]);
    raw_with_chunk(&common, client, CHUNK_SERVER)
}

#[test]
fn string_offsets_are_checked() {
    // Level common table "\0abc\0"; air physics material at offset 2 (inside "abc").
    let common = |air: u8| {
        cat(&[&[5, 0, 0, 0], b"\0abc\0", &[0, 0, 0, 0, 0, 0], &[air, 0, 0, 0], &[0, 0], &[0, 0, 0, 0, 0, 0, 0, 0]])
    };
    let mut l = minimal_raw_level();
    l.blocks[0] = common(1);
    assert_eq!(read(&assemble(&[l])).unwrap().levels[0].common.air_physics_material, "abc");
    let mut l = minimal_raw_level();
    l.blocks[0] = common(2);
    assert_err_contains(&assemble(&[l]), "not at the start of a string");
    let mut l = minimal_raw_level();
    l.blocks[0] = common(5);
    assert_err_contains(&assemble(&[l]), "outside the string table");
    // A string field in a section with an empty table.
    let common = cat(&[&[0, 0, 0, 0], &[1, 0, 0, 0, 0], &[0; 6], &[1, 0, 0, 0], &[0]]);
    assert_err_contains(&raw_with_chunk(&common, CHUNK_CLIENT, CHUNK_SERVER), "outside the string table (0 bytes)");
}

#[test]
fn header_errors() {
    let good = assemble(&[minimal_raw_level()]);
    assert_err_contains(&forged(&good, 0, b"PMX"), "not a PMF file");
    let e = assert_err_contains(&forged(&good, 3, &[1]), "unsupported PMF major version 1");
    assert_eq!(e.offset, 3);
    // 33 gamemodes.
    let mut b = good[..16].to_vec();
    b.push(33);
    b.extend_from_slice(&good[17..]);
    assert_err_contains(&b, "33 gamemodes");
    // A 16-byte gamemode name.
    let mut b = good[..16].to_vec();
    b.push(1);
    b.extend_from_slice(b"0123456789abcdef\0");
    b.extend_from_slice(&good[17..]);
    assert_err_contains(&b, "16 bytes long");
}

#[test]
fn level_errors() {
    let good = assemble(&[minimal_raw_level()]);
    // Level count 0.
    let mut b = good[..LEVEL0 - 5].to_vec();
    b.push(0);
    b.extend_from_slice(&[0, 0, 0, 0]);
    assert_err_contains(&b, "level count is 0");
    // Chunk size exponent 16.
    let mut l = minimal_raw_level();
    l.exp = 16;
    assert_err_contains(&assemble(&[l]), "chunk size exponent 16");
    // Center outside the grid.
    let mut l = minimal_raw_level();
    l.center = 1;
    assert_err_contains(&assemble(&[l]), "center chunk y0 x0 z1 lies outside");
    // A 2×1×1 grid needs 48 bytes of size records: forged grid fails fast.
    let mut l = minimal_raw_level();
    l.grid = u32::MAX;
    assert_count_refused(&read_err(&assemble(&[l])));
    // Lightmap exponent 13.
    let client = cat(&[&[0, 0, 1, 13], &[0; 4]]);
    assert_err_contains(&raw_with_chunk(CHUNK_COMMON, &client, CHUNK_SERVER), "lightmap size exponent 13");
    // Bad render mode.
    let mut l = minimal_raw_level();
    l.blocks[0] = cat(&[&[1, 0, 0, 0, 0], &[1, 0], &[0, 0, 0, 0, 0, 0, 0, 0, 0, 2], &LEVEL_COMMON[7..]]);
    assert_err_contains(&assemble(&[l]), "render mode 2");
}

/// A minimal file in the draft layout of seed 003.
fn draft_file() -> Vec<u8> {
    let common = cat(&[&[0, 0, 0, 0], &[0, 0], &[0, 0]]);
    let sector = cat(&[&[0, 0, 0, 0], &[0, 0, 0, 0], &[1, 0, 0, 0], &[0]]);
    let client_sector = cat(&[&[0], &[0, 0, 0, 0]]);
    let server_sector = cat(&[&[0], &[0, 0, 0, 0], &[0, 0, 0, 0]]);
    let cf = lz4f::compress(&common);
    let (sizes, data) = frames(&[sector, client_sector, server_sector]);
    let level = cat(&[
        &u32b(cf.len() as u32),
        &u32b(common.len() as u32),
        &cf,
        &[0, 0, 0, 0],
        &[0, 0, 0, 0],
        &[0],
        &sizes,
        &data,
    ]);
    cat(&[
        b"PMF\0",
        &u32b(1_600_000_000),
        &[0; 4],
        b"Draft map\0\0\0old compiler\0",
        &[1],
        b"dm\0",
        &[1],
        b"normal\0",
        &[0; 4],
        &[0; 4],
        &[0; 2],
        &[1],
        &u32b(level.len() as u32),
        &level,
        &[0; 4],
    ])
}

#[test]
fn draft_layout_is_detected() {
    let e = read_err(&draft_file());
    let text = e.to_string();
    assert!(text.contains("PMF draft layout, unsupported"), "{text}");
    assert!(text.contains("the current layout failed at byte"), "{text}");
    // A file that is neither layout keeps the current layout's error.
    let mut broken = draft_file();
    let n = broken.len();
    broken.truncate(n - 30);
    let e = read_err(&broken);
    assert!(!e.to_string().contains("draft"), "{e}");
    // Current-layout files never trigger it.
    let e = read_err(&write(&rich_file()).unwrap()[..200]);
    assert!(!e.to_string().contains("draft"), "{e}");
}

// =============================================================================================
// Writer refusals: one test each; the error must name the problem.

fn refuse(f: impl FnOnce(&mut File), needle: &str) {
    let mut file = rich_file();
    f(&mut file);
    match write(&file) {
        Ok(_) => panic!("writer accepted a file it must refuse ({needle})"),
        Err(e) => assert!(e.to_string().contains(needle), "error {e:?} does not mention {needle:?}"),
    }
}

fn chunk0(f: &mut File) -> &mut Chunk {
    &mut f.levels[0].chunks[0]
}

macro_rules! refusal {
    ($name:ident, $needle:expr, |$f:ident| $body:expr) => {
        #[test]
        fn $name() {
            refuse(|$f: &mut File| $body, $needle);
        }
    };
}

refusal!(refuses_256_used_materials, "too many used materials: 256", |f| chunk0(f).common.used_materials =
    vec!["m".into(); 256]);
refusal!(refuses_256_used_physics, "too many used physics materials: 256", |f| chunk0(f)
    .common
    .used_physics_materials =
    vec!["p".into(); 256]);
refusal!(refuses_256_used_sounds, "too many used sound materials: 256", |f| chunk0(f).common.used_sound_materials =
    vec!["0".into(); 256]);
refusal!(refuses_256_lightmaps, "too many lightmaps: 256", |f| chunk0(f).client.lightmaps =
    vec![Lightmap { size_exp: 0, luxels: vec![0; 3] }; 256]);
refusal!(refuses_256_dynamic_lights, "too many dynamic lights: 256", |f| {
    let c = chunk0(f);
    c.common.dynamic_lights = vec![DynamicLight::default(); 256];
    c.client.dynamic_lights = vec![ClientDynamicLight::default(); 256];
});
refusal!(refuses_256_fast_lights, "too many fast lights: 256", |f| {
    let c = chunk0(f);
    c.common.fast_lights = vec![FastLight::default(); 256];
    c.client.fast_lights = vec![ClientFastLight::default(); 256];
});
refusal!(refuses_256_weather_regions, "too many weather environment regions: 256", |f| chunk0(f)
    .common
    .weather_regions =
    vec![EnvironmentRegion::default(); 256]);
refusal!(refuses_256_sky_regions, "too many sky environment regions: 256", |f| chunk0(f).client.sky_regions =
    vec![EnvironmentRegion::default(); 256]);
refusal!(refuses_256_load_regions, "too many load regions: 256", |f| chunk0(f).server.load_regions =
    vec![Region::default(); 256]);
refusal!(refuses_256_weather_environments, "too many weather environments: 256", |f| f.levels[0]
    .common
    .weather_environments =
    vec![WeatherEnvironment::default(); 256]);
refusal!(refuses_256_gravity_environments, "too many gravity environments: 256", |f| f.levels[0]
    .common
    .gravity_environments =
    vec![GravityEnvironment::default(); 256]);
refusal!(refuses_256_sound_environments, "too many sound environments: 256", |f| f.levels[0]
    .client
    .sound_environments =
    vec![SoundEnvironment::default(); 256]);
refusal!(refuses_256_sky_environments, "too many sky environments: 256", |f| f.levels[0].client.sky_environments =
    vec![SkyEnvironment::default(); 256]);
refusal!(refuses_65536_materials, "too many materials: 65536", |f| {
    f.levels[0].common.materials = vec![Material::default(); 65536];
    f.levels[0].client.materials = vec![ClientMaterial::default(); 65536];
});
refusal!(refuses_grid_y_0, "out of range (Y 1..=256", |f| f.levels[1].grid.y = 0);
refusal!(refuses_grid_y_257, "out of range (Y 1..=256", |f| {
    f.levels[1].grid.y = 257;
    f.levels[1].chunks = vec![Chunk::default(); 257];
});
refusal!(refuses_grid_x_4097, "out of range (Y 1..=256", |f| f.levels[1].grid.x = 4097);
refusal!(refuses_chunk_count_mismatch, "3 chunks, but the grid", |f| {
    f.levels[0].chunks.pop();
});
refusal!(refuses_center_outside_grid, "center chunk y0 x2 z0 lies outside", |f| f.levels[0].center_chunk = ci(0, 2, 0));
refusal!(refuses_chunk_size_exp_16, "chunk size exponent 16", |f| f.levels[0].chunk_size_exp = 16);
refusal!(refuses_lightmap_exp_13, "lightmap size exponent 13", |f| chunk0(f).client.lightmaps[1] =
    Lightmap { size_exp: 13, luxels: vec![] });
refusal!(refuses_lightmap_luxel_mismatch, "lightmap has 4 luxel bytes", |f| chunk0(f).client.lightmaps[1].luxels =
    vec![0; 4]);
refusal!(refuses_layer_luxel_mismatch, "lightmap layer has 3 luxel bytes", |f| chunk0(f).client.dynamic_lights[0]
    .layers[0]
    .luxels = vec![0; 3]);
refusal!(refuses_layer_target_out_of_range, "targets lightmap 2", |f| chunk0(f).client.dynamic_lights[0].layers[0]
    .lightmap = 2);
refusal!(refuses_client_cube_count_mismatch, "5 client cubes", |f| {
    chunk0(f).client.cubes.pop();
});
refusal!(refuses_server_cube_count_mismatch, "7 server cubes", |f| chunk0(f).server.cubes.push(ServerCube::default()));
refusal!(refuses_client_dynamic_light_count_mismatch, "1 client-side dynamic lights", |f| {
    chunk0(f).client.dynamic_lights.pop();
});
refusal!(refuses_client_geometry_mismatch, "does not match the cube type geometry", |f| chunk0(f).client.cubes[1]
    .geometry =
    ClientGeometry::None);
refusal!(refuses_client_geometry_on_empty, "does not match the cube type empty", |f| chunk0(f).client.cubes[3]
    .geometry =
    ClientGeometry::ExtGeometry(ClientExtGeometryCube::default()));
refusal!(refuses_child_out_of_range, "child index 6 is out of range", |f| chunk0(f).common.cubes[4].kind =
    parent([Some(6), None, None, None, None, None, None, None]));
refusal!(refuses_shared_child, "cube 5 is the child of two parents", |f| chunk0(f).common.cubes[0].kind =
    parent([Some(1), Some(2), None, Some(5), None, Some(3), None, Some(4)]));
refusal!(refuses_cycle, "cycle", |f| {
    let c = chunk0(f);
    c.common.cubes[0].kind = parent([Some(1), Some(2), None, None, None, Some(3), None, None]);
    c.common.cubes[5].kind = parent([Some(4), None, None, None, None, None, None, None]);
    c.client.cubes[5].geometry = ClientGeometry::None;
});
refusal!(refuses_no_cubes, "no cubes", |f| {
    let c = chunk0(f);
    c.common.cubes.clear();
    c.client.cubes.clear();
    c.server.cubes.clear();
});
// The whole context: the cube loops name the cube only once it fails.
refusal!(
    refuses_face_bits_6_7,
    "level 0 / chunk y0 x0 z0 / client cube 1: face bits 0b10000000 have reserved bits 6–7",
    |f| chunk0(f).client.cubes[1].geometry =
        ClientGeometry::Geometry(ClientGeometryCube { lightmap: 0, first_vertex: 0, faces: 0x80 })
);
refusal!(
    refuses_nul_in_server_cube_string,
    "level 0 / chunk y0 x0 z0 / server data / server cube 2: string \"a\\0\" contains a NUL byte",
    |f| chunk0(f).server.cubes[2].pathfinding =
        Some(vec![PathAttribute { name: "a\0".into(), ..Default::default() }].into())
);
refusal!(refuses_material_out_of_range, "material index 2 is out of range", |f| chunk0(f).common.cubes[1].kind =
    CubeKind::Geometry(GeometryCube { material: 2, physics_material: 0, sound_material: 0 }));
refusal!(refuses_physics_out_of_range, "physics material index 1 is out of range", |f| {
    if let CubeKind::ExtGeometry(g) = &mut chunk0(f).common.cubes[2].kind {
        g.physics_materials[5] = 1;
    }
});
refusal!(refuses_sound_out_of_range, "sound material index 2 is out of range", |f| chunk0(f).common.cubes[5].kind =
    CubeKind::Geometry(GeometryCube { material: 0, physics_material: 0, sound_material: 2 }));
refusal!(refuses_point_outside_cube, "moved point 6", |f| {
    if let CubeKind::ExtGeometry(g) = &mut chunk0(f).common.cubes[2].kind {
        g.points.set(6, Some([0.0, -4.5, 0.0]));
    }
});
refusal!(refuses_visible_cube_out_of_range, "visible cube 6 is out of range", |f| chunk0(f).common.cubes[3]
    .visibility =
    Some(Box::new(Visibility { cubes: vec![6].into(), chunks: vec![].into() })));
refusal!(refuses_visible_chunk_outside_grid, "visible chunk y1 x0 z0 lies outside", |f| chunk0(f).common.cubes[3]
    .visibility =
    Some(Box::new(Visibility {
        cubes: vec![].into(),
        chunks: vec![VisibleChunk { chunk: ci(1, 0, 0), cubes: vec![] }].into(),
    })));
refusal!(refuses_light_ref_out_of_range, "fast light reference 1 is out of range", |f| {
    if let Some(l) = &mut chunk0(f).client.cubes[3].lighting {
        l.push_fast(LightRef { index: 1, amount: 1 });
    }
});
refusal!(refuses_load_region_outside_grid, "other active chunk y0 x0 z2 lies outside", |f| chunk0(f)
    .server
    .load_regions[0]
    .other_chunks
    .push(ci(0, 0, 2)));
refusal!(refuses_33_gamemodes, "too many gamemodes: 33", |f| f.header.gamemodes = vec!["g".into(); 33]);
refusal!(refuses_long_gamemode, "is 16 bytes long", |f| f.header.gamemodes[0] = "x".repeat(16));
refusal!(refuses_nul_in_table_string, "contains a NUL byte", |f| chunk0(f).common.used_materials[0] = "a\0b".into());
refusal!(refuses_nul_in_header_string, "name \"a\\0\" contains a NUL byte", |f| f.header.name = "a\0".into());
refusal!(refuses_client_material_count_mismatch, "1 client-side materials, but the level has 2", |f| {
    f.levels[0].client.materials.pop();
});
refusal!(refuses_zero_levels, "at least one level", |f| f.levels.clear());
refusal!(refuses_256_levels, "too many levels: 256", |f| f.levels = vec![minimal_level(); 256]);
refusal!(refuses_65536_extensions, "too many extensions: 65536", |f| f.extensions = vec![vec![]; 65536]);
refusal!(refuses_invalid_skybox_chunk, "does not fit a chunk index", |f| f.levels[0].client.sky_environments[0]
    .skybox_chunk = ci(0, 4096, 0));

#[test]
fn every_writer_refusal_is_also_a_reader_rejection_where_encodable() {
    // The shared checks: a file the writer refuses for an octree reason is rejected by the reader
    // when assembled by hand (see `broken_octrees_are_rejected`); here the converse: everything the
    // writer emits, the reader accepts (rich file), and the check functions agree on the rich chunk.
    let chunk = rich_chunk();
    let depths = rd::validate_octree(&chunk.common.cubes).unwrap();
    assert_eq!(depths, vec![0, 1, 1, 1, 1, 2]);
    for (i, (c, d)) in chunk.common.cubes.iter().zip(&depths).enumerate() {
        rd::check_cube(&chunk.common, i, c, *d, 4, GridSize { y: 1, x: 2, z: 2 }).unwrap();
    }
}

// =============================================================================================
// Fuzzing the decompressed blocks (corrupting compressed bytes mostly trips the LZ4 checksum, so
// the parsers behind it are exercised here directly).

/// The decompressed blocks the writer produces for `level`.
fn raw_level_from(level: &Level) -> RawLevel {
    let exp = level.chunk_size_exp;
    RawLevel {
        blocks: [
            wr::write_level_common(&level.common, "t").unwrap(),
            wr::write_level_client(&level.client, level.common.materials.len(), "t").unwrap(),
            wr::write_level_server(&level.server, "t").unwrap(),
        ],
        exp,
        grid: level.grid.to_bits().unwrap(),
        center: level.center_chunk.to_bits(),
        chunks: level.chunks.iter().map(|c| wr::write_chunk(c, exp, level.grid, "t").unwrap()).collect(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Hand assembly of the writer's blocks gives the writer's file (level flags 0, empty header).
    #[test]
    fn assembled_blocks_match_writer(mut level in arb_level()) {
        level.flags = 0;
        let file = File { levels: vec![level.clone()], ..File::default() };
        let bytes = assemble(&[raw_level_from(&level)]);
        prop_assert!(write(&file).unwrap() == bytes);
        prop_assert_eq!(read(&bytes).unwrap(), file);
    }

    /// Overwriting, truncating, inserting a byte or forging a u32 to 0xFFFFFFFF anywhere in any
    /// decompressed block never panics.
    #[test]
    fn corrupt_decompressed_blocks_never_panic(
        level in arb_level(),
        which in any::<prop::sample::Index>(),
        edits in vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..4), 1..24),
    ) {
        let raw = raw_level_from(&level);
        let b = which.index(3 + 3 * raw.chunks.len());
        for (at, v, mode) in edits {
            let mut raw = raw.clone();
            let block = if b < 3 { &mut raw.blocks[b] } else { &mut raw.chunks[(b - 3) / 3][(b - 3) % 3] };
            if block.is_empty() {
                continue;
            }
            let i = at.index(block.len());
            match mode {
                0 => block[i] = v,
                1 => block.truncate(i),
                2 => block.insert(i, v),
                _ => {
                    let end = (i + 4).min(block.len());
                    block[i..end].fill(0xFF);
                }
            }
            let _ = read(&assemble(&[raw]));
        }
    }
}

#[test]
fn empty_gamemode_names_read_and_write_back() {
    // docs/spec/PMF-NOTES.md S4: 1..16 bytes including the NUL, so "" is valid on both sides.
    let good = assemble(&[minimal_raw_level()]);
    let mut b = good[..16].to_vec();
    b.extend_from_slice(&[2, 0, b'd', b'm', 0]);
    b.extend_from_slice(&good[17..]);
    let file = read(&b).unwrap();
    assert_eq!(file.header.gamemodes, vec![String::new(), "dm".to_owned()]);
    assert_eq!(write(&file).unwrap(), b);
}

// =============================================================================================
// The file's budget and lazy decompression (issue 15, items 6 and 12)

#[test]
fn cubes_beyond_the_budget_are_refused_naming_the_chunk() {
    let file = rich_file();
    let bytes = write(&file).unwrap();
    let cubes: u64 = file.levels.iter().flat_map(|l| &l.chunks).map(|c| c.common.cubes.len() as u64).sum();
    let limits = |max_cubes| rd::ReadLimits { max_cubes, ..rd::ReadLimits::DEFAULT };
    assert_eq!(rd::read_with(&bytes, &limits(cubes)).unwrap(), file);
    let e = rd::read_with(&bytes, &limits(cubes - 1)).unwrap_err();
    assert!(e.to_string().contains("ReadLimits::max_cubes"), "{e}");
    assert!(e.section.contains("chunk") && e.section.contains("common data"), "{e}");
}

#[test]
fn decompressed_bytes_beyond_the_budget_are_refused_naming_the_block() {
    let bytes = write(&rich_file()).unwrap();
    let limits = rd::ReadLimits { max_decompressed: 16, ..rd::ReadLimits::DEFAULT };
    let e = rd::read_with(&bytes, &limits).unwrap_err();
    assert!(e.to_string().contains("ReadLimits::max_decompressed"), "{e}");
    assert!(e.section.starts_with("level 0 / ") && e.section.contains("LZ4 frame at byte"), "{e}");
}

/// 17 M one-byte cube records are 17 MB of block (about 70 KB of LZ4): refused by the default
/// budget when their count is read, before any is parsed (a cube in memory takes a few hundred
/// bytes: parsing them all took gigabytes).
#[test]
fn the_default_budget_refuses_millions_of_cubes_before_parsing_them() {
    let n = (17u32 << 20) + 1;
    let mut common = CHUNK_COMMON[..11].to_vec();
    common.extend_from_slice(&u32b(n));
    common.resize(common.len() + n as usize, 0);
    let bytes = raw_with_chunk(&common, CHUNK_CLIENT, CHUNK_SERVER);
    assert!(bytes.len() < 200_000, "{} bytes", bytes.len());
    let t = std::time::Instant::now();
    let e = read_err(&bytes);
    assert!(e.to_string().contains("ReadLimits::max_cubes"), "{e}");
    assert!(e.section.contains("chunk") && e.section.contains("common data"), "{e}");
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
}

/// Blocks are decompressed one at a time, right before they are parsed: a level whose common
/// block fails to parse is reported as such, and its client block (a broken frame here) is
/// never decompressed. All three used to be decompressed first.
#[test]
fn a_block_is_parsed_before_the_next_is_decompressed() {
    let mut level = minimal_raw_level();
    level.blocks[0].push(0xAA); // a byte after the level's common data
    let mut bytes = assemble(&[level.clone()]);
    // Break the client block's frame: its end mark becomes a huge block length.
    let magic = [0x04, 0x22, 0x4D, 0x18];
    let frames: Vec<usize> = bytes.windows(4).enumerate().filter(|(_, w)| *w == magic).map(|(i, _)| i).collect();
    let client = frames[1];
    let client_len = lz4f::compress(&level.blocks[1]).len();
    bytes[client + client_len - 8..client + client_len - 4].copy_from_slice(&u32b(0x7FFF_FFF0));
    let e = read_err(&bytes);
    assert!(e.section.contains("level 0 / common data"), "{e}");
    assert!(e.to_string().contains("1 bytes") || e.to_string().contains("after"), "{e}");
}

/// Pre-encoded chunks for the wrong number of levels, or a level's wrong number of chunks, are
/// refused like a file whose chunks do not fill its grid.
#[test]
fn write_with_chunks_checks_the_counts() {
    let mut file = File { levels: vec![Level { chunks: Vec::new(), ..Level::default() }], ..File::default() };
    file.levels[0].grid = GridSize { y: 1, x: 1, z: 2 };
    let e = wr::write_with_chunks(&file, &[], Compression::Fast).unwrap_err();
    assert!(e.to_string().contains("chunks for 0 levels, but the file has 1"), "{e}");
    let one = wr::encode_chunk(&Chunk::default(), 0, 0, 4, file.levels[0].grid).unwrap();
    let e = wr::write_with_chunks(&file, &[vec![one]], Compression::Fast).unwrap_err();
    assert!(e.to_string().contains("1 chunks, but the grid of"), "{e}");
}

// =============================================================================================
// Record sizes

/// Upper bounds on the per-cube record types. A decoded bake keeps one common, one client and one
/// server cube per cube, and a big map has millions of cubes (terrain(64,4,64): about 7 M), so
/// every byte here is about 7 MB of an editor that must stay within 6 GB (issue 14). These were
/// 184 + 80 + 24 = 288 bytes a cube before the rare wide parts were boxed and child indices got
/// their niche; a new field that widens every cube must raise a bound here on purpose.
#[test]
fn cube_records_stay_small() {
    use std::mem::size_of;
    assert_eq!(size_of::<Option<ChildIndex>>(), 4, "child indices use their niche (0 is never a child)");
    assert!(size_of::<ParentCube>() <= 32, "ParentCube: {}", size_of::<ParentCube>());
    assert!(size_of::<CubeKind>() <= 40, "CubeKind: {}", size_of::<CubeKind>());
    assert!(size_of::<Option<Box<Visibility>>>() <= 8);
    assert!(size_of::<Cube>() <= 56, "Cube: {}", size_of::<Cube>());
    assert!(size_of::<Option<CubeLighting>>() <= 24, "lighting: {}", size_of::<Option<CubeLighting>>());
    assert!(size_of::<ClientCube>() <= 48, "ClientCube: {}", size_of::<ClientCube>());
    assert!(size_of::<ServerCube>() <= 16, "ServerCube: {}", size_of::<ServerCube>());
    let per_cube = size_of::<Cube>() + size_of::<ClientCube>() + size_of::<ServerCube>();
    assert!(per_cube <= 120, "{per_cube} bytes a cube");
}

#[test]
fn moved_points_keep_their_corners() {
    let corners = [None, Some([1.0, 2.0, 3.0]), None, None, Some([-1.0, 0.0, 0.5]), None, None, Some([0.0; 3])];
    let mut p = MovedPoints::new(corners);
    assert_eq!((p.mask(), p.moved().count()), (0b1001_0010, 3));
    assert_eq!(p.corners(), corners);
    assert_eq!((p.get(4), p.get(0), p.get(8), p.get(usize::MAX)), (Some([-1.0, 0.0, 0.5]), None, None, None));
    // Moving and unmoving corners keeps the others and their order.
    p.set(0, Some([9.0; 3]));
    p.set(4, None);
    assert_eq!(p.moved().collect::<Vec<_>>(), [[9.0; 3], [1.0, 2.0, 3.0], [0.0; 3]]);
    assert_eq!(p.mask(), 0b1000_0011);
    // No moved corner is the empty value, however it came about.
    for bit in [0, 1, 7] {
        p.set(bit, None);
    }
    assert!(p.is_empty());
    assert_eq!(p, MovedPoints::default());
}

#[test]
fn light_references_are_boxed_only_when_there_are_some() {
    let r = LightRef { index: 2, amount: 9 };
    let bare = CubeLighting::from_base([1, 2, 3]);
    assert_eq!(bare, CubeLighting::new([1, 2, 3], vec![], vec![]));
    assert_eq!((bare.dynamic(), bare.fast(), bare.heap_bytes()), (&[][..], &[][..], 0));
    let mut lit = bare.clone();
    lit.push_fast(r);
    lit.push_dynamic(LightRef { index: 0, amount: 1 });
    assert_eq!(lit, CubeLighting::new([1, 2, 3], vec![LightRef { index: 0, amount: 1 }], vec![r]));
    assert_ne!(lit, bare);
    assert!(lit.heap_bytes() > 0);
}

/// A stream refuses a chunk more than the grids hold, and a level left short at the end, as
/// `write` refuses a level whose chunks do not fill its grid.
#[test]
fn chunk_stream_checks_the_counts() {
    let grid = GridSize { y: 1, x: 1, z: 2 };
    let file = File { levels: vec![Level { grid, ..Level::default() }], ..File::default() };
    let one = wr::encode_chunk(&Chunk::default(), 0, 0, 4, grid).unwrap();
    let mut out = std::io::Cursor::new(Vec::new());
    let mut stream = wr::ChunkStream::new(&file, &mut out, Compression::Fast).unwrap();
    stream.push(&one).unwrap();
    let e = stream.finish().unwrap_err();
    assert!(e.to_string().contains("level 0: 1 chunks, but the grid of"), "{e}");
    let mut stream = wr::ChunkStream::new(&file, &mut out, Compression::Fast).unwrap();
    for _ in 0..2 {
        stream.push(&one).unwrap();
    }
    let e = stream.push(&one).unwrap_err();
    assert!(e.to_string().contains("more chunks than the levels' grids hold"), "{e}");
    assert!(stream.push(&one).is_err(), "still refused, no panic");
}

/// A writer that takes at most `cap` bytes per call, across the slices of a vectored write, and
/// is interrupted every third call: what `FileBytes::write_to` must cope with.
struct Stingy {
    out: Vec<u8>,
    cap: usize,
    calls: usize,
    most_slices: usize,
}

impl Stingy {
    fn new(cap: usize) -> Self {
        Self { out: Vec::new(), cap, calls: 0, most_slices: 0 }
    }
}

impl std::io::Write for Stingy {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_vectored(&[std::io::IoSlice::new(buf)])
    }

    fn write_vectored(&mut self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
        self.calls += 1;
        if self.calls.is_multiple_of(3) {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        self.most_slices = self.most_slices.max(bufs.len());
        let mut n = 0;
        for b in bufs {
            let take = b.len().min(self.cap - n);
            self.out.extend_from_slice(&b[..take]);
            n += take;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A level of 1 500 chunks is more pieces than one vectored write takes (1 024): written in
/// several calls of at most 1 024 slices, the bytes are `write`'s.
#[test]
fn file_bytes_write_in_batches_of_slices() {
    let grid = GridSize { y: 1, x: 1, z: 1500 };
    let mut file = File { levels: vec![Level { grid, ..Level::default() }], ..File::default() };
    let mut encoder = wr::ChunkEncoder::new();
    let chunks: Vec<_> = (0..grid.len()).map(|i| encoder.encode(&Chunk::default(), 0, i, 4, grid).unwrap()).collect();
    file.levels[0].chunks = vec![Chunk::default(); grid.len()];
    let bytes = write(&file).unwrap();
    file.levels[0].chunks.clear();
    let chunks = [chunks];
    let pieces = wr::write_with_chunks(&file, &chunks, Compression::Fast).unwrap();
    let mut stingy = Stingy::new(1 << 20);
    pieces.write_to(&mut stingy).unwrap();
    assert!(stingy.out == bytes, "other bytes");
    assert_eq!(stingy.most_slices, 1024, "batches of IOV_MAX slices");
    let writes = stingy.calls - stingy.calls / 3;
    assert!(writes >= 2, "{writes} writes");
}
