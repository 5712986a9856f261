//! The LZ4 block compressor behind [`super::lz4f::compress`] (docs/spec/PMF-NOTES.md L1).
//!
//! Whole-level visibility lists (V1) repeat a far list of `u32 chunk, u32 0` entries, tens of
//! KB long, from one air cell to the next. A matcher with one 4-byte hash (lz4_flex's, lz4's
//! fast mode) keeps finding the previous entry's zero count a few bytes back and never the
//! identical list one cell back. This one is a greedy parse that, at each position, tries three
//! candidates and keeps the longest:
//!
//! 1. the offsets of the last three matches (a repeat that continues, e.g. the next cell's list
//!    after the few short matches of the cell's own record),
//! 2. the last position with the same 8 bytes (long matches, far back; positions inside a match
//!    are entered too, every 9th for matches from 8 KB or more back and every 64th for nearer
//!    ones, so the newest copy of repeated data is the one found, a few bytes late at worst),
//! 3. only when those find nothing, the last position with the same 4 bytes (short, near
//!    matches; a small table, entered only at positions that found nothing);
//!
//! then extends the match backwards over the pending literals (which also takes back the bytes
//! a sparsely entered copy is found late). Ties go to the earlier candidate
//! in that order, and nothing depends on anything but the input, so the output is deterministic.
//! Positions without a match are skipped faster the longer no match has been found (as lz4
//! does), so incompressible data costs little. The block is written into a buffer sized for the
//! worst case, so writing it needs no capacity checks, and short literal runs are copied 16
//! bytes at a time.
//!
//! A [`BlockCompressor`] works on a block of a larger input and may match into the bytes
//! before the block (up to [`MAX_OFFSET`] back): the frame's blocks are linked, so a list that
//! repeats across a block boundary is still found. [`BlockCompressor::restart`] readies it for
//! the next input without clearing its tables (an export compresses thousands of small frames
//! per worker), and the output stays a function of the input alone.

pub use super::lz4_hc::Compression;
use super::lz4_hc::HcTables;
pub use super::lz4_seq::MAX_OFFSET;
use super::lz4_seq::{
    LAST_LITERALS, MF_LIMIT, MIN_MATCH, REPS, WILD_COPY, Writer, emit_match, match_len, next_base, read_u64,
};

/// After `1 << SKIP_TRIGGER` bytes without a match the search steps 2 bytes at a time, and so on.
const SKIP_TRIGGER: u32 = 6;
/// Largest 8-byte hash table: 2^16 entries cover the whole 64 KB match window (2^15 found the
/// far lists' repeats less often).
const MAX_HASH8_BITS: u32 = 16;
/// Largest 4-byte hash table: 2^12 entries (16 KB, as lz4's fast mode). It is asked only where
/// the recent offsets and the 8-byte hash found nothing, for short near matches, and a small
/// table stays in the L1 cache.
const MAX_HASH4_BITS: u32 = 12;
/// Smallest hash tables, for tiny inputs.
const MIN_HASH_BITS: u32 = 8;
/// After a match from [`FAR_OFFSET`] or more back, its second position and every this many
/// after it go into the 8-byte table (see `compress_block`), so a later repeat of the data (the
/// next cell's far list) finds this newest copy, not the older one it came from, which soon
/// falls out of reach. Odd, so that over a list of 8-byte entries every alignment is entered:
/// every 9th keeps a repeated far list at ~170 bytes, where every 8th took ~300 and every 2nd
/// ~170 at 4.5 times the table writes.
const INNER_STEP: usize = 9;
/// The step inside matches from less than [`FAR_OFFSET`] back: on a real export (terrain
/// 32 × 4 × 32, 410 MB of chunk blocks) every 64th instead of every 8th made the encoder ~10 %
/// faster and the output 0.03 % larger.
const NEAR_INNER_STEP: usize = 64;
/// Matches from at least this far back get [`INNER_STEP`].
const FAR_OFFSET: usize = 8192;
/// Compresses LZ4 blocks of one input, remembering positions across blocks; reusable for the
/// next input ([`Self::restart`]) without clearing its tables.
#[derive(Debug, Clone)]
pub struct BlockCompressor {
    /// Last position (`base` + the position in the input, as `u32`) of each 4-byte hash; only
    /// the first `2^bits` entries are used for the current input.
    hash4: Vec<u32>,
    /// Last position of each 8-byte hash, like [`Self::hash4`].
    hash8: Vec<u32>,
    /// `32 - bits` for [`Self::hash4`], `64 - bits` for [`Self::hash8`].
    shift4: u32,
    shift8: u32,
    /// Offsets of the last [`REPS`] matches, distinct, most recent first (0: none yet).
    reps: [usize; REPS],
    /// What the tables store for position 0 of the current input. Entries below it were left
    /// by earlier inputs and read as position 0, which is what a fresh, zeroed table holds: the
    /// output does not depend on what was compressed before.
    base: u32,
    /// One past the highest input position seen since the last restart.
    high: usize,
    /// Where a block is written before it is appended to the caller's output (see
    /// `compress_block`); kept for the next block.
    scratch: Vec<u8>,
    /// The tables of the high-compression parse ([`Compression::High`]); `None` for the fast
    /// one.
    hc: Option<Box<HcTables>>,
}

