//! Asset watching and material thumbnails.
//!
//! [`AssetWatcher`] watches texture folders with `notify` through `notify-debouncer-full`
//! (150 ms): the project's `textures/` and the shared `assets/textures/`. It ignores `Access`
//! events (our own reads), reports changed, new and removed PNG files (canonical paths) over a
//! channel and wakes the UI. When inotify cannot be used (watch limit reached, network file
//! systems) it falls back to a `PollWatcher`; when the kernel dropped events it reports a rescan.
//!
//! [`Thumbnails`] resolves a material's texture path (`textures/stone.png`) against the project
//! folder first, then the shared asset folder, loads it into an `egui::TextureHandle` on first
//! use, and forgets entries the watcher reports so that the next frame reloads them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Duration;

use eframe::egui;
use notify::{EventKind, PollWatcher, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, NoCache, RecommendedCache, new_debouncer_opt};

/// Debounce delay of file events.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

/// What the watcher reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssetEvent {
    /// These image files were created, changed or removed (canonical paths where they exist).
    Changed(Vec<PathBuf>),
    /// Events were lost: reload everything.
    Rescan,
}

enum Backend {
    Native(Debouncer<RecommendedWatcher, RecommendedCache>),
    Poll(Debouncer<PollWatcher, NoCache>),
}

impl Backend {
    fn watch(&mut self, path: &Path, mode: RecursiveMode) -> notify::Result<()> {
        match self {
            Backend::Native(d) => d.watch(path, mode),
            Backend::Poll(d) => d.watch(path, mode),
        }
    }
}

/// Watches folders for image changes. Dropping it stops watching.
pub struct AssetWatcher {
    backend: Backend,
    rx: Receiver<AssetEvent>,
    /// Folders being watched.
    pub watched: Vec<PathBuf>,
    /// Whether the polling fallback is in use.
    pub polling: bool,
}

/// Whether a path names an image the editor can load.
pub fn is_image(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("png"))
}

fn handler(tx: Sender<AssetEvent>, wake: Arc<dyn Fn() + Send + Sync>) -> impl FnMut(DebounceEventResult) + Send {
    move |result: DebounceEventResult| {
        let event = match result {
            Ok(events) => {
                if events.iter().any(|e| e.need_rescan()) {
                    AssetEvent::Rescan
                } else {
                    let mut paths: Vec<PathBuf> = events
                        .iter()
                        .filter(|e| !matches!(e.kind, EventKind::Access(_)))
                        .flat_map(|e| e.paths.iter())
                        .filter(|p| is_image(p))
                        .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
                        .collect();
                    paths.sort();
                    paths.dedup();
                    if paths.is_empty() {
                        return;
                    }
                    AssetEvent::Changed(paths)
                }
            }
            Err(_) => AssetEvent::Rescan,
        };
        if tx.send(event).is_ok() {
            wake();
        }
    }
}

/// Why folders could not be watched.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// Even the polling watcher could not start.
    #[error("could not start a file watcher: {0}")]
    Start(#[source] notify::Error),
    /// A folder could not be watched.
    #[error("{}: {source}", path.display())]
    Folder { path: PathBuf, source: notify::Error },
}

impl AssetWatcher {
    /// Watches `folders` (those that exist; recursively). `wake` is called from the watcher
    /// thread after each report (e.g. `ctx.request_repaint()`).
    pub fn new(folders: &[PathBuf], wake: Arc<dyn Fn() + Send + Sync>) -> Result<Self, WatchError> {
        let (tx, rx) = channel();
        let native = new_debouncer_opt::<_, RecommendedWatcher, RecommendedCache>(
            DEBOUNCE,
            None,
            handler(tx.clone(), wake.clone()),
            RecommendedCache::new(),
            notify::Config::default(),
        );
        let mut watcher = match native {
            Ok(d) => AssetWatcher { backend: Backend::Native(d), rx, watched: Vec::new(), polling: false },
            Err(_) => Self::polling(tx, wake.clone(), rx)?,
        };
        for f in folders {
            if let Err(e) = watcher.watch(f) {
                // inotify limits: switch to polling for everything.
                if !watcher.polling {
                    let (tx, rx) = channel();
                    let mut poll = Self::polling(tx, wake.clone(), rx)?;
                    for f in folders {
                        let _ = poll.watch(f);
                    }
                    return Ok(poll);
                }
                return Err(WatchError::Folder { path: f.clone(), source: e });
            }
        }
        Ok(watcher)
    }

