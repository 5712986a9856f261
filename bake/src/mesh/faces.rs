//! Phase 1 of [`mesh_chunk`](super::mesh_chunk), the face-decision pass: which faces of a
//! chunk's solid cubes are seen (docs/spec/PMF-NOTES.md G4), before any record is written.
//!
//! One read of each solid layout cube packs its place, size, kind and material into 8 bytes.
//! From those, a padded dense grid of cells covers the chunk and a one-cell border read from
//! its six face neighbours (cell edge: the chunk's smallest solid leaf, at most 32 cells a side;
//! the border walks each neighbour layer asking the neighbour's octree once per leaf). Each row
//! of cells along X is three bit masks (bit `x + 1` for cell `x`, the border at bits 0 and
//! `n + 1`):
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
//! Then per solid cube, in layout order: a one-cell cube of plain geometry decides its six faces
//! from five rows with a few shifts (an opaque face is shown by an open cell across it, hidden by
//! an opaque one; a clear face is shown by air, opaque cells and clear cells of another material,
//! hidden by its own); a bigger one scans the rows across each face (shown if any cell across
//! shows it, hidden if all hide it). Faces looking at mixed cells, and every face of extended
//! geometry and of leaves smaller than a cell the grid cannot decide, ask the leaves one by one
//! ([`Neighbourhood::covered`], what [`mesh_chunk_reference`](super::mesh_chunk_reference) does
//! for every face). The decisions are exactly the reference's (tested), the slope-outline rule
//! included: an extended neighbour with a pushed touching face is mixed, so the faces against it
//! always ask the leaves. Extended faces collapsed to a line or a point are dropped here (G3), so
//! the result is the faces emitted.

use glam::IVec3;
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr, Face};
use pmfedit_core::map::octree::{Cube, CubeKind, MaterialId};
use pmfedit_core::map::{Level, Library};

use super::{
    FACE_CORNERS, Materials, Neighbourhood, Opacity, corner_steps, ext_face_outline, face_at_rest, face_in_plane,
    triangulate,
};
use crate::layout::ChunkLayout;

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

/// The faces of chunk `chunk` of `level` that [`mesh_chunk`](super::mesh_chunk) emits, over its
/// `layout` (as for `mesh_chunk`); phase 1 of meshing. See the [module documentation](self).
pub fn visible_faces(level: &Level, library: &Library, chunk: ChunkCoord, layout: &ChunkLayout) -> VisibleFaces {
    let (solid, cubes) = (layout.solid_cubes(), layout.cubes());
    if solid.is_empty() {
        return VisibleFaces::default();
    }
    let mats = Materials::new(library);
    let chunk_log2 = level.frame().chunk_lattice_log2();
    // Cells are never smaller than `chunk edge / 32`.
    let cap = chunk_log2.saturating_sub(MAX_GRID_LOG2);
    // One read of each solid layout cube: its place, size, kind and material, packed.
    let mut entries = Vec::with_capacity(solid.len());
    let mut finest = u8::MAX;
    for &i in solid {
        let c = &cubes[i as usize];
        let size_log2 = c.addr.size_log2;
        finest = finest.min(size_log2);
        let (kind, material) = match c.cube.as_ref().map(|c| &c.kind) {
            _ if size_log2 < cap => (Kind::Small, MaterialId(0)),
            Some(CubeKind::Geometry(g)) if mats.get(g.material) == Opacity::Opaque => (Kind::PlainOpaque, g.material),
            Some(CubeKind::Geometry(g)) => (Kind::PlainClear, g.material),
            _ => (Kind::Extended, MaterialId(0)),
        };
        entries.push(Entry::new(c.addr.min >> i32::from(cap), size_log2, kind, material));
    }
    let hood = Neighbourhood::new(level, chunk);
    let log2 = finest.max(cap);
    let grid = Grid::new(&hood, log2, cap, &entries, layout, &mats);
    // The layout cube of the `k`-th entry (extended and small leaves only).
    let leaf = |k: usize| {
        let c = &cubes[solid[k] as usize];
        (c.addr, c.cube.as_ref().expect("a solid layout cube is a leaf"))
    };
    let (to_cell, cap) = (u32::from(log2 - cap), i32::from(cap));
    let mut out = Vec::with_capacity(entries.len());
    let (mut quads, mut ext_faces, mut ext_vertices) = (0, 0, 0);
    for (k, e) in entries.iter().enumerate() {
        let cell = e.cell() >> to_cell;
        let addr = CubeAddr { min: e.cell() << cap, size_log2: e.size_log2() };
        let bits = match e.kind() {
            Kind::PlainOpaque | Kind::PlainClear => {
                let clear = e.kind() == Kind::PlainClear;
                let (mut shown, mut unsure) = if addr.size_log2 > log2 {
                    grid.big_plain_cube(addr, cell, clear.then(|| e.material()))
                } else if clear {
                    grid.clear_cell(cell, e.material())
                } else {
                    grid.opaque_cell(cell)
                };
                while unsure != 0 {
                    let f = unsure.trailing_zeros() as usize;
                    unsure &= unsure - 1;
                    shown |= u8::from(hood.face_visible(addr, Face::ALL[f], e.material(), &mats, None)) << f;
                }
                quads += usize::from(FACE_COUNT[usize::from(shown)]);
                shown
            }
            Kind::Extended | Kind::Small => {
                let (addr, cube) = leaf(k);
                let (bits, vertices) = grid.cube_faces(&hood, &mats, addr, cube);
                if let CubeKind::Extended(_) = cube.kind {
                    ext_faces += bits.count_ones() as usize;
                    ext_vertices += vertices;
                    bits | EXTENDED
                } else {
                    quads += bits.count_ones() as usize;
                    bits
                }
            }
        };
        out.push(bits);
    }
    VisibleFaces { cubes: out, faces: quads + ext_faces, vertices: 4 * quads + ext_vertices }
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
    /// The material of each `clear` cell, index `(x + 1) + side · row`; empty while there is none.
    clear_mats: Vec<MaterialId>,
}

