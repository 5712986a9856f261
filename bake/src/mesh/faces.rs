//! Phase 1 of [`mesh_chunk`](super::mesh_chunk), the face-decision pass: which faces of a
//! chunk's solid cubes are seen (docs/spec/PMF-NOTES.md G4), before any record is written.
//!
//! One read of each solid cube's brief (the layout's 20-byte [`SolidBrief`]s, in a row of their
//! own) packs its place, size, kind and material into 8 bytes.
//! From those, a padded dense grid of cells covers the chunk and a one-cell border read from
//! its six face neighbours (cell edge: the chunk's smallest solid leaf, at most 32 cells a side;
//! the border takes each neighbour's leaves along the shared face, once each). The cell
//! edge is guessed to be one map unit during that read, so one-cell cubes of opaque plain
//! geometry go into the grid at once; when the smallest solid leaf is another size the grid is
//! built again from the packed entries. Each row of cells along X is three bit masks (bit
//! `x + 1` for cell `x`, the border at bits 0 and `n + 1`):
//!
//! - `open`: the cell hides no opaque face: it lies in air, or in plain geometry of a clear
//!   material, a leaf at least as big as the cell;
//! - `mixed`: ask the leaves (pushed corners, a leaf smaller than the cell, several leaves);
//! - `clear`: of the open cells, those in plain geometry of a clear material; their material is
//!   kept per cell, as a clear face is hidden by its own material only.
//!
//! A cell neither open nor mixed is *opaque*: it hides every opaque face and no clear one (plain
//! geometry of an opaque material, or extended geometry whose faces are all at rest and opaque).
//! Inside the chunk, cells no solid leaf fills are air.
//!
//! Then per solid cube (one-cell opaque cubes first, in a loop of their own; the result is in
//! layout order): a one-cell cube of plain geometry decides its six faces from five rows with a
//! few shifts (an opaque face is shown by an open cell across it, hidden by an opaque one; a
//! clear face is shown by air, opaque cells and clear cells of another material, hidden by its
//! own); a bigger one scans the rows across each face (shown if any cell across shows it,
//! hidden if all hide it). Faces looking at mixed cells, and every face of extended
//! geometry and of leaves smaller than a cell the grid cannot decide, ask the leaves one by one
//! ([`Neighbourhood::covered`], what [`mesh_chunk_reference`](super::mesh_chunk_reference) does
//! for every face). The decisions are exactly the reference's (tested), the slope-outline rule
//! included: an extended neighbour with a pushed touching face is mixed, so the faces against it
//! always ask the leaves. Extended faces collapsed to a line or a point are dropped here (G3), so
//! the result is the faces emitted.
//!
//! The working vectors (packed entries, rows, lists) are kept per thread between calls: fresh
//! ones of a few hundred KB a call cost more in page faults than the decisions on big chunks.

use std::cell::RefCell;

use glam::IVec3;
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr, Face, LATTICE_PER_UNIT_LOG2};
use pmfedit_core::map::octree::{Cube, CubeKind, MaterialId};
use pmfedit_core::map::{Level, Library};

use super::geometry::{
    FACE_CORNERS, Materials, Neighbourhood, Opacity, corner_steps, ext_face_outline, face_at_rest, face_in_plane,
    triangulate,
};
use crate::layout::{ChunkLayout, SolidBrief};

/// Phase 1's result: the faces [`mesh_chunk`](super::mesh_chunk) emits, per solid cube of the
/// layout (in [`ChunkLayout::solid_cubes`] order), and how many faces and vertices they make.
/// What [`mesh_visible_faces`](super::mesh_visible_faces) turns into records.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VisibleFaces {
    /// Per solid cube: bits 0..6 its emitted faces (PMF face order), bit 7 whether it is
    /// extended geometry.
    cubes: Vec<u8>,
    faces: usize,
    vertices: usize,
}

/// Bit 7 of [`VisibleFaces::cubes`].
pub(super) const EXTENDED: u8 = 0x80;
/// Bits 0..6 of [`VisibleFaces::cubes`].
pub(super) const FACE_BITS: u8 = 0x3f;

impl VisibleFaces {
    /// Number of solid cubes (the layout's [`ChunkLayout::solid_cubes`]).
    pub fn len(&self) -> usize {
        self.cubes.len()
    }

    /// Whether the layout has no solid cube.
    pub fn is_empty(&self) -> bool {
        self.cubes.is_empty()
    }

