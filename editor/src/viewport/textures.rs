//! The UI-thread side of the viewport's material textures.
//!
//! [`TextureStore`] knows which texture references the uploaded meshes (and the sky) use, resolves
//! them the way thumbnails and builds do ([`crate::watch::resolve_texture`]: project folder first,
//! then the shared `assets/`), decodes them lazily, a few per frame, and hands the pixels to the
//! renderer as [`super::render::Upload::Texture`] (GL uploads happen in the paint callback). It
//! follows the asset watcher: a reference whose file changed, or that had no file yet, is loaded
//! again; a rescan or new search folders reload everything. It also keeps each texture's average
//! colour (the sky gradient uses it).

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;

use crate::watch::{AssetEvent, load_rgba, resolve_texture};

/// Textures decoded per frame at most.
pub const LOADS_PER_FRAME: usize = 4;
/// Longest texture edge sent to the GPU; bigger images are scaled down.
pub const MAX_EDGE: u32 = 2048;

/// Decoded RGBA8 pixels, rows top to bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextureImage {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<[u8; 4]>,
}

impl TextureImage {
    /// Mean colour (sRGB values in `0..=1`), alpha-weighted; `None` for a fully transparent image.
    pub fn average(&self) -> Option<[f32; 3]> {
        let mut sum = [0u64; 3];
        let mut weight = 0u64;
        for p in &self.rgba {
            let a = u64::from(p[3]);
            for c in 0..3 {
                sum[c] += u64::from(p[c]) * a;
            }
            weight += a;
        }
        (weight > 0).then(|| sum.map(|s| s as f32 / weight as f32 / 255.0))
    }
}

/// Texture reference → layer of the renderer's texture array ("slot"); slot 0 is white (no
/// texture), new references get the next slot. Shared by the viewport (which writes each chunk's
/// layers into its job for the mesh workers) and the renderer (which fills the layers), so both
/// sides agree on a layer before its pixels arrive.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextureSlots {
    slots: HashMap<String, usize>,
}

impl TextureSlots {
    /// The slot of a reference, giving a new one the next slot (0 for the empty reference).
    pub fn slot(&mut self, reference: &str) -> usize {
        if reference.is_empty() {
            return 0;
        }
        let next = self.slots.len() + 1;
        *self.slots.entry(reference.to_owned()).or_insert(next)
    }

    /// Slots given out, not counting slot 0.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether no reference has a slot.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

#[derive(Debug, Clone, Default)]
struct Entry {
    /// The file found at the last load (canonical), `None` when there was none.
    path: Option<PathBuf>,
    average: Option<[f32; 3]>,
}

/// Texture references in use, their files and load queue (see the module docs).
#[derive(Debug, Default)]
pub struct TextureStore {
    roots: Vec<PathBuf>,
    entries: HashMap<String, Entry>,
    queue: VecDeque<String>,
    queued: HashSet<String>,
    /// Loads done so far (tests and the HUD).
    pub loads: u64,
}

impl TextureStore {
    /// Sets the folders searched (project first). New folders reload every texture.
    pub fn set_roots(&mut self, roots: &[PathBuf]) {
        if self.roots != roots {
            self.roots = roots.to_vec();
            self.reload_all();
        }
    }

    /// The folders searched.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    fn enqueue(&mut self, reference: &str) {
        if self.queued.insert(reference.to_owned()) {
            self.queue.push_back(reference.to_owned());
        }
    }

    fn reload_all(&mut self) {
        let keys: Vec<String> = self.entries.keys().cloned().collect();
        for k in keys {
            self.enqueue(&k);
        }
    }

    /// Notes that a texture reference is drawn; it is loaded if it never was.
    pub fn want(&mut self, reference: &str) {
        if reference.is_empty() || self.entries.contains_key(reference) {
            return;
        }
        self.entries.insert(reference.to_owned(), Entry::default());
        self.enqueue(reference);
    }

    /// Follows the asset watcher's reports (the events [`crate::watch::Thumbnails::poll_events`]
    /// hands back).
    pub fn on_events(&mut self, events: &[AssetEvent]) {
        for e in events {
            match e {
                AssetEvent::Rescan => self.reload_all(),
                AssetEvent::Changed(paths) => {
                    // A changed file, or a reference that now resolves elsewhere (a project
                    // texture appeared in front of an asset, or a missing file exists now).
                    let hit: Vec<String> = self
                        .entries
                        .iter()
                        .filter(|(k, e)| {
                            let now = resolve_texture(&self.roots, k).map(|p| p.canonicalize().unwrap_or(p));
                            now != e.path || now.is_some_and(|p| paths.contains(&p))
                        })
                        .map(|(k, _)| k.clone())
                        .collect();
                    for k in hit {
                        self.enqueue(&k);
                    }
                }
            }
        }
    }

    /// Texture references waiting to be (re)loaded.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    /// Whether a reference is waiting to be (re)loaded.
    pub fn is_pending(&self, reference: &str) -> bool {
        self.queued.contains(reference)
    }

    /// The average colour of a loaded texture (`None`: not loaded yet, missing or undecodable).
    pub fn average(&self, reference: &str) -> Option<[f32; 3]> {
        self.entries.get(reference)?.average
    }

