//! Files: native dialogs off the UI thread, typed-path prompts, recent files, imports and the
//! default asset pack's materials.
//!
//! - **Dialogs.** `rfd` runs on a worker thread and sends the chosen path back over a channel
//!   (then `request_repaint`). Without a desktop portal `rfd` answers `None` at once, which looks
//!   exactly like "cancel", so every dialog is a small window with a **typed-path field** beside
//!   "Browse…": the path can always be typed or pasted.
//! - **Recent files** are kept in eframe storage (`pmfedit.recent`, one path per line, newest
//!   first, at most [`MAX_RECENT`]).
//! - **Imports** (Model 3D, Voxel Play) are applied to a copy of the map; on success the copy
//!   replaces the map through one undoable edit (`Edit::ReplaceMap`, "Import NAME"): Ctrl+Z takes
//!   the whole import back. Unchanged chunks are shared between the two maps, so the undo entry
//!   costs little memory.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender, channel};

use eframe::egui;

use pmfedit_core::map::Map;
use pmfedit_core::map::library::{Material, PhysicsMaterial, SoundMaterial};

/// How many recent files are kept.
pub const MAX_RECENT: usize = 10;
/// Storage key of the recent files.
pub const RECENT_KEY: &str = "pmfedit.recent";

/// Recently opened or saved projects, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecentFiles {
    pub paths: Vec<PathBuf>,
}

impl RecentFiles {
    /// From the stored text (one path per line).
    pub fn parse(text: &str) -> Self {
        let mut r = Self::default();
        for line in text.lines().rev() {
            if !line.trim().is_empty() {
                r.push(PathBuf::from(line));
            }
        }
        r
    }

    /// The stored text.
    pub fn to_text(&self) -> String {
        self.paths.iter().map(|p| p.to_string_lossy().into_owned()).collect::<Vec<_>>().join("\n")
    }

    /// Moves `path` to the front.
    pub fn push(&mut self, path: PathBuf) {
        self.paths.retain(|p| *p != path);
        self.paths.insert(0, path);
        self.paths.truncate(MAX_RECENT);
    }

    /// Loads from eframe storage.
    pub fn load(storage: Option<&dyn eframe::Storage>) -> Self {
        storage.and_then(|s| s.get_string(RECENT_KEY)).map(|t| Self::parse(&t)).unwrap_or_default()
    }

    /// Saves to eframe storage.
    pub fn save(&self, storage: &mut dyn eframe::Storage) {
        storage.set_string(RECENT_KEY, self.to_text());
    }
}

/// What a file prompt is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAction {
    /// Open a project folder.
    Open,
    /// Save the map as a new project folder.
    SaveAs,
    /// Export a `.pmf`.
    Export,
    /// Import a Model 3D file.
    ImportM3d,
    /// Import a Voxel Play world save.
    ImportVoxelPlay,
}

impl FileAction {
    /// Window title.
    pub fn title(self) -> &'static str {
        match self {
            FileAction::Open => "Open project",
            FileAction::SaveAs => "Save project as",
            FileAction::Export => "Export PMF",
            FileAction::ImportM3d => "Import Model 3D",
            FileAction::ImportVoxelPlay => "Import Voxel Play world",
        }
    }

    /// The confirm button.
    pub fn verb(self) -> &'static str {
        match self {
            FileAction::Open => "Open",
            FileAction::SaveAs => "Save",
            FileAction::Export => "Export",
            FileAction::ImportM3d | FileAction::ImportVoxelPlay => "Import",
        }
    }

    /// What the path names, for the hint.
    pub fn hint(self) -> &'static str {
        match self {
            FileAction::Open => "project folder (holds map.ron)",
            FileAction::SaveAs => "new project folder",
            FileAction::Export => "file.pmf",
            FileAction::ImportM3d => "model.m3d",
            FileAction::ImportVoxelPlay => "world save (.bin)",
        }
    }

    /// Runs the native dialog (blocking; call on a worker thread).
    fn run_dialog(self, start: Option<PathBuf>) -> Option<PathBuf> {
        let mut d = rfd::FileDialog::new().set_title(self.title());
        if let Some(dir) = start {
            d = d.set_directory(dir);
        }
        match self {
            FileAction::Open | FileAction::SaveAs => d.pick_folder(),
            FileAction::Export => d.add_filter("PlatinumSrc map", &["pmf"]).set_file_name("map.pmf").save_file(),
            FileAction::ImportM3d => d.add_filter("Model 3D", &["m3d", "a3d"]).pick_file(),
            FileAction::ImportVoxelPlay => d.pick_file(),
        }
    }
}

/// An open file prompt: typed path plus "Browse…".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePrompt {
    pub action: FileAction,
    pub path: String,
    /// A native dialog is open for this prompt.
    pub browsing: bool,
}

