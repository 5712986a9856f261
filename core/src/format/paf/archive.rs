//! The archive model ([`Archive`], [`Dir`], [`Node`]), the PAF constants and name rules, and
//! [`PafError`]. Reading, writing and folders are in `read.rs`, `write.rs` and `fs_io.rs`.

use crate::format::bin::ReadError;
use std::collections::BTreeMap;
use std::collections::btree_map;
use std::fmt;
use std::path::PathBuf;

/// The magic bytes at the start of every archive.
pub const MAGIC: [u8; 3] = *b"PAF";
/// The only major version this module reads and writes.
pub const VERSION: u8 = 0;
/// Size of the header; no record can start before this position.
pub const HEADER_LEN: u32 = 12;
/// Deepest nesting accepted anywhere (reader, writer, folder I/O): an entry's path may have at most
/// this many components. Keeps every recursive operation on the tree (drop, clone, compare) shallow.
pub const MAX_DEPTH: usize = 256;
/// Most link expansions allowed while resolving one path.
pub const MAX_LINK_HOPS: usize = 64;

/// Size of one directory entry slot.
pub(super) const ENTRY_LEN: usize = 13;
/// Entry type bytes.
pub(super) const TYPE_DIR: u8 = 0;
pub(super) const TYPE_FILE: u8 = 1;
pub(super) const TYPE_LINK: u8 = 2;

/// The name CRC of decision A1: reflected polynomial 0xEDB88320 (0x04C11DB7 unreflected), initial
/// value 0, no final XOR. Not the zlib CRC-32 (which starts at and XORs with 0xFFFFFFFF).
const NAME_CRC_ALGORITHM: crc::Algorithm<u32> = crc::Algorithm {
    width: 32,
    poly: 0x04C1_1DB7,
    init: 0,
    refin: true,
    refout: true,
    xorout: 0,
    check: 0x2DFD_2D88,
    residue: 0,
};
static NAME_CRC: crc::Crc<u32> = crc::Crc::<u32>::new(&NAME_CRC_ALGORITHM);

/// The CRC-32 stored next to every name (decision A1): PlatinumSrc's `crc32`, i.e. the reflected
/// polynomial 0xEDB88320 with initial value 0 and no final XOR.
pub fn name_crc(bytes: &[u8]) -> u32 {
    NAME_CRC.checksum(bytes)
}

/// Errors from reading, writing, editing, packing and extracting archives.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PafError {
    /// The archive bytes are malformed; the message is `SECTION at byte N: REASON`.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A name breaks decision A4 (writer, editing, extraction).
    #[error("invalid name {name:?} at {path:?}: {reason}")]
    InvalidName { path: String, name: String, reason: NameError },
    /// An archive path given to an editing or lookup function is not valid.
    #[error("invalid archive path {path:?}: {reason}")]
    InvalidPath { path: String, reason: PathError },
    /// A link's target is not a valid archive path (decision A4).
    #[error("link {path:?} has an invalid target {target:?}: {reason}")]
    InvalidLinkTarget { path: String, target: String, reason: PathError },
    /// An entry is nested deeper than [`MAX_DEPTH`].
    #[error("{path:?} is nested more than {max} levels deep", max = MAX_DEPTH)]
    TooDeep { path: String },
    /// The encoded archive would not fit in 32-bit positions.
    #[error("the archive would be {size} bytes, but a PAF archive can be at most {max} bytes", max = u32::MAX)]
    TooLarge { size: u64 },
    /// Editing: a path component that must be a directory is something else, or vice versa.
    #[error("{path:?}: {reason}")]
    PathConflict { path: String, reason: String },
    /// Lookup: nothing at this path.
    #[error("no entry at {path:?}")]
    NotFound { path: String },
    /// Lookup: a path goes through a file.
    #[error("{path:?} is a file, not a directory")]
    NotADirectory { path: String },
    /// A link leads back to itself, or extracting it would copy a directory into itself.
    #[error("link cycle at {path:?}: the link leads back to itself or into its own directory")]
    LinkCycle { path: String },
    /// Resolving a path needs more than [`MAX_LINK_HOPS`] link expansions.
    #[error("resolving {path:?} follows more than {max} links", max = MAX_LINK_HOPS)]
    TooManyLinks { path: String },
    /// Materialising links during extraction would write too much.
    #[error("extraction refused: links expand to more than {limit}")]
    LinkExpansionTooLarge { limit: String },
    /// An I/O error on a path.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Extraction refused to write somewhere unsafe (outside the folder, through a symlink).
    #[error("refusing to write {}: {reason}", path.display())]
    UnsafePath { path: PathBuf, reason: String },
    /// Packing: a file name that cannot be stored (not UTF-8, or breaking A4).
    #[error("cannot pack {}: {reason}", path.display())]
    UnsupportedName { path: PathBuf, reason: String },
    /// Packing: a symlink that cannot become a PAF link (points outside the folder, dangling, ...).
    #[error("cannot pack symlink {}: {reason}", path.display())]
    BadSymlink { path: PathBuf, reason: String },
    /// Packing: something that is not a regular file, folder or symlink.
    #[error("cannot pack {}: not a regular file, folder or symlink", path.display())]
    UnsupportedFileType { path: PathBuf },
}

