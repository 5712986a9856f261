//! PMF entities (docs/spec/PMF-NOTES.md E1, `docs/spec/ENTITIES.md`).
//!
//! ```text
//! u8   type                  (docs/spec/ENTITIES.md type number)
//! u32  gamemodes bitmask     (bit i = header gamemode i; 0 = all)
//! u32  size of the rest of this record, in bytes
//! str  name
//! u32  custom property count
//! ...  type data
//! ...  custom properties: str name + property data
//! ```
//!
//! Typed records must use exactly `size` bytes: a record whose type data and custom properties end
//! before or after `size` is a read error. Types 9 (beam), 10 (particles), 11 (gibs) and every type
//! number ≥ 27 are kept as [`EntityData::Opaque`]: the bytes after the custom property count (type
//! data and custom properties together, since where unknown type data ends cannot be known) are
//! kept verbatim and written back verbatim. **String offsets inside an opaque payload are not
//! remapped by the writer**: they still refer to the string table of the file they were read from,
//! so an opaque record can only be copied into a section whose table is laid out the same.
//!
//! Decisions where docs/spec/ENTITIES.md is vague (see also [`flags`], [`property`] and [`types`]):
//! - Flag bytes: bit numbers follow docs/spec/ENTITIES.md's MSB → LSB lists. Reserved "0" bits are kept as
//!   read and written back as stored (lossless); the named API never sets them.
//! - `box bounds` (intersectable, trigger), `box shape` (cube) and `box collider` (door) are the
//!   8-corner `box` of docs/spec/ENTITIES.md's notation ([`BoxCorners`]); `+box`/`−box` (generic, prop) are
//!   two `f32x3` offsets.
//! - Intersectable kinds 3..=15 are kept ([`IntersectableShape::Other`]) since "else box bounds"
//!   gives their layout; light kinds 3..=15 and counter comparisons above 5 are read errors.
//! - Area lights' 6 angles are `[[start X, end X], [start Y, end Y], [start Z, end Z]]`.

#[cfg(test)]
mod arb;
pub(crate) mod codec;
pub mod flags;
pub mod property;
pub mod types;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use self::codec::{Codec, Out};
pub use self::flags::*;
pub use self::property::{PropertyData, PropertyValues};
pub use self::types::*;
use super::error::{WriteError, WriteResult};
use super::strings::{StringTable, StringTableBuilder};
use crate::format::bin::{ReadResult, Reader, Writer};

/// The smallest possible record: type, gamemodes, size, name, custom property count.
const MIN_RECORD_SIZE: usize = 1 + 4 + 4 + 4 + 4;
/// The smallest custom property: name, property type, dimension count.
const MIN_CUSTOM_PROPERTY_SIZE: usize = 4 + 1 + 4;

/// One entity record.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Entity {
    /// Bit i = header gamemode i; 0 = all.
    pub gamemodes: u32,
    pub name: String,
    /// Custom properties, in file order. Always empty for [`EntityData::Opaque`], whose custom
    /// properties are part of its payload.
    pub custom: Vec<CustomProperty>,
    pub data: EntityData,
}

impl Entity {
    /// An entity for all gamemodes with no custom properties.
    pub fn new(name: impl Into<String>, data: EntityData) -> Self {
        Self { gamemodes: 0, name: name.into(), custom: Vec::new(), data }
    }
}

/// A custom property: `str name` + property data.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct CustomProperty {
    pub name: String,
    pub value: PropertyData,
}

