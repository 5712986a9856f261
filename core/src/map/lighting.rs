//! Sun, sky and bounced light of a level (docs/spec/PMF-NOTES.md K5): compile settings stored in
//! the project. PMF has no record for them; the bake turns them into the static lightmaps and the
//! air cells' base light, in the same luxel units as lights (K2: 255 = a white light of intensity
//! 1 at unit distance, seen head-on).
//!
//! Directions: Y is up. The sun's azimuth is the compass direction of the sun seen from the map,
//! in degrees: 0 = towards +Z, 90 = towards +X; its elevation is its height above the horizon.

use glam::Vec3;
use serde::{Deserialize, Serialize};

/// Most light bounces a level may ask for (each one multiplies the bake's work).
pub const MAX_BOUNCES: u8 = 4;

/// Largest sun or sky intensity accepted (a sun of 64 saturates every luxel it touches).
pub const MAX_INTENSITY: f32 = 64.0;

/// Largest apparent diameter of the sun's disc, degrees.
pub const MAX_SUN_ANGLE: f32 = 30.0;

/// The sun: parallel light from one direction, shadowed by everything solid up to the top of the
/// level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Sun {
    /// Compass direction of the sun, degrees: 0 = towards +Z, 90 = towards +X.
    pub azimuth: f32,
    /// Height above the horizon, degrees; at 0 or below there is no sunlight.
    pub elevation: f32,
    /// RGB colour.
    pub color: [u8; 3],
    /// A surface facing the sun, unshadowed, receives `255 · intensity · colour / 255` (K2);
    /// 0 turns the sun off.
    pub intensity: f32,
    /// Apparent diameter of the sun's disc, degrees: how soft its shadows are (0 = hard).
    pub angle: f32,
}

impl Default for Sun {
    /// An afternoon sun from the west-north-west, high enough that a building's shadow stays
    /// near it.
    fn default() -> Self {
        Self { azimuth: 300.0, elevation: 50.0, color: [255, 244, 224], intensity: 0.75, angle: 2.0 }
    }
}

impl Sun {
    /// Whether the sun lights anything: a positive intensity and colour, above the horizon.
    pub fn is_on(&self) -> bool {
        self.intensity > 0.0 && self.color != [0; 3] && self.elevation > 0.0
    }

    /// The unit vector from the map towards the sun, `None` when [`Self::is_on`] is false.
    pub fn direction(&self) -> Option<Vec3> {
        if !self.is_on() {
            return None;
        }
        let (az, el) = (self.azimuth.to_radians(), self.elevation.min(90.0).to_radians());
        Some(Vec3::new(az.sin() * el.cos(), el.sin(), az.cos() * el.cos()).normalize())
    }
}

/// The sky: a dome of uniform light. A surface receives it in proportion to the part of its
/// hemisphere that sees the open sky (cosine-weighted).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Sky {
    /// RGB colour.
    pub color: [u8; 3],
    /// A surface facing the open sky with nothing in view receives `255 · intensity · colour /
    /// 255` (K2); 0 turns the sky off.
    pub intensity: f32,
}

impl Default for Sky {
    /// A light blue daytime sky.
    fn default() -> Self {
        Self { color: [150, 190, 255], intensity: 0.3 }
    }
}

impl Sky {
    /// Whether the sky lights anything.
    pub fn is_on(&self) -> bool {
        self.intensity > 0.0 && self.color != [0; 3]
    }
}

/// Sun, sky and bounced light of a level. [`Default`] is daylight (sun, sky, one bounce): new
/// maps, the demo, and projects saved before these settings existed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LevelLighting {
    pub sun: Sun,
    pub sky: Sky,
    /// How many times light bounces off surfaces (0 = direct light only), at most
    /// [`MAX_BOUNCES`]. Each bounce reflects the material's colour times its texture's average.
    pub bounces: u8,
}

impl Default for LevelLighting {
    fn default() -> Self {
        Self { sun: Sun::default(), sky: Sky::default(), bounces: 1 }
    }
}

