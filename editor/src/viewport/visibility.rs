//! The **Visibility** shading mode: what the air cube in front of the hovered face sees, as the
//! compiled visibility data says (docs/spec/PMF-NOTES.md V1).
//!
//! - **Which air cube.** The hovered face's hit point is put on the hit leaf's face plane and
//!   moved half a lattice unit along the face normal, out of the solid ([`point_in_front`]). The
//!   chunk holding that point is looked up in [`Rebuild::full`] (previews carry no visibility)
//!   and the engine's octree walk ([`pmf::leaf_at`]) gives the PMF cube index; it must be an empty
//!   leaf with visibility data ([`air_cube_at`], [`NoAir`] says why not).
//! - **What it sees.** [`pmf::visible_from`] decodes the air cube's lists into a per-chunk set;
//!   chunk references in a bake are absolute chunk coordinates (see `compile::absolute_index`).
//!   [`build`] turns it into per-chunk draw data: [`ChunkVis::All`] or one byte per cube of the
//!   drawn mesh ([`ChunkVis::Listed`], 1 = visible), which the renderer uploads as an R8 texture
//!   and looks up with the per-vertex cube index ([`super::mesh::TriList::cubes`]). Chunks not in
//!   the set are hidden.
//! - **Cheap.** The viewport rebuilds this only when the air cube (chunk, index) or the bake
//!   revision changes ([`VisView::needs_build`]), not every frame.
//! - **Waiting.** Chunks whose full bake is not in ([`ChunkState::in_flight`]) draw dimmed and
//!   hatched, whatever the set says, and the status says how many there are.
//!
//! [`Rebuild::full`]: pmfedit_bake::rebuild::Rebuild::full

use std::collections::BTreeMap;

use glam::DVec3;

use pmfedit_bake::deps::ChunkKey;
use pmfedit_bake::rebuild::ChunkState;
use pmfedit_core::format::pmf;
use pmfedit_core::map::coords::ChunkCoord;

use crate::pick::Pick;
use crate::state::EditorState;

/// How far in front of the face the air point lies, lattice units (half the smallest cube).
pub const FRONT_LATTICE: f64 = 0.5;

/// The air cube the view shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AirCube {
    pub key: ChunkKey,
    /// Index in the chunk's PMF cube array.
    pub index: u32,
    /// World box, map units.
    pub min: DVec3,
    pub max: DVec3,
}

/// Why there is no air cube to show.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NoAir {
    /// The pointer is not on a face.
    NothingHovered,
    /// The point lies outside the level's chunk grid.
    OutsideGrid,
    /// The chunk's full bake is not in yet (or is being redone).
    Waiting(ChunkCoord),
    /// The chunk has no bake at all: it is not part of the compiled map (the dense grid spans
    /// the level's stored chunks, so e.g. the air above the highest ones has no record).
    NoBake(ChunkCoord),
    /// The compiled octree has no cube record at the point (malformed data).
    NoCube(ChunkCoord),
    /// The point lies inside a solid cube (e.g. under a pushed corner).
    Solid { chunk: ChunkCoord, index: u32 },
    /// An air cube without visibility data: it would cull little (`VisSettings::min_culled`),
    /// its chunk's lists are over budget, visibility baking is off, or the data is malformed.
    NoData { chunk: ChunkCoord, index: u32 },
}

/// A chunk as `(x, y, z)`.
fn show(c: ChunkCoord) -> String {
    format!("({}, {}, {})", c.x, c.y, c.z)
}

impl NoAir {
    /// The status text.
    pub fn message(&self) -> String {
        match *self {
            NoAir::NothingHovered => "visibility: point at a face to see what the air in front of it sees".into(),
            NoAir::OutsideGrid => "visibility: the point in front of the face is outside the level grid".into(),
            NoAir::Waiting(c) => format!("visibility: waiting for full bakes (chunk {} is still finalizing)", show(c)),
            NoAir::NoBake(c) => format!("visibility: chunk {} is not in the compiled map (no air data there)", show(c)),
            NoAir::NoCube(c) => format!("visibility: no cube record at this point of chunk {}", show(c)),
            NoAir::Solid { chunk, index } => {
                format!("visibility: no air cell here (inside solid cube {index} of chunk {})", show(chunk))
            }
            NoAir::NoData { chunk, index } => {
                format!(
                    "visibility: air cube {index} in chunk {} has no lists: it sees nearly the whole level (or its \
                     chunk's lists are over budget), so the engine culls nothing from it",
                    show(chunk)
                )
            }
        }
    }
}