/// Hash bits for an input of `input_len` bytes: small inputs get small tables, so compressing
/// many small chunk blocks does not walk 512 KB of table each time.
fn hash_bits(input_len: usize) -> u32 {
    (usize::BITS - input_len.max(1).leading_zeros()).clamp(MIN_HASH_BITS, MAX_HASH8_BITS)
}

impl BlockCompressor {
    /// A compressor whose hash tables are sized for an input of `input_len` bytes.
    pub fn new(input_len: usize) -> Self {
        let bits = hash_bits(input_len);
        Self {
            hash4: vec![0; 1 << bits.min(MAX_HASH4_BITS)],
            hash8: vec![0; 1 << bits],
            shift4: 32 - bits.min(MAX_HASH4_BITS),
            shift8: 64 - bits,
            reps: [0; REPS],
            base: 0,
            high: 0,
            scratch: Vec::new(),
            hc: None,
        }
    }

    /// A compressor for `compression`, its tables sized for an input of `input_len` bytes.
    pub fn with_compression(input_len: usize, compression: Compression) -> Self {
        let hc = match compression {
            Compression::Fast => None,
            Compression::High => Some(Box::new(HcTables::new())),
        };
        Self { hc, ..Self::new(if compression == Compression::High { 0 } else { input_len }) }
    }

    /// Which parse this compressor runs.
    pub fn compression(&self) -> Compression {
        if self.hc.is_some() { Compression::High } else { Compression::Fast }
    }

    /// Readies the compressor for a new input of `input_len` bytes: it then compresses exactly
    /// as [`Self::new`]`(input_len)` would, but keeps its tables (clearing and, for tables over
    /// 128 KB, mapping fresh zeroed pages per chunk block cost more than compressing it). Old
    /// entries are told apart by their base; the tables are cleared only when it would
    /// overflow.
    pub fn restart(&mut self, input_len: usize) {
        if let Some(hc) = &mut self.hc {
            hc.restart();
            return;
        }
        let bits = hash_bits(input_len);
        if self.hash8.len() < 1 << bits {
            *self = Self { scratch: std::mem::take(&mut self.scratch), ..Self::new(input_len) };
            return;
        }
        (self.shift4, self.shift8) = (32 - bits.min(MAX_HASH4_BITS), 64 - bits);
        self.reps = [0; REPS];
        self.base = next_base(self.base, self.high).unwrap_or_else(|| {
            self.hash4.fill(0);
            self.hash8.fill(0);
            0
        });
        self.high = 0;
    }