    /// The emitted faces of the `k`-th solid cube (bit `i` = face `i` in PMF order): faces that
    /// pass culling, less extended faces collapsed to nothing.
    pub fn face_bits(&self, k: usize) -> u8 {
        self.cubes[k] & FACE_BITS
    }

    /// [`face_bits`](Self::face_bits) of every solid cube, in layout order.
    pub fn iter_face_bits(&self) -> impl ExactSizeIterator<Item = u8> + '_ {
        self.cubes.iter().map(|&b| b & FACE_BITS)
    }

    /// Whether the `k`-th solid cube is extended geometry (its faces are triangles).
    pub fn is_extended(&self, k: usize) -> bool {
        self.cubes[k] & EXTENDED != 0
    }

    /// Number of emitted faces (quads: the block-mesh figure's unit).
    pub fn face_count(&self) -> usize {
        self.faces
    }

    /// Number of vertices the faces take: 4 per quad, 3 per triangle.
    pub fn vertex_count(&self) -> usize {
        self.vertices
    }

    /// Per solid cube: face bits and the extended flag.
    pub(super) fn packed(&self) -> &[u8] {
        &self.cubes
    }
}

/// Phase 1's working memory, kept per thread from one call to the next: a bake meshes chunk
/// after chunk on a few threads, and fresh vectors of a few hundred KB cost the kernel's page
/// faults and zeroing each time (more than the decisions, on big chunks).
#[derive(Default)]
struct Scratch {
    /// One per solid cube.
    entries: Vec<Entry>,
    split: Split,
    /// Entries the first pass did not add to the grid.
    pending: Vec<u32>,
    /// The grid's rows and clear materials (see [`Grid`]).
    open: Vec<u64>,
    mixed: Vec<u64>,
    clear: Vec<u64>,
    clear_mats: Vec<MaterialId>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

/// The faces of chunk `chunk` of `level` that [`mesh_chunk`](super::mesh_chunk) emits, over its
/// `layout` (as for `mesh_chunk`); phase 1 of meshing. See the [module documentation](super).
pub fn visible_faces(level: &Level, library: &Library, chunk: ChunkCoord, layout: &ChunkLayout) -> VisibleFaces {
    SCRATCH.with(|cell| {
        // Taken, not borrowed: a nested call (none today) would start from empty vectors.
        let mut scratch = cell.take();
        let faces = visible_faces_in(&mut scratch, level, library, chunk, layout);
        cell.replace(scratch);
        faces
    })
}

/// [`visible_faces`] with working memory `scratch` (any contents).
fn visible_faces_in(
    scratch: &mut Scratch,
    level: &Level,
    library: &Library,
    chunk: ChunkCoord,
    layout: &ChunkLayout,
) -> VisibleFaces {
    let (solid, cubes) = (layout.solid_cubes(), layout.cubes());
    if solid.is_empty() {
        return VisibleFaces::default();
    }
    let mats = Materials::new(library);
    let chunk_log2 = level.frame().chunk_lattice_log2();
    // Cells are never smaller than `chunk edge / 32`.
    let cap = chunk_log2.saturating_sub(MAX_GRID_LOG2);
    let hood = Neighbourhood::new(level, chunk);
    let rows = Rows {
        open: std::mem::take(&mut scratch.open),
        mixed: std::mem::take(&mut scratch.mixed),
        clear: std::mem::take(&mut scratch.clear),
        clear_mats: std::mem::take(&mut scratch.clear_mats),
    };
    // Cells as big as the smallest solid leaf; guessed to be one map unit (or the smallest
    // cell) so that the one read of each solid layout cube also adds the commonest leaves, one
    // cell of opaque plain geometry, to the grid; the rest wait in `pending`.
    let guess = cap.max(LATTICE_PER_UNIT_LOG2).min(chunk_log2);
    let mut grid = Grid::empty(&hood, guess, rows);
    let (entries, split, pending) = (&mut scratch.entries, &mut scratch.split, &mut scratch.pending);
    split.clear();
    pending.clear();
    // The briefs, not the layout cubes: 20 bytes a cube in a row of their own. Entries are
    // written by index and the one-cell list pushed to a local vector, so that the loop keeps
    // its lengths in registers.
    let briefs = layout.solid_briefs();
    entries.clear();
    entries.resize(briefs.len(), Entry(0));
    let mut ones = std::mem::take(&mut split.opaque_ones);
    ones.reserve(briefs.len());
    let mut finest = u8::MAX;
    // The row being cleared and its cells (row 0 is border: clearing nothing there is harmless).
    let mut run = (0usize, 0u64);
    for (k, (b, e)) in briefs.iter().zip(entries.iter_mut()).enumerate() {
        let size_log2 = b.addr.size_log2;
        finest = finest.min(size_log2);
        if let Some(m) = b.plain
            && size_log2 == guess
            && mats.get(m) == Opacity::Opaque
        {
            // The commonest leaf, straight into the grid; its entry stays a placeholder (the
            // rare paths that need it pack it again from the brief).
            let lo = b.addr.min >> i32::from(guess);
            let (r, bit) = (grid.row(lo.y, lo.z), (lo.x + 1) as u32);
            // Cells of one row are cleared together (pre-order visits them in pairs along X).
            if r != run.0 {
                grid.open[run.0] &= !run.1;
                run = (r, 0);
            }
            run.1 |= 1u64 << bit;
            ones.push(One::new(k, r, bit));
        } else {
            *e = Entry::pack(b, cap, &mats);
            pending.push(k as u32);
        }
    }
    grid.open[run.0] &= !run.1;
    split.opaque_ones = ones;
    let log2 = finest.max(cap);
    let layout_cube = |k: usize| &cubes[solid[k] as usize];
    let leaf = |k: usize| *layout_cube(k).cube.as_ref().expect("a solid layout cube is a leaf");
    let to_cell = u32::from(log2 - cap);
    if log2 == guess {
        for &k in pending.iter() {
            grid.add(k as usize, entries[k as usize], to_cell, || leaf(k as usize), &mats, split);
        }
    } else {
        // Another cell size: start again, every entry packed.
        grid = Grid::empty(&hood, log2, grid.into_rows());
        split.clear();
        for (k, e) in entries.iter_mut().enumerate() {
            *e = Entry::pack(&briefs[k], cap, &mats);
            grid.add(k, *e, to_cell, || leaf(k), &mats, split);
        }
    }
    grid.fill_borders(&hood, &mats);
    let (entries, split) = (&scratch.entries[..], &scratch.split);
    let (side, cap) = (grid.side, i32::from(cap));
    // The faces the grid leaves unsure, asked of the leaves (plain geometry).
    let ask = |e: Entry, mut shown: u8, mut unsure: u8| {
        let addr = CubeAddr { min: e.cell() << cap, size_log2: e.size_log2() };
        while unsure != 0 {
            let f = unsure.trailing_zeros() as usize;
            unsure &= unsure - 1;
            shown |= u8::from(hood.face_visible(addr, Face::ALL[f], e.material(), &mats, None)) << f;
        }
        shown
    };
    let mut out = vec![0u8; entries.len()];
    let (mut quads, mut ext_faces, mut ext_vertices) = (0, 0, 0);
    // One-cell cubes of opaque plain geometry, most of a chunk: a face is shown by an open cell
    // across it, hidden by an opaque one, unsure against a mixed one; five rows each.
    for one in &split.opaque_ones {
        let (k, r, b) = one.get();
        let mut shown = neighbours(&grid.open, r, side, b);
        if grid.any_mixed {
            let unsure = neighbours(&grid.mixed, r, side, b);
            if unsure != 0 {
                shown = ask(Entry::pack(&briefs[k], cap as u8, &mats), shown, unsure);
            }
        }
        quads += usize::from(FACE_COUNT[usize::from(shown)]);
        out[k] = shown;
    }
    for one in &split.clear_ones {
        let (k, r, b) = one.get();
        let (mut shown, unsure) = grid.clear_cell(r, b, entries[k].material());
        if unsure != 0 {
            shown = ask(entries[k], shown, unsure);
        }
        quads += usize::from(FACE_COUNT[usize::from(shown)]);
        out[k] = shown;
    }
    let to_cell = u32::from(log2) - cap as u32;
    for &k in &split.rest {
        let (k, e) = (k as usize, entries[k as usize]);
        out[k] = match e.kind() {
            Kind::PlainOpaque | Kind::PlainClear => {
                let addr = CubeAddr { min: e.cell() << cap, size_log2: e.size_log2() };
                let clear = (e.kind() == Kind::PlainClear).then(|| e.material());
                let (shown, unsure) = grid.big_plain_cube(addr, e.cell() >> to_cell, clear);
                let shown = if unsure != 0 { ask(e, shown, unsure) } else { shown };
                quads += usize::from(FACE_COUNT[usize::from(shown)]);
                shown
            }
            Kind::Extended | Kind::Small => {
                let c = &cubes[solid[k] as usize];
                let cube = c.cube.as_ref().expect("a solid layout cube is a leaf");
                let (bits, vertices) = grid.cube_faces(&hood, &mats, c.addr, cube);
                if let CubeKind::Extended(_) = cube.kind {
                    ext_faces += usize::from(FACE_COUNT[usize::from(bits)]);
                    ext_vertices += vertices;
                    bits | EXTENDED
                } else {
                    quads += usize::from(FACE_COUNT[usize::from(bits)]);
                    bits
                }
            }
        };
    }
    Rows { open: scratch.open, mixed: scratch.mixed, clear: scratch.clear, clear_mats: scratch.clear_mats } =
        grid.into_rows();
    VisibleFaces { cubes: out, faces: quads + ext_faces, vertices: 4 * quads + ext_vertices }
}

/// A one-cell plain geometry cube for the decision loops: its entry index, row and bit.
#[derive(Debug, Clone, Copy)]
struct One(u32, u32);

impl One {
    fn new(k: usize, r: usize, b: u32) -> Self {
        One(k as u32, (r as u32) << 6 | b)
    }