/// What the user did in a prompt this frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptResult {
    Pending,
    Cancel,
    Confirm(PathBuf),
}

/// Native dialogs on worker threads.
pub struct Dialogs {
    tx: Sender<(FileAction, Option<PathBuf>)>,
    rx: Receiver<(FileAction, Option<PathBuf>)>,
}

impl Default for Dialogs {
    fn default() -> Self {
        let (tx, rx) = channel();
        Self { tx, rx }
    }
}

impl Dialogs {
    /// Opens the native dialog for `action` on a worker thread.
    pub fn browse(&self, ctx: &egui::Context, action: FileAction, start: Option<PathBuf>) {
        let tx = self.tx.clone();
        let ctx = ctx.clone();
        let spawned = std::thread::Builder::new().name("file dialog".into()).spawn(move || {
            let path = action.run_dialog(start);
            let _ = tx.send((action, path));
            ctx.request_repaint();
        });
        if spawned.is_err() {
            let _ = self.tx.send((action, None));
        }
    }

    /// Dialog answers that arrived (`None`: cancelled, or no dialog service).
    pub fn drain(&self) -> Vec<(FileAction, Option<PathBuf>)> {
        self.rx.try_iter().collect()
    }
}

impl FilePrompt {
    /// A prompt for `action` starting at `path`.
    pub fn new(action: FileAction, path: Option<&Path>) -> Self {
        Self { action, path: path.map(|p| p.to_string_lossy().into_owned()).unwrap_or_default(), browsing: false }
    }

    /// Shows the prompt window.
    pub fn show(&mut self, ctx: &egui::Context, dialogs: &Dialogs) -> PromptResult {
        let mut result = PromptResult::Pending;
        let mut open = true;
        egui::Window::new(self.action.title()).collapsible(false).resizable(false).open(&mut open).show(ctx, |ui| {
            ui.horizontal(|ui| {
                let l = ui.label("Path");
                let r = ui
                    .add(egui::TextEdit::singleline(&mut self.path).hint_text(self.action.hint()).desired_width(320.0))
                    .labelled_by(l.id);
                if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) && !self.path.trim().is_empty() {
                    result = PromptResult::Confirm(PathBuf::from(self.path.trim()));
                }
                if ui.add_enabled(!self.browsing, egui::Button::new("Browse…")).clicked() {
                    self.browsing = true;
                    let start = Path::new(self.path.trim()).parent().filter(|p| p.is_dir()).map(Path::to_owned);
                    dialogs.browse(ctx, self.action, start);
                }
            });
            if self.browsing {
                ui.weak("Waiting for the file dialog… (type the path if none appears)");
            }
            ui.horizontal(|ui| {
                if ui.add_enabled(!self.path.trim().is_empty(), egui::Button::new(self.action.verb())).clicked() {
                    result = PromptResult::Confirm(PathBuf::from(self.path.trim()));
                }
                if ui.button("Cancel").clicked() {
                    result = PromptResult::Cancel;
                }
            });
        });
        if !open {
            result = PromptResult::Cancel;
        }
        result
    }

    /// Takes a dialog answer for this prompt.
    pub fn answer(&mut self, action: FileAction, path: Option<PathBuf>) {
        if action == self.action {
            self.browsing = false;
            if let Some(p) = path {
                self.path = p.to_string_lossy().into_owned();
            }
        }
    }
}

/// Applies an import to a copy of `map`; returns the new map and a summary.
pub fn import(
    map: &Map,
    level: usize,
    action: FileAction,
    path: &Path,
    cube_log2: u8,
) -> Result<(Map, String), String> {
    use pmfedit_core::import;
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = map.clone();
    // The model's origin goes to the level's world origin (as `pmfc import` does).
    let origin = out.levels.get(level).ok_or_else(|| format!("there is no level {level}"))?.frame().origin_lattice();
    let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("import");
    let summary = match action {
        FileAction::ImportM3d => {
            let r = import::m3d::import_m3d(
                &mut out,
                level,
                &bytes,
                name,
                origin,
                cube_log2,
                import::m3d::ImportMode::Auto,
            )
            .map_err(|e| e.to_string())?;
            format!("{}: {} voxels placed, {} materials created", r.source, r.voxels_placed, r.materials_created.len())
        }
        FileAction::ImportVoxelPlay => {
            let save =
                pmfedit_core::format::voxelplay::read_world(&bytes, &Default::default()).map_err(|e| e.to_string())?;
            let r = import::voxelplay::import_world(&mut out, level, &save, origin, cube_log2)
                .map_err(|e| e.to_string())?;
            format!("Voxel Play: {} voxels in {} boxes, {} lights", r.voxels, r.boxes, r.lights.len())
        }
        _ => return Err("not an import".into()),
    };
    Ok((out, summary))
}

