//! Model 3D (`.m3d` binary, `.a3d` ASCII): a reader for everything the editor imports (voxel
//! images, triangle meshes, materials, inlined PNG textures) and a writer for voxel models.
//!
//! Binary layout (seed `002`): an 8-byte file header `3DMO` + `u32` file size, an optional
//! uncompressed `PRVW` chunk, then the payload: either plain (it starts with `HEAD`) or one zlib
//! stream whose output starts with `HEAD` (there is no flag; the reference loader looks at the
//! first four bytes). The payload is `HEAD` (scale, the `types` bitfield, the string table) and
//! chunks `magic + u32 length (header included)` up to the `OMD3` end chunk.
//!
//! Decisions:
//! - **Widths.** Every index and coordinate is read with the width the header's [`Types`] gives
//!   it. An index type `11` means "not in the file": nothing is read and the value is undefined.
//!   Index values `0xFE`/`0xFF` (`0xFFFE`/`0xFFFF` for 16-bit) read as −2/−1, as in the reference
//!   loader; that is how voxel pixels encode *clear* and *unset*. A vertex or string index type
//!   `11`, and a voxel pixel type `10`, are refused, as the reference loader does.
//! - **Coordinates.** `int8`/`int16` coordinates are divided by 127/32767 (reference loader);
//!   `int8`/`int16` texture coordinates are unsigned and divided by 255/65535.
//! - **Colours** are [`Rgba`]: with a 1- or 2-byte colour index they come from `CMAP`; with a
//!   4-byte colour "index" the colour itself is stored inline (reference loader behaviour).
//! - **Limits.** Every count is checked against the bytes left before anything is allocated; a
//!   zlib payload may inflate to at most [`inflate_limit`] bytes (64× the compressed size, at least
//!   1 MiB, at most 256 MiB) and inflation stops there with [`M3dError::InflateLimit`]; a model
//!   holds at most [`MAX_VOXEL_CELLS`] voxel cells.
//! - **Strictness.** Structural problems are errors naming the chunk and the byte offset: a chunk
//!   running past the payload, a missing `OMD3`, a face pointing at a missing vertex, a voxel
//!   naming a missing type, RLE data that does not fill its block exactly. Cosmetic problems (a
//!   colour index past the colour map, an unknown material property, a second definition of a
//!   material) become [`Model::warnings`]. Bones and animations are counted or listed, not decoded;
//!   unknown chunks are listed in [`Model::skipped`].
//! - **Offsets.** In a compressed file, offsets in errors are offsets into the *inflated* payload
//!   (the section name says so); in an uncompressed file they are file offsets.

mod ascii;
mod model;
mod read;
mod write;

#[cfg(test)]
mod tests;

pub use self::ascii::read_a3d;
pub use self::model::*;
pub use self::read::read;
pub use self::write::write_voxel_model;

/// Reads a binary `.m3d` or an ASCII `.a3d` model, whichever the magic says.
pub fn read_any(bytes: &[u8]) -> Result<Model, M3dError> {
    if bytes.starts_with(b"3dmo") {
        let text = std::str::from_utf8(bytes).map_err(|e| M3dError::Ascii {
            line: bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1,
            reason: "the text is not valid UTF-8".into(),
        })?;
        read_a3d(text)
    } else {
        read(bytes)
    }
}

/// Whether `bytes` look like a Model 3D file (binary or ASCII).
pub fn is_m3d(bytes: &[u8]) -> bool {
    bytes.starts_with(b"3DMO") || bytes.starts_with(b"3dmodel")
}
