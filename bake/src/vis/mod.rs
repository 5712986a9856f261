//! Visibility: potentially visible sets for air cells, across the whole level
//! (docs/spec/PMF-NOTES.md V1: no radius; a cube visible from any point of an air cell is listed).
//!
//! # What is visible
//! A solid leaf `B` is *visible* from air cell `A` when a segment from a point of `A` to a point
//! of a face of `B` passes through no **occluder**: geometry leaves whose every face material is
//! opaque (neither transparent nor liquid, and present in the library) and that have no pushed
//! corners ([`occludes`]). Transparent, liquid and pushed-corner cubes let sight through. We count
//! sight along an open set of lines: a cube seen only through a gap of zero width (two occluders
//! meeting at an edge, a line grazing a wall) is not visible, as no renderer shows it. Such a set
//! always holds a *generic* line: one that crosses every chunk and voxel boundary through the
//! inside of a face, never through an edge or a corner. Every argument below follows one generic
//! line, so diagonal passages between chunks need no special case: a generic line crosses them
//! through one of the two face neighbours, briefly.
//!
//! # Chunk summaries ([`summary`])
//! Each chunk is cut into `n³` voxels (`n = 2^voxels_log2`, 16 for the usual 16-unit chunk: one
//! voxel per map unit). A voxel is *opaque* when occluders cover it entirely, otherwise *open*;
//! open voxels form **components** by face adjacency. A generic line crossing a chunk stays in one
//! component (each of its points lies in open voxels, and it passes from voxel to voxel through
//! faces). A chunk's [`ChunkSummary`] keeps the components that touch its faces and the squares
//! they own on each face; it depends on the chunk's own cubes only.
//!
//! # The reach ([`search`])
//! A generic line leaves a component only through face squares it owns and enters the
//! neighbour's component only through squares that one owns too; it is monotone along every axis,
//! so all its steps between chunks go along the three signed axes of one octant of directions,
//! and it never returns to a chunk it left (chunks are convex). So every chunk a line from
//! component `C` enters is reached from `C`'s node by a path of the (chunk, component) graph
//! whose edges join components with overlapping squares on a shared face, using one octant's
//! steps. Per octant that graph is acyclic: a node's reach is the union of its successors'
//! reaches, one pass over the grid ([`SummaryGrid`]). The union over the octants is the
//! component's **far set**, the same for every cell of the component; its chunks with geometry
//! are listed whole (`0` = all cubes, V1). So is every neighbour, with geometry, across a face the
//! component touches on the way: a line may meet the faces of its opaque voxels on the shared
//! face, in sight, though it enters no component of the neighbour there.
//!
//! A path of the graph need not hold a straight line: in a building, a staircase of doors joins
//! rooms no line passes through together. With [`VisSettings::portal_steps`], the far sets are
//! narrowed to the paths whose openings a line of the octant can pass through in order, checked
//! in the three coordinate planes ([`portal`]).
//!
//! # The cell's own chunk
//! A segment between two points of one chunk stays in the chunk (it is convex), hence in one
//! component. So the own chunk lists the solid leaves with a face whose outside layer holds an
//! open voxel of the cell's component (a face whose outside is all opaque is never seen). Faces on
//! the chunk's boundary face out of it and are never seen from inside.
//!
//! # Incremental bakes
//! A chunk's own lists depend on its own cubes; its far lists on every summary of the grid, and
//! on nothing else: an edit that keeps every summary changes no far list anywhere. One that
//! changes a summary changes the far sets of some components, which the grid recomputes in one
//! pass ([`SummaryGrid`]).
//!
//! # Determinism
//! Pure function of the chunks' cubes, the opaque materials and the settings: components are
//! numbered by first voxel, lists by first cell, lists are sorted.

mod cache;
pub mod oracle;
mod portal;
mod search;
pub mod summary;

use std::fmt;
use std::sync::Arc;

use glam::IVec3;
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr, Face, LatticeBox};
use pmfedit_core::map::octree::{Cube, Octree};
use pmfedit_core::map::{Level, Library};

