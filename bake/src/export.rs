//! Writing a compiled map to disk: what `pmfc build` (and `watch`) and the editor's Export share,
//! so that both write the same bytes for the same map. [`write_map`] takes a whole compiled file
//! (`pmfc build`, which moves the records out of its bakes: `crate::rebuild::Rebuild::into_file`);
//! [`write_assembled`] takes the file's skeleton with its chunk records still in their bakes
//! (`crate::rebuild::Rebuild::assemble`: the editor and `pmfc watch`, whose engines live on) and
//! encodes them from there, so the records are never in memory twice. Both embed the resources
//! the file names ([`crate::resources::embed_resources`], looked up under [`resource_roots`]),
//! refuse missing or unusable ones when `strict`, serialise the file and replace the output
//! atomically (a kill at any moment leaves the old file or the new one). What the embedding found
//! comes back for the caller to show ([`Exported::warnings`], [`Exported::embedded_summary`]).

use std::path::{Path, PathBuf};

use pmfedit_core::format::pmf;

use crate::compile::Assembled;
use crate::resources::{ResourceError, ResourceReport, embed_resources, embed_resources_with};

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

/// What [`write_map`] or [`write_assembled`] wrote.
#[derive(Debug, Clone)]
pub struct Exported {
    /// The file's size, bytes.
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
/// nothing is written; without it, it is left out and listed in [`Exported::warnings`]. `file`
/// comes back as written (resources embedded, texture references rewritten). `compression`:
/// how the LZ4 frames are searched (PMF-NOTES L1; the same records either way).
pub fn write_map(
    file: &mut pmf::File,
    roots: &[PathBuf],
    out: &Path,
    strict: bool,
    compression: pmf::Compression,
) -> Result<Exported, ExportError> {
    let resources = checked(embed_resources(file, roots, &[])?, strict)?;
    let file = &*file;
    let bytes = stream_to(out, &mut |f| crate::compile::write_file_to(file, threads(), compression, f))?;
    Ok(Exported { bytes, resources })
}

/// [`write_map`] of a map whose chunk records stay in their bakes
/// ([`crate::rebuild::Rebuild::assemble`]): the chunks are encoded straight from the bakes,
/// never copied into a [`pmf::File`] beside them, so an export costs no second copy of the
/// map's records (the editor's Export on a big map). The same bytes as [`write_map`] of
/// [`Assembled::into_file`] with [`Assembled::compression`].
pub fn write_assembled(
    assembled: &mut Assembled<'_>,
    roots: &[PathBuf],
    out: &Path,
    strict: bool,
) -> Result<Exported, ExportError> {
    let entities = assembled.chunk_entities();
    let resources = checked(embed_resources_with(&mut assembled.file, &entities, roots, &[])?, strict)?;
    let assembled = &*assembled;
    let bytes = stream_to(out, &mut |f| assembled.write_to(threads(), f))?;
    Ok(Exported { bytes, resources })
}

/// Threads an export encodes chunks on: every core. The bytes are the same whatever the count.
fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// What the embedding found, unless a `strict` export must refuse it.
fn checked(resources: ResourceReport, strict: bool) -> Result<ResourceReport, ExportError> {
    let problems = resources.problems();
    if strict && !problems.is_empty() {
        return Err(ExportError::Strict(problems));
    }
    Ok(resources)
}

/// Replaces `out` atomically with what `write` streams into it (each chunk goes to disk as soon
/// as it is compressed: the file is never whole in memory); returns the file's size. A chunk the
/// writer refuses fails the write (the temporary file is removed) and is reported as what it is.
/// The written bytes are synced to disk while the rest is still being compressed ([`SyncAhead`]).
fn stream_to(
    out: &Path,
    write: &mut dyn FnMut(&mut SyncAhead<'_>) -> Result<u64, pmf::StreamError>,
) -> Result<usize, ExportError> {
    let (mut bytes, mut refused) = (0, None);
    let written = pmfedit_core::project::atomic::write_atomic_by(
        out,
        &mut |f| {
            let (result, synced) = SyncAhead::run(f, &mut |w| write(w))?;
            let synced = synced.map(|_| ());
            let result = match result {
                Ok(n) => {
                    bytes = n as usize;
                    Ok(())
                }
                Err(pmf::StreamError::Io(e)) => Err(e),
                Err(pmf::StreamError::Format(e)) => {
                    let io = std::io::Error::other(e.to_string());
                    refused = Some(e);
                    Err(io)
                }
            };
            result.and(synced)
        },
        &|| Ok(()),
    );
    if let Some(source) = refused {
        return Err(ExportError::Format { path: out.to_owned(), source });
    }
    written.map_err(|source| ExportError::Write { path: out.to_owned(), source })?;
    Ok(bytes)
}

/// Bytes written between two background syncs of an export.
const SYNC_AHEAD_BYTES: u64 = 8 << 20;

/// The temporary file of an export, as its writer sees it: every [`SYNC_AHEAD_BYTES`] written, a
/// helper thread syncs what the file holds so far, so the disk writes run beside the compression
/// of the chunks after them and the final fsync ([`pmfedit_core::project::atomic`]) has only the
/// tail left (on `terrain(32,4,32)` that fsync of the whole 39–53 MB file took 80–100 ms of a
/// 0.75 s write phase). The bytes and the durability are the same.
struct SyncAhead<'a> {
    file: &'a mut std::fs::File,
    /// Bytes written since the last sync was asked for.
    unsynced: u64,
    /// Asks the helper for a sync (`None` once it stopped on an error).
    ask: Option<std::sync::mpsc::SyncSender<()>>,
}

impl SyncAhead<'_> {
    /// Runs `write` on `file` with a sync helper beside it: `write`'s result, and the number of
    /// background syncs or the first error one met. That error is returned on its own because
    /// Linux reports a failed writeback once per open file: the final fsync of the same file
    /// would not see it again.
    fn run<T>(
        file: &mut std::fs::File,
        write: &mut dyn FnMut(&mut SyncAhead<'_>) -> T,
    ) -> std::io::Result<(T, std::io::Result<usize>)> {
        let helper = file.try_clone()?;
        // One sync asked at a time: a request made while one runs waits for it, as a sync of
        // everything written so far covers the requests before it.
        let (ask, asked) = std::sync::mpsc::sync_channel::<()>(1);
        Ok(std::thread::scope(|s| {
            let syncer = s.spawn(move || {
                let mut syncs = 0;
                while asked.recv().is_ok() {
                    helper.sync_data()?;
                    syncs += 1;
                }
                Ok(syncs)
            });
            let mut w = SyncAhead { file, unsynced: 0, ask: Some(ask) };
            let result = write(&mut w);
            drop(w);
            let synced = syncer.join().unwrap_or_else(|_| Err(std::io::Error::other("the sync helper panicked")));
            (result, synced)
        }))
    }
}

impl std::io::Write for SyncAhead<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.unsynced += n as u64;
        if self.unsynced >= SYNC_AHEAD_BYTES {
            self.unsynced = 0;
            if let Some(ask) = &self.ask {
                match ask.try_send(()) {
                    // Asked, or a sync is asked already (it will cover these bytes too).
                    Ok(()) | Err(std::sync::mpsc::TrySendError::Full(())) => {}
                    // The helper stopped on an error, which `run` returns.
                    Err(std::sync::mpsc::TrySendError::Disconnected(())) => self.ask = None,
                }
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl std::io::Seek for SyncAhead<'_> {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.file.seek(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What goes through a [`SyncAhead`] lands as written (seeks included), and a long file is
    /// synced in the background as it is written.
    #[test]
    fn a_file_synced_ahead_holds_what_was_written() {
        use std::io::{Seek, SeekFrom, Write};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.bin");
        let mut f = std::fs::File::create(&path).unwrap();
        let block: Vec<u8> = (0..1 << 20).map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
        let blocks = 2 * SYNC_AHEAD_BYTES as usize / block.len() + 3;
        let (written, synced) = SyncAhead::run(&mut f, &mut |w| -> std::io::Result<()> {
            w.seek(SeekFrom::Start(4))?;
            for _ in 0..blocks {
                w.write_all(&block)?;
            }
            w.seek(SeekFrom::Start(0))?;
            w.write_all(b"head")?;
            w.flush()
        })
        .unwrap();
        written.unwrap();
        let syncs = synced.unwrap();
        assert!((1..=2).contains(&syncs), "{syncs} background syncs");
        drop(f);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 4 + blocks * block.len());
        assert_eq!(&bytes[..4], b"head");
        assert!(bytes[4..].chunks(block.len()).all(|c| c == &block[..]));
    }

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
        let e = write_map(&mut file.clone(), &roots, &out, true, pmf::Compression::Fast).unwrap_err();
        assert!(matches!(&e, ExportError::Strict(p) if p == &["map:textures/not_there (missing)"]), "{e}");
        assert!(!out.exists());
        let mut written = file.clone();
        let done = write_map(&mut written, &roots, &out, false, pmf::Compression::Fast).unwrap();
        assert_eq!(done.bytes as u64, std::fs::metadata(&out).unwrap().len());
        // Written in pieces straight from the compressed chunks: `pmf::write`'s bytes.
        assert!(std::fs::read(&out).unwrap() == pmf::write(&written).unwrap());
        assert_eq!(
            done.warnings(),
            ["1 missing or unusable resources (not embedded): map:textures/not_there (missing)"]
        );
        assert_eq!(done.embedded_summary(), "embedded archive: none");

        // A chunk the writer refuses, found while the file is being streamed: a format error,
        // and neither the output nor a temporary file is left behind.
        let mut bad = written;
        bad.levels[0].chunks[0].common.cubes.clear();
        let bad_out = dir.path().join("bad.pmf");
        let e = write_map(&mut bad, &roots, &bad_out, false, pmf::Compression::Fast).unwrap_err();
        assert!(matches!(&e, ExportError::Format { .. }) && e.to_string().contains("no cubes"), "{e}");
        assert!(!bad_out.exists());
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, [std::ffi::OsString::from("x.pmf")], "no temporary file left");
    }

    /// An export straight from the bakes (the editor's) writes the bytes of one through a whole
    /// file (`pmfc build`'s), embeds what the chunks' own entities reference (they are not in
    /// the assembled skeleton), and refuses a strict export of missing resources the same way.
    #[test]
    fn an_export_from_the_bakes_writes_what_an_export_of_the_file_writes() {
        use pmfedit_core::format::pmf::entity::{EntityData, Prop};
        use pmfedit_core::map::library::{EntityScope, MapEntity};
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("models")).unwrap();
        std::fs::write(dir.path().join("models/crate.m3d"), b"3DMO model bytes").unwrap();
        use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
        let mut map = pmfedit_core::map::Map::new("props");
        let at = pmfedit_core::map::coords::CubeAddr::containing(map.levels[0].frame().origin_lattice(), 3);
        map.levels[0]
            .set_cube(at, pmfedit_core::map::octree::Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0)))
            .unwrap();
        let level = &mut map.levels[0];
        let prop = Prop { model: "map:models/crate".into(), position: [0.5, 1.5, 0.5], ..Default::default() };
        let mut e = MapEntity::new("chunk_crate", EntityData::Prop(prop.clone()));
        e.scope = EntityScope::Chunk;
        level.objects.add(e).unwrap();
        let missing = Prop { model: "map:models/not_there".into(), ..prop };
        let mut e = MapEntity::new("lost_crate", EntityData::Prop(missing));
        e.scope = EntityScope::Chunk;
        level.objects.add(e).unwrap();
        let settings = crate::compile::CompileSettings { timestamp: 1, ..Default::default() };
        let cache = crate::vis::VisCache::new(settings.visibility.unwrap_or_default());
        let bakes: std::collections::BTreeMap<_, _> = crate::compile::level_chunks(&map.levels[0])
            .into_iter()
            .map(|c| ((0, c), crate::compile::bake_chunk_with(&map, 0, c, &settings, &cache).unwrap()))
            .collect();
        assert!(
            bakes.values().flat_map(|b| &b.pmf.server.entities).any(|e| e.name == "chunk_crate"),
            "the prop is a chunk's entity, not the file's"
        );
        let roots = resource_roots(Some(dir.path()), []);
        let assemble = || crate::compile::assemble(&map, |k| bakes.get(&k), &settings).unwrap();

        let (a, b) = (dir.path().join("a.pmf"), dir.path().join("b.pmf"));
        let e = write_assembled(&mut assemble(), &roots, &a, true).unwrap_err();
        assert!(matches!(&e, ExportError::Strict(p) if p.iter().any(|p| p.contains("models/not_there"))), "{e}");
        assert!(!a.exists());
        let from_bakes = write_assembled(&mut assemble(), &roots, &a, false).unwrap();
        let from_file = write_map(&mut assemble().into_file(), &roots, &b, false, pmf::Compression::Fast).unwrap();
        assert!(from_bakes.resources.embedded.contains(&"models/crate.m3d".to_owned()), "{from_bakes:?}");
        assert_eq!(from_bakes.resources.embedded, from_file.resources.embedded);
        assert_eq!(from_bakes.warnings(), from_file.warnings());
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        assert_eq!(from_bakes.bytes, std::fs::read(&a).unwrap().len());

        // High compression: both paths write the same smaller bytes, and they read back as the
        // very records of the fast export.
        let (ha, hb) = (dir.path().join("ha.pmf"), dir.path().join("hb.pmf"));
        let mut high = assemble();
        high.compression = pmf::Compression::High;
        write_assembled(&mut high, &roots, &ha, false).unwrap();
        write_map(&mut assemble().into_file(), &roots, &hb, false, pmf::Compression::High).unwrap();
        let (fast, small) = (std::fs::read(&a).unwrap(), std::fs::read(&ha).unwrap());
        assert_eq!(small, std::fs::read(&hb).unwrap());
        assert!(small.len() < fast.len(), "high {} bytes, fast {}", small.len(), fast.len());
        assert_eq!(pmf::read(&small).unwrap(), pmf::read(&fast).unwrap());
    }
}
