//! Light memos: a chunk's next bake takes the sun, sky and bounce light of every point whose rays
//! passed no changed block from the last one, and traces only the others (see [`super::track`]
//! for why that is exact); a draft takes those points' exact light too and keeps no memo. An edit re-bakes the chunks whose rays passed it (sun shadow columns,
//! sky occlusion, bounce reach); most of their points' rays never came near the edit.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use glam::{DVec2, DVec3};
use pmfedit_core::map::coords::{ChunkCoord, LevelFrame};

use super::eval::{BakedMode, LightScene, LightSettings, SceneLight};
use super::gather::SurfaceLight;
use super::track::{PointMemo, point_key};

/// Everything besides the cubes that a point's far light depends on: a memo made under another
/// context is not used at all.
#[derive(Debug, Clone, PartialEq)]
struct MemoContext {
    frame: LevelFrame,
    settings: LightSettings,
    sun: Option<(DVec3, DVec3)>,
    sun_disc: Vec<DVec2>,
    sky: DVec3,
    bounces: u8,
    materials: Vec<SurfaceLight>,
    /// The top of the level's highest occupied chunk layer (rays stop there).
    top: f64,
    /// Static lights: bounce points receive them.
    statics: Vec<SceneLight>,
}

/// The far light (sun, sky, bounce, emission) of one chunk bake's luxels and air cells, with the
/// blocks of chunks each one's rays passed: what the chunk's next bake may reuse
/// ([`bake_chunk_memo`](super::bake_chunk_memo)).
#[derive(Debug, Clone)]
pub struct LightMemo {
    context: MemoContext,
    points: Arc<PointMemo>,
}

impl LightMemo {
    /// How many points (luxels and air cells) it holds.
    pub fn points(&self) -> usize {
        self.points.points()
    }

    /// About how many bytes it takes, as allocated.
    pub fn bytes(&self) -> usize {
        self.points.bytes()
    }

    /// How many block words (12 bytes each: the blocks of one chunk a point's rays passed, 64
    /// at a time) its points hold in all.
    pub fn words(&self) -> usize {
        self.points.words()
    }

    /// What [`Self::bytes`] would be with no spare capacity in its lists: a memo lives on, so it
    /// is made with none ([`Self::bytes`] equals it).
    pub fn tight_bytes(&self) -> usize {
        self.points.tight_bytes()
    }

    /// How many of them the bake that made it took from the memo before (the rest it traced).
    pub fn reused(&self) -> usize {
        self.points.reused()
    }
}

impl LightScene<'_> {
    fn memo_context(&self) -> MemoContext {
        let far = &self.far;
        MemoContext {
            frame: self.frame,
            settings: self.settings.clone(),
            sun: far.sun,
            sun_disc: far.sun_disc.clone(),
            sky: far.sky,
            bounces: far.bounces,
            materials: far.materials.clone(),
            top: far.top,
            statics: self.lights.iter().filter(|l| l.mode == BakedMode::Static).cloned().collect(),
        }
    }

    /// Starts keeping a memo for the bake about to run; `prior` (the chunk's last memo) serves the
    /// points none of whose chunks changed, when made under the same context.
    pub(super) fn begin_memo(&self, prior: Option<&LightMemo>) {
        let context = self.memo_context();
        let prior = prior.filter(|m| m.context == context).map(|m| m.points.clone());
        self.track.borrow_mut().begin(self.level, prior);
    }

    /// Starts serving a draft bake the far light of `prior`'s points (a memo of bakes under
    /// `exact`'s settings, this scene's level and inputs) whose blocks did not change: their
    /// exact light, which a draft would only approximate. Nothing is recorded.
    pub(super) fn begin_serving(&self, prior: &LightMemo, exact: &LightScene<'_>) {
        if prior.context == exact.memo_context() {
            self.track.borrow_mut().serve(self.level, prior.points.clone());
        }
    }

    /// Stops what [`Self::begin_serving`] started.
    pub(super) fn end_serving(&self) {
        self.track.borrow_mut().stop();
    }

    /// The memo of the bake since [`Self::begin_memo`]; stops keeping one.
    pub(super) fn end_memo(&self) -> LightMemo {
        let points = Arc::new(self.track.borrow_mut().finish(self.level));
        LightMemo { context: self.memo_context(), points }
    }

    /// [`far_light`](Self::far_light) of a luxel or an air cell, from the prior memo when none of
    /// the blocks its rays passed changed; recorded in the memo being kept, if any.
    pub(super) fn far_point(&self, point: DVec3, normal: Option<DVec3>) -> DVec3 {
        if !self.track.borrow().on() {
            return self.far_light(point, normal);
        }
        let key = point_key(point, normal);
        let reused = self.track.borrow_mut().reuse(&key);
        if let Some((value, chunks)) = reused {
            // The chunks its rays would enter again: the bake reads them as a traced point would.
            let mut reads = self.far.reads.borrow_mut();
            for c in chunks {
                reads.add(c);
            }
            return value;
        }
        self.track.borrow_mut().push();
        let value = self.far_light(point, normal);
        self.track.borrow_mut().end_point(key, value);
        value
    }
}