    /// Appends one LZ4 block holding `data[start..end]` to `out`. Matches may reach into
    /// `data[..start]` (the earlier blocks of a linked frame), never past `end`.
    ///
    /// # Panics
    /// If `start > end` or `end > data.len()`.
    pub fn compress_block(&mut self, data: &[u8], start: usize, end: usize, out: &mut Vec<u8>) {
        assert!(start <= end && end <= data.len(), "block {start}..{end} of {} bytes", data.len());
        // One bounds check here; every read below stays under `end`, so the optimiser can drop
        // most of the per-load checks against the shorter slice.
        let data = &data[..end];
        self.high = self.high.max(end);
        let base = self.base;
        // The block is written into `scratch`, sized for the worst case plus room for the
        // fixed-size literal copies, then appended to `out` in one copy: no capacity check per
        // byte written, and the scratch is zeroed only when it grows.
        let bound = (end - start) + (end - start) / 255 + 16 + WILD_COPY;
        if self.scratch.len() < bound {
            self.scratch.resize(bound, 0);
        }
        let mut w = Writer { buf: &mut self.scratch, len: 0 };
        if let Some(hc) = &mut self.hc {
            let n = hc.compress_block(data, start, end, &mut w);
            out.extend_from_slice(&self.scratch[..n]);
            return;
        }
        let mut anchor = start;
        if end - start > MF_LIMIT {
            // A match ends at or before `match_limit` and starts at or before `last_start`.
            let match_limit = end - LAST_LITERALS;
            let last_start = end - MF_LIMIT;
            let mut pos = start;
            while pos <= last_start {
                // 8 bytes are readable: pos + 8 <= end - 4.
                let seq = read_u64(data, pos);
                let here = pos as u32;
                let h8 = hash8_of(seq, self.shift8);
                let old = std::mem::replace(&mut self.hash8[h8], base.wrapping_add(here));
                let c8 = pos.wrapping_sub(position(old, base));
                // Candidates in order (ties keep the earlier): the recent offsets, the 8-byte
                // hash, and only when those give nothing, the 4-byte hash. A candidate equal to
                // an earlier one gives the same length, which does not win.
                let reps = self.reps;
                let mut best = (0, 0);
                let mut done = consider(data, pos, reps[0], seq, match_limit, &mut best);
                if !done {
                    done = consider(data, pos, reps[1], seq, match_limit, &mut best);
                }
                if !done {
                    done = consider(data, pos, reps[2], seq, match_limit, &mut best);
                }
                if !done && c8 != reps[0] && c8 != reps[1] && c8 != reps[2] {
                    consider(data, pos, c8, seq, match_limit, &mut best);
                }
                let (mut best_len, mut best_dist) = best;
                if best_len == 0 {
                    let h4 = hash4_of(seq as u32, self.shift4);
                    let old = std::mem::replace(&mut self.hash4[h4], base.wrapping_add(here));
                    let c4 = pos.wrapping_sub(position(old, base));
                    if is_reachable(c4, pos) {
                        (best_len, best_dist) = (match_len(data, pos - c4, pos, seq, match_limit), c4);
                    }
                    if best_len == 0 {
                        pos += 1 + ((pos - anchor) >> SKIP_TRIGGER);
                        continue;
                    }
                }
                let at;
                (at, anchor) = emit_match(&mut w, data, anchor, pos, best_dist, best_len, &mut self.reps);
                pos = anchor;
                // The match's second position and every `step`-th after it go into the 8-byte
                // table: a later repeat of this data (the next cell's list, 32 KB on) finds it,
                // not an older copy out of reach, at most `step - 1` bytes late, which a recent
                // offset or the backward extension mostly takes back. The 4-byte table gets no
                // positions of matches: lz4 enters one near the end, which here cost 4 % of the
                // time and found 0.01 % more.
                let step = if best_dist >= FAR_OFFSET { INNER_STEP } else { NEAR_INNER_STEP };
                for p in (at + 1..anchor.min(end - 7)).step_by(step) {
                    let h8 = hash8_of(read_u64(data, p), self.shift8);
                    self.hash8[h8] = base.wrapping_add(p as u32);
                }
            }
        }
        w.last_literals(data, anchor);
        let n = w.len;
        out.extend_from_slice(&self.scratch[..n]);
    }
}

/// Tries the candidate `dist` bytes back for the match at `pos` (first 8 bytes `seq`) and keeps
/// it in `best` (length, distance) if it is longer. True when the match reaches `limit`.
#[inline(always)]
fn consider(data: &[u8], pos: usize, dist: usize, seq: u64, limit: usize, best: &mut (usize, usize)) -> bool {
    if !is_reachable(dist, pos) {
        return false;
    }
    let best_len = best.0;
    // Only a candidate that also matches the byte where the best one ends can be longer: one
    // load instead of extending it all the way (a far list's repeat is often both a recent
    // offset and the 8-byte hash's candidate).
    if best_len >= MIN_MATCH && data[pos - dist + best_len] != data[pos + best_len] {
        return false;
    }
    let len = match_len(data, pos - dist, pos, seq, limit);
    if len > best_len {
        *best = (len, dist);
        return pos + len == limit;
    }
    false
}

/// Whether a match `dist` bytes back from `pos` is possible: 1..=min(pos, MAX_OFFSET), in one
/// comparison (0, "no candidate", wraps around).
#[inline(always)]
fn is_reachable(dist: usize, pos: usize) -> bool {
    dist.wrapping_sub(1) < pos.min(MAX_OFFSET)
}