pub use cache::{AirWork, OwnLists, PathInputs, PathRecords, VisCache};
pub use search::SummaryGrid;
pub(crate) use search::with_own_chunk;
pub use summary::{ChunkSummary, OpaqueMaterials};

use summary::{ChunkVoxels, OPAQUE};

/// Settings of the visibility bake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VisSettings {
    /// At most `2^voxels_log2` occluder voxels along a chunk edge (at most
    /// [`summary::MAX_VOXELS_LOG2`]; fewer in chunks with fewer lattice units). Finer voxels see
    /// thinner walls; coarser ones are cheaper.
    pub voxels_log2: u8,
    /// Most entries (own-chunk cubes plus far chunks) the lists of one chunk's air cells may hold
    /// together in the file, where every air cell writes its lists out (what grows with air cells
    /// × visible cubes). Past it cells name their own chunk whole, and past that only the cells
    /// whose lists fit get visibility data ([`lists_within_budget`]): conservative, the engine
    /// culls nothing from the others.
    pub max_listed: u64,
    /// Narrow the far sets by the directions a straight line can take through the openings it
    /// crosses ([`portal`]), for paths of up to this many chunk steps (beyond, every monotone
    /// path of the chunk graph counts, [`search`]). Tighter in buildings of rooms and doors, and
    /// dearer: one walk per face component and octant, up to this many steps long. `0`: off.
    pub portal_steps: u32,
    /// Portal limits only on grids of at most this many chunks: the walks cost about a
    /// millisecond per chunk (release build, loaded 2-core machine), done again for the whole
    /// grid when an edit changes a summary, and open levels gain little from them (measured on the
    /// terrain sample: 55.2 % → 55.3 % of (cell, chunk) pairs culled); larger grids take the
    /// plain reach ([`search`]), which keeps big levels live.
    pub portal_max_chunks: u32,
    /// An air cell that would cull less than this share (percent) of the level's geometry cubes
    /// writes no lists: its far set alone holds the rest, whatever its own chunk lists
    /// ([`SummaryGrid::culls_little`]). A cell without data culls nothing (PMF-NOTES V1), so the
    /// engine draws a few percent more from it and reads no list; on open ground such lists
    /// are most of the file's visibility bytes. `0`: every cell writes its lists.
    pub min_culled: u8,
}

/// Default [`VisSettings::min_culled`]: on `terrain(32,4,32)` the cells culling under 10 % of
/// its geometry cubes (a sixth of those with lists) held half of the lists' bytes.
pub const MIN_CULLED: u8 = 10;

/// Default [`VisSettings::max_listed`]: 2^23 entries (32 MB in the file), hundreds of times what
/// a chunk of ordinary cubes lists.
pub const MAX_LISTED: u64 = 1 << 23;

/// Most entries the air cells of one level may list together, shared evenly by the chunks of
/// its grid: a chunk's budget is the smaller of [`VisSettings::max_listed`] and this divided by
/// the grid's chunk count. Whole-level lists on a big open map would otherwise decompress to
/// more than a reader accepts (`ReadLimits::DEFAULT`: 2 GiB per file; terrain(32,4,32) lists
/// about 2.2 G entries, 17 GB): 2^26 entries are at most 512 MB, which leaves the rest of a
/// file room. A chunk over its budget has cells name their own chunk whole, then writes the
/// lists of as many air cells as fit ([`lists_within_budget`]); its other cells get no
/// visibility data (conservative). The grid's size is part of every far-list refresh, so
/// incremental bakes keep equal to full ones.
pub const LEVEL_LISTED: u64 = 1 << 26;

/// Which air cells of a chunk write their lists within `budget` entries, given each cell's entry
/// count: the cells with the shortest lists first (ties in cell order), as many as fit; the rest
/// carry no visibility data (conservative: the engine culls nothing from them). Shortest first
/// keeps culling in as many cells as the budget allows, and those cull the most. It depends on
/// the chunk's own counts and the budget only, so a full and an incremental bake choose alike.
pub fn cells_within_budget(counts: &[u64], budget: u64) -> Vec<bool> {
    if counts.iter().sum::<u64>() <= budget {
        return vec![true; counts.len()];
    }
    let mut order: Vec<u32> = (0..counts.len() as u32).collect();
    order.sort_unstable_by_key(|&i| (counts[i as usize], i));
    let mut keep = vec![false; counts.len()];
    let mut used = 0u64;
    for i in order {
        let n = counts[i as usize];
        if used + n > budget {
            break;
        }
        used += n;
        keep[i as usize] = true;
    }
    keep
}

