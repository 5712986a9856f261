//! PAF archives (see `docs/spec/PAF.md`): the tree model, the reader, the writer and folder I/O.
//!
//! A PAF archive is a tree of [`Dir`]ectories, [`Node::File`]s and [`Node::Link`]s. Names are single
//! path components (decision A4); link targets are `/`-separated archive paths resolved from the root.
//!
//! # Reading ([`Archive::from_bytes`])
//!
//! The reader follows positions from the header and accepts everything decision A5 asks for:
//! continuations of directories, files, strings and the free space tracker, spare directory slots and
//! a free space tracker (whose chain and ranges are bounds-checked, then ignored). Every error is a
//! [`ReadError`] naming the section (`PAF header`, `PAF root directory`, `PAF directory "textures"`,
//! `PAF directory "textures", name of entry 3`, `PAF file "textures/a.ptf"`, `PAF link "x"`,
//! `PAF free space tracker`) and the absolute byte offset of the offending field. It refuses:
//!
//! * a wrong magic or a version other than 0;
//! * a position of 0 where a record is required, a position inside the 12-byte header, a position
//!   at or past the end, and any segment (header or payload) running past the end of the archive;
//! * a name whose CRC (decision A1, [`name_crc`]) does not match its bytes ("corrupt archive");
//! * names that break A4, names that are not UTF-8, duplicate names in one directory, unknown entry
//!   types, link targets that are not valid archive paths (`..`, `.`, empty components, leading `/`,
//!   `\` or NUL), and directories nested more than [`MAX_DEPTH`] levels deep;
//! * cycles: a directory segment (first or continuation) reached twice, a continuation chain that
//!   loops; a File continuation whose "previous segment" position is not the segment before it;
//! * declared totals that the segments do not hold: a directory declaring more entries than its
//!   slots, a File or String whose segments hold more or fewer bytes than declared, a free space
//!   tracker using more slots than it has.
//!
//! Resource bounds: every count is checked against the bytes that are left before anything is
//! allocated ([`Reader::count`](crate::format::bin::Reader::count)). File and String records may be
//! shared between entries (that is not a cycle), but the file data copied into the tree may not
//! exceed the archive length, nor may the string bytes (names and link paths), and the number of
//! segments and entries visited is bounded by half the archive length; so a small archive can never
//! expand into a huge tree. Links are kept as their target path and only resolved on lookup
//! ([`Archive::resolve`]) or extraction.
//!
//! Where docs/spec/PAF.md leaves room, this reader decides:
//!
//! * Only Directories and Free space trackers have spare slots. The segments of a File or String
//!   must hold exactly the declared total (no spare bytes); spare directory and tracker slots are
//!   not parsed at all.
//! * A File continuation's "previous segment" position must be the segment that points to it.
//! * Positions 1 to 11 (inside the header) are refused like position 0 where a record is required.
//! * Sharing a File or String record between entries is accepted (within the bounds above); a
//!   Directory segment reached twice is refused, even when it is not strictly a cycle (A4).
//! * Used free space tracker ranges must lie within the archive after the header; bytes that are
//!   not reachable from the header (free space, trailing bytes) are accepted and ignored.
//!
//! # Writing ([`Archive::to_bytes`])
//!
//! The writer follows decision A2: compact (every record in one segment, no spare slots, free space
//! tracker position 0) and deterministic. The exact layout is:
//!
//! 1. the 12-byte header (`PAF`, version 0, root position 12, free space tracker 0);
//! 2. the root Directory record at position 12 (total entries = slots in this segment = number of
//!    entries, continuation 0, then one 13-byte slot per entry in name-byte order);
//! 3. then directories are visited breadth-first, starting with the root (a FIFO queue). For each
//!    visited directory, for each of its entries in name-byte order, the writer appends
//!    1. the entry's name String, then
//!    2. the entry's target record, immediately after its name: the File record (size, size, 0,
//!       data), the link's target String, or the child Directory record (header and all its slots).
//!       A child directory goes to the back of the queue; its own names and targets are written when
//!       it is visited.
//!
//! So the layout is: header, root directory, the names/targets of the root's entries (including the
//! directory records of its subdirectories), then the names/targets of the entries of the first
//! subdirectory, and so on level by level. Every slot therefore points forward. The writer refuses
//! whatever the reader would refuse (invalid names or link targets, trees deeper than
//! [`MAX_DEPTH`]) and archives larger than `u32::MAX` bytes (checked before allocating).
//!
//! # Folders
//!
//! [`Archive::from_dir`] packs a folder and [`Archive::extract_to`] unpacks into one; see their docs
//! for how symlinks and links are handled.

mod archive;
mod fs_io;
mod read;
mod write;

#[cfg(test)]
mod tests;

pub use self::archive::*;
pub use self::fs_io::{ExtractReport, LINK_COPY_MAX_BYTES, LINK_COPY_MAX_ENTRIES, SkippedLink};
