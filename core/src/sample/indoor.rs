//! [`indoor`]: a multi-storey building of rooms, corridors, doors, windows and stairs filling
//! 16 × 2 × 16 chunks, for visibility benchmarks (most of it is hidden from most places) and
//! indoor lighting.

use glam::DVec3;

use super::noise::Rng;
use super::palette::Palette;
use super::site::Site;
use crate::map::coords::{ChunkCoord, GRID_MAX_XZ, GRID_MAX_Y, LATTICE_PER_UNIT};
use crate::map::library::Light;
use crate::map::octree::Cube;
use crate::map::{Level, Map};

/// Chunks of the building along X, Y and Z (16-unit chunks, [`super::TERRAIN_CHUNK_SIZE_LOG2`]).
pub const INDOOR_CHUNKS: [i32; 3] = [16, 2, 16];

/// Floor pitch, map units: a 1-unit slab and 7 units of room height.
const STOREY: i32 = 8;
/// The floor plan repeats every `BLOCK` units along X and Z.
const BLOCK: i32 = 32;

/// A building filling [`INDOOR_CHUNKS`] (256 × 32 × 256 map units), the same for the same seed.
///
/// - **Storeys**: four, 8 units apart (a 1-unit wooden slab, 7 units of air; the top one is
///   6 units high under a 1-unit stone roof). Outer walls are 1 unit of stone.
/// - **Plan** (every storey, repeating every 32 units along X and Z): a 4-unit corridor along X
///   (`z ∈ [6, 10)` of each block) and one along Z (`x ∈ [6, 10)`), both crossing the whole
///   building; between them 1-unit stone walls around a small closet (`[1, 5)²`), two 4-unit
///   strip rooms, and a 21 × 21 main area split into one to three rooms. Every room has a doorway
///   (2 × 4 units) onto a corridor; some have a second one into the next room, some a glass
///   window onto the corridor, and outer rooms glass windows in the outer wall.
/// - **Stairs**: in one block of four, a flight of eight 1-unit steps climbs to the storey above
///   through a 4 × 8 hole in its slab; in a few others a 4 × 4 shaft opens two storeys.
/// - **Lights**: a static point light over every other corridor crossing of every storey.
///
/// Built with whole-box fills and clears (a few thousand), in well under a second.
pub fn indoor(seed: u64) -> Map {
    let [cx, cy, cz] = INDOOR_CHUNKS;
    let mut map = Map::new(format!("Indoor {cx}x{cy}x{cz} seed {seed}"));
    map.meta.description = "Procedural benchmark building (pmfedit_core::sample::indoor)".into();
    let p = Palette::add_to(&mut map.library);
    let level = &mut map.levels[0];
    level.name = "indoor".into();
    level.set_chunk_size_log2(super::TERRAIN_CHUNK_SIZE_LOG2).expect("valid, the level is empty");
    let c = Level::DEFAULT_CENTER;
    let first = ChunkCoord::new(
        (c.x - cx / 2).clamp(0, GRID_MAX_XZ - cx),
        (c.y - cy / 2).clamp(0, GRID_MAX_Y - cy),
        (c.z - cz / 2).clamp(0, GRID_MAX_XZ - cz),
    );
    let edge = 1 << super::TERRAIN_CHUNK_SIZE_LOG2;
    let mut b = Builder {
        site: Site { origin: level.frame().chunk_min_lattice(first) },
        level,
        p,
        rng: Rng::new(seed),
        w: cx * edge,
        h: cy * edge,
        d: cz * edge,
    };
    b.build();
    map
}

struct Builder<'a> {
    level: &'a mut Level,
    /// Unit `(0, 0, 0)` is the building's minimum corner.
    site: Site,
    p: Palette,
    rng: Rng,
    w: i32,
    h: i32,
    d: i32,
}

