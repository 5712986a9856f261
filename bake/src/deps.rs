//! Dependency spread: which chunk bakes an edit invalidates (issue 4, "Scheduler"; docs/DESIGN.md
//! "Dependency spread").
//!
//! A chunk's bake reads: its own cubes; the cubes of its six face neighbours (face culling,
//! docs/spec/PMF-NOTES.md G4); every light that reaches it and every cube inside such a light's reach (shadow
//! rays); regions and entities overlapping it; the library (material flags decide culling, names
//! are written) and the level settings (positions are relative to the center chunk). So a change
//! dirties:
//! - a changed chunk, its 26 neighbours (face neighbours suffice for culling; the corner and
//!   edge neighbours are cheap insurance for corner-pushed cubes), and every chunk reached by a
//!   light — before or after the edit — whose reach touches the changed chunk;
//! - a changed light: every chunk its old or new reach touches;
//! - a changed region or entity: the chunks its old or new bounds / position touch;
//! - (visibility reads its own cubes and, beyond them, only the far sets of the level's chunk
//!   summaries: the rebuild engine writes the far lists again where those changed, without a
//!   re-bake, [`crate::rebuild`]);
//! - a changed material, physics or sound material: a bake reads such a record only through
//!   the cubes painted with it, so the change spreads exactly as if every cube using it had
//!   changed ([`library_users`]); a record no cube uses dirties nothing;
//! - an environment, the path attribute sets or level settings (sun, sky and bounce included):
//!   every chunk of the level;
//! - with bounced light, a changed static light also dirties the chunks within the bounce reach
//!   of its reach ([`bounce_reach`]): their rays meet surfaces it lights;
//!
//! Rays of sun, sky and bounce that go farther than the neighbours are not in this static
//! spread: each bake lists the chunks its rays entered ([`crate::compile::ChunkBake::reads`]) and
//! the rebuild engine re-bakes the readers of a changed chunk ([`crate::rebuild`]). Rays stop at
//! the top of the level's highest occupied chunk layer (nothing can be hit above it), so a bake
//! lists no chunk above the top it was made with; a change above that top (content rising above
//! the highest layer, or changing where it had risen since) is matched against the bake by
//! geometry: [`sky_reaches`] and [`lights_through`], which the engine applies to each bake with
//! the top it was made with ([`crate::compile::ChunkBake::top_layer`]).

use std::collections::BTreeSet;

use glam::{DVec3, IVec3};

use pmfedit_core::edit::{ChangeSet, LibRef, ObjRef};
use pmfedit_core::map::coords::ChunkCoord;
use pmfedit_core::map::{Level, Map};

use crate::compile::{CompileSettings, Grid, MAX_GRID_CHUNKS};
use crate::light::{BakedMode, SceneLight};

/// A chunk of a level: (level index, chunk).
pub type ChunkKey = (usize, ChunkCoord);

/// The chunks (inside the PMF grid) that a world box touches.
fn chunks_in_box(level: &Level, lo: DVec3, hi: DVec3) -> impl Iterator<Item = ChunkCoord> {
    let (a, b) = chunk_range(level, lo, hi);
    (a.y..=b.y).flat_map(move |y| (a.x..=b.x).flat_map(move |x| (a.z..=b.z).map(move |z| ChunkCoord::new(x, y, z))))
}

/// The first and last chunk coordinates (inclusive) of [`chunks_in_box`].
fn chunk_range(level: &Level, lo: DVec3, hi: DVec3) -> (IVec3, IVec3) {
    let frame = level.frame();
    let a = frame.chunk_from_world(lo).as_ivec3().max(IVec3::ZERO);
    let b = frame.chunk_from_world(hi).as_ivec3().min(IVec3::new(4095, 255, 4095));
    (a, b)
}

/// The chunks a baked light reaches.
pub fn light_chunks(level: &Level, light: &SceneLight) -> Vec<ChunkCoord> {
    chunks_near_light(level, light, 0.0)
}

/// The chunks within `extra` map units of a baked light's reach.
pub(crate) fn chunks_near_light(level: &Level, light: &SceneLight, extra: f64) -> Vec<ChunkCoord> {
    let p = light.light.position.as_dvec3();
    let reach = light.reach + extra;
    let r = DVec3::splat(reach);
    chunks_in_box(level, p - r, p + r).filter(|&c| within_reach(level, p, reach, c)).collect()
}