/// The level lattice point just in front of the hovered face: on the hit leaf's face plane (so a
/// slanted face of a pushed-corner cube still gives the air outside the cube), within the face,
/// moved [`FRONT_LATTICE`] along the outward normal.
pub fn point_in_front(pick: &Pick) -> DVec3 {
    let lo = pick.addr.min.as_dvec3();
    let hi = pick.addr.max().as_dvec3();
    let inset = DVec3::splat(1e-3);
    let mut p = pick.point.clamp(lo + inset, hi - inset);
    let a = pick.face.axis();
    p[a] = if pick.face.is_positive() { hi[a] + FRONT_LATTICE } else { lo[a] - FRONT_LATTICE };
    p
}

/// The air cube holding level lattice point `point` (fractional) of level `level`, from the
/// chunk's full bake.
pub fn air_cube_at(state: &EditorState, level: usize, point: DVec3) -> Result<AirCube, NoAir> {
    let lvl = state.map.levels.get(level).ok_or(NoAir::OutsideGrid)?;
    let frame = lvl.frame();
    if !point.is_finite() {
        return Err(NoAir::OutsideGrid);
    }
    let chunk = frame.chunk_from_lattice(point.floor().as_ivec3());
    if !chunk.is_in_grid() {
        return Err(NoAir::OutsideGrid);
    }
    let key = (level, chunk);
    if state.bake.state(key).is_some_and(ChunkState::in_flight) {
        return Err(NoAir::Waiting(chunk));
    }
    let bake = state.bake.full(key).ok_or(NoAir::NoBake(chunk))?;
    let local = point - frame.chunk_min_lattice(chunk).as_dvec3();
    let p = frame.chunk_space_from_lattice_in_chunk(local);
    let cubes = &bake.pmf.common.cubes;
    let leaf = pmf::leaf_at(cubes, lvl.chunk_size_log2(), p.to_array()).ok_or(NoAir::NoCube(chunk))?;
    let index = leaf.index;
    match &cubes[index as usize] {
        pmf::Cube { kind: pmf::CubeKind::Empty, visibility: Some(_), .. } => {}
        pmf::Cube { kind: pmf::CubeKind::Empty, .. } => return Err(NoAir::NoData { chunk, index }),
        _ => return Err(NoAir::Solid { chunk, index }),
    }
    let center = frame.chunk_center_world(chunk);
    Ok(AirCube { key, index, min: center + DVec3::from_array(leaf.min), max: center + DVec3::from_array(leaf.max()) })
}

/// The PMF chunk index a bake uses for chunk `c` (absolute coordinates).
fn absolute_index(c: ChunkCoord) -> pmf::ChunkIndex {
    pmf::ChunkIndex { y: c.y as u8, x: c.x as u16, z: c.z as u16 }
}

/// Draw data of one chunk with something visible.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkVis {
    /// Every cube.
    All,
    /// One byte per cube of the drawn mesh's chunk (1 = visible).
    Listed(Vec<u8>),
}

/// What [`build`] makes of an air cube's visible set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VisBuild {
    /// Chunks with something visible (all others are hidden).
    pub chunks: BTreeMap<ChunkKey, ChunkVis>,
    /// Geometry cubes visible (a chunk seen whole counts its geometry cubes).
    pub cubes: usize,
}

/// The per-chunk draw data of `air`'s visible set. A malformed or missing list gives an empty
/// build (everything hidden), never a panic.
pub fn build(state: &EditorState, air: &AirCube) -> VisBuild {
    let mut out = VisBuild::default();
    let Some(bake) = state.bake.full(air.key) else { return out };
    let Some(set) = pmf::visible_from(&bake.pmf.common.cubes, absolute_index(air.key.1), air.index) else {
        return out;
    };
    let level = air.key.0;
    for (index, cubes) in &set.chunks {
        let chunk = ChunkCoord::new(i32::from(index.x), i32::from(index.y), i32::from(index.z));
        let key = (level, chunk);
        match cubes {
            pmf::CubeSet::All => {
                let geometry = state
                    .bake
                    .full(key)
                    .or_else(|| state.bake.shown(key).map(|s| &s.bake))
                    .map_or(0, |b| b.pmf.common.cubes.iter().filter(|c| is_geometry(&c.kind)).count());
                out.cubes += geometry;
                out.chunks.insert(key, ChunkVis::All);
            }
            pmf::CubeSet::Listed(list) => {
                out.cubes += list.len();
                // One byte per cube of the drawn mesh (indices past it are ignored).
                let n = state.bake.shown(key).map_or(0, |s| s.bake.pmf.common.cubes.len());
                let mut bits = vec![0u8; n];
                for &i in list {
                    if let Some(b) = bits.get_mut(i as usize) {
                        *b = 1;
                    }
                }
                out.chunks.insert(key, ChunkVis::Listed(bits));
            }
        }
    }
    out
}

