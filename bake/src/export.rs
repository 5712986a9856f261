//! Writing a compiled map to disk: what `pmfc build` (and `watch`) and the editor's Export share,
//! so that both write the same bytes for the same map. After the bake is compiled
//! ([`crate::rebuild::Rebuild::compile`]), [`write_map`] embeds the resources the file names
//! ([`crate::resources::embed_resources`], looked up under [`resource_roots`]), refuses missing
//! or unusable ones when `strict`, serialises the file and replaces the output atomically (a kill
//! at any moment leaves the old file or the new one). What the embedding found comes back for
//! the caller to show ([`Exported::warnings`], [`Exported::embedded_summary`]).

use std::path::{Path, PathBuf};

use pmfedit_core::format::pmf;

use crate::resources::{ResourceError, ResourceReport, embed_resources};

/// Why [`write_map`] wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Resources could not be embedded at all (an invalid reference, a broken archive).
    #[error(transparent)]
    Resources(#[from] ResourceError),
    /// A strict export found missing or unusable resources (each in words).
    #[error("missing or unusable resources (--strict): {}", .0.join(", "))]
    Strict(Vec<String>),
    /// The compiled file does not serialise.
    #[error("{}: {source}", path.display())]
    Format { path: PathBuf, source: pmf::WriteError },
    /// The output file could not be written.
    #[error("{}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

/// What [`write_map`] wrote.
#[derive(Debug, Clone)]
pub struct Exported {
    /// The file as written (resources embedded, texture references rewritten).
    pub file: pmf::File,
    /// Its size, bytes.
    pub bytes: usize,
    /// What the embedding found.
    pub resources: ResourceReport,
}

impl Exported {
    /// The warnings `pmfc build` prints (without its `warning: ` prefix): conversion warnings,
    /// then one line listing the missing and unusable resources, if any.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = self.resources.warnings.clone();
        let problems = self.resources.problems();
        if !problems.is_empty() {
            out.push(format!(
                "{} missing or unusable resources (not embedded): {}",
                problems.len(),
                problems.join(", ")
            ));
        }
        out
    }

    /// What went into the embedded archive, in words: "embedded archive: none" or
    /// "embedded: 11 resources".
    pub fn embedded_summary(&self) -> String {
        match self.resources.embedded.len() {
            0 => "embedded archive: none".to_owned(),
            1 => "embedded: 1 resource".to_owned(),
            n => format!("embedded: {n} resources"),
        }
    }
}

/// Where resources are looked up, in order: the project folder (none for a map never saved),
/// then the shared asset folders.
pub fn resource_roots(project: Option<&Path>, assets: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
    project.map(Path::to_owned).into_iter().chain(assets).collect()
}

/// Embeds the resources `file` names (found under `roots`, in order), then serialises it and
/// replaces `out` atomically. With `strict`, a missing or unusable resource is an error and
/// nothing is written; without it, it is left out and listed in [`Exported::warnings`].
pub fn write_map(mut file: pmf::File, roots: &[PathBuf], out: &Path, strict: bool) -> Result<Exported, ExportError> {
    let resources = embed_resources(&mut file, roots, &[])?;
    let problems = resources.problems();
    if strict && !problems.is_empty() {
        return Err(ExportError::Strict(problems));
    }
    // Chunks are encoded on every core: the same bytes as `pmf::write` whatever the count.
    // Each goes to disk as soon as it is compressed, the file never whole in memory.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (mut bytes, mut refused) = (0, None);
    let written = pmfedit_core::project::atomic::write_atomic_by(
        out,
        &mut |f| match crate::compile::write_file_to(&file, threads, f) {
            Ok(n) => {
                bytes = n as usize;
                Ok(())
            }
            Err(pmf::StreamError::Io(e)) => Err(e),
            Err(pmf::StreamError::Format(e)) => {
                // Fails the write (the temporary file is removed), reported as what it is.
                let io = std::io::Error::other(e.to_string());
                refused = Some(e);
                Err(io)
            }
        },
        &|| Ok(()),
    );
    if let Some(source) = refused {
        return Err(ExportError::Format { path: out.to_owned(), source });
    }
    written.map_err(|source| ExportError::Write { path: out.to_owned(), source })?;
    Ok(Exported { file, bytes, resources })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A strict export with a missing texture writes nothing; a lenient one writes the file and
    /// names the texture in its warnings.
    #[test]
    fn strict_refuses_missing_resources_and_lenient_warns() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.pmf");
        // One cube of a material whose texture is nowhere.
        use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
        let mut map = pmfedit_core::map::Map::new("missing");
        let mut m = map.library.materials().get(MaterialId(0)).unwrap().clone();
        m.texture = "map:textures/not_there".into();
        map.library.replace(MaterialId(0), m).unwrap();
        let at = pmfedit_core::map::coords::CubeAddr::containing(map.levels[0].frame().origin_lattice(), 3);
        map.levels[0]
            .set_cube(at, pmfedit_core::map::octree::Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0)))
            .unwrap();
        let settings = crate::compile::CompileSettings { timestamp: 1, ..Default::default() };
        let file = crate::compile::compile_full(&map, &settings).unwrap();
        let roots = resource_roots(Some(dir.path()), []);
        let e = write_map(file.clone(), &roots, &out, true).unwrap_err();
        assert!(matches!(&e, ExportError::Strict(p) if p == &["map:textures/not_there (missing)"]), "{e}");
        assert!(!out.exists());
        let done = write_map(file, &roots, &out, false).unwrap();
        assert_eq!(done.bytes as u64, std::fs::metadata(&out).unwrap().len());
        // Written in pieces straight from the compressed chunks: `pmf::write`'s bytes.
        assert!(std::fs::read(&out).unwrap() == pmf::write(&done.file).unwrap());
        assert_eq!(
            done.warnings(),
            ["1 missing or unusable resources (not embedded): map:textures/not_there (missing)"]
        );
        assert_eq!(done.embedded_summary(), "embedded archive: none");

        // A chunk the writer refuses, found while the file is being streamed: a format error,
        // and neither the output nor a temporary file is left behind.
        let mut bad = done.file;
        bad.levels[0].chunks[0].common.cubes.clear();
        let bad_out = dir.path().join("bad.pmf");
        let e = write_map(bad, &roots, &bad_out, false).unwrap_err();
        assert!(matches!(&e, ExportError::Format { .. }) && e.to_string().contains("no cubes"), "{e}");
        assert!(!bad_out.exists());
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, [std::ffi::OsString::from("x.pmf")], "no temporary file left");
    }
}