/// Whether chunk `c` is one of [`light_chunks`]`(level, light)`, without listing them.
fn light_reaches(level: &Level, light: &SceneLight, c: ChunkCoord) -> bool {
    let p = light.light.position.as_dvec3();
    let r = DVec3::splat(light.reach);
    let (a, b) = chunk_range(level, p - r, p + r);
    let v = c.as_ivec3();
    v.cmpge(a).all() && v.cmple(b).all() && within_reach(level, p, light.reach, c)
}

/// Whether chunk `c`'s box comes closer than `reach` to `p`.
fn within_reach(level: &Level, p: DVec3, reach: f64, c: ChunkCoord) -> bool {
    let (lo, hi) = level.frame().chunk_world_box(c);
    p.clamp(lo, hi).distance_squared(p) < reach * reach
}

/// How far beyond a static light's reach its light is carried by bounces, map units: per bounce
/// the gather distance, plus the diagonal of a bounce cell (the point a bounce is computed at)
/// and a margin for the rays' start off the surface. 0 when the level or `settings` bake no
/// bounce.
pub fn bounce_reach(level: &Level, settings: &CompileSettings) -> f64 {
    let g = &settings.light.gather;
    if !g.bounce || level.lighting.bounces == 0 {
        return 0.0;
    }
    f64::from(level.lighting.bounces) * (g.distance + 3f64.sqrt() * g.bounce_cell + 1.0)
}

/// Whether a bake of chunk `x` whose rays stopped at a top below chunk `n` (the bake was made
/// while the level's highest occupied chunk layer was below `n`'s layer) may have a ray that
/// cubes in `n` would stop. Such a ray went past the top unrecorded, so the answer comes from
/// where rays can go, conservatively:
/// - every ray of the bake starts within [`bounce_reach`] of `x` (bounce cells), plus a bounce
///   cell's diagonal and a margin;
/// - above the top only two kinds go on: gather rays (sky, bounce, air cells) for at most the
///   gather distance, then straight up (the roof check); and sun rays, at least `elevation −
///   disc` above the horizon, so they rise at least `tan` of that per unit across;
/// - rays to a light are not bounded here ([`lights_through`]).
///
/// So `x` qualifies when the horizontal gap between the two chunks is within the start margin
/// plus the larger of the gather distance and the sun's run to the top of `n`.
pub fn sky_reaches(level: &Level, settings: &CompileSettings, x: ChunkCoord, n: ChunkCoord) -> bool {
    let g = &settings.light.gather;
    let start = bounce_reach(level, settings) + 3f64.sqrt() * g.bounce_cell + 2.0;
    let frame = level.frame();
    let (xlo, xhi) = frame.chunk_world_box(x);
    let (nlo, nhi) = frame.chunk_world_box(n);
    let gap_x = (nlo.x - xhi.x).max(xlo.x - nhi.x).max(0.0);
    let gap_z = (nlo.z - xhi.z).max(xlo.z - nhi.z).max(0.0);
    let gap = gap_x.hypot(gap_z);
    let sun = &level.lighting.sun;
    let sun_run = if sun.intensity > 0.0 && sun.elevation > 0.0 {
        let lowest = f64::from(sun.elevation - sun.angle).to_radians();
        let rise = (nhi.y - (xlo.y - start)).max(0.0);
        if lowest <= 0.0 { f64::INFINITY } else { rise / lowest.tan() }
    } else {
        0.0
    };
    gap <= start + g.distance.max(0.0).max(sun_run) + 1.0
}

/// The chunks whose bakes may have cast a ray to a light through chunk `n` above their top
/// (light rays stop at the top too): every chunk within the bounce reach of the reach of a
/// light whose reach touches `n` (a segment from a lit point to the light stays within the
/// light's reach; a bounce carries it [`bounce_reach`] farther).
pub fn lights_through(level: &Level, settings: &CompileSettings, n: ChunkCoord) -> BTreeSet<ChunkCoord> {
    let bounce = bounce_reach(level, settings);
    let mut out = BTreeSet::new();
    for light in scene_lights(level) {
        if light_reaches(level, &light, n) {
            out.extend(chunks_near_light(level, &light, bounce));
        }
    }
    out
}

