//! Camera bookmarks: named views to jump back to.
//!
//! View → Bookmarks saves the current camera under a name, lists the bookmarks to jump to and
//! deletes them; Ctrl+Alt+1…9 store the camera in slot 1–9 and Alt+1…9 recall it (1–9 alone pick
//! tools). A bookmark remembers the level it was taken on.
//!
//! Bookmarks are editor state, not map data: a saved project keeps them in
//! `<project>/.pmfedit/bookmarks.ron` (written atomically: temporary file, fsync, rename); an
//! unsaved map keeps them in eframe's persistence storage (see [`STORAGE_KEY`]). A file that cannot
//! be read is reported as a warning and ignored (it is replaced on the next change).

use std::io::Write;
use std::path::{Path, PathBuf};

use eframe::egui;
use glam::DVec3;
use serde::{Deserialize, Serialize};

use super::Viewport;
use super::camera::Camera;
use crate::command::Command;
use crate::state::EditorState;

/// Folder of editor-only files inside a project.
pub const EDITOR_DIR: &str = ".pmfedit";
/// The bookmark file's name inside [`EDITOR_DIR`].
pub const FILE_NAME: &str = "bookmarks.ron";
/// eframe storage key of an unsaved map's bookmarks.
pub const STORAGE_KEY: &str = "pmfedit.bookmarks";
/// Version written into the file.
const VERSION: u32 = 1;

/// One saved view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bookmark {
    /// Shown in the menu.
    pub name: String,
    /// Keyboard slot 1–9, if any.
    #[serde(default)]
    pub slot: Option<u8>,
    /// Level index the view was taken on.
    #[serde(default)]
    pub level: usize,
    /// Camera position (world space).
    pub eye: [f64; 3],
    /// Camera yaw, radians.
    pub yaw: f64,
    /// Camera pitch, radians.
    pub pitch: f64,
    /// Distance to the orbit pivot.
    #[serde(default = "default_orbit")]
    pub orbit_distance: f64,
}

fn default_orbit() -> f64 {
    16.0
}

impl Bookmark {
    /// A bookmark of `camera` on `level`.
    pub fn of(name: impl Into<String>, slot: Option<u8>, level: usize, camera: &Camera) -> Self {
        Self {
            name: name.into(),
            slot,
            level,
            eye: camera.eye.to_array(),
            yaw: camera.yaw,
            pitch: camera.pitch,
            orbit_distance: camera.orbit_distance,
        }
    }

