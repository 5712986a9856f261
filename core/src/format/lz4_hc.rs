//! The high-compression parse of [`super::lz4_block::BlockCompressor`]
//! ([`Compression::High`], docs/spec/PMF-NOTES.md L1): the same LZ4 blocks any decoder reads,
//! found by a slower search, for maps that are built once and downloaded many times.
//!
//! At each position it keeps the longest of:
//!
//! 1. the offsets of the last three matches (as the fast parse: a far visibility list's repeat),
//! 2. the last position with the same 8 bytes (a long match far back that a chain of common
//!    4-byte values — a far list's zero counts — would never reach),
//! 3. up to [`Compression::High`]'s chain depth of earlier positions with the same 4 bytes,
//!    newest first, within the 64 KB window (lz4's HC mode);
//!
//! then looks one position ahead (lazy matching: a longer match starting one byte later wins,
//! the byte becomes a literal), extends the match backwards over the pending literals, and
//! enters every position into the tables (no skipping: this mode is for size, not speed).
//! Every candidate is taken in a fixed order and ties keep the earlier, so the output is a
//! function of the input alone, like the fast parse's.

use super::lz4_seq::{
    LAST_LITERALS, MAX_OFFSET, MF_LIMIT, MIN_MATCH, REPS, Writer, emit_match, match_len, next_base, read_u64,
};

/// How an LZ4 block is searched for matches. Both write standard LZ4 that any decoder reads;
/// the choice changes the size of the output and the time it takes, nothing else.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Compression {
    /// One greedy pass with a few candidates per position ([`super::lz4_block`]): about the
    /// speed of the `lz4` tool's default level (what the editor's live export uses).
    #[default]
    Fast,
    /// Hash chains and lazy matching (this module): several times slower, smaller output.
    High,
}

impl Compression {
    /// The name used on the command line and in messages (`fast`, `high`).
    pub fn name(self) -> &'static str {
        match self {
            Compression::Fast => "fast",
            Compression::High => "high",
        }
    }
}

/// 4-byte hash heads: 2^16 entries (256 KB) cover the 64 KB window.
const HEAD_BITS: u32 = 16;
/// 8-byte hash heads.
const HEAD8_BITS: u32 = 16;
/// Chain links, one per position of the 64 KB window.
const CHAIN_LEN: usize = 1 << 16;
/// Earlier positions with the same 4 bytes tried at each position (lz4's level 9 tries 256).
const CHAIN_DEPTH: u32 = 256;
/// A match this long ends the search at its position: longer ones gain little, and runs of one
/// value (long chains of themselves) would otherwise cost the full depth at every position.
const GOOD_ENOUGH: usize = 1024;

/// The tables of the high-compression parse, kept from input to input like the fast parse's
/// (see [`super::lz4_block::BlockCompressor::restart`]): entries below `base` are from earlier
/// inputs and read as position 0.
#[derive(Debug, Clone)]
pub(super) struct HcTables {
    /// `base` + position of the newest position with each 4-byte hash.
    head: Vec<u32>,
    /// `base` + position of the newest position with each 8-byte hash.
    head8: Vec<u32>,
    /// For position `p` (at `p % CHAIN_LEN`): how far back the previous position with the same
    /// 4-byte hash is; 0 when there is none within reach.
    chain: Vec<u16>,
    pub(super) base: u32,
    /// Positions below this are in the tables.
    next: usize,
    reps: [usize; REPS],
}

impl HcTables {
    pub(super) fn new() -> Self {
        Self {
            head: vec![0; 1 << HEAD_BITS],
            head8: vec![0; 1 << HEAD8_BITS],
            chain: vec![0; CHAIN_LEN],
            base: 0,
            next: 0,
            reps: [0; REPS],
        }
    }

    /// Readies the tables for a new input: the output then depends on the new input alone.
    pub(super) fn restart(&mut self) {
        // Every entry is below `base + next`.
        self.base = next_base(self.base, self.next).unwrap_or_else(|| {
            self.head.fill(0);
            self.head8.fill(0);
            0
        });
        self.next = 0;
        self.reps = [0; REPS];
    }

    fn position(&self, entry: u32) -> usize {
        (entry.max(self.base) - self.base) as usize
    }

    /// Enters positions `self.next..to` (each needs 8 readable bytes in `data`).
    fn insert_to(&mut self, data: &[u8], to: usize) {
        while self.next < to {
            let p = self.next;
            let seq = read_u64(data, p);
            let h = hash4(seq as u32);
            let prev = self.position(self.head[h]);
            // Position 0 of a fresh table is a real position too (it is only ever a candidate
            // that is checked byte by byte); `p - prev` is 0 only for p = 0.
            let dist = p - prev;
            self.chain[p % CHAIN_LEN] = if dist <= MAX_OFFSET { dist as u16 } else { 0 };
            self.head[h] = self.base.wrapping_add(p as u32);
            self.head8[hash8(seq)] = self.base.wrapping_add(p as u32);
            self.next += 1;
        }
    }

