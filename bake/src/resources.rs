//! Resources a compiled map embeds in its PAF archive (issue 4, "Compile"; PTF-NOTES T3).
//!
//! Materials name textures as PlatinumSrc resource paths. A path on the `map:` drive
//! (`map:textures/stone`) is looked up in the project folder, then in the shared assets folders,
//! as `textures/stone.png` (or any extension the `image` crate reads, or an existing `.ptf`);
//! images are converted to PTF and stored as `textures/stone.ptf`. Paths on other drives
//! (`game:`, `common:`) are left as typed. A path with no drive is taken as relative to the
//! project and rewritten to `map:` in the compiled file. Extra files (e.g. imported models under
//! `models/`) are embedded as they are.
//!
//! What cannot be found, and what is found but unusable (an empty file, one that cannot be read
//! or a texture that does not decode), is reported and left out, not fatal, unless the caller
//! treats problems as errors (`pmfc build --strict`, [`ResourceReport::problems`]).
//!
//! A reference is checked as an archive path (no `..`, no empty or `.` components, …) before
//! anything is looked up, so a reference that could never be embedded never opens a file
//! outside the roots.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use pmfedit_core::format::paf::{self, Archive};
use pmfedit_core::format::pmf;
use pmfedit_core::format::ptf::Ptf;

/// What embedding found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceReport {
    /// Archive paths embedded.
    pub embedded: Vec<String>,
    /// Resource paths referenced but found nowhere.
    pub missing: Vec<String>,
    /// Resources found but not embedded: (resource path, why), e.g. an empty file.
    pub unusable: Vec<(String, String)>,
    /// Conversion warnings (e.g. non-power-of-two textures resampled).
    pub warnings: Vec<String>,
}

impl ResourceReport {
    /// Everything a strict build refuses: each missing and each unusable resource, in words.
    pub fn problems(&self) -> Vec<String> {
        let missing = self.missing.iter().map(|m| format!("{m} (missing)"));
        missing.chain(self.unusable.iter().map(|(p, why)| format!("{p} ({why})"))).collect()
    }
}

/// Why resources could not be embedded at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResourceError {
    /// A reference that is no valid archive path; nothing was looked up for it.
    #[error("{reference}: not a valid resource path: {reason}")]
    InvalidPath { reference: String, reason: paf::PathError },
    /// The archive could not be built or written.
    #[error("embedded archive: {0}")]
    Archive(String),
}

/// Image extensions tried, in order.
const IMAGE_EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "tga", "bmp"];

/// The `map:` resource path of a reference, or `None` for another drive / empty.
fn map_path(reference: &str) -> Option<String> {
    if reference.is_empty() {
        return None;
    }
    match reference.split_once(':') {
        Some(("map", rest)) => Some(rest.trim_start_matches('/').to_owned()),
        Some(_) => None,
        None => Some(reference.trim_start_matches('/').to_owned()),
    }
}

/// A texture's `map:` path without an image extension (`textures/stone.png` → `textures/stone`).
fn texture_path(reference: &str) -> Option<String> {
    let p = map_path(reference)?;
    let lower = p.to_ascii_lowercase();
    for ext in IMAGE_EXTENSIONS.iter().chain(&["ptf"]) {
        if lower.ends_with(&format!(".{ext}")) {
            return Some(p[..p.len() - ext.len() - 1].to_owned());
        }
    }
    Some(p)
}

/// A texture reference as the compiled file names it: `map:` drive, no extension (T3); other
/// drives are left as typed.
fn canonical(reference: &str) -> String {
    match texture_path(reference) {
        Some(p) => format!("map:{p}"),
        None => reference.to_owned(),
    }
}

/// Checks that `archive_path` (the path `reference` would get in the archive) is one the archive
/// accepts, before any file is opened for it.
fn check_path(reference: &str, archive_path: &str) -> Result<(), ResourceError> {
    paf::validate_path(archive_path)
        .map_err(|reason| ResourceError::InvalidPath { reference: reference.to_owned(), reason })
}

