//! Synthetic saves for every layout, written by a test-side builder that follows the
//! specification's tables (one builder per version, sharing the pieces the versions share), read
//! back, and hostile variants of them.

use std::time::Instant;

use super::*;
use crate::format::bin::ReadErrorKind;

// ----- builder ----------------------------------------------------------------------------------

/// A little-endian byte sink with .NET `BinaryWriter` strings.
#[derive(Default)]
struct W(Vec<u8>);

impl W {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn i16(&mut self, v: i16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn f32(&mut self, v: f32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn vec3(&mut self, v: [f32; 3]) {
        for x in v {
            self.f32(x);
        }
    }
    /// 7-bit-encoded length, then UTF-8.
    fn string(&mut self, s: &str) {
        let mut n = s.len() as u32;
        loop {
            let b = (n & 0x7F) as u8;
            n >>= 7;
            if n == 0 {
                self.u8(b);
                break;
            }
            self.u8(b | 0x80);
        }
        self.0.extend_from_slice(s.as_bytes());
    }
}

/// Format byte, (chunk size byte), character position, character and camera euler angles.
fn header(w: &mut W, s: &WorldSave, chunk_size_byte: bool) {
    w.u8(s.version);
    if chunk_size_byte {
        w.u8(s.chunk_size);
    }
    w.vec3(s.character_position);
    w.vec3(s.character_rotation);
    w.vec3(s.camera_rotation);
}

/// `Int16` count, then the strings.
fn names(w: &mut W, list: &[String]) {
    w.i16(list.len() as i16);
    for n in list {
        w.string(n);
    }
}

/// Chunk position, above-surface byte, (populated byte).
fn chunk_start(w: &mut W, c: &Chunk, populated: bool) {
    w.vec3(c.position);
    w.u8(c.above_surface);
    if populated {
        w.u8(c.populated.expect("format 14 chunk has the populated byte"));
    }
}

/// `Int16` run count, then each run's fixed fields and the tail as the fixture holds it.
fn runs(w: &mut W, c: &Chunk) {
    w.i16(c.runs.len() as i16);
    for r in &c.runs {
        w.i16(r.definition as i16);
        w.u8(r.color[0]);
        w.u8(r.color[1]);
        w.u8(r.color[2]);
        w.i16(r.start as i16);
        w.i16(r.repetitions as i16);
        match r.tail {
            RunTail::Plain => {}
            RunTail::Flags(f) => w.u8(f),
            RunTail::Custom { marker, angles } => {
                w.u8(marker);
                if let Some(a) = angles {
                    w.vec3(a);
                }
            }
            RunTail::FlagsAndRotation { flags, marker, angles } => {
                w.u8(flags);
                w.u8(marker);
                if let Some(a) = angles {
                    w.vec3(a);
                }
            }
        }
    }
}

/// `Int16` torch count, then index, normal, (item definition index).
fn lights(w: &mut W, c: &Chunk, with_item: bool) {
    w.i16(c.light_sources.len() as i16);
    for l in &c.light_sources {
        w.i16(l.voxel_index as i16);
        w.vec3(l.normal);
        if with_item {
            w.i16(l.item_definition.expect("format 8+ torch has an item"));
        }
    }
}

/// `Int16` item count, then definition index, position, quantity.
fn items(w: &mut W, c: &Chunk) {
    w.i16(c.items.len() as i16);
    for it in &c.items {
        w.i16(it.definition);
        w.vec3(it.position);
        w.i16(it.quantity);
    }
}

/// `Int16` count of voxels with properties; each: index, `Int16` count, (id, float, string)×n.
fn voxel_properties(w: &mut W, c: &Chunk) {
    w.i16(c.voxel_properties.len() as i16);
    for v in &c.voxel_properties {
        w.i16(v.voxel_index as i16);
        w.i16(v.properties.len() as i16);
        for p in &v.properties {
            w.i32(p.id);
            w.f32(p.float_value);
            w.string(&p.string_value);
        }
    }
}

fn game_objects(w: &mut W, s: &WorldSave) {
    w.i16(s.game_objects.len() as i16);
    for g in &s.game_objects {
        w.string(&g.prefab_path);
        w.string(&g.name);
        w.vec3(g.position);
        w.vec3(g.rotation);
        w.vec3(g.scale);
        w.i16(g.data.len() as i16);
        for (k, v) in &g.data {
            w.string(k);
            w.string(v);
        }
    }
}

/// `Int16` count; each: key, length (`Int16` per the specification, `Int32` as Voxel Play writes
/// it), bytes.
fn sections(w: &mut W, s: &WorldSave, width: SectionLength) {
    w.i16(s.custom_sections.len() as i16);
    for c in &s.custom_sections {
        w.string(&c.name);
        match width {
            SectionLength::I16 => w.i16(c.data.len() as i16),
            SectionLength::I32 => w.i32(c.data.len() as i32),
        }
        w.0.extend_from_slice(&c.data);
    }
}

fn chunk_count(w: &mut W, s: &WorldSave) {
    w.i32(s.chunks.len() as i32);
}

fn build_v14(s: &WorldSave, width: SectionLength) -> Vec<u8> {
    let mut w = W::default();
    header(&mut w, s, true);
    names(&mut w, &s.voxel_definitions);
    names(&mut w, &s.item_definitions);
    chunk_count(&mut w, s);
    for c in &s.chunks {
        chunk_start(&mut w, c, true);
        runs(&mut w, c);
        lights(&mut w, c, true);
        items(&mut w, c);
        voxel_properties(&mut w, c);
    }
    game_objects(&mut w, s);
    sections(&mut w, s, width);
    w.0
}

fn build_v13(s: &WorldSave, width: SectionLength) -> Vec<u8> {
    let mut w = W::default();
    header(&mut w, s, true);
    names(&mut w, &s.voxel_definitions);
    names(&mut w, &s.item_definitions);
    chunk_count(&mut w, s);
    for c in &s.chunks {
        chunk_start(&mut w, c, false);
        runs(&mut w, c);
        lights(&mut w, c, true);
        items(&mut w, c);
        voxel_properties(&mut w, c);
    }
    game_objects(&mut w, s);
    sections(&mut w, s, width);
    w.0
}

/// 12 (flags tail) and 11 (flags + rotation tail): the fixture's tails differ, the layout of
/// everything else is the same.
fn build_v12_v11(s: &WorldSave, width: SectionLength) -> Vec<u8> {
    let mut w = W::default();
    header(&mut w, s, true);
    names(&mut w, &s.voxel_definitions);
    names(&mut w, &s.item_definitions);
    chunk_count(&mut w, s);
    for c in &s.chunks {
        chunk_start(&mut w, c, false);
        runs(&mut w, c);
        lights(&mut w, c, true);
        items(&mut w, c);
    }
    game_objects(&mut w, s);
    sections(&mut w, s, width);
    w.0
}

/// 10 (chunk size byte) and 9 (none): no custom sections.
fn build_v10_v9(s: &WorldSave) -> Vec<u8> {
    let mut w = W::default();
    header(&mut w, s, s.version >= 10);
    names(&mut w, &s.voxel_definitions);
    names(&mut w, &s.item_definitions);
    chunk_count(&mut w, s);
    for c in &s.chunks {
        chunk_start(&mut w, c, false);
        runs(&mut w, c);
        lights(&mut w, c, true);
        items(&mut w, c);
    }
    game_objects(&mut w, s);
    w.0
}

/// 8 (torches with item index) and 7 (without): ends after the chunks.
fn build_v8_v7(s: &WorldSave) -> Vec<u8> {
    let mut w = W::default();
    header(&mut w, s, false);
    names(&mut w, &s.voxel_definitions);
    names(&mut w, &s.item_definitions);
    chunk_count(&mut w, s);
    for c in &s.chunks {
        chunk_start(&mut w, c, false);
        runs(&mut w, c);
        lights(&mut w, c, s.version >= 8);
        items(&mut w, c);
    }
    w.0
}

fn build_v6(s: &WorldSave) -> Vec<u8> {
    let mut w = W::default();
    header(&mut w, s, false);
    names(&mut w, &s.voxel_definitions);
    names(&mut w, &s.item_definitions);
    chunk_count(&mut w, s);
    for c in &s.chunks {
        chunk_start(&mut w, c, false);
        runs(&mut w, c);
        lights(&mut w, c, false);
        items(&mut w, c);
    }
    w.0
}

fn build_v5(s: &WorldSave) -> Vec<u8> {
    let mut w = W::default();
    header(&mut w, s, false);
    names(&mut w, &s.voxel_definitions);
    chunk_count(&mut w, s);
    for c in &s.chunks {
        chunk_start(&mut w, c, false);
        runs(&mut w, c);
        lights(&mut w, c, false);
    }
    w.0
}

/// The file of `s` in its version's layout; custom section lengths as the specification says.
fn build(s: &WorldSave) -> Vec<u8> {
    build_with(s, SectionLength::I16)
}

fn build_with(s: &WorldSave, width: SectionLength) -> Vec<u8> {
    match s.version {
        14 => build_v14(s, width),
        13 => build_v13(s, width),
        11 | 12 => build_v12_v11(s, width),
        9 | 10 => build_v10_v9(s),
        7 | 8 => build_v8_v7(s),
        6 => build_v6(s),
        5 => build_v5(s),
        v => panic!("no builder for {v}"),
    }
}

// ----- fixtures ---------------------------------------------------------------------------------

const DIRT: u16 = 0;
const GRASS: u16 = 1;
const WATER: u16 = 2;
const LAMP: u16 = 3;

fn deflate(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// The run tail a fixture run of `def` has in `version` (5/6: Dirt and Grass plain, Water flags,
/// Lamp custom).
fn tail(version: u8, def: u16, flags: u8, angles: Option<[f32; 3]>) -> RunTail {
    let marker = u8::from(angles.is_some());
    match version {
        5 | 6 => match def {
            WATER => RunTail::Flags(flags),
            LAMP => RunTail::Custom { marker, angles },
            _ => RunTail::Plain,
        },
        7..=11 => RunTail::FlagsAndRotation { flags, marker, angles },
        _ => RunTail::Flags(flags),
    }
}

fn run(version: u8, definition: u16, color: [u8; 3], start: u16, repetitions: u16, flags: u8) -> VoxelRun {
    VoxelRun { definition, color, start, repetitions, tail: tail(version, definition, flags, None) }
}

/// A save with everything `version` can hold; 12 uses chunks of 32.
fn fixture(version: u8) -> WorldSave {
    let l = layout::Layout::of(version).unwrap();
    let size: u16 = if version == 12 { 32 } else { 16 };
    let half = f32::from(size / 2);
    let layer = size * size;
    let white = [255; 3];
    let lamp_angles = Some([0.0, 90.0, 0.0]);
    let mut c0 = Chunk {
        position: [half, half, half],
        above_surface: 1,
        populated: l.populated_byte.then_some(1),
        runs: vec![
            run(version, DIRT, white, 0, layer, 0),
            run(version, GRASS, white, layer, size, 0),
            run(version, WATER, [40, 80, 255], layer + size, 8, 3),
            run(version, DIRT, [200, 100, 50], layer + 3 * size + 4, 5, 0),
            VoxelRun {
                definition: LAMP,
                color: white,
                start: 2 * layer + 17,
                repetitions: 1,
                tail: tail(version, LAMP, 0, lamp_angles),
            },
            run(version, LAMP, white, 2 * layer + 18, 1, 0),
        ],
        light_sources: vec![LightSource {
            voxel_index: layer + 3,
            normal: [0.0, 1.0, 0.0],
            item_definition: l.light_item.then_some(0),
        }],
        items: Vec::new(),
        voxel_properties: Vec::new(),
    };
    if l.items {
        c0.items.push(Item { definition: 1, position: [3.5, 17.25, 4.5], quantity: 2 });
    }
    if l.voxel_properties {
        c0.voxel_properties.push(VoxelProperties {
            voxel_index: 5,
            properties: vec![
                VoxelProperty { id: 7, float_value: 1.5, string_value: "hello".into() },
                VoxelProperty { id: -3, float_value: 0.0, string_value: String::new() },
            ],
        });
    }
    let c1 = Chunk {
        position: [half + f32::from(size), half, -half],
        above_surface: 0,
        populated: l.populated_byte.then_some(0),
        runs: vec![run(version, DIRT, white, 0, size * layer, 0)],
        ..Chunk::default()
    };
    let empty = Chunk {
        position: [half, half + f32::from(size), half],
        above_surface: 1,
        populated: l.populated_byte.then_some(1),
        ..Chunk::default()
    };
    let mut s = WorldSave {
        version,
        chunk_size: size as u8,
        character_position: [1.5, 20.0, -3.25],
        character_rotation: [0.0, 45.0, 0.0],
        camera_rotation: [10.0, 0.0, 0.0],
        voxel_definitions: vec!["Dirt".into(), "Grass".into(), "Water".into(), "Lamp ✓".into()],
        item_definitions: Vec::new(),
        chunks: vec![c0, c1, empty],
        ..WorldSave::default()
    };
    if l.item_definitions {
        s.item_definitions = vec!["Torch".into(), "Sword".into()];
    }
    if l.game_objects {
        s.game_objects = vec![
            GameObject {
                // Longer than 127 bytes: a two-byte length prefix.
                prefab_path: format!("MyPrefabs/{}", "deep/".repeat(30)) + "chest",
                name: "Chest (1)".into(),
                position: [4.0, 17.0, 2.0],
                rotation: [0.0, 180.0, 0.0],
                scale: [1.0, 1.0, 1.0],
                data: vec![("hp".into(), "10".into()), ("owner".into(), "Jörð".into())],
            },
            GameObject { prefab_path: "Barrel".into(), scale: [2.0; 3], ..GameObject::default() },
        ];
    }
    if l.custom_sections {
        s.custom_sections = vec![
            CustomSection { name: "inventory".into(), data: deflate(b"sword x1, torch x12") },
            CustomSection { name: "empty".into(), data: Vec::new() },
        ];
        s.section_length = Some(SectionLength::I16);
    }
    s
}

const VERSIONS: [u8; 10] = [14, 13, 12, 11, 10, 9, 8, 7, 6, 5];

/// Reads `bytes` and compares with `expected`, ignoring `resolution` (returned).
fn read_back(bytes: &[u8], options: &ReadOptions, expected: &WorldSave) -> Option<Resolution> {
    let mut got = read_world(bytes, options).unwrap_or_else(|e| panic!("format {}: {e}", expected.version));
    let resolution = got.resolution.take();
    assert_eq!(&got, expected, "format {}", expected.version);
    resolution
}

// ----- tests ------------------------------------------------------------------------------------

#[test]
fn every_layout_reads_back() {
    for v in VERSIONS {
        let s = fixture(v);
        let bytes = build(&s);
        let resolution = read_back(&bytes, &ReadOptions::default(), &s);
        assert_eq!(resolution.is_some(), v <= 6, "format {v}");
    }
}

/// The shape of the real format 11 saves that would not import (issue 15): a few hundred
/// 16-voxel chunks of a world near the origin, voxel names in Cyrillic (two UTF-8 bytes per
/// letter, so byte and character counts differ), custom voxels with and without rotation, items,
/// torches, game objects, `Int32` custom section lengths as Voxel Play writes them — and one
/// chunk at x = −15 999 992, where Voxel Play's `FastMath.FloorToInt` puts a chunk asked for at a
/// NaN or infinite X. The file holds that chunk: the reader must read it exactly, and the
/// importer must import the world without it.
fn format_11_world_with_an_overflow_chunk() -> WorldSave {
    let names = ["Земля", "Трава", "Камень", "Факел"];
    let mut s = WorldSave {
        version: 11,
        chunk_size: 16,
        character_position: [120.5, 30.0, 64.25],
        voxel_definitions: names.iter().map(|n| n.to_string()).collect(),
        item_definitions: vec!["Факел".into(), "Меч".into()],
        ..WorldSave::default()
    };
    let t = |flags, angles: Option<[f32; 3]>| RunTail::FlagsAndRotation {
        flags,
        marker: u8::from(angles.is_some()),
        angles,
    };
    for cx in 0..12u16 {
        for cz in 0..8u16 {
            let mut c = Chunk {
                position: [f32::from(cx) * 16.0 + 8.0, 8.0, f32::from(cz) * 16.0 + 8.0],
                above_surface: 1,
                runs: vec![
                    VoxelRun { definition: 2, color: [255; 3], start: 0, repetitions: 512, tail: t(0, None) },
                    VoxelRun { definition: 0, color: [255; 3], start: 512, repetitions: 256, tail: t(0, None) },
                ],
                ..Chunk::default()
            };
            // A grass layer with uneven rows, as terrain leaves it: three runs a row.
            for z in 0..16u16 {
                let row = 768 + z * 16;
                let a = 2 + (z + cx) % 5;
                let b = 3 + (z * 7 + cz) % 6;
                let tint = [90, 160 + (z % 3) as u8, 60];
                c.runs.push(VoxelRun { definition: 1, color: tint, start: row, repetitions: a, tail: t(2, None) });
                c.runs.push(VoxelRun {
                    definition: 0,
                    color: [255; 3],
                    start: row + a,
                    repetitions: b,
                    tail: t(0, None),
                });
                let rest = 16 - a - b;
                c.runs.push(VoxelRun {
                    definition: 1,
                    color: [255; 3],
                    start: row + a + b,
                    repetitions: rest,
                    tail: t(1, None),
                });
            }
            if (cx + cz) % 5 == 0 {
                c.runs.push(VoxelRun {
                    definition: 3,
                    color: [255; 3],
                    start: 1100,
                    repetitions: 1,
                    tail: t(0, Some([0.0, 90.0, 0.0])),
                });
                c.light_sources.push(LightSource {
                    voxel_index: 700,
                    normal: [0.0, 1.0, 0.0],
                    item_definition: Some(0),
                });
            }
            if (cx * 3 + cz) % 7 == 0 {
                let p = [c.position[0] - 2.5, 12.25, c.position[2] + 3.75];
                c.items.push(Item { definition: 1, position: p, quantity: 3 });
            }
            s.chunks.push(c);
        }
    }
    // The overflow chunk, in the middle of the list as a hash-ordered dictionary leaves it.
    s.chunks.insert(
        40,
        Chunk {
            position: [-15_999_992.0, 24.0, 40.0],
            above_surface: 1,
            runs: vec![VoxelRun { definition: 1, color: [255; 3], start: 0, repetitions: 16, tail: t(0, None) }],
            ..Chunk::default()
        },
    );
    s.game_objects = vec![GameObject {
        prefab_path: "Префабы/сундук".into(),
        name: "Сундук".into(),
        position: [20.0, 17.0, 30.0],
        scale: [1.0; 3],
        ..GameObject::default()
    }];
    s.custom_sections =
        vec![CustomSection { name: "инвентарь".into(), data: deflate("меч x1".as_bytes()) }];
    s.section_length = Some(SectionLength::I32);
    s
}

#[test]
fn format_11_world_with_an_overflow_chunk_reads_exactly() {
    let s = format_11_world_with_an_overflow_chunk();
    let bytes = build_with(&s, SectionLength::I32);
    assert!((40_000..60_000).contains(&bytes.len()), "{} bytes", bytes.len());
    read_back(&bytes, &ReadOptions::default(), &s);

    // Imported at the level origin: everything but the overflow chunk, which is reported.
    use crate::import::voxelplay::{DropReason, ImportOptions, import_world};
    let mut map = crate::map::Map::new("t");
    let at = map.levels[0].frame().origin_lattice();
    let save = read_world(&bytes, &ReadOptions::default()).unwrap();
    let r = import_world(&mut map, 0, &save, &ImportOptions::at(at, 3)).unwrap();
    let world_voxels: u64 = s.chunks.iter().flat_map(|c| &c.runs).map(|r| u64::from(r.repetitions)).sum();
    assert_eq!(r.voxels, world_voxels - 16);
    let dropped: Vec<_> = r.dropped.iter().map(|d| (d.index, d.voxels, d.reason)).collect();
    assert_eq!(dropped, [(40, 16, DropReason::Overflow)]);
    assert!(r.materials_created.iter().any(|&m| map.library.get(m).unwrap().name == "Камень"));
}

/// Voxel Play's own readers of formats 11 and 12 read an item as definition, quantity, position:
/// a file written that way reads back with the items' real positions.
#[test]
fn format_11_items_quantity_first() {
    let s = format_11_world_with_an_overflow_chunk();
    let mut bytes = build_with(&s, SectionLength::I32);
    // Rewrite every item record quantity-first, in place (same 16 bytes).
    let mut n = 0;
    for c in &s.chunks {
        for it in &c.items {
            let mut spec = it.definition.to_le_bytes().to_vec();
            let mut swapped = spec.clone();
            for v in it.position {
                spec.extend_from_slice(&v.to_le_bytes());
            }
            spec.extend_from_slice(&it.quantity.to_le_bytes());
            swapped.extend_from_slice(&it.quantity.to_le_bytes());
            swapped.extend_from_slice(&spec[2..14]);
            let at = bytes.windows(16).position(|w| w == spec.as_slice()).expect("item record");
            bytes[at..at + 16].copy_from_slice(&swapped);
            n += 1;
        }
    }
    assert!(n > 5);
    let got = read_world(&bytes, &ReadOptions::default()).unwrap();
    assert_eq!(got.item_order, ItemOrder::QuantityFirst);
    let items = |w: &WorldSave| w.chunks.iter().flat_map(|c| c.items.clone()).collect::<Vec<_>>();
    assert_eq!(items(&got), items(&s));
    // The specification's order stays the default where items fit either way.
    let plain = read_world(&build_with(&s, SectionLength::I32), &ReadOptions::default()).unwrap();
    assert_eq!(plain.item_order, ItemOrder::PositionFirst);
}

#[test]
fn layouts_differ_where_the_tables_do() {
    // The same content, written per version: sizes follow the tables' differences.
    let sizes: Vec<(u8, usize)> = VERSIONS.iter().map(|&v| (v, build(&fixture(v)).len())).collect();
    let mut seen = std::collections::HashSet::new();
    for (_, n) in &sizes {
        seen.insert(*n);
    }
    assert!(seen.len() >= 8, "{sizes:?}");
    // 14 = 13 + one populated byte per chunk.
    let (a, b) = (fixture(14), fixture(13));
    assert_eq!(build(&a).len(), build(&b).len() + a.chunks.len());
}

#[test]
fn custom_section_length_as_voxel_play_writes_it() {
    for v in [11, 12, 13, 14] {
        let mut s = fixture(v);
        s.section_length = Some(SectionLength::I32);
        read_back(&build_with(&s, SectionLength::I32), &ReadOptions::default(), &s);
    }
}

#[test]
fn custom_sections_inflate() {
    let s = fixture(14);
    assert_eq!(s.custom_sections[0].inflate(1 << 20).unwrap(), b"sword x1, torch x12");
    assert_eq!(s.custom_sections[0].inflate(5), Err(InflateError::TooLarge { limit: 5 }));
    let bad = CustomSection { name: "x".into(), data: vec![0xFF; 8] };
    assert!(matches!(bad.inflate(100), Err(InflateError::Corrupt(_))));
}

#[test]
fn formats_5_and_6_search_finds_the_unique_exact_parse() {
    for v in [5, 6] {
        let s = fixture(v);
        let r = read_back(&build(&s), &ReadOptions::default(), &s).unwrap();
        assert_eq!(r.method, ResolutionMethod::Search);
        assert_eq!(r.candidates, 1, "format {v}");
        assert!(r.exhaustive && !r.is_ambiguous());
        assert_eq!(
            r.kinds,
            vec![Some(TailKind::Plain), Some(TailKind::Plain), Some(TailKind::Flags), Some(TailKind::Custom)]
        );
    }
}

#[test]
fn formats_5_and_6_user_list() {
    for v in [5, 6] {
        let s = fixture(v);
        let options = ReadOptions {
            transparent_voxels: Some(vec!["Water".into()]),
            custom_voxels: vec!["Lamp ✓".into()],
            ..ReadOptions::default()
        };
        let r = read_back(&build(&s), &options, &s).unwrap();
        assert_eq!(r.method, ResolutionMethod::UserList);
        assert!(!r.is_ambiguous());
        // A wrong list is not second-guessed: it fails (or reads something else).
        let wrong = ReadOptions { transparent_voxels: Some(vec![]), ..ReadOptions::default() };
        assert!(read_world(&build(&s), &wrong).map(|w| w.chunks != s.chunks).unwrap_or(true));
    }
}

/// A format 6 file whose last run (the only "Lamp" run) parses exactly both as a flags run and as
/// a custom run with angles: the 12 angle bytes + "0 torches, 1 item" + the item also read as "2
/// torches, 0 items".
fn ambiguous_v6() -> WorldSave {
    let ax = f32::from_le_bytes([2, 0, 5, 0]); // 2 torches; the first on voxel 5
    WorldSave {
        version: 6,
        chunk_size: 16,
        voxel_definitions: vec!["Stone".into(), "Lamp".into()],
        item_definitions: vec!["Sword".into()],
        chunks: vec![Chunk {
            position: [8.0, 8.0, 8.0],
            above_surface: 1,
            runs: vec![
                VoxelRun { definition: 0, color: [255; 3], start: 0, repetitions: 16, tail: RunTail::Plain },
                VoxelRun {
                    definition: 1,
                    color: [255; 3],
                    start: 100,
                    repetitions: 1,
                    tail: RunTail::Custom { marker: 1, angles: Some([ax, 90.0, 1.0]) },
                },
            ],
            items: vec![Item { definition: 0, position: [1.0, 2.0, 3.0], quantity: 0 }],
            ..Chunk::default()
        }],
        ..WorldSave::default()
    }
}

#[test]
fn formats_5_and_6_ambiguity_is_reported_and_resolved_by_preference() {
    let truth = ambiguous_v6();
    let bytes = build(&truth);
    let got = read_world(&bytes, &ReadOptions::default()).unwrap();
    let r = got.resolution.as_ref().unwrap();
    assert_eq!(r.candidates, 2);
    assert!(r.exhaustive && r.is_ambiguous());
    // Both candidates give Lamp a byte; the preference (fewest custom) picks flags.
    assert_eq!(r.kinds, vec![Some(TailKind::Plain), Some(TailKind::Flags)]);
    assert_eq!(got.chunks[0].runs[1].tail, RunTail::Flags(1));
    assert_eq!(got.chunks[0].light_sources.len(), 2);
    assert_eq!(got.chunks[0].light_sources[0].voxel_index, 5);
    assert!(got.chunks[0].items.is_empty());

    // Refusing ambiguity lists both.
    let strict = ReadOptions { reject_ambiguous: true, ..ReadOptions::default() };
    match read_world(&bytes, &strict) {
        Err(VoxelPlayError::Ambiguous { version: 6, count: 2, candidates }) => {
            assert!(candidates.contains(&vec![("Stone".into(), TailKind::Plain), ("Lamp".into(), TailKind::Flags)]));
            assert!(candidates.contains(&vec![("Stone".into(), TailKind::Plain), ("Lamp".into(), TailKind::Custom)]));
        }
        other => panic!("{other:?}"),
    }

    // The user's list overrides the search.
    let list =
        ReadOptions { transparent_voxels: Some(vec![]), custom_voxels: vec!["Lamp".into()], ..ReadOptions::default() };
    read_back(&bytes, &list, &truth);
}

#[test]
fn formats_5_and_6_without_exact_parse_or_budget() {
    let mut bytes = build(&fixture(5));
    bytes.push(0);
    match read_world(&bytes, &ReadOptions::default()) {
        Err(VoxelPlayError::Unresolved { version: 5, reason, furthest }) => {
            assert!(reason.contains("no assignment"), "{reason}");
            assert!(furthest.is_some());
        }
        other => panic!("{other:?}"),
    }
    let bytes = build(&fixture(6));
    let tiny = ReadOptions { search_budget: Some(10), ..ReadOptions::default() };
    match read_world(&bytes, &tiny) {
        Err(e @ VoxelPlayError::Unresolved { .. }) => assert!(e.to_string().contains("budget"), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn truncation_at_every_byte_is_an_error() {
    let mut files: Vec<(u8, Vec<u8>)> = VERSIONS.iter().map(|&v| (v, build(&fixture(v)))).collect();
    files.push((6, build(&ambiguous_v6())));
    for (v, bytes) in files {
        let full = read_world(&bytes, &ReadOptions::default()).unwrap();
        for n in 0..bytes.len() {
            // Formats 5/6 could in principle find another exact parse of a prefix; then it must
            // at least not be the same world.
            if let Ok(w) = read_world(&bytes[..n], &ReadOptions::default()) {
                assert!(v <= 6 && w != full, "format {v}: prefix of {n} bytes read as a whole file");
            }
        }
    }
}

#[test]
fn forged_counts_fail_quickly() {
    let s = fixture(14);
    let bytes = build(&s);
    // The chunk count sits right after the item definitions.
    let h = read::read_header(&bytes, layout::Layout::of(14).unwrap()).unwrap();
    let at = h.body_start - 4;
    let t = Instant::now();
    for forged in [0x7FFF_FFFFi32, -1, 1000] {
        let mut b = bytes.clone();
        b[at..at + 4].copy_from_slice(&forged.to_le_bytes());
        let e = read_world(&b, &ReadOptions::default()).unwrap_err();
        assert!(matches!(e, VoxelPlayError::Read(_)), "{e}");
    }
    // A run count of 0xFFFF.
    let mut b = bytes.clone();
    let runs_at = h.body_start + 12 + 2;
    b[runs_at..runs_at + 2].copy_from_slice(&[0xFF, 0xFF]);
    let e = read_world(&b, &ReadOptions::default()).unwrap_err();
    assert!(matches!(&e, VoxelPlayError::Read(r) if matches!(r.kind, ReadErrorKind::CountTooLarge { .. })), "{e}");

    // Huge string lengths: i32::MAX, a negative .NET length, and a 6-byte prefix.
    for prefix in
        [&[0xFF, 0xFF, 0xFF, 0xFF, 0x07][..], &[0xFF, 0xFF, 0xFF, 0xFF, 0x0F], &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]]
    {
        let mut w = W::default();
        header(&mut w, &s, true);
        w.i16(1);
        w.0.extend_from_slice(prefix);
        w.0.extend_from_slice(b"abc");
        let e = read_world(&w.0, &ReadOptions::default()).unwrap_err();
        assert!(matches!(e, VoxelPlayError::Read(_)), "{e}");
    }
    // The same for formats 5/6, whose search must not be slowed down by them.
    let mut b = build(&fixture(5));
    let h = read::read_header(&b, layout::Layout::of(5).unwrap()).unwrap();
    b[h.body_start - 4..h.body_start].copy_from_slice(&0x7FFF_FFFFi32.to_le_bytes());
    assert!(read_world(&b, &ReadOptions::default()).is_err());
    assert!(t.elapsed().as_secs_f64() < 2.0, "{:?}", t.elapsed());
}

#[test]
fn unsupported_versions() {
    for v in [15u8, 16, 21, 255, 4, 3, 0] {
        let mut bytes = build(&fixture(14));
        bytes[0] = v;
        let e = read_world(&bytes, &ReadOptions::default()).unwrap_err();
        assert_eq!(e, VoxelPlayError::UnsupportedVersion(v));
        assert!(e.to_string().contains(&format!("unsupported version {v}")), "{e}");
    }
    assert_eq!(read_world(&[], &ReadOptions::default()).unwrap_err(), VoxelPlayError::Empty);
}

#[test]
fn bad_values_are_errors_with_offsets() {
    // Chunk size 24.
    let mut b = build(&fixture(14));
    b[1] = 24;
    let e = read_world(&b, &ReadOptions::default()).unwrap_err();
    assert!(matches!(&e, VoxelPlayError::Read(r) if r.offset == 1), "{e}");
    assert!(e.to_string().contains("neither 16 nor 32"));

    // A run leaving the chunk, a definition index out of range, invalid UTF-8.
    let mut s = fixture(13);
    s.chunks[0].runs[0].repetitions = 4097;
    assert!(read_world(&build(&s), &ReadOptions::default()).unwrap_err().to_string().contains("leaves the chunk"));
    let mut s = fixture(13);
    s.chunks[0].runs[0].definition = 4;
    assert!(read_world(&build(&s), &ReadOptions::default()).unwrap_err().to_string().contains("out of range"));
    let mut b = build(&fixture(12));
    let p = b.windows(4).position(|w| w == b"Dirt").unwrap();
    b[p] = 0xC3;
    assert!(read_world(&b, &ReadOptions::default()).unwrap_err().to_string().contains("UTF-8"));
    // Trailing bytes.
    let mut b = build(&fixture(9));
    b.push(0);
    assert!(matches!(
        read_world(&b, &ReadOptions::default()).unwrap_err(),
        VoxelPlayError::Read(r) if r.kind == ReadErrorKind::TrailingBytes(1)
    ));
}

#[test]
fn big_counts_are_read_as_unsigned() {
    // A 32³ chunk that is one run: 32768 repetitions, written as (Int16)32768 = -32768.
    let mut s = fixture(14);
    s.chunk_size = 32;
    for c in &mut s.chunks {
        c.position = [16.0, 16.0, 16.0];
    }
    s.chunks[1].runs[0].repetitions = 32768;
    s.chunks[1].runs[0].start = 0;
    let got = read_back(&build(&s), &ReadOptions::default(), &s);
    assert!(got.is_none());
}

/// Deterministic mutations of every synthetic file: no panic, and the 5/6 search stays bounded.
#[test]
fn mutations_never_panic() {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let t = Instant::now();
    for v in VERSIONS {
        let bytes = build(&fixture(v));
        for _ in 0..300 {
            let mut b = bytes.clone();
            for _ in 0..1 + next() % 4 {
                let i = (next() % b.len() as u64) as usize;
                b[i] = next() as u8;
            }
            let _ = read_world(&b, &ReadOptions::default());
        }
    }
    assert!(t.elapsed().as_secs_f64() < 20.0, "{:?}", t.elapsed());
}

/// Writes the synthetic files into `$VP_CORPUS` as a seed corpus for the `voxelplay_read` fuzz
/// target: `VP_CORPUS=dir cargo test -p pmfedit-core voxelplay -- --ignored dump_corpus`.
#[test]
#[ignore = "writes files; run by hand to seed the fuzz corpus"]
fn dump_corpus() {
    let dir = std::env::var("VP_CORPUS").expect("VP_CORPUS names a directory");
    std::fs::create_dir_all(&dir).unwrap();
    for v in VERSIONS {
        std::fs::write(format!("{dir}/v{v}.bytes"), build(&fixture(v))).unwrap();
    }
    std::fs::write(format!("{dir}/v14-i32.bytes"), build_with(&fixture(14), SectionLength::I32)).unwrap();
    std::fs::write(format!("{dir}/v6-ambiguous.bytes"), build(&ambiguous_v6())).unwrap();
}
