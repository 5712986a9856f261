//! Tests: golden vectors (one table drives both reading and writing), proptest round trips for
//! every type, hostile input, and writer refusals.

use proptest::collection::vec;
use proptest::prelude::*;

use super::arb::Arb;
use super::*;
use crate::format::bin::ReadErrorKind;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// `u32 size` + table bytes, as a section stores it.
fn table_bytes(b: &StringTableBuilder) -> Vec<u8> {
    let mut w = Writer::new();
    b.write_table(&mut w);
    w.into_inner()
}

fn with_table<R>(b: &StringTableBuilder, f: impl FnOnce(&StringTable<'_>) -> R) -> R {
    let bytes = table_bytes(b);
    let mut r = Reader::new(&bytes, "table");
    let t = StringTable::read(&mut r).expect("table");
    f(&t)
}

/// Writes `entities` with a fresh table, reads them back.
fn round_trip(entities: &[Entity]) -> (Vec<u8>, Vec<Entity>) {
    let mut w = Writer::new();
    let mut b = StringTableBuilder::new();
    write_entities(&mut w, &mut b, entities).expect("write");
    let bytes = w.into_inner();
    let back = with_table(&b, |t| {
        let mut r = Reader::new(&bytes, "entities");
        let back = read_entities(&mut r, t).expect("read");
        r.expect_end().expect("end");
        back
    });
    (bytes, back)
}

fn read_all(bytes: &[u8], b: &StringTableBuilder) -> ReadResult<Vec<Entity>> {
    with_table(b, |t| read_entities(&mut Reader::new(bytes, "entities"), t))
}

fn read_one(bytes: &[u8], b: &StringTableBuilder) -> ReadResult<Entity> {
    with_table(b, |t| {
        let mut r = Reader::new(bytes, "entities");
        let e = read_entity(&mut r, t)?;
        r.expect_end()?;
        Ok(e)
    })
}

fn write_one(b: &mut StringTableBuilder, e: &Entity) -> WriteResult<Vec<u8>> {
    let mut w = Writer::new();
    write_entity(&mut w, b, e)?;
    Ok(w.into_inner())
}

/// The golden table: strings interned in a known order.
fn golden_strings() -> StringTableBuilder {
    let mut b = StringTableBuilder::new();
    for (s, off) in [
        ("d", 1),
        ("h", 3),
        ("s.bas", 5),
        ("hp", 11),
        ("v", 14),
        ("on", 16),
        ("grid", 19),
        ("tag", 24),
        ("a", 28),
        ("flag", 30),
        ("lamp", 35),
        ("ctl", 40),
    ] {
        assert_eq!(b.intern(s), off, "{s}");
    }
    b
}

const GOLDEN_TABLE: &[u8] = b"\0d\0h\0s.bas\0hp\0v\0on\0grid\0tag\0a\0flag\0lamp\0ctl\0";

fn ent(gamemodes: u32, name: &str, custom: Vec<CustomProperty>, data: EntityData) -> Entity {
    Entity { gamemodes, name: name.into(), custom, data }
}

fn prop(name: &str, value: PropertyData) -> CustomProperty {
    CustomProperty { name: name.into(), value }
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

// ---------------------------------------------------------------------------------------------
// Golden vectors
// ---------------------------------------------------------------------------------------------

fn golden_vectors() -> Vec<(&'static str, Entity, Vec<u8>)> {
    vec![
        (
            "dummy",
            ent(0, "d", vec![], EntityData::Dummy),
            cat(&[
                &[0],          // type 0: dummy
                &[0, 0, 0, 0], // gamemodes: all
                &[8, 0, 0, 0], // size: name + custom count
                &[1, 0, 0, 0], // name "d"
                &[0, 0, 0, 0], // 0 custom properties
            ]),
        ),
        (
            "headless",
            ent(0b101, "h", vec![], EntityData::Headless(Headless { script: "s.bas".into() })),
            cat(&[
                &[1],           // type 1: headless
                &[5, 0, 0, 0],  // gamemodes 0 and 2
                &[12, 0, 0, 0], // size
                &[3, 0, 0, 0],  // name "h"
                &[0, 0, 0, 0],  // 0 custom properties
                &[5, 0, 0, 0],  // script "s.bas"
            ]),
        ),
        (
            "scalar i32",
            ent(0, "d", vec![prop("hp", PropertyData::scalar(PropertyValues::I32(vec![100])))], EntityData::Dummy),
            cat(&[
                &[0],
                &[0, 0, 0, 0],
                &[21, 0, 0, 0], // size: 4 + 4 + (4 + 1 + 4 + 4)
                &[1, 0, 0, 0],
                &[1, 0, 0, 0],   // 1 custom property
                &[11, 0, 0, 0],  //   name "hp"
                &[4],            //   type 4: i32
                &[0, 0, 0, 0],   //   0 dimensions: scalar
                &[100, 0, 0, 0], //   100
            ]),
        ),
        (
            "f32[3]",
            ent(
                0,
                "d",
                vec![prop("v", PropertyData::array(vec![3], PropertyValues::F32(vec![1.0, -2.0, 0.5])))],
                EntityData::Dummy,
            ),
            cat(&[
                &[0],
                &[0, 0, 0, 0],
                &[33, 0, 0, 0], // size: 8 + 4 + 1 + 4 + 4 + 12
                &[1, 0, 0, 0],
                &[1, 0, 0, 0],
                &[14, 0, 0, 0],            // name "v"
                &[10],                     // type 10: f32
                &[1, 0, 0, 0],             // 1 dimension
                &[3, 0, 0, 0],             //   of length 3
                &[0x00, 0x00, 0x80, 0x3F], // 1.0
                &[0x00, 0x00, 0x00, 0xC0], // -2.0
                &[0x00, 0x00, 0x00, 0x3F], // 0.5
            ]),
        ),
        (
            "bool[10] bitmap",
            ent(
                0,
                "d",
                vec![prop(
                    "on",
                    PropertyData::array(
                        vec![10],
                        PropertyValues::Bool(vec![true, false, true, true, false, false, false, false, true, false]),
                    ),
                )],
                EntityData::Dummy,
            ),
            cat(&[
                &[0],
                &[0, 0, 0, 0],
                &[23, 0, 0, 0], // size: 8 + 4 + 1 + 4 + 4 + 2
                &[1, 0, 0, 0],
                &[1, 0, 0, 0],
                &[16, 0, 0, 0], // name "on"
                &[1],           // type 1: bool
                &[1, 0, 0, 0],  // 1 dimension
                &[10, 0, 0, 0], //   of length 10
                &[0b0000_1101], // values 0..8, LSB first: 1 0 1 1 0 0 0 0
                &[0b0000_0001], // values 8..10: 1 0, padding 0
            ]),
        ),
        (
            "u8[2][3]",
            ent(
                0,
                "d",
                vec![prop("grid", PropertyData::array(vec![2, 3], PropertyValues::U8(vec![1, 2, 3, 4, 5, 6])))],
                EntityData::Dummy,
            ),
            cat(&[
                &[0],
                &[0, 0, 0, 0],
                &[31, 0, 0, 0], // size: 8 + 4 + 1 + 4 + 8 + 6
                &[1, 0, 0, 0],
                &[1, 0, 0, 0],
                &[19, 0, 0, 0],      // name "grid"
                &[6],                // type 6: u8
                &[2, 0, 0, 0],       // 2 dimensions
                &[2, 0, 0, 0],       //   2
                &[3, 0, 0, 0],       //   3
                &[1, 2, 3, 4, 5, 6], // row-major: [0][0..3], [1][0..3]
            ]),
        ),
        (
            "str + scalar bool",
            ent(
                0,
                "h",
                vec![
                    prop("tag", PropertyData::scalar(PropertyValues::Str(vec!["a".into()]))),
                    prop("flag", PropertyData::scalar(PropertyValues::Bool(vec![true]))),
                ],
                EntityData::Headless(Headless { script: String::new() }),
            ),
            cat(&[
                &[1],
                &[0, 0, 0, 0],
                &[35, 0, 0, 0], // size: 4 + 4 + 4 + 13 + 10
                &[3, 0, 0, 0],  // name "h"
                &[2, 0, 0, 0],  // 2 custom properties
                &[0, 0, 0, 0],  // script ""
                &[24, 0, 0, 0], // name "tag"
                &[12],          //   type 12: str
                &[0, 0, 0, 0],  //   scalar
                &[28, 0, 0, 0], //   "a"
                &[30, 0, 0, 0], // name "flag"
                &[1],           //   type 1: bool
                &[0, 0, 0, 0],  //   scalar
                &[1],           //   true: one byte
            ]),
        ),
        (
            "spot light",
            ent(
                1,
                "lamp",
                vec![],
                EntityData::Light(Light {
                    flags: LightFlags::INACTIVE,
                    position: [1.0, 2.0, 0.5],
                    color: [255, 128, 0],
                    intensity: 2.0,
                    range: 10.0,
                    kind: LightKind::Spot { cone_radius: 0.5 },
                    sig_activate: "on".into(),
                    ..Light::default()
                }),
            ),
            cat(&[
                &[8],                      // type 8: light
                &[1, 0, 0, 0],             // gamemode 0
                &[68, 0, 0, 0],            // size
                &[35, 0, 0, 0],            // name "lamp"
                &[0, 0, 0, 0],             // 0 custom properties
                &[0x11],                   // inactive (bit 4) | kind 1: spot
                &[0x00, 0x00, 0x80, 0x3F], // position 1.0
                &[0x00, 0x00, 0x00, 0x40], //          2.0
                &[0x00, 0x00, 0x00, 0x3F], //          0.5
                &[0, 0, 0, 0],             // follow entity ""
                &[0, 0, 0, 0],             // follow bone ""
                &[255, 128, 0],            // RGB
                &[0x00, 0x00, 0x00, 0x40], // intensity 2.0
                &[0; 12],                  // size 0, 0, 0
                &[0x00, 0x00, 0x20, 0x41], // range 10.0
                &[0x00, 0x00, 0x00, 0x3F], // cone radius 0.5
                &[16, 0, 0, 0],            // sig activate "on"
                &[0, 0, 0, 0],             // sig deactivate ""
                &[0, 0, 0, 0],             // sig toggle ""
            ]),
        ),
        (
            "dynamic light controller",
            ent(
                0,
                "ctl",
                vec![],
                EntityData::DynLightCtl(DynLightCtl {
                    flags: DynLightCtlFlags::ADVANCE_WHILE_OFF,
                    pattern_len: 8,
                    light_id: 2,
                    pattern: 0xF0,
                    advance_time: 1000,
                    sig_on: "on".into(),
                    ..DynLightCtl::default()
                }),
            ),
            cat(&[
                &[25],               // type 25
                &[0, 0, 0, 0],       // gamemodes
                &[33, 0, 0, 0],      // size
                &[40, 0, 0, 0],      // name "ctl"
                &[0, 0, 0, 0],       // 0 custom properties
                &[0x27],             // advance while off (bit 5) | pattern length 8 − 1
                &[2, 0, 0, 0],       // light global ID
                &[0xF0, 0, 0, 0],    // pattern
                &[0xE8, 0x03, 0, 0], // advance time 1000 µs
                &[16, 0, 0, 0],      // sig on "on"
                &[0, 0, 0, 0],       // sig off
                &[0, 0, 0, 0],       // sig toggle
            ]),
        ),
        (
            "opaque beam",
            ent(0, "d", vec![], EntityData::Opaque { type_id: 9, custom_count: 2, payload: vec![0xAA, 0xBB] }),
            cat(&[
                &[9],           // type 9: beam
                &[0, 0, 0, 0],  // gamemodes
                &[10, 0, 0, 0], // size: 4 + 4 + 2
                &[1, 0, 0, 0],  // name "d"
                &[2, 0, 0, 0],  // custom count, kept
                &[0xAA, 0xBB],  // payload, verbatim
            ]),
        ),
    ]
}

#[test]
fn golden_vectors_read() {
    let b = golden_strings();
    for (what, value, bytes) in golden_vectors() {
        assert_eq!(read_one(&bytes, &b), Ok(value), "{what}");
    }
}

#[test]
fn golden_vectors_write() {
    let mut b = golden_strings();
    for (what, value, bytes) in golden_vectors() {
        assert_eq!(write_one(&mut b, &value), Ok(bytes), "{what}");
    }
    // Every string was already in the table: nothing was added.
    assert_eq!(b.bytes(), GOLDEN_TABLE);
}

#[test]
fn golden_vectors_as_a_list() {
    let b = golden_strings();
    let vectors = golden_vectors();
    let mut bytes = (vectors.len() as u32).to_le_bytes().to_vec();
    for (_, _, v) in &vectors {
        bytes.extend_from_slice(v);
    }
    let values: Vec<Entity> = vectors.into_iter().map(|(_, e, _)| e).collect();
    assert_eq!(read_all(&bytes, &b), Ok(values.clone()));
    let mut w = Writer::new();
    let mut b2 = golden_strings();
    write_entities(&mut w, &mut b2, &values).unwrap();
    assert_eq!(w.as_slice(), &bytes[..]);
}

#[test]
fn writer_interns_in_order_of_first_use() {
    let mut b = StringTableBuilder::new();
    let e = ent(0, "h", vec![prop("tag", PropertyData::scalar(PropertyValues::Str(vec!["a".into()])))], {
        EntityData::Headless(Headless { script: "s.bas".into() })
    });
    let bytes = write_one(&mut b, &e).unwrap();
    // name, script, property name, property value
    assert_eq!(b.bytes(), b"\0h\0s.bas\0tag\0a\0");
    assert_eq!(&bytes[9..13], &[1, 0, 0, 0]); // "h"
    assert_eq!(&bytes[17..21], &[3, 0, 0, 0]); // "s.bas"
}

// ---------------------------------------------------------------------------------------------
// Names, ids, flags
// ---------------------------------------------------------------------------------------------

#[test]
fn type_names_ids_and_positions() {
    let light = EntityData::Light(Light { position: [1.0, 2.0, 3.0], ..Light::default() });
    assert_eq!((light.type_id(), light.type_name(), light.position()), (8, "light", Some([1.0, 2.0, 3.0])));
    let door = EntityData::Door(Door { closed_position: [4.0, 0.0, 0.0], ..Door::default() });
    assert_eq!((door.type_id(), door.type_name(), door.position()), (6, "door", Some([4.0, 0.0, 0.0])));
    let ctl = EntityData::FastLightCtl(FastLightCtl::default());
    assert_eq!((ctl.type_id(), ctl.type_name(), ctl.position()), (26, "fast light controller", None));
    let beam = EntityData::Opaque { type_id: 10, custom_count: 0, payload: vec![] };
    assert_eq!((beam.type_id(), beam.type_name()), (10, "particles"));
    assert_eq!(type_name_of(24), "audio emitter");
    assert_eq!(type_name_of(27), "unknown");
    assert!(is_opaque_type(9) && is_opaque_type(11) && is_opaque_type(27) && is_opaque_type(255));
    assert!(!is_opaque_type(8) && !is_opaque_type(12) && !is_opaque_type(26));
}

#[test]
fn flag_bits_follow_entities_md() {
    assert_eq!(PropFlags::NO_ANIMATION_LOOP.bits(), 0x80);
    assert_eq!(PropFlags::HIDDEN.bits(), 0x01);
    assert_eq!(GenericFlags::NO_COLLISION.bits(), 0x20);
    assert_eq!(GenericFlags::INACTIVE.bits(), 0x01);
    assert_eq!(CubeFlags::SHOW_POS_X.bits(), 0x0100);
    assert_eq!(CubeFlags::SHOW_NEG_Z.bits(), 0x2000);
    assert_eq!(CubeFlags::DRAW_BACKFACES.bits(), 0x0020);
    assert_eq!(DoorFlags::DRAW_BACKFACES.bits(), 0x0002);
    assert_eq!(DoorFlags::OPEN.bits(), 0x0001);
    assert_eq!(TriggerFlags::CONTINUOUS.bits(), 0x80);
    assert_eq!(BroadcasterFlags::REPLACE_INITIATOR_OUTPUT_2.bits(), 0x20);
    assert_eq!(AudioEmitterFlags::NO_DOPPLER.bits(), 0x10);
    assert_eq!(FastLightCtlFlags::NO_INTERPOLATION.bits(), 0x40);
    assert_eq!(PropFlags::KNOWN.bits(), 0xFF);
    assert_eq!(GenericFlags::KNOWN.bits(), 0x3F);
    assert_eq!(CubeFlags::KNOWN.bits(), 0x3F3F);

    let mut f = TextFlags::HIDDEN | TextFlags::ESCAPE_CODES;
    assert!(f.hidden() && f.escape_codes() && !f.vertical_center());
    f.set(TextFlags::HIDDEN, false);
    assert_eq!(f.bits(), 0x10);
    assert_eq!(TextFlags::from_bits_retain(0xE1).reserved_bits(), 0xE0);
}

/// Checks each flags type's [`FlagBit`] table against its typed API: every entry's bit is its
/// constant's, the setter sets exactly that bit and the getter sees it (and no other getter
/// does), and the table covers [`KNOWN`](GenericFlags::KNOWN) with unique names and labels.
macro_rules! check_named_tables {
    ($($t:ident),* $(,)?) => {$({
        let ty = stringify!($t);
        assert_eq!($t::NAMED.len(), $t::TYPED.len(), "{ty}");
        let mut known = $t::empty();
        for (i, (entry, &(konst, get))) in $t::NAMED.iter().zip($t::TYPED).enumerate() {
            let what = format!("{ty}::{}", entry.name);
            let one = $t::from_bits_retain(1 << entry.bit);
            assert_eq!(konst, one, "{what}: the table's bit is the constant's");
            let mut f = $t::empty();
            f.set(konst, true);
            assert_eq!(f, one, "{what}: the setter sets only its bit");
            assert!(get(f), "{what}: the getter sees the bit the setter set");
            f.set(konst, false);
            assert!(f == $t::empty() && !get(f), "{what}: clearing it");
            assert!(!get($t::from_bits_retain(!(1 << entry.bit))), "{what}: every other bit set");
            for (j, &(_, other)) in $t::TYPED.iter().enumerate() {
                assert_eq!(other(one), i == j, "{what}: seen by getter {j}");
            }
            assert!(!known.contains(one), "{what}: bit listed twice");
            known = known.with(one);
            assert_eq!($t::NAMED.iter().filter(|e| e.name == entry.name || e.label == entry.label).count(), 1, "{what}");
        }
        assert_eq!(known, $t::KNOWN, "{ty}: the table lists every named bit");
    })*};
}

#[test]
fn named_flag_tables_round_trip_through_the_typed_getters_and_setters() {
    check_named_tables!(
        GenericFlags,
        PropFlags,
        CubeFlags,
        IntersectableFlags,
        DoorFlags,
        TriggerFlags,
        LightFlags,
        GlowFlags,
        TextFlags,
        BillboardFlags,
        ProjectileFlags,
        PushFlags,
        BroadcasterFlags,
        SetterFlags,
        AudioEmitterFlags,
        DynLightCtlFlags,
        FastLightCtlFlags,
    );
    assert_eq!(CubeFlags::NAMED[0], FlagBit { name: "SHOW_NEG_Z", label: "show −Z face", bit: 13 });
    assert_eq!(AudioEmitterFlags::NAMED[3], FlagBit { name: "LOOP", label: "loop", bit: 1 });
}

/// The entity form's path: every typed type whose serialised data has a `flags` number lists
/// named bits (and only those), and each named bit, set in that number, is a record the writer
/// takes and the reader gives back (no named bit overlaps a kind or pattern-length field).
#[test]
fn every_flags_field_has_its_named_bits_and_each_survives_a_file_round_trip() {
    for type_id in 0..=u8::MAX {
        let Some(data) = EntityData::typed_default(type_id) else {
            assert!(is_opaque_type(type_id), "type {type_id} has no typed default");
            continue;
        };
        assert!(!is_opaque_type(type_id) && data.type_id() == type_id, "type {type_id}");
        let json = serde_json::to_value(&data).unwrap();
        let flags = json.as_object().and_then(|o| o.values().next()).and_then(|inner| inner.get("flags"));
        assert_eq!(flags.is_some_and(serde_json::Value::is_number), !data.flag_bits().is_empty(), "type {type_id}");
        for bit in data.flag_bits() {
            let mut json = json.clone();
            let inner = json.as_object_mut().and_then(|o| o.values_mut().next()).unwrap();
            inner["flags"] = serde_json::Value::from(1u64 << bit.bit);
            let data: EntityData = serde_json::from_value(json).unwrap();
            let e = ent(0, bit.name, vec![], data);
            let (_, back) = round_trip(std::slice::from_ref(&e));
            assert_eq!(back, vec![e], "type {type_id}, {}", bit.name);
        }
    }
}

#[test]
fn reserved_flag_bits_survive_a_round_trip() {
    let e = ent(0, "g", vec![], EntityData::Generic(Generic { flags: GenericFlags(0xC1), ..Generic::default() }));
    let (bytes, back) = round_trip(std::slice::from_ref(&e));
    assert_eq!(bytes[4 + 1 + 4 + 4 + 4 + 4], 0xC1);
    assert_eq!(back, vec![e]);
}

#[test]
fn intersectable_kind_bits() {
    let e = ent(
        0,
        "i",
        vec![],
        EntityData::Intersectable(Intersectable {
            flags: IntersectableFlags::FOLLOW_BONE_TAIL,
            shape: IntersectableShape::Sphere { radius: [1.0, 1.0, 1.0] },
            ..Intersectable::default()
        }),
    );
    let (bytes, back) = round_trip(std::slice::from_ref(&e));
    // count, type, gamemodes, size, name, custom count, then the flag byte.
    assert_eq!(bytes[21], 0x11);
    // flags + position + rotation + 2 strings + radius
    assert_eq!(bytes.len(), 21 + 1 + 12 + 12 + 8 + 12);
    assert_eq!(back, vec![e]);

    let other = ent(
        0,
        "i",
        vec![],
        EntityData::Intersectable(Intersectable {
            shape: IntersectableShape::Other { kind: 15, bounds: [[0.5; 3]; 8] },
            ..Intersectable::default()
        }),
    );
    let (bytes, back) = round_trip(std::slice::from_ref(&other));
    assert_eq!(bytes[21], 0xF0);
    assert_eq!(bytes.len(), 21 + 1 + 12 + 12 + 8 + 96);
    assert_eq!(back, vec![other]);
}

#[test]
fn area_light_and_fast_controller_layout() {
    let angles = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
    let e = ent(0, "a", vec![], EntityData::Light(Light { kind: LightKind::Area { angles }, ..Light::default() }));
    let (bytes, back) = round_trip(std::slice::from_ref(&e));
    assert_eq!(bytes[21], 0x02);
    // After flags, position, 2 strings, rgb, intensity, size, range: start X, end X, start Y, …
    let at = 22 + 12 + 8 + 3 + 4 + 12 + 4;
    assert_eq!(&bytes[at..at + 8], &[0, 0, 0x80, 0x3F, 0, 0, 0, 0x40]);
    assert_eq!(back, vec![e]);

    let mut pattern = [0u8; 32];
    pattern[31] = 0x7F;
    let f = ent(
        0,
        "f",
        vec![],
        EntityData::FastLightCtl(FastLightCtl {
            flags: FastLightCtlFlags::NO_INTERPOLATION,
            pattern_len: 32,
            pattern,
            ..FastLightCtl::default()
        }),
    );
    let (bytes, back) = round_trip(std::slice::from_ref(&f));
    assert_eq!(bytes[21], 0x40 | 31);
    assert_eq!(bytes[22 + 4 + 31], 0x7F);
    assert_eq!(back, vec![f]);
}

// ---------------------------------------------------------------------------------------------
// Hostile input
// ---------------------------------------------------------------------------------------------

fn sample_entities() -> Vec<Entity> {
    let mut v: Vec<Entity> = golden_vectors().into_iter().map(|(_, e, _)| e).collect();
    v.push(ent(
        3,
        "crate",
        vec![prop("hp", PropertyData::scalar(PropertyValues::F64(vec![2.5])))],
        EntityData::Prop(Prop { model: "crate.p3m".into(), mass: 4.0, ..Prop::default() }),
    ));
    v.push(ent(0, "door", vec![], EntityData::Door(Door { model: "d.p3m".into(), ..Door::default() })));
    v.push(ent(
        0,
        "set",
        vec![],
        EntityData::Setter(Setter {
            target: "crate".into(),
            value: PropertyData::array(vec![2], PropertyValues::Str(vec!["x".into(), "y".into()])),
            ..Setter::default()
        }),
    ));
    v
}

#[test]
fn truncation_at_every_byte_is_an_error() {
    let entities = sample_entities();
    let mut w = Writer::new();
    let mut b = StringTableBuilder::new();
    write_entities(&mut w, &mut b, &entities).unwrap();
    let bytes = w.into_inner();
    assert_eq!(read_all(&bytes, &b), Ok(entities));
    for cut in 0..bytes.len() {
        let err = read_all(&bytes[..cut], &b).expect_err("truncated input must not parse");
        assert!(
            matches!(err.kind, ReadErrorKind::Truncated { .. } | ReadErrorKind::CountTooLarge { .. }),
            "cut {cut}: {err}"
        );
        assert!(err.offset <= cut as u64, "cut {cut}: {err}");
    }
}

#[test]
fn forged_entity_count_fails_before_allocating() {
    let b = golden_strings();
    let bytes = cat(&[&[0xFF; 4], &golden_vectors()[0].2]);
    let err = read_all(&bytes, &b).unwrap_err();
    assert_eq!(
        err.kind,
        ReadErrorKind::CountTooLarge { what: "entities", count: 0xFFFF_FFFF, min_size: 17, available: 17 }
    );
    assert_eq!(err.offset, 4);
}

/// A dummy "d" with one custom property "hp" whose property data is `data`.
fn dummy_with_property(data: &[u8]) -> Vec<u8> {
    let size = (4 + 4 + 4 + data.len()) as u32;
    cat(&[&[0, 0, 0, 0, 0], &size.to_le_bytes(), &[1, 0, 0, 0], &[1, 0, 0, 0], &[11, 0, 0, 0], data])
}

#[test]
fn forged_dimensions_fail_before_allocating() {
    let b = golden_strings();
    // u8 array of 0xFFFFFFFF × 0xFFFFFFFF values.
    let bytes = dummy_with_property(&cat(&[&[6], &[2, 0, 0, 0], &[0xFF; 8], &[1, 2, 3]]));
    let err = read_one(&bytes, &b).unwrap_err();
    assert_eq!(
        err.kind,
        ReadErrorKind::CountTooLarge {
            what: "property values",
            count: 0xFFFF_FFFE_0000_0001,
            min_size: 1,
            available: 3
        }
    );
    assert_eq!(&*err.section, "entities / entity (dummy \"d\")");

    // Bool bitmap of the same size.
    let bytes = dummy_with_property(&cat(&[&[1], &[2, 0, 0, 0], &[0xFF; 8]]));
    let err = read_one(&bytes, &b).unwrap_err();
    assert!(matches!(err.kind, ReadErrorKind::CountTooLarge { what: "bool bitmap bytes", .. }), "{err}");

    // Three such dimensions overflow u64.
    let bytes = dummy_with_property(&cat(&[&[4], &[3, 0, 0, 0], &[0xFF; 12]]));
    let err = read_one(&bytes, &b).unwrap_err();
    assert_eq!(err.kind, ReadErrorKind::Invalid("property value count overflows 64 bits".into()));

    // ... unless one of them is 0: then there are no values.
    let bytes = dummy_with_property(&cat(&[&[4], &[4, 0, 0, 0], &[0xFF; 12], &[0; 4]]));
    let e = read_one(&bytes, &b).unwrap();
    assert_eq!(
        e.custom[0].value,
        PropertyData::array(vec![u32::MAX, u32::MAX, u32::MAX, 0], PropertyValues::I32(vec![]))
    );

    // A forged dimension count.
    let bytes = dummy_with_property(&cat(&[&[4], &[0xFF; 4]]));
    let err = read_one(&bytes, &b).unwrap_err();
    assert!(matches!(err.kind, ReadErrorKind::CountTooLarge { what: "property dimensions", .. }), "{err}");

    // A forged custom property count.
    let bytes = cat(&[&[0, 0, 0, 0, 0], &[8, 0, 0, 0], &[1, 0, 0, 0], &[0xFF; 4]]);
    let err = read_one(&bytes, &b).unwrap_err();
    assert_eq!(
        err.kind,
        ReadErrorKind::CountTooLarge { what: "custom properties", count: 0xFFFF_FFFF, min_size: 9, available: 0 }
    );
}

#[test]
fn size_field_must_match_the_typed_data() {
    let b = golden_strings();
    let headless = &golden_vectors()[1].2;

    // Smaller: the script offset falls outside the record.
    let mut small = headless.clone();
    small[5] = 8;
    small.truncate(9 + 8);
    let err = read_one(&small, &b).unwrap_err();
    assert_eq!(
        err.to_string(),
        "entities / entity (headless \"h\") at byte 17: unexpected end of data: needed 4 bytes, 0 left"
    );

    // Larger, with the bytes present: trailing bytes, named by index in a list.
    let mut list = cat(&[&[2, 0, 0, 0], &golden_vectors()[0].2, headless, &[0; 4]]);
    list[4 + 17 + 5] = 16;
    let err = read_all(&list, &b).unwrap_err();
    assert_eq!(
        err.to_string(),
        "entities / entity 1 (headless \"h\") at byte 42: 4 trailing bytes after the end of the record"
    );

    // Larger than what is left.
    let mut big = headless.clone();
    big[5] = 13;
    let err = read_one(&big, &b).unwrap_err();
    assert_eq!(
        err.to_string(),
        "entities / entity (headless) at byte 9: unexpected end of data: needed 13 bytes, 12 left"
    );

    // Opaque records take whatever the size says.
    let opaque = cat(&[&[200], &[0; 4], &[9, 0, 0, 0], &[1, 0, 0, 0], &[0; 4], &[7]]);
    assert_eq!(
        read_one(&opaque, &b).unwrap().data,
        EntityData::Opaque { type_id: 200, custom_count: 0, payload: vec![7] }
    );
}

#[test]
fn bad_string_offsets_are_errors() {
    let b = golden_strings();
    let mut bytes = golden_vectors()[0].2.clone();
    bytes[9] = 2; // name offset 2: inside "d\0"
    let err = read_one(&bytes, &b).unwrap_err();
    assert_eq!(err.to_string(), "entities / entity (dummy) at byte 9: string offset 2 is not at the start of a string");
    bytes[9..13].copy_from_slice(&1000u32.to_le_bytes());
    let err = read_one(&bytes, &b).unwrap_err();
    assert!(err.to_string().contains("string offset 1000 is outside the string table (44 bytes)"), "{err}");

    // A signal of a typed record.
    let mut bytes = golden_vectors()[1].2.clone();
    bytes[17] = 4;
    let err = read_one(&bytes, &b).unwrap_err();
    assert_eq!(
        err.to_string(),
        "entities / entity (headless \"h\") at byte 17: string offset 4 is not at the start of a string"
    );
}

#[test]
fn invalid_values_are_errors() {
    let b = golden_strings();
    let light = &golden_vectors()[7].2;
    let mut bad = light.clone();
    bad[17] = 0x15; // kind 5
    let err = read_one(&bad, &b).unwrap_err();
    assert_eq!(err.to_string(), "entities / entity (light \"lamp\") at byte 17: unknown light kind 5");

    let counter = ent(0, "d", vec![], EntityData::Counter(Counter::default()));
    let mut bytes = write_one(&mut golden_strings(), &counter).unwrap();
    bytes[17] = 6;
    assert!(read_one(&bytes, &b).unwrap_err().to_string().ends_with("unknown counter comparison 6"));

    let bytes = dummy_with_property(&[13, 0, 0, 0, 0]);
    assert!(read_one(&bytes, &b).unwrap_err().to_string().ends_with("at byte 21: unknown property type 13"));

    let bytes = dummy_with_property(&[1, 0, 0, 0, 0, 2]);
    assert!(read_one(&bytes, &b).unwrap_err().to_string().ends_with("scalar bool is 2, not 0 or 1"));

    // bool[3] with a padding bit set.
    let bytes = dummy_with_property(&[1, 1, 0, 0, 0, 3, 0, 0, 0, 0b0000_1101]);
    assert!(read_one(&bytes, &b).unwrap_err().to_string().ends_with("unused bits of a bool bitmap are not 0"));
    let bytes = dummy_with_property(&[1, 1, 0, 0, 0, 3, 0, 0, 0, 0b0000_0101]);
    assert_eq!(read_one(&bytes, &b).unwrap().custom[0].value.values, PropertyValues::Bool(vec![true, false, true]));
}

#[test]
fn read_entity_restores_the_section() {
    let b = golden_strings();
    let bytes = golden_vectors()[0].2.clone();
    with_table(&b, |t| {
        let mut r = Reader::new(&bytes, "level 0 / server");
        read_entity(&mut r, t).unwrap();
        assert_eq!(&**r.section(), "level 0 / server");
        let err = read_entity(&mut r, t).unwrap_err();
        assert_eq!(
            err.to_string(),
            "level 0 / server / entity at byte 17: unexpected end of data: needed 1 bytes, 0 left"
        );
        assert_eq!(&**r.section(), "level 0 / server");
    });
}

// ---------------------------------------------------------------------------------------------
// Writer refusals
// ---------------------------------------------------------------------------------------------

fn refused(e: &Entity) -> WriteError {
    let mut w = Writer::new();
    let mut b = golden_strings();
    let err = write_entity(&mut w, &mut b, e).expect_err("must be refused");
    // Nothing written, nothing interned.
    assert!(w.is_empty());
    assert_eq!(b.bytes(), GOLDEN_TABLE);
    err
}

#[test]
fn writer_refuses_what_the_reader_rejects() {
    let e =
        ent(0, "d", vec![prop("hp", PropertyData::array(vec![2], PropertyValues::I32(vec![1])))], EntityData::Dummy);
    assert_eq!(
        refused(&e),
        WriteError::new("entity (dummy \"d\")", "property of type i32 has 1 values, but its dimensions [2] call for 2")
    );
    let e = ent(0, "d", vec![prop("hp", PropertyData::scalar(PropertyValues::Bool(vec![])))], EntityData::Dummy);
    assert_eq!(refused(&e).reason, "property of type bool has 0 values, but its dimensions [] call for 1");
    let e = ent(
        0,
        "d",
        vec![prop("hp", PropertyData::array(vec![u32::MAX; 3], PropertyValues::U8(vec![])))],
        EntityData::Dummy,
    );
    assert!(refused(&e).reason.contains("overflow"));

    // NULs anywhere: name, signal, property name, property string; the new string is not interned.
    let e = ent(0, "bad\0name", vec![], EntityData::Dummy);
    assert_eq!(refused(&e).reason, "string \"bad\\0name\" contains a NUL byte");
    let e = ent(0, "d", vec![], EntityData::Timer(Timer { output: "o\0".into(), ..Timer::default() }));
    assert_eq!(refused(&e).context, "entity (timer \"d\")");
    let e = ent(0, "newname", vec![prop("x", PropertyData::scalar(PropertyValues::Str(vec!["\0".into()])))], {
        EntityData::Dummy
    });
    refused(&e);

    // Kinds and packed fields outside their bits.
    let other = |kind| {
        ent(
            0,
            "i",
            vec![],
            EntityData::Intersectable(Intersectable {
                shape: IntersectableShape::Other { kind, bounds: [[0.0; 3]; 8] },
                ..Intersectable::default()
            }),
        )
    };
    assert_eq!(refused(&other(16)).reason, "intersectable kind 16 is not in 3..=15 (4 bits, 0..=2 are named)");
    refused(&other(2));
    let e = ent(
        0,
        "i",
        vec![],
        EntityData::Intersectable(Intersectable { flags: IntersectableFlags(0x20), ..Default::default() }),
    );
    assert_eq!(refused(&e).reason, "intersectable flags 0x20 overlap the kind bits 7..4");
    let e = ent(0, "l", vec![], EntityData::Light(Light { flags: LightFlags(0x01), ..Default::default() }));
    assert_eq!(refused(&e).reason, "light flags 0x01 overlap the kind bits 3..0");
    for len in [0, 33] {
        let e = ent(0, "c", vec![], EntityData::DynLightCtl(DynLightCtl { pattern_len: len, ..Default::default() }));
        assert_eq!(refused(&e).reason, format!("dynamic light controller pattern length {len} is not in 1..=32"));
    }
    let e = ent(
        0,
        "c",
        vec![],
        EntityData::FastLightCtl(FastLightCtl { flags: FastLightCtlFlags(0x01), ..Default::default() }),
    );
    assert_eq!(refused(&e).reason, "fast light controller flags 0x01 overlap the pattern length bits 4..0");

    // Opaque records: only for opaque type numbers, and without separate custom properties.
    let e = ent(0, "o", vec![], EntityData::Opaque { type_id: 3, custom_count: 0, payload: vec![] });
    assert_eq!(refused(&e).reason, "opaque entity has type 3, which is read as a typed entity");
    let e = ent(
        0,
        "o",
        vec![CustomProperty::default()],
        EntityData::Opaque { type_id: 9, custom_count: 0, payload: vec![] },
    );
    assert_eq!(refused(&e).reason, "opaque entity has custom properties outside its payload");
}

#[test]
fn write_entities_is_all_or_nothing_and_names_the_index() {
    let good = ent(0, "fresh", vec![], EntityData::Dummy);
    let bad = ent(0, "x", vec![], EntityData::Prop(Prop { model: "a\0b".into(), ..Prop::default() }));
    let mut w = Writer::new();
    let mut b = golden_strings();
    let err = write_entities(&mut w, &mut b, &[good, bad]).unwrap_err();
    assert_eq!(err.to_string(), "entity 1 (prop \"x\"): string \"a\\0b\" contains a NUL byte");
    assert!(w.is_empty());
    assert_eq!(b.bytes(), GOLDEN_TABLE);
}

// ---------------------------------------------------------------------------------------------
// Property-based round trips
// ---------------------------------------------------------------------------------------------

impl Arb for Compare {
    fn arb() -> BoxedStrategy<Self> {
        proptest::sample::select(Compare::ALL.to_vec()).boxed()
    }
}

fn values_of<T: Arb>(wrap: fn(Vec<T>) -> PropertyValues) -> BoxedStrategy<PropertyData> {
    vec(0u32..12, 0..3)
        .prop_flat_map(move |dims| {
            let n = dims.iter().product::<u32>() as usize;
            (Just(dims), vec(T::arb(), n))
        })
        .prop_map(move |(dims, v)| PropertyData { dims, values: wrap(v) })
        .boxed()
}

impl Arb for PropertyData {
    fn arb() -> BoxedStrategy<Self> {
        prop_oneof![
            vec(any::<u32>(), 0..3).prop_map(|dims| PropertyData { dims, values: PropertyValues::None }),
            values_of(PropertyValues::Bool),
            values_of(PropertyValues::I8),
            values_of(PropertyValues::I16),
            values_of(PropertyValues::I32),
            values_of(PropertyValues::I64),
            values_of(PropertyValues::U8),
            values_of(PropertyValues::U16),
            values_of(PropertyValues::U32),
            values_of(PropertyValues::U64),
            values_of(PropertyValues::F32),
            values_of(PropertyValues::F64),
            values_of(PropertyValues::Str),
        ]
        .boxed()
    }
}

impl Arb for Intersectable {
    fn arb() -> BoxedStrategy<Self> {
        let shape = prop_oneof![
            BoxCorners::arb().prop_map(|bounds| IntersectableShape::Aabb { bounds }),
            <[f32; 3]>::arb().prop_map(|radius| IntersectableShape::Sphere { radius }),
            BoxCorners::arb().prop_map(|bounds| IntersectableShape::Box { bounds }),
            (3u8..=15, BoxCorners::arb()).prop_map(|(kind, bounds)| IntersectableShape::Other { kind, bounds }),
        ];
        (0u8..16, <[[f32; 3]; 2]>::arb(), <[String; 2]>::arb(), shape)
            .prop_map(|(flags, [position, rotation], [follow_entity, follow_bone], shape)| Intersectable {
                flags: IntersectableFlags(flags),
                position,
                rotation,
                follow_entity,
                follow_bone,
                shape,
            })
            .boxed()
    }
}

impl Arb for Light {
    fn arb() -> BoxedStrategy<Self> {
        let kind = prop_oneof![
            Just(LightKind::Point),
            f32::arb().prop_map(|cone_radius| LightKind::Spot { cone_radius }),
            <[[f32; 2]; 3]>::arb().prop_map(|angles| LightKind::Area { angles }),
        ];
        (
            (0u8..16).prop_map(|f| LightFlags(f << 4)),
            <[f32; 3]>::arb(),
            <[String; 2]>::arb(),
            <[u8; 3]>::arb(),
            <[f32; 5]>::arb(),
            kind,
            <[String; 3]>::arb(),
        )
            .prop_map(
                |(flags, position, [follow_entity, follow_bone], color, [intensity, x, y, z, range], kind, sigs)| {
                    let [sig_activate, sig_deactivate, sig_toggle] = sigs;
                    Light {
                        flags,
                        position,
                        follow_entity,
                        follow_bone,
                        color,
                        intensity,
                        size: [x, y, z],
                        range,
                        kind,
                        sig_activate,
                        sig_deactivate,
                        sig_toggle,
                    }
                },
            )
            .boxed()
    }
}

impl Arb for DynLightCtl {
    fn arb() -> BoxedStrategy<Self> {
        ((0u8..8).prop_map(|f| f << 5), 1u8..=32, <[u32; 3]>::arb(), <[String; 3]>::arb())
            .prop_map(|(flags, pattern_len, [light_id, pattern, advance_time], [sig_on, sig_off, sig_toggle])| {
                DynLightCtl {
                    flags: DynLightCtlFlags(flags),
                    pattern_len,
                    light_id,
                    pattern,
                    advance_time,
                    sig_on,
                    sig_off,
                    sig_toggle,
                }
            })
            .boxed()
    }
}

impl Arb for FastLightCtl {
    fn arb() -> BoxedStrategy<Self> {
        ((0u8..8).prop_map(|f| f << 5), 1u8..=32, <[u32; 2]>::arb(), <[u8; 32]>::arb(), <[String; 3]>::arb())
            .prop_map(|(flags, pattern_len, [light_id, advance_time], pattern, [sig_on, sig_off, sig_toggle])| {
                FastLightCtl {
                    flags: FastLightCtlFlags(flags),
                    pattern_len,
                    light_id,
                    pattern,
                    advance_time,
                    sig_on,
                    sig_off,
                    sig_toggle,
                }
            })
            .boxed()
    }
}

fn typed_data() -> impl Strategy<Value = EntityData> {
    prop_oneof![
        Just(EntityData::Dummy),
        Headless::arb().prop_map(EntityData::Headless),
        Generic::arb().prop_map(EntityData::Generic),
        Prop::arb().prop_map(EntityData::Prop),
        Cube::arb().prop_map(EntityData::Cube),
        Intersectable::arb().prop_map(EntityData::Intersectable),
        Door::arb().prop_map(EntityData::Door),
        Trigger::arb().prop_map(EntityData::Trigger),
        Light::arb().prop_map(EntityData::Light),
        Glow::arb().prop_map(EntityData::Glow),
        Text::arb().prop_map(EntityData::Text),
        Billboard::arb().prop_map(EntityData::Billboard),
        Decal::arb().prop_map(EntityData::Decal),
        Projectile::arb().prop_map(EntityData::Projectile),
        Push::arb().prop_map(EntityData::Push),
        Broadcaster::arb().prop_map(EntityData::Broadcaster),
        Counter::arb().prop_map(EntityData::Counter),
        ExtCounter::arb().prop_map(EntityData::ExtCounter),
        Timer::arb().prop_map(EntityData::Timer),
        ExtTimer::arb().prop_map(EntityData::ExtTimer),
        Setter::arb().prop_map(EntityData::Setter),
        AudioEmitter::arb().prop_map(EntityData::AudioEmitter),
        DynLightCtl::arb().prop_map(EntityData::DynLightCtl),
        FastLightCtl::arb().prop_map(EntityData::FastLightCtl),
    ]
}

fn custom_property() -> impl Strategy<Value = CustomProperty> {
    (String::arb(), PropertyData::arb()).prop_map(|(name, value)| CustomProperty { name, value })
}

fn typed_entity() -> impl Strategy<Value = Entity> {
    (any::<u32>(), String::arb(), vec(custom_property(), 0..3), typed_data())
        .prop_map(|(gamemodes, name, custom, data)| Entity { gamemodes, name, custom, data })
}

fn opaque_entity() -> impl Strategy<Value = Entity> {
    let type_id = prop_oneof![9u8..=11, 27u8..=255];
    (any::<u32>(), String::arb(), type_id, any::<u32>(), vec(any::<u8>(), 0..40)).prop_map(
        |(gamemodes, name, type_id, custom_count, payload)| Entity {
            gamemodes,
            name,
            custom: Vec::new(),
            data: EntityData::Opaque { type_id, custom_count, payload },
        },
    )
}

fn entity() -> impl Strategy<Value = Entity> {
    prop_oneof![6 => typed_entity(), 1 => opaque_entity()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn round_trip_any_entity(e in entity()) {
        let (bytes, back) = round_trip(std::slice::from_ref(&e));
        prop_assert_eq!(&back, &vec![e.clone()]);
        // The size field is exact and the type byte is the variant's.
        prop_assert_eq!(bytes[4], e.data.type_id());
        let size = u32::from_le_bytes([bytes[9], bytes[10], bytes[11], bytes[12]]) as usize;
        prop_assert_eq!(size, bytes.len() - 13);
    }

    #[test]
    fn round_trip_entity_lists(entities in vec(entity(), 0..5)) {
        let (bytes, back) = round_trip(&entities);
        prop_assert_eq!(&back, &entities);
        // Writing what was read gives the same bytes.
        let (again, _) = round_trip(&back);
        prop_assert_eq!(again, bytes);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in vec(any::<u8>(), 0..200)) {
        let b = golden_strings();
        let _ = read_all(&bytes, &b);
        let _ = read_one(&bytes, &b);
    }
}
