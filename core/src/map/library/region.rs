//! Environment regions and load regions of a level (PMF "Environment region", "Region";
//! docs/spec/PMF-NOTES.md R1). Both are kept in **level space** (map units, relative to the center of the
//! level's center chunk, L4); the exporter moves them into the space of each chunk they go into.

use glam::{IVec3, Vec3};
use serde::{Deserialize, Serialize};

use super::environment::{EnvKind, EnvRef};
use super::error::{Checker, ItemKind, LibraryResult};
use super::table::named;
use crate::format::pmf;

/// Signs of the 8 corners of a hexahedron, in PMF order: (+X,+Y,+Z), (−X,+Y,+Z), (+X,+Y,−Z),
/// (−X,+Y,−Z), (+X,−Y,+Z), (−X,−Y,+Z), (+X,−Y,−Z), (−X,−Y,−Z) (docs/spec/PMF-NOTES.md C2 bit order).
pub const BOX_CORNER_SIGNS: [Vec3; 8] = [
    Vec3::new(1.0, 1.0, 1.0),
    Vec3::new(-1.0, 1.0, 1.0),
    Vec3::new(1.0, 1.0, -1.0),
    Vec3::new(-1.0, 1.0, -1.0),
    Vec3::new(1.0, -1.0, 1.0),
    Vec3::new(-1.0, -1.0, 1.0),
    Vec3::new(1.0, -1.0, -1.0),
    Vec3::new(-1.0, -1.0, -1.0),
];

/// A hexahedron in which an environment applies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvironmentRegion {
    /// Editor label (not exported; may be empty or shared).
    #[serde(default)]
    pub name: String,
    /// The environment, which also gives the region's kind.
    pub environment: EnvRef,
    /// Corners in level space, in [`BOX_CORNER_SIGNS`] order. Any hexahedron the corners describe
    /// is accepted (the engine decides what a non-convex one means).
    pub corners: [Vec3; 8],
}

impl EnvironmentRegion {
    /// An axis-aligned box region from `min` to `max`.
    pub fn from_box(environment: EnvRef, min: Vec3, max: Vec3) -> Self {
        let center = (min + max) * 0.5;
        let half = (max - min) * 0.5;
        Self { name: String::new(), environment, corners: BOX_CORNER_SIGNS.map(|s| center + s * half) }
    }

    /// The region's kind.
    pub fn kind(&self) -> EnvKind {
        self.environment.kind()
    }

    /// Smallest and largest corner coordinates.
    pub fn bounds(&self) -> (Vec3, Vec3) {
        let min = self.corners.iter().copied().fold(Vec3::INFINITY, Vec3::min);
        let max = self.corners.iter().copied().fold(Vec3::NEG_INFINITY, Vec3::max);
        (min, max)
    }

    /// The centre of [`bounds`](Self::bounds): where the editor puts the region's handle.
    pub fn center(&self) -> Vec3 {
        let (min, max) = self.bounds();
        (min + max) * 0.5
    }

    /// The PMF record, corners moved by `-origin` (the center of the chunk it is exported into),
    /// naming the environment `environment_name`.
    pub fn to_pmf(&self, origin: Vec3, environment_name: &str) -> pmf::EnvironmentRegion {
        pmf::EnvironmentRegion {
            corners: self.corners.map(|c| (c - origin).to_array()),
            environment: environment_name.to_owned(),
        }
    }

    pub(super) fn check(&self) -> LibraryResult<()> {
        let c = Checker { kind: ItemKind::EnvironmentRegion, name: &self.name };
        c.text("name", &self.name)?;
        for corner in &self.corners {
            c.all_finite("corner", &corner.to_array())?;
        }
        Ok(())
    }
}

/// An axis-aligned box that keeps other chunks active while a player is inside it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadRegion {
    /// Editor label (not exported).
    pub name: String,
    /// (−X, −Y, −Z) corner, level space.
    pub min: Vec3,
    /// (+X, +Y, +Z) corner, level space.
    pub max: Vec3,
    /// Chunks to keep active, in signed chunk coordinates of the level (center chunk = 0).
    pub other_active_chunks: Vec<IVec3>,
}

impl LoadRegion {
    /// The centre of the box: where the editor puts the region's handle.
    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// The PMF record, corners moved by `-origin`; `chunk_index` maps the level's chunk coordinates
    /// to PMF chunk indices (`None` when out of the grid: the chunk is left out).
    pub fn to_pmf(&self, origin: Vec3, chunk_index: impl Fn(IVec3) -> Option<pmf::ChunkIndex>) -> pmf::Region {
        pmf::Region {
            max: (self.max - origin).to_array(),
            min: (self.min - origin).to_array(),
            other_chunks: self.other_active_chunks.iter().filter_map(|&c| chunk_index(c)).collect(),
        }
    }

    pub(super) fn check(&self) -> LibraryResult<()> {
        let c = Checker { kind: ItemKind::LoadRegion, name: &self.name };
        c.text("name", &self.name)?;
        c.all_finite("min corner", &self.min.to_array())?;
        c.all_finite("max corner", &self.max.to_array())?;
        if self.min.cmpgt(self.max).any() {
            return Err(
                c.range("min corner", format!("{} is above the max corner {} on some axis", self.min, self.max))
            );
        }
        Ok(())
    }
}

named!(EnvironmentRegion, LoadRegion);
