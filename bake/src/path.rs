//! Pathfinding data for air cells (docs/spec/PMF-NOTES.md P1).
//!
//! # What the compiler passes in, what it gets out
//! [`bake_chunk_paths`] takes a level snapshot, the [`Library`] (physics materials), one chunk,
//! that chunk's air cells (level lattice [`CubeAddr`]s, the layout's empty leaf cubes) and a
//! [`PathAttributeLookup`] that resolves the editor's attribute-set ids ([`PathAttrs`]) to named
//! attributes. The map model does not store the attribute-set list yet, so the caller supplies it:
//! a [`PathAttributeSets`] table, or any `Fn(PathAttrs) -> Vec<PathAttribute>`. It returns one
//! [`CellPath`] per cell, in input order; a cell with no attributes has an empty list and gets no
//! pathfinding data.
//!
//! # Rules
//! - **`walk`** (direction `(0, 0, 0)`): the cell stands on a walkable top face. The probe is the
//!   lattice cell just below the centre of the cell's bottom face: `(min.x + e/2, min.y − 1,
//!   min.z + e/2)` for edge `e ≥ 2`, `(min.x, min.y − 1, min.z)` for `e = 1` (one well-defined
//!   sample instead of a majority vote: cheap, and it matches where an agent standing in the cell
//!   would be). The leaf there must be geometry whose **top-face** physics material (plain
//!   geometry: its physics; extended: its +Y face's) is solid. A physics id missing from the
//!   library counts as solid (the engine's default material is solid). Pushed corners are
//!   ignored: a sloped top still counts as a floor. A cell on the grid's bottom has no `walk`.
//! - **User attributes**: the [`PathAttrs`] of every leaf intersecting the cell (normally the one
//!   air leaf the cell was cut from), resolved through the lookup.
//! - The list is sorted by name, then direction (IEEE total order, component by component), with
//!   exact duplicates removed, so the output is deterministic whatever order sets come in. PMF
//!   stores the count as a `u8`: the writer must refuse more than 255.
//!
//! # Dependencies
//! A cell's `walk` reads the leaf below it, which for cells on the chunk's bottom lies in the
//! chunk below: see [`path_deps`].

use std::cmp::Ordering;

use glam::IVec3;
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr, Face};
use pmfedit_core::map::ids::{PathAttrs, PhysicsId};
use pmfedit_core::map::octree::{Cube, CubeKind};
use pmfedit_core::map::{Level, Library};

use crate::vis::{BakeInputError, for_each_leaf_in_box};

/// The attribute the compiler emits on air above a walkable floor.
pub const WALK: &str = "walk";

/// One pathfinding attribute: a name and the XYZ direction to face (PMF "Cube pathfinding data
/// attribute").
#[derive(Debug, Clone, PartialEq)]
pub struct PathAttribute {
    pub name: String,
    pub direction: [f32; 3],
}

impl PathAttribute {
    /// An attribute `name` facing `direction`.
    pub fn new(name: impl Into<String>, direction: [f32; 3]) -> Self {
        Self { name: name.into(), direction }
    }

    /// The deterministic output order: name, then direction (IEEE total order per component).
    pub fn total_cmp(&self, other: &Self) -> Ordering {
        self.name.cmp(&other.name).then_with(|| {
            (0..3)
                .map(|i| self.direction[i].total_cmp(&other.direction[i]))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        })
    }
}

/// Resolves an attribute-set id to its attributes; [`PathAttrs::NONE`] must give none.
pub trait PathAttributeLookup {
    /// The attributes of set `set` (empty for an unknown set).
    fn attributes(&self, set: PathAttrs) -> Vec<PathAttribute>;
}

impl<F: Fn(PathAttrs) -> Vec<PathAttribute>> PathAttributeLookup for F {
    fn attributes(&self, set: PathAttrs) -> Vec<PathAttribute> {
        if set.is_none() { Vec::new() } else { self(set) }
    }
}

