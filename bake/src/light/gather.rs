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
//! it enters ([`Level::ray_cast_chunks`], through a [`RayGrid`] per chunk that gives the
//! octree's own hits bit for bit); the bake lists those beyond its neighbourhood in
//! [`ChunkLighting::reads`](super::ChunkLighting::reads), so the rebuild engine re-bakes exactly
//! the chunks whose rays passed an edit. Rays stop at the top of the highest occupied chunk layer
//! (nothing can be hit above it); a change above the top a bake was made with re-bakes it when
//! its rays may have passed there ([`crate::deps::sky_reaches`]).
//!
//! [`RayGrid`]: pmfedit_core::map::octree::raycast::RayGrid

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use glam::{DVec2, DVec3, IVec3};
use pmfedit_core::map::coords::{ChunkCoord, Face, LATTICE_PER_UNIT};
use pmfedit_core::map::ids::MaterialId;
use pmfedit_core::map::level::LevelHit;
use pmfedit_core::map::{Level, Library};

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
    pub(super) reflect: DVec3,
    /// Emitted light, luxel units.
    pub(super) emit: DVec3,
    /// A skybox material: rays that meet it reach the sky.
    pub(super) sky: bool,
}

/// Reflectance of faces whose material the scene does not know (a scene without a library).
pub(super) const UNKNOWN_REFLECTANCE: f64 = 0.5;

/// The viewport's sRGB decoding (`pow(c, 2.2)`), so that what the bake reflects and emits is what
/// the lit view shows.
pub(super) fn to_linear(c: u8) -> f64 {
    (f64::from(c) / 255.0).powf(2.2)
}

pub(super) fn rgb(c: [u8; 3]) -> DVec3 {
    DVec3::new(f64::from(c[0]), f64::from(c[1]), f64::from(c[2]))
}

/// The chunks rays entered, beyond the bake's own chunk and its 26 neighbours (the static spread
/// covers those).
#[derive(Debug, Clone, Default)]
pub(super) struct ReadSet {
    pub(super) home: Option<IVec3>,
    pub(super) last: Option<ChunkCoord>,
    pub(super) far: BTreeSet<ChunkCoord>,
    /// Chunks known to be in `far`, by a hash of their coordinates: a ray enters the same few far
    /// chunks as the rays before it, and the tree's search cost more than this look-up.
    pub(super) seen: [Option<ChunkCoord>; 32],
}

impl ReadSet {
    pub(super) fn visit(&mut self, c: ChunkCoord) {
        if self.last == Some(c) {
            return;
        }
        self.last = Some(c);
        self.add(c);
    }

    /// Records chunk `c` unless it lies in the neighbourhood.
    pub(super) fn add(&mut self, c: ChunkCoord) {
        if self.home.is_some_and(|h| (c.as_ivec3() - h).abs().max_element() <= 1) {
            return;
        }
        let slot = &mut self.seen[(c.x ^ c.y.wrapping_mul(5) ^ c.z.wrapping_mul(11)) as usize & 31];
        if *slot != Some(c) {
            *slot = Some(c);
            self.far.insert(c);
        }
    }
}

/// The hasher of the bake's per-chunk maps (ray grids by chunk, bounce cells): FxHash's
/// rotate-xor-multiply over the keys' integers. Their keys are a few small integers, hashed once
/// or twice per ray, where the standard SipHash showed up in profiles; the maps are never
/// iterated, so their order cannot reach the output.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct KeyHasher(u64);

impl KeyHasher {
    fn add(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.add(u64::from(b));
        }
    }

    fn write_u8(&mut self, v: u8) {
        self.add(u64::from(v));
    }

    fn write_u32(&mut self, v: u32) {
        self.add(u64::from(v));
    }

    fn write_i32(&mut self, v: i32) {
        self.add(u64::from(v as u32));
    }

    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }

    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }
}

/// A map hashed by [`KeyHasher`].
pub(super) type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// What the light uses of a ray's [`LevelHit`] (which carries the whole cube). Whole hits moved
/// through the ray functions' results were `memcpy` calls, 9 % of a terrain bake's profile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct FarHit {
    /// The face through which the ray entered the cube.
    pub(super) face: Face,
    /// The hit point, level lattice space.
    pub(super) point: DVec3,
    /// The material of that face.
    pub(super) material: Option<MaterialId>,
}

