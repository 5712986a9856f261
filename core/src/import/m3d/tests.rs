use glam::IVec3;
use proptest::prelude::*;

use super::*;
use crate::format::m3d::{Voxel, read, read_a3d};
use crate::map::Map;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/testdata/m3d/");

fn file(name: &str) -> Vec<u8> {
    let dir = std::path::Path::new(DATA);
    assert!(dir.is_dir(), "the shared test data folder {DATA} is missing (it sits beside the repository)");
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn origin(map: &Map) -> IVec3 {
    map.levels[0].frame().origin_lattice()
}

fn material_at(map: &Map, p: IVec3) -> Option<&Material> {
    let (cube, _) = map.levels[0].get(p).unwrap();
    cube.face_material(Face::PosY).map(|id| map.library.get(id).unwrap())
}

#[test]
fn voxel_model_becomes_cubes() {
    let mut map = Map::new("t");
    let at = origin(&map);
    let model = read(&file("voxel.m3d")).unwrap();
    let r = import_voxels(&mut map, 0, &model, at, 3).unwrap();
    assert_eq!((r.voxels_placed, r.voxels_cleared), (4, 0));
    assert_eq!(r.materials_created.len(), 3);
    assert!(r.materials_matched.is_empty());
    assert_eq!(r.bounds, Some(LatticeBox::new(at, at + IVec3::new(24, 16, 16))));
    assert!(!r.changes.is_empty());
    // Voxel (x, y, z) is lattice at + 8·(x, y, z): +Y up, no mirroring.
    let e = 8;
    let white = material_at(&map, at).unwrap();
    assert_eq!(white.color, [255, 255, 255]);
    assert_eq!(white.name, "m3d_ffffff");
    assert_eq!(material_at(&map, at + IVec3::new(2 * e, 0, 0)).unwrap().color, [255, 255, 255]);
    assert!(material_at(&map, at + IVec3::new(e, 0, 0)).is_none());
    assert_eq!(material_at(&map, at + IVec3::new(0, 0, e)).unwrap().color, [0x3f, 0x3f, 0x74]);
    assert_eq!(material_at(&map, at + IVec3::new(0, e, 0)).unwrap().color, [0xdf, 0x71, 0x26]);
    assert!(material_at(&map, at + IVec3::new(0, e, e)).is_none());
    assert_eq!(crate::sample::solid_cells(&map.levels[0]), 4 * 8 * 8 * 8);

    // The ASCII twin into a copy: the same cubes, every material matched by name.
    let mut again = Map::new("t");
    again.library = map.library.clone();
    let r = import_voxels(&mut again, 0, &read_a3d(&String::from_utf8(file("voxel.a3d")).unwrap()).unwrap(), at, 3)
        .unwrap();
    assert_eq!(r.materials_matched.len(), 3);
    assert!(r.materials_created.is_empty());
    assert!(again.levels[0].same_cubes(&map.levels[0]));
    assert_eq!(again.library.materials().len(), map.library.materials().len());
}

#[test]
fn named_types_match_materials_and_clear_voxels_clear() {
    let mut map = Map::new("t");
    let stone = map.library.add(Material::new("stone 2", PhysicsId(0), SoundId(0))).unwrap();
    let at = origin(&map);
    map.levels[0]
        .fill_box(LatticeBox::new(at, at + IVec3::splat(4)), Cube::solid(stone, PhysicsId(0), SoundId(0)))
        .unwrap();
    let model = Model {
        voxel_types: vec![
            VoxelType { name: Some("stone_2".into()), ..VoxelType::default() },
            VoxelType { name: Some("glass".into()), color: Rgba::from_rgba([10, 20, 30, 128]), ..VoxelType::default() },
        ],
        voxel_blocks: vec![VoxelBlock {
            position: [0, 0, 0],
            size: [4, 1, 1],
            data: vec![VOXEL_CLEAR, 0, 1, VOXEL_UNSET],
            ..VoxelBlock::default()
        }],
        ..Model::default()
    };
    let r = import_voxels(&mut map, 0, &model, at, 0).unwrap();
    assert_eq!((r.voxels_placed, r.voxels_cleared), (2, 1));
    assert_eq!(r.materials_matched, ["stone 2"]);
    assert_eq!(r.materials_created, ["glass"]);
    let glass = map.library.materials().by_name("glass").unwrap().1;
    assert!(glass.transparent && glass.alpha == 128 && glass.color == [10, 20, 30]);
    assert!(material_at(&map, at).is_none(), "cleared");
    assert_eq!(material_at(&map, at + IVec3::X).unwrap().name, "stone 2");
    assert_eq!(material_at(&map, at + IVec3::new(2, 0, 0)).unwrap().name, "glass");
    assert_eq!(material_at(&map, at + IVec3::new(3, 0, 0)).unwrap().name, "stone 2", "unset keeps the map");
}

#[test]
fn outside_the_grid_changes_nothing() {
    let mut map = Map::new("t");
    let before = map.clone();
    let model = read(&file("voxel.m3d")).unwrap();
    let e = import_voxels(&mut map, 0, &model, IVec3::new(-8, 0, 0), 3).unwrap_err();
    assert!(e.to_string().contains("outside the level grid"), "{e}");
    assert!(map.levels[0].content_eq(&before.levels[0]));
    assert_eq!(map.library.materials().len(), before.library.materials().len());
    assert!(matches!(import_voxels(&mut map, 3, &model, IVec3::ZERO, 0), Err(ImportError::NoLevel(3))));
    assert!(import_voxels(&mut map, 0, &model, IVec3::ZERO, 40).is_err());
    // Far-away blocks: 64-bit arithmetic, no overflow.
    let far = |x: i32| Model {
        voxel_types: vec![VoxelType::default()],
        voxel_blocks: vec![VoxelBlock {
            position: [x, 0, 0],
            size: [2, 1, 1],
            data: vec![0, 0],
            ..VoxelBlock::default()
        }],
        ..Model::default()
    };
    assert!(import_voxels(&mut map, 0, &far(i32::MAX - 1), IVec3::ZERO, 20).is_err());
    assert!(import_voxels(&mut map, 0, &far(i32::MIN), IVec3::ZERO, 20).is_err());
    let at = origin(&map) - IVec3::new(1 << 30, 0, 0);
    let r = import_voxels(&mut map, 0, &far(1 << 29), at, 1).unwrap();
    assert_eq!(r.bounds, Some(LatticeBox::new(origin(&map), origin(&map) + IVec3::new(4, 2, 2))));
    let grid = map.levels[0].frame().grid_box();
    assert!(export_voxels(&map.library, &map.levels[0], grid, 0).unwrap_err().to_string().contains("at most"));
    let mesh = read(&file("cube.m3d")).unwrap();
    assert!(import_voxels(&mut map, 0, &mesh, IVec3::ZERO, 0).unwrap_err().to_string().contains("no voxel data"));
}

#[test]
fn alternate_groups_import_one_block() {
    let block = |group, uncertainty, t| VoxelBlock {
        size: [1, 1, 1],
        data: vec![t],
        group,
        uncertainty,
        ..VoxelBlock::default()
    };
    let model = Model {
        voxel_types: vec![VoxelType::default(), VoxelType { color: Rgba(0xff00_ff00), ..VoxelType::default() }],
        voxel_blocks: vec![block(1, 200, 0), block(1, 55, 1), block(0, 0, 0)],
        ..Model::default()
    };
    let mut warnings = Vec::new();
    let sel = selected_blocks(&model, &mut warnings);
    assert_eq!(sel.len(), 2);
    assert_eq!(sel[0].data, [1]);
    assert_eq!(warnings.len(), 1);
}

#[test]
fn meshes_become_props_and_resources() {
    let mut map = Map::new("t");
    let at = origin(&map) + IVec3::new(16, 8, -8);
    let bytes = file("cube_usemtl.m3d");
    let r = import_mesh(&mut map, 0, &bytes, "my cube", at).unwrap();
    assert_eq!(r.triangles, 12);
    assert_eq!(r.resources.len(), 1);
    assert_eq!(r.resources[0].path, "models/my_cube.m3d");
    assert_eq!(r.resources[0].bytes, bytes);
    let e = map.levels[0].objects.entities().get(r.entities[0]).unwrap();
    let EntityData::Prop(p) = &e.entity.data else { panic!() };
    assert_eq!(p.model, "map:models/my_cube");
    assert_eq!(p.position, [2.0, 1.0, -1.0]);

    let r = import_m3d(&mut map, 0, &file("CesiumMan.m3d"), "cesium", at, 0, ImportMode::Auto).unwrap();
    assert!(r.triangles > 1000, "{}", r.triangles);
    assert_eq!(r.entities.len(), 1);
    assert_eq!(map.levels[0].objects.entities().len(), 2);
    let r = import_m3d(&mut map, 0, &file("cube_with_vertexcolors.a3d"), "vc", at, 0, ImportMode::Auto).unwrap();
    assert_eq!(r.resources[0].path, "models/vc.a3d");
    // A voxel model imported as a mesh is a prop too.
    let r = import_m3d(&mut map, 0, &file("voxel.m3d"), "vox", at, 0, ImportMode::Mesh).unwrap();
    assert_eq!((r.voxels_placed, r.entities.len()), (0, 1));
    assert_eq!(resource_name(""), "model");
    assert_eq!(resource_name("../x/y z.m3d"), "_._x_y_z.m3d");
}

/// A model with one textured triangle whose texture is an inlined PNG, plus a script asset.
fn textured_model() -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, magic: &[u8; 4], body: &[u8]) {
        out.extend_from_slice(magic);
        out.extend_from_slice(&(body.len() as u32 + 8).to_le_bytes());
        out.extend_from_slice(body);
    }
    // vc float, vi/si/ti u8, no colours, no bones, skin, shapes, faces, voxels.
    let types: u32 = 2 | 3 << 6 | 3 << 10 | 3 << 14 | 3 << 18 | 3 << 20 | 3 << 22 | 3 << 24;
    let strtab = b"tri\0\0\0\0wood\0gen.lua\0missing\0";
    let mut p = Vec::new();
    let mut head = 1.0f32.to_le_bytes().to_vec();
    head.extend_from_slice(&types.to_le_bytes());
    head.extend_from_slice(strtab);
    chunk(&mut p, b"HEAD", &head);
    let mut tmap = Vec::new();
    for v in [0.0f32, 0.0, 1.0, 0.0, 0.0, 1.0] {
        tmap.extend_from_slice(&v.to_le_bytes());
    }
    chunk(&mut p, b"TMAP", &tmap);
    let mut v = Vec::new();
    for c in [0.0f32, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0] {
        v.extend_from_slice(&c.to_le_bytes());
    }
    chunk(&mut p, b"VRTS", &v);
    chunk(&mut p, b"MTRL", &[7, 128, 7, 129, 20]);
    chunk(&mut p, b"MESH", &[0, 7, 0x31, 0, 0, 1, 1, 2, 2]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend_from_slice(b"not really");
    let mut aset = vec![7];
    aset.extend_from_slice(&png);
    chunk(&mut p, b"ASET", &aset);
    chunk(&mut p, b"ASET", b"\x0cprint()");
    p.extend_from_slice(b"OMD3");
    let mut f = b"3DMO".to_vec();
    f.extend_from_slice(&(p.len() as u32 + 8).to_le_bytes());
    f.extend_from_slice(&p);
    f
}

