//! Drag-and-drop onto the viewport.
//!
//! - **A material row from the library** ([`MaterialDrag`], egui's drag-and-drop payload): the
//!   viewport highlights the face under the pointer, says "Paint face with MATERIAL" beside it
//!   and, on release, paints that face (Shift: the whole grid cube) through the Paint tool's
//!   [`tools::paint::with_material`]: one undo step, "Paint material MATERIAL".
//! - **Texture files from the desktop** (PNG, or the engine's PTF): the viewport hands the app a
//!   [`FileDrop`]; [`plan_texture_drop`] copies the first file into the project's `textures/`
//!   folder ([`copy_into_textures`]: never over a different file of the same name, an identical
//!   one is reused) and takes the material that already uses exactly that texture reference or
//!   makes a new one named after the file ([`TexturePaint`]). The app applies the plan as one undo
//!   step (a stroke, named after its first edit: "Add material brick"): the new material first,
//!   learning its id from the change set, then the paint. Only the first of several files is
//!   used; other files, an unsaved map (no `textures/` folder yet), drops on the sky and refused
//!   edits are reported with a status message ([`DropError`]).
//!
//! This module reads the document and returns commands; it never applies them.

use std::io::Write;
use std::path::{Path, PathBuf};

use pmfedit_core::edit::{ChangeSet, Edit, EditError, LibItem, LibRef};
use pmfedit_core::map::ids::MaterialId;
use pmfedit_core::map::library::Material;

use crate::command::Command;
use crate::pick::{Mods, Pick};
use crate::state::EditorState;
use crate::tools;

/// The payload of a material row dragged from the library panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaterialDrag(pub MaterialId);

/// Extensions of the texture files that can be dropped (case-insensitive): PNG images and the
/// engine's PTF textures, what the material form's texture picker lists.
pub const TEXTURE_EXTENSIONS: [&str; 2] = ["png", "ptf"];

/// The folder of a project that dropped textures are copied into.
pub const TEXTURES_DIR: &str = "textures";

/// Most `-N` suffixes tried for a free file name in `textures/`.
const MAX_SUFFIX: u32 = 10_000;

/// Whether `path` names a texture file that can be dropped (by its extension).
pub fn is_texture_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| TEXTURE_EXTENSIONS.iter().any(|t| e.eq_ignore_ascii_case(t)))
}

/// What the pointer says while something is dragged over a face: "Paint face with stone"
/// ("Paint cube with stone" with Shift).
pub fn paint_hint(what: &str, whole_cube: bool) -> String {
    format!("Paint {} with {what}", if whole_cube { "cube" } else { "face" })
}

/// A file's name for messages.
pub fn file_label(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// Dropping the library's `material` with the pointer over `pick` (`None`: the sky or nothing):
/// the Paint tool's edit, or a status message saying why nothing happened.
pub fn drop_material(state: &EditorState, pick: Option<&Pick>, material: MaterialId, whole_cube: bool) -> Vec<Command> {
    let Some(m) = state.map.library.materials().get(material) else {
        return vec![Command::Status("The dragged material no longer exists".into())];
    };
    match pick {
        Some(pick) => tools::paint::with_material(state, pick, Mods { shift: whole_cube, ..Mods::default() }, material),
        None => vec![Command::Status(format!(
            "Nothing painted: there is no face under the pointer to paint with {}",
            m.name
        ))],
    }
}

/// Where a dropped texture file ended up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopiedTexture {
    /// The texture reference a material stores (`textures/brick.png`).
    pub reference: String,
    /// The file was already there with the same content (nothing was written).
    pub reused: bool,
}

/// Why a dropped file could not be copied into the project.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    /// Reading the file or writing the copy failed.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// Texture references are UTF-8.
    #[error("the file name is not valid UTF-8")]
    NotUtf8,
    /// Every `stem-N` name (up to a limit) holds a different file.
    #[error("no free name for {name} in {}", dir.display())]
    NoFreeName { name: String, dir: PathBuf },
}

/// An I/O error on `path`.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CopyError + '_ {
    move |source| CopyError::Io { path: path.to_owned(), source }
}

/// Copies `file` into `project_dir/textures/` under its own name, or `stem-2.ext`, `stem-3.ext`,
/// … when a different file already has the name; a file there with the same content is reused.
/// Never overwrites anything.
pub fn copy_into_textures(project_dir: &Path, file: &Path) -> Result<CopiedTexture, CopyError> {
    let bytes = std::fs::read(file).map_err(io(file))?;
    let name = file.file_name().and_then(|n| n.to_str()).ok_or(CopyError::NotUtf8)?;
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, format!(".{ext}")),
        _ => (name, String::new()),
    };
    let dir = project_dir.join(TEXTURES_DIR);
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    for n in 1..=MAX_SUFFIX {
        let candidate = if n == 1 { name.to_owned() } else { format!("{stem}-{n}{ext}") };
        let dest = dir.join(&candidate);
        let reference = format!("{TEXTURES_DIR}/{candidate}");
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&dest) {
            Ok(mut f) => {
                f.write_all(&bytes).map_err(io(&dest))?;
                return Ok(CopiedTexture { reference, reused: false });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                if std::fs::read(&dest).is_ok_and(|existing| existing == bytes) {
                    return Ok(CopiedTexture { reference, reused: true });
                }
            }
            Err(e) => return Err(io(&dest)(e)),
        }
    }
    Err(CopyError::NoFreeName { name: name.to_owned(), dir })
}