pub(crate) fn scene_lights(level: &Level) -> Vec<SceneLight> {
    level.objects.lights().iter().filter_map(|(id, l)| SceneLight::new(id, l, 1)).collect()
}

/// What one object touches, in `level`; `bounce`: [`bounce_reach`].
fn object_chunks(level: &Level, obj: ObjRef, bounce: f64, out: &mut BTreeSet<ChunkCoord>) {
    let objects = &level.objects;
    match obj {
        ObjRef::Light(id) => {
            if let Some(l) = objects.lights().get(id).and_then(|l| SceneLight::new(id, l, 1)) {
                // Dynamic and fast lights do not bounce (they switch at run time).
                let extra = if l.mode == BakedMode::Static { bounce } else { 0.0 };
                out.extend(chunks_near_light(level, &l, extra));
            }
        }
        ObjRef::Entity(id) => {
            if let Some(p) = objects.entities().get(id).and_then(|e| e.position()) {
                let frame = level.frame();
                out.insert(frame.chunk_from_world(p.as_dvec3()));
            }
            // Entities without a position go to the center chunk when scoped to a chunk.
            out.insert(level.frame().center_chunk);
        }
        ObjRef::Region(id) => {
            if let Some(r) = objects.regions().get(id) {
                let (lo, hi) = r.bounds();
                out.extend(chunks_in_box(level, lo.as_dvec3(), hi.as_dvec3()));
            }
        }
        ObjRef::LoadRegion(id) => {
            if let Some(r) = objects.load_regions().get(id) {
                out.extend(chunks_in_box(level, r.min.as_dvec3(), r.max.as_dvec3()));
            }
        }
    }
}

/// Whether a library change can reach a bake other than through the cubes painted with a
/// record: environments (regions name them, sky and weather settings come from them).
fn library_change_is_global(changes: &ChangeSet) -> bool {
    changes.library.iter().any(|r| matches!(r, LibRef::Environment(_)))
}

/// The stored chunks, in `before` or `after`, with a cube that uses one of the changed
/// materials, physics or sound materials of `changes`. A bake reads these records only through
/// such cubes, so the spread and the rebuild engine treat these chunks as changed.
pub fn library_users(before: &Map, after: &Map, changes: &ChangeSet) -> BTreeSet<ChunkKey> {
    let records: Vec<LibRef> =
        changes.library.iter().copied().filter(|r| !matches!(r, LibRef::Environment(_))).collect();
    let mut out = BTreeSet::new();
    if records.is_empty() {
        return out;
    }
    let uses = |cube: &pmfedit_core::map::octree::Cube| {
        records.iter().any(|r| match *r {
            LibRef::Material(m) => cube.uses_material(m),
            LibRef::Physics(p) => cube.uses_physics(p),
            LibRef::Sound(s) => cube.uses_sound(s),
            LibRef::Environment(_) => false,
        })
    };
    for map in [before, after] {
        for (li, level) in map.levels.iter().enumerate() {
            for (c, chunk) in level.chunks() {
                if !out.contains(&(li, *c)) && chunk.octree().any_leaf(uses) {
                    out.insert((li, *c));
                }
            }
        }
    }
    out
}

/// Every chunk a full bake of `level` covers, plus every stored chunk.
pub fn all_chunks(level: &Level) -> BTreeSet<ChunkCoord> {
    let mut out: BTreeSet<ChunkCoord> = crate::compile::level_chunks(level).into_iter().collect();
    out.extend(level.chunks().map(|(c, _)| *c));
    out
}

/// What [`all_chunks`] holds besides the stored chunks: the level's dense grid when it is small
/// enough to list ([`crate::compile::level_chunks`]), else the center chunk alone. With it,
/// [`in_all_chunks`] answers for one chunk without listing the level's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridPart {
    /// Every chunk of this grid.
    Grid(Grid),
    /// Only this chunk: the grid is over [`MAX_GRID_CHUNKS`].
    Center(ChunkCoord),
}

impl GridPart {
    /// The grid part of `level` (a walk of its stored chunks, as [`Grid::of`]).
    pub fn of(level: &Level) -> Self {
        let grid = Grid::of(level);
        if grid.volume() <= MAX_GRID_CHUNKS { Self::Grid(grid) } else { Self::Center(level.frame().center_chunk) }
    }