    fn polling(
        tx: Sender<AssetEvent>,
        wake: Arc<dyn Fn() + Send + Sync>,
        rx: Receiver<AssetEvent>,
    ) -> Result<Self, WatchError> {
        let config = notify::Config::default().with_poll_interval(Duration::from_millis(500));
        let d = new_debouncer_opt::<_, PollWatcher, NoCache>(DEBOUNCE, None, handler(tx, wake), NoCache, config)
            .map_err(WatchError::Start)?;
        Ok(AssetWatcher { backend: Backend::Poll(d), rx, watched: Vec::new(), polling: true })
    }

    fn watch(&mut self, folder: &Path) -> notify::Result<()> {
        if !folder.is_dir() {
            return Ok(());
        }
        self.backend.watch(folder, RecursiveMode::Recursive)?;
        self.watched.push(folder.canonicalize().unwrap_or_else(|_| folder.to_owned()));
        Ok(())
    }

    /// Reports received since the last call.
    pub fn drain(&self) -> Vec<AssetEvent> {
        self.rx.try_iter().collect()
    }

    /// Waits up to `timeout` for the next report (tests).
    pub fn recv_timeout(&self, timeout: Duration) -> Option<AssetEvent> {
        self.rx.recv_timeout(timeout).ok()
    }
}

/// The shared asset folder: `$PMFEDIT_ASSETS`, else `assets/` next to the executable, else the
/// repository's `assets/` (development builds). Reads the environment: `main` calls it once into
/// the [`Launch`](crate::launch::Launch) (tests call it for theirs).
pub fn assets_dir() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PMFEDIT_ASSETS") {
        return Some(PathBuf::from(p));
    }
    if let Some(p) = std::env::current_exe().ok().and_then(|e| e.parent().map(|d| d.join("assets")))
        && p.is_dir()
    {
        return Some(p);
    }
    let dev = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("assets");
    dev.is_dir().then(|| dev.canonicalize().unwrap_or(dev))
}

/// The file a material's texture reference names under `roots` (project first): an absolute
/// path as it is, else the lookup a build does ([`pmfedit_bake::resources::resolve_texture`]:
/// `map:` or no drive, any image extension or `.ptf`).
pub fn resolve_texture(roots: &[PathBuf], texture: &str) -> Option<PathBuf> {
    if texture.is_empty() {
        return None;
    }
    let rel = Path::new(texture);
    if rel.is_absolute() {
        return rel.is_file().then(|| rel.to_owned());
    }
    pmfedit_bake::resources::resolve_texture(roots, texture)
}

/// Every texture file under the `textures/` folder of each root (project first), as the
/// reference a material stores (`textures/stone.png`, `/`-separated): PNG and PTF files, at most
/// four folders deep and 4096 names; sorted, without duplicates (a project file hides the shared
/// asset of the same name).
pub fn list_textures(roots: &[PathBuf]) -> Vec<String> {
    fn walk(dir: &Path, rel: &str, depth: u32, out: &mut std::collections::BTreeSet<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            if out.len() >= 4096 {
                return;
            }
            let path = e.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else { continue };
            let child = format!("{rel}/{name}");
            if path.is_dir() {
                if depth < 4 && !name.starts_with('.') {
                    walk(&path, &child, depth + 1, out);
                }
            } else if is_image(&path)
                || path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("ptf"))
            {
                out.insert(child);
            }
        }
    }
    let mut out = std::collections::BTreeSet::new();
    for root in roots {
        walk(&root.join("textures"), "textures", 1, &mut out);
    }
    out.into_iter().collect()
}

/// Largest image file loaded as a thumbnail.
const MAX_IMAGE_BYTES: u64 = 32 << 20;
/// Thumbnail edge in pixels.
const THUMB: u32 = 64;

struct Entry {
    /// Where it was found (canonical), `None` when no file exists.
    path: Option<PathBuf>,
    texture: Option<egui::TextureHandle>,
}