/// The default asset pack: (texture name, colour, extra settings) of `assets/textures/*.png`.
pub const DEFAULT_PACK: [(&str, [u8; 3]); 12] = [
    ("stone", [150, 150, 155]),
    ("brick", [170, 90, 70]),
    ("grass", [110, 170, 80]),
    ("dirt", [130, 95, 60]),
    ("wood", [160, 115, 70]),
    ("metal", [170, 175, 185]),
    ("water", [60, 120, 200]),
    ("sand", [220, 200, 150]),
    ("glass", [200, 230, 255]),
    ("tiles", [210, 210, 200]),
    ("concrete", [160, 160, 160]),
    ("lava", [230, 90, 20]),
];

/// A new map with the default asset pack's materials (textures `textures/<name>.png`), and
/// physics and sound materials to go with them.
pub fn new_map_with_pack(name: &str) -> Map {
    let mut map = Map::new(name);
    let lib = &mut map.library;
    let default_p = lib.physics_materials().ids().next().unwrap_or_default();
    let default_s = lib.sound_materials().ids().next().unwrap_or_default();
    let hard =
        lib.add(SoundMaterial { volume_dampening: 0.1, frequency_dampening: 0.05, ..SoundMaterial::new("hard") });
    let soft = lib.add(SoundMaterial { volume_dampening: 0.6, frequency_dampening: 0.5, ..SoundMaterial::new("soft") });
    let water_s =
        lib.add(SoundMaterial { volume_dampening: 0.7, frequency_dampening: 0.8, ..SoundMaterial::new("water") });
    let water_p = lib.add(PhysicsMaterial {
        not_solid: true,
        max_speed: 3.0,
        friction: 0.0,
        traction: 0.0,
        ..PhysicsMaterial::new("liquid")
    });
    let lava_p =
        lib.add(PhysicsMaterial { not_solid: true, max_speed: 1.0, damage_base: 20.0, ..PhysicsMaterial::new("lava") });
    let ice_p = lib.add(PhysicsMaterial { friction: 0.2, ..PhysicsMaterial::new("slippery") });
    let (hard, soft, water_s) = (hard.unwrap_or(default_s), soft.unwrap_or(default_s), water_s.unwrap_or(default_s));
    let (water_p, lava_p, ice_p) =
        (water_p.unwrap_or(default_p), lava_p.unwrap_or(default_p), ice_p.unwrap_or(default_p));
    for (name, color) in DEFAULT_PACK {
        let (physics, sound) = match name {
            "grass" | "dirt" | "sand" => (default_p, soft),
            "water" => (water_p, water_s),
            "lava" => (lava_p, water_s),
            "glass" | "tiles" => (ice_p, hard),
            _ => (default_p, hard),
        };
        let mut m = Material {
            texture: format!("textures/{name}.png"),
            color,
            shading: 255,
            ..Material::new(name, physics, sound)
        };
        match name {
            "water" => {
                m.transparent = true;
                m.liquid = true;
                m.alpha = 150;
                m.shine = 160;
                m.wave.scale = 0.15;
                m.wave.velocity = glam::Vec3::new(0.2, 0.0, 0.1);
                m.uv_scroll = glam::Vec2::new(0.02, 0.01);
            }
            "lava" => {
                m.liquid = true;
                m.emission = [200, 70, 10];
                m.wave.scale = 0.05;
                m.uv_scroll = glam::Vec2::new(0.005, 0.002);
            }
            "glass" => {
                m.transparent = true;
                m.alpha = 90;
                m.shine = 220;
            }
            "metal" => m.shine = 180,
            _ => {}
        }
        let _ = lib.add_unique(m);
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_files_are_newest_first_unique_and_bounded() {
        let mut r = RecentFiles::default();
        for i in 0..15 {
            r.push(PathBuf::from(format!("/p/{i}")));
        }
        r.push(PathBuf::from("/p/12"));
        assert_eq!(r.paths.len(), MAX_RECENT);
        assert_eq!(r.paths[0], PathBuf::from("/p/12"));
        assert_eq!(r.paths[1], PathBuf::from("/p/14"));
        assert_eq!(RecentFiles::parse(&r.to_text()), r);
    }

    #[test]
    fn new_maps_get_the_asset_pack_and_it_exists_on_disk() {
        let map = new_map_with_pack("x");
        for (name, _) in DEFAULT_PACK {
            let (_, m) = map.library.materials().by_name(name).unwrap();
            let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets").join(&m.texture);
            assert!(file.is_file(), "{} is missing", file.display());
        }
        assert!(map.validate().is_empty(), "{:?}", map.validate());
    }
}
