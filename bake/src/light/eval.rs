//! Light evaluation: falloff, spot cones, emitter sampling, shadow rays, ambient (occlusion).

use std::cell::RefCell;

use glam::DVec3;
use pmfedit_core::format::pmf;
use pmfedit_core::map::coords::LevelFrame;
use pmfedit_core::map::library::{Light, LightId, LightMode, LightShape};
use pmfedit_core::map::{Level, Library, Map};

use super::LightError;
use super::gather::{Far, GatherSettings, Start, hemisphere};
use super::grids::ChunkGrids;
use super::track::Tracker;

/// Ambient occlusion of the ambient term on luxels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AoSettings {
    /// Rays per luxel, spread over the hemisphere by a fixed spiral (no randomness).
    pub rays: u32,
    /// How far a ray looks for an occluder, map units.
    pub distance: f64,
}

impl Default for AoSettings {
    fn default() -> Self {
        Self { rays: 16, distance: 2.0 }
    }
}

/// Knobs of the lighting stage. [`Default`] gives the documented defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct LightSettings {
    /// Luxels per map unit along each axis of a face (default 2).
    pub luxels_per_unit: f64,
    /// Largest page edge, as a power of two (default 9: 512 luxels; at most 12).
    pub max_page_log2: u8,
    /// Ambient light in luxel units (K2: 255 = a white light at unit distance), added to every
    /// static luxel and cube base light. Default `[8, 8, 8]` (≈ 3 %). The map model has no
    /// ambient setting yet; the compiler passes it here.
    pub ambient: [u8; 3],
    /// Emitter samples per axis of a light's non-zero [`Light::size`] (default 3: a light with
    /// a size in all three axes is 27 point emitters). Soft shadows; deterministic grid.
    pub emitter_grid: u32,
    /// How far shadow rays start off the surface, along its normal, map units (default 1/32, a
    /// quarter lattice unit).
    pub normal_offset: f64,
    /// How far inside a face's edges luxels are sampled, map units (default 1/32).
    pub edge_inset: f64,
    /// Ambient occlusion on luxels; `None` (default) = off.
    pub ao: Option<AoSettings>,
    /// Rays and distances of sun, sky, bounce and emission (the level says whether each is on).
    pub gather: GatherSettings,
}

impl Default for LightSettings {
    fn default() -> Self {
        Self {
            luxels_per_unit: 2.0,
            max_page_log2: 9,
            ambient: [8; 3],
            emitter_grid: 3,
            normal_offset: 1.0 / 32.0,
            edge_inset: 1.0 / 32.0,
            ao: None,
            gather: GatherSettings::default(),
        }
    }
}

impl LightSettings {
    /// The cheap settings of a draft: one emitter sample per light, no ambient occlusion, draft
    /// sun, sky and bounce gathering ([`GatherSettings::draft`]); the same luxel layout.
    pub fn draft(&self) -> LightSettings {
        LightSettings { emitter_grid: 1, ao: None, gather: self.gather.draft(), ..self.clone() }
    }

    /// The page edge cap in luxels, or an error if the cap exceeds 2^12.
    pub fn max_page_edge(&self) -> Result<u32, LightError> {
        if self.max_page_log2 > pmf::MAX_LIGHTMAP_EXP {
            return Err(LightError::PageSize(self.max_page_log2));
        }
        Ok(1 << self.max_page_log2)
    }

    /// The ambient colour as floats in luxel units.
    pub fn ambient_f(&self) -> DVec3 {
        DVec3::new(f64::from(self.ambient[0]), f64::from(self.ambient[1]), f64::from(self.ambient[2]))
    }
}

/// Where a baked light goes (docs/spec/PMF-NOTES.md K3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BakedMode {
    /// Into the static lightmaps and cube base light.
    Static,
    /// Into dynamic light layers; the chunk's "Dynamic light" record.
    Dynamic(pmf::DynamicLight),
    /// Into per-vertex multipliers; the chunk's "Fast light" record.
    Fast(pmf::FastLight),
}

/// A light prepared for evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneLight {
    /// The light's id in its level.
    pub id: LightId,
    /// The editor's light.
    pub light: Light,
    /// Where it is baked.
    pub mode: BakedMode,
    /// Emitter sample points (world space): the light's position, or a regular grid over its
    /// [`Light::size`] box centred on the position.
    pub emitters: Vec<DVec3>,
    /// Distance from the position beyond which nothing is lit: range + half the size's diagonal.
    pub reach: f64,
    /// Spot cone: unit axis, cosine of the full angle, cosine of the start of the fade.
    spot: Option<(DVec3, f64, f64)>,
}