/// Material thumbnails loaded from texture files, kept up to date by an [`AssetWatcher`].
pub struct Thumbnails {
    /// Folders searched, in order (project first).
    roots: Vec<PathBuf>,
    cache: HashMap<String, Entry>,
    watcher: Option<AssetWatcher>,
    wake: Arc<dyn Fn() + Send + Sync>,
    /// Number of reloads caused by file events (for the status bar and tests).
    pub reloads: u64,
    /// Why watching failed, if it did.
    pub watch_error: Option<WatchError>,
}

impl Thumbnails {
    /// Thumbnails for a project in `project_dir` (if saved) and the shared asset folder.
    pub fn new(project_dir: Option<&Path>, assets: Option<PathBuf>, wake: Arc<dyn Fn() + Send + Sync>) -> Self {
        let mut t =
            Self { roots: Vec::new(), cache: HashMap::new(), watcher: None, wake, reloads: 0, watch_error: None };
        t.set_roots(project_dir, assets);
        t
    }

    /// Re-roots (after opening or saving a project elsewhere) and restarts the watcher.
    pub fn set_roots(&mut self, project_dir: Option<&Path>, assets: Option<PathBuf>) {
        let roots: Vec<PathBuf> = project_dir.map(Path::to_owned).into_iter().chain(assets).collect();
        if roots == self.roots && self.watcher.is_some() {
            return;
        }
        self.roots = roots;
        self.cache.clear();
        let folders: Vec<PathBuf> = self.roots.iter().map(|r| r.join("textures")).collect();
        match AssetWatcher::new(&folders, self.wake.clone()) {
            Ok(w) => {
                self.watcher = Some(w);
                self.watch_error = None;
            }
            Err(e) => {
                self.watcher = None;
                self.watch_error = Some(e);
            }
        }
    }

    /// The roots searched.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The file a texture path resolves to (see [`resolve_texture`]).
    pub fn resolve(&self, texture: &str) -> Option<PathBuf> {
        resolve_texture(&self.roots, texture)
    }

    /// Applies the watcher's reports: entries whose file changed, and entries that had no file
    /// (it may exist now), are forgotten and reload on next use. Returns how many were dropped.
    pub fn poll(&mut self) -> usize {
        self.poll_events().0
    }

    /// [`Thumbnails::poll`], also handing back the reports themselves so that other caches of the
    /// same files (the viewport's textures) can follow them: (entries dropped, reports).
    pub fn poll_events(&mut self) -> (usize, Vec<AssetEvent>) {
        let Some(w) = &self.watcher else { return (0, Vec::new()) };
        let events = w.drain();
        let mut dropped = 0;
        for event in events.iter().cloned() {
            let before = self.cache.len();
            match event {
                AssetEvent::Rescan => self.cache.clear(),
                AssetEvent::Changed(paths) => self.cache.retain(|_, e| match &e.path {
                    None => false,
                    Some(p) => !paths.contains(p),
                }),
            }
            dropped += before - self.cache.len();
        }
        self.reloads += dropped as u64;
        (dropped, events)
    }

    /// The thumbnail of a texture path, loading it if needed; `None` when no file is found or it
    /// cannot be decoded.
    pub fn get(&mut self, ctx: &egui::Context, texture: &str) -> Option<egui::TextureHandle> {
        if texture.is_empty() {
            return None;
        }
        if let Some(e) = self.cache.get(texture) {
            return e.texture.clone();
        }
        let path = self.resolve(texture).map(|p| p.canonicalize().unwrap_or(p));
        let tex = path.as_deref().and_then(|p| load_thumbnail(ctx, texture, p));
        self.cache.insert(texture.to_owned(), Entry { path, texture: tex.clone() });
        tex
    }

    /// Whether a texture is cached (tests).
    pub fn is_cached(&self, texture: &str) -> bool {
        self.cache.contains_key(texture)
    }
}

/// Decodes an image file (any format the `image` crate reads here, or PTF) to RGBA8; `None` when
/// it is missing, larger than 32 MiB or cannot be decoded.
pub fn load_rgba(path: &Path) -> Option<image::RgbaImage> {
    if std::fs::metadata(path).ok()?.len() > MAX_IMAGE_BYTES {
        return None;
    }
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("ptf")) {
        let ptf = pmfedit_core::format::ptf::Ptf::read(&std::fs::read(path).ok()?).ok()?;
        return image::RgbaImage::from_raw(ptf.width() as u32, ptf.height() as u32, ptf.to_rgba8());
    }
    Some(image::open(path).ok()?.to_rgba8())
}