    /// Loads up to `budget` queued textures: (reference, pixels or `None` when no file exists or it
    /// cannot be decoded — the renderer then draws it white).
    pub fn pump(&mut self, budget: usize) -> Vec<(String, Option<TextureImage>)> {
        let mut out = Vec::new();
        while out.len() < budget {
            let Some(reference) = self.queue.pop_front() else { break };
            self.queued.remove(&reference);
            let path = resolve_texture(&self.roots, &reference).map(|p| p.canonicalize().unwrap_or(p));
            let image = path.as_deref().and_then(load_rgba).map(|img| {
                let img = if img.width() > MAX_EDGE || img.height() > MAX_EDGE {
                    let s = f64::from(MAX_EDGE) / f64::from(img.width().max(img.height()));
                    let (w, h) = ((f64::from(img.width()) * s).max(1.0), (f64::from(img.height()) * s).max(1.0));
                    image::imageops::resize(&img, w as u32, h as u32, image::imageops::FilterType::Triangle)
                } else {
                    img
                };
                TextureImage { width: img.width(), height: img.height(), rgba: img.pixels().map(|p| p.0).collect() }
            });
            let average = image.as_ref().and_then(TextureImage::average);
            self.entries.insert(reference.clone(), Entry { path, average });
            self.loads += 1;
            out.push((reference, image));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texture_slots_are_stable_and_start_after_white() {
        let mut s = TextureSlots::default();
        assert_eq!(s.slot(""), 0);
        assert!(s.is_empty());
        assert_eq!([s.slot("a.png"), s.slot("b.png"), s.slot("a.png"), s.slot("c.png")], [1, 2, 1, 3]);
        assert_eq!(s.len(), 3);
    }

    fn png(path: &std::path::Path, rgb: [u8; 3]) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        image::RgbaImage::from_pixel(4, 2, image::Rgba([rgb[0], rgb[1], rgb[2], 255])).save(path).unwrap();
    }

    #[test]
    fn loads_lazily_project_first_and_again_after_a_change() {
        let project = tempfile::tempdir().unwrap();
        let assets = tempfile::tempdir().unwrap();
        png(&assets.path().join("textures/stone.png"), [10, 20, 30]);
        let mut t = TextureStore::default();
        t.set_roots(&[project.path().to_owned(), assets.path().to_owned()]);
        assert!(t.pump(8).is_empty(), "nothing wanted yet");
        t.want("textures/stone.png");
        t.want("map:textures/stone");
        t.want("textures/missing.png");
        t.want("");
        assert_eq!(t.pending(), 3);
        let first = t.pump(2);
        assert_eq!(first.len(), 2, "the budget holds");
        let rest = t.pump(8);
        let all: HashMap<String, Option<TextureImage>> = first.into_iter().chain(rest).collect();
        let stone = all["textures/stone.png"].as_ref().expect("found in assets");
        assert_eq!((stone.width, stone.height, stone.rgba[0]), (4, 2, [10, 20, 30, 255]));
        assert!(all["map:textures/stone"].is_some(), "map: references resolve like builds do");
        assert!(all["textures/missing.png"].is_none());
        let avg = t.average("textures/stone.png").unwrap();
        assert!((avg[2] - 30.0 / 255.0).abs() < 1e-6);
        // Wanting again loads nothing.
        t.want("textures/stone.png");
        assert_eq!(t.pending(), 0);
        // The project gains its own stone: the watcher's report reloads it (and the missing one).
        let own = project.path().join("textures/stone.png");
        png(&own, [200, 0, 0]);
        let own = own.canonicalize().unwrap();
        t.on_events(&[AssetEvent::Changed(vec![own.clone()])]);
        assert!(t.is_pending("textures/stone.png"), "now resolves to the project's file");
        assert!(!t.is_pending("textures/missing.png"), "still missing: nothing to reload");
        let again: HashMap<_, _> = t.pump(8).into_iter().collect();
        assert_eq!(again["textures/stone.png"].as_ref().unwrap().rgba[0], [200, 0, 0, 255], "project first");
        // An edit of that file reloads it; a file nobody uses does not.
        png(&own, [0, 200, 0]);
        t.on_events(&[AssetEvent::Changed(vec![own])]);
        assert!(t.is_pending("textures/stone.png") && t.is_pending("map:textures/stone"));
        t.pump(8);
        png(&project.path().join("textures/missing.png"), [1, 1, 1]);
        t.on_events(&[AssetEvent::Changed(vec![project.path().join("textures/missing.png").canonicalize().unwrap()])]);
        assert!(t.is_pending("textures/missing.png"), "a missing file that appears is loaded");
        assert_eq!(t.pending(), 1);
        t.on_events(&[AssetEvent::Rescan]);
        assert_eq!(t.pending(), 3);
    }

    #[test]
    fn a_corrupt_file_is_drawn_white_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("textures")).unwrap();
        std::fs::write(dir.path().join("textures/bad.png"), b"not a png").unwrap();
        let mut t = TextureStore::default();
        t.set_roots(&[dir.path().to_owned()]);
        t.want("textures/bad.png");
        assert_eq!(t.pump(1), vec![("textures/bad.png".to_owned(), None)]);
        assert_eq!(t.average("textures/bad.png"), None);
    }

    #[test]
    fn average_weights_by_alpha() {
        let img = TextureImage { width: 2, height: 1, rgba: vec![[255, 0, 0, 255], [0, 0, 255, 0]] };
        assert_eq!(img.average(), Some([1.0, 0.0, 0.0]));
        let clear = TextureImage { width: 1, height: 1, rgba: vec![[9, 9, 9, 0]] };
        assert_eq!(clear.average(), None);
    }
}
