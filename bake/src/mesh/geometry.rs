//! The geometry and culling rules the two meshing phases and the reference mesher share
//! (docs/spec/PMF-NOTES.md G2–G4): which materials hide what, the faces' corners and tangents,
//! the leaves around a chunk ([`Neighbourhood`]) and whether a face's square is covered, and how
//! a face's four corners are split into triangles.

use glam::IVec3;
use pmfedit_core::map::Level;
use pmfedit_core::map::Library;
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr, Face, LevelFrame, octant_index, octant_offset};
use pmfedit_core::map::octree::{CORNER_STEPS, Cube, CubeKind, ExtGeometry, MaterialId, Octree};

/// Whether a material hides what is behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Opacity {
    Opaque,
    /// Transparent or liquid (G4).
    Clear,
}

/// Per material id, opaque or clear. Ids missing from the library count as opaque.
#[derive(Debug, Clone)]
pub(super) struct Materials(Vec<Opacity>);

impl Materials {
    pub(super) fn new(library: &Library) -> Self {
        let t = library.materials();
        let len = t.ids().next_back().map_or(0, |id| id.index() + 1);
        let mut v = vec![Opacity::Opaque; len];
        for (id, m) in t.iter() {
            if m.transparent || m.liquid {
                v[id.index()] = Opacity::Clear;
            }
        }
        Self(v)
    }

    pub(super) fn get(&self, m: MaterialId) -> Opacity {
        self.0.get(m.index()).copied().unwrap_or(Opacity::Opaque)
    }
}

/// Texture tangents of each face (axis, sign) for u and v; `u × v = −normal`, which makes
/// `(u₀,v₀) (u₀,v₁) (u₁,v₁) (u₁,v₀)` counter-clockwise seen from outside.
pub(super) const TANGENTS: [[(usize, i32); 2]; 6] = [
    [(2, -1), (1, -1)], // +X: u = −Z, v = −Y
    [(0, 1), (2, 1)],   // +Y: u = +X, v = +Z
    [(0, 1), (1, -1)],  // +Z: u = +X, v = −Y
    [(2, 1), (1, -1)],  // −X: u = +Z, v = −Y
    [(0, 1), (2, -1)],  // −Y: u = +X, v = −Z
    [(0, -1), (1, -1)], // −Z: u = −X, v = −Y
];

/// The corners (PMF bit order) of each face in vertex order: `(u₀,v₀) (u₀,v₁) (u₁,v₁) (u₁,v₀)`.
pub const FACE_CORNERS: [[usize; 4]; 6] = face_corners();

const fn face_corners() -> [[usize; 4]; 6] {
    let mut out = [[0; 4]; 6];
    let uv = [(0, 0), (0, 1), (1, 1), (1, 0)];
    let mut f = 0;
    while f < 6 {
        let mut k = 0;
        while k < 4 {
            let mut o = [0i32; 3];
            o[f % 3] = if f < 3 { 1 } else { 0 };
            let [(ua, us), (va, vs)] = TANGENTS[f];
            let (su, sv) = uv[k];
            o[ua] = if us > 0 { su } else { 1 - su };
            o[va] = if vs > 0 { sv } else { 1 - sv };
            out[f][k] = octant_index(IVec3::new(o[0], o[1], o[2]));
            k += 1;
        }
        f += 1;
    }
    out
}

pub(super) fn tangent(face: Face, which: usize) -> IVec3 {
    let (axis, sign) = TANGENTS[face.index()][which];
    let mut v = IVec3::ZERO;
    v[axis] = sign;
    v
}

/// Reads leaves around one chunk: its own octree, then the face-adjacent chunks of the level.
pub(super) struct Neighbourhood<'a> {
    pub(super) level: &'a Level,
    pub(super) frame: LevelFrame,
    /// Level lattice position of the chunk's minimum corner.
    pub(super) base: IVec3,
    pub(super) edge: i32,
    pub(super) own: Option<&'a Octree>,
}