fn load_thumbnail(ctx: &egui::Context, name: &str, path: &Path) -> Option<egui::TextureHandle> {
    let img = load_rgba(path)?;
    let img =
        if img.width() > THUMB || img.height() > THUMB { image::imageops::thumbnail(&img, THUMB, THUMB) } else { img };
    let size = [img.width() as usize, img.height() as usize];
    let color = egui::ColorImage::from_rgba_unmultiplied(size, img.as_raw());
    Some(ctx.load_texture(format!("thumb:{name}"), color, egui::TextureOptions::NEAREST))
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    #[test]
    fn texture_list_covers_both_roots_once_and_skips_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let (project, assets) = (dir.path().join("project"), dir.path().join("assets"));
        for (root, files) in [
            (&project, &["textures/a.png", "textures/sub/b.ptf", "textures/notes.txt"][..]),
            (&assets, &["textures/a.png", "textures/c.PNG", "other/d.png"][..]),
        ] {
            for f in files {
                let p = root.join(f);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(&p, b"x").unwrap();
            }
        }
        let names = list_textures(&[project, assets, dir.path().join("missing")]);
        assert_eq!(names, ["textures/a.png", "textures/c.PNG", "textures/sub/b.ptf"]);
    }

    fn png(path: &Path, rgb: [u8; 3]) {
        image::RgbaImage::from_pixel(4, 4, image::Rgba([rgb[0], rgb[1], rgb[2], 255])).save(path).unwrap();
    }

    #[test]
    fn watcher_reports_new_and_changed_pngs_within_a_second() {
        let dir = tempfile::tempdir().unwrap();
        let textures = dir.path().join("textures");
        std::fs::create_dir_all(&textures).unwrap();
        let w = AssetWatcher::new(std::slice::from_ref(&textures), Arc::new(|| {})).unwrap();
        let file = textures.join("stone.png");
        let start = Instant::now();
        png(&file, [1, 2, 3]);
        std::fs::write(textures.join("notes.txt"), "ignored").unwrap();
        let want = file.canonicalize().unwrap();
        let deadline = start + Duration::from_secs(5);
        let mut seen = false;
        while Instant::now() < deadline && !seen {
            match w.recv_timeout(deadline - Instant::now()) {
                Some(AssetEvent::Changed(paths)) => {
                    assert!(paths.iter().all(|p| is_image(p)), "{paths:?}");
                    seen = paths.contains(&want);
                }
                Some(AssetEvent::Rescan) => seen = true,
                None => break,
            }
        }
        assert!(seen, "no event for {}", want.display());
        assert!(start.elapsed() < Duration::from_secs(if w.polling { 3 } else { 1 }), "{:?}", start.elapsed());
    }

    #[test]
    fn thumbnails_resolve_project_first_and_reload_after_a_change() {
        let project = tempfile::tempdir().unwrap();
        let assets = tempfile::tempdir().unwrap();
        for d in [project.path(), assets.path()] {
            std::fs::create_dir_all(d.join("textures")).unwrap();
        }
        png(&assets.path().join("textures/stone.png"), [9, 9, 9]);
        let ctx = egui::Context::default();
        let mut t = Thumbnails::new(Some(project.path()), Some(assets.path().to_owned()), Arc::new(|| {}));
        assert_eq!(t.resolve("textures/stone.png").unwrap(), assets.path().join("textures/stone.png"));
        assert!(t.get(&ctx, "textures/stone.png").is_some());
        assert!(t.get(&ctx, "textures/missing.png").is_none());
        // A project texture of the same name takes over once it appears.
        png(&project.path().join("textures/stone.png"), [200, 0, 0]);
        let deadline = Instant::now() + Duration::from_secs(5);
        while t.is_cached("textures/missing.png") && Instant::now() < deadline {
            t.poll();
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!t.is_cached("textures/missing.png"), "missing entries are dropped on any change");
        assert_eq!(t.resolve("textures/stone.png").unwrap(), project.path().join("textures/stone.png"));
    }
}
