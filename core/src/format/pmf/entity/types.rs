//! Type data of the typed entity types (docs/spec/ENTITIES.md types 0–8 and 12–26), in file order.
//!
//! Naming: `sig_*` fields are signals ("sig X" in docs/spec/ENTITIES.md: the `str` naming the signal that does
//! X; empty = none); `out_*`/`output*` fields are signals an entity sends. Times are microseconds.
//! Every `String` is a `str` field: a `u32` offset into the section's string table.

use super::codec::{Codec, Out, record};
use super::flags::*;
use super::property::PropertyData;
use crate::format::bin::{ReadResult, Reader};
use crate::format::pmf::error::WriteResult;
use crate::format::pmf::strings::StringTable;

/// A `box`: 8 corner offsets in the order (+X,+Y,+Z), (−X,+Y,+Z), (+X,+Y,−Z), (−X,+Y,−Z),
/// (+X,−Y,+Z), (−X,−Y,+Z), (+X,−Y,−Z), (−X,−Y,−Z) (the docs/spec/PMF-NOTES.md C2 bit order).
pub type BoxCorners = [[f32; 3]; 8];

/// Four texture UVs: top-left, top-right, bottom-left, bottom-right.
pub type Uv4 = [[f32; 2]; 4];

record! {
    /// Type 1.
    pub struct Headless {
        pub script: String,
    }
}

record! {
    /// Type 2.
    pub struct Generic {
        pub flags: GenericFlags,
        pub position: [f32; 3],
        pub rotation: [f32; 3],
        pub follow_entity: String,
        pub follow_bone: String,
        /// (+X, +Y, +Z) bounding box offset.
        pub box_pos: [f32; 3],
        /// (−X, −Y, −Z) bounding box offset.
        pub box_neg: [f32; 3],
        pub mass: f32,
        pub drag: f32,
        pub script: String,
        pub model: String,
        pub shadow_texture: String,
        pub shadow_size: [f32; 2],
        pub sig_activate: String,
        pub sig_deactivate: String,
        pub sig_toggle_activation: String,
        pub sig_show: String,
        pub sig_hide: String,
        pub sig_toggle_visibility: String,
        pub sig_enable_collision: String,
        pub sig_disable_collision: String,
        pub sig_toggle_collision: String,
    }
}

record! {
    /// Type 3.
    pub struct Prop {
        pub flags: PropFlags,
        pub position: [f32; 3],
        pub rotation: [f32; 3],
        pub follow_entity: String,
        pub follow_bone: String,
        /// (+X, +Y, +Z) bounding box offset.
        pub box_pos: [f32; 3],
        /// (−X, −Y, −Z) bounding box offset.
        pub box_neg: [f32; 3],
        pub mass: f32,
        pub drag: f32,
        pub model: String,
        pub animation: String,
        pub shadow_texture: String,
        pub shadow_size: [f32; 2],
        pub sig_show: String,
        pub sig_hide: String,
        pub sig_toggle_visibility: String,
        pub sig_enable_collision: String,
        pub sig_disable_collision: String,
        pub sig_toggle_collision: String,
        pub sig_start_animation: String,
        pub sig_pause_animation: String,
        pub sig_resume_animation: String,
        pub sig_stop_animation: String,
    }
}

record! {
    /// Type 4. Per-face arrays are in face order +X, +Y, +Z, −X, −Y, −Z.
    pub struct Cube {
        pub flags: CubeFlags,
        pub position: [f32; 3],
        pub rotation: [f32; 3],
        pub follow_entity: String,
        pub follow_bone: String,
        pub shape: BoxCorners,
        pub materials: [String; 6],
        pub uvs: [Uv4; 6],
        pub physics_materials: [String; 6],
        pub sig_show: String,
        pub sig_hide: String,
        pub sig_toggle_visibility: String,
        pub sig_enable_collision: String,
        pub sig_disable_collision: String,
        pub sig_toggle_collision: String,
    }
}

/// The kind of an intersectable (bits 7..4 of its flag byte) and the trailing shape data it selects.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum IntersectableShape {
    /// Kind 0.
    Aabb { bounds: BoxCorners },
    /// Kind 1: `f32x3 radius`.
    Sphere { radius: [f32; 3] },
    /// Kind 2.
    Box { bounds: BoxCorners },
    /// Kinds 3..=15, unnamed in docs/spec/ENTITIES.md; "else box bounds" gives their layout, so they are
    /// kept. The writer refuses `kind` outside 3..=15 (0..=2 have their own variants).
    Other { kind: u8, bounds: BoxCorners },
}

