//! Drivers of the scripted command-line runs: [`screenshot`] (`--screenshot`) and
//! [`bench`](mod@bench) (`--bench-frames`); the walkthrough (`--walkthrough`) is
//! [`crate::walkthrough`]. Each is an [`app::Driver`](crate::app::Driver) that `main` gives the
//! app, working it through the same public fields and methods a test would; the app knows nothing
//! about them.

pub mod bench;
pub mod screenshot;

use std::path::{Path, PathBuf};

use eframe::egui;

use crate::app::App;

/// A scripted run gives up (and closes the window) after this long.
pub const GIVE_UP_S: u64 = 600;

/// Why a screenshot could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PngError {
    /// The captured image's pixels do not fill its size.
    #[error("bad screenshot size {w}×{h}")]
    BadSize { w: usize, h: usize },
    /// Encoding or writing the PNG failed.
    #[error("{}: {source}", path.display())]
    Write { path: PathBuf, source: image::ImageError },
}

/// Writes a captured window as a PNG.
pub fn save_png(img: &egui::ColorImage, path: &Path) -> Result<(), PngError> {
    let [w, h] = img.size;
    let bytes: Vec<u8> = img.pixels.iter().flat_map(|c| c.to_array()).collect();
    let buf = image::RgbaImage::from_raw(w as u32, h as u32, bytes).ok_or(PngError::BadSize { w, h })?;
    buf.save(path).map_err(|source| PngError::Write { path: path.to_owned(), source })
}

/// Whether the first load is on screen: every chunk fully baked and its mesh uploaded.
pub fn loaded(app: &App) -> bool {
    let state = &app.state;
    state.bake.is_settled() && !state.bake.slots().is_empty() && app.viewport.uploads_waiting() == 0
}
