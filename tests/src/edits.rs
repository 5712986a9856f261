//! Random edit sequences for the incremental == full invariant (docs/spec/PMF-NOTES.md X1): a
//! small map that bakes in a fraction of a second, and a proptest strategy of the edits a designer
//! makes — cube edits of every kind, light moves, additions and removals, library edits (a
//! material's colour, emission and transparency decide both lighting and face culling), towers
//! whose sun shadows and sky occlusion reach far beyond an edit's neighbours, the level's sun,
//! sky and bounce settings, imports (the whole map replaced) and the undo history. The level is
//! in daylight (sun, sky, one bounce) with an emissive material, so rays that leave a chunk's
//! neighbourhood — and the chunks they record as read — are exercised. A wall splits the work
//! area into two large spaces, and windows opened and closed in it change what every cell of
//! both sees (the whole-level visibility, docs/spec/PMF-NOTES.md V1). `tests/invariant.rs` plays them on the
//! rebuild engine, `tests/editor_invariant.rs` through the editor's own commands.

use glam::{IVec3, Vec3};
use proptest::prelude::*;

use pmfedit_bake::compile::CompileSettings;
use pmfedit_bake::light::GatherSettings;
use pmfedit_core::edit::{CubeOp, Edit, LibItem, LibRef, ObjItem, ObjRef, WholeMap};
use pmfedit_core::import::m3d::{export_model, import_voxels};
use pmfedit_core::map::coords::{CubeAddr, Face, LatticeBox};
use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
use pmfedit_core::map::library::{Light, LightMode, Material};
use pmfedit_core::map::lighting::LevelLighting;
use pmfedit_core::map::octree::Cube;
use pmfedit_core::map::{Level, Map};

/// Chunk edge of [`start_map`]: 4 map units = 32 lattice units.
pub const EDGE: i32 = 32;

/// Chunks of the work area along X and Z: wider than an edit's neighbourhood (3 chunks) and a
/// light's reach, so a spread that forgets lights or neighbours is caught.
pub const AREA: i32 = 6;

/// The wall between the two halves of the work area: lattice x (from [`area_min`]) of its west
/// face. It is one unit thick and stands from the floor to the top of the chunk layer across the
/// whole area, so the halves see each other only through [`Op::Window`]s.
pub const WALL_X: i32 = 3 * EDGE - 8;

/// The lattice minimum of the AREA×1×AREA chunk work area around the center chunk.
pub fn area_min(map: &Map) -> IVec3 {
    let frame = map.levels[0].frame();
    frame.chunk_min_lattice(frame.center_chunk) - IVec3::new(EDGE * (AREA / 2), 0, EDGE * (AREA / 2))
}

/// Materials the ops use: 0 (the starter stone), 1 (glass), 2 (glow, emissive).
pub const MATERIALS: u16 = 3;

/// A small map: 4-unit chunks, a floor over AREA×AREA chunks split in two by a wall
/// ([`WALL_X`]), a glass material, an emissive material, a static light reaching over several
/// chunks and a dynamic one, in daylight with one bounce.
pub fn start_map() -> Map {
    let mut map = Map::new("invariant");
    map.levels[0] = Level::new("main", 2).expect("a valid chunk size");
    map.levels[0].lighting = LevelLighting::default();
    let mut glass = Material::new("glass", PhysicsId(0), SoundId(0));
    glass.transparent = true;
    map.library.add(glass).expect("a new material");
    let mut glow = Material::new("glow", PhysicsId(0), SoundId(0));
    glow.emission = [255, 180, 90];
    map.library.add(glow).expect("a new material");
    let min = area_min(&map);
    let stone = Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0));
    map.levels[0]
        .fill_box(LatticeBox::new(min, min + IVec3::new(AREA * EDGE, 8, AREA * EDGE)), stone)
        .expect("in the grid");
    map.levels[0]
        .fill_box(
            LatticeBox::new(min + IVec3::new(WALL_X, 8, 0), min + IVec3::new(WALL_X + 8, EDGE, AREA * EDGE)),
            stone,
        )
        .expect("in the grid");
    let mut lamp = Light::point("lamp", Vec3::new(0.0, 3.0, 0.0));
    lamp.range = 10.0;
    map.levels[0].objects.add(lamp).expect("a new light");
    let mut flicker = Light::point("flicker", Vec3::new(6.0, 2.5, -5.0));
    flicker.range = 4.0;
    flicker.mode = LightMode::Dynamic { global_id: 1, enabled: true, preserve: false };
    map.levels[0].objects.add(flicker).expect("a new light");
    map
}