#[test]
fn inlined_textures_come_along() {
    let bytes = textured_model();
    let m = read(&bytes).unwrap();
    assert_eq!(m.faces[0].texcoords, [Some(0), Some(1), Some(2)]);
    assert_eq!(m.materials[0].texture_maps().collect::<Vec<_>>(), ["wood", "missing"]);
    let mut map = Map::new("t");
    let at = origin(&map);
    let r = import_mesh(&mut map, 0, &bytes, "tri", at).unwrap();
    let paths: Vec<&str> = r.resources.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["models/tri.m3d", "textures/tri_0.png"]);
    assert!(r.resources[1].bytes.starts_with(b"\x89PNG"));
    assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
    assert!(r.to_string().contains("textures/tri_0.png"));
}

#[test]
fn export_reads_back() {
    let mut map = Map::new("t");
    let at = origin(&map);
    let model = read(&file("voxel.m3d")).unwrap();
    import_voxels(&mut map, 0, &model, at, 2).unwrap();
    let region = LatticeBox::new(at, at + IVec3::new(12, 8, 8));
    let out = read(&export_voxels(&map.library, &map.levels[0], region, 2).unwrap()).unwrap();
    assert_eq!(out.voxel_blocks.len(), 1);
    let b = &out.voxel_blocks[0];
    assert_eq!((b.size, b.position), ([3, 2, 2], [-1, 0, -1]));
    // Same voxels, type indices in first-seen order.
    let colors = |m: &Model, b: &VoxelBlock| -> Vec<Option<[u8; 3]>> {
        b.data
            .iter()
            .map(|&v| match Voxel::from_cell(v) {
                Voxel::Type(t) => Some(m.voxel_types[usize::from(t)].color.rgb()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(colors(&out, b), colors(&model, &model.voxel_blocks[0]));
    assert_eq!(export_origin(&region, 2), at + IVec3::new(4, 0, 4));
    assert_eq!(occupied_box(&map.levels[0]), Some(region));
    assert!(export_voxels(&map.library, &map.levels[0], LatticeBox::new(at, at), 0).is_err());
    assert!(export_voxels(&map.library, &map.levels[0], LatticeBox::new(at, at + IVec3::splat(1 << 12)), 0).is_err());
}

/// An empty box exports nothing: m3d.h refuses a `VOXD` chunk without `VOXT` (M3D_ERR_VOXT), so
/// neither the export nor the writer produces one, and the reader refuses one too.
#[test]
fn an_empty_box_is_refused() {
    let map = Map::new("t");
    let at = origin(&map);
    let region = LatticeBox::new(at, at + IVec3::splat(8));
    let e = export_voxels(&map.library, &map.levels[0], region, 3).unwrap_err();
    assert_eq!(e, ImportError::NoCubes);
    assert_eq!(e.to_string(), "the box holds no cubes");
    // The writer refuses blocks without types, whoever builds the model.
    let model = Model {
        voxel_blocks: vec![VoxelBlock { size: [1, 1, 1], data: vec![VOXEL_UNSET], ..VoxelBlock::default() }],
        ..Model::default()
    };
    assert!(matches!(m3d::write_voxel_model(&model), Err(m3d::M3dError::NoVoxelTypes)));
    // A file like the one the export used to write (types, then the VOXT chunk cut out) is an
    // error naming the chunk.
    let one = Model { voxel_types: vec![VoxelType::default()], ..model };
    let bytes = m3d::write_voxel_model(&one).unwrap();
    let mut payload = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::ZlibDecoder::new(&bytes[8..]), &mut payload).unwrap();
    let at = payload.windows(4).position(|w| w == b"VOXT").unwrap();
    let len = u32::from_le_bytes(payload[at + 4..at + 8].try_into().unwrap()) as usize;
    payload.drain(at..at + len);
    let mut file = b"3DMO".to_vec();
    file.extend_from_slice(&(payload.len() as u32 + 8).to_le_bytes());
    file.extend_from_slice(&payload);
    let e = read(&file).unwrap_err().to_string();
    assert!(e.contains("VOXD chunk") && e.contains("without a VOXT chunk"), "{e}");
}

#[test]
fn a_hundred_thousand_voxels() {
    let n = [50u32, 40, 50];
    let data: Vec<u16> = (0..n[0] * n[1] * n[2]).map(|i| ((i * 7 + i / 13) % 5) as u16).collect();
    let model = Model {
        voxel_types: (0..5)
            .map(|i| VoxelType { color: Rgba(0xff00_0000 | (i * 40)), ..VoxelType::default() })
            .collect(),
        voxel_blocks: vec![VoxelBlock { position: [-25, 0, -25], size: n, data, ..VoxelBlock::default() }],
        ..Model::default()
    };
    let mut map = Map::new("t");
    let at = origin(&map);
    let t = std::time::Instant::now();
    let r = import_voxels(&mut map, 0, &model, at, 0).unwrap();
    let took = t.elapsed();
    assert_eq!(r.voxels_placed, 100_000);
    assert_eq!(crate::sample::solid_cells(&map.levels[0]), 100_000);
    assert!(took.as_secs() < 60, "{took:?}");
    let region = r.bounds.unwrap();
    let back = read(&export_voxels(&map.library, &map.levels[0], region, 0).unwrap()).unwrap();
    assert_eq!(back.voxel_count(), 100_000);
    assert_eq!(export_origin(&region, 0), at);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// A random grid of cubes, exported, read back and imported into a copy with the box
    /// cleared, gives the same level.
    #[test]
    fn export_import_round_trip(
        dims in (1i32..6, 1i32..6, 1i32..6),
        cells in proptest::collection::vec(0u8..4, 125),
        cube_log2 in 0u8..4,
        shift in (0i32..3, 0i32..3, 0i32..3),
    ) {
        let mut map = Map::new("t");
        let (physics, sound) = (PhysicsId(0), SoundId(0));
        let mats: Vec<MaterialId> = ["red rock", "green/leaf", "blue"]
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let mut m = Material::new(*n, physics, sound);
                m.color = [40 * i as u8, 200, 7];
                map.library.add(m).unwrap()
            })
            .collect();
        let edge = 1 << cube_log2;
        let min = origin(&map) + IVec3::new(shift.0, shift.1, shift.2) * edge;
        let size = IVec3::new(dims.0, dims.1, dims.2);
        let region = LatticeBox::new(min, min + size * edge);
        let mut expect = Vec::new();
        for y in 0..dims.1 {
            for z in 0..dims.2 {
                for x in 0..dims.0 {
                    let v = cells[((y * 5 + z) * 5 + x) as usize];
                    let p = min + IVec3::new(x, y, z) * edge;
                    if v > 0 {
                        let c = Cube::solid(mats[v as usize - 1], physics, sound);
                        map.levels[0].fill_box(LatticeBox::new(p, p + IVec3::splat(edge)), c).unwrap();
                    }
                    expect.push(v);
                }
            }
        }
        let bytes = match export_voxels(&map.library, &map.levels[0], region, cube_log2) {
            // A grid drawn all air is refused (an empty model is invalid): nothing to compare.
            Err(ImportError::NoCubes) => {
                prop_assert!(expect.iter().all(|&v| v == 0));
                return Ok(());
            }
            r => r.unwrap(),
        };
        let model = read(&bytes).unwrap();
        let b = &model.voxel_blocks[0];
        prop_assert_eq!(b.size, [dims.0 as u32, dims.1 as u32, dims.2 as u32]);
        let names: Vec<Option<String>> = b
            .data
            .iter()
            .map(|&v| match Voxel::from_cell(v) {
                Voxel::Type(t) => model.voxel_types[usize::from(t)].name.clone(),
                _ => None,
            })
            .collect();
        let want: Vec<Option<String>> = expect
            .iter()
            .map(|&v| (v > 0).then(|| sanitize_identifier(&map.library.get(mats[v as usize - 1]).unwrap().name)))
            .collect();
        prop_assert_eq!(names, want);

        let mut copy = map.clone();
        copy.levels[0].clear_box(region).unwrap();
        let r = import_voxels(&mut copy, 0, &model, export_origin(&region, cube_log2), cube_log2).unwrap();
        prop_assert!(r.materials_created.is_empty(), "{:?}", r.materials_created);
        prop_assert!(copy.levels[0].same_cubes(&map.levels[0]));
    }
}