impl Builder<'_> {
    fn fill(&mut self, min: [i32; 3], max: [i32; 3], cube: Cube) {
        if (0..3).all(|a| min[a] < max[a]) {
            self.level.fill_box(self.site.units(min, max), cube).expect("inside the grid");
        }
    }

    /// Clears a box, kept inside the outer walls.
    fn clear(&mut self, min: [i32; 3], max: [i32; 3]) {
        let lo = [min[0].max(1), min[1].max(1), min[2].max(1)];
        let hi = [max[0].min(self.w - 1), max[1].min(self.h - 1), max[2].min(self.d - 1)];
        if (0..3).all(|a| lo[a] < hi[a]) {
            self.level.clear_box(self.site.units(lo, hi)).expect("inside the grid");
        }
    }

    /// A box along X (`along_x`) or Z: `[u0, u1)` along that axis, `[v0, v1)` across it.
    fn span(along_x: bool, u: [i32; 2], v: [i32; 2], y: [i32; 2]) -> ([i32; 3], [i32; 3]) {
        if along_x { ([u[0], y[0], v[0]], [u[1], y[1], v[1]]) } else { ([v[0], y[0], u[0]], [v[1], y[1], u[1]]) }
    }

    fn build(&mut self) {
        let (w, h, d) = (self.w, self.h, self.d);
        let p = self.p;
        self.fill([0, 0, 0], [w, h, d], p.stone);
        let storeys = (h + STOREY - 1) / STOREY;
        for s in 0..storeys {
            let y0 = s * STOREY;
            self.fill([1, y0, 1], [w - 1, y0 + 1, d - 1], p.wood);
            self.storey(y0 + 1, (y0 + STOREY).min(h - 1));
        }
        self.stairs(storeys);
        self.lights(storeys);
    }

    /// One storey's plan, air from `y0` to `y1`.
    fn storey(&mut self, y0: i32, y1: i32) {
        let (w, d) = (self.w, self.d);
        let door = [y0, y0 + 4];
        // Corridors across the building.
        for o in (0..d).step_by(BLOCK as usize) {
            self.clear([1, y0, o + 6], [w - 1, y1, o + 10]);
        }
        for o in (0..w).step_by(BLOCK as usize) {
            self.clear([o + 6, y0, 1], [o + 10, y1, d - 1]);
        }
        for ox in (0..w).step_by(BLOCK as usize) {
            for oz in (0..d).step_by(BLOCK as usize) {
                // The closet opens onto the X corridor.
                self.clear([ox + 1, y0, oz + 1], [ox + 5, y1, oz + 5]);
                self.clear([ox + 2, door[0], oz + 5], [ox + 4, door[1], oz + 6]);
                // Strip rooms: along X beside the X corridor, along Z beside the Z corridor.
                for along_x in [true, false] {
                    let o = if along_x { ox } else { oz };
                    let o2 = if along_x { oz } else { ox };
                    let (lo, hi) = Self::span(along_x, [o + 11, o + BLOCK], [o2 + 1, o2 + 5], [y0, y1]);
                    self.clear(lo, hi);
                    let at = o + 12 + self.rng.range(0, 16);
                    let (lo, hi) = Self::span(along_x, [at, at + 2], [o2 + 5, o2 + 6], door);
                    self.clear(lo, hi);
                }
                self.main_area(ox, oz, y0, y1);
            }
        }
        // Windows in the outer walls.
        for o in (0..w).step_by(BLOCK as usize) {
            for (z0, z1) in [(0, 1), (d - 1, d)] {
                self.fill([o + 14, y0 + 2, z0], [o + 18, y0 + 4, z1], self.p.glass);
            }
        }
        for o in (0..d).step_by(BLOCK as usize) {
            for (x0, x1) in [(0, 1), (w - 1, w)] {
                self.fill([x0, y0 + 2, o + 14], [x1, y0 + 4, o + 18], self.p.glass);
            }
        }
    }

    /// The 21 × 21 area of a block: one to three rooms side by side.
    fn main_area(&mut self, ox: i32, oz: i32, y0: i32, y1: i32) {
        let door = [y0, y0 + 4];
        let along_x = self.rng.range(0, 2) == 0;
        let (u0, v0) = if along_x { (ox + 11, oz + 11) } else { (oz + 11, ox + 11) };
        let rooms = self.rng.range(1, 4);
        // Split [u0, u0 + 21) into `rooms` rooms with 1-unit walls between them.
        let mut cuts = vec![u0];
        for r in 1..rooms {
            cuts.push(u0 + r * 21 / rooms + self.rng.range(-2, 3));
        }
        cuts.push(u0 + 21);
        for r in 0..cuts.len() - 1 {
            let (a, b) = (cuts[r] + if r == 0 { 0 } else { 1 }, cuts[r + 1]);
            let (lo, hi) = Self::span(along_x, [a, b], [v0, v0 + 21], [y0, y1]);
            self.clear(lo, hi);
            // A doorway onto the corridor on the near side (across the wall at v0 − 1).
            let at = a + self.rng.range(0, (b - a - 2).max(1));
            let (lo, hi) = Self::span(along_x, [at, at + 2], [v0 - 1, v0], door);
            self.clear(lo, hi);
            // Sometimes a glass window onto that corridor too.
            if self.rng.range(0, 3) == 0 && b - a >= 8 {
                let wa = if at - a > b - at { a + 1 } else { b - 4 };
                let (lo, hi) = Self::span(along_x, [wa, wa + 3], [v0 - 1, v0], [y0 + 2, y0 + 4]);
                self.fill(lo, hi, self.p.glass);
            }
            // Sometimes a doorway into the next room.
            if r + 1 < cuts.len() - 1 && self.rng.range(0, 2) == 0 {
                let at = v0 + 2 + self.rng.range(0, 16);
                let c = cuts[r + 1];
                let (lo, hi) = Self::span(along_x, [c, c + 1], [at, at + 2], door);
                self.clear(lo, hi);
            }
        }
    }

    /// Stairs up in one block of four (per storey, shifted so flights do not stack), and a few
    /// two-storey shafts.
    fn stairs(&mut self, storeys: i32) {
        let (w, d) = (self.w, self.d);
        let p = self.p;
        for s in 0..storeys - 1 {
            let y0 = s * STOREY + 1;
            let top = (s + 1) * STOREY;
            for ox in (0..w).step_by(2 * BLOCK as usize) {
                for oz in (0..d).step_by(2 * BLOCK as usize) {
                    let (bx, bz) = if s % 2 == 0 { (ox, oz) } else { (ox + BLOCK, oz + BLOCK) };
                    let (x0, z0) = (bx + 13, bz + 12);
                    // Clear the flight's room (it may cross a wall between rooms) and the hole.
                    self.clear([x0, y0, z0], [x0 + 4, top, z0 + 8]);
                    self.clear([x0, top, z0], [x0 + 4, top + 1, z0 + 8]);
                    for step in 0..STOREY {
                        self.fill([x0, y0, z0 + step], [x0 + 4, y0 + step + 1, z0 + step + 1], p.wood);
                    }
                }
            }
        }
        // Shafts through two storeys.
        for _ in 0..(w / BLOCK) {
            let (bx, bz) = (self.rng.range(0, w / BLOCK) * BLOCK, self.rng.range(0, d / BLOCK) * BLOCK);
            let s = self.rng.range(1, storeys);
            let (x0, z0) = (bx + 24, bz + 24);
            self.clear([x0, s * STOREY, z0], [x0 + 4, s * STOREY + 1, z0 + 4]);
        }
    }

    /// Level-space position of unit position `u` (fractional).
    fn world(&self, u: DVec3) -> glam::Vec3 {
        let lattice = self.site.origin.as_dvec3() + u * f64::from(LATTICE_PER_UNIT);
        self.level.frame().world_from_lattice_f(lattice).as_vec3()
    }

    fn lights(&mut self, storeys: i32) {
        let (w, d) = (self.w, self.d);
        let mut i = 0;
        for s in 0..storeys {
            for ox in (0..w).step_by(2 * BLOCK as usize) {
                for oz in (0..d).step_by(2 * BLOCK as usize) {
                    let pos = self.world(DVec3::new(f64::from(ox + 8), f64::from(s * STOREY + 6), f64::from(oz + 8)));
                    let light = Light { intensity: 2.0, range: 14.0, ..Light::point(format!("light_{i}"), pos) };
                    self.level.objects.add(light).expect("valid light");
                    i += 1;
                }
            }
        }
    }
}