    /// The longest match at `pos` (`(length, distance)`, length 0 for none), entering the
    /// positions before it first.
    fn find(&mut self, data: &[u8], pos: usize, limit: usize) -> (usize, usize) {
        self.insert_to(data, pos);
        let seq = read_u64(data, pos);
        let mut best = (0, 0);
        for k in 0..REPS {
            if try_candidate(data, pos, self.reps[k], seq, limit, &mut best) {
                return best;
            }
        }
        let c8 = pos - self.position(self.head8[hash8(seq)]);
        if !self.reps.contains(&c8) && try_candidate(data, pos, c8, seq, limit, &mut best) {
            return best;
        }
        let mut dist = pos - self.position(self.head[hash4(seq as u32)]);
        let mut tries = CHAIN_DEPTH;
        while tries > 0 && dist != 0 && dist <= pos.min(MAX_OFFSET) {
            if dist != c8
                && !self.reps.contains(&dist)
                && (try_candidate(data, pos, dist, seq, limit, &mut best) || best.0 >= GOOD_ENOUGH)
            {
                return best;
            }
            let link = usize::from(self.chain[(pos - dist) % CHAIN_LEN]);
            if link == 0 {
                break;
            }
            dist += link;
            tries -= 1;
        }
        best
    }

    /// Appends one LZ4 block holding `data[start..end]` to `w`, matching into `data[..start]`
    /// (positions entered by the earlier blocks of this input).
    pub(super) fn compress_block(&mut self, data: &[u8], start: usize, end: usize, w: &mut Writer<'_>) -> usize {
        let data = &data[..end];
        let mut anchor = start;
        if end - start > MF_LIMIT {
            let match_limit = end - LAST_LITERALS;
            let last_start = end - MF_LIMIT;
            let mut pos = start;
            while pos <= last_start {
                let (mut len, mut dist) = self.find(data, pos, match_limit);
                if len < MIN_MATCH {
                    pos += 1;
                    continue;
                }
                // One position ahead: a longer match there is worth a literal.
                while pos < last_start && len < GOOD_ENOUGH {
                    let next = self.find(data, pos + 1, match_limit);
                    if next.0 > len {
                        pos += 1;
                        (len, dist) = next;
                    } else {
                        break;
                    }
                }
                (_, anchor) = emit_match(w, data, anchor, pos, dist, len, &mut self.reps);
                pos = anchor;
            }
            // Enter what a later block may match against (needs 8 readable bytes here).
            self.insert_to(data, (last_start + 1).min(end - 7));
        }
        w.last_literals(data, anchor);
        w.len
    }
}

/// Tries the candidate `dist` bytes back and keeps it in `best` if longer; true when the match
/// reaches `limit` (nothing can be longer).
#[inline(always)]
fn try_candidate(data: &[u8], pos: usize, dist: usize, seq: u64, limit: usize, best: &mut (usize, usize)) -> bool {
    if dist == 0 || dist > pos.min(MAX_OFFSET) {
        return false;
    }
    if best.0 >= MIN_MATCH && data[pos - dist + best.0] != data[pos + best.0] {
        return false;
    }
    let len = match_len(data, pos - dist, pos, seq, limit);
    if len > best.0 {
        *best = (len, dist);
        return pos + len == limit;
    }
    false
}

fn hash4(v: u32) -> usize {
    (v.wrapping_mul(2_654_435_761) >> (32 - HEAD_BITS)) as usize
}

fn hash8(v: u64) -> usize {
    (v.wrapping_mul(0x9E37_79B1_85EB_CA87) >> (64 - HEAD8_BITS)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Where an input has fewer positions than the chain is deep, the search sees every
        /// earlier position: at each position it finds the longest match there is (what the
        /// hash chain is for; the recent offsets and the 8-byte hash alone find the newest).
        #[test]
        fn the_search_finds_the_longest_match(data in proptest::collection::vec(0u8..3, 13..240)) {
            let mut t = HcTables::new();
            let limit = data.len() - LAST_LITERALS;
            for pos in 0..=data.len() - MF_LIMIT {
                let (len, dist) = t.find(&data, pos, limit);
                let longest = (0..pos)
                    .map(|c| data[c..].iter().zip(&data[pos..limit]).take_while(|(a, b)| a == b).count())
                    .filter(|&n| n >= MIN_MATCH)
                    .max()
                    .unwrap_or(0);
                prop_assert_eq!(len, longest, "at {}", pos);
                if len > 0 {
                    prop_assert_eq!(&data[pos - dist..pos - dist + len], &data[pos..pos + len]);
                }
            }
        }
    }
}
