//! A digest of a file's bytes that can be written like a file ([`FileDigest`]: `Write + Seek`),
//! so that a streamed export ([`crate::compile::Assembled::write_to`], [`pmf::ChunkStream`]) can be
//! checked against another without either file being whole in memory. The digest is a function
//! of the bytes alone, whatever order and pieces they were written in: xxh3-128 of the file's
//! length and of the xxh3-128 of each [`BLOCK`]-byte block in file order ([`digest_of`] gives it
//! for bytes in memory).
//!
//! [`pmf::ChunkStream`]: pmfedit_core::format::pmf::ChunkStream

use std::collections::BTreeMap;
use std::io::{Error, ErrorKind, Seek, SeekFrom, Write};
use twox_hash::XxHash3_128;

/// The size of the blocks hashed on their own, bytes.
pub const BLOCK: usize = 1 << 16;

/// The digest of a file: its length and xxh3-128 over the length and its blocks' hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Digest {
    /// The file's size, bytes.
    pub len: u64,
    /// xxh3-128 of the length (8 bytes, little-endian) then of every block's xxh3-128 (16
    /// bytes each, little-endian), in file order.
    pub hash: u128,
}

/// A block some of whose bytes are written.
#[derive(Debug)]
struct Partial {
    bytes: Box<[u8]>,
    /// The written ranges, sorted, disjoint and not touching.
    written: Vec<(usize, usize)>,
}

impl Partial {
    fn new() -> Self {
        Partial { bytes: vec![0; BLOCK].into_boxed_slice(), written: Vec::new() }
    }

    /// Writes `data` at `at` (within the block).
    fn put(&mut self, at: usize, data: &[u8]) {
        let end = at + data.len();
        self.bytes[at..end].copy_from_slice(data);
        let (mut lo, mut hi) = (at, end);
        self.written.retain(|&(a, b)| {
            if b < lo || a > hi {
                true
            } else {
                lo = lo.min(a);
                hi = hi.max(b);
                false
            }
        });
        let i = self.written.partition_point(|&(a, _)| a < lo);
        self.written.insert(i, (lo, hi));
    }

    /// Whether bytes `0..len` are all written.
    fn covers(&self, len: usize) -> bool {
        self.written.first().is_some_and(|&(a, b)| a == 0 && b >= len)
    }
}

/// A sink that digests what is written to it, as a file would hold it: writes may come in any
/// order and seek anywhere, as long as every byte up to the end is written before
/// [`Self::finish`]. Each block is hashed, and its bytes dropped, as soon as all of it is
/// written, so it keeps only the blocks still partly written (for a streamed PMF file, the few
/// around the header and the chunk tables, written last). Rewriting a byte of a block already
/// hashed is refused (an error of the write), as is a gap at the end.
#[derive(Debug, Default)]
pub struct FileDigest {
    pos: u64,
    /// The end of the furthest write.
    len: u64,
    hashed: BTreeMap<u64, u128>,
    partial: BTreeMap<u64, Partial>,
}

impl FileDigest {
    /// An empty file.
    pub fn new() -> Self {
        Self::default()
    }

    /// Blocks kept in memory now because they are partly written.
    pub fn partial_blocks(&self) -> usize {
        self.partial.len()
    }

    /// The digest of what was written, or an error naming the first byte never written.
    pub fn finish(mut self) -> std::io::Result<Digest> {
        let blocks = self.len.div_ceil(BLOCK as u64);
        let mut h = XxHash3_128::new();
        h.write(&self.len.to_le_bytes());
        for i in 0..blocks {
            let hash = match self.hashed.get(&i) {
                Some(&hash) => hash,
                None => {
                    let size = (self.len - i * BLOCK as u64).min(BLOCK as u64) as usize;
                    match self.partial.remove(&i) {
                        Some(p) if p.covers(size) => XxHash3_128::oneshot(&p.bytes[..size]),
                        p => {
                            let first = p.map_or(0, |p| match p.written.first() {
                                Some(&(0, b)) => b,
                                _ => 0,
                            });
                            return Err(Error::new(
                                ErrorKind::InvalidData,
                                format!("byte {} was never written", i * BLOCK as u64 + first as u64),
                            ));
                        }
                    }
                }
            };
            h.write(&hash.to_le_bytes());
        }
        Ok(Digest { len: self.len, hash: h.finish_128() })
    }
}

impl Write for FileDigest {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut at = self.pos;
        let mut rest = buf;
        while !rest.is_empty() {
            let block = at / BLOCK as u64;
            let within = (at % BLOCK as u64) as usize;
            let n = rest.len().min(BLOCK - within);
            let (piece, tail) = rest.split_at(n);
            if self.hashed.contains_key(&block) {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!("byte {at} rewritten after its block was digested"),
                ));
            }
            if n == BLOCK {
                self.partial.remove(&block);
                self.hashed.insert(block, XxHash3_128::oneshot(piece));
            } else {
                let p = self.partial.entry(block).or_insert_with(Partial::new);
                p.put(within, piece);
                if p.covers(BLOCK) {
                    self.hashed.insert(block, XxHash3_128::oneshot(&p.bytes));
                    self.partial.remove(&block);
                }
            }
            at += n as u64;
            rest = tail;
        }
        self.pos = at;
        self.len = self.len.max(at);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Seek for FileDigest {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| Error::new(ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.pos)
    }
}