impl Grid {
    /// The grid of cells of edge `2^log2` of the chunk of `hood` whose solid leaves are
    /// `entries` (of `layout`, their places in cells of edge `2^cap`).
    fn new(
        hood: &Neighbourhood<'_>,
        log2: u8,
        cap: u8,
        entries: &[Entry],
        layout: &ChunkLayout,
        mats: &Materials,
    ) -> Grid {
        let n = 1i32 << (hood.frame.chunk_lattice_log2() - log2);
        let side = (n + 2) as usize;
        // Inside the chunk, what no solid leaf fills is air (leaves of air smaller than a cell
        // included: a cell holding one holds no solid leaf at least as big as the cell, so with
        // cells as big as the smallest solid leaf it is all air). The border is filled below;
        // its edges and corners are never looked at.
        let rows = side * side;
        let mut g = Grid {
            log2,
            side,
            open: vec![0; rows],
            mixed: vec![0; rows],
            any_mixed: false,
            clear: vec![0; rows],
            clear_mats: Vec::new(),
        };
        let inner = (u64::MAX >> (64 - n)) << 1;
        for z in 0..n {
            let r = g.row(0, z);
            g.open[r..r + n as usize].fill(inner);
        }
        let to_cell = u32::from(log2 - cap);
        for (k, e) in entries.iter().enumerate() {
            let lo = e.cell() >> to_cell;
            let size_log2 = e.size_log2();
            let class = match e.kind() {
                // A solid leaf smaller than a cell (cells capped at 32 a side): ask the leaves.
                Kind::Small => Class::Mixed,
                Kind::PlainOpaque if size_log2 == log2 => {
                    let r = g.row(lo.y, lo.z);
                    g.open[r] &= !(1u64 << (lo.x + 1));
                    continue;
                }
                Kind::PlainOpaque => Class::Opaque,
                Kind::PlainClear if size_log2 == log2 => {
                    // Open already (air inside the chunk); clear, of this material.
                    let r = g.row(lo.y, lo.z);
                    g.clear[r] |= 1u64 << (lo.x + 1);
                    let cell = (lo.x + 1) as usize + side * r;
                    g.clear_mat_slots()[cell] = e.material();
                    continue;
                }
                Kind::PlainClear => Class::Clear(e.material()),
                Kind::Extended => {
                    let i = layout.solid_cubes()[k];
                    Class::of(layout.cubes()[i as usize].cube.as_ref().expect("a solid layout cube is a leaf"), mats)
                }
            };
            let k = if e.kind() == Kind::Small { 1 } else { 1 << (size_log2 - log2) };
            g.fill(lo, lo + k, class);
        }
        for face in Face::ALL {
            g.fill_border(hood, face, mats);
        }
        g
    }