    /// Whether `c` is in it.
    pub fn contains(&self, c: ChunkCoord) -> bool {
        match self {
            Self::Grid(g) => g.contains(c),
            Self::Center(center) => *center == c,
        }
    }
}

/// Whether `c` is one of [`all_chunks`]`(level)`, `part` being [`GridPart::of`]`(level)`.
pub fn in_all_chunks(level: &Level, part: &GridPart, c: ChunkCoord) -> bool {
    part.contains(c) || level.chunk(c).is_some()
}

/// The chunks stored in exactly one of `a` and `b`, ascending: both levels' stored chunks walked
/// side by side, nothing allocated where they agree.
pub fn stored_difference<'a>(a: &'a Level, b: &'a Level) -> impl Iterator<Item = ChunkCoord> + 'a {
    let (mut x, mut y) = (a.chunks().map(|(c, _)| *c).peekable(), b.chunks().map(|(c, _)| *c).peekable());
    std::iter::from_fn(move || {
        loop {
            match (x.peek(), y.peek()) {
                (Some(p), Some(q)) if p == q => {
                    x.next();
                    y.next();
                }
                (Some(p), Some(q)) => return if p < q { x.next() } else { y.next() },
                (Some(_), None) => return x.next(),
                (None, _) => return y.next(),
            }
        }
    })
}

/// The chunks to re-bake after `changes` turned `before` into `after`, for bakes made with
/// `settings`. This is the rebuild engine's default spread ([`crate::rebuild::Rebuild`]).
pub fn dirty_chunks(before: &Map, after: &Map, changes: &ChangeSet, settings: &CompileSettings) -> BTreeSet<ChunkKey> {
    let mut out = BTreeSet::new();
    // Path attribute sets name what painted ids export as, in any chunk: everything.
    if changes.level_list || changes.path_sets || library_change_is_global(changes) {
        for (li, level) in after.levels.iter().enumerate() {
            out.extend(all_chunks(level).into_iter().map(|c| (li, c)));
        }
        return out;
    }
    let users = library_users(before, after, changes);
    let no_changes = pmfedit_core::edit::LevelChanges::default();
    let levels: BTreeSet<usize> = changes.levels.keys().copied().chain(users.iter().map(|k| k.0)).collect();
    for li in levels {
        let lc = changes.levels.get(&li).unwrap_or(&no_changes);
        let (Some(old), Some(new)) = (before.levels.get(li), after.levels.get(li)) else { continue };
        if lc.settings || old.frame() != new.frame() {
            out.extend(all_chunks(new).into_iter().map(|c| (li, c)));
            out.extend(all_chunks(old).into_iter().map(|c| (li, c)));
            continue;
        }
        let mut set = BTreeSet::new();
        // Chunks whose cubes changed, and chunks whose cubes use a changed library record.
        let mut changed: Vec<ChunkCoord> = lc.chunks.iter().map(|(c, _)| c).collect();
        changed.extend(users.iter().filter(|k| k.0 == li).map(|k| k.1));
        changed.sort_unstable();
        changed.dedup();
        if !changed.is_empty() {
            let reach = 1;
            for &c in &changed {
                let v = c.as_ivec3();
                for dy in -reach..=reach {
                    for dx in -reach..=reach {
                        for dz in -reach..=reach {
                            let n = ChunkCoord::from_ivec3(v + IVec3::new(dx, dy, dz));
                            if n.is_in_grid() {
                                set.insert(n);
                            }
                        }
                    }
                }
            }
            for level in [old, new] {
                for light in scene_lights(level) {
                    // Listed only for a light that reaches a changed chunk.
                    if changed.iter().any(|&c| light_reaches(level, &light, c)) {
                        set.extend(light_chunks(level, &light));
                    }
                }
            }
        }
        for &obj in &lc.objects {
            object_chunks(old, obj, bounce_reach(old, settings), &mut set);
            object_chunks(new, obj, bounce_reach(new, settings), &mut set);
        }
        out.extend(set.into_iter().map(|c| (li, c)));
    }
    out
}

