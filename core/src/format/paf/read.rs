//! The PAF reader. Random access: every record is found by its position, read through a bounded
//! [`Reader`] based at that position so errors carry absolute offsets. See the module docs for the
//! checks and the resource bounds.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use super::archive::{
    Archive, Dir, ENTRY_LEN, HEADER_LEN, MAGIC, MAX_DEPTH, Node, PafError, TYPE_DIR, TYPE_FILE, TYPE_LINK, VERSION,
    join, name_crc, validate_link_target, validate_name,
};
use crate::format::bin::{ReadError, ReadErrorKind, ReadResult, Reader};

/// The four record kinds that are chains of segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChainKind {
    Dir,
    File,
    String,
    Free,
}

impl ChainKind {
    /// Size of one element of a segment's payload.
    fn elem_size(self) -> usize {
        match self {
            ChainKind::Dir => ENTRY_LEN,
            ChainKind::Free => 8,
            ChainKind::File | ChainKind::String => 1,
        }
    }

    /// What a segment's count counts (for errors).
    fn what(self) -> &'static str {
        match self {
            ChainKind::Dir => "directory entry slots",
            ChainKind::File => "file data bytes",
            ChainKind::String => "string bytes",
            ChainKind::Free => "free space slots",
        }
    }

    /// What the first segment's total counts (for errors).
    fn total_what(self) -> &'static str {
        match self {
            ChainKind::Dir => "directory entries",
            ChainKind::File => "file data bytes",
            ChainKind::String => "string bytes",
            ChainKind::Free => "used free space slots",
        }
    }

    fn record(self) -> &'static str {
        match self {
            ChainKind::Dir => "Directory",
            ChainKind::File => "File",
            ChainKind::String => "String",
            ChainKind::Free => "Free space tracker",
        }
    }

    /// Size of a continuation's header (File continuations also point back).
    fn continuation_header(self) -> u64 {
        if self == ChainKind::File { 12 } else { 8 }
    }
}

/// One segment's payload.
struct Segment<'a> {
    /// Absolute offset of the payload's first byte.
    offset: u64,
    data: &'a [u8],
}

/// A whole chain: the declared total and every segment's payload.
struct Chain<'a> {
    total: u32,
    /// Absolute offset of the total field (for errors).
    total_offset: u64,
    /// Sum of the segments' counts.
    capacity: u64,
    segments: Vec<Segment<'a>>,
}

impl Chain<'_> {
    /// The elements of all segments, in order, each with its absolute offset.
    fn elements(&self, elem_size: usize) -> impl Iterator<Item = (u64, &[u8])> + '_ {
        self.segments.iter().flat_map(move |seg| {
            seg.data.chunks_exact(elem_size).enumerate().map(move |(i, e)| (seg.offset + (i * elem_size) as u64, e))
        })
    }
}

/// A directory found but not necessarily read yet (breadth-first queue).
struct PendingDir {
    info: DirInfo,
    entries: BTreeMap<String, Pending>,
}

#[derive(Clone)]
struct DirInfo {
    pos: u32,
    path: String,
    depth: usize,
    section: Arc<str>,
    /// Offset of the field that pointed here (for position errors).
    ref_offset: u64,
}

enum Pending {
    Dir(usize),
    File(Vec<u8>),
    Link(String),
}

struct Parser<'a> {
    data: &'a [u8],
    /// Segments and entries we may still visit.
    work_left: u64,
    /// File data bytes we may still copy out.
    file_bytes_left: u64,
    /// String bytes (names, link paths) we may still copy out.
    string_bytes_left: u64,
    /// Positions of every directory segment reached so far (first segments when found, continuations
    /// when read): reaching one twice is a cycle.
    dir_positions: HashSet<u32>,
}

fn invalid(section: &Arc<str>, offset: u64, reason: impl Into<String>) -> ReadError {
    ReadError { section: section.clone(), offset, kind: ReadErrorKind::Invalid(reason.into().into()) }
}

fn dir_section(path: &str) -> Arc<str> {
    if path.is_empty() { "PAF root directory".into() } else { format!("PAF directory {path:?}").into() }
}

impl Archive {
    /// Reads an archive (see the module docs for what is accepted and refused).
    pub fn from_bytes(bytes: &[u8]) -> Result<Archive, PafError> {
        Ok(read_archive(bytes)?)
    }
}