    /// Fills the border layer across `face` of the chunk from the chunk there, as
    /// `Neighbourhood::leaf` finds it: walks the layer's cells and asks the neighbour's octree
    /// once per leaf (a leaf fills all its cells of the layer at once).
    fn fill_border(&mut self, hood: &Neighbourhood<'_>, face: Face, mats: &Materials) {
        let n = self.side as i32 - 2;
        let (s, cell) = (i32::from(self.log2), 1i32 << self.log2);
        let axis = face.axis();
        let (a, b) = ((axis + 1) % 3, (axis + 2) % 3);
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
        // Cells of the layer done, per `b`, bit `a`.
        let mut done = [0u64; 1 << MAX_GRID_LOG2];
        let all = u64::MAX >> (64 - n);
        for j in 0..n {
            while done[j as usize] != all {
                let i = (!done[j as usize]).trailing_zeros() as i32;
                let mut p = lo;
                p[a] = i;
                p[b] = j;
                let (cube, addr) = octree.get((p << s) - to_local).expect("inside the neighbour chunk");
                // The leaf's cells in the layer (a leaf smaller than a cell: its cell, mixed).
                let (part_lo, part_hi, class) = if addr.size_log2 < self.log2 {
                    (p, p + 1, Class::Mixed)
                } else {
                    let leaf_lo = (addr.min + to_local) >> s;
                    let leaf_hi = leaf_lo + (1 << (addr.size_log2 - self.log2));
                    (leaf_lo.max(lo), leaf_hi.min(hi), Class::of(&cube, mats))
                };
                self.fill(part_lo, part_hi, class);
                let mask = (u64::MAX >> (64 - (part_hi[a] - part_lo[a]))) << part_lo[a];
                for d in &mut done[part_lo[b] as usize..part_hi[b] as usize] {
                    *d |= mask;
                }
            }
        }
    }

    /// `clear_mats`, allocated on first use.
    fn clear_mat_slots(&mut self) -> &mut [MaterialId] {
        if self.clear_mats.is_empty() {
            self.clear_mats = vec![MaterialId(0); self.side * self.side * self.side];
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

    /// The faces of a one-cell leaf of opaque plain geometry at cell `c` the cells across them
    /// decide: `(shown, unsure)` bits, PMF face order. A face is shown when its cell across is
    /// open, hidden when it is opaque, unsure when it is mixed (docs/spec/PMF-NOTES.md G4).
    fn opaque_cell(&self, c: IVec3) -> (u8, u8) {
        let (r, b) = (self.row(c.y, c.z), (c.x + 1) as u32);
        let shown = neighbours(&self.open, r, self.side, b);
        (shown, if self.any_mixed { neighbours(&self.mixed, r, self.side, b) } else { 0 })
    }

    /// [`opaque_cell`](Self::opaque_cell) for plain geometry of the clear material `mat`: a
    /// face is shown against air, opaque cells and clear cells of another material, hidden
    /// against its own material (docs/spec/PMF-NOTES.md G4).
    fn clear_cell(&self, c: IVec3, mat: MaterialId) -> (u8, u8) {
        let (r, b, side) = (self.row(c.y, c.z), (c.x + 1) as u32, self.side);
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

    /// [`opaque_cell`](Self::opaque_cell) and [`clear_cell`](Self::clear_cell) for a plain
    /// geometry leaf of more than one cell at `addr` (first cell `c`; `clear`: its material if
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
        let (r, b, side) = (self.row(c.y, c.z), (c.x + 1) as u32, self.side);
        let (open, mixed) = (&self.open[..], &self.mixed[..]);
        let k = 1usize << (addr.size_log2 - self.log2);
        let mask = (u64::MAX >> (64 - k)) << b;
        // Per face: the open cells across it, and the mixed ones.
        let (mut o, mut m) = ([0u64; 6], [0u64; 6]);
        let (px, nx) = (1u64 << (b as usize + k), 1u64 << (b - 1));
        let (pos_x, pos_y, pos_z, neg_x, neg_y, neg_z) = (0, 1, 2, 3, 4, 5);
        for j in 0..k {
            // ±Y: rows y + k and y − 1 of each z; ±Z: rows z + k and z − 1 of each y.
            for (f, row) in
                [(pos_y, r + k + j * side), (neg_y, r - 1 + j * side), (pos_z, r + k * side + j), (neg_z, r - side + j)]
            {
                o[f] |= open[row] & mask;
                m[f] |= mixed[row] & mask;
            }
            // ±X: bits x + k and x − 1 of the leaf's own rows.
            for i in 0..k {
                let row = r + i + j * side;
                o[pos_x] |= open[row] & px;
                m[pos_x] |= mixed[row] & px;
                o[neg_x] |= open[row] & nx;
                m[neg_x] |= mixed[row] & nx;
            }
        }
        let (mut shown, mut unsure) = (0u8, 0u8);
        for f in 0..6 {
            shown |= u8::from(o[f] != 0) << f;
            unsure |= u8::from(o[f] == 0 && m[f] != 0) << f;
        }
        (shown, unsure)
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
