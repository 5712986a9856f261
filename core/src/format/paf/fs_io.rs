//! Packing a folder into an archive and extracting an archive into a folder (std only).

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::archive::{Archive, Dir, MAX_DEPTH, Node, PafError, Resolved, join, validate_link_target, validate_name};

/// Most file data that link copies may add during one extraction (see [`Archive::extract_to`]).
pub const LINK_COPY_MAX_BYTES: u64 = 1 << 30;
/// Most files and folders that link copies may add during one extraction.
pub const LINK_COPY_MAX_ENTRIES: u64 = 100_000;

/// What [`Archive::extract_to`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtractReport {
    /// Folders created or reused (including those made for link copies).
    pub dirs: usize,
    /// Files written (including link copies).
    pub files: usize,
    /// File bytes written (including link copies).
    pub bytes: u64,
    /// Archive paths of links that were materialised as copies of their targets.
    pub links_copied: Vec<String>,
    /// Links that were not written because their target does not resolve.
    pub links_skipped: Vec<SkippedLink>,
}

/// A link that [`Archive::extract_to`] skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedLink {
    /// Archive path of the link.
    pub path: String,
    /// Its target.
    pub target: String,
    /// Why it was skipped (e.g. no entry at the target).
    pub reason: String,
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> PafError + '_ {
    move |source| PafError::Io { path: path.to_owned(), source }
}

impl Archive {
    /// Packs the folder at `path` recursively: regular files become files, folders become
    /// directories, entries sorted by name bytes, so the same folder always gives the same archive.
    ///
    /// Symlinks are never followed. A symlink whose fully resolved target is a file or folder inside
    /// the packed folder becomes a PAF link to that target's archive path; any other symlink
    /// (pointing outside, at the folder itself, dangling, or at something that is not a file or
    /// folder) is an error naming it. Names that are not UTF-8 or break decision A4 (e.g. contain
    /// `\`), other file types (sockets, devices, ...) and folders nested more than [`MAX_DEPTH`]
    /// deep are errors naming the path. Nothing is skipped silently.
    pub fn from_dir(path: impl AsRef<Path>) -> Result<Archive, PafError> {
        let path = path.as_ref();
        let meta = fs::metadata(path).map_err(io_err(path))?;
        if !meta.is_dir() {
            return Err(PafError::Io { path: path.to_owned(), source: io::Error::other("not a folder") });
        }
        let canonical_root = fs::canonicalize(path).map_err(io_err(path))?;
        let root = pack_dir(path, &canonical_root, 0)?;
        Ok(Archive { root })
    }

    /// Extracts the archive into the folder `dir` (created if missing). Existing regular files are
    /// overwritten; other existing entries are kept.
    ///
    /// Safety: the whole tree is validated first (names, link targets, depth), so an invalid archive
    /// writes nothing. Every output path is the canonicalised `dir` joined with validated single
    /// components and is checked to stay under it; any existing path component on disk that is a
    /// symlink (or a file where a folder is needed) is refused rather than followed. (Symlinks swapped
    /// in concurrently by another process are out of scope.)
    ///
    /// Links never become OS symlinks. A link whose target resolves inside the archive is written as
    /// a copy of the target file or folder (recursively; links inside are handled the same way); one
    /// that does not resolve (dangling, or through a file) is skipped and reported in
    /// [`ExtractReport::links_skipped`]. Link cycles, including a link copying a folder into itself,
    /// are errors, and link copies may add at most [`LINK_COPY_MAX_BYTES`] bytes and
    /// [`LINK_COPY_MAX_ENTRIES`] entries in total, so links cannot blow up an extraction.
    ///
    /// The expansion is counted by a dry run before anything is written: an archive whose links
    /// would go over the limits (or cycle) writes nothing. A failure while writing (an unsafe
    /// existing path, a full disk) removes the files and folders this extraction created
    /// (including `dir` itself if it created it); files it overwrote keep their new content.
    pub fn extract_to(&self, dir: impl AsRef<Path>) -> Result<ExtractReport, PafError> {
        self.extract_to_limited(dir, LINK_COPY_MAX_BYTES, LINK_COPY_MAX_ENTRIES)
    }