/// How many points (luxels and air cells) a [`LightCache`] keeps by default: about 200 to 250
/// bytes each (key 48, value 24, and 10 for each word of blocks their rays passed, 12 to 17
/// words a point on a terrain), so about 0.4 to 0.5 GB (a `terrain(32,4,32)` has about 7 000
/// per chunk, 28 M in all; its 2 M kept take 484 MiB).
pub const DEFAULT_MEMO_POINTS: usize = 2 << 20;

/// The memos of a [`LightCache`], the oldest dropped first once over the budget.
#[derive(Debug, Default)]
struct Memos {
    by_chunk: HashMap<(usize, ChunkCoord), (u64, Arc<LightMemo>)>,
    /// Insertion number → chunk, oldest first.
    order: BTreeMap<u64, (usize, ChunkCoord)>,
    next: u64,
    points: usize,
}

/// The light memos of a scheduler's bakes, by (level, chunk): each full or preview bake with
/// these light settings starts from the chunk's last memo and leaves its own. A memo is checked
/// against the snapshot it is used with, so a memo of any earlier snapshot is safe to use (it only
/// saves less); drafts, whose settings differ, keep none but take exact light from them
/// ([`LightCache::drafts`]). At most `budget` points are kept, the
/// memos stored longest ago dropped first (their chunks' next bakes trace every point).
#[derive(Debug)]
pub struct LightCache {
    settings: LightSettings,
    on: AtomicBool,
    budget: usize,
    memos: Mutex<Memos>,
}

impl LightCache {
    /// A cache for bakes with light `settings`, keeping memos when `on`, at most
    /// [`DEFAULT_MEMO_POINTS`] points.
    pub fn new(settings: LightSettings, on: bool) -> LightCache {
        Self::with_budget(settings, on, DEFAULT_MEMO_POINTS)
    }

    /// [`Self::new`] keeping at most `budget` points.
    pub fn with_budget(settings: LightSettings, on: bool, budget: usize) -> LightCache {
        LightCache { settings, on: AtomicBool::new(on), budget, memos: Mutex::default() }
    }

    /// Keeps memos or not (off drops those kept: a one-shot build has no use for them).
    pub fn set_on(&self, on: bool) {
        self.on.store(on, Ordering::Relaxed);
        if !on {
            self.clear();
        }
    }

    /// Whether bakes with `settings` keep memos here.
    pub fn serves(&self, settings: &LightSettings) -> bool {
        self.on.load(Ordering::Relaxed) && *settings == self.settings
    }

    /// Whether drafts with `settings` take exact light from the memos here: they are the
    /// [draft](LightSettings::draft) of the memos' settings.
    pub fn drafts(&self, settings: &LightSettings) -> bool {
        self.on.load(Ordering::Relaxed) && *settings == self.settings.draft()
    }

    /// The light settings of the bakes whose memos it keeps.
    pub fn settings(&self) -> &LightSettings {
        &self.settings
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Memos> {
        // Every memo is checked before use, so one left by a panicking bake is as good as any.
        self.memos.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The last memo of chunk `chunk` of level `level`.
    pub fn get(&self, level: usize, chunk: ChunkCoord) -> Option<Arc<LightMemo>> {
        self.lock().by_chunk.get(&(level, chunk)).map(|(_, m)| m.clone())
    }

    /// Keeps `memo` as the chunk's last one (while on), dropping the oldest memos over the budget.
    pub fn put(&self, level: usize, chunk: ChunkCoord, memo: LightMemo) {
        if !self.on.load(Ordering::Relaxed) {
            return;
        }
        let mut m = self.lock();
        let seq = m.next;
        m.next += 1;
        m.points += memo.points();
        if let Some((old, prev)) = m.by_chunk.insert((level, chunk), (seq, Arc::new(memo))) {
            m.order.remove(&old);
            m.points -= prev.points();
        }
        m.order.insert(seq, (level, chunk));
        while m.points > self.budget {
            let Some((_, key)) = m.order.pop_first() else { break };
            if let Some((_, gone)) = m.by_chunk.remove(&key) {
                m.points -= gone.points();
            }
        }
    }

    /// How many points the kept memos hold.
    pub fn points(&self) -> usize {
        self.lock().points
    }

    /// About how many bytes the kept memos take ([`LightMemo::bytes`], summed).
    pub fn bytes(&self) -> usize {
        self.lock().by_chunk.values().map(|(_, m)| m.bytes()).sum()
    }

    /// Forgets every memo.
    pub fn clear(&self) {
        *self.lock() = Memos::default();
    }
}
