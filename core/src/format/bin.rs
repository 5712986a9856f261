//! Bounded little-endian reading and writing.
//!
//! [`Reader`] is a cursor over a byte slice. Every read is bounds-checked, every error names the
//! section being read and the absolute byte offset where it went wrong, and [`Reader::sub`] hands
//! out a reader limited to a declared length so that one record can never read into the next.
//! [`Reader::count`] checks a declared element count against the bytes that are actually left
//! before anything is allocated, so forged counts cannot cause giant allocations.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// Why a read failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadErrorKind {
    #[error("unexpected end of data: needed {needed} bytes, {available} left")]
    Truncated { needed: u64, available: u64 },
    #[error("{count} {what} declared, but only {available} bytes are left (at least {min_size} bytes each)")]
    CountTooLarge { what: &'static str, count: u64, min_size: u64, available: u64 },
    #[error("declared size {size} is larger than the limit {limit}")]
    SizeTooLarge { size: u64, limit: u64 },
    #[error("{0} trailing bytes after the end of the record")]
    TrailingBytes(u64),
    #[error("{0}")]
    Invalid(Cow<'static, str>),
}

/// A read error: the section being read, the absolute byte offset, and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// Human-readable name of the section (e.g. `level 0 / chunk y0 x1 z2 / common`).
    pub section: Arc<str>,
    /// Absolute byte offset in the reader's coordinate space (see [`Reader::with_base`]).
    pub offset: u64,
    pub kind: ReadErrorKind,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}: {}", self.section, self.offset, self.kind)
    }
}

impl std::error::Error for ReadError {}

pub type ReadResult<T> = Result<T, ReadError>;

/// A bounded little-endian cursor over a byte slice.
#[derive(Clone)]
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// Absolute offset of `data[0]`.
    base: u64,
    section: Arc<str>,
}

impl fmt::Debug for Reader<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reader")
            .field("section", &self.section)
            .field("offset", &self.offset())
            .field("remaining", &self.remaining())
            .finish()
    }
}

impl<'a> Reader<'a> {
    /// A reader over `data`, whose first byte is at absolute offset 0.
    pub fn new(data: &'a [u8], section: impl Into<Arc<str>>) -> Self {
        Self::with_base(data, 0, section)
    }

    /// A reader over `data`, whose first byte is at absolute offset `base`.
    pub fn with_base(data: &'a [u8], base: u64, section: impl Into<Arc<str>>) -> Self {
        Self { data, pos: 0, base, section: section.into() }
    }

