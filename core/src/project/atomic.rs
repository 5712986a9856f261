//! Replacing a file so that a crash or a kill at any moment leaves either its old or its new
//! content, never a partial or empty file: write a temporary file beside it, fsync it, rename it
//! over the target, fsync the folder.
//!
//! Temporary files are named `<name>.<pid>.<n>.tmp` and created exclusively, so two writers
//! (two processes, or two threads of one) never write into the same temporary file or rename
//! one the other is still writing. [`is_temp_of`] recognises them (and the older fixed
//! `<name>.tmp`) for cleanup.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// The folder holding `path` (`.` for a bare file name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Creates a new, empty temporary file beside `path` with a name no other writer uses.
pub fn create_temp(path: &Path) -> io::Result<(PathBuf, File)> {
    let name = path.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    let name = name.to_string_lossy();
    let pid = std::process::id();
    // Start from the clock so that restarts do not retry the same names; `create_new` makes the
    // name ours or moves on.
    let mut n = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    loop {
        let tmp = parent(path).join(format!("{name}.{pid}.{n:x}.tmp"));
        match File::options().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => n = n.wrapping_add(1),
            Err(e) => return Err(e),
        }
    }
}

/// Whether `file_name` is a temporary file of the file named `base` (made by [`create_temp`], or
/// the older fixed `<base>.tmp`).
pub fn is_temp_of(file_name: &str, base: &str) -> bool {
    let Some(rest) = file_name.strip_prefix(base).and_then(|r| r.strip_suffix(".tmp")) else { return false };
    if rest.is_empty() {
        return true;
    }
    let mut parts = rest.strip_prefix('.').unwrap_or("-").split('.');
    let hex = |s: Option<&str>, dec: bool| {
        s.is_some_and(|s| {
            !s.is_empty() && s.bytes().all(|b| if dec { b.is_ascii_digit() } else { b.is_ascii_hexdigit() })
        })
    };
    hex(parts.next(), true) && hex(parts.next(), false) && parts.next().is_none()
}

/// Replaces `path` with `bytes` atomically (see the module documentation). On failure the
/// temporary file is removed and `path` is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, bytes, &|| Ok(()))
}

/// [`write_atomic`] that calls `before_rename` once the temporary file is complete and synced:
/// **for tests**, an error there stands for a crash at the worst moment.
pub fn write_atomic_with(path: &Path, bytes: &[u8], before_rename: &dyn Fn() -> io::Result<()>) -> io::Result<()> {
    write_atomic_by(path, &mut |f| f.write_all(bytes), before_rename)
}

/// [`write_atomic`] of what `write` writes into the temporary file: a file written as it is
/// made (an export, `pmf::ChunkStream`) never needs to be whole in memory. `before_rename` as in
/// [`write_atomic_with`].
pub fn write_atomic_by(
    path: &Path,
    write: &mut dyn FnMut(&mut File) -> io::Result<()>,
    before_rename: &dyn Fn() -> io::Result<()>,
) -> io::Result<()> {
    let (tmp, mut f) = create_temp(path)?;
    let result = (|| {
        write(&mut f)?;
        f.sync_all()?;
        drop(f);
        before_rename()?;
        fs::rename(&tmp, path)?;
        sync_dir(parent(path))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Makes the names in `dir` durable (renames, creations, deletions). Only Unix can sync a folder;
/// elsewhere the rename's own guarantees apply.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("map.ron");
        let (a, _) = create_temp(&target).unwrap();
        let (b, _) = create_temp(&target).unwrap();
        assert_ne!(a, b);
        for p in [&a, &b] {
            assert!(is_temp_of(p.file_name().unwrap().to_str().unwrap(), "map.ron"), "{}", p.display());
        }
        assert!(is_temp_of("map.ron.tmp", "map.ron"));
        for other in
            ["map.ron", "map.ron.x.tmp", "map.ron.1.tmp", "map.ron.1.2.3.tmp", "other.ron.1.f.tmp", "map.ronx.1.f.tmp"]
        {
            assert!(!is_temp_of(other, "map.ron"), "{other}");
        }
    }

    /// A crash after the temporary file is written but before the rename leaves the old content;
    /// there is never a moment when the file is empty or partial.
    #[test]
    fn a_crash_before_the_rename_keeps_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.pmf");
        write_atomic(&target, b"old good bytes").unwrap();
        let crash = || Err(io::Error::other("killed"));
        assert!(write_atomic_with(&target, b"new bytes", &crash).is_err());
        assert_eq!(fs::read(&target).unwrap(), b"old good bytes");
        // While the new content is being written the target still reads as the old one.
        let check = || {
            assert_eq!(fs::read(&target).unwrap(), b"old good bytes");
            Ok(())
        };
        write_atomic_with(&target, b"new bytes", &check).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new bytes");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left");
    }

    /// Two writers replacing one file at the same time both succeed (a shared temporary name made
    /// the loser fail with "No such file or directory"), and the file is one of theirs.
    #[test]
    fn concurrent_writers_do_not_collide() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("map.ron");
        std::thread::scope(|s| {
            for w in 0..2u8 {
                let target = &target;
                s.spawn(move || {
                    for i in 0..200 {
                        write_atomic(target, &[w; 64]).unwrap_or_else(|e| panic!("writer {w}, write {i}: {e}"));
                    }
                });
            }
        });
        let last = fs::read(&target).unwrap();
        assert!(last == [0; 64] || last == [1; 64]);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left");
    }
}