/// The 4-byte hash table's slot for `v` (`shift`: 32 - the table's bits).
#[inline(always)]
fn hash4_of(v: u32, shift: u32) -> usize {
    (v.wrapping_mul(2_654_435_761) >> shift) as usize
}

/// The 8-byte hash table's slot for `v` (`shift`: 64 - the table's bits).
#[inline(always)]
fn hash8_of(v: u64, shift: u32) -> usize {
    (v.wrapping_mul(0x9E37_79B1_85EB_CA87) >> shift) as usize
}
/// The input position of a table entry for an input whose positions start at `base`: an entry
/// from an earlier input reads as 0, as in a fresh table.
fn position(entry: u32, base: u32) -> usize {
    (entry.max(base) - base) as usize
}

/// Compresses `block` into one independent LZ4 block (no frame).
pub fn compress_block(block: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(block.len() + block.len() / 255 + 16);
    BlockCompressor::new(block.len()).compress_block(block, 0, block.len(), &mut out);
    out
}

/// A synthetic chunk block shaped like whole-level visibility lists (V1): `cells` air cells,
/// each with a few bytes of its own, then a far list of `u32 chunk index, u32 0` for the first
/// `chunks` chunks of a 32 × 4 × 32 grid (index bits as L4: Y 31..24, X 23..12, Z 11..0),
/// ascending. Consecutive cells list the same chunks, except that every 16 cells about 1 % of
/// them drop out or come back (the cells further on see a little less or more). For tests and
/// benches of the compressor on the shape it is built for.
pub fn far_list_sample(cells: u32, chunks: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(cells as usize * (chunks as usize * 8 + 20));
    for cell in 0..cells {
        // The cell's own record: its cube index, the near cubes it sees, how many far chunks.
        for v in [cell * 3 + 1, 2, cell % 7, cell % 5 + 9, chunks] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for chunk in 0..chunks {
            if (chunk.wrapping_mul(2_654_435_761) ^ (cell / 16).wrapping_mul(40_503)) % 97 == 0 {
                continue;
            }
            let index = ((chunk / 1024) << 24) | ((chunk / 32 % 32) << 12) | (chunk % 32);
            out.extend_from_slice(&index.to_le_bytes());
            out.extend_from_slice(&0u32.to_le_bytes());
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Pseudo-random bytes that do not compress.
    pub(crate) fn noise(n: usize, seed: u64) -> Vec<u8> {
        let mut s = seed | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 24) as u8
            })
            .collect()
    }

    /// Decodes an LZ4 block while checking the block format's rules, which a decoder need not
    /// enforce: the last sequence is literals only, the last 5 bytes are literals, the last
    /// match starts at least 12 bytes before the end, offsets are 1..=65 535 and stay inside
    /// `history` + the output. Returns the block's bytes.
    fn decode_strict(block: &[u8], history: &[u8]) -> Vec<u8> {
        let mut out = history.to_vec();
        let mut i = 0;
        let mut last_match: Option<(usize, usize)> = None;
        let read_len = |i: &mut usize, nibble: usize| {
            let mut n = nibble;
            if nibble == 15 {
                loop {
                    let b = block[*i];
                    *i += 1;
                    n += usize::from(b);
                    if b != 255 {
                        break;
                    }
                }
            }
            n
        };
        loop {
            let token = block[i];
            i += 1;
            let lits = read_len(&mut i, usize::from(token >> 4));
            out.extend_from_slice(&block[i..i + lits]);
            i += lits;
            if i == block.len() {
                assert_eq!(token & 15, 0, "the last sequence has no match");
                break;
            }
            let offset = usize::from(u16::from_le_bytes([block[i], block[i + 1]]));
            i += 2;
            let len = MIN_MATCH + read_len(&mut i, usize::from(token & 15));
            assert!(offset >= 1 && offset <= out.len(), "offset {offset} with {} bytes decoded", out.len());
            last_match = Some((out.len() - history.len(), len));
            for _ in 0..len {
                out.push(out[out.len() - offset]);
            }
        }
        let n = out.len() - history.len();
        if let Some((start, len)) = last_match {
            assert!(start + MF_LIMIT <= n, "last match starts at {start} of {n}");
            assert!(start + len + LAST_LITERALS <= n, "match {start}+{len} reaches into the last 5 bytes of {n}");
        }
        out.split_off(history.len())
    }

    /// [`compress_block`] searched as `compression` says.
    fn compress_block_as(block: &[u8], compression: Compression) -> Vec<u8> {
        let mut out = Vec::new();
        BlockCompressor::with_compression(block.len(), compression).compress_block(block, 0, block.len(), &mut out);
        out
    }

    fn check(data: &[u8]) {
        for compression in [Compression::Fast, Compression::High] {
            let block = compress_block_as(data, compression);
            assert_eq!(decode_strict(&block, &[]), data, "{compression:?}");
            let flex = lz4_flex::block::decompress(&block, data.len()).expect("lz4_flex decodes");
            assert_eq!(flex, data, "{compression:?}");
        }
    }

    /// Vertices shaped like a chunk's (G1, G2): four corners per unit face at small integer
    /// positions, texture UVs in repeats, lightmap UVs in a page; 28 bytes each.
    fn vertex_sample(faces: u32) -> Vec<u8> {
        let mut out = Vec::new();
        for f in 0..faces {
            let (x, y, z) = ((f % 16) as f32 - 8.0, ((f / 16) % 7) as f32 - 3.0, ((f / 112) % 16) as f32 - 8.0);
            for (k, (du, dv)) in [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)].into_iter().enumerate() {
                let luv = ((f % 61) as f32 * 4.0 + 0.5 + du * 3.0) / 256.0;
                let vals = [x + du, y + 1.0, z + dv, (x + du) * 0.25 - (x * 0.25).floor(), dv, luv, (k as f32) / 256.0];
                for v in vals {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        out
    }

    #[test]
    fn high_compression_is_smaller_on_the_shapes_of_a_map() {
        for (name, data) in [("far lists", far_list_sample(40, 2000)), ("vertices", vertex_sample(6000))] {
            let (fast, high) = (compress_block(&data), compress_block_as(&data, Compression::High));
            assert!(high.len() < fast.len(), "{name}: high {} bytes, fast {}", high.len(), fast.len());
            assert_eq!(decode_strict(&high, &[]), data);
        }
    }

    #[test]
    fn high_compression_matches_into_earlier_blocks_and_restarts_as_new() {
        let half = noise(5000, 1);
        let data = [&half[..], &half[..]].concat();
        let mut enc = BlockCompressor::with_compression(0, Compression::High);
        let (mut first, mut second) = (Vec::new(), Vec::new());
        enc.compress_block(&data, 0, half.len(), &mut first);
        enc.compress_block(&data, half.len(), data.len(), &mut second);
        assert!(second.len() < 50, "the repeat is one match: {} bytes", second.len());
        assert_eq!(decode_strict(&second, &half), half);
        // Restarted for inputs that repeat earlier ones: nothing earlier is found, also when
        // the tables are cleared near the end of the position space.
        let inputs = [far_list_sample(8, 1000), noise(300, 2), vertex_sample(500), far_list_sample(8, 1000)];
        for wrap in [false, true] {
            for (i, input) in inputs.iter().enumerate() {
                if wrap {
                    enc.hc.as_mut().expect("high").base = u32::MAX - 5000;
                }
                enc.restart(input.len());
                if wrap {
                    assert_eq!(enc.hc.as_ref().expect("high").base, 0, "cleared rather than wrapping");
                }
                let mut out = Vec::new();
                enc.compress_block(input, 0, input.len(), &mut out);
                assert_eq!(out, compress_block_as(input, Compression::High), "input {i}, wrap {wrap}");
            }
        }
    }

    #[test]
    fn edge_lengths_and_shapes() {
        for n in [0, 1, 4, 5, 12, 13, 14, 17, 20, 64, 1000] {
            check(&vec![0u8; n]);
            check(&(0..n).map(|i| (i * 7 % 251) as u8).collect::<Vec<_>>());
            check(&(0..n).map(|i| (i / 3) as u8).collect::<Vec<_>>());
        }
        check(&far_list_sample(5, 300));
    }

    #[test]
    fn matches_reach_into_earlier_blocks() {
        // The second half repeats the first: a block of it alone is all literals, but with the
        // first half as history it is one long match.
        let half = noise(5000, 1);
        let data = [&half[..], &half[..]].concat();
        let mut enc = BlockCompressor::new(data.len());
        let mut first = Vec::new();
        enc.compress_block(&data, 0, half.len(), &mut first);
        let mut second = Vec::new();
        enc.compress_block(&data, half.len(), data.len(), &mut second);
        assert!(first.len() > half.len(), "random bytes do not compress");
        assert!(second.len() < 50, "the repeat is one match: {} bytes", second.len());
        assert_eq!(decode_strict(&second, &half), half);
        assert_eq!(decode_strict(&first, &[]), half);
    }

    #[test]
    fn a_repeated_far_list_costs_a_few_bytes() {
        // 64 cells × 4 096 entries: every list after the first is one match of ~32 KB.
        let data = far_list_sample(64, 4096);
        let block = compress_block(&data);
        let per_list = (block.len() - compress_block(&far_list_sample(1, 4096)).len()) / 63;
        assert!(per_list < 200, "{per_list} bytes per repeated 32 KB list");
        assert_eq!(decode_strict(&block, &[]), data);
    }

    #[test]
    fn a_restarted_compressor_writes_what_a_new_one_does() {
        // Inputs of several table sizes in a row, big after small and small after big, the
        // later ones repeating bytes of the earlier ones: nothing of an earlier input is found.
        let inputs = [
            far_list_sample(8, 1000),
            noise(300, 2),
            [&noise(2000, 3)[..], &far_list_sample(2, 500)].concat(),
            far_list_sample(3, 300),
            vec![7; 100],
            far_list_sample(40, 4096),
            far_list_sample(8, 1000),
        ];
        let mut enc = BlockCompressor::new(0);
        for (i, input) in inputs.iter().enumerate() {
            enc.restart(input.len());
            let mut out = Vec::new();
            enc.compress_block(input, 0, input.len(), &mut out);
            assert_eq!(out, compress_block(input), "input {i}");
        }
        // Near the end of the position space the tables are cleared, with the same result.
        enc.base = u32::MAX - 5000;
        enc.high = 10;
        for input in &inputs[..2] {
            enc.restart(input.len());
            assert_eq!(enc.base, 0, "tables cleared rather than wrapping");
            let mut out = Vec::new();
            enc.compress_block(input, 0, input.len(), &mut out);
            assert_eq!(out, compress_block(input));
            enc.base = u32::MAX - 5000;
        }
    }

    /// Inputs of the shapes the encoder meets: random bytes, few symbols, runs, far lists cut
    /// anywhere, and a short random record repeated with a byte changed here and there (the
    /// visibility lists' near-repeats, at a random distance).
    fn shaped_input() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..3000),
            proptest::collection::vec(0u8..3, 0..3000),
            proptest::collection::vec((any::<u8>(), 1usize..40), 0..200)
                .prop_map(|runs| runs.into_iter().flat_map(|(b, n)| std::iter::repeat_n(b, n)).collect()),
            (1u32..12, 1u32..600, 0usize..500).prop_map(|(cells, chunks, cut)| {
                let mut v = far_list_sample(cells, chunks);
                v.truncate(v.len().saturating_sub(cut));
                v
            }),
            (proptest::collection::vec(any::<u8>(), 1..300), 1usize..200, any::<u64>()).prop_map(
                |(record, copies, seed)| {
                    let mut v = record.repeat(copies);
                    let n = v.len();
                    for (i, b) in noise(n / 50 + 1, seed).into_iter().enumerate() {
                        v[(i * 7919 + usize::from(b)) % n] = b;
                    }
                    v
                }
            ),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// One compressor restarted for each input of a series (as an export's worker runs),
        /// its blocks cut at random sizes (matches reach into the earlier ones), writes what a
        /// fresh compressor writes for that input, and every block decodes (strict rules and
        /// lz4_flex) to its bytes.
        #[test]
        fn restarted_equals_fresh_over_a_series(
            inputs in proptest::collection::vec((shaped_input(), 13usize..5000), 1..6),
            high in any::<bool>(),
        ) {
            let compression = if high { Compression::High } else { Compression::Fast };
            let mut reused = BlockCompressor::with_compression(0, compression);
            for (input, block) in &inputs {
                reused.restart(input.len());
                let mut fresh = BlockCompressor::with_compression(input.len(), compression);
                for start in (0..input.len()).step_by(*block) {
                    let end = (start + block).min(input.len());
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    reused.compress_block(input, start, end, &mut a);
                    fresh.compress_block(input, start, end, &mut b);
                    prop_assert_eq!(&a, &b);
                    prop_assert_eq!(&decode_strict(&a, &input[..start])[..], &input[start..end]);
                    let flex = lz4_flex::block::decompress_with_dict(&a, end - start, &input[..start]);
                    prop_assert_eq!(&flex.expect("lz4_flex decodes")[..], &input[start..end]);
                }
            }
        }
    }

    proptest! {
        #[test]
        fn round_trips_with_strict_rules(
            data in shaped_input()
        ) {
            check(&data);
        }
    }
}
