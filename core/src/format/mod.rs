//! File formats: bounded binary I/O, LZ4 frames, and the PlatinumSrc formats built on them.

pub mod bin;
pub mod lz4_block;
pub mod lz4_hc;
mod lz4_seq;
pub mod lz4f;
pub mod m3d;
pub mod paf;
pub mod pmf;
pub mod ptf;
pub mod voxelplay;