impl Default for IntersectableShape {
    fn default() -> Self {
        Self::Aabb { bounds: BoxCorners::default() }
    }
}

impl IntersectableShape {
    /// The 4-bit kind number.
    pub fn kind(&self) -> u8 {
        match self {
            Self::Aabb { .. } => 0,
            Self::Sphere { .. } => 1,
            Self::Box { .. } => 2,
            Self::Other { kind, .. } => *kind,
        }
    }
}

/// Type 5.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Intersectable {
    /// Bits 3..0 of the flag byte; bits 7..4 are the kind, in `shape`.
    pub flags: IntersectableFlags,
    pub position: [f32; 3],
    pub rotation: [f32; 3],
    pub follow_entity: String,
    pub follow_bone: String,
    pub shape: IntersectableShape,
}

impl Codec for Intersectable {
    fn read(r: &mut Reader<'_>, s: &StringTable<'_>) -> ReadResult<Self> {
        let byte = r.u8()?;
        let kind = byte >> 4;
        let flags = IntersectableFlags(byte & 0x0F);
        let position = Codec::read(r, s)?;
        let rotation = Codec::read(r, s)?;
        let follow_entity = Codec::read(r, s)?;
        let follow_bone = Codec::read(r, s)?;
        let shape = match kind {
            1 => IntersectableShape::Sphere { radius: Codec::read(r, s)? },
            0 => IntersectableShape::Aabb { bounds: Codec::read(r, s)? },
            2 => IntersectableShape::Box { bounds: Codec::read(r, s)? },
            kind => IntersectableShape::Other { kind, bounds: Codec::read(r, s)? },
        };
        Ok(Self { flags, position, rotation, follow_entity, follow_bone, shape })
    }

    fn write(&self, o: &mut Out<'_>) -> WriteResult<()> {
        if self.flags.0 & 0xF0 != 0 {
            return Err(o.error(format!("intersectable flags {:#04x} overlap the kind bits 7..4", self.flags.0)));
        }
        let kind = self.shape.kind();
        if let IntersectableShape::Other { kind, .. } = self.shape
            && !(3..=15).contains(&kind)
        {
            return Err(o.error(format!("intersectable kind {kind} is not in 3..=15 (4 bits, 0..=2 are named)")));
        }
        o.w.u8(kind << 4 | self.flags.0);
        self.position.write(o)?;
        self.rotation.write(o)?;
        self.follow_entity.write(o)?;
        self.follow_bone.write(o)?;
        match &self.shape {
            IntersectableShape::Sphere { radius } => radius.write(o),
            IntersectableShape::Aabb { bounds }
            | IntersectableShape::Box { bounds }
            | IntersectableShape::Other { bounds, .. } => bounds.write(o),
        }
    }
}

record! {
    /// Type 6.
    pub struct Door {
        pub flags: DoorFlags,
        pub closed_position: [f32; 3],
        pub closed_rotation: [f32; 3],
        pub closed_scale: [f32; 3],
        pub open_position: [f32; 3],
        pub open_rotation: [f32; 3],
        pub open_scale: [f32; 3],
        pub follow_entity: String,
        pub follow_bone: String,
        pub collider: BoxCorners,
        pub model: String,
        pub open_animation: String,
        pub close_animation: String,
        pub physics_material: String,
        pub open_delay: u32,
        /// 0 = the animation's duration.
        pub open_duration: u32,
        pub close_delay: u32,
        pub close_duration: u32,
        pub sig_open: String,
        pub sig_close: String,
        pub sig_toggle: String,
    }
}

record! {
    /// Type 7.
    pub struct Trigger {
        pub flags: TriggerFlags,
        pub position: [f32; 3],
        pub follow_entity: String,
        pub follow_bone: String,
        pub bounds: BoxCorners,
        /// An entity type number.
        pub type_filter: u8,
        pub team_filter: String,
        pub out_entering: String,
        pub out_entered: String,
        pub out_fully_entered: String,
        pub out_exiting: String,
        pub out_exited: String,
        pub out_fully_exited: String,
        pub sig_activate: String,
        pub sig_deactivate: String,
        pub sig_toggle: String,
    }
}

