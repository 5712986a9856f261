//! Sun, sky, bounced and emitted light (docs/spec/PMF-NOTES.md K5): what a luxel or an air cell
//! receives from beyond the level's lights, found by rays through the level's octrees.
//!
//! # Model (luxel units, K2)
//! - **Sun**: `255 · intensity · colour/255 · cosθ`, times the fraction of rays to points of the
//!   sun's disc that reach the top of the level (or a skybox face) unblocked. Rays travel any
//!   distance: a tall building's shadow is as long as it should be.
//! - **Gather** (sky, emission, bounce): [`GatherSettings::rays`] cosine-weighted rays over the
//!   hemisphere. A ray that meets nothing within [`GatherSettings::distance`], and whose end
//!   sees straight up to the top of the level, or that meets a skybox material, brings the sky's
//!   `255 · intensity · colour/255`; one that meets a surface brings that surface's emission
//!   (`to_linear(emission)·255`) plus, with bounces on, its reflectance (`to_linear(colour)`;
//!   textures are files the bake does not read, see K5) times the light that surface receives.
//!   The mean over the rays is the luxel's gathered light, so an open floor gets the whole sky
//!   value and a wall half of it.
//!   A ray that meets nothing but whose end is roofed over (a hall larger than the distance, a
//!   deep cave) brings nothing: sky never leaks through a roof however far away it is.
//! - **Bounce**: the light a surface point receives (lights, sun, gathered sky and emission, and
//!   with more bounces its own bounce) is computed once per cell of [`GatherSettings::bounce_cell`]
//!   map units on each cube face plane, at the cell's centre, and cached for the chunk's bake, so
//!   the many rays that meet the same patch of ground share it. Dynamic and fast lights do not
//!   bounce (they can be switched at run time).
//! - **Air cells** (K4): sunlight without the cosine; gathered light over the whole sphere,
//!   doubled, so a cell in the open gets the sky light an open floor gets, plus what the ground
//!   below reflects.
//!
//! # Determinism and dependencies
//! Ray directions are fixed sequences (golden-angle spirals), turned about the normal by an
//! angle hashed from the point's coordinates: the same point always gets the same rays, whatever
//! the thread, the chunk order or whether the bake is incremental. Every ray records the chunks
//! it enters ([`Level::ray_cast_visiting`]); the bake lists those beyond its neighbourhood in
//! [`ChunkLighting::reads`](super::ChunkLighting::reads), so the rebuild engine re-bakes exactly
//! the chunks whose rays passed an edit. Rays stop at the top of the highest occupied chunk layer
//! (nothing can be hit above it); content rising above that layer re-bakes the whole level
//! ([`crate::deps`]).

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

use glam::{DVec2, DVec3, IVec3};
use pmfedit_core::map::coords::{ChunkCoord, Face, LATTICE_PER_UNIT};
use pmfedit_core::map::level::LevelHit;
use pmfedit_core::map::{Level, Library};

use super::BakedMode;
use super::eval::{LightScene, hemisphere};

/// Knobs of sun, sky, bounce and emission; the level's [`LevelLighting`] says whether each is on
/// and how strong. [`Default`] gives the documented defaults.
///
/// [`LevelLighting`]: pmfedit_core::map::lighting::LevelLighting
#[derive(Debug, Clone, PartialEq)]
pub struct GatherSettings {
    /// Hemisphere rays per luxel for sky, emitted and bounced light (default 32).
    pub rays: u32,
    /// Sphere rays per air cell (default 32).
    pub cell_rays: u32,
    /// Hemisphere rays per bounce point: the sky and emission a surface reflects (default 12).
    pub bounce_rays: u32,
    /// Rays per luxel to points of the sun's disc (default 4; 1 gives hard shadows).
    pub sun_rays: u32,
    /// How far gather rays look for a surface, map units (default 14: within a 16-unit chunk's
    /// neighbours, so an edit re-bakes few chunks beyond them).
    pub distance: f64,
    /// Edge of the cells bounce points are cached in, map units (default 1).
    pub bounce_cell: f64,
    /// Whether light bounces at all (drafts skip it); the level says how many times.
    pub bounce: bool,
}

impl Default for GatherSettings {
    fn default() -> Self {
        Self { rays: 32, cell_rays: 32, bounce_rays: 12, sun_rays: 4, distance: 14.0, bounce_cell: 1.0, bounce: true }
    }
}