    /// `(entry index, row, bit)`.
    fn get(self) -> (usize, usize, u32) {
        (self.0 as usize, (self.1 >> 6) as usize, self.1 & 63)
    }
}

/// The solid cubes by the loop that decides them (entry indices).
#[derive(Default)]
struct Split {
    /// One-cell cubes of opaque plain geometry.
    opaque_ones: Vec<One>,
    /// One-cell cubes of clear plain geometry.
    clear_ones: Vec<One>,
    /// The rest: bigger plain cubes, extended geometry, leaves smaller than a cell.
    rest: Vec<u32>,
}

impl Split {
    fn clear(&mut self) {
        self.opaque_ones.clear();
        self.clear_ones.clear();
        self.rest.clear();
    }
}

/// What a solid layout cube is, as far as the grid's first pass tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Plain geometry of an opaque material.
    PlainOpaque,
    /// Plain geometry of a clear (transparent or liquid) material.
    PlainClear,
    /// Extended geometry (or, never listed as solid, air).
    Extended,
    /// Smaller than the smallest cell (`chunk edge / 32`): its place is rounded, ask the layout.
    Small,
}

/// A solid layout cube packed in 64 bits: its chunk-local position in the smallest cells
/// (`chunk edge / 32`, 5 bits an axis; exact for leaves at least that big), its size, [`Kind`]
/// and material (plain geometry).
#[derive(Debug, Clone, Copy)]
struct Entry(u64);

