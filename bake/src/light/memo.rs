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

/// The memos of a [`LightCache`], dropped once over the budget: the farthest from the focus
/// first, the oldest first without one.
#[derive(Debug, Default)]
struct Memos {
    /// Per chunk: insertion number, the chunk's centre (world space) and its memo.
    by_chunk: HashMap<(usize, ChunkCoord), (u64, DVec3, Arc<LightMemo>)>,
    /// Insertion number → chunk, oldest first.
    order: BTreeMap<u64, (usize, ChunkCoord)>,
    next: u64,
    points: usize,
    /// Where the next edits are likely ([`LightCache::set_focus`]): level and world position.
    focus: Option<(usize, DVec3)>,
}

impl Memos {
    /// How far a chunk of level `level` centred at `centre` is from the focus, squared (other
    /// levels: infinitely far; no focus: 0, so that age alone decides).
    fn distance(&self, level: usize, centre: DVec3) -> f64 {
        match self.focus {
            Some((l, at)) if l == level => centre.distance_squared(at),
            Some(_) => f64::INFINITY,
            None => 0.0,
        }
    }

    /// The memo to drop first: the farthest from the focus, the oldest of those as far.
    fn victim(&self) -> Option<(usize, ChunkCoord)> {
        let mut best: Option<(f64, u64, (usize, ChunkCoord))> = None;
        for (&key, &(seq, centre, _)) in &self.by_chunk {
            let d = self.distance(key.0, centre);
            if best.is_none_or(|(bd, bs, _)| d > bd || (d == bd && seq < bs)) {
                best = Some((d, seq, key));
            }
        }
        best.map(|(_, _, key)| key)
    }
}

/// The light memos of a scheduler's bakes, by (level, chunk): each full or preview bake with
/// these light settings starts from the chunk's last memo and leaves its own (when it would be
/// kept, [`Self::keeps`]). A memo is checked against the snapshot it is used with, so a memo of
/// any earlier snapshot is safe to use (it only saves less); drafts, whose settings differ, keep
/// none but take exact light from them ([`LightCache::drafts`]). At most `budget` points are
/// kept (the dropped memos' chunks' next bakes trace every point): with a focus (the editor's
/// camera, [`Self::set_focus`]) the memos of the chunks nearest it, where the next edits are
/// likely, and once the budget is full a chunk farther than every kept memo bakes without
/// recording one ([`Self::keeps`]); without a focus the newest, the memos stored longest ago
/// dropped first.
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
        self.lock().by_chunk.get(&(level, chunk)).map(|(_, _, m)| m.clone())
    }

    /// Sets where the next edits are likely (the editor's camera: level and world position):
    /// the memos nearest it are the ones kept.
    pub fn set_focus(&self, level: usize, position: DVec3) {
        self.lock().focus = Some((level, position));
    }

    /// The focus ([`Self::set_focus`]), if any.
    pub fn focus(&self) -> Option<(usize, DVec3)> {
        self.lock().focus
    }

    /// Whether a memo of chunk `chunk` of level `level`, centred at `centre` (world space), would
    /// be kept now: while on, when the chunk has one already, the budget has room, there is no
    /// focus, or it lies nearer the focus than some kept memo. A bake whose memo would not be
    /// kept is better made without recording one (recording costs its light stage about a third
    /// more): that is how an open of a big map, baked nearest the camera first, stops recording
    /// once the memos near the camera fill the budget, instead of recording every chunk's and
    /// keeping the farthest.
    pub fn keeps(&self, level: usize, chunk: ChunkCoord, centre: DVec3) -> bool {
        if !self.on.load(Ordering::Relaxed) {
            return false;
        }
        let m = self.lock();
        // Room for one more memo of the kept ones' mean size (a budget just under full after
        // dropping memos would otherwise let every chunk in, to be dropped again).
        let room = m.points + m.points / m.by_chunk.len().max(1) <= self.budget;
        if m.focus.is_none() || room || m.by_chunk.contains_key(&(level, chunk)) {
            return true;
        }
        let d = m.distance(level, centre);
        m.by_chunk.iter().any(|(&(l, _), &(_, c, _))| m.distance(l, c) > d)
    }

    /// Keeps `memo` as the last one of chunk `chunk` of level `level`, centred at `centre` (world
    /// space), while on; then drops memos over the budget, the farthest from the focus first (the
    /// oldest first without a focus).
    pub fn put(&self, level: usize, chunk: ChunkCoord, centre: DVec3, memo: LightMemo) {
        if !self.on.load(Ordering::Relaxed) {
            return;
        }
        let mut m = self.lock();
        let seq = m.next;
        m.next += 1;
        m.points += memo.points();
        if let Some((old, _, prev)) = m.by_chunk.insert((level, chunk), (seq, centre, Arc::new(memo))) {
            m.order.remove(&old);
            m.points -= prev.points();
        }
        m.order.insert(seq, (level, chunk));
        while m.points > self.budget {
            let key = if m.focus.is_some() { m.victim() } else { m.order.first_key_value().map(|(_, &k)| k) };
            let Some(key) = key else { break };
            if let Some((seq, _, gone)) = m.by_chunk.remove(&key) {
                m.order.remove(&seq);
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
        self.lock().by_chunk.values().map(|(_, _, m)| m.bytes()).sum()
    }

    /// Forgets every memo.
    pub fn clear(&self) {
        let mut m = self.lock();
        *m = Memos { focus: m.focus, ..Memos::default() };
    }
}