impl GatherSettings {
    /// The cheap settings of a draft: a few sky rays, hard sun shadows, no bounce.
    pub fn draft(&self) -> GatherSettings {
        GatherSettings { rays: 8, cell_rays: 8, sun_rays: 1, bounce: false, ..self.clone() }
    }
}

/// What light does at a material's faces.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct SurfaceLight {
    /// Linear reflectance per channel (`0..=1`).
    reflect: DVec3,
    /// Emitted light, luxel units.
    emit: DVec3,
    /// A skybox material: rays that meet it reach the sky.
    sky: bool,
}

/// Reflectance of faces whose material the scene does not know (a scene without a library).
const UNKNOWN_REFLECTANCE: f64 = 0.5;

/// The viewport's sRGB decoding (`pow(c, 2.2)`), so that what the bake reflects and emits is what
/// the lit view shows.
fn to_linear(c: u8) -> f64 {
    (f64::from(c) / 255.0).powf(2.2)
}

fn rgb(c: [u8; 3]) -> DVec3 {
    DVec3::new(f64::from(c[0]), f64::from(c[1]), f64::from(c[2]))
}

/// The chunks rays entered, beyond the bake's own chunk and its 26 neighbours (the static spread
/// covers those).
#[derive(Debug, Clone, Default)]
pub(super) struct ReadSet {
    home: Option<IVec3>,
    last: Option<ChunkCoord>,
    far: BTreeSet<ChunkCoord>,
}

impl ReadSet {
    fn visit(&mut self, c: ChunkCoord) {
        if self.last == Some(c) {
            return;
        }
        self.last = Some(c);
        if self.home.is_some_and(|h| (c.as_ivec3() - h).abs().max_element() <= 1) {
            return;
        }
        self.far.insert(c);
    }
}

/// A gather ray's outcome.
enum RayEnd {
    /// Open sky (or a skybox face).
    Sky,
    /// Nothing within reach, but roofed over: no light.
    Roofed,
    /// A surface.
    Surface(LevelHit),
}

/// Bounce cache key: bounce level, face, and the face plane coordinate (on the face's axis) with
/// the cell indices (on the other two), lattice units.
type CellKey = (u8, u8, IVec3);

/// Sun, sky, bounce and emission of one scene (see the module docs).
#[derive(Debug, Clone)]
pub(super) struct Far {
    /// Unit direction towards the sun and its light (luxel units).
    sun: Option<(DVec3, DVec3)>,
    /// Offsets of the sun's disc samples (tangent plane, radius `tan(angle/2)`).
    sun_disc: Vec<DVec2>,
    /// Sky light, luxel units (zero when off).
    sky: DVec3,
    /// Bounces baked (0 when the level or the settings say none).
    bounces: u8,
    /// By material id.
    materials: Vec<SurfaceLight>,
    /// Whether any material emits.
    emissive: bool,
    /// Lattice `y` of the top of the highest occupied chunk layer: nothing solid above.
    top: f64,
    /// Cosine-weighted directions around +Z: per luxel, per bounce point.
    hemi: Vec<DVec3>,
    bounce_hemi: Vec<DVec3>,
    /// Uniform directions over the sphere, per air cell.
    sphere: Vec<DVec3>,
    distance: f64,
    bounce_cell: f64,
    /// Light received at bounce points ([`CellKey`]).
    received: RefCell<HashMap<CellKey, DVec3>>,
    pub(super) reads: RefCell<ReadSet>,
}

