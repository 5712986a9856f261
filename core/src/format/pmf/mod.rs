//! PMF 0.0 compiled maps (seed 000 and `docs/spec/PMF-NOTES.md`).
//!
//! [`read`] and [`write`] convert between bytes and [`File`]; `read.rs` and `write.rs` mirror each
//! other record by record.

pub mod entity;
pub mod error;
pub mod query;
pub mod read;
pub mod strings;
pub mod types;
pub mod write;

#[cfg(test)]
mod tests;

pub use crate::format::lz4_block::Compression;
pub use error::{StreamError, WriteError, WriteResult};
pub use query::{CubeSet, LeafAt, VisibleSet, leaf_at, visible_from};
pub use read::read;
pub use types::*;
pub use write::{
    ChunkEncoder, ChunkStream, EncodedChunk, FileBytes, chunk_blocks, encode_chunk, write, write_as, write_with_chunks,
};