/// The [`Digest`] of `bytes`, as a [`FileDigest`] they were written to gives it.
pub fn digest_of(bytes: &[u8]) -> Digest {
    let mut h = XxHash3_128::new();
    h.write(&(bytes.len() as u64).to_le_bytes());
    for block in bytes.chunks(BLOCK) {
        h.write(&XxHash3_128::oneshot(block).to_le_bytes());
    }
    Digest { len: bytes.len() as u64, hash: h.finish_128() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(n: usize, seed: u64) -> Vec<u8> {
        let mut s = seed | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s as u8
            })
            .collect()
    }

    fn streamed(pieces: &[(u64, &[u8])]) -> std::io::Result<Digest> {
        let mut d = FileDigest::new();
        for &(at, p) in pieces {
            d.seek(SeekFrom::Start(at))?;
            d.write_all(p)?;
        }
        d.finish()
    }

    #[test]
    fn any_order_of_writes_gives_the_digest_of_the_bytes() {
        let data = bytes(3 * BLOCK + 1234, 7);
        let want = digest_of(&data);
        assert_eq!(want.len, data.len() as u64);
        // In one write, in small pieces, and back to front in odd pieces across block bounds.
        assert_eq!(streamed(&[(0, &data)]).unwrap(), want);
        let small: Vec<_> = data.chunks(1000).enumerate().map(|(i, c)| ((i * 1000) as u64, c)).collect();
        assert_eq!(streamed(&small).unwrap(), want);
        let mut odd: Vec<_> =
            data.chunks(BLOCK / 3 + 17).enumerate().map(|(i, c)| ((i * (BLOCK / 3 + 17)) as u64, c)).collect();
        odd.reverse();
        assert_eq!(streamed(&odd).unwrap(), want);
        // As a PMF stream writes: the body first from an offset, the head last.
        let cut = 100;
        assert_eq!(streamed(&[(cut as u64, &data[cut..]), (0, &data[..cut])]).unwrap(), want);
    }

    #[test]
    fn a_changed_or_missing_byte_changes_the_digest() {
        let data = bytes(2 * BLOCK + 5, 9);
        let want = digest_of(&data);
        for at in [0, BLOCK - 1, BLOCK, 2 * BLOCK + 4] {
            let mut other = data.clone();
            other[at] ^= 1;
            assert_ne!(digest_of(&other), want, "byte {at}");
            assert_ne!(streamed(&[(0, &other)]).unwrap(), want, "byte {at}");
        }
        // One byte longer (a zero), or one shorter.
        let mut longer = data.clone();
        longer.push(0);
        assert_ne!(digest_of(&longer), want);
        assert_ne!(digest_of(&data[..data.len() - 1]), want);
        // Zero blocks are not the same as no bytes: the length counts.
        assert_ne!(digest_of(&[0; BLOCK]), digest_of(&[]));
    }

    #[test]
    fn gaps_and_rewrites_of_digested_bytes_are_errors() {
        let data = bytes(2 * BLOCK, 3);
        // A gap in the middle of a block, and a whole block never written.
        let e = streamed(&[(0, &data[..10]), (20, &data[20..])]).unwrap_err();
        assert!(e.to_string().contains("byte 10 "), "{e}");
        let e = streamed(&[(BLOCK as u64, &data[BLOCK..])]).unwrap_err();
        assert!(e.to_string().contains("byte 0 "), "{e}");
        // A block already digested cannot change.
        let mut d = FileDigest::new();
        d.write_all(&data).unwrap();
        d.seek(SeekFrom::Start(5)).unwrap();
        assert_eq!(d.write(&[1]).unwrap_err().kind(), ErrorKind::InvalidInput);
        // Rewriting a block still partly written is a file's overwrite: the last bytes count.
        let mut d = FileDigest::new();
        d.write_all(&[9; 10]).unwrap();
        d.seek(SeekFrom::Start(0)).unwrap();
        d.write_all(&data[..BLOCK / 2]).unwrap();
        d.write_all(&data[BLOCK / 2..]).unwrap();
        assert_eq!(d.partial_blocks(), 0);
        assert_eq!(d.finish().unwrap(), digest_of(&data));
    }

    #[test]
    fn the_digest_is_the_documented_function() {
        // Pinned independently of `digest_of`: xxh3-128 of the length then of the blocks' hashes.
        let data = bytes(BLOCK + 3, 5);
        let mut expected = (data.len() as u64).to_le_bytes().to_vec();
        expected.extend_from_slice(&XxHash3_128::oneshot(&data[..BLOCK]).to_le_bytes());
        expected.extend_from_slice(&XxHash3_128::oneshot(&data[BLOCK..]).to_le_bytes());
        assert_eq!(streamed(&[(0, &data)]).unwrap().hash, XxHash3_128::oneshot(&expected));
    }
}
