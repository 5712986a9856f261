//! What each point's far light read, and the memo of a chunk's far light kept for its next bake.
//!
//! The sun, sky and bounce light of a luxel or an air cell ([`LightScene::far_light`]) is a pure
//! function of its point, its normal, the scene's inputs (sun, sky, materials, static lights,
//! settings: [`super::memo`]) and the cubes its rays passed — its own rays and those of every
//! bounce cell it used (docs/spec/PMF-NOTES.md K5, *Determinism*). A bake that keeps a
//! [`LightMemo`] records, per point, its value and the *blocks* those rays passed: a chunk is cut
//! into [`BLOCKS_PER_AXIS`]³ blocks, and a ray records, in every chunk it enters, the blocks its
//! segment there (up to its hit) touches. The next bake of the chunk takes a point's value from
//! the memo when none of those blocks changed and traces only the others. Each chunk is
//! remembered by its `Arc`: pointer equality with the chunk of the new snapshot means no block
//! changed; otherwise a block changed unless the two octrees have the very same leaves over it
//! ([`changed_blocks`]). A ray's hit in a chunk depends only on the leaves its segment touches,
//! and every such leaf overlaps a block the segment touches, so the result is the same value,
//! bit for bit, as tracing it again. Blocks rather than chunks because an edit of one cube would
//! otherwise re-trace every point of its chunk and every point whose rays crossed any corner of
//! it (about a third of the neighbourhood's points).
//!
//! [`LightScene::far_light`]: super::LightScene::far_light

use std::sync::Arc;

use glam::{DVec3, IVec3};
use pmfedit_core::map::Level;
use pmfedit_core::map::coords::{ChunkCoord, LatticeBox};
use pmfedit_core::map::level::Chunk;
use pmfedit_core::map::octree::Octree;

use super::gather::{CellKey, KeyMap};

/// Blocks along each axis of a chunk (a power of two, at least 4): 4 gives blocks of 4 map units
/// in a 16-unit chunk, 64 blocks, one `u64` word of a mask per chunk.
pub(super) const BLOCKS_PER_AXIS: i32 = 4;

/// `u64` words of a mask per chunk.
const WORDS: usize = (BLOCKS_PER_AXIS * BLOCKS_PER_AXIS * BLOCKS_PER_AXIS / 64) as usize;

/// The blocks of one chunk, a bit per block (block `(x, y, z)` is bit `x + n·(y + n·z)`).
pub(super) type Blocks = [u64; WORDS];

/// Every block of a chunk.
const ALL_BLOCKS: Blocks = [u64::MAX; WORDS];

/// How far (lattice units) a block's box is widened for [`segment_blocks`]: a segment that only
/// grazes a block's face, edge or corner (a hit on the boundary) counts for it too.
const SLACK: f64 = 1e-6;