/// Why lighting settings were refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LightingError {
    #[error("{what} is {value}, expected a number in {min}..={max}")]
    OutOfRange { what: &'static str, value: f32, min: f32, max: f32 },
    #[error("bounces is {0}, at most {MAX_BOUNCES} are allowed")]
    Bounces(u8),
}

impl LevelLighting {
    /// No sun, no sky, no bounce: only the level's lights (and the compiler's ambient term).
    pub fn none() -> Self {
        Self {
            sun: Sun { intensity: 0.0, ..Sun::default() },
            sky: Sky { intensity: 0.0, ..Sky::default() },
            bounces: 0,
        }
    }

    /// Whether the bake traces rays beyond the level's lights for this level: sun, sky or bounce
    /// (emissive surfaces are found by the same rays).
    pub fn traces_rays(&self) -> bool {
        self.sun.is_on() || self.sky.is_on() || self.bounces > 0
    }

    /// Checks every number: finite and in range.
    pub fn validate(&self) -> Result<(), LightingError> {
        let range = |what, value: f32, min, max| {
            if value.is_finite() && (min..=max).contains(&value) {
                Ok(())
            } else {
                Err(LightingError::OutOfRange { what, value, min, max })
            }
        };
        range("sun azimuth", self.sun.azimuth, -360.0, 360.0)?;
        range("sun elevation", self.sun.elevation, -90.0, 90.0)?;
        range("sun intensity", self.sun.intensity, 0.0, MAX_INTENSITY)?;
        range("sun angle", self.sun.angle, 0.0, MAX_SUN_ANGLE)?;
        range("sky intensity", self.sky.intensity, 0.0, MAX_INTENSITY)?;
        if self.bounces > MAX_BOUNCES {
            return Err(LightingError::Bounces(self.bounces));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sun_direction_follows_azimuth_and_elevation() {
        let sun = |azimuth, elevation| Sun { azimuth, elevation, ..Sun::default() };
        assert!(sun(0.0, 90.0).direction().unwrap().abs_diff_eq(Vec3::Y, 1e-6));
        assert!(sun(0.0, 0.5).direction().unwrap().z > 0.99);
        assert!(sun(90.0, 0.5).direction().unwrap().x > 0.99);
        assert!(sun(270.0, 45.0).direction().unwrap().abs_diff_eq(Vec3::new(-1.0, 1.0, 0.0).normalize(), 1e-6));
        assert_eq!(sun(0.0, 0.0).direction(), None, "at the horizon");
        assert_eq!(Sun { intensity: 0.0, ..Sun::default() }.direction(), None);
    }

    #[test]
    fn defaults_are_daylight_and_none_is_dark() {
        let d = LevelLighting::default();
        assert!(d.sun.is_on() && d.sky.is_on() && d.bounces == 1 && d.traces_rays());
        assert_eq!(d.validate(), Ok(()));
        let n = LevelLighting::none();
        assert!(!n.sun.is_on() && !n.sky.is_on() && !n.traces_rays());
        assert_eq!(n.validate(), Ok(()));
    }

    #[test]
    fn validate_names_the_bad_number() {
        let mut l = LevelLighting::default();
        l.sun.intensity = f32::NAN;
        assert!(l.validate().unwrap_err().to_string().contains("sun intensity"));
        l = LevelLighting { bounces: 9, ..LevelLighting::default() };
        assert_eq!(l.validate(), Err(LightingError::Bounces(9)));
        l = LevelLighting::default();
        l.sky.intensity = -1.0;
        assert!(l.validate().unwrap_err().to_string().contains("sky intensity"));
    }

    #[test]
    fn missing_fields_take_the_defaults() {
        let l: LevelLighting = ron::from_str("(sun: (elevation: 30.0))").unwrap();
        assert_eq!(l.sun.elevation, 30.0);
        assert_eq!(l.sun.azimuth, Sun::default().azimuth);
        assert_eq!(l.sky, Sky::default());
        assert_eq!(l.bounces, 1);
    }
}