/// Files dropped on the viewport from the desktop, with the pointer over `pick` (`None`: the
/// sky); `whole_cube` when Shift was held. The viewport hands it to the app.
#[derive(Debug, Clone, PartialEq)]
pub struct FileDrop {
    pub files: Vec<PathBuf>,
    pub pick: Option<Pick>,
    pub whole_cube: bool,
}

impl FileDrop {
    /// What the status message adds when several files were dropped (only the first is used).
    pub fn note(&self) -> String {
        if self.files.len() > 1 {
            format!(" (only the first of {} dropped files is used)", self.files.len())
        } else {
            String::new()
        }
    }
}

/// Why a dropped file painted nothing (the text is the status bar's message).
#[derive(Debug, thiserror::Error)]
pub enum DropError {
    /// Not a PNG or PTF file (the file's name).
    #[error("Refused {0}: only PNG and PTF textures can be dropped on a face")]
    NotTexture(String),
    /// Dropped on the sky (the file's name).
    #[error("Nothing painted: there is no face under the pointer where {0} was dropped")]
    NoFace(String),
    /// The map has no project folder to copy into.
    #[error("Save the map first: dropped textures are copied into the project's textures/ folder")]
    Unsaved,
    /// The copy failed.
    #[error("Could not copy {label}: {source}")]
    Copy { label: String, source: CopyError },
    /// The library refused the new material.
    #[error("Could not add a material for {reference}: {source}")]
    AddMaterial { reference: String, source: EditError },
    /// Applying the new material's edit reported no material (the change set is the only
    /// source of its id).
    #[error("Could not add a material for {0}: the library reported none")]
    NotAdded(String),
    /// The paint edit was refused.
    #[error("Could not paint with {reference}: {source}")]
    Paint { reference: String, source: EditError },
}

/// The material a dropped texture paints with.
#[derive(Debug, Clone, PartialEq)]
pub enum DropMaterial {
    /// The library's material that already uses exactly the texture reference.
    Existing(MaterialId),
    /// A new material named after the file (added before painting).
    New(Material),
}

/// A dropped texture, copied into the project: what to paint with, where. Applying it is the
/// app's: [`TexturePaint::add_material`] first, then [`TexturePaint::paint`], as one stroke.
#[derive(Debug, Clone, PartialEq)]
pub struct TexturePaint {
    pub copied: CopiedTexture,
    pub material: DropMaterial,
    pub pick: Pick,
    pub whole_cube: bool,
}

/// Checks a texture file dropped with the pointer over `pick` and copies it into the project;
/// nothing is applied (see [`TexturePaint`]).
pub fn plan_texture_drop(
    state: &EditorState,
    file: &Path,
    pick: Option<&Pick>,
    whole_cube: bool,
) -> Result<TexturePaint, DropError> {
    let label = file_label(file);
    if !is_texture_file(file) {
        return Err(DropError::NotTexture(label));
    }
    let Some(pick) = pick else {
        return Err(DropError::NoFace(label));
    };
    let Some(project) = &state.project else {
        return Err(DropError::Unsaved);
    };
    let copied = copy_into_textures(project.dir(), file).map_err(|source| DropError::Copy { label, source })?;
    let lib = &state.map.library;
    let material = match lib.materials().iter().find(|(_, m)| m.texture == copied.reference) {
        Some((id, _)) => DropMaterial::Existing(id),
        None => {
            let stem = file.file_stem().map_or_else(|| "texture".into(), |s| s.to_string_lossy().into_owned());
            let mut m = Material::new(
                lib.materials().unique_name(&stem),
                lib.physics_materials().ids().next().unwrap_or_default(),
                lib.sound_materials().ids().next().unwrap_or_default(),
            );
            m.texture = copied.reference.clone();
            DropMaterial::New(m)
        }
    };
    Ok(TexturePaint { copied, material, pick: *pick, whole_cube })
}

impl TexturePaint {
    /// The edit adding the new material, if the texture has none yet.
    pub fn add_material(&self) -> Option<Command> {
        match &self.material {
            DropMaterial::New(m) => Some(Command::Edit(Edit::AddLibraryItem(LibItem::Material(m.clone())))),
            DropMaterial::Existing(_) => None,
        }
    }