/// What one air cell writes of its lists ([`lists_within_budget`], PMF-NOTES V1 *Budget*).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CellLists {
    /// Its lists as baked: the own chunk's visible cubes one by one, the far chunks whole.
    Exact,
    /// Its own chunk named among the chunk records, whole (`0` = every cube), instead of its
    /// visible cubes one by one, then its far chunks: one entry instead of hundreds in a room.
    OwnWhole,
    /// No visibility data (the engine culls nothing from the cell).
    Nothing,
}

/// What each air cell of a chunk writes within `budget` entries, given per cell the entry counts
/// of its own-chunk list (`own`) and of its far list (`far`). All cells exact when that fits;
/// otherwise cells name their own chunk whole, one entry instead of their own list (largest
/// saving first, ties in cell order), until the chunk fits; if every cell doing so is still
/// too many, the shortest of those lists are kept ([`cells_within_budget`]) and the rest carry
/// nothing. The own chunk is a small part of what a cell culls (a level's geometry is spread over
/// many chunks), while a cell without data culls nothing, so giving up own-chunk culling first
/// keeps most of it: on the indoor sample every cell keeps data instead of one in five. It
/// depends on the chunk's own counts and the budget only, so full and incremental bakes choose
/// alike.
pub fn lists_within_budget(own: &[u64], far: &[u64], budget: u64) -> Vec<CellLists> {
    debug_assert_eq!(own.len(), far.len());
    let exact: Vec<u64> = own.iter().zip(far).map(|(o, f)| o + f).collect();
    let mut total: u64 = exact.iter().sum();
    if total <= budget {
        return vec![CellLists::Exact; own.len()];
    }
    // Naming the own chunk whole costs one entry: it saves `own - 1`.
    let saving = |i: usize| own[i].saturating_sub(1);
    let mut order: Vec<u32> = (0..own.len() as u32).filter(|&i| saving(i as usize) > 0).collect();
    order.sort_unstable_by_key(|&i| (std::cmp::Reverse(saving(i as usize)), i));
    let mut out = vec![CellLists::Exact; own.len()];
    for &i in &order {
        if total <= budget {
            return out;
        }
        out[i as usize] = CellLists::OwnWhole;
        total -= saving(i as usize);
    }
    if total <= budget {
        return out;
    }
    let counts: Vec<u64> = out
        .iter()
        .zip(&exact)
        .zip(far)
        .map(|((m, &e), &f)| if *m == CellLists::OwnWhole { 1 + f } else { e })
        .collect();
    for (m, keep) in out.iter_mut().zip(cells_within_budget(&counts, budget)) {
        if !keep {
            *m = CellLists::Nothing;
        }
    }
    out
}

/// What each air cell of chunk `chunk` writes, as the compile
/// writes it: a cell whose component culls little ([`SummaryGrid::culls_little`]) writes
/// nothing; the others' lists are fitted to `budget` ([`lists_within_budget`]). Per cell, its
/// face component (`None`: it sees no other chunk) and the entry counts of its own and far
/// lists. Returns the choices and whether the budget, not the rule, left some cell without data.
pub fn cell_lists(
    grid: &SummaryGrid,
    chunk: ChunkCoord,
    comps: &[Option<u16>],
    own: &[u64],
    far: &[u64],
    budget: u64,
) -> (Vec<CellLists>, bool) {
    let g = grid.index(chunk.as_ivec3());
    let little: Vec<bool> =
        comps.iter().map(|c| matches!((g, c), (Some(g), Some(c)) if grid.culls_little(g, usize::from(*c)))).collect();
    let keep: Vec<usize> = (0..comps.len()).filter(|&i| !little[i]).collect();
    let pick = |v: &[u64]| keep.iter().map(|&i| v[i]).collect::<Vec<u64>>();
    let fitted = lists_within_budget(&pick(own), &pick(far), budget);
    let over = fitted.contains(&CellLists::Nothing);
    let mut out = vec![CellLists::Nothing; comps.len()];
    for (&i, m) in keep.iter().zip(fitted) {
        out[i] = m;
    }
    (out, over)
}