/// One node of the archive tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Dir(Dir),
    File(Vec<u8>),
    /// A link; the target is an archive path with `/` separators, from the root. It is kept as
    /// written and resolved only on lookup ([`Archive::resolve`]) or extraction.
    Link(String),
}

/// The kind of a [`Node`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    Dir,
    File,
    Link,
}

impl fmt::Display for NodeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NodeKind::Dir => "dir",
            NodeKind::File => "file",
            NodeKind::Link => "link",
        })
    }
}

impl Node {
    pub fn kind(&self) -> NodeKind {
        match self {
            Node::Dir(_) => NodeKind::Dir,
            Node::File(_) => NodeKind::File,
            Node::Link(_) => NodeKind::Link,
        }
    }
}

/// A directory: entries sorted by name bytes (`String`'s `Ord` is byte order).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Dir {
    pub entries: BTreeMap<String, Node>,
}

/// A whole archive.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Archive {
    pub root: Dir,
}

/// What a path resolves to once links are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolved<'a> {
    Dir(&'a Dir),
    File(&'a [u8]),
}

/// One line of [`Archive::listing`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListEntry {
    /// Archive path, `/`-separated, no leading `/`.
    pub path: String,
    pub kind: NodeKind,
    /// File size in bytes; 0 for directories and links.
    pub size: u64,
    /// The target path of a link.
    pub link_target: Option<String>,
}

/// Why a name breaks decision A4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("names may not be empty")]
    Empty,
    #[error("\".\" is not allowed as a name")]
    Dot,
    #[error("\"..\" is not allowed as a name (it would leave its directory)")]
    DotDot,
    #[error("names may not contain '/'")]
    Slash,
    #[error("names may not contain '\\'")]
    Backslash,
    #[error("names may not contain NUL")]
    Nul,
}

/// Why an archive path or a link target breaks decision A4.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the path is empty")]
    Empty,
    #[error("archive paths are relative to the archive root and may not start with '/'")]
    Absolute,
    #[error("component \"..\" is not allowed (paths may not leave the archive root)")]
    LeavesRoot,
    #[error("component {component:?}: {reason}")]
    Component { component: String, reason: NameError },
    #[error("more than {MAX_DEPTH} components")]
    TooDeep,
}

/// Checks one name against decision A4.
pub fn validate_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        Err(NameError::Empty)
    } else if name == "." {
        Err(NameError::Dot)
    } else if name == ".." {
        Err(NameError::DotDot)
    } else if name.contains('/') {
        Err(NameError::Slash)
    } else if name.contains('\\') {
        Err(NameError::Backslash)
    } else if name.contains('\0') {
        Err(NameError::Nul)
    } else {
        Ok(())
    }
}

/// Splits an archive path (`a/b/c`, no leading or trailing `/`) into validated components.
fn split_path(path: &str) -> Result<Vec<&str>, PathError> {
    if path.is_empty() {
        return Err(PathError::Empty);
    }
    if path.starts_with('/') {
        return Err(PathError::Absolute);
    }
    let comps: Vec<&str> = path.split('/').collect();
    for comp in &comps {
        if *comp == ".." {
            return Err(PathError::LeavesRoot);
        }
        validate_name(comp).map_err(|reason| PathError::Component { component: (*comp).to_owned(), reason })?;
    }
    if comps.len() > MAX_DEPTH {
        return Err(PathError::TooDeep);
    }
    Ok(comps)
}

/// Checks an archive path (`a/b/c`) against decision A4: what [`Archive::insert_file`] accepts.
pub fn validate_path(path: &str) -> Result<(), PathError> {
    split_path(path).map(|_| ())
}

/// Checks a link target against decision A4: a `/`-separated archive path from the root, every
/// component a valid name (so no `..`, `.`, empty components, leading `/`, `\` or NUL).
pub fn validate_link_target(target: &str) -> Result<(), PathError> {
    split_path(target).map(|_| ())
}