    /// [`Archive::extract_to`] with other limits on what link copies may add.
    pub(super) fn extract_to_limited(
        &self,
        dir: impl AsRef<Path>,
        max_link_bytes: u64,
        max_link_entries: u64,
    ) -> Result<ExtractReport, PafError> {
        self.validate()?;
        let dir = dir.as_ref();
        let new = |base: PathBuf, dry_run: bool| Extractor {
            archive: self,
            base,
            report: ExtractReport::default(),
            link_bytes: 0,
            link_entries: 0,
            max_link_bytes,
            max_link_entries,
            stack: Vec::new(),
            dry_run,
            created: Vec::new(),
        };
        // Dry run: the whole expansion (links, cycles, limits) is counted before anything is
        // written. Paths are only joined and checked, relative to a stand-in base.
        let mut plan = new(PathBuf::new(), true);
        plan.write_dir(&self.root, Path::new(""), "", 0, false)?;

        // Folders this extraction creates for `dir`, to remove on failure.
        let made: Vec<PathBuf> =
            dir.ancestors().take_while(|a| !a.as_os_str().is_empty() && !a.exists()).map(Path::to_path_buf).collect();
        fs::create_dir_all(dir).map_err(io_err(dir))?;
        let base = fs::canonicalize(dir).map_err(io_err(dir))?;
        let mut ex = new(base.clone(), false);
        match ex.write_dir(&self.root, &base, "", 0, false) {
            Ok(()) => Ok(ex.report),
            Err(e) => {
                ex.remove_created();
                // Innermost first; a folder that holds something else stays.
                for d in &made {
                    let _ = fs::remove_dir(d);
                }
                Err(e)
            }
        }
    }
}

/// Packs one folder; `canonical_root` is the packed folder, canonicalised, for symlink targets.
fn pack_dir(dir: &Path, canonical_root: &Path, depth: usize) -> Result<Dir, PafError> {
    let mut out = Dir::default();
    for entry in fs::read_dir(dir).map_err(io_err(dir))? {
        let entry = entry.map_err(io_err(dir))?;
        let path = entry.path();
        let name = entry.file_name().into_string().map_err(|_| PafError::UnsupportedName {
            path: path.clone(),
            reason: "the name is not UTF-8".to_owned(),
        })?;
        validate_name(&name)
            .map_err(|reason| PafError::UnsupportedName { path: path.clone(), reason: reason.to_string() })?;
        if depth + 1 > MAX_DEPTH {
            return Err(PafError::TooDeep { path: path.display().to_string() });
        }
        let meta = fs::symlink_metadata(&path).map_err(io_err(&path))?;
        let node = if meta.file_type().is_symlink() {
            Node::Link(symlink_target(&path, canonical_root)?)
        } else if meta.is_dir() {
            Node::Dir(pack_dir(&path, canonical_root, depth + 1)?)
        } else if meta.is_file() {
            Node::File(fs::read(&path).map_err(io_err(&path))?)
        } else {
            return Err(PafError::UnsupportedFileType { path });
        };
        out.entries.insert(name, node);
    }
    Ok(out)
}

/// The archive path a symlink inside the packed folder points at.
fn symlink_target(path: &Path, canonical_root: &Path) -> Result<String, PafError> {
    let bad = |reason: String| PafError::BadSymlink { path: path.to_owned(), reason };
    let resolved = fs::canonicalize(path).map_err(|e| bad(format!("its target does not resolve ({e})")))?;
    let rel = resolved
        .strip_prefix(canonical_root)
        .map_err(|_| bad(format!("it points outside the packed folder, to {}", resolved.display())))?;
    let meta = fs::metadata(&resolved).map_err(|e| bad(format!("{}: {e}", resolved.display())))?;
    if !meta.is_file() && !meta.is_dir() {
        return Err(bad(format!("its target {} is not a regular file or folder", resolved.display())));
    }
    let mut target = String::new();
    for comp in rel.components() {
        let Component::Normal(name) = comp else {
            return Err(bad(format!("unexpected component in its target {}", resolved.display())));
        };
        let name = name.to_str().ok_or_else(|| bad("its target's path is not UTF-8".to_owned()))?;
        target = join(&target, name);
    }
    if target.is_empty() {
        return Err(bad("it points at the packed folder itself".to_owned()));
    }
    validate_link_target(&target).map_err(|reason| bad(format!("its target {target:?} cannot be stored: {reason}")))?;
    Ok(target)
}

struct Extractor<'a> {
    archive: &'a Archive,
    /// The canonical destination folder.
    base: PathBuf,
    report: ExtractReport,
    link_bytes: u64,
    link_entries: u64,
    max_link_bytes: u64,
    max_link_entries: u64,
    /// The archive directories being written, outermost first (real ancestors and link copies).
    stack: Vec<&'a Dir>,
    /// Count and check only: nothing touches the disk.
    dry_run: bool,
    /// Files and folders created on disk, in creation order.
    created: Vec<PathBuf>,
}