fn read_archive(data: &[u8]) -> ReadResult<Archive> {
    let len = data.len() as u64;
    let header: Arc<str> = "PAF header".into();
    let mut r = Reader::new(data, header.clone());
    if len > u64::from(u32::MAX) {
        return Err(invalid(&header, 0, format!("archive is {len} bytes, but positions are 32-bit")));
    }
    let magic = r.array::<3>()?;
    if magic != MAGIC {
        return Err(invalid(&header, 0, format!("bad magic {:?}, expected \"PAF\"", magic.escape_ascii().to_string())));
    }
    let version = r.u8()?;
    if version != VERSION {
        return Err(invalid(&header, 3, format!("unsupported PAF version {version} (only {VERSION} is supported)")));
    }
    let root_offset = r.offset();
    let root = r.u32()?;
    let free_offset = r.offset();
    let free = r.u32()?;

    let mut p = Parser {
        data,
        work_left: len / 2 + 64,
        file_bytes_left: len,
        string_bytes_left: len,
        dir_positions: HashSet::new(),
    };
    if free != 0 {
        p.read_free_tracker(free, free_offset)?;
    }
    p.check_pos(root, &header, root_offset, "root Directory")?;
    p.dir_positions.insert(root);
    let mut dirs = vec![PendingDir {
        info: DirInfo { pos: root, path: String::new(), depth: 0, section: dir_section(""), ref_offset: root_offset },
        entries: BTreeMap::new(),
    }];
    // Breadth-first; `dirs` grows while we go.
    let mut i = 0;
    while i < dirs.len() {
        let info = dirs[i].info.clone();
        let entries = p.read_dir(&info, &mut dirs)?;
        dirs[i].entries = entries;
        i += 1;
    }

    // Assemble bottom-up: a directory's children were found after it, so they have larger indices
    // and are complete when it is built. (Iterative, so deep trees cannot overflow the stack here.)
    let mut built: Vec<Option<Dir>> = (0..dirs.len()).map(|_| None).collect();
    for (i, pending) in dirs.into_iter().enumerate().rev() {
        let entries = pending
            .entries
            .into_iter()
            .map(|(name, p)| {
                let node = match p {
                    Pending::Dir(j) => Node::Dir(built.get_mut(j).and_then(Option::take).unwrap_or_default()),
                    Pending::File(data) => Node::File(data),
                    Pending::Link(target) => Node::Link(target),
                };
                (name, node)
            })
            .collect();
        built[i] = Some(Dir { entries });
    }
    let root = built.first_mut().and_then(Option::take).unwrap_or_default();
    Ok(Archive { root })
}

impl<'a> Parser<'a> {
    fn len(&self) -> u64 {
        self.data.len() as u64
    }

    fn spend(&mut self, n: u64, section: &Arc<str>, offset: u64) -> ReadResult<()> {
        if n > self.work_left {
            return Err(invalid(
                section,
                offset,
                "the archive has too many segments and entries for its size (records chained or shared pathologically)",
            ));
        }
        self.work_left -= n;
        Ok(())
    }

    /// Checks that `pos` can hold a record: not 0, not in the header, inside the archive.
    /// `ref_offset` is the offset of the field holding `pos`.
    fn check_pos(&self, pos: u32, section: &Arc<str>, ref_offset: u64, what: &str) -> ReadResult<()> {
        if pos == 0 {
            Err(invalid(section, ref_offset, format!("{what} position is 0 (none)")))
        } else if pos < HEADER_LEN {
            Err(invalid(section, ref_offset, format!("{what} position {pos} points into the archive header")))
        } else if u64::from(pos) >= self.len() {
            Err(invalid(
                section,
                ref_offset,
                format!("{what} position {pos} is past the end of the archive ({} bytes)", self.len()),
            ))
        } else {
            Ok(())
        }
    }