/// Default [`VisSettings::portal_steps`].
pub const PORTAL_STEPS: u32 = 16;

/// Default [`VisSettings::portal_max_chunks`].
pub const PORTAL_MAX_CHUNKS: u32 = 1024;

impl VisSettings {
    /// The portal steps a grid of `chunks` chunks is walked with (`0`: none).
    pub fn portal_steps_for(&self, chunks: u64) -> u32 {
        if chunks <= u64::from(self.portal_max_chunks) { self.portal_steps } else { 0 }
    }
}

impl Default for VisSettings {
    /// 16 voxels per chunk edge, portal limits for [`PORTAL_STEPS`] steps on grids of up to
    /// [`PORTAL_MAX_CHUNKS`] chunks, no lists where a cell culls under [`MIN_CULLED`] percent.
    fn default() -> Self {
        Self {
            voxels_log2: 4,
            max_listed: MAX_LISTED,
            portal_steps: PORTAL_STEPS,
            portal_max_chunks: PORTAL_MAX_CHUNKS,
            min_culled: MIN_CULLED,
        }
    }
}

/// One visible set, shared by the cells of a component of the chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VisList {
    /// Index into [`ChunkVisBake::own`]: the visible leaves of the cell's own chunk.
    pub own: u32,
    /// Index into [`ChunkVisBake::far`]: the other chunks, listed whole.
    pub far: u32,
    /// The face component of the chunk's summary whose far set [`Self::far`] is (`None`: the
    /// cells' component touches no chunk face, and sees no other chunk).
    pub comp: Option<u16>,
}

/// Figures of one chunk's visibility bake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VisStats {
    /// Air cells baked.
    pub cells: u64,
    /// Far sets looked up (one per component holding a cell and touching a chunk face).
    pub searches: u64,
}

impl VisStats {
    /// Adds another bake's figures.
    pub fn add(&mut self, o: &VisStats) {
        self.cells += o.cells;
        self.searches += o.searches;
    }
}

/// The result of [`bake_chunk_vis`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkVisBake {
    /// Per air cell, in input order: its list in [`Self::lists`].
    pub cell_list: Vec<u32>,
    pub lists: Vec<VisList>,
    /// Own-chunk lists: solid leaves (chunk-local addresses) in octree pre-order.
    pub own: Vec<Arc<[CubeAddr]>>,
    /// Far lists: other chunks with geometry, listed whole, in PMF order.
    pub far: Vec<Arc<[ChunkCoord]>>,
    pub stats: VisStats,
    /// The lists of all cells together hold more than [`VisSettings::max_listed`] entries: the
    /// compile writes them within the budget ([`lists_within_budget`]; the lists are all here).
    pub skipped: bool,
}

impl ChunkVisBake {
    /// Whether cell `i` (input order) lists leaf `addr` of `chunk` (`own` is the cell's chunk).
    pub fn lists_cube(&self, i: usize, own: ChunkCoord, chunk: ChunkCoord, addr: CubeAddr) -> bool {
        let l = &self.lists[self.cell_list[i] as usize];
        if chunk == own {
            self.own[l.own as usize].contains(&addr)
        } else {
            self.far[l.far as usize].binary_search(&chunk).is_ok()
        }
    }

    /// Whether cell `i` lists chunk `chunk` (other than its own) at all.
    pub fn lists_chunk(&self, i: usize, chunk: ChunkCoord) -> bool {
        let l = &self.lists[self.cell_list[i] as usize];
        self.far[l.far as usize].binary_search(&chunk).is_ok()
    }
}