impl<'a> Extractor<'a> {
    /// Writes the contents of `dir` into the existing folder `out`. `via_link`: inside a link copy.
    fn write_dir(
        &mut self,
        dir: &'a Dir,
        out: &Path,
        apath: &str,
        depth: usize,
        via_link: bool,
    ) -> Result<(), PafError> {
        self.stack.push(dir);
        for (name, node) in &dir.entries {
            let child_apath = join(apath, name);
            if depth + 1 > MAX_DEPTH {
                return Err(PafError::TooDeep { path: child_apath });
            }
            let child_out = self.child_path(out, name)?;
            match node {
                Node::Dir(child) => {
                    self.make_dir(&child_out, via_link)?;
                    self.write_dir(child, &child_out, &child_apath, depth + 1, via_link)?;
                }
                Node::File(data) => self.write_file(&child_out, data, via_link)?,
                Node::Link(target) => match self.archive.resolve_link(&child_apath, target) {
                    Ok(Resolved::File(data)) => {
                        self.write_file(&child_out, data, true)?;
                        self.report.links_copied.push(child_apath);
                    }
                    Ok(Resolved::Dir(target_dir)) => {
                        if self.stack.iter().any(|d| std::ptr::eq(*d, target_dir)) {
                            return Err(PafError::LinkCycle { path: child_apath });
                        }
                        self.make_dir(&child_out, true)?;
                        self.write_dir(target_dir, &child_out, &child_apath, depth + 1, true)?;
                        self.report.links_copied.push(child_apath);
                    }
                    Err(e @ (PafError::LinkCycle { .. } | PafError::TooManyLinks { .. })) => return Err(e),
                    Err(e) => self.report.links_skipped.push(SkippedLink {
                        path: child_apath,
                        target: target.clone(),
                        reason: e.to_string(),
                    }),
                },
            }
        }
        self.stack.pop();
        Ok(())
    }

    /// `out/name`, checked to be one plain component that stays under the destination.
    fn child_path(&self, out: &Path, name: &str) -> Result<PathBuf, PafError> {
        let child = out.join(name);
        let mut comps = Path::new(name).components();
        let single_normal = matches!(comps.next(), Some(Component::Normal(_))) && comps.next().is_none();
        if !single_normal || !child.starts_with(&self.base) || child.parent() != Some(out) {
            return Err(PafError::UnsafePath {
                path: child,
                reason: format!("the name {name:?} is not a plain path component inside the destination"),
            });
        }
        Ok(child)
    }

    fn count_link_entry(&mut self, bytes: u64) -> Result<(), PafError> {
        self.link_entries += 1;
        self.link_bytes += bytes;
        if self.link_entries > self.max_link_entries {
            return Err(PafError::LinkExpansionTooLarge { limit: format!("{} entries", self.max_link_entries) });
        }
        if self.link_bytes > self.max_link_bytes {
            return Err(PafError::LinkExpansionTooLarge { limit: format!("{} bytes", self.max_link_bytes) });
        }
        Ok(())
    }

    /// Removes what this extraction created, newest first (folders only when empty).
    fn remove_created(&mut self) {
        for p in self.created.drain(..).rev() {
            let _ = if p.is_dir() { fs::remove_dir(&p) } else { fs::remove_file(&p) };
        }
    }

    fn make_dir(&mut self, path: &Path, via_link: bool) -> Result<(), PafError> {
        if via_link {
            self.count_link_entry(0)?;
        }
        if self.dry_run {
            self.report.dirs += 1;
            return Ok(());
        }
        match fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(PafError::UnsafePath {
                    path: path.to_owned(),
                    reason: "it already exists as a symlink, which extraction does not follow".to_owned(),
                });
            }
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(PafError::UnsafePath {
                    path: path.to_owned(),
                    reason: "a folder is needed there, but something else exists".to_owned(),
                });
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                fs::create_dir(path).map_err(io_err(path))?;
                self.created.push(path.to_owned());
            }
            Err(e) => return Err(PafError::Io { path: path.to_owned(), source: e }),
        }
        self.report.dirs += 1;
        Ok(())
    }

    fn write_file(&mut self, path: &Path, data: &[u8], via_link: bool) -> Result<(), PafError> {
        if via_link {
            self.count_link_entry(data.len() as u64)?;
        }
        if self.dry_run {
            self.report.files += 1;
            self.report.bytes += data.len() as u64;
            return Ok(());
        }
        let mut existed = true;
        match fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(PafError::UnsafePath {
                    path: path.to_owned(),
                    reason: "it already exists as a symlink, which extraction does not follow".to_owned(),
                });
            }
            Ok(meta) if !meta.is_file() => {
                return Err(PafError::UnsafePath {
                    path: path.to_owned(),
                    reason: "a file is needed there, but something else exists".to_owned(),
                });
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => existed = false,
            Err(e) => return Err(PafError::Io { path: path.to_owned(), source: e }),
        }
        if !existed {
            self.created.push(path.to_owned());
        }
        fs::write(path, data).map_err(io_err(path))?;
        self.report.files += 1;
        self.report.bytes += data.len() as u64;
        Ok(())
    }
}