/// The compile settings of the invariant tests: the defaults (timestamp fixed) with few rays per
/// luxel, air cell and bounce point. Sun, sky, emission and bounce stay on and reach exactly as
/// far (the dependencies are the same); a debug build bakes the start map in a fraction of the
/// default's time.
pub fn settings() -> CompileSettings {
    let mut s = CompileSettings { timestamp: 1_700_000_000, ..CompileSettings::default() };
    s.light.gather = GatherSettings { rays: 6, cell_rays: 6, bounce_rays: 4, sun_rays: 2, ..GatherSettings::default() };
    s
}

/// One thing a designer does.
#[derive(Debug, Clone)]
pub enum Op {
    Fill {
        at: IVec3,
        size: IVec3,
        material: u16,
    },
    Clear {
        at: IVec3,
        size: IVec3,
    },
    Set {
        at: IVec3,
        log2: u8,
        material: u16,
    },
    Paint {
        at: IVec3,
        log2: u8,
        face: usize,
        material: u16,
    },
    Push {
        at: IVec3,
        corner: usize,
    },
    MoveLight {
        which: u32,
        to: Vec3,
    },
    AddLight {
        to: Vec3,
    },
    RemoveLight {
        which: u32,
    },
    /// A material's colour (what its faces reflect and how its cubes look).
    Recolor {
        material: u16,
        color: [u8; 3],
    },
    /// Flips a material's transparency (which faces are culled, which cubes block light).
    ToggleTransparent {
        material: u16,
    },
    /// A material's emission (the light its faces give off).
    Emit {
        material: u16,
        emission: [u8; 3],
    },
    /// A one-cube-wide column from the floor up through `height` chunk layers: a sun shadow and
    /// sky occlusion that reach beyond the neighbours, and content above the highest layer.
    Tower {
        at: IVec3,
        height: i32,
    },
    /// The level's sun direction and bounce count.
    Lighting {
        azimuth: f32,
        elevation: f32,
        bounces: u8,
    },
    /// Copies the box of cubes at `from` (one chunk's worth) to `to` as an import does: the
    /// whole map replaced by an edited copy (`Edit::ReplaceMap`).
    Import {
        from: IVec3,
        to: IVec3,
    },
    /// Opens (clears) or closes (fills) a window 2 units wide and high in the wall at `z`.
    Window {
        z: i32,
        open: bool,
    },
    Undo,
    Redo,
}

impl Op {
    /// Whether this is an undo or a redo rather than an edit.
    pub fn is_history(&self) -> bool {
        matches!(self, Op::Undo | Op::Redo)
    }
}

/// The strategy of [`Op`]s on [`start_map`]-like maps.
pub fn op() -> impl Strategy<Value = Op> {
    let pos = (0..AREA * EDGE, 0..EDGE, 0..AREA * EDGE).prop_map(|(x, y, z)| IVec3::new(x, y, z));
    let size = (1..24, 1..16, 1..24).prop_map(|(x, y, z)| IVec3::new(x, y, z));
    let half = (AREA * EDGE / 16) as f32 - 0.5;
    let world = (-half..half, 1.5f32..3.8, -half..half).prop_map(|(x, y, z)| Vec3::new(x, y, z));
    prop_oneof![
        3 => (pos.clone(), size.clone(), 0u16..MATERIALS)
            .prop_map(|(at, size, material)| Op::Fill { at, size, material }),
        2 => (pos.clone(), size).prop_map(|(at, size)| Op::Clear { at, size }),
        2 => (pos.clone(), 1u8..5, 0u16..MATERIALS).prop_map(|(at, log2, material)| Op::Set { at, log2, material }),
        1 => (pos.clone(), 1u8..5, 0usize..6, 0u16..MATERIALS)
            .prop_map(|(at, log2, face, material)| Op::Paint { at, log2, face, material }),
        1 => (pos.clone(), 0usize..8).prop_map(|(at, corner)| Op::Push { at, corner }),
        2 => (0u32..2, world.clone()).prop_map(|(which, to)| Op::MoveLight { which, to }),
        1 => world.prop_map(|to| Op::AddLight { to }),
        1 => (0u32..3).prop_map(|which| Op::RemoveLight { which }),
        1 => (0u16..MATERIALS, any::<[u8; 3]>()).prop_map(|(material, color)| Op::Recolor { material, color }),
        1 => (0u16..MATERIALS).prop_map(|material| Op::ToggleTransparent { material }),
        1 => (0u16..MATERIALS, any::<[u8; 3]>()).prop_map(|(material, emission)| Op::Emit { material, emission }),
        2 => (pos.clone(), 1i32..4).prop_map(|(at, height)| Op::Tower { at, height }),
        1 => (0f32..360.0, 10f32..80.0, 0u8..3)
            .prop_map(|(azimuth, elevation, bounces)| Op::Lighting { azimuth, elevation, bounces }),
        1 => (pos.clone(), pos).prop_map(|(from, to)| Op::Import { from, to }),
        2 => (0..AREA * EDGE - 16, any::<bool>()).prop_map(|(z, open)| Op::Window { z, open }),
        1 => Just(Op::Undo),
        1 => Just(Op::Redo),
    ]
}

