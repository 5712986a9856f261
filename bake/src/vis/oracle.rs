//! A brute-force ray oracle for visibility, and the culling figures of a compiled level: what the
//! tests check the bake against and what `pmfc bench` prints.
//!
//! The oracle follows segments through the level's octrees ([`Level::ray_cast`]), passing
//! through geometry that does not occlude ([`OpaqueMaterials::occludes`]). Jittered points keep
//! its segments generic (no grazing), as the visibility definition wants. It only ever finds
//! cubes that *are* visible (a lower bound of the truth): a cube the bake omits and the oracle
//! reaches is a bug; a cube the bake lists and the oracle never reaches is over-claimed (or the
//! oracle was unlucky).

use std::collections::BTreeMap;

use glam::DVec3;
use pmfedit_core::format::pmf;
use pmfedit_core::map::Level;
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr, Face, LatticeBox};
use pmfedit_core::sample::noise::Rng;

use super::OpaqueMaterials;

/// The solid leaves (chunk, level lattice address) a segment from `p` towards `q` enters before
/// it enters an occluder (that one included) or reaches `q`, in order.
pub fn leaves_along(level: &Level, opaque: &OpaqueMaterials, p: DVec3, q: DVec3) -> Vec<(ChunkCoord, CubeAddr)> {
    let mut out = Vec::new();
    let d = q - p;
    let dist = d.length();
    if dist <= 0.0 {
        return out;
    }
    let dir = d / dist;
    let mut travelled = 0.0;
    while travelled < dist {
        let origin = p + dir * travelled;
        let Some(h) = level.ray_cast(origin, dir, dist - travelled) else { break };
        if out.last() != Some(&(h.chunk, h.level_addr)) {
            out.push((h.chunk, h.level_addr));
        }
        if opaque.occludes(&h.cube) {
            break;
        }
        // Through it: go on from where the segment leaves it.
        let (bmin, bmax) = (h.level_addr.min.as_dvec3(), h.level_addr.max().as_dvec3());
        let mut t_exit = f64::INFINITY;
        for a in 0..3 {
            if dir[a] > 0.0 {
                t_exit = t_exit.min((bmax[a] - origin[a]) / dir[a]);
            } else if dir[a] < 0.0 {
                t_exit = t_exit.min((bmin[a] - origin[a]) / dir[a]);
            }
        }
        travelled += t_exit.max(0.0) + 1e-9;
    }
    out
}

/// Whether the segment from `p` to `q` reaches the solid leaf `target` (level lattice) before any
/// other occluder.
pub fn ray_reaches(level: &Level, opaque: &OpaqueMaterials, p: DVec3, q: DVec3, target: CubeAddr) -> bool {
    let hits = leaves_along(level, opaque, p, q);
    match hits.last() {
        None => true,
        Some(&(_, last)) => hits.iter().any(|&(_, a)| a == target) || !opaque_hit(level, opaque, last),
    }
}

fn opaque_hit(level: &Level, opaque: &OpaqueMaterials, addr: CubeAddr) -> bool {
    level.get(addr.min).is_ok_and(|(c, _)| opaque.occludes(&c))
}

/// A point of the box `b` away from its boundary (jittered).
fn point_in(b: &LatticeBox, rng: &mut Rng) -> DVec3 {
    let j = |r: &mut Rng| 0.01 + 0.98 * r.unit();
    b.min.as_dvec3() + (b.max - b.min).as_dvec3() * DVec3::new(j(rng), j(rng), j(rng))
}

/// Whether any of `rays` segments from jittered points of `cell` to jittered points of the faces
/// of `target` (level lattice) reaches it.
pub fn sees(
    level: &Level,
    opaque: &OpaqueMaterials,
    cell: &LatticeBox,
    target: CubeAddr,
    rays: usize,
    rng: &mut Rng,
) -> bool {
    let tb = target.lattice_box();
    let (tmin, tsize) = (tb.min.as_dvec3(), f64::from(target.edge()));
    // Only faces whose outside holds part of the cell can be reached from it.
    let faces: Vec<Face> = Face::ALL
        .into_iter()
        .filter(|f| {
            let a = f.axis();
            if f.is_positive() { f64::from(cell.max[a]) > tmin[a] + tsize } else { f64::from(cell.min[a]) < tmin[a] }
        })
        .collect();
    if faces.is_empty() {
        return false;
    }
    for i in 0..rays {
        let p = point_in(cell, rng);
        let f = faces[i % faces.len()];
        let mut q = point_in(&tb, rng);
        q[f.axis()] = tmin[f.axis()] + if f.is_positive() { tsize } else { 0.0 };
        if ray_reaches(level, opaque, p, q, target) {
            return true;
        }
    }
    false
}