/// A table of attribute sets indexed by [`PathAttrs`]; index 0 ("none") is always empty.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PathAttributeSets {
    sets: Vec<Vec<PathAttribute>>,
}

impl PathAttributeSets {
    /// A table with set `i + 1` = `sets[i]`.
    pub fn new(sets: Vec<Vec<PathAttribute>>) -> Self {
        let mut all = vec![Vec::new()];
        all.extend(sets);
        Self { sets: all }
    }
}

impl PathAttributeLookup for PathAttributeSets {
    fn attributes(&self, set: PathAttrs) -> Vec<PathAttribute> {
        if set.is_none() { Vec::new() } else { self.sets.get(set.index()).cloned().unwrap_or_default() }
    }
}

/// The pathfinding data of one air cell.
#[derive(Debug, Clone, PartialEq)]
pub struct CellPath {
    /// The air cell (level lattice).
    pub cell: CubeAddr,
    /// Sorted, deduplicated; empty = no pathfinding data.
    pub attributes: Vec<PathAttribute>,
}

/// The chunks whose geometry the pathfinding data of `chunk` depends on: the chunk below (if it
/// is in the grid) and `chunk` itself, in PMF grid order.
pub fn path_deps(chunk: ChunkCoord) -> Vec<ChunkCoord> {
    let below = ChunkCoord::new(chunk.x, chunk.y - 1, chunk.z);
    [below, chunk].into_iter().filter(|c| c.is_in_grid()).collect()
}

/// Whether the top face of `cube` is a floor: geometry whose +Y physics material is solid.
fn walkable_top(cube: &Cube, library: &Library) -> bool {
    let physics: PhysicsId = match &cube.kind {
        CubeKind::Empty => return false,
        CubeKind::Geometry(g) => g.physics,
        CubeKind::Extended(e) => e.face_physics[Face::PosY.index()],
    };
    library.get(physics).is_none_or(|p| !p.not_solid)
}

/// Whether air cell `cell` (level lattice) stands on a walkable floor (see the module docs).
pub fn is_walkable(level: &Level, library: &Library, cell: &CubeAddr) -> bool {
    if cell.min.y == 0 {
        return false;
    }
    let h = cell.edge() / 2;
    let probe = IVec3::new(cell.min.x + h, cell.min.y - 1, cell.min.z + h);
    level.get(probe).is_ok_and(|(c, _)| walkable_top(&c, library))
}

/// Bakes the pathfinding data of `chunk`'s air cells. See the [module documentation](self).
pub fn bake_chunk_paths(
    level: &Level,
    library: &Library,
    chunk: ChunkCoord,
    cells: &[CubeAddr],
    lookup: &dyn PathAttributeLookup,
) -> Result<Vec<CellPath>, BakeInputError> {
    if !chunk.is_in_grid() {
        return Err(BakeInputError::ChunkOutsideGrid(chunk));
    }
    let chunk_addr = level.frame().chunk_addr(chunk);
    if let Some(&cell) = cells.iter().find(|c| !c.is_aligned() || !chunk_addr.contains_addr(c)) {
        return Err(BakeInputError::CellOutsideChunk { cell, chunk });
    }
    Ok(cells
        .iter()
        .map(|&cell| {
            let mut sets = Vec::new();
            for_each_leaf_in_box(level, &cell.lattice_box(), |_, c| {
                if !c.path.is_none() {
                    sets.push(c.path);
                }
                true
            });
            sets.sort_unstable();
            sets.dedup();
            let mut attributes: Vec<PathAttribute> = sets.into_iter().flat_map(|s| lookup.attributes(s)).collect();
            if is_walkable(level, library, &cell) {
                attributes.push(PathAttribute::new(WALK, [0.0; 3]));
            }
            attributes.sort_by(PathAttribute::total_cmp);
            attributes.dedup_by(|a, b| a.total_cmp(b).is_eq());
            CellPath { cell, attributes }
        })
        .collect())
}