    /// The whole slice this reader covers.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Position relative to the start of this reader's slice.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Absolute offset of the next byte to be read.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    pub fn section(&self) -> &Arc<str> {
        &self.section
    }

    /// Renames the section reported in errors from here on.
    pub fn set_section(&mut self, section: impl Into<Arc<str>>) {
        self.section = section.into();
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// An error at the current offset.
    pub fn error(&self, kind: ReadErrorKind) -> ReadError {
        self.error_at(self.offset(), kind)
    }

    /// An error at a given absolute offset, in this reader's section.
    pub fn error_at(&self, offset: u64, kind: ReadErrorKind) -> ReadError {
        ReadError { section: self.section.clone(), offset, kind }
    }

    /// An [`ReadErrorKind::Invalid`] error at the current offset.
    pub fn invalid(&self, reason: impl Into<Cow<'static, str>>) -> ReadError {
        self.error(ReadErrorKind::Invalid(reason.into()))
    }

    /// An [`ReadErrorKind::Invalid`] error at a given absolute offset.
    pub fn invalid_at(&self, offset: u64, reason: impl Into<Cow<'static, str>>) -> ReadError {
        self.error_at(offset, ReadErrorKind::Invalid(reason.into()))
    }

    fn need(&self, n: usize) -> ReadResult<()> {
        if n > self.remaining() {
            Err(self.error(ReadErrorKind::Truncated { needed: n as u64, available: self.remaining() as u64 }))
        } else {
            Ok(())
        }
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> ReadResult<&'a [u8]> {
        self.need(n)?;
        let out = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// Skips `n` bytes.
    pub fn skip(&mut self, n: usize) -> ReadResult<()> {
        self.bytes(n).map(|_| ())
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self) -> ReadResult<[u8; N]> {
        let mut out = [0; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }

    /// A reader over the next `len` bytes, reporting errors under `section`; this reader moves past them.
    pub fn sub(&mut self, len: usize, section: impl Into<Arc<str>>) -> ReadResult<Reader<'a>> {
        let base = self.offset();
        let data = self.bytes(len)?;
        Ok(Reader { data, pos: 0, base, section: section.into() })
    }

    /// A reader over the next `len` bytes, in the same section.
    pub fn sub_same(&mut self, len: usize) -> ReadResult<Reader<'a>> {
        let section = self.section.clone();
        self.sub(len, section)
    }

    /// Reads a `u32` length and returns a sub-reader over that many bytes.
    pub fn sized_u32(&mut self, section: impl Into<Arc<str>>) -> ReadResult<Reader<'a>> {
        let len = self.u32()? as usize;
        self.sub(len, section)
    }

    /// Fails unless every byte has been consumed.
    pub fn expect_end(&self) -> ReadResult<()> {
        if self.is_empty() { Ok(()) } else { Err(self.error(ReadErrorKind::TrailingBytes(self.remaining() as u64))) }
    }

    /// Checks that `count` elements of at least `min_size` bytes each can still fit, and returns the
    /// count as `usize`. Call before `Vec::with_capacity(count)` so forged counts fail early.
    pub fn count(&self, count: u64, min_size: usize, what: &'static str) -> ReadResult<usize> {
        let min_size = min_size.max(1) as u64;
        let available = self.remaining() as u64;
        if count.saturating_mul(min_size) > available {
            return Err(self.error(ReadErrorKind::CountTooLarge { what, count, min_size, available }));
        }
        Ok(count as usize)
    }

    /// Checks a declared size against a limit.
    pub fn limit(&self, size: u64, limit: u64) -> ReadResult<usize> {
        if size > limit { Err(self.error(ReadErrorKind::SizeTooLarge { size, limit })) } else { Ok(size as usize) }
    }

    /// Reads a NUL-terminated UTF-8 string (the NUL is consumed, not returned).
    pub fn cstr(&mut self) -> ReadResult<&'a str> {
        let start = self.offset();
        let rest = &self.data[self.pos..];
        let Some(len) = rest.iter().position(|&b| b == 0) else {
            return Err(self.invalid("string has no terminating NUL before the end of the section"));
        };
        let bytes = &rest[..len];
        self.pos += len + 1;
        std::str::from_utf8(bytes)
            .map_err(|e| self.invalid_at(start + e.valid_up_to() as u64, "string is not valid UTF-8"))
    }

    pub fn u8(&mut self) -> ReadResult<u8> {
        Ok(self.array::<1>()?[0])
    }
    pub fn i8(&mut self) -> ReadResult<i8> {
        Ok(self.u8()? as i8)
    }
    pub fn bool(&mut self) -> ReadResult<bool> {
        Ok(self.u8()? != 0)
    }
}

macro_rules! le_readers {
    ($($name:ident: $ty:ty),* $(,)?) => {
        impl Reader<'_> {
            $(
                #[doc = concat!("Reads a little-endian `", stringify!($ty), "`.")]
                pub fn $name(&mut self) -> ReadResult<$ty> {
                    Ok(<$ty>::from_le_bytes(self.array()?))
                }
            )*
        }
        impl Writer {
            $(
                #[doc = concat!("Writes a little-endian `", stringify!($ty), "`.")]
                pub fn $name(&mut self, v: $ty) {
                    self.buf.extend_from_slice(&v.to_le_bytes());
                }
            )*
        }
    };
}

le_readers!(u16: u16, u32: u32, u64: u64, i16: i16, i32: i32, i64: i64, f32: f32, f64: f64);

impl Reader<'_> {
    /// Reads `N` little-endian `f32`s.
    pub fn f32s<const N: usize>(&mut self) -> ReadResult<[f32; N]> {
        let mut out = [0.0; N];
        for v in &mut out {
            *v = self.f32()?;
        }
        Ok(out)
    }
}

/// A little-endian byte writer.
#[derive(Debug, Default, Clone)]
pub struct Writer {
    buf: Vec<u8>,
}

/// A reserved `u32` slot to be filled in later with [`Writer::patch_u32`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a reserved slot must be patched"]
pub struct Slot(usize);

impl Writer {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(cap: usize) -> Self {
        Self { buf: Vec::with_capacity(cap) }
    }

    /// A writer appending to `buf` (its bytes kept): a buffer taken back with
    /// [`Self::into_inner`] and cleared is written again without allocating.
    pub fn from_vec(buf: Vec<u8>) -> Self {
        Self { buf }
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Makes room for `additional` more bytes at once (one allocation for a known total).
    pub fn reserve(&mut self, additional: usize) {
        self.buf.reserve_exact(additional);
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.buf
    }

    pub fn into_inner(self) -> Vec<u8> {
        self.buf
    }

    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    pub fn i8(&mut self, v: i8) {
        self.buf.push(v as u8);
    }

    pub fn bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }

