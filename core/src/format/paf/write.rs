//! The compact, deterministic writer (decision A2); the layout is described in the module docs.

use std::collections::VecDeque;

use super::archive::{
    Archive, Dir, ENTRY_LEN, HEADER_LEN, MAGIC, Node, PafError, TYPE_DIR, TYPE_FILE, TYPE_LINK, VERSION,
};
use crate::format::bin::{Slot, Writer};

/// Size of the first-segment header of a Directory, File or String.
const RECORD_HEADER: u64 = 12;

/// The exact size [`encode_unchecked`] will produce.
pub(super) fn encoded_len(archive: &Archive) -> u64 {
    let mut len = u64::from(HEADER_LEN) + dir_record_len(&archive.root);
    let mut stack = vec![&archive.root];
    while let Some(dir) = stack.pop() {
        for (name, node) in &dir.entries {
            // The name String, then the target record.
            len += RECORD_HEADER + name.len() as u64;
            len += match node {
                Node::Dir(child) => {
                    stack.push(child);
                    dir_record_len(child)
                }
                Node::File(data) => RECORD_HEADER + data.len() as u64,
                Node::Link(target) => RECORD_HEADER + target.len() as u64,
            };
        }
    }
    len
}

fn dir_record_len(dir: &Dir) -> u64 {
    RECORD_HEADER + (ENTRY_LEN * dir.entries.len()) as u64
}

impl Archive {
    /// Writes the archive in the compact, deterministic layout described in the module docs.
    pub fn to_bytes(&self) -> Result<Vec<u8>, PafError> {
        self.validate()?;
        encode_unchecked(self)
    }
}

/// Encodes without validating names or link targets (the tests use this to build hostile archives);
/// only the size limit is checked, before anything is allocated.
pub(super) fn encode_unchecked(archive: &Archive) -> Result<Vec<u8>, PafError> {
    let size = encoded_len(archive);
    check_size(size)?;
    let mut w = Writer::with_capacity(size as usize);
    w.bytes(&MAGIC);
    w.u8(VERSION);
    let root_slot = w.reserve_u32();
    w.u32(0); // no free space tracker
    patch_here(&mut w, root_slot);
    let slots = write_dir_record(&mut w, &archive.root);
    let mut queue: VecDeque<(&Dir, Vec<(Slot, Slot)>)> = VecDeque::from([(&archive.root, slots)]);
    while let Some((dir, slots)) = queue.pop_front() {
        for ((name, node), (name_slot, target_slot)) in dir.entries.iter().zip(slots) {
            patch_here(&mut w, name_slot);
            write_string(&mut w, name.as_bytes());
            patch_here(&mut w, target_slot);
            match node {
                Node::Dir(child) => {
                    let child_slots = write_dir_record(&mut w, child);
                    queue.push_back((child, child_slots));
                }
                Node::File(data) => write_string(&mut w, data),
                Node::Link(target) => write_string(&mut w, target.as_bytes()),
            }
        }
    }
    debug_assert_eq!(w.len() as u64, size);
    Ok(w.into_inner())
}

/// Every position must fit in a `u32`, so the whole archive must too.
pub(super) fn check_size(size: u64) -> Result<(), PafError> {
    if size > u64::from(u32::MAX) { Err(PafError::TooLarge { size }) } else { Ok(()) }
}

/// Points `slot` at the current end of the output (which fits in `u32`: the size was checked).
fn patch_here(w: &mut Writer, slot: Slot) {
    let pos = w.len() as u32;
    w.patch_u32(slot, pos);
}

/// A single-segment Directory record; returns the (name, target) position slots of its entries.
fn write_dir_record(w: &mut Writer, dir: &Dir) -> Vec<(Slot, Slot)> {
    let n = dir.entries.len() as u32;
    w.u32(n); // total entries
    w.u32(n); // slots in this segment
    w.u32(0); // no continuation
    dir.entries
        .iter()
        .map(|(name, node)| {
            w.u8(match node {
                Node::Dir(_) => TYPE_DIR,
                Node::File(_) => TYPE_FILE,
                Node::Link(_) => TYPE_LINK,
            });
            let name_slot = w.reserve_u32();
            w.u32(super::name_crc(name.as_bytes()));
            let target_slot = w.reserve_u32();
            (name_slot, target_slot)
        })
        .collect()
}

/// A single-segment File or String record (they share the layout: total, in this segment, next).
fn write_string(w: &mut Writer, bytes: &[u8]) {
    let n = bytes.len() as u32;
    w.u32(n);
    w.u32(n);
    w.u32(0);
    w.bytes(bytes);
}