/// The blocks of a chunk of edge `edge` (lattice units) that the segment `origin + t·dir`,
/// `t ∈ [0, end]`, touches (chunk-local lattice coordinates; the parts outside the chunk are left
/// out). Each block is taken a little wider ([`SLACK`]), so a segment on a boundary counts for
/// the blocks on both sides; a segment that touches none (round-off at a corner) counts for
/// every block.
pub(super) fn segment_blocks(origin: DVec3, dir: DVec3, end: f64, edge: f64) -> Blocks {
    const N: usize = BLOCKS_PER_AXIS as usize;
    let size = edge / f64::from(BLOCKS_PER_AXIS);
    let n = N;
    // Per axis, the segment's parameter range in each slab of blocks (empty: lo > hi), widened
    // by the slack (in parameter units: `SLACK / |dir|`). Called for every chunk every ray of a
    // memo-keeping bake enters, so one division per axis.
    let mut ranges = [[(1.0f64, 0.0f64); N]; 3];
    for (a, axis) in ranges.iter_mut().enumerate() {
        let (o, d) = (origin[a], dir[a]);
        if d == 0.0 {
            for (k, r) in axis.iter_mut().enumerate() {
                if (k as f64 * size - SLACK..=(k + 1) as f64 * size + SLACK).contains(&o) {
                    *r = (0.0, end);
                }
            }
            continue;
        }
        let inv = 1.0 / d;
        let slack = SLACK * inv.abs();
        let mut t = -o * inv;
        for (k, r) in axis.iter_mut().enumerate() {
            let next = ((k + 1) as f64 * size - o) * inv;
            let (lo, hi) = if inv > 0.0 { (t, next) } else { (next, t) };
            *r = ((lo - slack).max(0.0), (hi + slack).min(end));
            t = next;
        }
    }
    let mut out = [0u64; WORDS];
    for (x, rx) in ranges[0].iter().enumerate().filter(|(_, r)| r.0 <= r.1) {
        for (y, ry) in ranges[1].iter().enumerate() {
            let (lo, hi) = (rx.0.max(ry.0), rx.1.min(ry.1));
            if lo > hi {
                continue;
            }
            for (z, rz) in ranges[2].iter().enumerate() {
                if lo.max(rz.0) <= hi.min(rz.1) {
                    let b = x + n * (y + n * z);
                    out[b / 64] |= 1 << (b % 64);
                }
            }
        }
    }
    if out == [0; WORDS] { ALL_BLOCKS } else { out }
}

/// The blocks of a chunk of edge `edge` (lattice units) over which octrees `old` and `new` do not
/// have the very same leaves (addresses and cubes), `None` standing for an unstored chunk (every
/// block changed unless both are unstored). A block where neither has a solid leaf is not
/// changed either, however its air is cut into leaves: rays hit solid cubes only, and a split of
/// the air (an edit's cube in an empty chunk splits the root) would otherwise change every block.
pub(super) fn changed_blocks(old: Option<&Octree>, new: Option<&Octree>, edge: i32) -> Blocks {
    let (old, new) = match (old, new) {
        (None, None) => return [0; WORDS],
        (Some(a), Some(b)) => (a, b),
        _ => return ALL_BLOCKS,
    };
    let size = edge / BLOCKS_PER_AXIS;
    let mut out = [0u64; WORDS];
    for z in 0..BLOCKS_PER_AXIS {
        for y in 0..BLOCKS_PER_AXIS {
            for x in 0..BLOCKS_PER_AXIS {
                let min = IVec3::new(x, y, z) * size;
                let block = LatticeBox::new(min, min + IVec3::splat(size));
                let air = |t: &Octree| t.leaves_in(block).all(|(_, c)| !c.is_solid());
                let unchanged = old.leaves_in(block).eq(new.leaves_in(block)) || (air(old) && air(new));
                if !unchanged {
                    let b = (x + BLOCKS_PER_AXIS * (y + BLOCKS_PER_AXIS * z)) as usize;
                    out[b / 64] |= 1 << (b % 64);
                }
            }
        }
    }
    out
}

/// A point and its normal (`None`: an air cell), as the bits of their coordinates.
pub(super) type PointKey = [u64; 6];

/// The key of a point with unit `normal` (or none: NaN bits, which no normal has).
pub(super) fn point_key(point: DVec3, normal: Option<DVec3>) -> PointKey {
    let n = normal.map_or([u64::MAX; 3], |n| n.to_array().map(f64::to_bits));
    let p = point.to_array().map(f64::to_bits);
    [p[0], p[1], p[2], n[0], n[1], n[2]]
}

/// A point's blocks, sparse: `(word index, word)` for its non-zero words, ascending. Word `i`
/// holds blocks of the chunk at index `i / WORDS` of the bake's table.
type Sparse = Vec<(u32, u64)>;

