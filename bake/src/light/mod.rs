//! The lighting stage of the compiler: lightmap patches and pages, direct lighting with shadows,
//! dynamic light layers, fast light vertex multipliers and cube lighting data (docs/spec/PMF-NOTES.md K1–K4).
//!
//! Everything here is a pure, single-threaded function of its inputs, so the same input gives the
//! same bytes whatever the caller's thread count (X1). It does not know how faces are meshed: the
//! mesher hands over [`SurfaceFace`]s (planar convex polygons in world space) and, for fast
//! lights, the chunk's vertex array as [`LitVertex`]es.
//!
//! # Pipeline for one chunk
//! 1. [`chunk_light_deps`]: which lights can touch the chunk (the scheduler re-bakes the chunk
//!    when one of them changes).
//! 2. [`bake_chunk`] (or its parts): [`plan_patches`] gives each face a luxel grid, [`pack`] puts
//!    the grids on square pages, then every luxel, vertex and air cell is lit by a
//!    [`LightScene`]. The result, [`ChunkLighting`], holds the PMF records and, per face, the
//!    [`Placement`] the mesher uses for the vertices' lightmap UVs ([`FaceLightmap::uv_at`]).
//!    [`bake_chunk_memo`] does the same from the chunk's last [`LightMemo`]: the sun, sky and
//!    bounce light of the points whose rays entered no changed chunk is taken, not traced.
//! 3. [`compact_uniform`]: a face whose patch came out one colour keeps one luxel of it (a cube
//!    whose faces all did, one luxel of the chunk's palette page), so uniform light costs neither
//!    luxels nor distinct vertex UVs.
//!
//! # Decisions
//! - **Density:** [`LightSettings::luxels_per_unit`], default 2 luxels per map unit.
//! - **Patches and padding:** a face's patch is a grid of luxel *centres* spanning the face's
//!   extent in its plane, first and last centres on the face's edges; the patch therefore sticks
//!   out half a luxel beyond the face on every side. The face's lightmap UVs run between the
//!   centres of its outer luxels, so bilinear filtering never reads a neighbour's luxel and
//!   patches can be packed edge to edge without a gutter. Luxels are *sampled* at points clamped
//!   into the face, inset by [`LightSettings::edge_inset`], so edge luxels never sample inside the
//!   neighbouring wall. See [`plan_patches`].
//! - **Pages:** shelf packing, sorted by height, width, face id; pages at most
//!   `2^max_page_log2` luxels wide (default 512), each shrunk to the smallest power of two that
//!   holds its patches. At most 255 pages per chunk. See [`pack`].
//! - **Falloff:** exact inverse square up to 3/4 of the light's range, then faded with a
//!   smoothstep to exactly 0 at the range (no step, continuous slope). See [`falloff`].
//! - **K2 scaling:** a luxel value is `colour/255 · intensity · 255 · cosθ · falloff(d)`, so a
//!   white light of intensity 1 seen head-on at one map unit gives 255. Values are rounded and
//!   clamped to `0..=255`.
//! - **Ambient:** [`LightSettings::ambient`], in luxel units, added to every static luxel and
//!   every cube base light (default 8, ≈ 3 %), optionally attenuated by ambient occlusion on
//!   luxels (off by default).
//! - **Dynamic and fast lights:** see [`bake_chunk`] for what goes where and in which units.

mod bake;
mod compact;
mod eval;
mod far_rays;
mod gather;
mod grids;
mod memo;
mod pack;
mod patch;
mod track;

#[cfg(test)]
mod tests;

pub use bake::{
    ChunkInput, ChunkLighting, FaceLightmap, LitVertex, bake_chunk, bake_chunk_draft, bake_chunk_memo,
    chunk_light_deps, decode_fast_ranges, encode_fast_ranges,
};
pub use compact::compact_uniform;
pub use eval::{AoSettings, BakedMode, LightScene, LightSettings, SceneLight, falloff, spot_factor};
pub use gather::GatherSettings;
pub use memo::{DEFAULT_MEMO_POINTS, LightCache, LightMemo};
pub use pack::{LuxelRect, MIN_TIGHT_PAGE_LOG2, Packing, Page, Placement, pack, pack_tight};
pub use patch::{Patch, SurfaceFace, plan_patches};

use std::fmt;

/// Why the lighting stage refused its input.
#[derive(Debug, Clone, PartialEq)]
pub enum LightError {
    /// A face has fewer than 3 corners, or non-finite coordinates, or no usable normal.
    BadFace {
        /// The face's id.
        id: u32,
        /// What is wrong.
        reason: &'static str,
    },
    /// A patch is larger than the page size cap (cannot happen for patches from
    /// [`plan_patches`] with the same cap).
    PatchTooBig {
        /// The face's id.
        id: u32,
        /// Patch width and height in luxels.
        size: (u32, u32),
        /// The page edge cap.
        max_edge: u32,
    },
    /// More than 255 lightmap pages would be needed for one chunk (the count is a `u8`, K1).
    TooManyPages(usize),
    /// More than 255 dynamic lights reach one chunk.
    TooManyDynamicLights(usize),
    /// More than 255 fast lights reach one chunk.
    TooManyFastLights(usize),
    /// The page size cap is above 2^12 (K1).
    PageSize(u8),
    /// The map has no level with this index.
    NoLevel(usize),
    /// The vertex array is longer than a `u32` can count.
    TooManyVertices(usize),
}

impl fmt::Display for LightError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadFace { id, reason } => write!(f, "face {id}: {reason}"),
            Self::PatchTooBig { id, size, max_edge } => {
                write!(f, "face {id}: luxel patch {}×{} is larger than the {max_edge}-luxel page cap", size.0, size.1)
            }
            Self::TooManyPages(n) => write!(f, "a chunk needs {n} lightmap pages; at most 255 are allowed"),
            Self::TooManyDynamicLights(n) => write!(f, "{n} dynamic lights reach a chunk; at most 255 are allowed"),
            Self::TooManyFastLights(n) => write!(f, "{n} fast lights reach a chunk; at most 255 are allowed"),
            Self::PageSize(n) => write!(f, "lightmap page size 2^{n} is above the 2^12 limit"),
            Self::NoLevel(i) => write!(f, "the map has no level {i}"),
            Self::TooManyVertices(n) => write!(f, "{n} vertices do not fit a u32 count"),
        }
    }
}

impl std::error::Error for LightError {}