    pub fn bytes(&mut self, v: &[u8]) {
        self.buf.extend_from_slice(v);
    }

    /// Writes little-endian `u32`s: room made once, then a loop without capacity checks (a
    /// chunk's visibility lists are most of its bytes).
    pub fn u32s(&mut self, v: &[u32]) {
        let start = self.buf.len();
        self.buf.resize(start + 4 * v.len(), 0);
        for (out, x) in self.buf[start..].chunks_exact_mut(4).zip(v) {
            out.copy_from_slice(&x.to_le_bytes());
        }
    }

    pub fn f32s(&mut self, v: &[f32]) {
        for &x in v {
            self.f32(x);
        }
    }

    /// Writes `s` followed by a NUL. The caller must ensure `s` has no interior NUL.
    pub fn cstr(&mut self, s: &str) {
        debug_assert!(!s.as_bytes().contains(&0), "cstr with interior NUL");
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
    }

    /// Reserves a `u32` to be patched later (e.g. a size written before its contents).
    pub fn reserve_u32(&mut self) -> Slot {
        let at = self.buf.len();
        self.u32(0);
        Slot(at)
    }

    pub fn patch_u32(&mut self, slot: Slot, v: u32) {
        self.buf[slot.0..slot.0 + 4].copy_from_slice(&v.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitives_round_trip() {
        let mut w = Writer::new();
        w.u8(0xAB);
        w.u16(0x1234);
        w.u32(0xDEAD_BEEF);
        w.u64(0x0102_0304_0506_0708);
        w.i32(-5);
        w.f32(1.5);
        w.cstr("héllo");
        w.u32s(&[7, 0x0102_0304]);
        let bytes = w.into_inner();
        assert_eq!(&bytes[..7], &[0xAB, 0x34, 0x12, 0xEF, 0xBE, 0xAD, 0xDE]);
        let mut r = Reader::new(&bytes, "t");
        assert_eq!(r.u8().unwrap(), 0xAB);
        assert_eq!(r.u16().unwrap(), 0x1234);
        assert_eq!(r.u32().unwrap(), 0xDEAD_BEEF);
        assert_eq!(r.u64().unwrap(), 0x0102_0304_0506_0708);
        assert_eq!(r.i32().unwrap(), -5);
        assert_eq!(r.f32().unwrap(), 1.5);
        assert_eq!(r.cstr().unwrap(), "héllo");
        assert_eq!((r.u32().unwrap(), r.u32().unwrap()), (7, 0x0102_0304));
        r.expect_end().unwrap();
    }

    #[test]
    fn errors_carry_section_and_absolute_offset() {
        let bytes = [1, 2, 3, 4, 5, 6, 7, 8];
        let mut r = Reader::with_base(&bytes, 100, "outer");
        r.u16().unwrap();
        let mut sub = r.sub(4, "inner").unwrap();
        sub.u16().unwrap();
        let err = sub.u32().unwrap_err();
        assert_eq!(err.offset, 104);
        assert_eq!(&*err.section, "inner");
        assert_eq!(err.to_string(), "inner at byte 104: unexpected end of data: needed 4 bytes, 2 left");
        // The outer reader moved past the sub-reader's bytes.
        assert_eq!(r.offset(), 106);
        assert_eq!(r.remaining(), 2);
    }

    #[test]
    fn forged_counts_fail_before_allocation() {
        let bytes = [0u8; 16];
        let r = Reader::new(&bytes, "t");
        assert_eq!(r.count(4, 4, "things").unwrap(), 4);
        let err = r.count(0xFFFF_FFFF, 4, "things").unwrap_err();
        assert!(matches!(err.kind, ReadErrorKind::CountTooLarge { count: 0xFFFF_FFFF, .. }));
        // Zero-sized elements still need a byte each, so a huge count of them is refused too.
        assert!(r.count(u64::MAX, 0, "things").is_err());
    }

    #[test]
    fn cstr_errors() {
        let mut r = Reader::new(b"abc", "s");
        assert!(r.cstr().unwrap_err().to_string().contains("no terminating NUL"));
        let mut r = Reader::with_base(b"a\xff\0", 10, "s");
        assert_eq!(r.cstr().unwrap_err().offset, 11);
    }

    #[test]
    fn patch_slots() {
        let mut w = Writer::new();
        let s = w.reserve_u32();
        w.bytes(b"xyz");
        let len = (w.len() - 4) as u32;
        w.patch_u32(s, len);
        assert_eq!(w.as_slice(), &[3, 0, 0, 0, b'x', b'y', b'z']);
    }
}