/// The far light of one chunk bake's points and the blocks each point's rays passed (see the
/// module docs); [`super::LightMemo`] adds the context it was made under. Compact, as it lives on
/// (a few hundred bytes a point, millions of points): the points' keys sorted (found by binary
/// search, no hash table) with their values and words in the same order, and each word's slot in
/// 16 bits.
#[derive(Debug, Clone)]
pub(super) struct PointMemo {
    /// The chunks rays entered, each with the chunk the level stored then (`None`: air).
    chunks: Vec<(ChunkCoord, Option<Arc<Chunk>>)>,
    /// The points' keys, ascending, each once; point `i` is `keys[i]`.
    keys: Vec<PointKey>,
    values: Vec<DVec3>,
    /// Point `i`'s words are at `starts[i]..starts[i + 1]` of `slots` (their indices) and `words`
    /// (kept apart: 10 bytes a word rather than a padded pair's 16).
    starts: Vec<u32>,
    slots: Vec<u16>,
    words: Vec<u64>,
    reused: usize,
}

/// The most word slots (chunks of a bake's table times [`WORDS`]) a memo's 16-bit slots can
/// name; a bake whose rays entered more chunks keeps an empty memo (its next bake traces every
/// point: slower, never wrong).
const MAX_SLOTS: usize = 1 << 16;

impl PointMemo {
    /// How many points the bake that made this memo took from the memo before it.
    pub(super) fn reused(&self) -> usize {
        self.reused
    }

    /// How many points it holds.
    pub(super) fn points(&self) -> usize {
        self.values.len()
    }

    /// About how many bytes it takes (its tables, not counting the chunks it shares), as
    /// allocated: spare capacity counts.
    pub(super) fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.keys.capacity() * size_of::<PointKey>()
            + self.values.capacity() * size_of::<DVec3>()
            + self.starts.capacity() * size_of::<u32>()
            + self.slots.capacity() * size_of::<u16>()
            + self.words.capacity() * size_of::<u64>()
    }

    /// How many block words its points hold in all.
    pub(super) fn words(&self) -> usize {
        self.words.len()
    }

    /// [`Self::bytes`] with no spare capacity.
    pub(super) fn tight_bytes(&self) -> usize {
        use std::mem::size_of;
        let points = self.values.len();
        points * (size_of::<PointKey>() + size_of::<DVec3>())
            + (points + 1) * size_of::<u32>()
            + self.words.len() * (size_of::<u16>() + size_of::<u64>())
    }

    /// The index of the point of `key`.
    fn find(&self, key: &PointKey) -> Option<usize> {
        self.keys.binary_search(key).ok()
    }

    fn mask(&self, i: usize) -> impl Iterator<Item = (u32, u64)> + '_ {
        let r = self.starts[i] as usize..self.starts[i + 1] as usize;
        self.slots[r.clone()].iter().map(|&s| u32::from(s)).zip(self.words[r].iter().copied())
    }
}

/// The memo a bake may take values from, and which blocks of its chunks changed since (dense,
/// [`WORDS`] words per chunk of its table).
#[derive(Debug, Clone)]
struct Prior {
    memo: Arc<PointMemo>,
    changed: Vec<u64>,
}

/// A point recorded by the running bake.
#[derive(Debug, Clone)]
struct Entry {
    key: PointKey,
    value: DVec3,
    mask: Sparse,
    /// Taken from the prior memo (not traced).
    reused: bool,
}

/// The block sets of the points and bounce cells of one bake (off unless the bake keeps a memo).
#[derive(Debug, Clone, Default)]
pub(super) struct Tracker {
    on: bool,
    /// Whether it records the bake's points (a memo is kept), not only serves the prior's.
    keep: bool,
    /// The chunks' lattice edge.
    edge: i32,
    index: KeyMap<ChunkCoord, u32>,
    chunks: Vec<ChunkCoord>,
    /// The chunk and table index of the last [`Self::visit`].
    last: Option<(ChunkCoord, u32)>,
    /// The sets being recorded (dense, [`WORDS`] words per chunk of the table): a point's, then
    /// the bounce cells it is computing.
    stack: Vec<Vec<u64>>,
    /// The set of each bounce cell computed in this bake.
    cells: KeyMap<CellKey, Vec<u64>>,
    prior: Option<Prior>,
    entries: Vec<Entry>,
}