fn is_geometry(k: &pmf::CubeKind) -> bool {
    matches!(k, pmf::CubeKind::Geometry(_) | pmf::CubeKind::ExtGeometry(_))
}

/// The viewport's visibility state (UI side).
#[derive(Debug, Clone)]
pub struct VisView {
    /// The air cube (and why there is none).
    pub air: Result<AirCube, NoAir>,
    /// Geometry cubes and chunks visible from it.
    pub cubes: usize,
    pub chunks: usize,
    /// Chunks of its level's compiled grid (what "sees N of M chunks" counts against).
    pub level_chunks: usize,
    /// Chunks waiting for their full bake.
    pub waiting: usize,
    /// A world point whose air cube is shown instead of the one in front of the hovered face.
    pub pin: Option<DVec3>,
    /// What the GPU data was last built for: the air cube and the bake revision.
    built: Option<(Option<(ChunkKey, u32)>, u64)>,
}

impl Default for VisView {
    fn default() -> Self {
        Self {
            air: Err(NoAir::NothingHovered),
            cubes: 0,
            chunks: 0,
            level_chunks: 0,
            waiting: 0,
            pin: None,
            built: None,
        }
    }
}

impl VisView {
    /// Whether the draw data must be rebuilt for `air` at bake `revision` (and records that it
    /// will be).
    pub fn needs_build(&mut self, air: &Result<AirCube, NoAir>, revision: u64) -> bool {
        let key = (air.as_ref().ok().map(|a| (a.key, a.index)), revision);
        if self.built == Some(key) {
            return false;
        }
        self.built = Some(key);
        true
    }

    /// Forgets what was built (the GPU data was cleared).
    pub fn reset(&mut self) {
        self.built = None;
    }