/// The edit `op` makes on `map`; `None` for undo/redo and for ops with nothing to act on.
pub fn edit_for(map: &Map, op: &Op) -> Option<Edit> {
    let min = area_min(map);
    let cube = |m: u16| Cube::solid(MaterialId(m), PhysicsId(0), SoundId(0));
    let addr = |at: IVec3, log2: u8| CubeAddr::containing(min + at, log2);
    let light = |which: u32| map.levels[0].objects.lights().ids().nth(which as usize);
    Some(match *op {
        Op::Fill { at, size, material } => Edit::Cubes {
            level: 0,
            op: CubeOp::FillBox { region: LatticeBox::new(min + at, min + at + size), cube: cube(material) },
        },
        Op::Clear { at, size } => {
            Edit::Cubes { level: 0, op: CubeOp::ClearBox { region: LatticeBox::new(min + at, min + at + size) } }
        }
        Op::Set { at, log2, material } => {
            Edit::Cubes { level: 0, op: CubeOp::SetCube { addr: addr(at, log2), cube: cube(material) } }
        }
        Op::Paint { at, log2, face, material } => Edit::Cubes {
            level: 0,
            op: CubeOp::PaintFace {
                addr: addr(at, log2),
                face: Face::from_index(face)?,
                material: MaterialId(material),
            },
        },
        Op::Push { at, corner } => {
            Edit::Cubes { level: 0, op: CubeOp::PushCorner { addr: addr(at, 3), corner, delta: IVec3::new(-3, -5, 2) } }
        }
        Op::MoveLight { which, to } => Edit::MoveObject { level: 0, id: ObjRef::Light(light(which)?), position: to },
        Op::AddLight { to } => {
            let mut l = Light::point("extra", to);
            l.range = 7.0;
            Edit::AddObject { level: 0, item: ObjItem::Light(l) }
        }
        Op::RemoveLight { which } => Edit::RemoveObject { level: 0, id: ObjRef::Light(light(which)?) },
        Op::Recolor { material, color } => {
            let mut m = map.library.materials().get(MaterialId(material))?.clone();
            m.color = color;
            Edit::ReplaceLibraryItem { id: LibRef::Material(MaterialId(material)), item: LibItem::Material(m) }
        }
        Op::ToggleTransparent { material } => {
            let mut m = map.library.materials().get(MaterialId(material))?.clone();
            m.transparent = !m.transparent;
            Edit::ReplaceLibraryItem { id: LibRef::Material(MaterialId(material)), item: LibItem::Material(m) }
        }
        Op::Emit { material, emission } => {
            let mut m = map.library.materials().get(MaterialId(material))?.clone();
            m.emission = emission;
            Edit::ReplaceLibraryItem { id: LibRef::Material(MaterialId(material)), item: LibItem::Material(m) }
        }
        Op::Tower { at, height } => {
            let base = min + IVec3::new(at.x & !7, 8, at.z & !7);
            let region = LatticeBox::new(base, base + IVec3::new(8, height * EDGE, 8));
            Edit::Cubes { level: 0, op: CubeOp::FillBox { region, cube: cube(0) } }
        }
        Op::Lighting { azimuth, elevation, bounces } => {
            let mut lighting = map.levels[0].lighting;
            lighting.sun.azimuth = azimuth;
            lighting.sun.elevation = elevation;
            lighting.bounces = bounces;
            Edit::SetLevelLighting { level: 0, lighting }
        }
        Op::Import { from, to } => {
            let level = &map.levels[0];
            let model =
                export_model(&map.library, level, LatticeBox::new(min + from, min + from + IVec3::splat(8)), 3).ok()?;
            let mut copy = map.snapshot();
            import_voxels(&mut copy, 0, &model, min + to, 3).ok()?;
            Edit::ReplaceMap { map: WholeMap(Box::new(copy)), name: "Import copy".into() }
        }
        Op::Window { z, open } => {
            let region = LatticeBox::new(min + IVec3::new(WALL_X, 12, z), min + IVec3::new(WALL_X + 8, 28, z + 16));
            let op = if open { CubeOp::ClearBox { region } } else { CubeOp::FillBox { region, cube: cube(0) } };
            Edit::Cubes { level: 0, op }
        }
        Op::Undo | Op::Redo => return None,
    })
}