    /// Puts `camera` where the bookmark was taken (keeping its field of view and speed).
    /// Non-finite values (a hand-edited file) are ignored.
    pub fn apply(&self, camera: &mut Camera) {
        let eye = DVec3::from_array(self.eye);
        if !eye.is_finite() || !self.yaw.is_finite() || !self.pitch.is_finite() {
            return;
        }
        // Bookmarks are perspective views.
        camera.ortho = None;
        camera.eye = eye;
        camera.yaw = self.yaw;
        camera.pitch = self.pitch.clamp(-1.55, 1.55);
        if self.orbit_distance.is_finite() && self.orbit_distance > 0.0 {
            camera.orbit_distance = self.orbit_distance;
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct BookmarkFile {
    version: u32,
    bookmarks: Vec<Bookmark>,
}

/// The bookmarks as RON text.
pub fn to_ron(list: &[Bookmark]) -> String {
    let file = BookmarkFile { version: VERSION, bookmarks: list.to_vec() };
    ron::ser::to_string_pretty(&file, ron::ser::PrettyConfig::default()).unwrap_or_default()
}

/// Why a bookmarks file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum BookmarkError {
    /// Not bookmarks RON (the error names line and column).
    #[error("{0}")]
    Parse(#[from] ron::error::SpannedError),
    /// A version this build does not know.
    #[error("written by a newer pmfedit (version {0})")]
    Newer(u32),
}

/// Bookmarks from RON text; an error for anything else (including a newer version).
pub fn from_ron(text: &str) -> Result<Vec<Bookmark>, BookmarkError> {
    let file: BookmarkFile = ron::from_str(text)?;
    if file.version > VERSION {
        return Err(BookmarkError::Newer(file.version));
    }
    Ok(file.bookmarks)
}

/// Where a project keeps its bookmarks.
pub fn file_path(project: &Path) -> PathBuf {
    project.join(EDITOR_DIR).join(FILE_NAME)
}

/// A project's bookmarks: none when the file does not exist; a warning (and none) when it cannot
/// be read or parsed.
pub fn load(project: &Path) -> (Vec<Bookmark>, Option<String>) {
    let path = file_path(project);
    match std::fs::read_to_string(&path) {
        Ok(text) => match from_ron(&text) {
            Ok(list) => (list, None),
            Err(e) => (Vec::new(), Some(format!("Ignored camera bookmarks in {}: {e}", path.display()))),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), None),
        Err(e) => (Vec::new(), Some(format!("Could not read camera bookmarks {}: {e}", path.display()))),
    }
}

/// Writes a project's bookmarks atomically (temporary file, fsync, rename).
pub fn save(project: &Path, list: &[Bookmark]) -> std::io::Result<()> {
    let path = file_path(project);
    let dir = path.parent().unwrap_or(project);
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!("{FILE_NAME}.tmp"));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(to_ron(list).as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, &path)
}

/// The bookmark list and where it is kept.
#[derive(Debug, Default)]
pub struct Bookmarks {
    /// The current document's bookmarks.
    pub list: Vec<Bookmark>,
    /// The project folder they are saved in (`None`: an unsaved map, kept in eframe storage).
    project: Option<PathBuf>,
    /// The unsaved map's bookmarks while a project is open (they go back to storage).
    unsaved: Vec<Bookmark>,
    /// The name typed in the menu.
    pub new_name: String,
}

impl Bookmarks {
    /// Follows the open project; returns a warning when its file could not be read. The unsaved
    /// map's bookmarks carry over into a project that has none yet (Save As of the demo).
    pub fn set_project(&mut self, project: Option<&Path>) -> Option<String> {
        if self.project.as_deref() == project {
            return None;
        }
        let was_unsaved = self.project.is_none();
        if was_unsaved {
            self.unsaved = self.list.clone();
        }
        self.project = project.map(Path::to_owned);
        let Some(dir) = project else {
            self.list = std::mem::take(&mut self.unsaved);
            return None;
        };
        let (list, warning) = load(dir);
        let carry = was_unsaved && list.is_empty() && warning.is_none() && !file_path(dir).exists();
        if carry && !self.unsaved.is_empty() {
            self.list = self.unsaved.clone();
            return self.persist();
        }
        self.list = list;
        warning
    }

    /// The project folder bookmarks are saved in.
    pub fn project(&self) -> Option<&Path> {
        self.project.as_deref()
    }

    /// Reads an unsaved map's bookmarks from eframe storage text (a bad value: a warning).
    pub fn load_unsaved(&mut self, text: &str) -> Option<String> {
        match from_ron(text) {
            Ok(list) => {
                if self.project.is_none() {
                    self.list = list;
                } else {
                    self.unsaved = list;
                }
                None
            }
            Err(e) => Some(format!("Ignored stored camera bookmarks: {e}")),
        }
    }

    /// The unsaved map's bookmarks as text for eframe storage.
    pub fn unsaved_text(&self) -> String {
        to_ron(if self.project.is_none() { &self.list } else { &self.unsaved })
    }

    /// Writes the project's file (no-op for an unsaved map); an error in words.
    fn persist(&self) -> Option<String> {
        let dir = self.project.as_deref()?;
        save(dir, &self.list).err().map(|e| format!("Could not save camera bookmarks: {e}"))
    }

    /// Stores the camera in slot `slot` (1–9): the bookmark holding it is updated, else a new one
    /// named "Slot N" is added. Returns the status message.
    pub fn store_slot(&mut self, slot: u8, level: usize, camera: &Camera) -> String {
        let name = match self.list.iter_mut().find(|b| b.slot == Some(slot)) {
            Some(b) => {
                *b = Bookmark::of(b.name.clone(), Some(slot), level, camera);
                b.name.clone()
            }
            None => {
                let name = format!("Slot {slot}");
                self.list.push(Bookmark::of(name.clone(), Some(slot), level, camera));
                name
            }
        };
        self.persist().unwrap_or_else(|| format!("Camera stored in bookmark {slot} ({name}) — Alt+{slot} to recall"))
    }

