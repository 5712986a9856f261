//! [`terrain`]: a scalable procedural landscape for benchmarks.

use glam::{DVec3, IVec3, Vec3};

use super::noise::{Rng, fbm, mix64};
use super::palette::Palette;
use super::site::{Site, smoothed_top};
use crate::map::coords::{ChunkCoord, GRID_MAX_XZ, GRID_MAX_Y, LATTICE_PER_UNIT, LatticeBox, octant_offset};
use crate::map::library::{Light, LightMode, LightShape, RealtimeLight};
use crate::map::octree::Cube;
use crate::map::{Level, Map};

/// Chunk size exponent of [`terrain`] levels: chunks of 16 map units (128 lattice units, octrees
/// 7 levels deep), the size [`Map::new`] uses.
pub const TERRAIN_CHUNK_SIZE_LOG2: u8 = 4;

/// Map units per chunk edge of [`terrain`].
const CHUNK_UNITS: i32 = 1 << TERRAIN_CHUNK_SIZE_LOG2;

/// A procedural landscape of `chunks_x × chunks_y × chunks_z` chunks of 16 map units, the same
/// for the same arguments.
///
/// The chunk box is centered on [`Level::DEFAULT_CENTER`] (moved inwards where it would leave
/// the grid). With `W = 16·chunks_x`, `D = 16·chunks_z` and `H = 16·chunks_y` map units:
///
/// - **Heightfield**: columns of 1 × 1 map unit. The surface height at each column corner is
///   `H · (0.15 + 0.6 · c(fbm))`, where `fbm` is 5 octaves of value noise of wavelength 96 map
///   units (see [`fbm`]) and `c` stretches its contrast by 1.6. A column rises to the next
///   whole unit above its highest corner: stone, then 2 units of dirt and 1 of grass on top
///   (sand instead near and under the water). The top cube's corners are pushed down to the
///   corner heights (extended geometry) wherever that is less than a whole unit, so slopes are
///   smooth. One `fill_box` per layer per run of equal columns along Z, plus one `set_cube` per
///   smoothed column.
/// - **Water**: columns below the sea level `0.35 · H` are flooded up to it (liquid water).
/// - **Caves**: `max(1, chunks_x·chunks_z / 16)` tunnels (random walks of 24 spheres of radius
///   1.5 to 2.5 units) and `max(1, chunks_x·chunks_z / 64)` caverns (spheres of radius 4 to 7),
///   carved from below the surface.
/// - **Structures**: `max(1, chunks_x·chunks_z / 32)` stone towers (6 × 6 units, 12 to 20 high,
///   hollow, wood floors every 5 units, glass windows, a doorway) and as many wooden houses
///   (10 × 8 units on a stone foundation, glass windows, a doorway), each on the highest ground
///   of its footprint.
/// - **Lights**: `max(4, chunks_x·chunks_z / 16)` lights 3 units above the ground cycling through
///   static point, dynamic spot, fast area and realtime point (switchable ones with distinct
///   global IDs from 1), plus a static point light inside every tower.
///
/// # Panics
/// If a count is 0 or exceeds the grid (4096 chunks along X and Z, 256 along Y).
pub fn terrain(chunks_x: u32, chunks_y: u32, chunks_z: u32, seed: u64) -> Map {
    let in_range = |n: u32, max: i32| n >= 1 && n <= max as u32;
    assert!(
        in_range(chunks_x, GRID_MAX_XZ) && in_range(chunks_y, GRID_MAX_Y) && in_range(chunks_z, GRID_MAX_XZ),
        "terrain of {chunks_x} × {chunks_y} × {chunks_z} chunks does not fit the level grid"
    );
    let (cx, cy, cz) = (chunks_x as i32, chunks_y as i32, chunks_z as i32);
    let mut map = Map::new(format!("Terrain {cx}x{cy}x{cz} seed {seed}"));
    map.meta.description = "Procedural benchmark terrain (pmfedit_core::sample::terrain)".into();
    let palette = Palette::add_to(&mut map.library);
    let level = &mut map.levels[0];
    level.name = "terrain".into();
    level.set_chunk_size_log2(TERRAIN_CHUNK_SIZE_LOG2).expect("valid, the level is empty");
    let c = Level::DEFAULT_CENTER;
    let first = ChunkCoord::new(
        (c.x - cx / 2).clamp(0, GRID_MAX_XZ - cx),
        (c.y - cy / 2).clamp(0, GRID_MAX_Y - cy),
        (c.z - cz / 2).clamp(0, GRID_MAX_XZ - cz),
    );
    let mut t = Builder {
        site: Site { origin: level.frame().chunk_min_lattice(first) },
        level,
        p: palette,
        rng: Rng::new(seed),
        w: cx * CHUNK_UNITS,
        d: cz * CHUNK_UNITS,
        h: cy * CHUNK_UNITS,
        heights: Vec::new(),
        corners: Vec::new(),
        next_global_id: 1,
    };
    t.heightfield(seed);
    t.caves(cx, cz);
    let towers = t.structures(cx, cz);
    t.lights(cx, cz, &towers);
    map
}