impl SceneLight {
    /// Prepares `light`, or `None` if the bake makes nothing of it (realtime, or unable to light
    /// anything: range, intensity or colour zero or negative).
    pub fn new(id: LightId, light: &Light, emitter_grid: u32) -> Option<SceneLight> {
        let mode = match light.mode {
            LightMode::Static => BakedMode::Static,
            LightMode::Dynamic { .. } => BakedMode::Dynamic(light.dynamic_record()?),
            LightMode::Fast { .. } => BakedMode::Fast(light.fast_record()?),
            LightMode::Realtime(_) => return None,
        };
        if !(light.range > 0.0 && light.intensity > 0.0) || light.color == [0; 3] {
            return None;
        }
        let pos = light.position.as_dvec3();
        let size = light.size.as_dvec3().max(DVec3::ZERO);
        let counts = size.to_array().map(|s| if s > 0.0 { emitter_grid.max(1) } else { 1 });
        let mut emitters = Vec::with_capacity((counts[0] * counts[1] * counts[2]) as usize);
        let frac = |k: u32, n: u32| (f64::from(k) + 0.5) / f64::from(n) - 0.5;
        for z in 0..counts[2] {
            for y in 0..counts[1] {
                for x in 0..counts[0] {
                    let f = DVec3::new(frac(x, counts[0]), frac(y, counts[1]), frac(z, counts[2]));
                    emitters.push(pos + size * f);
                }
            }
        }
        let spot = match light.shape {
            LightShape::Spot { direction, cone_radius } if cone_radius < 180.0 => {
                let axis = direction.as_dvec3().try_normalize()?;
                let outer = f64::from(cone_radius).to_radians();
                Some((axis, outer.cos(), (outer * SPOT_INNER).cos()))
            }
            // Area lights: the six angles have no agreed meaning yet; the emitter is the size box.
            _ => None,
        };
        Some(SceneLight {
            id,
            light: light.clone(),
            mode,
            emitters,
            reach: f64::from(light.range) + 0.5 * size.length(),
            spot,
        })
    }

    /// The light's colour as `0..=1` factors.
    pub fn color(&self) -> DVec3 {
        let c = self.light.color;
        DVec3::new(f64::from(c[0]), f64::from(c[1]), f64::from(c[2])) / 255.0
    }

    /// Whether the sphere of [`reach`](Self::reach) meets the box `[lo, hi]` (world space).
    pub fn reaches_box(&self, lo: DVec3, hi: DVec3) -> bool {
        let p = self.light.position.as_dvec3();
        p.clamp(lo, hi).distance_squared(p) < self.reach * self.reach
    }
}

/// Fraction of a spot cone's half-angle lit at full strength; the rest fades out.
const SPOT_INNER: f64 = 0.8;

/// Distances below this (map units) are treated as this, so a luxel touching a light stays finite.
const MIN_DISTANCE: f64 = 1.0 / 16.0;

/// Where the falloff window starts, as a fraction of the range.
const FADE_START: f64 = 0.75;

fn smoothstep(e0: f64, e1: f64, x: f64) -> f64 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Distance attenuation of a light of range `range` at distance `d` (map units): exactly
/// `1 / d²` up to `0.75 · range`, then multiplied by a smoothstep fading from 1 to exactly 0 at
/// `range` (continuous, with a continuous slope: no visible ring). Distances under 1/16 unit
/// count as 1/16.
pub fn falloff(d: f64, range: f64) -> f64 {
    if d.is_nan() || d >= range {
        return 0.0;
    }
    let window = 1.0 - smoothstep(FADE_START * range, range, d);
    let d = d.max(MIN_DISTANCE);
    window / (d * d)
}

/// A spot cone's factor for a direction at cosine `cos_angle` from its axis: 1 within 80 % of
/// the half-angle, 0 outside the cone, a smoothstep in between.
pub fn spot_factor(cos_angle: f64, cos_outer: f64, cos_inner: f64) -> f64 {
    if cos_inner <= cos_outer {
        return f64::from(u8::from(cos_angle >= cos_outer));
    }
    smoothstep(cos_outer, cos_inner, cos_angle)
}

/// The lights of one level, ready to be evaluated against its geometry.
#[derive(Debug, Clone)]
pub struct LightScene<'a> {
    pub(super) level: &'a Level,
    pub(super) frame: LevelFrame,
    pub(super) settings: LightSettings,
    pub(super) lights: Vec<SceneLight>,
    /// Fixed hemisphere directions for ambient occlusion, around +Z.
    ao_dirs: Vec<DVec3>,
    /// Sun, sky, bounce and emission ([`super::gather`]).
    pub(super) far: Far,
    /// A ray grid per stored chunk rays entered, built at the first ray: every ray of a chunk's
    /// bake walks the same few chunks, and the grid's DDA is much cheaper than an octree descent
    /// per ray.
    pub(super) grids: RefCell<ChunkGrids<'a>>,
    /// The chunks each point's rays entered, while a bake keeps a memo ([`super::memo`]).
    pub(super) track: RefCell<Tracker>,
}

impl<'a> LightScene<'a> {
    /// Gathers the baked lights (static, dynamic, fast) of `level`, in id order, and its sun,
    /// sky and bounce settings, without a library: every face reflects a mid grey, none emits,
    /// none is a skybox (see [`Self::with_library`]).
    pub fn new(level: &'a Level, settings: LightSettings) -> Self {
        Self::build(level, None, settings)
    }