    /// The bookmark in slot `slot`.
    pub fn slot(&self, slot: u8) -> Option<&Bookmark> {
        self.list.iter().find(|b| b.slot == Some(slot))
    }

    /// Adds a bookmark of the camera under `name` (a default name when blank), in the first free
    /// slot if any. Returns the status message.
    pub fn add(&mut self, name: &str, level: usize, camera: &Camera) -> String {
        let name = name.trim();
        let name = if name.is_empty() { format!("View {}", self.list.len() + 1) } else { name.to_owned() };
        let slot = (1..=9u8).find(|s| self.slot(*s).is_none());
        self.list.push(Bookmark::of(name.clone(), slot, level, camera));
        let keys = slot.map_or(String::new(), |s| format!(" — Alt+{s} to recall"));
        self.persist().unwrap_or_else(|| format!("Saved view “{name}”{keys}"))
    }

    /// Deletes bookmark `index`. Returns the status message.
    pub fn remove(&mut self, index: usize) -> Option<String> {
        if index >= self.list.len() {
            return None;
        }
        let b = self.list.remove(index);
        Some(self.persist().unwrap_or_else(|| format!("Deleted view “{}”", b.name)))
    }
}

impl Viewport {
    /// Jumps to a bookmark (switching level when it was taken on another one).
    pub fn go_to_bookmark(&mut self, b: &Bookmark, state: &EditorState, out: &mut Vec<Command>) {
        b.apply(&mut self.camera);
        self.camera_ready = true;
        if b.level != state.level && b.level < state.map.levels.len() {
            out.push(Command::SetLevel(b.level));
        }
    }

    /// Ctrl+Alt+1…9: stores the camera in bookmark `slot`. Returns the status message.
    pub fn store_bookmark(&mut self, slot: u8, state: &EditorState) -> Command {
        Command::Status(self.bookmarks.store_slot(slot, state.level, &self.camera))
    }

    /// Alt+1…9: jumps to the bookmark in `slot`, or says there is none.
    pub fn recall_bookmark(&mut self, slot: u8, state: &EditorState, out: &mut Vec<Command>) {
        match self.bookmarks.slot(slot).cloned() {
            Some(b) => {
                self.go_to_bookmark(&b, state, out);
                out.push(Command::Status(format!("View “{}”", b.name)));
            }
            None => out.push(Command::Status(format!("No bookmark {slot} — Ctrl+Alt+{slot} stores one"))),
        }
    }