/// `prefix/name`, or `name` at the root.
pub(super) fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() { name.to_owned() } else { format!("{prefix}/{name}") }
}

impl Archive {
    /// An empty archive.
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks every name, link target and the nesting depth: everything the reader would refuse.
    pub fn validate(&self) -> Result<(), PafError> {
        let mut stack: Vec<(&Dir, String, usize)> = vec![(&self.root, String::new(), 0)];
        while let Some((dir, prefix, depth)) = stack.pop() {
            for (name, node) in &dir.entries {
                let path = join(&prefix, name);
                validate_name(name).map_err(|reason| PafError::InvalidName {
                    path: path.clone(),
                    name: name.clone(),
                    reason,
                })?;
                if depth + 1 > MAX_DEPTH {
                    return Err(PafError::TooDeep { path });
                }
                match node {
                    Node::Dir(d) => stack.push((d, path, depth + 1)),
                    Node::Link(target) => validate_link_target(target)
                        .map_err(|reason| PafError::InvalidLinkTarget { path, target: target.clone(), reason })?,
                    Node::File(_) => {}
                }
            }
        }
        Ok(())
    }

    /// Creates the directory at `path` and any missing parents (like `mkdir -p`).
    pub fn create_dir_all(&mut self, path: &str) -> Result<&mut Dir, PafError> {
        let comps = split_path(path).map_err(|reason| PafError::InvalidPath { path: path.to_owned(), reason })?;
        Self::dirs_for(&mut self.root, &comps)
    }

