//! What both LZ4 block parses share ([`super::lz4_block`]'s fast one and [`super::lz4_hc`]'s high
//! one): the block format's limits, the sequence writer, the match emitter (backward extension
//! and the recent offsets) and match length. `lz4_hc` takes these from here, not from
//! `lz4_block`, which holds the high parse's tables: the imports run one way, no circle.

/// The base a parse's tables take for its next input, after positions below `used` of the last
/// one went in at `base`: entries below the new base read as position 0 (as a fresh table's
/// do). `None` when the next input could run past `u32` (room is kept for any block the format
/// allows, 1 GiB): the tables must then be cleared and the base goes back to 0.
pub(super) fn next_base(base: u32, used: usize) -> Option<u32> {
    let next = u64::from(base) + used as u64;
    (next + (1 << 31) <= u64::from(u32::MAX)).then_some(next as u32)
}

/// Shortest match LZ4 can encode.
pub(super) const MIN_MATCH: usize = 4;
/// The last 5 bytes of a block are always literals (LZ4 block format, end-of-block rules).
pub(super) const LAST_LITERALS: usize = 5;
/// The last match must start at least 12 bytes before the end of the block.
pub(super) const MF_LIMIT: usize = 12;
/// Largest distance an LZ4 match offset can express.
pub const MAX_OFFSET: usize = 65_535;
/// How many recent match offsets are tried at each position: a far list's repeat offset
/// survives the few short matches of the cell record between two lists.
pub(super) const REPS: usize = 3;
/// Slack after the worst-case output in the scratch buffer: literals are copied 16 bytes at a
/// time when the input has 16 readable bytes after them.
pub(super) const WILD_COPY: usize = 16;

/// Writes the match of `len` bytes `dist` back found at `pos`, first extended backwards over the
/// pending literals from `anchor` (never before the input's start), and moves `dist` to the front
/// of the recent offsets `reps`. Returns where the match starts and where it ends (the next
/// anchor). Both parses emit their matches through it.
#[inline(always)]
pub(super) fn emit_match(
    w: &mut Writer<'_>,
    data: &[u8],
    anchor: usize,
    pos: usize,
    dist: usize,
    len: usize,
    reps: &mut [usize; REPS],
) -> (usize, usize) {
    let (mut at, mut src) = (pos, pos - dist);
    while at > anchor && src > 0 && data[at - 1] == data[src - 1] {
        at -= 1;
        src -= 1;
    }
    let len = len + (pos - at);
    w.sequence(data, anchor, at, dist, len);
    if dist != reps[0] {
        if dist != reps[1] {
            reps[2] = reps[1];
        }
        reps[1] = reps[0];
        reps[0] = dist;
    }
    (at, at + len)
}

/// The compressed block being written into a buffer sized for the worst case.
pub(super) struct Writer<'a> {
    pub(super) buf: &'a mut [u8],
    pub(super) len: usize,
}

impl Writer<'_> {
    /// One sequence: token, literal length, the literals `data[from..to]`, offset, match
    /// length.
    #[inline(always)]
    pub(super) fn sequence(&mut self, data: &[u8], from: usize, to: usize, offset: usize, match_len: usize) {
        let lits = to - from;
        let ml = match_len - MIN_MATCH;
        self.buf[self.len] = ((lits.min(15) as u8) << 4) | ml.min(15) as u8;
        self.len += 1;
        if lits >= 15 {
            self.length(lits - 15);
        }
        self.literals(data, from, lits);
        self.buf[self.len..self.len + 2].copy_from_slice(&(offset as u16).to_le_bytes());
        self.len += 2;
        if ml >= 15 {
            self.length(ml - 15);
        }
    }

    /// The last sequence: literals only, `data[from..]`.
    pub(super) fn last_literals(&mut self, data: &[u8], from: usize) {
        let lits = data.len() - from;
        self.buf[self.len] = (lits.min(15) as u8) << 4;
        self.len += 1;
        if lits >= 15 {
            self.length(lits - 15);
        }
        self.literals(data, from, lits);
    }

    /// Copies `data[from..from + n]`; short runs as one 16-byte copy (the buffer has
    /// [`WILD_COPY`] bytes of slack, the bytes past `n` are overwritten next).
    #[inline(always)]
    fn literals(&mut self, data: &[u8], from: usize, n: usize) {
        if n <= WILD_COPY && from + WILD_COPY <= data.len() {
            self.buf[self.len..self.len + WILD_COPY].copy_from_slice(&data[from..from + WILD_COPY]);
        } else {
            self.buf[self.len..self.len + n].copy_from_slice(&data[from..from + n]);
        }
        self.len += n;
    }

    /// The extra length bytes after a nibble of 15: 255s, then the rest.
    fn length(&mut self, n: usize) {
        let full = n / 255;
        self.buf[self.len..self.len + full].fill(255);
        self.len += full;
        self.buf[self.len] = (n % 255) as u8;
        self.len += 1;
    }
}

/// Length of the match of `data[pos..]` against `data[src..]` (`src < pos`), whose first 8 bytes
/// at `pos` are `seq`, stopping at `limit`; 0 if shorter than [`MIN_MATCH`].
#[inline(always)]
pub(super) fn match_len(data: &[u8], src: usize, pos: usize, seq: u64, limit: usize) -> usize {
    // The first 8 bytes compare in one load (both are readable). `limit - pos` is at least 7
    // (a match starts at least 12 bytes before the end, `limit` is 5 before it), so a
    // mismatch in them needs no check against it.
    let diff = read_u64(data, src) ^ seq;
    if diff != 0 {
        let n = (diff.trailing_zeros() / 8) as usize;
        if n >= MIN_MATCH { n } else { 0 }
    } else if limit - pos < 8 {
        limit - pos
    } else {
        8 + common_len(data, src + 8, pos + 8, limit)
    }
}

/// How many bytes from `a` and `b` (`a < b`) are equal, stopping at `limit` for `b`.
fn common_len(data: &[u8], a: usize, b: usize, limit: usize) -> usize {
    // Two slices of the same length, compared 16 bytes at a time: the loop has no bounds checks.
    let (x, y) = (&data[a..a + (limit - b)], &data[b..limit]);
    let mut n = 0;
    for (p, q) in x.chunks_exact(16).zip(y.chunks_exact(16)) {
        let diff =
            u128::from_le_bytes(p.try_into().expect("16 bytes")) ^ u128::from_le_bytes(q.try_into().expect("16 bytes"));
        if diff != 0 {
            return n + (diff.trailing_zeros() / 8) as usize;
        }
        n += 16;
    }
    n + x[n..].iter().zip(&y[n..]).take_while(|(p, q)| p == q).count()
}

pub(super) fn read_u64(data: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(data[at..at + 8].try_into().expect("8 bytes"))
}