    /// The View → Bookmarks menu.
    pub fn bookmarks_menu(&mut self, ui: &mut egui::Ui, state: &EditorState, out: &mut Vec<Command>) {
        ui.horizontal(|ui| {
            let l = ui.label("Name");
            ui.add(
                egui::TextEdit::singleline(&mut self.bookmarks.new_name).hint_text("view name").desired_width(140.0),
            )
            .labelled_by(l.id);
        });
        if ui.add(egui::Button::new("Save current view").shortcut_text("Ctrl+Alt+1…9")).clicked() {
            let name = std::mem::take(&mut self.bookmarks.new_name);
            out.push(Command::Status(self.bookmarks.add(&name, state.level, &self.camera)));
        }
        ui.separator();
        if self.bookmarks.list.is_empty() {
            ui.weak("(no saved views)");
        }
        let mut jump = None;
        let mut delete = None;
        for (i, b) in self.bookmarks.list.iter().enumerate() {
            ui.horizontal(|ui| {
                let mut button = egui::Button::new(&b.name);
                if let Some(s) = b.slot {
                    button = button.shortcut_text(format!("Alt+{s}"));
                }
                if ui.add(button).on_hover_text("Jump to this view").clicked() {
                    jump = Some(b.clone());
                }
                if ui.small_button("Delete").on_hover_text(format!("Delete “{}”", b.name)).clicked() {
                    delete = Some(i);
                }
            });
        }
        if let Some(b) = jump {
            self.go_to_bookmark(&b, state, out);
            ui.close();
        }
        if let Some(msg) = delete.and_then(|i| self.bookmarks.remove(i)) {
            out.push(Command::Status(msg));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cam(x: f64, yaw: f64) -> Camera {
        Camera { eye: DVec3::new(x, 2.0, 3.0), yaw, pitch: -0.3, orbit_distance: 7.0, ..Camera::default() }
    }

    #[test]
    fn store_recall_and_slots() {
        let mut b = Bookmarks::default();
        b.store_slot(3, 0, &cam(1.0, 0.5));
        b.store_slot(3, 1, &cam(5.0, 1.0));
        assert_eq!(b.list.len(), 1, "storing again updates the slot");
        let mut c = Camera::default();
        b.slot(3).unwrap().apply(&mut c);
        assert_eq!((c.eye, c.yaw, c.pitch, c.orbit_distance), (DVec3::new(5.0, 2.0, 3.0), 1.0, -0.3, 7.0));
        assert_eq!(b.slot(3).unwrap().level, 1);
        assert!(b.slot(4).is_none());
        // Named views take the first free slot.
        b.add("  hall  ", 0, &cam(9.0, 0.0));
        b.add("", 0, &cam(9.0, 0.0));
        assert_eq!(b.list[1].name, "hall");
        assert_eq!(b.list[1].slot, Some(1));
        assert_eq!(b.list[2].slot, Some(2));
        assert_eq!(b.list[2].name, "View 3");
        assert!(b.remove(0).is_some());
        assert!(b.remove(7).is_none());
        assert!(b.slot(3).is_none());
    }

    #[test]
    fn ron_round_trip_and_bad_text() {
        let list = vec![Bookmark::of("a", Some(1), 2, &cam(1.5, 0.25)), Bookmark::of("b", None, 0, &cam(-3.0, 2.0))];
        let text = to_ron(&list);
        assert_eq!(from_ron(&text).unwrap(), list);
        assert!(from_ron("").is_err());
        assert!(from_ron("(version: 1, bookmarks: [(name: 5)])").is_err());
        assert!(from_ron("(version: 99, bookmarks: [])").unwrap_err().to_string().contains("newer"));
        // Older files without the optional fields still read.
        let old = "(version: 1, bookmarks: [(name: \"x\", eye: (1.0, 2.0, 3.0), yaw: 0.5, pitch: 0.0)])";
        let got = from_ron(old).unwrap();
        assert_eq!((got[0].slot, got[0].level, got[0].orbit_distance), (None, 0, 16.0));
        // Non-finite values do not move the camera.
        let mut c = Camera::default();
        Bookmark { eye: [f64::NAN, 0.0, 0.0], ..list[0].clone() }.apply(&mut c);
        assert_eq!(c, Camera::default());
    }

    #[test]
    fn project_file_round_trip_and_corrupt_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut b = Bookmarks::default();
        // An unsaved map's bookmarks carry over into a new project.
        b.store_slot(1, 0, &cam(1.0, 0.0));
        assert_eq!(b.set_project(Some(dir.path())), None);
        assert!(file_path(dir.path()).is_file(), "written on carry-over");
        b.add("second", 0, &cam(2.0, 0.0));
        assert!(!dir.path().join(EDITOR_DIR).join("bookmarks.ron.tmp").exists());
        let (loaded, warning) = load(dir.path());
        assert_eq!((loaded, warning), (b.list.clone(), None));
        // Back to an unsaved map: its own list returns.
        b.set_project(None);
        assert_eq!(b.list.len(), 1);
        // A corrupt file: a warning, no bookmarks, no panic; the next change replaces it.
        std::fs::write(file_path(dir.path()), "(version: 1, bookmarks: [(((").unwrap();
        let w = b.set_project(Some(dir.path())).expect("a warning");
        assert!(w.contains("bookmarks.ron"), "{w}");
        assert!(b.list.is_empty());
        b.store_slot(2, 0, &cam(3.0, 0.0));
        assert_eq!(load(dir.path()).0.len(), 1);
        // Storage text for the unsaved map.
        let mut other = Bookmarks::default();
        assert!(other.load_unsaved("garbage").is_some());
        assert_eq!(other.load_unsaved(&b.unsaved_text()), None);
        assert_eq!(other.list.len(), 1, "the unsaved map's list was stored");
    }
}