/// Type data, typed where docs/spec/ENTITIES.md defines it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[allow(clippy::large_enum_variant, reason = "entities are edited in place; boxing every variant buys nothing")]
pub enum EntityData {
    /// Type 0: no type data.
    Dummy,
    Headless(Headless),
    Generic(Generic),
    Prop(Prop),
    Cube(Cube),
    Intersectable(Intersectable),
    Door(Door),
    Trigger(Trigger),
    Light(Light),
    Glow(Glow),
    Text(Text),
    Billboard(Billboard),
    Decal(Decal),
    Projectile(Projectile),
    Push(Push),
    Broadcaster(Broadcaster),
    Counter(Counter),
    ExtCounter(ExtCounter),
    Timer(Timer),
    ExtTimer(ExtTimer),
    Setter(Setter),
    AudioEmitter(AudioEmitter),
    DynLightCtl(DynLightCtl),
    FastLightCtl(FastLightCtl),
    /// Types 9, 10, 11 and ≥ 27, kept verbatim. `payload` is every byte after the custom property
    /// count (type data and custom properties); string offsets in it are not remapped on write.
    Opaque {
        type_id: u8,
        /// The record's custom property count, kept so that the record round-trips.
        custom_count: u32,
        payload: Vec<u8>,
    },
}

/// docs/spec/ENTITIES.md's name for a type number (`"unknown"` for numbers ≥ 27).
pub fn type_name_of(type_id: u8) -> &'static str {
    const NAMES: [&str; 27] = [
        "dummy",
        "headless",
        "generic",
        "prop",
        "cube",
        "intersectable",
        "door",
        "trigger",
        "light",
        "beam",
        "particles",
        "gibs",
        "glow",
        "text",
        "billboard",
        "decal",
        "projectile",
        "push",
        "broadcaster",
        "counter",
        "extended counter",
        "timer",
        "extended timer",
        "setter",
        "audio emitter",
        "dynamic light controller",
        "fast light controller",
    ];
    NAMES.get(usize::from(type_id)).copied().unwrap_or("unknown")
}

/// Whether records of this type number are kept as [`EntityData::Opaque`].
pub fn is_opaque_type(type_id: u8) -> bool {
    matches!(type_id, 9..=11 | 27..)
}

impl EntityData {
    /// The type number written to the file.
    pub fn type_id(&self) -> u8 {
        match self {
            Self::Dummy => 0,
            Self::Headless(_) => 1,
            Self::Generic(_) => 2,
            Self::Prop(_) => 3,
            Self::Cube(_) => 4,
            Self::Intersectable(_) => 5,
            Self::Door(_) => 6,
            Self::Trigger(_) => 7,
            Self::Light(_) => 8,
            Self::Glow(_) => 12,
            Self::Text(_) => 13,
            Self::Billboard(_) => 14,
            Self::Decal(_) => 15,
            Self::Projectile(_) => 16,
            Self::Push(_) => 17,
            Self::Broadcaster(_) => 18,
            Self::Counter(_) => 19,
            Self::ExtCounter(_) => 20,
            Self::Timer(_) => 21,
            Self::ExtTimer(_) => 22,
            Self::Setter(_) => 23,
            Self::AudioEmitter(_) => 24,
            Self::DynLightCtl(_) => 25,
            Self::FastLightCtl(_) => 26,
            Self::Opaque { type_id, .. } => *type_id,
        }
    }