/// Why a visibility or pathfinding bake was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BakeInputError {
    /// The chunk lies outside the PMF grid.
    ChunkOutsideGrid(ChunkCoord),
    /// An air cell does not lie inside the chunk being baked.
    CellOutsideChunk { cell: CubeAddr, chunk: ChunkCoord },
}

impl fmt::Display for BakeInputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ChunkOutsideGrid(c) => write!(f, "chunk {c:?} is outside the level grid"),
            Self::CellOutsideChunk { cell, chunk } => write!(f, "air cell {cell:?} is not inside chunk {chunk:?}"),
        }
    }
}

impl std::error::Error for BakeInputError {}

/// Whether `cube` blocks sight: geometry without pushed corners whose every face material exists
/// in `library` and is neither transparent nor liquid.
pub fn occludes(cube: &Cube, library: &Library) -> bool {
    OpaqueMaterials::of(library).occludes(cube)
}

/// Calls `f` on every leaf (level lattice address, cube) intersecting the level lattice box `b`,
/// stopping when `f` returns `false`; returns whether it ran to the end. Positions outside the
/// grid stop the walk (returns `false`).
pub(crate) fn for_each_leaf_in_box(level: &Level, b: &LatticeBox, mut f: impl FnMut(CubeAddr, &Cube) -> bool) -> bool {
    if b.is_empty() {
        return true;
    }
    let mut stack = vec![*b];
    while let Some(b) = stack.pop() {
        let Ok((cube, addr)) = level.get(b.min) else {
            return false;
        };
        if !f(addr, &cube) {
            return false;
        }
        let m = addr.max();
        if m.x < b.max.x {
            stack.push(LatticeBox::new(IVec3::new(m.x, b.min.y, b.min.z), b.max));
        }
        let x1 = b.max.x.min(m.x);
        if m.y < b.max.y {
            stack.push(LatticeBox::new(IVec3::new(b.min.x, m.y, b.min.z), IVec3::new(x1, b.max.y, b.max.z)));
        }
        let y1 = b.max.y.min(m.y);
        if m.z < b.max.z {
            stack.push(LatticeBox::new(IVec3::new(b.min.x, b.min.y, m.z), IVec3::new(x1, y1, b.max.z)));
        }
    }
    true
}

/// What a level's visibility bakes share: the summary of every chunk of its grid, the opaque
/// materials and the settings. Build it once per map version ([`VisCache`] keeps it between
/// edits) and bake every chunk with [`bake_chunk_vis_in`].
#[derive(Debug, Clone)]
pub struct LevelVis {
    pub grid: Arc<SummaryGrid>,
    pub opaque: OpaqueMaterials,
    pub settings: VisSettings,
}

impl LevelVis {
    /// Summarizes every chunk of the grid from `grid_min` to `grid_max` (inclusive chunk
    /// coordinates: the level's PMF grid).
    pub fn build(
        level: &Level,
        library: &Library,
        settings: VisSettings,
        grid_min: ChunkCoord,
        grid_max: ChunkCoord,
    ) -> Self {
        VisCache::new(settings).level(level, library, 0, grid_min, grid_max)
    }
}

/// Bakes the visibility data of `chunk`'s air cells, building the level's summaries first (for
/// one-off bakes and tests; a compile shares a [`LevelVis`] over its PMF grid). The grid is the
/// box of the stored chunks and `chunk`.
pub fn bake_chunk_vis(
    level: &Level,
    library: &Library,
    chunk: ChunkCoord,
    cells: &[CubeAddr],
    settings: &VisSettings,
) -> Result<ChunkVisBake, BakeInputError> {
    let c = chunk.as_ivec3();
    let (lo, hi) = level.occupied_bounds().map_or((c, c), |(a, b)| (a.as_ivec3().min(c), b.as_ivec3().max(c)));
    let lv = LevelVis::build(level, library, *settings, ChunkCoord::from_ivec3(lo), ChunkCoord::from_ivec3(hi));
    bake_chunk_vis_in(&lv, level, chunk, cells)
}

