//! Surface patches: one rectangular grid of luxels per face, in the face's plane.

use glam::{DVec2, DVec3};

use super::{LightError, LightSettings};

/// A face to light, as the mesher produces it: a planar convex polygon in world space (map units
/// relative to the level's center chunk center, docs/spec/PMF-NOTES.md L4).
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceFace {
    /// The mesher's id for the face; used as the tie-break of the packing order and reported in
    /// errors. Should be unique within a chunk (ties fall back to the input order).
    pub id: u32,
    /// Faces with the same group go onto the same lightmap page (PMF stores one lightmap index
    /// per geometry cube, so all faces of such a cube share a group). [`SurfaceFace::new`] uses
    /// the id, i.e. a group of one.
    pub group: u32,
    /// 3 or more corners (quads and triangles in practice), in order around the polygon.
    pub corners: Vec<DVec3>,
    /// Outward normal (normalized here; need not be unit length).
    pub normal: DVec3,
}

impl SurfaceFace {
    /// A face from its id, corners and outward normal.
    pub fn new(id: u32, corners: Vec<DVec3>, normal: DVec3) -> Self {
        Self { id, group: id, corners, normal }
    }

    /// The same face in group `group` (see [`SurfaceFace::group`]).
    pub fn in_group(mut self, group: u32) -> Self {
        self.group = group;
        self
    }

    /// The mean of the corners.
    pub fn center(&self) -> DVec3 {
        self.corners.iter().copied().sum::<DVec3>() / self.corners.len().max(1) as f64
    }
}

/// One face's grid of luxels.
///
/// Luxel `(i, j)` (column `i` along [`u_axis`](Self::u_axis), row `j` along
/// [`v_axis`](Self::v_axis)) has its centre at plane coordinates
/// `(u_min + i·u_step, v_min + j·v_step)`: the first and last centres lie on the face's extent,
/// so the patch reaches half a luxel beyond the face (the bilinear padding). A patch one luxel
/// wide has its single centre in the middle of the extent and `u_step = 0`.
#[derive(Debug, Clone, PartialEq)]
pub struct Patch {
    /// The face's [`SurfaceFace::group`].
    pub group: u32,
    /// The face's id.
    pub face: u32,
    /// The face's index in the input of [`plan_patches`].
    pub index: usize,
    /// Luxels along `u_axis`, at least 1.
    pub width: u32,
    /// Luxels along `v_axis`, at least 1.
    pub height: u32,
    /// Unit outward normal.
    pub normal: DVec3,
    /// Unit tangent of the rows (world space).
    pub u_axis: DVec3,
    /// Unit tangent of the columns, `normal × u_axis`.
    pub v_axis: DVec3,
    /// Plane coordinate (along `u_axis`) of the first column's centre.
    pub u_min: f64,
    /// Plane coordinate (along `v_axis`) of the first row's centre.
    pub v_min: f64,
    /// Distance between column centres, map units (0 when `width` is 1).
    pub u_step: f64,
    /// Distance between row centres, map units (0 when `height` is 1).
    pub v_step: f64,
    /// Where each luxel is lit: its centre, moved into the face (inset from the edges by
    /// [`LightSettings::edge_inset`]); row-major, `height` rows of `width`.
    pub luxels: Vec<DVec3>,
}

impl Patch {
    /// Number of luxels.
    pub fn len(&self) -> usize {
        self.luxels.len()
    }

    /// Whether the patch has no luxel (never, for a planned patch).
    pub fn is_empty(&self) -> bool {
        self.luxels.is_empty()
    }

    /// The sample point of luxel `(i, j)`.
    pub fn luxel(&self, i: u32, j: u32) -> DVec3 {
        self.luxels[(j * self.width + i) as usize]
    }

    /// The fractional luxel coordinates of world point `p` (projected on the plane), measured
    /// from the patch's top-left corner: the centre of luxel `(0, 0)` is `(0.5, 0.5)`.
    pub fn luxel_coords(&self, p: DVec3) -> DVec2 {
        let axis = |step: f64, min: f64, dir: DVec3| if step > 0.0 { (p.dot(dir) - min) / step + 0.5 } else { 0.5 };
        DVec2::new(axis(self.u_step, self.u_min, self.u_axis), axis(self.v_step, self.v_min, self.v_axis))
    }
}

/// The tangent frame of a face: `u` along a world axis projected into the plane, chosen by the
/// normal's dominant axis (X → Y, Y → Z, Z → X), so axis-aligned faces get world-aligned luxels.
fn tangent_frame(n: DVec3) -> (DVec3, DVec3) {
    let a = n.abs();
    let reference = if a.x >= a.y && a.x >= a.z {
        DVec3::Y
    } else if a.y >= a.z {
        DVec3::Z
    } else {
        DVec3::X
    };
    let u = (reference - n * n.dot(reference)).normalize();
    (u, n.cross(u))
}

/// A convex polygon in plane coordinates, with its edges' inward normals, to clamp points into.
struct Polygon2 {
    /// `(point on the edge, inward unit normal)` per non-degenerate edge.
    edges: Vec<(DVec2, DVec2)>,
    /// How far inside points are kept.
    inset: f64,
}

