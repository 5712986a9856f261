//! The editable map: metadata, map-wide libraries and environments, and levels made of chunked
//! octrees with their lights, entities and regions.
//!
//! Decisions (issue 3): libraries (materials, physics and sound materials) and environments are
//! map-wide and exported into every level; lights, entities and regions belong to a level.

pub mod library;
pub mod octree;

pub mod coords;
pub mod ids;
pub mod level;

pub use level::Level;
pub use library::Library;

use serde::{Deserialize, Serialize};

/// Most gamemodes a map may have (PMF-NOTES S4).
pub const MAX_GAMEMODES: usize = 32;
/// Longest gamemode name, in bytes.
pub const MAX_GAMEMODE_LEN: usize = 15;

/// A map's descriptive metadata (the PMF header).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MapMeta {
    pub name: String,
    pub description: String,
    pub authors: String,
    /// At most [`MAX_GAMEMODES`], each at most [`MAX_GAMEMODE_LEN`] bytes, unique.
    pub gamemodes: Vec<String>,
}

/// Why metadata was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetaError {
    #[error("a map has at most {MAX_GAMEMODES} gamemodes ({0} given)")]
    TooManyGamemodes(usize),
    #[error("gamemode name {0:?} is longer than {MAX_GAMEMODE_LEN} bytes")]
    GamemodeTooLong(String),
    #[error("gamemode name is empty")]
    GamemodeEmpty,
    #[error("gamemode {0:?} is listed twice")]
    GamemodeDuplicate(String),
    #[error("{0} contains a NUL character")]
    Nul(&'static str),
}

impl MapMeta {
    /// Checks the PMF limits: gamemode count and name lengths, no NUL anywhere.
    pub fn validate(&self) -> Result<(), MetaError> {
        for (what, s) in [("name", &self.name), ("description", &self.description), ("authors", &self.authors)] {
            if s.contains('\0') {
                return Err(MetaError::Nul(what));
            }
        }
        if self.gamemodes.len() > MAX_GAMEMODES {
            return Err(MetaError::TooManyGamemodes(self.gamemodes.len()));
        }
        for (i, g) in self.gamemodes.iter().enumerate() {
            if g.is_empty() {
                return Err(MetaError::GamemodeEmpty);
            }
            if g.len() > MAX_GAMEMODE_LEN {
                return Err(MetaError::GamemodeTooLong(g.clone()));
            }
            if g.contains('\0') {
                return Err(MetaError::Nul("gamemode name"));
            }
            if self.gamemodes[..i].contains(g) {
                return Err(MetaError::GamemodeDuplicate(g.clone()));
            }
        }
        Ok(())
    }
}

/// The whole editable map.
#[derive(Debug, Clone)]
pub struct Map {
    pub meta: MapMeta,
    /// Map-wide libraries and environments.
    pub library: Library,
    /// At least one level.
    pub levels: Vec<Level>,
}

impl Map {
    /// A new map with the starter library and one empty level of 16-unit chunks.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            meta: MapMeta { name: name.into(), ..MapMeta::default() },
            library: Library::starter(),
            levels: vec![Level::new("main", 4).expect("4 is a valid chunk size")],
        }
    }

    /// An immutable copy for background work: chunks are shared (`Arc` clones, O(chunks)); an
    /// edit after the snapshot copies only the chunks it touches (copy-on-write).
    pub fn snapshot(&self) -> Map {
        self.clone()
    }
}