impl Entry {
    /// The entry of the solid layout cube `brief` stands for, its place in cells of edge `2^cap`.
    fn pack(brief: &SolidBrief, cap: u8, mats: &Materials) -> Self {
        let addr = brief.addr;
        let (kind, material) = match brief.plain {
            _ if addr.size_log2 < cap => (Kind::Small, MaterialId(0)),
            Some(m) if mats.get(m) == Opacity::Opaque => (Kind::PlainOpaque, m),
            Some(m) => (Kind::PlainClear, m),
            None => (Kind::Extended, MaterialId(0)),
        };
        Entry::new(addr.min >> i32::from(cap), addr.size_log2, kind, material)
    }

    fn new(cell: IVec3, size_log2: u8, kind: Kind, material: MaterialId) -> Self {
        let a = |v: i32| v as u64 & 31;
        Entry(
            a(cell.x)
                | a(cell.y) << 5
                | a(cell.z) << 10
                | u64::from(size_log2) << 16
                | (kind as u64) << 24
                | u64::from(material.0) << 32,
        )
    }

    fn cell(self) -> IVec3 {
        let a = |shift: u32| ((self.0 >> shift) & 31) as i32;
        IVec3::new(a(0), a(5), a(10))
    }

    fn size_log2(self) -> u8 {
        (self.0 >> 16) as u8
    }

    fn kind(self) -> Kind {
        match (self.0 >> 24) & 3 {
            0 => Kind::PlainOpaque,
            1 => Kind::PlainClear,
            2 => Kind::Extended,
            _ => Kind::Small,
        }
    }

    fn material(self) -> MaterialId {
        MaterialId((self.0 >> 32) as u16)
    }
}

/// Set bits of each 6-bit face mask (x86-64's baseline has no `popcnt`).
const FACE_COUNT: [u8; 64] = {
    let mut t = [0; 64];
    let mut i = 0;
    while i < 64 {
        t[i] = (i as u8).count_ones() as u8;
        i += 1;
    }
    t
};