/// The kind of a light (bits 3..0 of its flag byte) and the trailing data it selects (after
/// `range`). Kinds 3..=15 have no layout in docs/spec/ENTITIES.md and are read errors.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub enum LightKind {
    /// Kind 0.
    #[default]
    Point,
    /// Kind 1: `f32 cone radius`.
    Spot { cone_radius: f32 },
    /// Kind 2: `6 × f32`, read as `[[start X, end X], [start Y, end Y], [start Z, end Z]]`.
    Area { angles: [[f32; 2]; 3] },
}

impl LightKind {
    /// The 4-bit kind number.
    pub fn id(&self) -> u8 {
        match self {
            Self::Point => 0,
            Self::Spot { .. } => 1,
            Self::Area { .. } => 2,
        }
    }
}

/// Type 8.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Light {
    /// Bits 7..4 of the flag byte; bits 3..0 are the kind.
    pub flags: LightFlags,
    pub position: [f32; 3],
    pub follow_entity: String,
    pub follow_bone: String,
    pub color: [u8; 3],
    pub intensity: f32,
    pub size: [f32; 3],
    pub range: f32,
    pub kind: LightKind,
    pub sig_activate: String,
    pub sig_deactivate: String,
    pub sig_toggle: String,
}

impl Codec for Light {
    fn read(r: &mut Reader<'_>, s: &StringTable<'_>) -> ReadResult<Self> {
        let at = r.offset();
        let byte = r.u8()?;
        let flags = LightFlags(byte & 0xF0);
        let kind_id = byte & 0x0F;
        if kind_id > 2 {
            return Err(r.invalid_at(at, format!("unknown light kind {kind_id}")));
        }
        let position = Codec::read(r, s)?;
        let follow_entity = Codec::read(r, s)?;
        let follow_bone = Codec::read(r, s)?;
        let color = Codec::read(r, s)?;
        let intensity = Codec::read(r, s)?;
        let size = Codec::read(r, s)?;
        let range = Codec::read(r, s)?;
        let kind = match kind_id {
            0 => LightKind::Point,
            1 => LightKind::Spot { cone_radius: Codec::read(r, s)? },
            _ => LightKind::Area { angles: Codec::read(r, s)? },
        };
        Ok(Self {
            flags,
            position,
            follow_entity,
            follow_bone,
            color,
            intensity,
            size,
            range,
            kind,
            sig_activate: Codec::read(r, s)?,
            sig_deactivate: Codec::read(r, s)?,
            sig_toggle: Codec::read(r, s)?,
        })
    }

    fn write(&self, o: &mut Out<'_>) -> WriteResult<()> {
        if self.flags.0 & 0x0F != 0 {
            return Err(o.error(format!("light flags {:#04x} overlap the kind bits 3..0", self.flags.0)));
        }
        o.w.u8(self.flags.0 | self.kind.id());
        self.position.write(o)?;
        self.follow_entity.write(o)?;
        self.follow_bone.write(o)?;
        self.color.write(o)?;
        self.intensity.write(o)?;
        self.size.write(o)?;
        self.range.write(o)?;
        match &self.kind {
            LightKind::Point => {}
            LightKind::Spot { cone_radius } => cone_radius.write(o)?,
            LightKind::Area { angles } => angles.write(o)?,
        }
        self.sig_activate.write(o)?;
        self.sig_deactivate.write(o)?;
        self.sig_toggle.write(o)
    }
}

record! {
    /// Type 12.
    pub struct Glow {
        pub flags: GlowFlags,
        pub position: [f32; 3],
        pub follow_entity: String,
        pub follow_bone: String,
        /// Corner offsets: top-left, top-right, bottom-left, bottom-right.
        pub corners: [[f32; 3]; 4],
        pub material: String,
        pub radius: [f32; 2],
    }
}

record! {
    /// Type 13.
    pub struct Text {
        pub flags: TextFlags,
        pub position: [f32; 3],
        pub follow_entity: String,
        pub follow_bone: String,
        /// ≤ 0 = any distance.
        pub view_distance: f32,
        /// Left, right, top, bottom.
        pub offsets: [f32; 4],
        pub font: String,
        pub size: f32,
        pub color: [u8; 4],
        pub text: String,
        pub sig_show: String,
        pub sig_hide: String,
        pub sig_toggle_visibility: String,
    }
}

record! {
    /// Type 14.
    pub struct Billboard {
        pub flags: BillboardFlags,
        pub position: [f32; 3],
        pub follow_entity: String,
        pub follow_bone: String,
        pub view_distance: f32,
        /// Corner offsets: top-left, top-right, bottom-left, bottom-right.
        pub corners: [[f32; 2]; 4],
        pub material: String,
        pub uvs: Uv4,
        pub sig_show: String,
        pub sig_hide: String,
        pub sig_toggle_visibility: String,
    }
}