/// The chunks an edit's draft stage bakes first ([`crate::rebuild::Plan::Interactive`]): the
/// chunks whose cubes changed, plus each stored face neighbour whose shared face a changed box
/// touches (its mesh shows or culls the face against the edited cubes; an empty chunk draws
/// nothing). The other dirty chunks keep
/// drawing their older bakes until their exact ones arrive: the draft exists to show the edit at
/// once, and these are the chunks that draw it.
pub fn draft_chunks(after: &Map, changes: &ChangeSet) -> BTreeSet<ChunkKey> {
    let mut out = BTreeSet::new();
    for (&li, lc) in &changes.levels {
        let Some(level) = after.levels.get(li) else { continue };
        let edge = level.frame().chunk_edge();
        for (c, b) in lc.chunks.iter() {
            out.insert((li, c));
            if b.is_empty() {
                continue;
            }
            for a in 0..3 {
                let mut step = IVec3::ZERO;
                step[a] = 1;
                let sides = [(b.min[a] <= 0, -step), (b.max[a] >= edge, step)];
                for n in sides.into_iter().filter(|s| s.0).map(|s| ChunkCoord::from_ivec3(c.as_ivec3() + s.1)) {
                    if level.chunk(n).is_some() {
                        out.insert((li, n));
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmfedit_core::map::coords::LatticeBox;
    use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
    use pmfedit_core::map::library::Light;
    use pmfedit_core::map::octree::Cube;

    /// A small xorshift, so that the cases are the same on every run.
    fn next(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// A level of 4-unit chunks with a cube in each of `n` pseudo-random chunks of a 6³ box.
    fn scattered(seed: &mut u64, n: usize) -> Level {
        let mut level = Level::new("main", 2).unwrap();
        let f = level.frame();
        let o = f.chunk_min_lattice(f.center_chunk);
        let cube = Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0));
        for _ in 0..n {
            let v = next(seed);
            let c = IVec3::new((v % 6) as i32, (v / 6 % 6) as i32, (v / 36 % 6) as i32) * 32 + o;
            level.fill_box(LatticeBox::new(c, c + IVec3::splat(8)), cube).unwrap();
        }
        level
    }

    #[test]
    fn stored_difference_is_the_symmetric_difference_of_the_stored_chunks() {
        let mut seed = 0x9E37_79B9_7F4A_7C15;
        for n in 0..40 {
            let (a, b) = (scattered(&mut seed, n % 9), scattered(&mut seed, n % 7));
            let keys = |l: &Level| l.chunks().map(|(c, _)| *c).collect::<BTreeSet<_>>();
            let want: Vec<ChunkCoord> = keys(&a).symmetric_difference(&keys(&b)).copied().collect();
            assert_eq!(stored_difference(&a, &b).collect::<Vec<_>>(), want, "case {n}");
            assert_eq!(stored_difference(&a, &a).count(), 0);
        }
    }

    #[test]
    fn a_light_reaches_exactly_the_chunks_it_lists() {
        let mut seed = 0x2545_F491_4F6C_DD1D;
        let mut level = scattered(&mut seed, 5);
        let f = level.frame();
        let o = f.world_from_lattice(f.chunk_min_lattice(f.center_chunk));
        for _ in 0..12 {
            let v = next(&mut seed);
            // Anywhere in and around the box, near the coordinate space's low edge too.
            let p = o + DVec3::new((v % 40) as f64 - 12.0, (v / 40 % 40) as f64 - 12.0, (v / 1600 % 40) as f64 - 12.0);
            let mut lamp = Light::point("lamp", p.as_vec3());
            lamp.range = 1.0 + (v / 64_000 % 12) as f32;
            level.objects.add(lamp).unwrap();
        }
        let center = level.frame().center_chunk.as_ivec3();
        for light in scene_lights(&level) {
            let listed: BTreeSet<ChunkCoord> = light_chunks(&level, &light).into_iter().collect();
            assert!(!listed.is_empty());
            for x in -6..12 {
                for y in -6..12 {
                    for z in -6..12 {
                        let c = ChunkCoord::from_ivec3(center + IVec3::new(x, y, z));
                        assert_eq!(light_reaches(&level, &light, c), listed.contains(&c), "{c:?}");
                    }
                }
            }
        }
    }
}