/// Cells per chunk edge of a [`Grid`] at most, as a power of two (32³ cells and a border).
const MAX_GRID_LOG2: u8 = 5;

/// The bits of the six cells around bit `b` of row `r` in `rows` (rows `side` a side, along Y
/// adjacent, along Z `side` apart), PMF face order.
#[inline(always)]
fn neighbours(rows: &[u64], r: usize, side: usize, b: u32) -> u8 {
    let w = &rows[r - side..=r + side];
    let mid = w[side];
    (((mid >> (b + 1)) & 1)
        | ((w[side + 1] >> b) & 1) << 1
        | ((w[2 * side] >> b) & 1) << 2
        | ((mid >> (b - 1)) & 1) << 3
        | ((w[side - 1] >> b) & 1) << 4
        | ((w[0] >> b) & 1) << 5) as u8
}

/// A leaf's cells, as the grid holds them (follows `covers`, docs/spec/PMF-NOTES.md G4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Air: covers nothing.
    Air,
    /// Covers every opaque face and no clear one, from every side.
    Opaque,
    /// Plain geometry of this clear material: covers faces of the same material only.
    Clear(MaterialId),
    /// Ask the leaves.
    Mixed,
}

impl Class {
    /// The class of a leaf `cube` at least as big as the cell.
    fn of(cube: &Cube, mats: &Materials) -> Class {
        let opaque = |m: MaterialId| mats.get(m) == Opacity::Opaque;
        match &cube.kind {
            CubeKind::Empty => Class::Air,
            CubeKind::Geometry(g) if opaque(g.material) => Class::Opaque,
            CubeKind::Geometry(g) => Class::Clear(g.material),
            CubeKind::Extended(e)
                if Face::ALL.iter().all(|&f| face_at_rest(e, f) && opaque(e.face_materials[f.index()])) =>
            {
                Class::Opaque
            }
            CubeKind::Extended(_) => Class::Mixed,
        }
    }

    /// Its `(open, mixed, clear)` row bits (see [`Grid`]).
    fn bits(self) -> (bool, bool, bool) {
        match self {
            Class::Air => (true, false, false),
            Class::Opaque => (false, false, false),
            Class::Clear(_) => (true, false, true),
            Class::Mixed => (false, true, false),
        }
    }
}

/// A [`Grid`]'s vectors, between calls (any contents).
struct Rows {
    open: Vec<u64>,
    mixed: Vec<u64>,
    clear: Vec<u64>,
    clear_mats: Vec<MaterialId>,
}

/// The padded dense grid of one chunk. See the [module documentation](self). A cell is opaque
/// where it is neither open nor mixed.
struct Grid {
    /// Lattice edge of a cell, as a power of two.
    log2: u8,
    /// Cells (and rows) per padded edge: cells per chunk edge plus 2.
    side: usize,
    /// Per row `(y, z)` (each `-1..=n`, Y fastest) of cells along X, bit `x + 1` for cell `x`:
    /// the cells that hide no opaque face.
    open: Vec<u64>,
    /// Per row: the mixed cells (ask the leaves).
    mixed: Vec<u64>,
    /// Whether any cell is mixed (else `mixed` is all zeros).
    any_mixed: bool,
    /// Per row: the open cells of plain geometry of a clear material (see `clear_mats`).
    clear: Vec<u64>,
    /// The material of each `clear` cell, index `(x + 1) + side · row` (other slots: anything;
    /// shorter while no cell is clear).
    clear_mats: Vec<MaterialId>,
}

impl Grid {
    /// A grid of cells of edge `2^log2` over the chunk of `hood`, all air inside, in the
    /// vectors `rows` (the border is mixed until [`fill_borders`](Self::fill_borders)).
    fn empty(hood: &Neighbourhood<'_>, log2: u8, rows: Rows) -> Grid {
        let n = 1i32 << (hood.frame.chunk_lattice_log2() - log2);
        let side = (n + 2) as usize;
        // Inside the chunk, what no solid leaf fills is air (leaves of air smaller than a cell
        // included: a cell holding one holds no solid leaf at least as big as the cell, so with
        // cells no bigger than the smallest solid leaf it is all air). The border's edges and
        // corners are never looked at.
        let Rows { mut open, mut mixed, mut clear, clear_mats } = rows;
        for v in [&mut open, &mut mixed, &mut clear] {
            v.clear();
            v.resize(side * side, 0);
        }
        let inner = (u64::MAX >> (64 - n)) << 1;
        for z in 0..n as usize {
            let r = 1 + side * (z + 1);
            open[r..r + n as usize].fill(inner);
        }
        Grid { log2, side, open, mixed, any_mixed: false, clear, clear_mats }
    }