    /// docs/spec/ENTITIES.md's name of the type, e.g. `"audio emitter"`.
    pub fn type_name(&self) -> &'static str {
        type_name_of(self.type_id())
    }

    /// Where the entity is, for types that have a position: `position`, a door's closed position,
    /// a decal's origin.
    pub fn position(&self) -> Option<[f32; 3]> {
        Some(match self {
            Self::Generic(e) => e.position,
            Self::Prop(e) => e.position,
            Self::Cube(e) => e.position,
            Self::Intersectable(e) => e.position,
            Self::Door(e) => e.closed_position,
            Self::Trigger(e) => e.position,
            Self::Light(e) => e.position,
            Self::Glow(e) => e.position,
            Self::Text(e) => e.position,
            Self::Billboard(e) => e.position,
            Self::Decal(e) => e.origin,
            Self::Projectile(e) => e.position,
            Self::Push(e) => e.position,
            Self::AudioEmitter(e) => e.position,
            Self::Dummy
            | Self::Headless(_)
            | Self::Broadcaster(_)
            | Self::Counter(_)
            | Self::ExtCounter(_)
            | Self::Timer(_)
            | Self::ExtTimer(_)
            | Self::Setter(_)
            | Self::DynLightCtl(_)
            | Self::FastLightCtl(_)
            | Self::Opaque { .. } => return None,
        })
    }

    /// The named bits of the type's `flags` field ([`FlagBit`] table of its flags type, e.g.
    /// [`PropFlags::NAMED`]); empty for types without flags.
    pub fn flag_bits(&self) -> &'static [FlagBit] {
        match self {
            Self::Generic(_) => GenericFlags::NAMED,
            Self::Prop(_) => PropFlags::NAMED,
            Self::Cube(_) => CubeFlags::NAMED,
            Self::Intersectable(_) => IntersectableFlags::NAMED,
            Self::Door(_) => DoorFlags::NAMED,
            Self::Trigger(_) => TriggerFlags::NAMED,
            Self::Light(_) => LightFlags::NAMED,
            Self::Glow(_) => GlowFlags::NAMED,
            Self::Text(_) => TextFlags::NAMED,
            Self::Billboard(_) => BillboardFlags::NAMED,
            Self::Projectile(_) => ProjectileFlags::NAMED,
            Self::Push(_) => PushFlags::NAMED,
            Self::Broadcaster(_) => BroadcasterFlags::NAMED,
            Self::Setter(_) => SetterFlags::NAMED,
            Self::AudioEmitter(_) => AudioEmitterFlags::NAMED,
            Self::DynLightCtl(_) => DynLightCtlFlags::NAMED,
            Self::FastLightCtl(_) => FastLightCtlFlags::NAMED,
            Self::Dummy
            | Self::Headless(_)
            | Self::Decal(_)
            | Self::Counter(_)
            | Self::ExtCounter(_)
            | Self::Timer(_)
            | Self::ExtTimer(_)
            | Self::Opaque { .. } => &[],
        }
    }

    /// The default type data of a typed (not opaque) type number: what a form offers when the
    /// type is switched. `None` for the opaque numbers ([`is_opaque_type`]).
    pub fn typed_default(type_id: u8) -> Option<Self> {
        Some(match type_id {
            0 => Self::Dummy,
            1 => Self::Headless(Default::default()),
            2 => Self::Generic(Default::default()),
            3 => Self::Prop(Default::default()),
            4 => Self::Cube(Default::default()),
            5 => Self::Intersectable(Default::default()),
            6 => Self::Door(Default::default()),
            7 => Self::Trigger(Default::default()),
            8 => Self::Light(Default::default()),
            12 => Self::Glow(Default::default()),
            13 => Self::Text(Default::default()),
            14 => Self::Billboard(Default::default()),
            15 => Self::Decal(Default::default()),
            16 => Self::Projectile(Default::default()),
            17 => Self::Push(Default::default()),
            18 => Self::Broadcaster(Default::default()),
            19 => Self::Counter(Default::default()),
            20 => Self::ExtCounter(Default::default()),
            21 => Self::Timer(Default::default()),
            22 => Self::ExtTimer(Default::default()),
            23 => Self::Setter(Default::default()),
            24 => Self::AudioEmitter(Default::default()),
            25 => Self::DynLightCtl(Default::default()),
            26 => Self::FastLightCtl(Default::default()),
            _ => return None,
        })
    }

    fn read_typed(type_id: u8, r: &mut Reader<'_>, s: &StringTable<'_>) -> ReadResult<Self> {
        Ok(match type_id {
            0 => Self::Dummy,
            1 => Self::Headless(Codec::read(r, s)?),
            2 => Self::Generic(Codec::read(r, s)?),
            3 => Self::Prop(Codec::read(r, s)?),
            4 => Self::Cube(Codec::read(r, s)?),
            5 => Self::Intersectable(Codec::read(r, s)?),
            6 => Self::Door(Codec::read(r, s)?),
            7 => Self::Trigger(Codec::read(r, s)?),
            8 => Self::Light(Codec::read(r, s)?),
            12 => Self::Glow(Codec::read(r, s)?),
            13 => Self::Text(Codec::read(r, s)?),
            14 => Self::Billboard(Codec::read(r, s)?),
            15 => Self::Decal(Codec::read(r, s)?),
            16 => Self::Projectile(Codec::read(r, s)?),
            17 => Self::Push(Codec::read(r, s)?),
            18 => Self::Broadcaster(Codec::read(r, s)?),
            19 => Self::Counter(Codec::read(r, s)?),
            20 => Self::ExtCounter(Codec::read(r, s)?),
            21 => Self::Timer(Codec::read(r, s)?),
            22 => Self::ExtTimer(Codec::read(r, s)?),
            23 => Self::Setter(Codec::read(r, s)?),
            24 => Self::AudioEmitter(Codec::read(r, s)?),
            25 => Self::DynLightCtl(Codec::read(r, s)?),
            26 => Self::FastLightCtl(Codec::read(r, s)?),
            _ => return Err(r.invalid(format!("entity type {type_id} has no typed reader"))),
        })
    }

    fn write_typed(&self, o: &mut Out<'_>) -> WriteResult<()> {
        match self {
            Self::Dummy => Ok(()),
            Self::Headless(e) => e.write(o),
            Self::Generic(e) => e.write(o),
            Self::Prop(e) => e.write(o),
            Self::Cube(e) => e.write(o),
            Self::Intersectable(e) => e.write(o),
            Self::Door(e) => e.write(o),
            Self::Trigger(e) => e.write(o),
            Self::Light(e) => e.write(o),
            Self::Glow(e) => e.write(o),
            Self::Text(e) => e.write(o),
            Self::Billboard(e) => e.write(o),
            Self::Decal(e) => e.write(o),
            Self::Projectile(e) => e.write(o),
            Self::Push(e) => e.write(o),
            Self::Broadcaster(e) => e.write(o),
            Self::Counter(e) => e.write(o),
            Self::ExtCounter(e) => e.write(o),
            Self::Timer(e) => e.write(o),
            Self::ExtTimer(e) => e.write(o),
            Self::Setter(e) => e.write(o),
            Self::AudioEmitter(e) => e.write(o),
            Self::DynLightCtl(e) => e.write(o),
            Self::FastLightCtl(e) => e.write(o),
            Self::Opaque { .. } => Err(o.error("opaque entity has no typed writer")),
        }
    }
}