/// The bytes of a found resource, or why they cannot be used (unreadable, empty).
fn read_resource(path: &Path) -> Result<Vec<u8>, String> {
    match std::fs::read(path) {
        Ok(b) if b.is_empty() => Err(format!("{}: empty file", path.display())),
        Ok(b) => Ok(b),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Looks for `rel` + an image extension (or `.ptf`) under each root.
fn find(roots: &[PathBuf], rel: &str) -> Option<PathBuf> {
    let rel = Path::new(rel);
    for root in roots {
        for ext in IMAGE_EXTENSIONS.iter().chain(&["ptf"]) {
            let p = root.join(rel.with_extension(ext));
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// The file a material's texture reference names, searched under `roots` in order: the same
/// lookup [`embed_resources`] does (`map:` drive or no drive, any image extension or `.ptf`).
/// Other drives and empty references give `None`. The editor's thumbnails and viewport
/// textures use this so that what the editor shows is what a build embeds.
pub fn resolve_texture(roots: &[PathBuf], reference: &str) -> Option<PathBuf> {
    let rel = texture_path(reference)?;
    check_path(reference, &format!("{rel}.ptf")).ok()?;
    find(roots, &rel)
}

/// Files the entities of `file` and `more` reference on the `map:` drive: models, sounds,
/// scripts (extension kept).
fn entity_references<'e>(file: &'e pmf::File, more: &[&'e pmf::entity::Entity]) -> BTreeSet<String> {
    use pmf::entity::EntityData as E;
    let mut out = BTreeSet::new();
    let all = file
        .entities
        .iter()
        .chain(
            file.levels
                .iter()
                .flat_map(|l| l.server.entities.iter().chain(l.chunks.iter().flat_map(|c| &c.server.entities))),
        )
        .chain(more.iter().copied());
    for e in all {
        let refs: Vec<&str> = match &e.data {
            E::Prop(p) => vec![&p.model],
            E::Generic(g) => vec![&g.model, &g.script],
            E::Door(d) => vec![&d.model],
            E::Projectile(p) => vec![&p.model],
            E::AudioEmitter(a) => vec![&a.sound],
            E::Headless(h) => vec![&h.script],
            _ => vec![],
        };
        out.extend(refs.into_iter().filter(|r| r.starts_with("map:")).filter_map(map_path));
    }
    out
}

/// Finds `rel.*` (any extension) under the roots: the first file whose stem matches, in sorted
/// order of names (deterministic).
fn find_any(roots: &[PathBuf], rel: &str) -> Option<PathBuf> {
    let rel = Path::new(rel);
    let stem = rel.file_name()?.to_str()?;
    for root in roots {
        let dir = root.join(rel.parent().unwrap_or(Path::new("")));
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut names: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        names.sort();
        if let Some(p) = names.into_iter().find(|p| p.is_file() && p.file_stem().and_then(|s| s.to_str()) == Some(stem))
        {
            return Some(p);
        }
    }
    None
}

/// Embeds every texture the file's materials reference (found under `roots`, in order) plus
/// `extra` files, rewriting driveless references to `map:`. Sets `file.archive`.
pub fn embed_resources(
    file: &mut pmf::File,
    roots: &[PathBuf],
    extra: &[(String, Vec<u8>)],
) -> Result<ResourceReport, ResourceError> {
    embed_resources_with(file, &[], roots, extra)
}

/// [`embed_resources`] for a file whose chunk records are elsewhere (an export straight from
/// the bakes, [`crate::compile::Assembled`]): `chunk_entities` are the entities of those chunks,
/// whose references are embedded as if they were in `file`.
pub fn embed_resources_with(
    file: &mut pmf::File,
    chunk_entities: &[&pmf::entity::Entity],
    roots: &[PathBuf],
    extra: &[(String, Vec<u8>)],
) -> Result<ResourceReport, ResourceError> {
    let mut report = ResourceReport::default();
    let mut wanted = BTreeSet::new();
    for level in &mut file.levels {
        for m in &mut level.client.materials {
            for t in std::iter::once(&mut m.texture).chain(m.extra_textures.iter_mut()).chain([&mut m.matcap_texture]) {
                if let Some(p) = texture_path(t) {
                    wanted.insert(p);
                }
                *t = canonical(t);
            }
        }
    }
    let archive_error = |path: &str, e: paf::PafError| ResourceError::Archive(format!("{path}: {e}"));
    let mut archive = Archive::new();
    for rel in wanted {
        let archive_path = format!("{rel}.ptf");
        check_path(&format!("map:{rel}"), &archive_path)?;
        let Some(path) = find(roots, &rel) else {
            report.missing.push(format!("map:{rel}"));
            continue;
        };
        let ptf_bytes = read_resource(&path).and_then(|bytes| {
            let name = path.display().to_string();
            if path.extension().is_some_and(|e| e == "ptf") {
                Ptf::read(&bytes).map_err(|e| format!("{name}: {e}"))?;
                Ok(bytes)
            } else {
                let (ptf, warnings) = Ptf::from_image_bytes(&bytes, &name).map_err(|e| e.to_string())?;
                report.warnings.extend(warnings);
                ptf.write().map_err(|e| format!("{name}: {e}"))
            }
        });
        match ptf_bytes {
            Ok(b) => {
                archive.insert_file(&archive_path, b).map_err(|e| archive_error(&archive_path, e))?;
                report.embedded.push(archive_path);
            }
            Err(why) => report.unusable.push((format!("map:{rel}"), why)),
        }
    }
    for rel in entity_references(file, chunk_entities) {
        check_path(&format!("map:{rel}"), &rel)?;
        let Some(path) = find_any(roots, &rel) else {
            report.missing.push(format!("map:{rel}"));
            continue;
        };
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let archive_path = if ext.is_empty() { rel.clone() } else { format!("{rel}.{ext}") };
        match read_resource(&path) {
            Ok(bytes) => {
                archive.insert_file(&archive_path, bytes).map_err(|e| archive_error(&archive_path, e))?;
                report.embedded.push(archive_path);
            }
            Err(why) => report.unusable.push((format!("map:{rel}"), why)),
        }
    }
    for (path, bytes) in extra {
        archive.insert_file(path, bytes.clone()).map_err(|e| archive_error(path, e))?;
        report.embedded.push(path.clone());
    }
    file.archive = if archive.file_count() == 0 {
        Vec::new()
    } else {
        archive.to_bytes().map_err(|e| ResourceError::Archive(e.to_string()))?
    };
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reference that leaves the roots is refused before anything is opened: the file it
    /// names (readable, beside the project) is neither read nor embedded.
    #[test]
    fn references_leaving_the_roots_are_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(dir.path().join("secret")).unwrap();
        std::fs::write(dir.path().join("secret/huge.bin"), b"not for the archive").unwrap();
        image::RgbaImage::from_pixel(4, 4, image::Rgba([1, 2, 3, 255])).save(dir.path().join("secret/t.png")).unwrap();
        let roots = [project.clone()];
        // An entity's model.
        let mut file = pmf::File::default();
        let model = "map:../secret/huge".to_owned();
        let prop = pmf::entity::Prop { model, ..Default::default() };
        file.entities.push(pmf::entity::Entity::new("crate", pmf::entity::EntityData::Prop(prop)));
        let e = embed_resources(&mut file, &roots, &[]).unwrap_err();
        assert!(matches!(&e, ResourceError::InvalidPath { reference, .. } if reference == "map:../secret/huge"), "{e}");
        assert!(e.to_string().contains("\"..\" is not allowed"), "{e}");
        // A texture.
        let mut level = pmf::Level::default();
        level.client.materials = vec![pmf::ClientMaterial { texture: "../secret/t.png".into(), ..Default::default() }];
        let mut file = pmf::File { levels: vec![level], ..Default::default() };
        assert!(matches!(embed_resources(&mut file, &roots, &[]), Err(ResourceError::InvalidPath { .. })));
        assert_eq!(resolve_texture(&roots, "../secret/t.png"), None);
        // What a reference may not be, even where a file exists for it.
        for bad in ["map:a//b", "map:./a", "map:a/./b"] {
            assert!(check_path(bad, bad.trim_start_matches("map:")).is_err(), "{bad}");
        }
    }

    /// An empty or undecodable resource is not embedded and is listed as unusable (a kill while
    /// an import rewrote `models/X.m3d` used to leave a 0-byte file that builds embedded).
    #[test]
    fn empty_and_broken_resources_are_unusable() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("models")).unwrap();
        std::fs::create_dir_all(dir.path().join("textures")).unwrap();
        std::fs::write(dir.path().join("models/x.m3d"), b"").unwrap();
        std::fs::write(dir.path().join("textures/broken.png"), b"not a png").unwrap();
        let mut level = pmf::Level::default();
        level.client.materials =
            vec![pmf::ClientMaterial { texture: "textures/broken.png".into(), ..Default::default() }];
        let mut file = pmf::File { levels: vec![level], ..Default::default() };
        let prop = pmf::entity::Prop { model: "map:models/x".into(), ..Default::default() };
        file.entities.push(pmf::entity::Entity::new("crate", pmf::entity::EntityData::Prop(prop)));
        let r = embed_resources(&mut file, &[dir.path().to_path_buf()], &[]).unwrap();
        assert!(r.embedded.is_empty(), "{:?}", r.embedded);
        let names: Vec<&str> = r.unusable.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(names, ["map:textures/broken", "map:models/x"]);
        assert!(r.unusable[1].1.ends_with("empty file"), "{:?}", r.unusable);
        assert_eq!(r.problems().len(), 2);
        assert!(file.archive.is_empty());
    }

    /// The maps `pmfc new --sample …` and the editor start from build without a missing
    /// resource from the shipped assets alone (the demo used to name three textures it did not
    /// ship).
    #[test]
    fn built_in_samples_miss_no_resource() {
        use pmfedit_core::map::Map;
        use pmfedit_core::sample;
        let roots = [Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets")];
        let samples = [("demo", sample::demo()), ("terrain", sample::terrain(1, 1, 1, 7)), ("empty", Map::new("e"))];
        for (name, map) in samples {
            let mut level = pmf::Level::default();
            level.client.materials = map.library.materials().iter().map(|(_, m)| m.to_pmf().1).collect();
            let mut file = pmf::File { levels: vec![level], ..pmf::File::default() };
            let r = embed_resources(&mut file, &roots, &[]).unwrap();
            assert!(r.missing.is_empty(), "{name}: missing {:?}", r.missing);
            assert!(r.warnings.is_empty(), "{name}: {:?}", r.warnings);
        }
    }

    #[test]
    fn references_and_lookup() {
        assert_eq!(map_path("map:textures/stone").as_deref(), Some("textures/stone"));
        assert_eq!(map_path("textures/stone").as_deref(), Some("textures/stone"));
        assert_eq!(map_path("game:textures/stone"), None);
        assert_eq!(map_path(""), None);
        assert_eq!(canonical("textures/a"), "map:textures/a");
        assert_eq!(canonical("map:textures/a.png"), "map:textures/a");
        assert_eq!(texture_path("textures/b.PNG").as_deref(), Some("textures/b"));
        assert_eq!(canonical("common:x"), "common:x");

        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("textures")).unwrap();
        image::RgbaImage::from_pixel(4, 4, image::Rgba([10, 20, 30, 255]))
            .save(dir.path().join("textures/stone.png"))
            .unwrap();
        let mut file = pmf::File::default();
        let mut level = pmf::Level::default();
        level.client.materials = vec![
            pmf::ClientMaterial { texture: "textures/stone".into(), ..Default::default() },
            pmf::ClientMaterial { texture: "map:textures/missing".into(), ..Default::default() },
            pmf::ClientMaterial { texture: "game:textures/engine".into(), ..Default::default() },
        ];
        file.levels.push(level);
        let r = embed_resources(&mut file, &[dir.path().to_path_buf()], &[("models/m.m3d".into(), b"3DMO".to_vec())])
            .unwrap();
        assert_eq!(r.embedded, vec!["textures/stone.ptf".to_owned(), "models/m.m3d".to_owned()]);
        assert_eq!(r.missing, vec!["map:textures/missing".to_owned()]);
        assert_eq!(file.levels[0].client.materials[0].texture, "map:textures/stone");
        assert_eq!(file.levels[0].client.materials[2].texture, "game:textures/engine");
        let a = Archive::from_bytes(&file.archive).unwrap();
        let Some(paf::Node::File(ptf)) = a.get("textures/stone.ptf") else { panic!() };
        let t = Ptf::read(ptf).unwrap();
        assert_eq!(t.to_rgba8()[..4], [10, 20, 30, 255]);
        let roots = [dir.path().to_path_buf()];
        let found = Some(dir.path().join("textures/stone.png"));
        assert_eq!(resolve_texture(&roots, "textures/stone.png"), found);
        assert_eq!(resolve_texture(&roots, "map:textures/stone"), found);
        assert_eq!(resolve_texture(&roots, "game:textures/stone"), None);
        assert_eq!(resolve_texture(&roots, "textures/missing.png"), None);
    }
}