    /// [`new`](Self::new) with the materials of `library`: their colours are what bounced light
    /// reflects, their emission lights the level, and
    /// skybox materials count as open sky.
    pub fn with_library(level: &'a Level, library: &Library, settings: LightSettings) -> Self {
        Self::build(level, Some(library), settings)
    }

    fn build(level: &'a Level, library: Option<&Library>, settings: LightSettings) -> Self {
        let lights =
            level.objects.lights().iter().filter_map(|(id, l)| SceneLight::new(id, l, settings.emitter_grid)).collect();
        let ao_dirs = settings.ao.map(|ao| hemisphere(ao.rays)).unwrap_or_default();
        let far = Far::new(level, library, &settings.gather);
        Self {
            level,
            frame: level.frame(),
            settings,
            lights,
            ao_dirs,
            far,
            grids: RefCell::new(ChunkGrids::new(level)),
            track: RefCell::default(),
        }
    }

    /// [`with_library`](Self::with_library) for level `level` of `map`.
    pub fn from_level(map: &'a Map, level: usize, settings: LightSettings) -> Result<Self, LightError> {
        let l = map.levels.get(level).ok_or(LightError::NoLevel(level))?;
        Ok(Self::with_library(l, &map.library, settings))
    }

    /// The level lit.
    pub fn level(&self) -> &'a Level {
        self.level
    }

    /// The settings.
    pub fn settings(&self) -> &LightSettings {
        &self.settings
    }

    /// The baked lights, in id order.
    pub fn lights(&self) -> &[SceneLight] {
        &self.lights
    }

    /// The light with this id, if it is baked.
    pub fn light(&self, id: LightId) -> Option<&SceneLight> {
        self.lights.iter().find(|l| l.id == id)
    }

    /// Whether nothing solid lies on the segment from `from` to `to` (world space, map units).
    ///
    /// Uses [`Level::ray_cast`] across chunks. A cube with pushed corners that contains the
    /// start is stepped out of first (the ray cast sees such cubes as whole boxes, and a luxel
    /// on a slope lies inside its own cube's box). Records the chunks the ray enters, like every
    /// ray of the bake ([`super::gather`]).
    pub fn visible(&self, from: DVec3, to: DVec3) -> bool {
        let origin = self.frame.lattice_from_world_f(from);
        let delta = self.frame.lattice_from_world_f(to) - origin;
        let Some(dir) = delta.try_normalize() else { return true };
        self.trace(origin, dir, delta.length(), &mut Start::Unknown).0.is_none()
    }

    /// How much of `light` reaches `point`, in luxel units for a *white* light (its intensity
    /// included, its colour not): `255 · intensity · Σ cosθ · falloff · spot · visible / n` over
    /// the light's `n` emitter samples. `normal`: the surface's unit normal (Lambert cosine,
    /// shadow rays start [`LightSettings::normal_offset`] off the surface); `None` for a point in
    /// the air (cube centres: no cosine, no offset).
    pub fn amount(&self, light: &SceneLight, point: DVec3, normal: Option<DVec3>) -> f64 {
        let range = f64::from(light.light.range);
        let start = normal.map_or(point, |n| point + n * self.settings.normal_offset);
        let mut sum = 0.0;
        for &e in &light.emitters {
            let to = e - point;
            let d = to.length();
            if d.is_nan() || d >= range {
                continue;
            }
            let dir = if d > 0.0 { to / d } else { normal.unwrap_or(DVec3::Y) };
            let cos = normal.map_or(1.0, |n| n.dot(dir));
            if cos <= 0.0 {
                continue;
            }
            let spot = light.spot.map_or(1.0, |(axis, outer, inner)| spot_factor(axis.dot(-dir), outer, inner));
            let f = cos * falloff(d, range) * spot;
            if f > 0.0 && self.visible(start, e) {
                sum += f;
            }
        }
        255.0 * f64::from(light.light.intensity) * sum / light.emitters.len() as f64
    }

    /// `light`'s RGB contribution at `point` in luxel units (K2): [`amount`](Self::amount) times
    /// the light's colour.
    pub fn irradiance(&self, point: DVec3, normal: Option<DVec3>, light: &SceneLight) -> DVec3 {
        let a = self.amount(light, point, normal);
        if a == 0.0 { DVec3::ZERO } else { light.color() * a }
    }

    /// The ambient term at a surface point: [`LightSettings::ambient`], times the unoccluded
    /// fraction of the hemisphere when ambient occlusion is on.
    pub fn ambient(&self, point: DVec3, normal: DVec3) -> DVec3 {
        let amb = self.settings.ambient_f();
        let Some(ao) = self.settings.ao else { return amb };
        if amb == DVec3::ZERO || self.ao_dirs.is_empty() {
            return amb;
        }
        let (t, b) = normal.any_orthonormal_pair();
        let start = point + normal * self.settings.normal_offset;
        let open = self
            .ao_dirs
            .iter()
            .filter(|d| {
                let dir = t * d.x + b * d.y + normal * d.z;
                self.visible(start, start + dir * ao.distance)
            })
            .count();
        amb * (open as f64 / self.ao_dirs.len() as f64)
    }
}