impl<'a> Neighbourhood<'a> {
    /// The neighbourhood of chunk `chunk` of `level`.
    pub(super) fn new(level: &'a Level, chunk: ChunkCoord) -> Self {
        let frame = level.frame();
        let base = frame.chunk_min_lattice(chunk);
        Neighbourhood { level, frame, base, edge: frame.chunk_edge(), own: level.chunk(chunk).map(|c| c.octree()) }
    }

    /// Whether `face` of the leaf at `addr` (chunk-local; material `mat`; `outline`: the face's
    /// corners when it is an extended face in its plane, see [`Neighbourhood::covered`]) passes
    /// culling, asking the leaves across it (docs/spec/PMF-NOTES.md G4).
    pub(super) fn face_visible(
        &self,
        addr: CubeAddr,
        face: Face,
        mat: MaterialId,
        mats: &Materials,
        outline: Option<&[IVec3; 4]>,
    ) -> bool {
        let mut min = addr.min;
        let axis = face.axis();
        min[axis] = if face.is_positive() { addr.max()[axis] } else { addr.min[axis] - 1 };
        !self.covered(min, addr.size_log2, face, mat, mats, outline)
    }

    /// The leaf holding chunk-local position `p` (possibly outside this chunk), with its address
    /// in this chunk's local space. Outside the grid and in missing chunks: air.
    pub(super) fn leaf(&self, p: IVec3) -> (Cube, CubeAddr) {
        if p.cmpge(IVec3::ZERO).all() && p.cmplt(IVec3::splat(self.edge)).all() {
            return match self.own {
                Some(o) => o.get(p).expect("inside the chunk"),
                None => (Cube::EMPTY, CubeAddr { min: IVec3::ZERO, size_log2: self.frame.chunk_lattice_log2() }),
            };
        }
        let q = self.base + p;
        let c = self.frame.chunk_from_lattice(q);
        let base = self.frame.chunk_min_lattice(c);
        let whole = CubeAddr { min: base - self.base, size_log2: self.frame.chunk_lattice_log2() };
        if !c.is_in_grid() {
            return (Cube::EMPTY, whole);
        }
        match self.level.chunk(c) {
            Some(ch) => {
                let (cube, a) = ch.octree().get(q - base).expect("inside the chunk");
                (cube, a.translated(base - self.base))
            }
            None => (Cube::EMPTY, whole),
        }
    }

    /// Whether the square of edge `2^size_log2` at `min` (chunk-local, one cell thick on axis
    /// `face.axis()`) is covered, for a face of material `mat` looking through it. `face` is the
    /// face of the looking cube; the neighbours touch it with `face.opposite()`.
    ///
    /// `outline` is the looking face's corners (chunk-local 1/16 lattice units) when it is an
    /// extended face in its boundary plane: then a neighbour of the same size whose touching face
    /// has the very same outline covers it too (terrain slopes side by side).
    pub(super) fn covered(
        &self,
        min: IVec3,
        size_log2: u8,
        face: Face,
        mat: MaterialId,
        mats: &Materials,
        outline: Option<&[IVec3; 4]>,
    ) -> bool {
        let (cube, addr) = self.leaf(min);
        if let (CubeKind::Extended(e), Some(outline)) = (&cube.kind, outline)
            && addr.size_log2 == size_log2
            && !face_at_rest(e, face.opposite())
        {
            let touching = face.opposite();
            return same_outline(outline, &ext_face_outline(e, addr, touching))
                && covers_material(e.face_materials[touching.index()], mat, mats);
        }
        if !covers(&cube, face.opposite(), mat, mats) {
            return false;
        }
        if addr.size_log2 >= size_log2 {
            return true;
        }
        let h = 1 << (size_log2 - 1);
        let (a, b) = ((face.axis() + 1) % 3, (face.axis() + 2) % 3);
        [(0, 0), (1, 0), (0, 1), (1, 1)].into_iter().all(|(da, db)| {
            let mut p = min;
            p[a] += da * h;
            p[b] += db * h;
            self.covered(p, size_log2 - 1, face, mat, mats, None)
        })
    }
}