    /// The status text: "air cube 123 in chunk (x, y, z) sees 7 of 64 chunks in the level: 456
    /// cubes visible in 7 chunks", or why there is nothing to show; plus the chunks still waiting
    /// for their full bake.
    pub fn status(&self) -> String {
        let mut s = match &self.air {
            Ok(a) => format!(
                "air cube {} in chunk {} sees {} of {} chunks in the level: {} cubes visible in {} chunk{}",
                a.index,
                show(a.key.1),
                self.chunks,
                self.level_chunks,
                self.cubes,
                self.chunks,
                if self.chunks == 1 { "" } else { "s" }
            ),
            Err(e) => e.message(),
        };
        if self.waiting > 0 && !matches!(self.air, Err(NoAir::Waiting(_))) {
            s.push_str(&format!(" · {} chunks waiting for full bakes (hatched)", self.waiting));
        }
        s
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use glam::IVec3;
    use pmfedit_core::map::coords::{CubeAddr, Face};
    use pmfedit_core::map::octree::Cube;
    use pmfedit_core::sample;

    use super::*;

    /// The demo with every chunk's full bake in.
    pub(in crate::viewport) fn baked_demo() -> EditorState {
        let mut s = EditorState::new(sample::demo(), None, Arc::new(|| {}));
        let t = Instant::now();
        while !s.bake.is_final() {
            assert!(t.elapsed() < Duration::from_secs(300), "bakes did not finish");
            std::thread::sleep(Duration::from_millis(20));
            s.poll_bakes();
        }
        s
    }

    fn pick(addr: CubeAddr, face: Face, point: DVec3) -> Pick {
        Pick { level: 0, addr, face, point, cube: Cube::EMPTY }
    }

    #[test]
    fn the_point_in_front_leaves_the_face_along_its_normal() {
        let addr = CubeAddr::new(IVec3::new(8, 16, 24), 3).unwrap();
        let p = point_in_front(&pick(addr, Face::PosY, DVec3::new(9.0, 20.0, 30.0)));
        assert_eq!(p, DVec3::new(9.0, 24.5, 30.0), "on the +Y plane, half a lattice unit out");
        let p = point_in_front(&pick(addr, Face::NegX, DVec3::new(8.0, 16.0, 40.0)));
        assert!(p.x == 7.5 && p.y > 16.0 && p.z < 32.0, "{p:?}: clamped into the face");
    }

    #[test]
    fn the_air_cube_in_front_of_demo_faces_and_its_visible_set() {
        let state = baked_demo();
        let level = &state.map.levels[0];
        // Straight down onto open ground next to the building, in the center chunk.
        let hit = level.ray_cast_world(DVec3::new(-4.0, 6.0, -4.0), DVec3::NEG_Y, 100.0).expect("ground");
        assert_eq!(hit.face, Face::PosY);
        let p = Pick::from_hit(0, &hit);
        let front = point_in_front(&p);
        let air = air_cube_at(&state, 0, front).expect("air with visibility data above the ground");
        // The cube is an empty leaf with data, its box holds the point, and it sits on the face.
        let bake = state.bake.full(air.key).unwrap();
        let cube = &bake.pmf.common.cubes[air.index as usize];
        assert_eq!(cube.kind, pmf::CubeKind::Empty);
        assert!(cube.visibility.is_some());
        let w = level.frame().world_from_lattice_f(front);
        assert!(w.cmpge(air.min).all() && w.cmplt(air.max).all(), "{w:?} in {air:?}");
        let face_y = level.frame().world_from_lattice(p.addr.max()).y;
        assert_eq!(air.min.y, face_y, "the air cube rests on the hovered face");

        // The face's own cube is visible from the air in front of it.
        let frame = level.frame();
        let (chunk, solid) = {
            let at = p.addr.min.as_dvec3() + DVec3::splat(0.5);
            let chunk = frame.chunk_from_lattice(p.addr.min);
            let local = frame.chunk_space_from_lattice_in_chunk(at - frame.chunk_min_lattice(chunk).as_dvec3());
            let cubes = &state.bake.full((0, chunk)).unwrap().pmf.common.cubes;
            (chunk, pmf::leaf_at(cubes, level.chunk_size_log2(), local.to_array()).unwrap().index)
        };
        let b = build(&state, &air);
        match &b.chunks[&(0, chunk)] {
            ChunkVis::All => {}
            ChunkVis::Listed(bits) => assert_eq!(bits[solid as usize], 1, "the ground cube is visible"),
        }
        assert!(b.cubes > 0);
        // No radius (V1): the other chunks in sight are listed, whole, however far.
        assert!(b.chunks.iter().all(|(k, v)| *k == air.key || matches!(v, ChunkVis::All)));
        assert!(b.chunks.len() > 1, "open ground sees other chunks");
        // Bits are sized to the drawn meshes.
        for (k, v) in &b.chunks {
            if let ChunkVis::Listed(bits) = v {
                assert_eq!(bits.len(), state.bake.shown(*k).unwrap().bake.pmf.common.cubes.len());
            }
        }

        // Inside solid: the point just below the ground face.
        let below = front - DVec3::Y * 1.0;
        assert!(matches!(air_cube_at(&state, 0, below), Err(NoAir::Solid { .. })));
        // Outside the grid; above the roof (a chunk the compiled map does not have).
        assert_eq!(air_cube_at(&state, 0, DVec3::splat(-1.0)), Err(NoAir::OutsideGrid));
        let roof = level.ray_cast_world(DVec3::new(8.0, 20.0, 0.0), DVec3::NEG_Y, 100.0).expect("roof");
        let above = point_in_front(&Pick::from_hit(0, &roof));
        assert!(matches!(air_cube_at(&state, 0, above), Err(NoAir::NoBake(_))));
    }

    #[test]
    fn status_texts() {
        let mut v = VisView::default();
        assert!(v.status().contains("point at a face"));
        v.air = Ok(AirCube { key: (0, ChunkCoord::new(1, 2, 3)), index: 123, min: DVec3::ZERO, max: DVec3::ONE });
        v.cubes = 456;
        v.chunks = 7;
        v.level_chunks = 64;
        assert_eq!(
            v.status(),
            "air cube 123 in chunk (1, 2, 3) sees 7 of 64 chunks in the level: 456 cubes visible in 7 chunks"
        );
        v.waiting = 2;
        assert!(v.status().ends_with("· 2 chunks waiting for full bakes (hatched)"));
        // Rebuilt only when the air cube or the revision changes.
        let air = v.air;
        assert!(v.needs_build(&air, 5));
        assert!(!v.needs_build(&air, 5));
        assert!(v.needs_build(&air, 6));
        assert!(v.needs_build(&Err(NoAir::NothingHovered), 6));
        assert!(!v.needs_build(&Err(NoAir::OutsideGrid), 6), "no air cube either way");
    }
}
