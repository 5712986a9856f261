//! The map's descriptive metadata ([`MapMeta`], the PMF header) and its PMF limits.

use serde::{Deserialize, Serialize};

/// Most gamemodes a map may have (docs/spec/PMF-NOTES.md S4).
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