/// Bakes the visibility data of `chunk`'s air cells. See the [module documentation](self).
///
/// `cells` are level lattice addresses of the chunk's empty leaf cubes (each inside `chunk`);
/// the result names one list per cell, in the same order.
pub fn bake_chunk_vis_in(
    lv: &LevelVis,
    level: &Level,
    chunk: ChunkCoord,
    cells: &[CubeAddr],
) -> Result<ChunkVisBake, BakeInputError> {
    chunk_vis(lv, level, chunk, cells, true)
}

/// [`bake_chunk_vis_in`] without the far sets: every list's far part is empty (the same
/// [`ChunkVisBake::far`] entry), for a caller that writes the far lists itself from the
/// components the lists name ([`VisList::comp`]); [`VisStats::searches`] still counts the
/// far sets the lists name.
pub fn bake_chunk_own_vis_in(
    lv: &LevelVis,
    level: &Level,
    chunk: ChunkCoord,
    cells: &[CubeAddr],
) -> Result<ChunkVisBake, BakeInputError> {
    chunk_vis(lv, level, chunk, cells, false)
}

fn chunk_vis(
    lv: &LevelVis,
    level: &Level,
    chunk: ChunkCoord,
    cells: &[CubeAddr],
    with_far: bool,
) -> Result<ChunkVisBake, BakeInputError> {
    if !chunk.is_in_grid() {
        return Err(BakeInputError::ChunkOutsideGrid(chunk));
    }
    let frame = level.frame();
    let chunk_addr = frame.chunk_addr(chunk);
    if let Some(&cell) = cells.iter().find(|c| !c.is_aligned() || !chunk_addr.contains_addr(c)) {
        return Err(BakeInputError::CellOutsideChunk { cell, chunk });
    }
    let grid = &lv.grid;
    let mut stats = VisStats { cells: cells.len() as u64, ..VisStats::default() };
    let empty = Octree::new(frame.chunk_lattice_log2());
    let octree = level.chunk(chunk).map_or(&empty, |c| c.octree());
    let voxels = ChunkVoxels::build(octree, &lv.opaque, lv.settings.voxels_log2);
    let (_, face_index) = voxels.summary();
    let own_lists = own_candidates(octree, &voxels);
    let base = frame.chunk_min_lattice(chunk);
    let vl = i32::from(voxels.vl);
    let g0 = grid.index(chunk.as_ivec3());

    // One list per component holding a cell, in order of first cell.
    let mut own: Vec<Arc<[CubeAddr]>> = Vec::new();
    let mut far: Vec<Arc<[ChunkCoord]>> = Vec::new();
    let mut lists: Vec<VisList> = Vec::new();
    let mut list_of_label: Vec<Option<u32>> = vec![None; voxels.components + 1];
    let mut cell_list = Vec::with_capacity(cells.len());
    for cell in cells {
        let label = voxels.label((cell.min - base) >> vl);
        // An opaque label cannot hold a cell (a cell is air); give it nothing rather than panic.
        let l = if label == OPAQUE { voxels.components } else { usize::from(label) };
        let i = *list_of_label[l].get_or_insert_with(|| {
            own.push(own_lists.get(l).cloned().unwrap_or_default().into());
            let comp = face_index.get(l).copied().flatten();
            let reached = match (g0, comp) {
                (Some(g0), Some(c0)) => {
                    stats.searches += 1;
                    if with_far { grid.far_chunks(g0, usize::from(c0)) } else { Vec::new() }
                }
                _ => Vec::new(),
            };
            let f = match far.iter().position(|f| **f == *reached) {
                Some(i) => i,
                None => {
                    far.push(reached.into());
                    far.len() - 1
                }
            };
            lists.push(VisList { own: own.len() as u32 - 1, far: f as u32, comp });
            lists.len() as u32 - 1
        });
        cell_list.push(i);
    }
    let listed: u64 = cell_list
        .iter()
        .map(|&l| {
            let l = &lists[l as usize];
            (own[l.own as usize].len() + far[l.far as usize].len()) as u64
        })
        .sum();
    let skipped = listed > lv.settings.max_listed;
    Ok(ChunkVisBake { cell_list, lists, own, far, stats, skipped })
}