impl Polygon2 {
    fn new(points: &[DVec2], inset: f64) -> Self {
        let n = points.len();
        let area2: f64 = (0..n).map(|k| points[k].perp_dot(points[(k + 1) % n])).sum();
        let sign = if area2 >= 0.0 { 1.0 } else { -1.0 };
        let mut edges = Vec::with_capacity(n);
        for k in 0..n {
            let (a, b) = (points[k], points[(k + 1) % n]);
            let d = b - a;
            let len = d.length();
            if len > 1e-12 {
                // For a counter-clockwise polygon the inside is to the left of each edge.
                edges.push((a, d.perp() / len * sign));
            }
        }
        // The thinnest width of the polygon across any edge bounds the inset.
        let thickness = edges
            .iter()
            .map(|&(a, nrm)| points.iter().map(|&p| (p - a).dot(nrm)).fold(0.0, f64::max))
            .fold(f64::INFINITY, f64::min);
        let inset = if thickness.is_finite() { inset.min(0.25 * thickness).max(0.0) } else { 0.0 };
        Self { edges, inset }
    }

    /// `p` moved inside every edge by at least the inset (alternating projections, a fixed
    /// number of passes: exact for rectangles, within a hair of it for triangles).
    fn clamp(&self, mut p: DVec2) -> DVec2 {
        for _ in 0..4 {
            for &(a, nrm) in &self.edges {
                let d = (p - a).dot(nrm);
                if d < self.inset {
                    p += nrm * (self.inset - d);
                }
            }
        }
        p
    }
}

/// The luxel count along one axis for an extent of `extent` map units: one luxel when the face is
/// at most half a luxel wide, else `ceil(extent · density) + 1` centres (so the spacing is at
/// most `1 / density`), capped at `max_edge`.
fn luxel_count(extent: f64, density: f64, max_edge: u32) -> u32 {
    let n = extent * density;
    if n.is_nan() || n <= 0.5 {
        1
    } else {
        // The small tolerance keeps an extent of exactly k/density at k + 1 luxels despite rounding.
        let c = (n - 1e-9).ceil() + 1.0;
        c.min(f64::from(max_edge)) as u32
    }
}

/// Gives each face a luxel patch (same order as `faces`).
///
/// The patch lies in the face's plane: rows along a world axis projected into the plane (see
/// [`Patch`]), sized from the face's extent × [`LightSettings::luxels_per_unit`] (at least 1×1, at
/// most the page cap `2^max_page_log2` on a side: a bigger face gets coarser luxels), with the
/// half-luxel padding described on [`Patch`]. Each luxel's sample point is its centre clamped
/// into the polygon, [`LightSettings::edge_inset`] inside its edges (or a quarter of the
/// polygon's thinnest width, if smaller).
pub fn plan_patches(faces: &[SurfaceFace], settings: &LightSettings) -> Result<Vec<Patch>, LightError> {
    let max_edge = settings.max_page_edge()?;
    let density = settings.luxels_per_unit;
    faces
        .iter()
        .enumerate()
        .map(|(index, face)| plan_one(index, face, density, max_edge, settings.edge_inset))
        .collect()
}

fn plan_one(index: usize, face: &SurfaceFace, density: f64, max_edge: u32, inset: f64) -> Result<Patch, LightError> {
    let bad = |reason| LightError::BadFace { id: face.id, reason };
    if face.corners.len() < 3 {
        return Err(bad("fewer than 3 corners"));
    }
    if !face.corners.iter().all(|c| c.is_finite()) {
        return Err(bad("a corner is not finite"));
    }
    let normal = face.normal.try_normalize().ok_or_else(|| bad("the normal is zero or not finite"))?;
    let (u_axis, v_axis) = tangent_frame(normal);
    let plane = face.corners.iter().map(|c| c.dot(normal)).sum::<f64>() / face.corners.len() as f64;
    let pts: Vec<DVec2> = face.corners.iter().map(|c| DVec2::new(c.dot(u_axis), c.dot(v_axis))).collect();
    let lo = pts.iter().copied().fold(DVec2::INFINITY, DVec2::min);
    let hi = pts.iter().copied().fold(DVec2::NEG_INFINITY, DVec2::max);
    let ext = hi - lo;
    let width = luxel_count(ext.x, density, max_edge);
    let height = luxel_count(ext.y, density, max_edge);
    let axis = |count: u32, lo: f64, ext: f64| {
        if count > 1 { (lo, ext / f64::from(count - 1)) } else { (lo + 0.5 * ext, 0.0) }
    };
    let (u_min, u_step) = axis(width, lo.x, ext.x);
    let (v_min, v_step) = axis(height, lo.y, ext.y);
    let poly = Polygon2::new(&pts, inset);
    let mut luxels = Vec::with_capacity((width * height) as usize);
    for j in 0..height {
        for i in 0..width {
            let p = poly.clamp(DVec2::new(u_min + f64::from(i) * u_step, v_min + f64::from(j) * v_step));
            luxels.push(u_axis * p.x + v_axis * p.y + normal * plane);
        }
    }
    Ok(Patch {
        group: face.group,
        face: face.id,
        index,
        width,
        height,
        normal,
        u_axis,
        v_axis,
        u_min,
        v_min,
        u_step,
        v_step,
        luxels,
    })
}