impl FarHit {
    pub(super) fn of(hit: &LevelHit) -> FarHit {
        FarHit { face: hit.face, point: hit.point, material: hit.cube.face_material(hit.face) }
    }
}

/// What a point's rays know of their common origin (see `LightScene::trace`): whether it lies
/// strictly inside a cube with pushed corners, which every ray's first cast then hits at distance
/// 0 whatever its direction.
#[derive(Debug, Clone, Copy, Default)]
pub(super) enum Start {
    /// No ray from this origin was cast yet.
    #[default]
    Unknown,
    /// Not strictly inside such a cube: every ray is cast from the origin.
    Outside(DVec3),
    /// Strictly inside the cube at `lo..hi` (level lattice space) of chunk `chunk`.
    Inside { origin: DVec3, chunk: ChunkCoord, lo: DVec3, hi: DVec3 },
}

/// A gather ray's outcome.
pub(super) enum RayEnd {
    /// Open sky (or a skybox face).
    Sky,
    /// Nothing within reach, but roofed over: no light.
    Roofed,
    /// A surface.
    Surface(FarHit),
}

/// Bounce cache key: bounce level, face, and the face plane coordinate (on the face's axis) with
/// the cell indices (on the other two), lattice units.
pub(super) type CellKey = (u8, u8, IVec3);

/// Sun, sky, bounce and emission of one scene (see the module docs).
#[derive(Debug, Clone)]
pub(super) struct Far {
    /// Unit direction towards the sun and its light (luxel units).
    pub(super) sun: Option<(DVec3, DVec3)>,
    /// Offsets of the sun's disc samples (tangent plane, radius `tan(angle/2)`).
    pub(super) sun_disc: Vec<DVec2>,
    /// Sky light, luxel units (zero when off).
    pub(super) sky: DVec3,
    /// Bounces baked (0 when the level or the settings say none).
    pub(super) bounces: u8,
    /// By material id.
    pub(super) materials: Vec<SurfaceLight>,
    /// Whether any material emits.
    pub(super) emissive: bool,
    /// Lattice `y` of the top of the highest occupied chunk layer: nothing solid above.
    pub(super) top: f64,
    /// Cosine-weighted directions around +Z: per luxel, per bounce point.
    pub(super) hemi: Vec<DVec3>,
    pub(super) bounce_hemi: Vec<DVec3>,
    /// Uniform directions over the sphere, per air cell.
    pub(super) sphere: Vec<DVec3>,
    pub(super) distance: f64,
    pub(super) bounce_cell: f64,
    /// Light received at bounce points ([`CellKey`]).
    pub(super) received: RefCell<KeyMap<CellKey, DVec3>>,
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
            received: RefCell::default(),
            reads: RefCell::new(ReadSet::default()),
        }
    }

    /// Whether gathering can bring any light (sky, bounce or an emissive material).
    pub(super) fn gathers(&self) -> bool {
        self.sky != DVec3::ZERO || self.bounces > 0 || self.emissive
    }

    pub(super) fn surface(&self, hit: &FarHit) -> SurfaceLight {
        match hit.material {
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
pub(super) fn disc(n: u32) -> Vec<DVec2> {
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
pub(super) fn sphere(n: u32) -> Vec<DVec3> {
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
pub(super) fn spin(p: DVec3) -> f64 {
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
pub(super) fn oriented(local: DVec3, angle: (f64, f64), t: DVec3, b: DVec3, n: DVec3) -> DVec3 {
    let (s, c) = angle;
    let x = local.x * c - local.y * s;
    let y = local.x * s + local.y * c;
    t * x + b * y + n * local.z
}

pub(super) fn face_normal(face: Face) -> DVec3 {
    face.normal().as_dvec3()
}

/// `n` fixed directions over the +Z hemisphere (a golden-angle spiral, cosine-distributed).
pub(super) fn hemisphere(n: u32) -> Vec<DVec3> {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    (0..n)
        .map(|k| {
            let r = ((f64::from(k) + 0.5) / f64::from(n)).sqrt();
            let phi = golden * f64::from(k);
            DVec3::new(r * phi.cos(), r * phi.sin(), (1.0 - r * r).max(0.0).sqrt())
        })
        .collect()
}