/// The solid leaves reached by `rays` segments of length `reach` from jittered points of `cell` in
/// uniformly random directions.
pub fn reached(
    level: &Level,
    opaque: &OpaqueMaterials,
    cell: &LatticeBox,
    rays: usize,
    reach: f64,
    rng: &mut Rng,
) -> Vec<(ChunkCoord, CubeAddr)> {
    let mut out = Vec::new();
    for _ in 0..rays {
        let p = point_in(cell, rng);
        // Uniform on the sphere.
        let z = 2.0 * rng.unit() - 1.0;
        let t = std::f64::consts::TAU * rng.unit();
        let r = (1.0 - z * z).sqrt();
        let dir = DVec3::new(r * t.cos(), z, r * t.sin());
        out.extend(leaves_along(level, opaque, p, p + dir * reach));
    }
    out.sort_by_key(|&(c, a)| (c, a.min.to_array(), a.size_log2));
    out.dedup();
    out
}

/// Culling figures of a compiled level: (air cell, drawn geometry cube) pairs, as an engine culls
/// with the file's lists: an air cell without visibility data culls nothing. Only geometry cubes
/// with a face count: culling a cube that draws nothing saves nothing, and the file merges such
/// buried cubes ([`crate::file_merge`]), so counting them would make the figures depend on the
/// merge. Air is counted in the
/// compiler's air cells ([`crate::layout`], default settings): an empty cube larger than the air
/// cell, which the file holds where cells with the same data merged ([`crate::file_merge`]),
/// counts as the cells it stands for, so merging does not move the figures; an all-air chunk's
/// single root cube counts as one cell, as the layout makes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PairCounts {
    /// Air cells: empty leaf cubes (each carries visibility data or none), a merged cube
    /// counting as the cells it stands for.
    pub air: u64,
    /// Air cells carrying visibility data (counted as `air`).
    pub cells: u64,
    /// Geometry cubes of the level that draw a face.
    pub cubes: u64,
    /// Σ over air cells of the drawn geometry cubes their lists name (a chunk listed whole counts
    /// all of its drawn cubes; a cell without data counts every drawn cube of the level).
    pub listed: u64,
}

impl PairCounts {
    /// The share of pairs culled.
    pub fn culled(&self) -> f64 {
        let total = self.air as f64 * self.cubes as f64;
        if total == 0.0 { 0.0 } else { 1.0 - self.listed as f64 / total }
    }
}

/// The air cell edge of the layout under default settings, as a power of two in map units, for
/// chunks of edge `2^chunk_size_exp` map units.
fn air_cell_log2(chunk_size_exp: u8) -> u8 {
    let lattice = crate::layout::BakeSettings::default()
        .air_cell_lattice_log2(chunk_size_exp.saturating_add(pmfedit_core::map::coords::LATTICE_PER_UNIT_LOG2));
    lattice.saturating_sub(pmfedit_core::map::coords::LATTICE_PER_UNIT_LOG2)
}

/// Each cube's edge as a power of two in map units (a chunk of edge `2^chunk_size_exp`), found
/// from the root; `None` for a cube no parent reaches (or reached twice: a malformed array).
fn edges_log2(cubes: &[pmf::Cube], chunk_size_exp: u8) -> Vec<Option<u8>> {
    let mut out = vec![None; cubes.len()];
    let mut stack = vec![(0u32, chunk_size_exp)];
    while let Some((i, e)) = stack.pop() {
        let Some(slot) = out.get_mut(i as usize) else { continue };
        if slot.is_some() {
            continue;
        }
        *slot = Some(e);
        if let pmf::CubeKind::Parent(p) = &cubes[i as usize].kind {
            stack.extend(p.present().map(|k| (k, e.saturating_sub(1))));
        }
    }
    out
}