record! {
    /// Type 15.
    pub struct Decal {
        pub origin: [f32; 3],
        pub spray_direction: [f32; 3],
        pub texture: String,
        pub color: [u8; 4],
        pub emission: [u8; 3],
        pub fade_delay: u32,
        pub fade_duration: u32,
    }
}

record! {
    /// Type 16.
    pub struct Projectile {
        pub flags: ProjectileFlags,
        pub position: [f32; 3],
        pub velocity: [f32; 3],
        pub mass: f32,
        pub drag: f32,
        pub gravity_influence: f32,
        pub wind_influence: f32,
        pub model: String,
        pub animation: String,
        pub sig_on_hit: String,
    }
}

record! {
    /// Type 17.
    pub struct Push {
        pub flags: PushFlags,
        pub position: [f32; 3],
        pub follow_entity: String,
        pub follow_bone: String,
        pub radius: [f32; 3],
        pub falloff: f32,
        /// An entity type number.
        pub type_filter: u8,
        pub team_filter: String,
        pub velocity: [f32; 3],
        pub sig_activate: String,
    }
}

record! {
    /// Type 18.
    pub struct Broadcaster {
        pub flags: BroadcasterFlags,
        pub input: String,
        /// An entity type number.
        pub type_filter: u8,
        pub team_filter: String,
        pub output1: String,
        pub output2: String,
        pub repeat: u8,
        pub sig_activate: String,
        pub sig_deactivate: String,
        pub sig_toggle: String,
    }
}

/// A counter's comparison (`u8`: 0 eq, 1 ne, 2 lt, 3 le, 4 gt, 5 ge; other values are read errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub enum Compare {
    #[default]
    Eq = 0,
    Ne = 1,
    Lt = 2,
    Le = 3,
    Gt = 4,
    Ge = 5,
}

impl Compare {
    pub const ALL: [Self; 6] = [Self::Eq, Self::Ne, Self::Lt, Self::Le, Self::Gt, Self::Ge];
}

impl Codec for Compare {
    fn read(r: &mut Reader<'_>, _: &StringTable<'_>) -> ReadResult<Self> {
        let at = r.offset();
        let v = r.u8()?;
        Self::ALL
            .get(usize::from(v))
            .copied()
            .ok_or_else(|| r.invalid_at(at, format!("unknown counter comparison {v}")))
    }
    fn write(&self, o: &mut Out<'_>) -> WriteResult<()> {
        o.w.u8(*self as u8);
        Ok(())
    }
}

record! {
    /// Type 19.
    pub struct Counter {
        pub compare: Compare,
        pub initial: u32,
        pub target: u32,
        pub sig_increment: String,
        pub sig_decrement: String,
        pub sig_reset: String,
        pub sig_compare: String,
        pub output: String,
    }
}

record! {
    /// Type 20.
    pub struct ExtCounter {
        pub compare: Compare,
        pub initial: u64,
        pub target: u64,
        pub sig_increment: String,
        pub sig_decrement: String,
        pub sig_reset: String,
        pub sig_compare: String,
        pub output: String,
    }
}

record! {
    /// Type 21.
    pub struct Timer {
        pub initial: u32,
        pub sig_pause: String,
        pub sig_resume: String,
        pub sig_reset: String,
        pub output: String,
    }
}

record! {
    /// Type 22.
    pub struct ExtTimer {
        pub initial: u64,
        pub sig_pause: String,
        pub sig_resume: String,
        pub sig_reset: String,
        pub output: String,
    }
}

record! {
    /// Type 23.
    pub struct Setter {
        pub flags: SetterFlags,
        pub target: String,
        pub expected_type: u8,
        pub attribute: u8,
        pub value: PropertyData,
        pub sig_activate: String,
    }
}

record! {
    /// Type 24.
    pub struct AudioEmitter {
        pub flags: AudioEmitterFlags,
        pub position: [f32; 3],
        pub follow_entity: String,
        pub follow_bone: String,
        pub offset: i64,
        pub speed: f32,
        /// `f32[2] volume`, kept as the pair it is in the file (read as left, right).
        pub volume: [f32; 2],
        /// Left, right.
        pub low_pass: [f32; 2],
        /// Left, right.
        pub high_pass: [f32; 2],
        pub range: f32,
        pub radius: [f32; 3],
        pub sound: String,
        pub sig_play: String,
    }
}