/// `entity 3 (prop "crate")`, prefixed with the parent section when there is one.
fn label(parent: &str, index: Option<usize>, type_name: Option<&str>, name: Option<&str>) -> String {
    let mut out = String::new();
    if !parent.is_empty() {
        out.push_str(parent);
        out.push_str(" / ");
    }
    out.push_str("entity");
    if let Some(i) = index {
        out.push_str(&format!(" {i}"));
    }
    match (type_name, name) {
        (Some(t), Some(n)) => out.push_str(&format!(" ({t} {n:?})")),
        (Some(t), None) => out.push_str(&format!(" ({t})")),
        _ => {}
    }
    out
}

/// Reads `u32 count` + that many entities; strings resolve through `strings`.
pub fn read_entities(r: &mut Reader<'_>, strings: &StringTable<'_>) -> ReadResult<Vec<Entity>> {
    let n = r.u32()?;
    let n = r.count(n.into(), MIN_RECORD_SIZE, "entities")?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(read_entity_at(r, strings, Some(i))?);
    }
    Ok(out)
}

/// Reads one entity record. Errors name the entity (`<section> / entity (prop "crate")`).
pub fn read_entity(r: &mut Reader<'_>, strings: &StringTable<'_>) -> ReadResult<Entity> {
    read_entity_at(r, strings, None)
}

fn read_entity_at(r: &mut Reader<'_>, strings: &StringTable<'_>, index: Option<usize>) -> ReadResult<Entity> {
    let parent: Arc<str> = r.section().clone();
    r.set_section(label(&parent, index, None, None));
    let result = read_record(r, strings, &parent, index);
    r.set_section(parent);
    result
}