    /// Adds the solid leaf of entry `k`, `e` (layout cube `cube` where the entry does not tell
    /// enough), and files it in `split`. `to_cell`: `log2` less the entries' cell size. A
    /// leaf's cells are its own: inside the chunk they are still air when it comes.
    #[allow(clippy::too_many_arguments)]
    fn add(&mut self, k: usize, e: Entry, to_cell: u32, cube: impl Fn() -> Cube, mats: &Materials, split: &mut Split) {
        let (log2, side) = (self.log2, self.side);
        let lo = e.cell() >> to_cell;
        let size_log2 = e.size_log2();
        let (r, b) = (self.row(lo.y, lo.z), (lo.x + 1) as u32);
        let class = match e.kind() {
            // A solid leaf smaller than a cell (cells capped at 32 a side): ask the leaves.
            Kind::Small => Class::Mixed,
            Kind::PlainOpaque if size_log2 == log2 => {
                self.open[r] &= !(1u64 << b);
                split.opaque_ones.push(One::new(k, r, b));
                return;
            }
            Kind::PlainOpaque => {
                let n = 1usize << (size_log2 - log2);
                let mask = (u64::MAX >> (64 - n)) << b;
                for z in 0..n {
                    for row in &mut self.open[r + z * side..r + z * side + n] {
                        *row &= !mask;
                    }
                }
                split.rest.push(k as u32);
                return;
            }
            Kind::PlainClear if size_log2 == log2 => {
                // Open already; clear, of this material.
                self.clear[r] |= 1u64 << b;
                self.clear_mat_slots()[b as usize + side * r] = e.material();
                split.clear_ones.push(One::new(k, r, b));
                return;
            }
            Kind::PlainClear => Class::Clear(e.material()),
            Kind::Extended => Class::of(&cube(), mats),
        };
        split.rest.push(k as u32);
        let n = if e.kind() == Kind::Small { 1 } else { 1 << (size_log2 - log2) };
        self.fill(lo, lo + n, class);
    }

    /// Fills the one-cell border from the six face neighbours.
    fn fill_borders(&mut self, hood: &Neighbourhood<'_>, mats: &Materials) {
        for face in Face::ALL {
            self.fill_border(hood, face, mats);
        }
    }

    /// Its vectors, for the next grid.
    fn into_rows(self) -> Rows {
        Rows { open: self.open, mixed: self.mixed, clear: self.clear, clear_mats: self.clear_mats }
    }

    /// Fills the border layer across `face` of the chunk from the chunk there, as
    /// `Neighbourhood::leaf` finds it: each leaf of the neighbour's octree touching the layer
    /// fills its cells of the layer at once.
    fn fill_border(&mut self, hood: &Neighbourhood<'_>, face: Face, mats: &Materials) {
        let n = self.side as i32 - 2;
        let (s, cell) = (i32::from(self.log2), 1i32 << self.log2);
        let axis = face.axis();
        // The layer in cells: `lo..hi`, one cell thick along `axis`.
        let (mut lo, mut hi) = (IVec3::ZERO, IVec3::splat(n));
        lo[axis] = if face.is_positive() { n } else { -1 };
        hi[axis] = lo[axis] + 1;
        let c = hood.frame.chunk_from_lattice(hood.base + lo * cell);
        let Some(ch) = (if c.is_in_grid() { hood.level.chunk(c) } else { None }) else {
            self.fill(lo, hi, Class::Air);
            return;
        };
        let octree = ch.octree();
        let to_local = hood.frame.chunk_min_lattice(c) - hood.base;
        // The neighbour's leaves along the face it shares with the chunk, walked once each down
        // the branches on that side (a root-to-leaf descent per leaf took a fifth of the phase
        // on a terrain chunk); a parent of a cell's size or less holds leaves finer than a cell.
        octree.for_each_on_face(face.opposite(), self.log2, |addr, cube| {
            let leaf_lo = (addr.min + to_local) >> s;
            let (part_lo, part_hi, class) = match cube {
                Some(cube) if addr.size_log2 >= self.log2 => {
                    let leaf_hi = leaf_lo + (1 << (addr.size_log2 - self.log2));
                    (leaf_lo.max(lo), leaf_hi.min(hi), Class::of(&cube, mats))
                }
                // A parent of a cell's size: leaves finer than a cell, its cell mixed.
                _ => (leaf_lo, leaf_lo + 1, Class::Mixed),
            };
            self.fill(part_lo, part_hi, class);
        });
    }