    /// Walks `comps` from `dir`, creating missing directories.
    fn dirs_for<'d>(mut dir: &'d mut Dir, comps: &[&str]) -> Result<&'d mut Dir, PafError> {
        let mut prefix = String::new();
        for comp in comps {
            prefix = join(&prefix, comp);
            let node = dir.entries.entry((*comp).to_owned()).or_insert_with(|| Node::Dir(Dir::default()));
            match node {
                Node::Dir(d) => dir = d,
                other => {
                    return Err(PafError::PathConflict {
                        path: prefix,
                        reason: format!("is a {}, not a directory", other.kind()),
                    });
                }
            }
        }
        Ok(dir)
    }

    /// Inserts `node` at `path`, creating parent directories. An existing file or link there is
    /// replaced; an existing directory is an error (so nothing is silently dropped).
    fn insert_node(&mut self, path: &str, node: Node) -> Result<(), PafError> {
        let comps = split_path(path).map_err(|reason| PafError::InvalidPath { path: path.to_owned(), reason })?;
        let Some((last, parents)) = comps.split_last() else {
            return Err(PafError::InvalidPath { path: path.to_owned(), reason: PathError::Empty });
        };
        let parent = Self::dirs_for(&mut self.root, parents)?;
        if let Some(Node::Dir(_)) = parent.entries.get(*last) {
            return Err(PafError::PathConflict { path: path.to_owned(), reason: "is a directory".to_owned() });
        }
        parent.entries.insert((*last).to_owned(), node);
        Ok(())
    }

    /// Inserts a file at `path` (`a/b/c.txt`), creating intermediate directories. Replaces an
    /// existing file or link; refuses to replace a directory.
    pub fn insert_file(&mut self, path: &str, data: impl Into<Vec<u8>>) -> Result<(), PafError> {
        self.insert_node(path, Node::File(data.into()))
    }

    /// Inserts a link at `path` pointing at the archive path `target` (checked syntactically only;
    /// it may dangle). Replaces an existing file or link; refuses to replace a directory.
    pub fn insert_link(&mut self, path: &str, target: &str) -> Result<(), PafError> {
        validate_link_target(target).map_err(|reason| PafError::InvalidLinkTarget {
            path: path.to_owned(),
            target: target.to_owned(),
            reason,
        })?;
        self.insert_node(path, Node::Link(target.to_owned()))
    }

    /// The node at `path`, without following links (a link is returned as [`Node::Link`]).
    /// `None` if there is nothing there, if the path is invalid, or for the root (`""`).
    pub fn get(&self, path: &str) -> Option<&Node> {
        let comps = split_path(path).ok()?;
        let (last, parents) = comps.split_last()?;
        let mut dir = &self.root;
        for comp in parents {
            match dir.entries.get(*comp)? {
                Node::Dir(d) => dir = d,
                _ => return None,
            }
        }
        dir.entries.get(*last)
    }

    /// Resolves `path`, following links anywhere along it (each link target is resolved from the
    /// root). `""` is the root. Refuses link cycles and more than [`MAX_LINK_HOPS`] expansions.
    pub fn resolve(&self, path: &str) -> Result<Resolved<'_>, PafError> {
        if path.is_empty() {
            return Ok(Resolved::Dir(&self.root));
        }
        let comps = split_path(path).map_err(|reason| PafError::InvalidPath { path: path.to_owned(), reason })?;
        self.resolve_comps(&comps, &mut LinkState::default())
    }

    /// Resolves the target of the link at `link_path` (for extraction): like [`Archive::resolve`]
    /// with the link itself already "in progress", so a link reaching itself is a cycle.
    pub(super) fn resolve_link(&self, link_path: &str, target: &str) -> Result<Resolved<'_>, PafError> {
        let comps = split_path(target).map_err(|reason| PafError::InvalidLinkTarget {
            path: link_path.to_owned(),
            target: target.to_owned(),
            reason,
        })?;
        let mut state = LinkState { in_progress: vec![link_path.to_owned()], hops: 1 };
        self.resolve_comps(&comps, &mut state)
    }

    fn resolve_comps<'a>(&'a self, comps: &[&str], state: &mut LinkState) -> Result<Resolved<'a>, PafError> {
        let mut cur = Resolved::Dir(&self.root);
        let mut path = String::new();
        for comp in comps {
            let Resolved::Dir(dir) = cur else {
                return Err(PafError::NotADirectory { path });
            };
            path = join(&path, comp);
            cur = match dir.entries.get(*comp) {
                None => return Err(PafError::NotFound { path }),
                Some(Node::Dir(d)) => Resolved::Dir(d),
                Some(Node::File(data)) => Resolved::File(data),
                Some(Node::Link(target)) => {
                    // A link is resolved fully (from the root) before the rest of the path, so a
                    // link being expanded again while its own expansion is in progress is a cycle.
                    if state.in_progress.contains(&path) {
                        return Err(PafError::LinkCycle { path });
                    }
                    state.hops += 1;
                    if state.hops > MAX_LINK_HOPS {
                        return Err(PafError::TooManyLinks { path });
                    }
                    let target_comps = split_path(target).map_err(|reason| PafError::InvalidLinkTarget {
                        path: path.clone(),
                        target: target.clone(),
                        reason,
                    })?;
                    state.in_progress.push(path.clone());
                    let resolved = self.resolve_comps(&target_comps, state)?;
                    state.in_progress.pop();
                    resolved
                }
            };
        }
        Ok(cur)
    }

    /// Every node with its archive path, depth-first (a directory before its contents), entries in
    /// name-byte order. Links are not followed.
    pub fn walk(&self) -> Walk<'_> {
        Walk { stack: vec![(String::new(), self.root.entries.iter())] }
    }

    /// Every file with its path, in [`Archive::walk`] order (links are not followed).
    pub fn files(&self) -> impl Iterator<Item = (String, &[u8])> + '_ {
        self.walk().filter_map(|(path, node)| match node {
            Node::File(data) => Some((path, data.as_slice())),
            _ => None,
        })
    }

    /// Number of files (links not counted).
    pub fn file_count(&self) -> usize {
        self.files().count()
    }

    /// Total size of all file data in bytes (links not counted).
    pub fn total_bytes(&self) -> u64 {
        self.files().map(|(_, data)| data.len() as u64).sum()
    }

    /// A listing for `pmfc paf list`: every node in [`Archive::walk`] order.
    pub fn listing(&self) -> Vec<ListEntry> {
        self.walk()
            .map(|(path, node)| ListEntry {
                path,
                kind: node.kind(),
                size: match node {
                    Node::File(data) => data.len() as u64,
                    _ => 0,
                },
                link_target: match node {
                    Node::Link(target) => Some(target.clone()),
                    _ => None,
                },
            })
            .collect()
    }
}

#[derive(Default)]
struct LinkState {
    /// Paths of links whose targets are being resolved.
    in_progress: Vec<String>,
    /// Link expansions so far.
    hops: usize,
}

/// Depth-first iterator over an archive; see [`Archive::walk`].
pub struct Walk<'a> {
    stack: Vec<(String, btree_map::Iter<'a, String, Node>)>,
}

impl<'a> Iterator for Walk<'a> {
    type Item = (String, &'a Node);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (prefix, iter) = self.stack.last_mut()?;
            match iter.next() {
                None => {
                    self.stack.pop();
                }
                Some((name, node)) => {
                    let path = join(prefix, name);
                    if let Node::Dir(dir) = node {
                        self.stack.push((path.clone(), dir.entries.iter()));
                    }
                    return Some((path, node));
                }
            }
        }
    }
}