fn or_into(dst: &mut Vec<u64>, src: &[u64]) {
    if dst.len() < src.len() {
        dst.resize(src.len(), 0);
    }
    for (d, s) in dst.iter_mut().zip(src) {
        *d |= s;
    }
}

fn sparse(dense: &[u64]) -> Sparse {
    dense.iter().enumerate().filter(|(_, w)| **w != 0).map(|(i, &w)| (i as u32, w)).collect()
}

impl Tracker {
    /// Starts recording for a bake of a chunk of `level`; `prior` (the chunk's last memo, made
    /// under the same context) serves the points whose blocks did not change.
    pub(super) fn begin(&mut self, level: &Level, prior: Option<Arc<PointMemo>>) {
        self.start(level, prior, true);
    }

    /// Starts serving the points of `prior` whose blocks did not change, recording nothing (a
    /// draft: the bake keeps no memo).
    pub(super) fn serve(&mut self, level: &Level, prior: Arc<PointMemo>) {
        self.start(level, Some(prior), false);
    }

    /// Stops serving or recording.
    pub(super) fn stop(&mut self) {
        *self = Tracker::default();
    }

    fn start(&mut self, level: &Level, prior: Option<Arc<PointMemo>>, keep: bool) {
        let edge = level.frame().chunk_edge();
        *self = Tracker { on: true, keep, edge, ..Tracker::default() };
        let Some(memo) = prior else { return };
        let mut changed = vec![0u64; memo.chunks.len() * WORDS];
        for (i, (c, old)) in memo.chunks.iter().enumerate() {
            let new = level.chunk(*c);
            if !matches!((old, new), (Some(a), Some(b)) if Arc::ptr_eq(a, b)) {
                let blocks = changed_blocks(old.as_deref().map(Chunk::octree), new.map(|c| c.octree()), edge);
                changed[i * WORDS..(i + 1) * WORDS].copy_from_slice(&blocks);
            }
            // The same indices as the memo's, so its masks hold in this bake's table.
            self.index.insert(*c, i as u32);
            self.chunks.push(*c);
        }
        self.prior = Some(Prior { memo, changed });
    }

    /// Whether this bake records (keeps a memo).
    pub(super) fn on(&self) -> bool {
        self.on
    }

    /// A ray entered chunk `c` at `base` (its lattice minimum) from `origin` along `dir` (level
    /// lattice) and left it, or stopped in it, at `end`: records the blocks it touched there.
    pub(super) fn visit(&mut self, c: ChunkCoord, base: DVec3, origin: DVec3, dir: DVec3, end: f64) {
        if self.stack.is_empty() {
            return;
        }
        let blocks = segment_blocks(origin - base, dir, end, f64::from(self.edge));
        // Most rays of a point start in the chunk the last one did: skip the table's hash.
        let i = match self.last {
            Some((l, i)) if l == c => i as usize,
            _ => {
                let next = self.chunks.len() as u32;
                let i = *self.index.entry(c).or_insert(next);
                if i as usize == self.chunks.len() {
                    self.chunks.push(c);
                }
                self.last = Some((c, i));
                i as usize
            }
        };
        let top = self.stack.last_mut().expect("not empty");
        if top.len() < (i + 1) * WORDS {
            top.resize((i + 1) * WORDS, 0);
        }
        for (d, b) in top[i * WORDS..(i + 1) * WORDS].iter_mut().zip(blocks) {
            *d |= b;
        }
    }

    /// Starts the set of a point or a bounce cell.
    pub(super) fn push(&mut self) {
        if self.keep {
            self.stack.push(Vec::new());
        }
    }