    /// `clear_mats`, grown on first use.
    fn clear_mat_slots(&mut self) -> &mut [MaterialId] {
        let cells = self.side * self.side * self.side;
        if self.clear_mats.len() < cells {
            self.clear_mats.resize(cells, MaterialId(0));
        }
        &mut self.clear_mats
    }

    /// Index of row `(y, z)` (each `-1..=n`).
    fn row(&self, y: i32, z: i32) -> usize {
        (y + 1) as usize + self.side * (z + 1) as usize
    }

    /// Sets cells `lo..hi` (cell coordinates, `-1..=n`) to `class`.
    fn fill(&mut self, lo: IVec3, hi: IVec3, class: Class) {
        let mask = (u64::MAX >> (64 - (hi.x - lo.x))) << (lo.x + 1);
        let (open, mixed, clear) = class.bits();
        let set = |on: bool| if on { mask } else { 0 };
        let (open, mixed, clear) = (set(open), set(mixed), set(clear));
        self.any_mixed |= mixed != 0;
        let ny = (hi.y - lo.y) as usize;
        for z in lo.z..hi.z {
            let r = self.row(lo.y, z);
            let rows = self.open[r..r + ny].iter_mut().zip(&mut self.mixed[r..r + ny]).zip(&mut self.clear[r..r + ny]);
            for ((o, m), c) in rows {
                *o = *o & !mask | open;
                *m = *m & !mask | mixed;
                *c = *c & !mask | clear;
            }
            if let Class::Clear(material) = class {
                let side = self.side;
                let slots = self.clear_mat_slots();
                for r in r..r + ny {
                    let first = (lo.x + 1) as usize + side * r;
                    slots[first..first + (hi.x - lo.x) as usize].fill(material);
                }
            }
        }
    }

    /// The faces of a one-cell leaf of plain geometry of the clear material `mat` (row `r`, bit
    /// `b`) the cells across them decide: `(shown, unsure)` bits, PMF face order. A face is
    /// shown against air, opaque cells and clear cells of another material, hidden against its
    /// own material, unsure against mixed cells (docs/spec/PMF-NOTES.md G4).
    fn clear_cell(&self, r: usize, b: u32, mat: MaterialId) -> (u8, u8) {
        let side = self.side;
        let open = neighbours(&self.open, r, side, b);
        let mixed = if self.any_mixed { neighbours(&self.mixed, r, side, b) } else { 0 };
        let clear = neighbours(&self.clear, r, side, b);
        // Opaque cells (neither open nor mixed) and air (open, not clear) show it.
        let mut shown = !(open | mixed) & FACE_BITS | (open & !clear);
        let (cell, steps) = (b as usize + side * r, [1, side, side * side]);
        let mut left = clear;
        while left != 0 {
            let f = left.trailing_zeros() as usize;
            left &= left - 1;
            let across = if f < 3 { cell + steps[f] } else { cell - steps[f - 3] };
            shown |= u8::from(self.clear_mats[across] != mat) << f;
        }
        (shown, mixed)
    }

    /// The faces of a plain geometry leaf of more than one cell at `addr` (first cell `c`; `clear`: its material if
    /// clear): shown when a cell across is open (or does not cover the clear face), hidden when
    /// all cover it.
    fn big_plain_cube(&self, addr: CubeAddr, c: IVec3, clear: Option<MaterialId>) -> (u8, u8) {
        if clear.is_some() {
            let (mut shown, mut unsure) = (0, 0);
            for face in Face::ALL {
                match self.decide(addr, face, clear) {
                    Some(s) => shown |= u8::from(s) << face.index(),
                    None => unsure |= 1 << face.index(),
                }
            }
            return (shown, unsure);
        }
        let k = 1usize << (addr.size_log2 - self.log2);
        let (r, b) = (self.row(c.y, c.z), (c.x + 1) as u32);
        let shown = self.across(&self.open, r, b, k);
        let unsure = if self.any_mixed { self.across(&self.mixed, r, b, k) & !shown } else { 0 };
        (shown, unsure)
    }

