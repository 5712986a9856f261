//! PMF 0.0 compiled maps (seed 000 and shared/spec/PMF-NOTES.md).

pub mod entity;
pub mod error;
pub mod strings;

pub use error::{WriteError, WriteResult};