/// Whether cube `i` of `chunk` is geometry that draws a face.
fn draws(chunk: &pmf::Chunk, i: u32) -> bool {
    match chunk.client.cubes.get(i as usize).map(|c| &c.geometry) {
        Some(pmf::ClientGeometry::Geometry(g)) => g.faces != 0,
        Some(pmf::ClientGeometry::ExtGeometry(g)) => g.triangle_counts.iter().any(|&t| t > 0),
        _ => false,
    }
}

/// The pairs listed by a compiled level's visibility data (shared lists are counted once per
/// list, so this is quick even when lists are long). A chunk record naming the cell's own chunk
/// (V1 *Budget*: the own chunk whole) counts with its "other visible cubes" once.
pub fn pair_counts(level: &pmf::Level) -> PairCounts {
    let geometry: Vec<u64> =
        level.chunks.iter().map(|c| (0..c.common.cubes.len() as u32).filter(|&i| draws(c, i)).count() as u64).collect();
    let mut out = PairCounts { cubes: geometry.iter().sum(), ..PairCounts::default() };
    let count = |vc: &pmf::VisibleChunk| {
        let Some(i) = level.grid.linear(vc.chunk) else { return 0 };
        if vc.cubes.is_empty() {
            geometry[i]
        } else {
            vc.cubes.iter().filter(|&&k| draws(&level.chunks[i], k)).count() as u64
        }
    };
    // Per shared chunk list (by address) and own chunk: the cubes it names in other chunks, and
    // the cubes it names of the own chunk (unioned with the own list).
    let mut sums: BTreeMap<(usize, usize), (u64, Vec<&pmf::VisibleChunk>)> = BTreeMap::new();
    let air_log2 = air_cell_log2(level.chunk_size_exp);
    for (ci, chunk) in level.chunks.iter().enumerate() {
        // Drawn cubes per own list (by address; a list belongs to one chunk).
        let mut drawn_of: std::collections::HashMap<usize, u64> = std::collections::HashMap::new();
        let own = Some(level.grid.index_of(ci));
        let edges = edges_log2(&chunk.common.cubes, level.chunk_size_exp);
        let split = matches!(chunk.common.cubes.first().map(|c| &c.kind), Some(pmf::CubeKind::Parent(_)));
        for (cube, edge) in chunk.common.cubes.iter().zip(&edges) {
            if cube.kind != pmf::CubeKind::Empty {
                continue;
            }
            // The air cells this cube stands for (1 for a cell, 8^k for merged cells).
            let w = match edge {
                Some(e) if split && *e > air_log2 => 1u64 << (3 * u32::from(e - air_log2)).min(60),
                _ => 1,
            };
            out.air += w;
            let Some(v) = &cube.visibility else {
                out.listed += w * out.cubes;
                continue;
            };
            out.cells += w;
            let (far, mine) = sums.entry((v.chunks.as_ptr() as usize, ci)).or_insert_with(|| {
                let (mine, far): (Vec<_>, Vec<_>) = v.chunks.iter().partition(|vc| Some(vc.chunk) == own);
                (far.into_iter().map(count).sum(), mine)
            });
            out.listed += w * *far;
            out.listed += w * if mine.iter().any(|vc| vc.cubes.is_empty()) {
                geometry[ci]
            } else if mine.is_empty() {
                // Own lists are shared by many cells too: counted once per list.
                *drawn_of
                    .entry(v.cubes.as_ptr() as usize)
                    .or_insert_with(|| v.cubes.iter().filter(|&&k| draws(chunk, k)).count() as u64)
            } else {
                let set: std::collections::BTreeSet<u32> = v
                    .cubes
                    .iter()
                    .chain(mine.iter().flat_map(|vc| &vc.cubes))
                    .copied()
                    .filter(|&k| draws(chunk, k))
                    .collect();
                set.len() as u64
            };
        }
    }
    out
}