impl Far {
    /// Prepares the level's sun, sky and bounce with `library`'s materials (`None`: every face
    /// reflects [`UNKNOWN_REFLECTANCE`], none emits, none is a skybox).
    pub(super) fn new(level: &Level, library: Option<&Library>, settings: &GatherSettings) -> Far {
        let lighting = level.lighting;
        let sun = lighting.sun.direction().map(|d| {
            let s = lighting.sun;
            (d.as_dvec3(), rgb(s.color) * f64::from(s.intensity))
        });
        let radius = (f64::from(lighting.sun.angle) / 2.0).to_radians().tan();
        let sun_disc = if radius > 0.0 { disc(settings.sun_rays.max(1)) } else { vec![DVec2::ZERO] };
        let sun_disc = sun_disc.into_iter().map(|o| o * radius).collect();
        let sky = if lighting.sky.is_on() {
            rgb(lighting.sky.color) * f64::from(lighting.sky.intensity)
        } else {
            DVec3::ZERO
        };
        let bounces = if settings.bounce { lighting.bounces } else { 0 };
        let mut materials = Vec::new();
        if let Some(lib) = library {
            let skies: BTreeSet<u16> = lib
                .sky_environments()
                .iter()
                .flat_map(|(_, e)| e.slots().into_iter().filter_map(|(_, m)| m.map(|m| m.0)))
                .collect();
            for (id, m) in lib.materials().iter() {
                let i = usize::from(id.0);
                if materials.len() <= i {
                    materials.resize(i + 1, SurfaceLight::default());
                }
                let reflect = DVec3::from_array(m.color.map(to_linear));
                let emit = DVec3::from_array(m.emission.map(to_linear)) * 255.0;
                materials[i] = SurfaceLight { reflect, emit, sky: skies.contains(&id.0) };
            }
        }
        let emissive = materials.iter().any(|m| !m.sky && m.emit != DVec3::ZERO);
        let frame = level.frame();
        let top = level.occupied_bounds().map_or(f64::NEG_INFINITY, |(_, hi)| {
            f64::from(frame.chunk_min_lattice(ChunkCoord::new(hi.x, hi.y + 1, hi.z)).y)
        });
        Far {
            sun,
            sun_disc,
            sky,
            bounces,
            materials,
            emissive,
            top,
            hemi: hemisphere(settings.rays.max(1)),
            bounce_hemi: hemisphere(settings.bounce_rays.max(1)),
            sphere: sphere(settings.cell_rays.max(1)),
            distance: settings.distance.max(0.0),
            bounce_cell: settings.bounce_cell.max(1.0 / f64::from(LATTICE_PER_UNIT)),
            received: RefCell::new(HashMap::new()),
            reads: RefCell::new(ReadSet::default()),
        }
    }

    /// Whether gathering can bring any light (sky, bounce or an emissive material).
    fn gathers(&self) -> bool {
        self.sky != DVec3::ZERO || self.bounces > 0 || self.emissive
    }

    fn surface(&self, hit: &LevelHit) -> SurfaceLight {
        match hit.cube.face_material(hit.face) {
            Some(m) => self
                .materials
                .get(usize::from(m.0))
                .copied()
                .unwrap_or(SurfaceLight { reflect: DVec3::splat(UNKNOWN_REFLECTANCE), ..SurfaceLight::default() }),
            None => SurfaceLight::default(),
        }
    }
}

/// `n` points over the unit disc (a golden-angle spiral, uniform by area); the first is the
/// centre when `n` is 1.
fn disc(n: u32) -> Vec<DVec2> {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    (0..n)
        .map(|k| {
            let r = if n == 1 { 0.0 } else { ((f64::from(k) + 0.5) / f64::from(n)).sqrt() };
            let phi = golden * f64::from(k);
            DVec2::new(r * phi.cos(), r * phi.sin())
        })
        .collect()
}

/// `n` directions uniformly over the unit sphere (a golden-angle spiral in `z`).
fn sphere(n: u32) -> Vec<DVec3> {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    (0..n)
        .map(|k| {
            let z = 1.0 - 2.0 * (f64::from(k) + 0.5) / f64::from(n);
            let r = (1.0 - z * z).max(0.0).sqrt();
            let phi = golden * f64::from(k);
            DVec3::new(r * phi.cos(), r * phi.sin(), z)
        })
        .collect()
}

/// An angle in `[0, 2π)` hashed from a point's coordinates (splitmix64 of their bits): turns a
/// point's fixed ray pattern so neighbouring luxels do not share one (noise instead of bands).
fn spin(p: DVec3) -> f64 {
    let mut h: u64 = 0x9E37_79B9_7F4A_7C15;
    for v in p.to_array() {
        h ^= v.to_bits();
        h = h.wrapping_add(0x9E37_79B9_7F4A_7C15);
        h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^= h >> 31;
    }
    (h >> 11) as f64 / (1u64 << 53) as f64 * std::f64::consts::TAU
}

/// `local` (around +Z) turned by `angle` about Z and mapped onto the frame `(t, b, n)`.
fn oriented(local: DVec3, angle: (f64, f64), t: DVec3, b: DVec3, n: DVec3) -> DVec3 {
    let (s, c) = angle;
    let x = local.x * c - local.y * s;
    let y = local.x * s + local.y * c;
    t * x + b * y + n * local.z
}

