//! Importing foreign files into a [`Map`](crate::map::Map), and exporting parts of it.
//!
//! Every importer goes through the checked map APIs ([`Level::fill_box`](crate::map::Level) and
//! friends, [`Library::add_unique`](crate::map::Library::add_unique)) and returns an
//! [`ImportReport`]: what it placed, the library records it matched or created, the chunks it
//! changed (for the editor's dirty tracking and undo) and resources that the compiler should
//! embed in the map's archive.

pub mod m3d;
pub mod voxelplay;

use std::fmt;

use crate::map::coords::LatticeBox;
use crate::map::level::{ChunkChanges, LevelError};
use crate::map::library::{EntityId, LibraryError};

/// A file an import brings along, to be embedded in the map's PAF archive at `path`
/// (e.g. `models/tree.m3d`, `textures/tree_0.png`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImportedResource {
    /// Archive path, `/`-separated.
    pub path: String,
    pub bytes: Vec<u8>,
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImportReport {
    /// The source format, in words.
    pub source: String,
    /// Voxels turned into solid cubes.
    pub voxels_placed: u64,
    /// Voxels that cleared the map to air.
    pub voxels_cleared: u64,
    /// Materials the import reused, by name.
    pub materials_matched: Vec<String>,
    /// Materials the import added to the library, by name.
    pub materials_created: Vec<String>,
    /// Triangles of imported meshes.
    pub triangles: u64,
    /// Entities placed.
    pub entities: Vec<EntityId>,
    /// Files to embed in the map's archive.
    pub resources: Vec<ImportedResource>,
    /// Lattice box of the cubes written (placed or cleared), if any.
    pub bounds: Option<LatticeBox>,
    /// The chunks changed.
    pub changes: ChunkChanges,
    /// Things the import skipped or changed on the way.
    pub warnings: Vec<String>,
}

impl fmt::Display for ImportReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "source: {}", self.source)?;
        writeln!(f, "voxels placed: {}", self.voxels_placed)?;
        writeln!(f, "voxels cleared: {}", self.voxels_cleared)?;
        if let Some(b) = self.bounds {
            writeln!(f, "lattice bounds: {:?}..{:?}", b.min.to_array(), b.max.to_array())?;
        }
        writeln!(f, "chunks changed: {}", self.changes.len())?;
        writeln!(f, "materials matched: {} {:?}", self.materials_matched.len(), self.materials_matched)?;
        writeln!(f, "materials created: {} {:?}", self.materials_created.len(), self.materials_created)?;
        writeln!(f, "triangles: {}", self.triangles)?;
        writeln!(f, "entities placed: {}", self.entities.len())?;
        writeln!(f, "resources: {}", self.resources.len())?;
        for r in &self.resources {
            writeln!(f, "  {} ({} bytes)", r.path, r.bytes.len())?;
        }
        for w in &self.warnings {
            writeln!(f, "warning: {w}")?;
        }
        Ok(())
    }
}

/// Why an import or export failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImportError {
    /// The map has no level with this index.
    #[error("the map has no level {0}")]
    NoLevel(usize),
    /// The source file could not be read.
    #[error(transparent)]
    M3d(#[from] crate::format::m3d::M3dError),
    /// A level edit was refused.
    #[error(transparent)]
    Level(#[from] LevelError),
    /// A library change was refused.
    #[error(transparent)]
    Library(#[from] LibraryError),
    /// The export box holds no solid cube: there is nothing to write (and a Model 3D file with
    /// no voxel types is invalid).
    #[error("the box holds no cubes")]
    NoCubes,
    /// The request cannot be carried out (nothing to import, a box outside the grid, …).
    #[error("{0}")]
    Invalid(String),
}