fn read_record(
    r: &mut Reader<'_>,
    strings: &StringTable<'_>,
    parent: &str,
    index: Option<usize>,
) -> ReadResult<Entity> {
    let type_id = r.u8()?;
    let type_name = type_name_of(type_id);
    r.set_section(label(parent, index, Some(type_name), None));
    let gamemodes = r.u32()?;
    let size = r.u32()?;
    let section = r.section().clone();
    let mut s = r.sub(size as usize, section)?;
    let name = strings.read_str(&mut s)?;
    s.set_section(label(parent, index, Some(type_name), Some(&name)));
    let custom_count = s.u32()?;
    if is_opaque_type(type_id) {
        let payload = s.bytes(s.remaining())?.to_vec();
        return Ok(Entity {
            gamemodes,
            name,
            custom: Vec::new(),
            data: EntityData::Opaque { type_id, custom_count, payload },
        });
    }
    let data = EntityData::read_typed(type_id, &mut s, strings)?;
    let n = s.count(custom_count.into(), MIN_CUSTOM_PROPERTY_SIZE, "custom properties")?;
    let mut custom = Vec::with_capacity(n);
    for _ in 0..n {
        let name = strings.read_str(&mut s)?;
        let value = PropertyData::read(&mut s, strings)?;
        custom.push(CustomProperty { name, value });
    }
    s.expect_end()?;
    Ok(Entity { gamemodes, name, custom, data })
}

/// Writes `u32 count` + the entities, interning strings into `strings`. Nothing is written and no
/// string is interned unless every entity can be written.
pub fn write_entities(w: &mut Writer, strings: &mut StringTableBuilder, entities: &[Entity]) -> WriteResult<()> {
    let n = u32::try_from(entities.len())
        .map_err(|_| WriteError::new("entities", format!("{} entities, more than a u32 holds", entities.len())))?;
    let mut scratch = Writer::new();
    for (i, e) in entities.iter().enumerate() {
        let context = label("", Some(i), Some(e.data.type_name()), Some(&e.name));
        write_record(&mut Out { w: &mut scratch, strings: None, context: &context }, e)?;
    }
    w.u32(n);
    for (i, e) in entities.iter().enumerate() {
        let context = label("", Some(i), Some(e.data.type_name()), Some(&e.name));
        write_record(&mut Out { w, strings: Some(strings), context: &context }, e)?;
    }
    Ok(())
}

/// Writes one entity record. Refuses (with a [`WriteError`] naming the entity) anything the reader
/// would reject or read back differently; then nothing is written and no string is interned.
pub fn write_entity(w: &mut Writer, strings: &mut StringTableBuilder, e: &Entity) -> WriteResult<()> {
    let context = label("", None, Some(e.data.type_name()), Some(&e.name));
    write_record(&mut Out { w: &mut Writer::new(), strings: None, context: &context }, e)?;
    write_record(&mut Out { w, strings: Some(strings), context: &context }, e)
}

fn write_record(o: &mut Out<'_>, e: &Entity) -> WriteResult<()> {
    let type_id = e.data.type_id();
    if let EntityData::Opaque { .. } = e.data {
        if !is_opaque_type(type_id) {
            return Err(o.error(format!("opaque entity has type {type_id}, which is read as a typed entity")));
        }
        if !e.custom.is_empty() {
            return Err(o.error("opaque entity has custom properties outside its payload"));
        }
    }
    o.w.u8(type_id);
    o.w.u32(e.gamemodes);
    let slot = o.w.reserve_u32();
    let start = o.w.len();
    o.str(&e.name)?;
    match &e.data {
        EntityData::Opaque { custom_count, payload, .. } => {
            o.w.u32(*custom_count);
            o.w.bytes(payload);
        }
        data => {
            let count = u32::try_from(e.custom.len())
                .map_err(|_| o.error(format!("{} custom properties, more than a u32 holds", e.custom.len())))?;
            o.w.u32(count);
            data.write_typed(o)?;
            for c in &e.custom {
                o.str(&c.name)?;
                c.value.write(o)?;
            }
        }
    }
    let size = o.w.len() - start;
    let size = u32::try_from(size).map_err(|_| o.error(format!("record is {size} bytes, more than a u32 holds")))?;
    o.w.patch_u32(slot, size);
    Ok(())
}
