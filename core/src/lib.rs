//! `pmfedit-core`: the editable map model and the PlatinumSrc file formats.
//!
//! No GUI and no threads live here (see `ARCHITECTURE.md`): work that may run in parallel is
//! handed to the caller's [`jobs::Jobs`].

pub mod edit;
pub mod format;
pub mod fuzzing;
pub mod import;
pub mod jobs;
pub mod map;
pub mod project;
pub mod sample;