    /// A reader at the segment at `pos`, whose fixed header has `header_len` bytes.
    fn segment(
        &mut self,
        pos: u32,
        header_len: u64,
        section: &Arc<str>,
        ref_offset: u64,
        what: &str,
    ) -> ReadResult<Reader<'a>> {
        self.check_pos(pos, section, ref_offset, what)?;
        if u64::from(pos) + header_len > self.len() {
            return Err(invalid(
                section,
                u64::from(pos),
                format!("{what} header at position {pos} runs past the end of the archive ({} bytes)", self.len()),
            ));
        }
        self.spend(1, section, u64::from(pos))?;
        let data = self.data.get(pos as usize..).unwrap_or_default();
        Ok(Reader::with_base(data, u64::from(pos), section.clone()))
    }

    /// Reads every segment of the chain starting at `first`.
    fn read_chain(
        &mut self,
        first: u32,
        kind: ChainKind,
        section: &Arc<str>,
        ref_offset: u64,
    ) -> ReadResult<Chain<'a>> {
        let elem = kind.elem_size();
        let mut r = self.segment(first, 12, section, ref_offset, kind.record())?;
        let total_offset = r.offset();
        let total = r.u32()?;
        // A quick bound before walking anything: the total must fit in the whole archive.
        if u64::from(total) * elem as u64 > self.len() {
            return Err(r.error_at(
                total_offset,
                ReadErrorKind::CountTooLarge {
                    what: kind.total_what(),
                    count: total.into(),
                    min_size: elem as u64,
                    available: self.len(),
                },
            ));
        }
        let mut count_offset = r.offset();
        let mut count = r.u32()?;
        let mut next_offset = r.offset();
        let mut next = r.u32()?;
        let mut seen = HashSet::from([first]);
        let mut prev = first;
        let mut segments = Vec::new();
        let mut capacity = 0u64;
        loop {
            // The payload must lie inside the archive: checked before it is sliced.
            // (Reported at the count field.)
            let n = r.count(count.into(), elem, kind.what()).map_err(|e| ReadError { offset: count_offset, ..e })?;
            let offset = r.offset();
            let data = r.bytes(n * elem)?;
            segments.push(Segment { offset, data });
            capacity += u64::from(count);
            if next == 0 {
                break;
            }
            if !seen.insert(next) {
                return Err(invalid(
                    section,
                    next_offset,
                    format!("continuation chain loops back to position {next} (cycle)"),
                ));
            }
            if kind == ChainKind::Dir && !self.dir_positions.insert(next) {
                return Err(invalid(
                    section,
                    next_offset,
                    format!(
                        "directory cycle: continuation position {next} is a directory segment that was already reached"
                    ),
                ));
            }
            r = self.segment(next, kind.continuation_header(), section, next_offset, "continuation")?;
            count_offset = r.offset();
            count = r.u32()?;
            next_offset = r.offset();
            let new_next = r.u32()?;
            if kind == ChainKind::File {
                let back_offset = r.offset();
                let back = r.u32()?;
                if back != prev {
                    return Err(invalid(
                        section,
                        back_offset,
                        format!(
                            "continuation's previous-segment position is {back}, but it follows the segment at {prev}"
                        ),
                    ));
                }
            }
            prev = next;
            next = new_next;
        }
        Ok(Chain { total, total_offset, capacity, segments })
    }

    /// Reads a File or String record whose segments must hold exactly the declared total.
    fn read_bytes(&mut self, pos: u32, kind: ChainKind, section: &Arc<str>, ref_offset: u64) -> ReadResult<Vec<u8>> {
        let chain = self.read_chain(pos, kind, section, ref_offset)?;
        if chain.capacity != u64::from(chain.total) {
            return Err(invalid(
                section,
                chain.total_offset,
                format!("{} declares {} bytes, but its segments hold {}", kind.record(), chain.total, chain.capacity),
            ));
        }
        let total = u64::from(chain.total);
        let left = if kind == ChainKind::File { &mut self.file_bytes_left } else { &mut self.string_bytes_left };
        if total > *left {
            return Err(invalid(
                section,
                chain.total_offset,
                format!(
                    "the {} read so far exceed the archive size (records shared too often)",
                    if kind == ChainKind::File { "file data bytes" } else { "string bytes" }
                ),
            ));
        }
        *left -= total;
        let mut out = Vec::with_capacity(total as usize);
        for seg in &chain.segments {
            out.extend_from_slice(seg.data);
        }
        Ok(out)
    }

    fn read_free_tracker(&mut self, pos: u32, ref_offset: u64) -> ReadResult<()> {
        let section: Arc<str> = "PAF free space tracker".into();
        let chain = self.read_chain(pos, ChainKind::Free, &section, ref_offset)?;
        if u64::from(chain.total) > chain.capacity {
            return Err(invalid(
                &section,
                chain.total_offset,
                format!("{} slots used, but the tracker has only {} slots", chain.total, chain.capacity),
            ));
        }
        self.spend(chain.total.into(), &section, chain.total_offset)?;
        let len = self.len();
        for (offset, slot) in chain.elements(8).take(chain.total as usize) {
            let mut sr = Reader::with_base(slot, offset, section.clone());
            let start = sr.u32()?;
            let size = sr.u32()?;
            if start < HEADER_LEN || u64::from(start) + u64::from(size) > len {
                return Err(invalid(
                    &section,
                    offset,
                    format!(
                        "free range at {start} of {size} bytes is not inside the archive ({len} bytes after the header)"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Reads the directory `d` and returns its entries; subdirectories are appended to `queue`.
    fn read_dir(&mut self, d: &DirInfo, queue: &mut Vec<PendingDir>) -> ReadResult<BTreeMap<String, Pending>> {
        let section = &d.section;
        let chain = self.read_chain(d.pos, ChainKind::Dir, section, d.ref_offset)?;
        if u64::from(chain.total) > chain.capacity {
            return Err(invalid(
                section,
                chain.total_offset,
                format!(
                    "directory declares {} entries, but its segments have only {} slots",
                    chain.total, chain.capacity
                ),
            ));
        }
        self.spend(chain.total.into(), section, chain.total_offset)?;
        let mut entries = BTreeMap::new();
        // The first `total` slots are used; the rest are spare and ignored.
        for (i, (slot_offset, slot)) in chain.elements(ENTRY_LEN).take(chain.total as usize).enumerate() {
            let mut sr = Reader::with_base(slot, slot_offset, section.clone());
            let ty = sr.u8()?;
            let name_offset = sr.offset();
            let name_pos = sr.u32()?;
            let crc_offset = sr.offset();
            let stored_crc = sr.u32()?;
            let target_offset = sr.offset();
            let target = sr.u32()?;
            if !matches!(ty, TYPE_DIR | TYPE_FILE | TYPE_LINK) {
                return Err(invalid(
                    section,
                    slot_offset,
                    format!("entry {i} has unknown type {ty} (expected 0 directory, 1 file or 2 link)"),
                ));
            }

            let name_section: Arc<str> = format!("{section}, name of entry {i}").into();
            let name_bytes = self.read_bytes(name_pos, ChainKind::String, &name_section, name_offset)?;
            let actual_crc = name_crc(&name_bytes);
            if actual_crc != stored_crc {
                return Err(invalid(
                    section,
                    crc_offset,
                    format!(
                        "name CRC mismatch (corrupt archive): entry {i} stores 0x{stored_crc:08X}, but its name {:?} gives 0x{actual_crc:08X}",
                        String::from_utf8_lossy(&name_bytes)
                    ),
                ));
            }
            let name = String::from_utf8(name_bytes)
                .map_err(|_| invalid(&name_section, u64::from(name_pos), "name is not valid UTF-8"))?;
            if let Err(reason) = validate_name(&name) {
                return Err(invalid(&name_section, u64::from(name_pos), format!("invalid name {name:?}: {reason}")));
            }
            if entries.contains_key(&name) {
                return Err(invalid(section, name_offset, format!("duplicate name {name:?} (entry {i})")));
            }
            let path = join(&d.path, &name);
            if d.depth + 1 > MAX_DEPTH {
                return Err(invalid(
                    section,
                    slot_offset,
                    format!("{path:?} is nested more than {MAX_DEPTH} levels deep"),
                ));
            }
            let pending = match ty {
                TYPE_DIR => {
                    let child_section = dir_section(&path);
                    self.check_pos(target, section, target_offset, "Directory")?;
                    if !self.dir_positions.insert(target) {
                        return Err(invalid(
                            section,
                            target_offset,
                            format!(
                                "directory cycle: entry {name:?} points at position {target}, a directory segment that was already reached"
                            ),
                        ));
                    }
                    queue.push(PendingDir {
                        info: DirInfo {
                            pos: target,
                            path,
                            depth: d.depth + 1,
                            section: child_section,
                            ref_offset: target_offset,
                        },
                        entries: BTreeMap::new(),
                    });
                    Pending::Dir(queue.len() - 1)
                }
                TYPE_FILE => {
                    let file_section: Arc<str> = format!("PAF file {path:?}").into();
                    Pending::File(self.read_bytes(target, ChainKind::File, &file_section, target_offset)?)
                }
                _ => {
                    // TYPE_LINK (the type was checked above).
                    let link_section: Arc<str> = format!("PAF link {path:?}").into();
                    let bytes = self.read_bytes(target, ChainKind::String, &link_section, target_offset)?;
                    let link = String::from_utf8(bytes)
                        .map_err(|_| invalid(&link_section, u64::from(target), "link target is not valid UTF-8"))?;
                    if let Err(reason) = validate_link_target(&link) {
                        return Err(invalid(
                            &link_section,
                            u64::from(target),
                            format!("invalid link target {link:?}: {reason}"),
                        ));
                    }
                    Pending::Link(link)
                }
            };
            entries.insert(name, pending);
        }
        Ok(entries)
    }
}