/// Whether `cube`'s face `touching` hides a face of material `mat` lying against it (G4).
pub(super) fn covers(cube: &Cube, touching: Face, mat: MaterialId, mats: &Materials) -> bool {
    let m = match &cube.kind {
        CubeKind::Empty => return false,
        CubeKind::Geometry(g) => g.material,
        CubeKind::Extended(e) => {
            if !face_at_rest(e, touching) {
                return false;
            }
            e.face_materials[touching.index()]
        }
    };
    covers_material(m, mat, mats)
}

/// Whether a touching face of material `m` that covers the whole of a face of material `mat`
/// hides it (G4).
pub(super) fn covers_material(m: MaterialId, mat: MaterialId, mats: &Materials) -> bool {
    match mats.get(mat) {
        // An opaque face hides behind opaque geometry only.
        Opacity::Opaque => mats.get(m) == Opacity::Opaque,
        // A transparent or liquid face is kept against anything but its own material.
        Opacity::Clear => m == mat,
    }
}

/// The corners of `face` of the extended cube `e` at `addr`, in chunk-local 1/16 lattice units,
/// in vertex order.
pub(super) fn ext_face_outline(e: &ExtGeometry, addr: CubeAddr, face: Face) -> [IVec3; 4] {
    FACE_CORNERS[face.index()].map(|c| addr.min * 16 + corner_steps(e, c) * addr.edge())
}

/// Whether two face outlines have the same corners (in any order: two faces touching each other
/// list them in opposite winding).
pub(super) fn same_outline(a: &[IVec3; 4], b: &[IVec3; 4]) -> bool {
    let key = |p: &IVec3| p.to_array();
    let (mut a, mut b) = (*a, *b);
    a.sort_unstable_by_key(key);
    b.sort_unstable_by_key(key);
    a == b
}

/// Whether the four corners of `face` are at rest (the face is the full flat square).
pub(super) fn face_at_rest(e: &ExtGeometry, face: Face) -> bool {
    FACE_CORNERS[face.index()].iter().all(|&c| e.corners[c] == [0; 3])
}

/// Whether the four corners of `face` lie in the cube's boundary plane (not pushed along the
/// normal): then the face is inside its rest square and can be culled like a full face.
pub(super) fn face_in_plane(e: &ExtGeometry, face: Face) -> bool {
    FACE_CORNERS[face.index()].iter().all(|&c| e.corners[c][face.axis()] == 0)
}

/// Corner `c` of an extended cube in steps of edge/16 from the cube's minimum corner (0..=16).
pub(super) fn corner_steps(e: &ExtGeometry, c: usize) -> IVec3 {
    octant_offset(c) * i32::from(CORNER_STEPS) + IVec3::from_array(e.corners[c].map(i32::from))
}

/// Triangles (indices into `p`, counter-clockwise from outside) for a face whose corners `p`
/// are given in vertex order (integer positions, exact). Degenerate triangles are dropped.
/// Returns the triangles and how many of them are used (0..=2).
pub(crate) fn triangulate(p: &[IVec3; 4]) -> ([[usize; 3]; 2], usize) {
    let cross = |a: usize, b: usize, c: usize| (p[b] - p[a]).cross(p[c] - p[a]);
    let volume = cross(0, 1, 2).dot(p[3] - p[0]);
    // Split along 0–2 (A) or 1–3 (B). Non-planar: the convex fold (vertex 3 below the plane of
    // 0,1,2 for A). Planar: A unless its two triangles face opposite ways (concave outline).
    let use_a = match volume.signum() {
        -1 => true,
        1 => false,
        _ => cross(0, 1, 2).dot(cross(0, 2, 3)) >= 0,
    };
    let tris: [[usize; 3]; 2] = if use_a { [[0, 1, 2], [0, 2, 3]] } else { [[0, 1, 3], [1, 2, 3]] };
    let mut out = [[0; 3]; 2];
    let mut n = 0;
    for [a, b, c] in tris {
        if cross(a, b, c) != IVec3::ZERO {
            out[n] = [a, b, c];
            n += 1;
        }
    }
    (out, n)
}
