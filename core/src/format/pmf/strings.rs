//! PMF string tables (docs/spec/PMF-NOTES.md S1–S3).
//!
//! A table is NUL-terminated UTF-8 strings back to back; a `String` field is a `u32` offset to the
//! first byte of one of them. [`StringTable`] validates offsets on read (S2); [`StringTableBuilder`]
//! puts `""` at offset 0 of every non-empty table and deduplicates in order of first use (S1).

use std::collections::HashMap;

use crate::format::bin::{ReadResult, Reader, Writer};

/// A string table read from a file.
#[derive(Debug, Clone, Default)]
pub struct StringTable<'a> {
    bytes: &'a [u8],
    /// Absolute offset of the table's first byte, for error messages.
    base: u64,
}

impl<'a> StringTable<'a> {
    /// Reads `u32 size` + `size` bytes of table.
    pub fn read(r: &mut Reader<'a>) -> ReadResult<Self> {
        let size = r.u32()? as usize;
        let base = r.offset();
        let bytes = r.bytes(size)?;
        if let Some(&last) = bytes.last()
            && last != 0
        {
            return Err(r.invalid_at(base + size as u64 - 1, "string table does not end with a NUL"));
        }
        Ok(Self { bytes, base })
    }

    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Resolves the string at `offset`; `r` is used for the error location (the field's offset).
    pub fn get(&self, offset: u32, r: &Reader<'_>, field_offset: u64) -> ReadResult<&'a str> {
        let off = offset as usize;
        if off >= self.bytes.len() {
            return Err(r.invalid_at(
                field_offset,
                format!("string offset {offset} is outside the string table ({} bytes)", self.bytes.len()),
            ));
        }
        if off > 0 && self.bytes[off - 1] != 0 {
            return Err(r.invalid_at(field_offset, format!("string offset {offset} is not at the start of a string")));
        }
        let rest = &self.bytes[off..];
        // The table ends with a NUL (checked in `read`), so this always finds one.
        let len = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        std::str::from_utf8(&rest[..len]).map_err(|_| {
            r.invalid_at(field_offset, format!("string at table byte {} is not valid UTF-8", self.base + off as u64))
        })
    }

    /// Reads a `u32` string offset from `r` and resolves it.
    pub fn read_str(&self, r: &mut Reader<'_>) -> ReadResult<String> {
        let at = r.offset();
        let off = r.u32()?;
        self.get(off, r, at).map(str::to_owned)
    }

    /// A copy that outlives the bytes it was read from.
    pub fn to_owned_table(&self) -> OwnedStringTable {
        OwnedStringTable { bytes: self.bytes.to_vec(), base: self.base }
    }
}

/// A [`StringTable`] copied out of the block it was read from, so that the block can be dropped
/// while the table still serves another block (a chunk's client block uses the common block's).
#[derive(Debug, Clone, Default)]
pub struct OwnedStringTable {
    bytes: Vec<u8>,
    base: u64,
}

impl OwnedStringTable {
    /// The table, borrowed.
    pub fn borrow(&self) -> StringTable<'_> {
        StringTable { bytes: &self.bytes, base: self.base }
    }
}

/// Builds a string table while a section is written.
#[derive(Debug, Default, Clone)]
pub struct StringTableBuilder {
    bytes: Vec<u8>,
    index: HashMap<String, u32>,
}

impl StringTableBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// The offset of `s`, adding it on first use. The first string added to a table is always `""`
    /// at offset 0, so even a table whose first use is `"abc"` starts with a NUL.
    ///
    /// Strings must not contain NUL; the PMF writer validates that before it gets here.
    pub fn intern(&mut self, s: &str) -> u32 {
        if self.bytes.is_empty() {
            self.bytes.push(0);
            self.index.insert(String::new(), 0);
        }
        if let Some(&off) = self.index.get(s) {
            return off;
        }
        let off = self.bytes.len() as u32;
        self.bytes.extend_from_slice(s.as_bytes());
        self.bytes.push(0);
        self.index.insert(s.to_owned(), off);
        off
    }

    /// Writes a `u32` string offset for `s`.
    pub fn write_str(&mut self, w: &mut Writer, s: &str) {
        let off = self.intern(s);
        w.u32(off);
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Writes `u32 size` + the table.
    pub fn write_table(&self, w: &mut Writer) {
        w.u32(self.bytes.len() as u32);
        w.bytes(&self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_dedups_and_starts_with_empty() {
        let mut b = StringTableBuilder::new();
        assert_eq!(b.intern("stone"), 1);
        assert_eq!(b.intern(""), 0);
        assert_eq!(b.intern("dirt"), 7);
        assert_eq!(b.intern("stone"), 1);
        assert_eq!(b.bytes(), b"\0stone\0dirt\0");
    }

    #[test]
    fn offsets_are_validated() {
        let mut w = Writer::new();
        let mut b = StringTableBuilder::new();
        b.intern("ab");
        b.write_table(&mut w);
        let bytes = w.into_inner();
        let mut r = Reader::new(&bytes, "t");
        let t = StringTable::read(&mut r).unwrap();
        assert_eq!(t.get(1, &r, 0).unwrap(), "ab");
        assert_eq!(t.get(0, &r, 0).unwrap(), "");
        assert!(t.get(2, &r, 0).unwrap_err().to_string().contains("not at the start"));
        assert!(t.get(4, &r, 0).unwrap_err().to_string().contains("outside"));
    }

    #[test]
    fn table_must_end_with_nul() {
        let bytes = [2, 0, 0, 0, b'a', b'b'];
        let mut r = Reader::new(&bytes, "t");
        assert!(StringTable::read(&mut r).is_err());
    }
}