/// Reads the flag byte of a light controller: `(flags without bits 4..0, pattern length 1..=32)`.
fn read_ctl_byte(r: &mut Reader<'_>) -> ReadResult<(u8, u8)> {
    let b = r.u8()?;
    Ok((b & 0xE0, (b & 0x1F) + 1))
}

fn write_ctl_byte(o: &mut Out<'_>, what: &str, flags: u8, pattern_len: u8) -> WriteResult<()> {
    if flags & 0x1F != 0 {
        return Err(o.error(format!("{what} flags {flags:#04x} overlap the pattern length bits 4..0")));
    }
    if !(1..=32).contains(&pattern_len) {
        return Err(o.error(format!("{what} pattern length {pattern_len} is not in 1..=32")));
    }
    o.w.u8(flags | (pattern_len - 1));
    Ok(())
}

/// Type 25.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DynLightCtl {
    /// Bits 7..5 of the flag byte.
    pub flags: DynLightCtlFlags,
    /// 1..=32, stored as length − 1 in bits 4..0 of the flag byte.
    pub pattern_len: u8,
    pub light_id: u32,
    /// Bit i = step i of the pattern.
    pub pattern: u32,
    pub advance_time: u32,
    pub sig_on: String,
    pub sig_off: String,
    pub sig_toggle: String,
}

impl Default for DynLightCtl {
    fn default() -> Self {
        Self {
            flags: DynLightCtlFlags::empty(),
            pattern_len: 1,
            light_id: 0,
            pattern: 0,
            advance_time: 0,
            sig_on: String::new(),
            sig_off: String::new(),
            sig_toggle: String::new(),
        }
    }
}

impl Codec for DynLightCtl {
    fn read(r: &mut Reader<'_>, s: &StringTable<'_>) -> ReadResult<Self> {
        let (flags, pattern_len) = read_ctl_byte(r)?;
        Ok(Self {
            flags: DynLightCtlFlags(flags),
            pattern_len,
            light_id: r.u32()?,
            pattern: r.u32()?,
            advance_time: r.u32()?,
            sig_on: s.read_str(r)?,
            sig_off: s.read_str(r)?,
            sig_toggle: s.read_str(r)?,
        })
    }
    fn write(&self, o: &mut Out<'_>) -> WriteResult<()> {
        write_ctl_byte(o, "dynamic light controller", self.flags.0, self.pattern_len)?;
        o.w.u32(self.light_id);
        o.w.u32(self.pattern);
        o.w.u32(self.advance_time);
        o.str(&self.sig_on)?;
        o.str(&self.sig_off)?;
        o.str(&self.sig_toggle)
    }
}

/// Type 26.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FastLightCtl {
    /// Bits 7..5 of the flag byte.
    pub flags: FastLightCtlFlags,
    /// 1..=32, stored as length − 1 in bits 4..0 of the flag byte.
    pub pattern_len: u8,
    pub light_id: u32,
    /// One intensity per step.
    pub pattern: [u8; 32],
    pub advance_time: u32,
    pub sig_on: String,
    pub sig_off: String,
    pub sig_toggle: String,
}

impl Default for FastLightCtl {
    fn default() -> Self {
        Self {
            flags: FastLightCtlFlags::empty(),
            pattern_len: 1,
            light_id: 0,
            pattern: [0; 32],
            advance_time: 0,
            sig_on: String::new(),
            sig_off: String::new(),
            sig_toggle: String::new(),
        }
    }
}

impl Codec for FastLightCtl {
    fn read(r: &mut Reader<'_>, s: &StringTable<'_>) -> ReadResult<Self> {
        let (flags, pattern_len) = read_ctl_byte(r)?;
        Ok(Self {
            flags: FastLightCtlFlags(flags),
            pattern_len,
            light_id: r.u32()?,
            pattern: r.array()?,
            advance_time: r.u32()?,
            sig_on: s.read_str(r)?,
            sig_off: s.read_str(r)?,
            sig_toggle: s.read_str(r)?,
        })
    }
    fn write(&self, o: &mut Out<'_>) -> WriteResult<()> {
        write_ctl_byte(o, "fast light controller", self.flags.0, self.pattern_len)?;
        o.w.u32(self.light_id);
        o.w.bytes(&self.pattern);
        o.w.u32(self.advance_time);
        o.str(&self.sig_on)?;
        o.str(&self.sig_off)?;
        o.str(&self.sig_toggle)
    }
}