/// Per component label: the solid leaves (chunk-local, pre-order) with a face whose outside
/// layer, inside the chunk, holds an open voxel of that component.
fn own_candidates(octree: &Octree, voxels: &ChunkVoxels) -> Vec<Vec<CubeAddr>> {
    let mut out = vec![Vec::new(); voxels.components];
    if octree.is_empty() {
        return out;
    }
    let edge = 1i32 << octree.size_log2();
    let vl = i32::from(voxels.vl);
    let mut seen: Vec<u16> = Vec::new();
    for (addr, cube) in octree.leaves() {
        if !cube.is_solid() {
            continue;
        }
        seen.clear();
        let b = addr.lattice_box();
        for f in Face::ALL {
            let a = f.axis();
            let (mut lo, mut hi) = (b.min, b.max - IVec3::ONE);
            if f.is_positive() {
                lo[a] = b.max[a];
                hi[a] = b.max[a];
            } else {
                lo[a] = b.min[a] - 1;
                hi[a] = b.min[a] - 1;
            }
            if lo[a] < 0 || hi[a] >= edge {
                continue;
            }
            let (vlo, vhi) = (lo >> vl, hi >> vl);
            for y in vlo.y..=vhi.y {
                for z in vlo.z..=vhi.z {
                    for x in vlo.x..=vhi.x {
                        let l = voxels.label(IVec3::new(x, y, z));
                        if l != OPAQUE && !seen.contains(&l) {
                            seen.push(l);
                        }
                    }
                }
            }
        }
        for &l in &seen {
            out[usize::from(l)].push(addr);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use CellLists::{Exact, Nothing, OwnWhole};

    fn entries(own: &[u64], far: &[u64], modes: &[CellLists]) -> u64 {
        modes
            .iter()
            .zip(own.iter().zip(far))
            .map(|(m, (o, f))| match m {
                Exact => o + f,
                OwnWhole => 1 + f,
                Nothing => 0,
            })
            .sum()
    }

    #[test]
    fn lists_that_fit_are_written_as_baked() {
        assert_eq!(lists_within_budget(&[3, 5, 0], &[2, 2, 9], 21), vec![Exact; 3]);
        assert_eq!(lists_within_budget(&[], &[], 0), Vec::<CellLists>::new());
    }

    #[test]
    fn over_budget_the_longest_own_lists_name_their_chunk_whole_first() {
        // 100 + 40 + 30 + 1 own cubes, 2 far chunks each: 179 entries. Naming the chunk whole
        // saves 99, 39, 29, 0.
        let (own, far) = ([40, 100, 30, 1], [2, 2, 2, 2]);
        let modes = lists_within_budget(&own, &far, 100);
        assert_eq!(modes, vec![Exact, OwnWhole, Exact, Exact]);
        assert!(entries(&own, &far, &modes) <= 100);
        let modes = lists_within_budget(&own, &far, 50);
        assert_eq!(modes, vec![OwnWhole, OwnWhole, Exact, Exact]);
        assert!(entries(&own, &far, &modes) <= 50);
        // An own list of one cube costs what naming the chunk does: it stays as it is.
        let modes = lists_within_budget(&own, &far, 12);
        assert_eq!(modes, vec![OwnWhole; 3].into_iter().chain([Exact]).collect::<Vec<_>>());
        assert_eq!(entries(&own, &far, &modes), 12);
    }

    #[test]
    fn cells_that_do_not_fit_even_so_carry_nothing_shortest_kept() {
        let (own, far) = ([40, 100, 30, 0], [5, 1, 3, 2]);
        // Own chunk whole: 6, 2, 4 and 2 entries; 9 fit: the three shortest.
        let modes = lists_within_budget(&own, &far, 9);
        assert_eq!(modes, vec![Nothing, OwnWhole, OwnWhole, Exact]);
        assert!(entries(&own, &far, &modes) <= 9);
        assert_eq!(lists_within_budget(&own, &far, 0), vec![Nothing; 4]);
    }

    #[test]
    fn ties_go_in_cell_order() {
        let modes = lists_within_budget(&[10, 10, 10], &[0, 0, 0], 21);
        assert_eq!(modes, vec![OwnWhole, Exact, Exact]);
    }
}
