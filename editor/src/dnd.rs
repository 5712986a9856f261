//! Drag-and-drop onto the viewport.
//!
//! - **A material row from the library** ([`MaterialDrag`], egui's drag-and-drop payload): the
//!   viewport highlights the face under the pointer, says "Paint face with MATERIAL" beside it
//!   and, on release, paints that face (Shift: the whole grid cube) through the Paint tool's
//!   [`tools::paint::with_material`]: one undo step, "Paint material MATERIAL".
//! - **Texture files from the desktop** (PNG, or the engine's PTF): the viewport sends
//!   [`Command::DropFiles`] and [`drop_files`] copies the file into the project's `textures/`
//!   folder ([`copy_into_textures`]: never over a different file of the same name, an identical
//!   one is reused), takes the material that already uses exactly that texture reference or adds
//!   a new one named after the file, and paints the face. Adding the material and painting are
//!   one undo step (a stroke, named after its first edit: "Add material brick"). Only the first
//!   of several files is used; other files, an unsaved map (no `textures/` folder yet) and drops
//!   on the sky are refused with a status message.

use std::io::Write;
use std::path::{Path, PathBuf};

use pmfedit_core::edit::{Edit, LibItem};
use pmfedit_core::map::ids::MaterialId;
use pmfedit_core::map::library::Material;

use crate::command::Command;
use crate::state::EditorState;
use crate::tools::{self, Mods, Pick};

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

/// Copies `file` into `project_dir/textures/` under its own name, or `stem-2.ext`, `stem-3.ext`,
/// … when a different file already has the name; a file there with the same content is reused.
/// Never overwrites anything.
pub fn copy_into_textures(project_dir: &Path, file: &Path) -> Result<CopiedTexture, String> {
    let bytes = std::fs::read(file).map_err(|e| e.to_string())?;
    let name = file.file_name().and_then(|n| n.to_str()).ok_or("the file name is not valid UTF-8")?;
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, format!(".{ext}")),
        _ => (name, String::new()),
    };
    let dir = project_dir.join(TEXTURES_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for n in 1..=MAX_SUFFIX {
        let candidate = if n == 1 { name.to_owned() } else { format!("{stem}-{n}{ext}") };
        let dest = dir.join(&candidate);
        let reference = format!("{TEXTURES_DIR}/{candidate}");
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&dest) {
            Ok(mut f) => {
                f.write_all(&bytes).map_err(|e| format!("{}: {e}", dest.display()))?;
                return Ok(CopiedTexture { reference, reused: false });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                if std::fs::read(&dest).is_ok_and(|existing| existing == bytes) {
                    return Ok(CopiedTexture { reference, reused: true });
                }
            }
            Err(e) => return Err(format!("{}: {e}", dest.display())),
        }
    }
    Err(format!("no free name for {name} in {}", dir.display()))
}

/// Carries out [`Command::DropFiles`]: the first of `files` dropped with the pointer over `pick`.
/// See the module documentation; every outcome ends with a status message.
pub fn drop_files(state: &mut EditorState, files: &[PathBuf], pick: Option<&Pick>, whole_cube: bool) {
    let Some(file) = files.first() else { return };
    let note = if files.len() > 1 {
        format!(" (only the first of {} dropped files is used)", files.len())
    } else {
        String::new()
    };
    let label = file_label(file);
    let result = drop_texture(state, file, &label, pick, whole_cube);
    let msg = match result {
        Ok(msg) | Err(msg) => msg,
    };
    state.say(format!("{msg}{note}"));
}

/// [`drop_files`] for one file: the success message, or why it was refused.
fn drop_texture(
    state: &mut EditorState,
    file: &Path,
    label: &str,
    pick: Option<&Pick>,
    whole_cube: bool,
) -> Result<String, String> {
    if !is_texture_file(file) {
        return Err(format!("Refused {label}: only PNG and PTF textures can be dropped on a face"));
    }
    let Some(pick) = pick else {
        return Err(format!("Nothing painted: there is no face under the pointer where {label} was dropped"));
    };
    let Some(project_dir) = state.project.as_ref().map(|p| p.dir().to_owned()) else {
        return Err("Save the map first: dropped textures are copied into the project's textures/ folder".into());
    };
    let copied = copy_into_textures(&project_dir, file).map_err(|e| format!("Could not copy {label}: {e}"))?;
    let existing = state.map.library.materials().iter().find(|(_, m)| m.texture == copied.reference).map(|(id, _)| id);
    let mods = Mods { shift: whole_cube, ..Mods::default() };
    state.apply(Command::BeginStroke);
    let (material, added) = match existing {
        Some(id) => (id, false),
        None => {
            let lib = &state.map.library;
            let stem = file.file_stem().map_or_else(|| "texture".into(), |s| s.to_string_lossy().into_owned());
            let name = lib.materials().unique_name(&stem);
            let mut m = Material::new(
                name.clone(),
                lib.physics_materials().ids().next().unwrap_or_default(),
                lib.sound_materials().ids().next().unwrap_or_default(),
            );
            m.texture = copied.reference.clone();
            state.apply(Command::Edit(Edit::AddLibraryItem(LibItem::Material(m))));
            match state.map.library.materials().id_of(&name) {
                Some(id) => (id, true),
                None => {
                    // Refused: the edit left its reason in the status bar.
                    state.apply(Command::EndStroke);
                    let why = state.status.as_ref().map_or_else(String::new, |(s, _)| format!(": {s}"));
                    return Err(format!("Could not add a material for {}{why}", copied.reference));
                }
            }
        }
    };
    let commands = tools::paint::with_material(state, pick, mods, material);
    state.apply_all(commands);
    state.apply(Command::EndStroke);
    let name = state.map.library.materials().get(material).map_or("?", |m| m.name.as_str());
    let file_note = if copied.reused { "already in the project" } else { "copied into the project" };
    let material_note = if added { "new material" } else { "existing material" };
    Ok(format!("{} with {name} ({}, {file_note}; {material_note})", paint_hint_past(whole_cube), copied.reference))
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