    /// The material painted: the existing one, or the one `added` (the change set of
    /// applying [`TexturePaint::add_material`]) names.
    pub fn material_id(&self, added: Option<&ChangeSet>) -> Result<MaterialId, DropError> {
        let added = added.into_iter().flat_map(|c| &c.library).find_map(|r| match r {
            LibRef::Material(id) => Some(*id),
            _ => None,
        });
        match self.material {
            DropMaterial::Existing(id) => Ok(id),
            DropMaterial::New(_) => added.ok_or_else(|| DropError::NotAdded(self.copied.reference.clone())),
        }
    }

    /// The edit painting the face (or the cube) with `material`.
    pub fn paint(&self, state: &EditorState, material: MaterialId) -> Vec<Command> {
        tools::paint::with_material(state, &self.pick, Mods { shift: self.whole_cube, ..Mods::default() }, material)
    }

    /// The library refused [`TexturePaint::add_material`].
    pub fn add_refused(&self, source: EditError) -> DropError {
        DropError::AddMaterial { reference: self.copied.reference.clone(), source }
    }

    /// The paint edit was refused.
    pub fn paint_refused(&self, source: EditError) -> DropError {
        DropError::Paint { reference: self.copied.reference.clone(), source }
    }

    /// What the status bar says once it is painted: "Painted face with brick (textures/brick.png,
    /// copied into the project; new material)".
    pub fn message(&self, state: &EditorState, material: MaterialId) -> String {
        let name = state.map.library.materials().get(material).map_or("?", |m| m.name.as_str());
        let file_note = if self.copied.reused { "already in the project" } else { "copied into the project" };
        let material_note = match self.material {
            DropMaterial::New(_) => "new material",
            DropMaterial::Existing(_) => "existing material",
        };
        format!(
            "{} with {name} ({}, {file_note}; {material_note})",
            paint_hint_past(self.whole_cube),
            self.copied.reference
        )
    }
}

/// "Painted face" / "Painted cube".
fn paint_hint_past(whole_cube: bool) -> &'static str {
    if whole_cube { "Painted cube" } else { "Painted face" }
}

#[cfg(test)]
mod tests {
    //! Copying dropped textures, and what a dropped library material asks for.

    use std::sync::Arc;

    use glam::DVec3;
    use pmfedit_core::sample;

    use super::*;

    #[test]
    fn texture_files_are_png_and_ptf_in_any_case() {
        assert!(is_texture_file(Path::new("/a/brick.png")));
        assert!(is_texture_file(Path::new("brick.PTF")));
        assert!(!is_texture_file(Path::new("brick.jpg")));
        assert!(!is_texture_file(Path::new("png")));
    }

    #[test]
    fn a_copy_never_overwrites_and_reuses_identical_files() {
        let src = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let a = src.path().join("a.png");
        let b = src.path().join("b").join("a.png");
        std::fs::create_dir(src.path().join("b")).unwrap();
        std::fs::write(&a, b"first").unwrap();
        std::fs::write(&b, b"second").unwrap();
        let copy = |f: &Path| copy_into_textures(project.path(), f).unwrap();
        let fresh = |r: &str| CopiedTexture { reference: r.to_owned(), reused: false };
        let reused = |r: &str| CopiedTexture { reference: r.to_owned(), reused: true };

        assert_eq!(copy(&a), fresh("textures/a.png"));
        assert_eq!(copy(&a), reused("textures/a.png"));
        assert_eq!(copy(&b), fresh("textures/a-2.png"));
        assert_eq!(copy(&b), reused("textures/a-2.png"));
        let textures = project.path().join("textures");
        assert_eq!(std::fs::read(textures.join("a.png")).unwrap(), b"first");
        assert_eq!(std::fs::read(textures.join("a-2.png")).unwrap(), b"second");
        // A file already in the project's textures/ is its own copy.
        assert_eq!(copy(&textures.join("a-2.png")), reused("textures/a-2.png"));
        assert!(copy_into_textures(project.path(), &src.path().join("missing.png")).is_err());
    }

    #[test]
    fn a_dropped_material_paints_like_the_paint_tool_and_the_sky_says_why_not() {
        let state = EditorState::new(sample::demo(), None, Arc::new(|| {}));
        let sand = state.map.library.materials().id_of("sand").unwrap();
        let level = &state.map.levels[0];
        let hit = level.ray_cast_world(DVec3::new(-10.0, 20.0, -10.0), DVec3::NEG_Y, 100.0).unwrap();
        let pick = Pick::from_hit(0, &hit);
        for whole_cube in [false, true] {
            let mods = Mods { shift: whole_cube, ..Mods::default() };
            let expected = tools::paint::with_material(&state, &pick, mods, sand);
            let got = drop_material(&state, Some(&pick), sand, whole_cube);
            assert_eq!(format!("{got:?}"), format!("{expected:?}"));
        }
        match drop_material(&state, None, sand, false).as_slice() {
            [Command::Status(s)] => assert!(s.contains("no face under the pointer") && s.contains("sand"), "{s}"),
            other => panic!("{other:?}"),
        }
    }
}