impl LightScene<'_> {
    /// The first solid face along a ray from `origin` (level lattice space) in unit direction
    /// `dir` within `max` lattice units, stopping at the top of the level; records the chunks
    /// entered. A cube with pushed corners containing the start is stepped out of first (see
    /// [`LightScene::visible`]). Returns the hit, or `None` and whether the ray was cut by the
    /// top of the level (it then reaches open sky).
    pub(super) fn trace(&self, origin: DVec3, dir: DVec3, max: f64) -> (Option<LevelHit>, bool) {
        let mut max = max;
        let mut topped = false;
        if dir.y > 0.0 {
            let to_top = (self.far.top - origin.y) / dir.y;
            if to_top <= max {
                max = to_top;
                topped = true;
            }
        }
        if max <= 0.0 {
            return (None, topped);
        }
        let mut origin = origin;
        let mut remaining = max;
        let mut reads = self.far.reads.borrow_mut();
        let mut last = None;
        for _ in 0..3 {
            let Some(hit) = self.level.ray_cast_visiting(origin, dir, remaining, |c| reads.visit(c)) else {
                return (None, topped);
            };
            if hit.distance > 1e-9 || !hit.cube.has_pushed_corners() {
                return (Some(hit), false);
            }
            // Leave the box of the cube the ray starts in.
            let lo = hit.level_addr.min.as_dvec3();
            let hi = hit.level_addr.max().as_dvec3();
            let mut t_exit = f64::INFINITY;
            for a in 0..3 {
                if dir[a] > 0.0 {
                    t_exit = t_exit.min((hi[a] - origin[a]) / dir[a]);
                } else if dir[a] < 0.0 {
                    t_exit = t_exit.min((lo[a] - origin[a]) / dir[a]);
                }
            }
            let step = t_exit.max(0.0) + 1e-6;
            if step >= remaining {
                return (None, topped);
            }
            origin += dir * step;
            remaining -= step;
            last = Some(hit);
        }
        // Still inside pushed-corner cubes after three steps: blocked by the last of them.
        (last, false)
    }

    /// Whether a ray from `origin` (lattice) along `dir` reaches the sky: the top of the level, or
    /// a skybox face.
    fn reaches_sky(&self, origin: DVec3, dir: DVec3) -> bool {
        match self.trace(origin, dir, f64::INFINITY) {
            (None, _) => true,
            (Some(hit), _) => self.far.surface(&hit).sky,
        }
    }

    /// Sunlight at a surface point with unit `normal` (Lambert cosine, rays start
    /// [`LightSettings::normal_offset`](super::LightSettings::normal_offset) off the surface), or
    /// at a point in the air (`None`: no cosine). `soft`: rays to every disc sample (else its
    /// centre only, as bounce points do).
    pub(super) fn sun_at(&self, point: DVec3, normal: Option<DVec3>, soft: bool) -> DVec3 {
        let Some((dir, light)) = self.far.sun else { return DVec3::ZERO };
        let cos = normal.map_or(1.0, |n| n.dot(dir));
        if cos <= 0.0 {
            return DVec3::ZERO;
        }
        let start = normal.map_or(point, |n| point + n * self.settings.normal_offset);
        let origin = self.frame.lattice_from_world_f(start);
        let disc: &[DVec2] = if soft { &self.far.sun_disc } else { &[DVec2::ZERO] };
        let (t, b) = dir.any_orthonormal_pair();
        let angle = if disc.len() > 1 { spin(point).sin_cos() } else { (0.0, 1.0) };
        let mut open = 0usize;
        for o in disc {
            let d = oriented(DVec3::new(o.x, o.y, 1.0), angle, t, b, dir).normalize();
            // Disc samples below the horizon or behind the surface are blocked.
            if d.y > 0.0 && normal.is_none_or(|n| n.dot(d) > 0.0) && self.reaches_sky(origin, d) {
                open += 1;
            }
        }
        light * (cos * open as f64 / disc.len() as f64)
    }

    /// Where a gather ray from `origin` (lattice) along unit `dir` ends (see the module docs).
    fn gather_ray(&self, origin: DVec3, dir: DVec3) -> RayEnd {
        let reach = self.far.distance * f64::from(LATTICE_PER_UNIT);
        match self.trace(origin, dir, reach) {
            (Some(hit), _) if self.far.surface(&hit).sky => RayEnd::Sky,
            (Some(hit), _) => RayEnd::Surface(hit),
            (None, true) => RayEnd::Sky,
            (None, false) => {
                // Nothing within reach: open sky only if the end sees straight up.
                if self.reaches_sky(origin + dir * reach, DVec3::Y) { RayEnd::Sky } else { RayEnd::Roofed }
            }
        }
    }

    /// The light a gather ray brings back at bounce level `level` (0 for luxels and cells).
    fn ray_light(&self, origin: DVec3, dir: DVec3, level: u8) -> DVec3 {
        match self.gather_ray(origin, dir) {
            RayEnd::Sky => self.far.sky,
            RayEnd::Roofed => DVec3::ZERO,
            RayEnd::Surface(hit) => {
                let s = self.far.surface(&hit);
                if level < self.far.bounces && s.reflect != DVec3::ZERO {
                    s.emit + s.reflect * self.received(&hit, level + 1)
                } else {
                    s.emit
                }
            }
        }
    }

    /// Gathered light (sky, emission, bounce) at a surface point with unit `normal` over `dirs`
    /// (cosine-weighted around +Z), or at a point in the air over the sphere (`None`).
    fn gather(&self, point: DVec3, normal: Option<DVec3>, level: u8, dirs: &[DVec3]) -> DVec3 {
        let (start, (t, b, n), scale) = match normal {
            Some(n) => {
                let (t, b) = n.any_orthonormal_pair();
                (point + n * self.settings.normal_offset, (t, b, n), 1.0)
            }
            // About the vertical, doubled: a cell in the open gets the sky of an open floor.
            None => (point, (DVec3::X, DVec3::Z, DVec3::Y), 2.0),
        };
        let origin = self.frame.lattice_from_world_f(start);
        let angle = spin(point).sin_cos();
        let mut sum = DVec3::ZERO;
        for &local in dirs {
            let d = oriented(local, angle, t, b, n);
            sum += self.ray_light(origin, d, level);
        }
        sum * (scale / dirs.len() as f64)
    }

    /// The light received at the bounce point of `hit` at bounce level `level` (cached per cell,
    /// see the module docs): static lights, the sun (disc centre), gathered sky and emission, and
    /// the next bounce while `level` is below the level's bounce count.
    fn received(&self, hit: &LevelHit, level: u8) -> DVec3 {
        let face = hit.face;
        let axis = face.axis();
        let cell = self.far.bounce_cell * f64::from(LATTICE_PER_UNIT);
        let mut key = IVec3::ZERO;
        let mut q = DVec3::ZERO;
        for a in 0..3 {
            if a == axis {
                key[a] = hit.point[a].round() as i32;
                q[a] = f64::from(key[a]);
            } else {
                key[a] = (hit.point[a] / cell).floor() as i32;
                q[a] = (f64::from(key[a]) + 0.5) * cell;
            }
        }
        let key = (level, face as u8, key);
        if let Some(&e) = self.far.received.borrow().get(&key) {
            return e;
        }
        let e = self.receive_at(self.frame.world_from_lattice_f(q), face_normal(face), level);
        self.far.received.borrow_mut().insert(key, e);
        e
    }

    fn receive_at(&self, point: DVec3, normal: DVec3, level: u8) -> DVec3 {
        let mut e = DVec3::ZERO;
        for l in &self.lights {
            if l.mode == BakedMode::Static && l.light.position.as_dvec3().distance(point) < l.reach {
                e += self.irradiance(point, Some(normal), l);
            }
        }
        e += self.sun_at(point, Some(normal), false);
        e + self.gather(point, Some(normal), level, &self.far.bounce_hemi)
    }

    /// Sun, sky, emitted and bounced light at a luxel (`normal`: the face's unit normal) or an
    /// air cell centre (`None`), luxel units.
    pub fn far_light(&self, point: DVec3, normal: Option<DVec3>) -> DVec3 {
        let mut v = self.sun_at(point, normal, true);
        if self.far.gathers() {
            let dirs = if normal.is_some() { &self.far.hemi } else { &self.far.sphere };
            v += self.gather(point, normal, 0, dirs);
        }
        v
    }

    /// Starts recording the chunks rays enter, for a bake of `chunk`.
    pub(super) fn begin_reads(&self, chunk: ChunkCoord) {
        *self.far.reads.borrow_mut() = ReadSet { home: Some(chunk.as_ivec3()), ..ReadSet::default() };
        // A cached bounce point would skip its rays, and so their reads.
        self.far.received.borrow_mut().clear();
    }

    /// The chunks rays entered since [`Self::begin_reads`], beyond its chunk's neighbourhood,
    /// sorted.
    pub(super) fn take_reads(&self) -> Vec<ChunkCoord> {
        std::mem::take(&mut self.far.reads.borrow_mut().far).into_iter().collect()
    }
}

fn face_normal(face: Face) -> DVec3 {
    face.normal().as_dvec3()
}