    /// Ends the set begun by the last [`Self::push`], adds it to the set below (what a bounce
    /// cell read, the point that asked for it read too) and returns it.
    fn pop(&mut self) -> Vec<u64> {
        let set = self.stack.pop().unwrap_or_default();
        if let Some(below) = self.stack.last_mut() {
            or_into(below, &set);
        }
        set
    }

    /// Ends the set of bounce cell `key` (see [`Self::pop`]) and keeps it for the cell's later
    /// uses in this bake.
    pub(super) fn end_cell(&mut self, key: CellKey) {
        if self.keep {
            let set = self.pop();
            self.cells.insert(key, set);
        }
    }

    /// A cached bounce cell was used: what it read is read again.
    pub(super) fn use_cell(&mut self, key: &CellKey) {
        if let (Some(top), Some(set)) = (self.stack.last_mut(), self.cells.get(key)) {
            or_into(top, set);
        }
    }

    /// The prior memo's value of point `key`, if none of the blocks its rays passed changed,
    /// with the chunks they entered (for the bake's reads). Records the point.
    pub(super) fn reuse(&mut self, key: &PointKey) -> Option<(DVec3, Vec<ChunkCoord>)> {
        let prior = self.prior.as_ref()?;
        let i = prior.memo.find(key)?;
        if prior.memo.mask(i).any(|(w, m)| prior.changed[w as usize] & m != 0) {
            return None;
        }
        let value = prior.memo.values[i];
        let mask: Sparse = prior.memo.mask(i).collect();
        let mut chunks: Vec<ChunkCoord> = mask.iter().map(|&(w, _)| prior.memo.chunks[w as usize / WORDS].0).collect();
        chunks.dedup();
        if self.keep {
            self.entries.push(Entry { key: *key, value, mask, reused: true });
        }
        Some((value, chunks))
    }

    /// Ends the set of a traced point (begun by [`Self::push`]) and records the point.
    pub(super) fn end_point(&mut self, key: PointKey, value: DVec3) {
        if self.keep {
            let mask = sparse(&self.pop());
            self.entries.push(Entry { key, value, mask, reused: false });
        }
    }

    /// Stops recording; the memo of the bake's points, their chunks as `level` stores them now.
    /// A point recorded twice keeps its last record.
    pub(super) fn finish(&mut self, level: &Level) -> PointMemo {
        let mut t = std::mem::take(self);
        if t.chunks.len() * WORDS > MAX_SLOTS {
            t.entries.clear();
        }
        // By key; of equal keys the last recorded first, kept by the dedup.
        let mut order: Vec<u32> = (0..t.entries.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| t.entries[a as usize].key.cmp(&t.entries[b as usize].key).then(b.cmp(&a)));
        order.dedup_by(|b, a| t.entries[*a as usize].key == t.entries[*b as usize].key);
        // Exactly as long as needed: a memo lives on, and grown by doubling these would carry a
        // third more words than they hold on average.
        let n: usize = order.iter().map(|&i| t.entries[i as usize].mask.len()).sum();
        let mut keys = Vec::with_capacity(order.len());
        let mut values = Vec::with_capacity(order.len());
        let mut starts = Vec::with_capacity(order.len() + 1);
        let (mut slots, mut words) = (Vec::with_capacity(n), Vec::with_capacity(n));
        starts.push(0);
        let mut reused = 0;
        for i in order {
            let e = &mut t.entries[i as usize];
            reused += usize::from(e.reused);
            keys.push(e.key);
            values.push(e.value);
            for &(s, w) in &e.mask {
                // Below MAX_SLOTS: the table was checked above.
                slots.push(s as u16);
                words.push(w);
            }
            e.mask = Vec::new();
            starts.push(words.len() as u32);
        }
        let chunks = t.chunks.into_iter().map(|c| (c, level.chunk(c).cloned())).collect();
        PointMemo { chunks, keys, values, starts, slots, words, reused }
    }
}