    /// For a leaf of `k` cells a side at row `r`, bit `b`: whether any cell across each face is
    /// set in `rows` (bits in PMF face order).
    fn across(&self, rows: &[u64], r: usize, b: u32, k: usize) -> u8 {
        let side = self.side;
        let mask = (u64::MAX >> (64 - k)) << b;
        let (px, nx) = (1u64 << (b as usize + k), 1u64 << (b - 1));
        let mut any = [0u64; 6];
        for j in 0..k {
            // +Y, +Z, −Y, −Z: rows y + k and y − 1 of each z, z + k and z − 1 of each y.
            any[1] |= rows[r + k + j * side] & mask;
            any[2] |= rows[r + k * side + j] & mask;
            any[4] |= rows[r - 1 + j * side] & mask;
            any[5] |= rows[r - side + j] & mask;
            // ±X: bits x + k and x − 1 of the leaf's own rows.
            for &row in &rows[r + j * side..r + j * side + k] {
                any[0] |= row & px;
                any[3] |= row & nx;
            }
        }
        let mut bits = 0;
        for (f, a) in any.into_iter().enumerate() {
            bits |= u8::from(a != 0) << f;
        }
        bits
    }

    /// Whether face `face` of the leaf at `addr` is visible when the cells across it decide it:
    /// `Some(true)` if one of them does not cover it, `Some(false)` if all do, `None` otherwise
    /// (or for a leaf smaller than a cell). `clear`: the face's material if it is clear.
    fn decide(&self, addr: CubeAddr, face: Face, clear: Option<MaterialId>) -> Option<bool> {
        if addr.size_log2 < self.log2 {
            return None;
        }
        let k = 1i32 << (addr.size_log2 - self.log2);
        let axis = face.axis();
        let mut lo = addr.min >> i32::from(self.log2);
        let mut hi = lo + k;
        // The cells across the face: one layer past the leaf's last cells, or before its first.
        lo[axis] = if face.is_positive() { hi[axis] } else { lo[axis] - 1 };
        hi[axis] = lo[axis] + 1;
        let mask = (u64::MAX >> (64 - (hi.x - lo.x))) << (lo.x + 1);
        let mut all_cover = true;
        for z in lo.z..hi.z {
            for y in lo.y..hi.y {
                let r = self.row(y, z);
                let (open, mixed, clear_cells) = (self.open[r] & mask, self.mixed[r] & mask, self.clear[r] & mask);
                match clear {
                    None => {
                        if open != 0 {
                            return Some(true);
                        }
                        all_cover &= mixed == 0;
                    }
                    Some(m) => {
                        // Opaque cells and air show a clear face; clear ones of another
                        // material too.
                        if (mask & !open & !mixed) | (open & !clear_cells) != 0 {
                            return Some(true);
                        }
                        all_cover &= mixed == 0;
                        let mut same = clear_cells;
                        while same != 0 {
                            let b = same.trailing_zeros() as usize;
                            same &= same - 1;
                            if self.clear_mats[b + self.side * r] != m {
                                return Some(true);
                            }
                        }
                    }
                }
            }
        }
        all_cover.then_some(false)
    }

    /// The emitted faces of the leaf `cube` at `addr` (bits in PMF face order), from the grid
    /// where it decides and from the leaves otherwise, and the vertices they take.
    fn cube_faces(&self, hood: &Neighbourhood<'_>, mats: &Materials, addr: CubeAddr, cube: &Cube) -> (u8, usize) {
        let clear = |m: MaterialId| (mats.get(m) == Opacity::Clear).then_some(m);
        let mut bits = 0;
        let mut vertices = 0;
        for face in Face::ALL {
            match &cube.kind {
                CubeKind::Empty => {}
                CubeKind::Geometry(g) => {
                    let shown = self
                        .decide(addr, face, clear(g.material))
                        .unwrap_or_else(|| hood.face_visible(addr, face, g.material, mats, None));
                    bits |= u8::from(shown) << face.index();
                    vertices += 4 * usize::from(shown);
                }
                CubeKind::Extended(e) => {
                    // A face off its boundary plane is never culled (docs/spec/PMF-NOTES.md G4).
                    let mat = e.face_materials[face.index()];
                    let shown = !face_in_plane(e, face)
                        || self.decide(addr, face, clear(mat)).unwrap_or_else(|| {
                            let outline = (!face_at_rest(e, face)).then(|| ext_face_outline(e, addr, face));
                            hood.face_visible(addr, face, mat, mats, outline.as_ref())
                        });
                    if shown {
                        // Faces collapsed to a line or a point have no triangles (G3).
                        let (_, n) = triangulate(&FACE_CORNERS[face.index()].map(|c| corner_steps(e, c)));
                        bits |= u8::from(n > 0) << face.index();
                        vertices += 3 * n;
                    }
                }
            }
        }
        (bits, vertices)
    }
}