struct Builder<'a> {
    level: &'a mut Level,
    /// Unit `(0, 0, 0)` is the minimum corner of the chunk box.
    site: Site,
    p: Palette,
    rng: Rng,
    /// Size of the chunk box in map units.
    w: i32,
    d: i32,
    h: i32,
    /// Column tops, `w × d`, X-major.
    heights: Vec<i32>,
    /// Surface heights at column corners, `(w + 1) × (d + 1)`, X-major.
    corners: Vec<f32>,
    next_global_id: u32,
}

impl Builder<'_> {
    fn fill(&mut self, min: [i32; 3], max: [i32; 3], cube: Cube) {
        if min[0] < max[0] && min[1] < max[1] && min[2] < max[2] {
            self.level.fill_box(self.site.units(min, max), cube).expect("inside the grid");
        }
    }

    /// The whole chunk box.
    fn area(&self) -> LatticeBox {
        self.site.units([0, 0, 0], [self.w, self.h, self.d])
    }

    fn clear(&mut self, min: [i32; 3], max: [i32; 3]) {
        let b = self.site.units(min, max).intersection(&self.area());
        if !b.is_empty() {
            self.level.clear_box(b).expect("inside the grid");
        }
    }

    fn column(&self, x: i32, z: i32) -> i32 {
        self.heights[(x * self.d + z) as usize]
    }

    fn corner(&self, x: i32, z: i32) -> f32 {
        self.corners[(x * (self.d + 1) + z) as usize]
    }

    fn sea(&self) -> i32 {
        (self.h as f32 * 0.35) as i32
    }

    fn heightfield(&mut self, seed: u64) {
        let (w, d, h) = (self.w, self.d, self.h);
        let noise_seed = mix64(seed ^ 0x7465_7272_6169_6e00);
        self.corners = (0..=w)
            .flat_map(|x| (0..=d).map(move |z| (x, z)))
            .map(|(x, z)| {
                let t = fbm(noise_seed, f64::from(x), f64::from(z), 96.0, 5);
                let t = ((t - 0.5) * 1.6 + 0.5).clamp(0.0, 1.0);
                (f64::from(h) * (0.15 + 0.6 * t)) as f32
            })
            .collect();
        self.heights = (0..w)
            .flat_map(|x| (0..d).map(move |z| (x, z)))
            .map(|(x, z)| {
                let m = [(0, 0), (1, 0), (0, 1), (1, 1)]
                    .iter()
                    .map(|&(a, b)| self.corner(x + a, z + b))
                    .fold(f32::MIN, f32::max);
                ((m - 0.01).ceil() as i32).clamp(1, h)
            })
            .collect();
        let sea = self.sea();
        let base = (self.heights.iter().copied().min().unwrap_or(1) - 4).max(0);
        let p = self.p;
        self.fill([0, 0, 0], [w, base, d], p.stone);
        // Stone up to the lowest soil of each chunk footprint in one box per footprint, so that
        // the columns' own boxes rarely cross a chunk border.
        let soil_of = |top: i32| (top - 3).max(base);
        let mut block_stone = Vec::new();
        for bx in (0..w).step_by(CHUNK_UNITS as usize) {
            for bz in (0..d).step_by(CHUNK_UNITS as usize) {
                let (lo, _) = self.footprint(bx, bz, CHUNK_UNITS.min(w - bx), CHUNK_UNITS.min(d - bz));
                let top = soil_of(lo);
                self.fill([bx, base, bz], [bx + CHUNK_UNITS, top, bz + CHUNK_UNITS], p.stone);
                block_stone.push(top);
            }
        }
        let blocks_z = (d + CHUNK_UNITS - 1) / CHUNK_UNITS;
        for x in 0..w {
            let mut z = 0;
            while z < d {
                let top = self.column(x, z);
                let block_end = ((z / CHUNK_UNITS + 1) * CHUNK_UNITS).min(d);
                let mut end = z + 1;
                while end < block_end && self.column(x, end) == top {
                    end += 1;
                }
                let stone = block_stone[((x / CHUNK_UNITS) * blocks_z + z / CHUNK_UNITS) as usize];
                let soil = soil_of(top);
                self.fill([x, stone, z], [x + 1, soil, end], p.stone);
                if top <= sea + 1 {
                    self.fill([x, soil, z], [x + 1, top, end], p.sand);
                    self.fill([x, top, z], [x + 1, sea, end], p.water);
                } else {
                    self.fill([x, soil, z], [x + 1, top - 1, end], p.dirt);
                    self.fill([x, top - 1, z], [x + 1, top, end], p.grass);
                }
                z = end;
            }
        }
        // Smooth the dry surface: push the top corners down to the corner heights.
        for x in 0..w {
            for z in 0..d {
                let top = self.column(x, z);
                if top < sea {
                    continue;
                }
                let cube = if top <= sea + 1 { p.sand } else { p.grass };
                let corners: [f32; 4] = std::array::from_fn(|i| {
                    let o = octant_offset(i);
                    self.corner(x + o.x, z + o.z)
                });
                let addr = self.site.unit_cube(IVec3::new(x, top - 1, z));
                let r = match smoothed_top(cube, top, corners) {
                    Some(c) if c == cube => continue,
                    Some(c) => self.level.set_cube(addr, c),
                    None => {
                        self.level.clear_cube(addr).expect("inside the grid");
                        if top < 2 {
                            continue;
                        }
                        self.level.set_cube(self.site.unit_cube(IVec3::new(x, top - 2, z)), cube)
                    }
                };
                r.expect("inside the grid");
            }
        }
    }

    /// Carves a ball of radius `r` units around unit position `c`, one box per unit row.
    fn carve_ball(&mut self, c: IVec3, r: f64) {
        let rr = r.ceil() as i32;
        for dx in -rr..=rr {
            for dy in -rr..=rr {
                let rem = r * r - f64::from(dx * dx + dy * dy);
                if rem < 0.0 {
                    continue;
                }
                let hz = rem.sqrt() as i32;
                self.clear([c.x + dx, c.y + dy, c.z - hz], [c.x + dx + 1, c.y + dy + 1, c.z + hz + 1]);
            }
        }
    }

    fn caves(&mut self, cx: i32, cz: i32) {
        let (w, d) = (self.w, self.d);
        for _ in 0..(cx * cz / 16).max(1) {
            let (x, z) = (self.rng.range(0, w), self.rng.range(0, d));
            let top = self.column(x, z);
            if top < 10 {
                continue;
            }
            let mut pos = DVec3::new(f64::from(x), f64::from(self.rng.range(3, top - 6)), f64::from(z));
            let mut heading = self.rng.range_f(0.0, std::f64::consts::TAU);
            let mut climb = 0.0;
            for _ in 0..24 {
                let r = self.rng.range_f(1.5, 2.5);
                self.carve_ball(pos.round().as_ivec3(), r);
                heading += self.rng.range_f(-0.5, 0.5);
                climb = (climb + self.rng.range_f(-0.2, 0.2)).clamp(-0.4, 0.4);
                pos += DVec3::new(heading.cos() * 1.5, climb, heading.sin() * 1.5);
            }
        }
        for _ in 0..(cx * cz / 64).max(1) {
            let (x, z) = (self.rng.range(0, w), self.rng.range(0, d));
            let top = self.column(x, z);
            let r = self.rng.range_f(4.0, 7.0);
            let y = top - r as i32 - 4;
            if y > r as i32 {
                self.carve_ball(IVec3::new(x, y, z), r);
            }
        }
    }

    /// The lowest and highest column top over the footprint `[x, x + sx) × [z, z + sz)`.
    fn footprint(&self, x: i32, z: i32, sx: i32, sz: i32) -> (i32, i32) {
        let mut lo = i32::MAX;
        let mut hi = i32::MIN;
        for a in x..x + sx {
            for b in z..z + sz {
                lo = lo.min(self.column(a, b));
                hi = hi.max(self.column(a, b));
            }
        }
        (lo, hi)
    }

    /// A random footprint position `margin` units inside the box, if the box is big enough.
    fn place(&mut self, sx: i32, sz: i32, margin: i32) -> Option<(i32, i32)> {
        let (w, d) = (self.w, self.d);
        (w >= sx + 2 * margin && d >= sz + 2 * margin)
            .then(|| (self.rng.range(margin, w - sx - margin + 1), self.rng.range(margin, d - sz - margin + 1)))
    }

    /// Towers and houses; returns the centers of the tower interiors (unit positions).
    fn structures(&mut self, cx: i32, cz: i32) -> Vec<DVec3> {
        let p = self.p;
        let count = (cx * cz / 32).max(1);
        let mut towers = Vec::new();
        for _ in 0..count {
            let tall = self.rng.range(12, 21);
            let Some((x, z)) = self.place(6, 6, 2) else { break };
            let (lo, hi) = self.footprint(x, z, 6, 6);
            let top = hi + tall;
            if top > self.h {
                continue;
            }
            self.fill([x, lo - 1, z], [x + 6, top, z + 6], p.stone);
            self.clear([x + 1, hi, z + 1], [x + 5, top - 1, z + 5]);
            for y in (hi + 5..top - 1).step_by(5) {
                self.fill([x + 1, y, z + 1], [x + 5, y + 1, z + 5], p.wood);
                self.fill([x + 2, y + 2, z], [x + 4, y + 4, z + 1], p.glass);
                self.fill([x + 2, y + 2, z + 5], [x + 4, y + 4, z + 6], p.glass);
                self.fill([x, y + 2, z + 2], [x + 1, y + 4, z + 4], p.glass);
                self.fill([x + 5, y + 2, z + 2], [x + 6, y + 4, z + 4], p.glass);
            }
            self.clear([x + 2, hi, z], [x + 4, hi + 3, z + 1]);
            towers.push(DVec3::new(f64::from(x) + 3.0, f64::from(hi) + 2.5, f64::from(z) + 3.0));
        }
        for _ in 0..count {
            let Some((x, z)) = self.place(10, 8, 2) else { break };
            let (lo, hi) = self.footprint(x, z, 10, 8);
            let floor = hi + 1;
            if floor + 5 > self.h {
                continue;
            }
            self.fill([x, lo - 1, z], [x + 10, floor, z + 8], p.stone);
            self.fill([x, floor, z], [x + 10, floor + 5, z + 8], p.wood);
            self.clear([x + 1, floor, z + 1], [x + 9, floor + 4, z + 7]);
            for a in [x + 2, x + 6] {
                self.fill([a, floor + 1, z], [a + 2, floor + 3, z + 1], p.glass);
                self.fill([a, floor + 1, z + 7], [a + 2, floor + 3, z + 8], p.glass);
            }
            self.clear([x, floor, z + 3], [x + 1, floor + 3, z + 5]);
        }
        towers
    }

    /// Level-space position of unit position `u` (fractional).
    fn world(&self, u: DVec3) -> Vec3 {
        let lattice = self.site.origin.as_dvec3() + u * f64::from(LATTICE_PER_UNIT);
        self.level.frame().world_from_lattice_f(lattice).as_vec3()
    }

    fn lights(&mut self, cx: i32, cz: i32, towers: &[DVec3]) {
        let (w, d) = (self.w, self.d);
        for i in 0..(cx * cz / 16).max(4) {
            let (x, z) = (self.rng.range(0, w), self.rng.range(0, d));
            let pos = self.world(DVec3::new(f64::from(x) + 0.5, f64::from(self.column(x, z) + 3), f64::from(z) + 0.5));
            let color = [200 + (i % 3) as u8 * 25, 200, 255 - (i % 4) as u8 * 30];
            let base = Light { color, intensity: 2.0, range: 14.0, ..Light::point(format!("light_{i}"), pos) };
            let light = match i % 4 {
                0 => base,
                1 => Light {
                    shape: LightShape::Spot { direction: Vec3::NEG_Y, cone_radius: 35.0 },
                    mode: LightMode::Dynamic { global_id: self.global_id(), enabled: true, preserve: false },
                    ..base
                },
                2 => Light {
                    shape: LightShape::Area { angles: [[-60.0, 60.0], [-90.0, 0.0], [-60.0, 60.0]] },
                    mode: LightMode::Fast {
                        global_id: self.global_id(),
                        initial_intensity: 255,
                        enabled: true,
                        preserve: false,
                    },
                    size: Vec3::new(2.0, 0.1, 2.0),
                    ..base
                },
                _ => Light { mode: LightMode::Realtime(RealtimeLight::default()), ..base },
            };
            self.level.objects.add(light).expect("valid light");
        }
        for (i, &t) in towers.iter().enumerate() {
            let light = Light { range: 8.0, ..Light::point(format!("tower_{i}"), self.world(t)) };
            self.level.objects.add(light).expect("valid light");
        }
    }

    fn global_id(&mut self) -> u32 {
        self.next_global_id += 1;
        self.next_global_id - 1
    }
}
