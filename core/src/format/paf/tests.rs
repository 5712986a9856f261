use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;

use super::archive::*;
use super::*;
use crate::format::bin::{ReadError, ReadErrorKind};

// ---------------------------------------------------------------------------------------------
// Helpers for building archives by hand.

/// Little-endian `u32` fields.
fn le(fields: &[u32]) -> Vec<u8> {
    fields.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// A directory entry slot: type, name position, name CRC, target position.
fn slot(ty: u8, name_pos: u32, crc: u32, target: u32) -> Vec<u8> {
    let mut out = vec![ty];
    out.extend(le(&[name_pos, crc, target]));
    out
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// The 12-byte header.
fn header(root: u32, free: u32) -> Vec<u8> {
    cat(&[b"PAF\0", &le(&[root, free])])
}

/// A single-segment String or File: total, bytes in this segment, no continuation, the bytes.
fn single(bytes: &[u8]) -> Vec<u8> {
    cat(&[&le(&[bytes.len() as u32, bytes.len() as u32, 0]), bytes])
}

/// An archive image where segments are written at chosen positions; the gaps are free space
/// filled with 0xEE. Overlapping writes are a bug in the test, so they panic.
struct Heap {
    bytes: Vec<u8>,
    used: Vec<bool>,
}

impl Heap {
    fn new() -> Self {
        Heap { bytes: Vec::new(), used: Vec::new() }
    }

    fn put(&mut self, pos: u32, data: &[u8]) -> &mut Self {
        let (start, end) = (pos as usize, pos as usize + data.len());
        if self.bytes.len() < end {
            self.bytes.resize(end, 0xEE);
            self.used.resize(end, false);
        }
        assert!(!self.used[start..end].iter().any(|&u| u), "test heap: overlapping write at {pos}");
        self.bytes[start..end].copy_from_slice(data);
        self.used[start..end].iter_mut().for_each(|u| *u = true);
        self
    }

    fn pad_to(&mut self, len: usize) -> &mut Self {
        if self.bytes.len() < len {
            self.bytes.resize(len, 0xEE);
            self.used.resize(len, false);
        }
        self
    }

    fn build(&self) -> Vec<u8> {
        self.bytes.clone()
    }
}

fn read_err(bytes: &[u8]) -> ReadError {
    match Archive::from_bytes(bytes) {
        Err(PafError::Read(e)) => e,
        Err(other) => panic!("expected a read error, got {other}"),
        Ok(a) => panic!("expected a read error, got {a:?}"),
    }
}

fn tree(entries: Vec<(&str, Node)>) -> Dir {
    Dir { entries: entries.into_iter().map(|(k, v)| (k.to_owned(), v)).collect() }
}

fn file(data: &[u8]) -> Node {
    Node::File(data.to_vec())
}

fn link(target: &str) -> Node {
    Node::Link(target.to_owned())
}

/// The tiny archive of the golden test: `d/` holding `f` = "hi", and `l` linking to `d/f`.
fn tiny() -> Archive {
    Archive { root: tree(vec![("d", Node::Dir(tree(vec![("f", file(b"hi"))]))), ("l", link("d/f"))]) }
}

// ---------------------------------------------------------------------------------------------
// CRC (A1)

#[test]
fn name_crc_vectors() {
    assert_eq!(name_crc(b"in"), 0x1E35_9CB1);
    assert_eq!(name_crc(b"textures"), 0xC0A5_667F);
    assert_eq!(name_crc(b"123456789"), 0x2DFD_2D88);
    assert_eq!(name_crc(b""), 0);
    // Not the zlib CRC-32.
    assert_ne!(name_crc(b"123456789"), 0xCBF4_3926);
}

// ---------------------------------------------------------------------------------------------
// Writer

#[test]
fn golden_tiny_archive() {
    // Name CRCs (A1), computed independently of `name_crc`: with Python's zlib,
    // `zlib.crc32(name, 0xFFFFFFFF) ^ 0xFFFFFFFF` (undoes zlib's initial and final XOR).
    const CRC_D: u32 = 0x4ADF_A541;
    const CRC_L: u32 = 0x4404_2D73;
    const CRC_F: u32 = 0xA4D1_C46D;
    assert_eq!([name_crc(b"d"), name_crc(b"l"), name_crc(b"f")], [CRC_D, CRC_L, CRC_F]);
    // Breadth-first layout (module docs): header, root directory, then for each directory in BFS
    // order, for each entry in name order: name String, target record.
    let mut expected = Vec::new();
    // 0: header: magic, version 0, root at 12, no free space tracker.
    expected.extend(header(12, 0));
    // 12: root Directory: 2 entries, 2 slots, no continuation; 12 + 2 * 13 = 38 bytes, to 50.
    expected.extend(le(&[2, 2, 0]));
    // 24: slot "d": directory, name at 50, CRC("d"), Directory at 63.
    expected.extend(slot(0, 50, CRC_D, 63));
    // 37: slot "l": link, name at 88, CRC("l"), link String at 101.
    expected.extend(slot(2, 88, CRC_L, 101));
    // 50: String "d" (13 bytes, to 63).
    expected.extend(single(b"d"));
    // 63: Directory "d": 1 entry, 1 slot, no continuation (25 bytes, to 88).
    expected.extend(le(&[1, 1, 0]));
    // 75: slot "f": file, name at 116, CRC("f"), File at 129.
    expected.extend(slot(1, 116, CRC_F, 129));
    // 88: String "l" (13 bytes, to 101).
    expected.extend(single(b"l"));
    // 101: link String "d/f" (15 bytes, to 116).
    expected.extend(single(b"d/f"));
    // Now directory "d" is visited. 116: String "f" (13 bytes, to 129).
    expected.extend(single(b"f"));
    // 129: File: 2 bytes, 2 in this segment, no continuation, "hi" (14 bytes, to 143).
    expected.extend(single(b"hi"));
    assert_eq!(expected.len(), 143);

    let bytes = tiny().to_bytes().unwrap();
    assert_eq!(bytes, expected);
    assert_eq!(Archive::from_bytes(&bytes).unwrap(), tiny());
    assert_eq!(write::encoded_len(&tiny()), 143);
}

#[test]
fn empty_archive() {
    let bytes = Archive::new().to_bytes().unwrap();
    assert_eq!(bytes, cat(&[&header(12, 0), &le(&[0, 0, 0])]));
    assert_eq!(Archive::from_bytes(&bytes).unwrap(), Archive::new());
}

#[test]
fn writer_is_deterministic_and_independent_of_insertion_order() {
    let mut a = Archive::new();
    a.insert_file("textures/b.ptf", b"B".to_vec()).unwrap();
    a.insert_file("textures/a.ptf", b"A".to_vec()).unwrap();
    a.insert_file("z", b"Z".to_vec()).unwrap();
    a.insert_link("sounds/x", "textures/a.ptf").unwrap();
    let mut b = Archive::new();
    b.insert_link("sounds/x", "textures/a.ptf").unwrap();
    b.insert_file("z", b"Z".to_vec()).unwrap();
    b.insert_file("textures/a.ptf", b"A".to_vec()).unwrap();
    b.insert_file("textures/b.ptf", b"B".to_vec()).unwrap();
    assert_eq!(a.to_bytes().unwrap(), a.clone().to_bytes().unwrap());
    assert_eq!(a.to_bytes().unwrap(), b.to_bytes().unwrap());
}

#[test]
fn writer_refuses_what_the_reader_rejects() {
    for bad in ["", ".", "..", "a/b", "a\\b", "a\0b"] {
        let a = Archive { root: tree(vec![(bad, file(b"x"))]) };
        let err = a.to_bytes().unwrap_err();
        assert!(matches!(err, PafError::InvalidName { .. }), "{bad:?}: {err}");
    }
    for bad in ["", "/x", "x/", "a//b", "../x", "a/../b", "./a", "a\\b", "a\0"] {
        let a = Archive { root: tree(vec![("l", link(bad))]) };
        let err = a.to_bytes().unwrap_err();
        assert!(matches!(err, PafError::InvalidLinkTarget { .. }), "{bad:?}: {err}");
    }
    let err = deep_tree(MAX_DEPTH + 1).to_bytes().unwrap_err();
    assert!(matches!(err, PafError::TooDeep { .. }), "{err}");
    deep_tree(MAX_DEPTH).to_bytes().unwrap();
}

#[test]
fn writer_refuses_archives_over_4_gib_before_allocating() {
    // A 4 GiB tree is too big for a test; check the size arithmetic and the limit separately.
    let a = Archive { root: tree(vec![("f", file(&[1, 2, 3])), ("l", link("f"))]) };
    // header + root dir (2 slots) + name "f" + File + name "l" + link String "f".
    assert_eq!(write::encoded_len(&a), 12 + (12 + 2 * 13) + (12 + 1) + (12 + 3) + (12 + 1) + (12 + 1));
    assert!(write::check_size(u64::from(u32::MAX)).is_ok());
    let err = write::check_size(u64::from(u32::MAX) + 1).unwrap_err();
    assert!(matches!(err, PafError::TooLarge { size } if size == 1 << 32), "{err}");
}

/// `a/a/a/.../leaf` with `levels` components in total (iterative, no recursion).
fn deep_tree(levels: usize) -> Archive {
    let mut dir = tree(vec![("leaf", file(b"x"))]);
    for _ in 1..levels {
        dir = tree(vec![("a", Node::Dir(dir))]);
    }
    Archive { root: dir }
}

// ---------------------------------------------------------------------------------------------
// Model helpers

#[test]
fn model_helpers() {
    let mut a = Archive::new();
    a.insert_file("t/a.ptf", vec![1, 2, 3]).unwrap();
    a.insert_file("t/sub/b", vec![4]).unwrap();
    a.insert_file("top", Vec::new()).unwrap();
    a.insert_link("t/l", "t/sub").unwrap();
    a.create_dir_all("empty/inner").unwrap();
    assert_eq!(a.file_count(), 3);
    assert_eq!(a.total_bytes(), 4);
    assert_eq!(a.get("t/a.ptf"), Some(&file(&[1, 2, 3])));
    assert_eq!(a.get("t/l"), Some(&link("t/sub")));
    assert_eq!(a.get("t/l/b"), None, "get does not follow links");
    assert_eq!(a.get("nope"), None);
    assert_eq!(a.get(""), None);
    assert_eq!(a.resolve("t/l/b").unwrap(), Resolved::File(&[4]));
    assert!(matches!(a.resolve("t/l").unwrap(), Resolved::Dir(d) if d.entries.contains_key("b")));
    assert!(matches!(a.resolve("t/a.ptf/x"), Err(PafError::NotADirectory { .. })));
    assert!(matches!(a.resolve("t/zzz"), Err(PafError::NotFound { .. })));

    let paths: Vec<String> = a.walk().map(|(p, _)| p).collect();
    assert_eq!(paths, ["empty", "empty/inner", "t", "t/a.ptf", "t/l", "t/sub", "t/sub/b", "top"]);
    let files: Vec<String> = a.files().map(|(p, _)| p).collect();
    assert_eq!(files, ["t/a.ptf", "t/sub/b", "top"]);
    let listing = a.listing();
    assert_eq!(listing.len(), 8);
    assert_eq!(listing[3], ListEntry { path: "t/a.ptf".into(), kind: NodeKind::File, size: 3, link_target: None });
    assert_eq!(
        listing[4],
        ListEntry { path: "t/l".into(), kind: NodeKind::Link, size: 0, link_target: Some("t/sub".into()) }
    );

    // Conflicts and bad paths.
    assert!(matches!(a.insert_file("top/x", vec![]), Err(PafError::PathConflict { .. })));
    assert!(matches!(a.insert_file("t", vec![]), Err(PafError::PathConflict { .. })));
    assert!(matches!(a.insert_file("../x", vec![]), Err(PafError::InvalidPath { .. })));
    assert!(matches!(a.insert_file("a//b", vec![]), Err(PafError::InvalidPath { .. })));
    assert!(matches!(a.insert_link("x", "../y"), Err(PafError::InvalidLinkTarget { .. })));
    // Replacing a file is fine.
    a.insert_file("top", vec![9]).unwrap();
    assert_eq!(a.get("top"), Some(&file(&[9])));
}

#[test]
fn link_resolution_cycles() {
    let a = Archive { root: tree(vec![("a", link("b")), ("b", link("a")), ("c", link("c/x"))]) };
    assert!(matches!(a.resolve("a"), Err(PafError::LinkCycle { .. })));
    assert!(matches!(a.resolve("c"), Err(PafError::LinkCycle { .. })));
    // Visiting the same link twice is not a cycle when each expansion terminates: l -> d, d/k -> l.
    let a = Archive {
        root: tree(vec![("d", Node::Dir(tree(vec![("k", link("l")), ("f", file(b"F"))]))), ("l", link("d"))]),
    };
    assert_eq!(a.resolve("l/k/k/k/f").unwrap(), Resolved::File(b"F"));
    // A long chain of links hits the hop limit.
    let mut root = Dir::default();
    for i in 0..(MAX_LINK_HOPS + 5) {
        root.entries.insert(format!("l{i}"), link(&format!("l{}", i + 1)));
    }
    root.entries.insert(format!("l{}", MAX_LINK_HOPS + 5), file(b"end"));
    let a = Archive { root };
    assert!(matches!(a.resolve("l0"), Err(PafError::TooManyLinks { .. })));
    assert_eq!(a.resolve("l10").unwrap(), Resolved::File(b"end"));
}

// ---------------------------------------------------------------------------------------------
// Round trips

fn name_strategy() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_.-]{1,8}".prop_filter("not . or ..", |s| s != "." && s != "..")
}

fn link_target_strategy() -> impl Strategy<Value = String> {
    prop::collection::vec(name_strategy(), 1..4).prop_map(|v| v.join("/"))
}

fn dir_strategy() -> impl Strategy<Value = Dir> {
    let leaf = prop_oneof![
        4 => prop::collection::vec(any::<u8>(), 0..=1024).prop_map(Node::File),
        1 => link_target_strategy().prop_map(Node::Link),
    ];
    // Three levels of nesting below the root: depth <= 4.
    let node = leaf.prop_recursive(3, 48, 6, |inner| {
        prop_oneof![
            2 => inner.clone(),
            1 => prop::collection::btree_map(name_strategy(), inner, 0..6).prop_map(|entries| Node::Dir(Dir { entries })),
        ]
    });
    prop::collection::btree_map(name_strategy(), node, 0..8).prop_map(|entries| Dir { entries })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn round_trip(root in dir_strategy()) {
        let a = Archive { root };
        let bytes = a.to_bytes().unwrap();
        prop_assert_eq!(bytes.len() as u64, write::encoded_len(&a));
        let back = Archive::from_bytes(&bytes).unwrap();
        prop_assert_eq!(&back, &a);
        // Determinism: the same tree gives the same bytes.
        prop_assert_eq!(back.to_bytes().unwrap(), bytes);
    }

    #[test]
    fn corrupted_archives_never_panic(root in dir_strategy(), flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let mut bytes = Archive { root }.to_bytes().unwrap();
        for (at, v) in flips {
            let i = at.index(bytes.len());
            bytes[i] = v;
        }
        let _ = Archive::from_bytes(&bytes);
    }
}

// ---------------------------------------------------------------------------------------------
// Reader: A5 features

/// An archive using continuations for a directory, a file and strings, spare slots and a free
/// space tracker with a continuation. Expected tree:
/// `big.bin` = "hello, world!", `sub/l` -> link "big.bin".
fn continuation_archive() -> Vec<u8> {
    let mut h = Heap::new();
    // Header: root Directory at 100, free space tracker at 400.
    h.put(0, &header(100, 400));
    // Name "sub" at 40, single segment (40..55).
    h.put(40, &single(b"sub"));
    // Name "big.bin" at 60 in two segments: "big" (60..75), continuation at 80 ".bin" (80..92).
    h.put(60, &cat(&[&le(&[7, 3, 80]), b"big"]));
    h.put(80, &cat(&[&le(&[4, 0]), b".bin"]));
    // Root Directory at 100: 2 entries in total, 1 slot here, continuation at 200 (100..125).
    h.put(100, &cat(&[&le(&[2, 1, 200]), &slot(0, 40, name_crc(b"sub"), 150)]));
    // Directory "sub" at 150: 1 entry, 2 slots (the second spare, garbage), no continuation.
    h.put(150, &cat(&[&le(&[1, 2, 0]), &slot(2, 236, name_crc(b"l"), 20), &[0xAB; 13]]));
    // Root continuation at 200 (200..234): 2 slots, no next;
    // slot 1: file "big.bin" at 250; slot 2: spare, garbage that would be invalid if used.
    h.put(200, &cat(&[&le(&[2, 0]), &slot(1, 60, name_crc(b"big.bin"), 250), &slot(9, 0, 0, 0)]));
    // Name "l" at 236 (236..249).
    h.put(236, &single(b"l"));
    // Link target "big.bin" at 20 (before the root directory) in two segments: "bi" at 20 (20..34)
    // and "g.bin" at 300 (300..313).
    h.put(20, &cat(&[&le(&[7, 2, 300]), b"bi"]));
    h.put(300, &cat(&[&le(&[5, 0]), b"g.bin"]));
    // File at 250: 13 bytes in total, "hello" here (250..267), continuation at 350.
    h.put(250, &cat(&[&le(&[13, 5, 350]), b"hello"]));
    // File continuation at 350: 2 bytes, next 370, previous 250: ", " (350..364).
    h.put(350, &cat(&[&le(&[2, 370, 250]), b", "]));
    // File continuation at 370: 6 bytes, no next, previous 350: "world!" (370..388).
    h.put(370, &cat(&[&le(&[6, 0, 350]), b"world!"]));
    // Free space tracker at 400: 2 slots used in total, 1 here, continuation at 440 (400..420).
    h.put(400, &cat(&[&le(&[2, 1, 440]), &le(&[470, 10])]));
    // Tracker continuation at 440: 2 slots (the second spare, garbage), no next (440..464).
    h.put(440, &cat(&[&le(&[2, 0]), &le(&[480, 16]), &le(&[0xFFFF_FFFF, 0xFFFF_FFFF])]));
    // The archive ends exactly where the last free range ends, so every truncation is an error.
    h.pad_to(496);
    h.build()
}

#[test]
fn reads_continuations_spare_slots_and_free_tracker() {
    let bytes = continuation_archive();
    let a = Archive::from_bytes(&bytes).unwrap();
    let expected = Archive {
        root: tree(vec![("big.bin", file(b"hello, world!")), ("sub", Node::Dir(tree(vec![("l", link("big.bin"))])))]),
    };
    assert_eq!(a, expected);
    assert_eq!(a.resolve("sub/l").unwrap(), Resolved::File(b"hello, world!"));
    // Our writer makes it compact again.
    let compact = a.to_bytes().unwrap();
    assert!(compact.len() < bytes.len());
    assert_eq!(Archive::from_bytes(&compact).unwrap(), expected);
}

#[test]
fn continuation_hostile_variants() {
    // File continuation with a wrong "previous segment" position.
    let mut bytes = continuation_archive();
    bytes[378..382].copy_from_slice(&250u32.to_le_bytes());
    let e = read_err(&bytes);
    assert!(e.to_string().contains("previous-segment position is 250"), "{e}");
    assert_eq!(e.offset, 378);
    assert_eq!(&*e.section, "PAF file \"big.bin\"");

    // A file continuation loop: 370 -> 350.
    let mut bytes = continuation_archive();
    bytes[374..378].copy_from_slice(&350u32.to_le_bytes());
    let e = read_err(&bytes);
    assert!(e.to_string().contains("loops back to position 350 (cycle)"), "{e}");

    // String segments holding fewer bytes than declared.
    let mut bytes = continuation_archive();
    bytes[60..64].copy_from_slice(&8u32.to_le_bytes());
    let e = read_err(&bytes);
    assert!(e.to_string().contains("declares 8 bytes, but its segments hold 7"), "{e}");
    assert_eq!(&*e.section, "PAF root directory, name of entry 1");

    // Directory declaring more entries than it has slots.
    let mut bytes = continuation_archive();
    bytes[100..104].copy_from_slice(&4u32.to_le_bytes());
    let e = read_err(&bytes);
    assert!(e.to_string().contains("declares 4 entries, but its segments have only 3 slots"), "{e}");

    // Using the spare slot makes its garbage an error (unknown type 9).
    let mut bytes = continuation_archive();
    bytes[100..104].copy_from_slice(&3u32.to_le_bytes());
    let e = read_err(&bytes);
    assert!(e.to_string().contains("unknown type 9"), "{e}");

    // Directory "sub" continuing into the root's continuation: a directory segment reached twice.
    let mut bytes = continuation_archive();
    bytes[158..162].copy_from_slice(&200u32.to_le_bytes());
    let e = read_err(&bytes);
    assert!(e.to_string().contains("directory cycle: continuation position 200"), "{e}");
    assert_eq!((&*e.section, e.offset), ("PAF directory \"sub\"", 158));

    // Free space tracker: a range outside the archive, using its spare garbage slot, a loop.
    let mut bytes = continuation_archive();
    bytes[448..452].copy_from_slice(&500u32.to_le_bytes());
    let e = read_err(&bytes);
    assert_eq!(&*e.section, "PAF free space tracker");
    assert!(e.to_string().contains("free range at 500 of 16 bytes is not inside"), "{e}");
    let mut bytes = continuation_archive();
    bytes[400..404].copy_from_slice(&3u32.to_le_bytes());
    assert!(read_err(&bytes).to_string().contains("free range at 4294967295"));
    let mut bytes = continuation_archive();
    bytes[444..448].copy_from_slice(&400u32.to_le_bytes());
    assert!(read_err(&bytes).to_string().contains("(cycle)"));
    let mut bytes = continuation_archive();
    bytes[400..404].copy_from_slice(&4u32.to_le_bytes());
    assert!(read_err(&bytes).to_string().contains("4 slots used, but the tracker has only 3 slots"));
}

// ---------------------------------------------------------------------------------------------
// Reader: hostile input (positions in the tiny golden archive are documented in its test)

fn tiny_bytes() -> Vec<u8> {
    tiny().to_bytes().unwrap()
}

fn set_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn hostile_header() {
    let mut b = tiny_bytes();
    b[0] = b'X';
    let e = read_err(&b);
    assert_eq!((&*e.section, e.offset), ("PAF header", 0));
    assert!(e.to_string().contains("bad magic"), "{e}");

    let mut b = tiny_bytes();
    b[3] = 1;
    let e = read_err(&b);
    assert_eq!(e.offset, 3);
    assert!(e.to_string().contains("unsupported PAF version 1"), "{e}");

    for (root, what) in [(0, "is 0"), (5, "points into the archive header"), (1000, "past the end")] {
        let mut b = tiny_bytes();
        set_u32(&mut b, 4, root);
        let e = read_err(&b);
        assert_eq!(e.offset, 4);
        assert!(e.to_string().contains(what), "{e}");
    }
    // A segment header that starts inside but runs past the end.
    let mut b = tiny_bytes();
    set_u32(&mut b, 4, 140);
    let e = read_err(&b);
    assert!(e.to_string().contains("runs past the end"), "{e}");
    // Free space tracker position past the end.
    let mut b = tiny_bytes();
    set_u32(&mut b, 8, 5000);
    let e = read_err(&b);
    assert_eq!(e.offset, 8);
    assert!(e.to_string().contains("past the end"), "{e}");
}

#[test]
fn hostile_bad_names() {
    for (bad, why) in [("..", "\"..\" is not allowed"), ("a/b", "'/'"), (".", "\".\""), ("a\\b", "'\\'"), ("", "empty")]
    {
        // Encoded without the writer's validation.
        let a = Archive { root: tree(vec![("ok", Node::Dir(tree(vec![(bad, file(b"x"))])))]) };
        let bytes = write::encode_unchecked(&a).unwrap();
        let e = read_err(&bytes);
        assert_eq!(&*e.section, "PAF directory \"ok\", name of entry 0", "{e}");
        assert!(e.to_string().contains("invalid name"), "{e}");
        assert!(e.to_string().contains(why), "{bad:?}: {e}");
    }
    // A name that is not UTF-8 (CRC matches, so it is not reported as corruption).
    let mut b = tiny_bytes();
    b[62] = 0xFF; // the byte of name "d"
    set_u32(&mut b, 29, name_crc(&[0xFF]));
    let e = read_err(&b);
    assert!(e.to_string().contains("not valid UTF-8"), "{e}");
    assert_eq!(e.offset, 50);
}

#[test]
fn hostile_links() {
    for bad in ["../x", "a/../../x", "/etc/passwd", "a//b", "", "./a", "a\\b"] {
        let a = Archive { root: tree(vec![("l", link(bad))]) };
        let bytes = write::encode_unchecked(&a).unwrap();
        let e = read_err(&bytes);
        assert_eq!(&*e.section, "PAF link \"l\"");
        assert!(e.to_string().contains("invalid link target"), "{bad:?}: {e}");
    }
    let a = Archive { root: tree(vec![("l", link("../x"))]) };
    let e = read_err(&write::encode_unchecked(&a).unwrap());
    assert!(e.to_string().contains("may not leave the archive root"), "{e}");
}

#[test]
fn hostile_directory_cycle() {
    // Make "f" in "d" a directory entry pointing at the root directory (an ancestor).
    let mut b = tiny_bytes();
    b[75] = 0;
    set_u32(&mut b, 84, 12);
    let e = read_err(&b);
    assert!(e.to_string().contains("directory cycle"), "{e}");
    assert_eq!((&*e.section, e.offset), ("PAF directory \"d\"", 84));
    // Pointing at itself.
    set_u32(&mut b, 84, 63);
    assert!(read_err(&b).to_string().contains("directory cycle"));
    // Two entries pointing at the same directory (reachable twice) is refused as well.
    let mut b = tiny_bytes();
    b[37] = 0;
    set_u32(&mut b, 46, 63);
    assert!(read_err(&b).to_string().contains("directory cycle"));
}

#[test]
fn hostile_looping_continuation() {
    let mut b = tiny_bytes();
    set_u32(&mut b, 20, 12); // the root's continuation is the root itself
    let e = read_err(&b);
    assert!(e.to_string().contains("continuation chain loops back to position 12 (cycle)"), "{e}");
    assert_eq!((&*e.section, e.offset), ("PAF root directory", 20));
    // A longer loop through a string: "l"'s String continues at "d/f"'s String... which has the
    // wrong shape; a self-loop on the file instead.
    let mut b = tiny_bytes();
    set_u32(&mut b, 137, 129);
    assert!(read_err(&b).to_string().contains("(cycle)"));
}

#[test]
fn hostile_segment_past_the_end() {
    // The File says 20 bytes in its segment (and in total): only 2 are there.
    let mut b = tiny_bytes();
    set_u32(&mut b, 129, 20);
    set_u32(&mut b, 133, 20);
    let e = read_err(&b);
    assert_eq!(&*e.section, "PAF file \"d/f\"");
    assert!(matches!(e.kind, ReadErrorKind::CountTooLarge { count: 20, available: 2, .. }), "{e}");
    assert_eq!(e.offset, 133);
    // A continuation position past the end.
    let mut b = tiny_bytes();
    set_u32(&mut b, 137, 4000);
    let e = read_err(&b);
    assert!(e.to_string().contains("continuation position 4000 is past the end"), "{e}");
}

#[test]
fn hostile_crc_mismatch() {
    let mut b = tiny_bytes();
    b[29] ^= 1;
    let e = read_err(&b);
    assert!(e.to_string().contains("CRC mismatch (corrupt archive)"), "{e}");
    assert_eq!((&*e.section, e.offset), ("PAF root directory", 29));
}

#[test]
fn hostile_forged_counts() {
    // (offset, section) of counts and totals in the tiny archive.
    let cases = [
        (12, "PAF root directory"),                  // total entries
        (16, "PAF root directory"),                  // slots in this segment
        (50, "PAF root directory, name of entry 0"), // string length
        (54, "PAF root directory, name of entry 0"), // string bytes in this segment
        (63, "PAF directory \"d\""),                 // total entries
        (101, "PAF link \"l\""),                     // link string length
        (129, "PAF file \"d/f\""),                   // total file size
        (133, "PAF file \"d/f\""),                   // bytes in this segment
    ];
    for (at, section) in cases {
        let mut b = tiny_bytes();
        set_u32(&mut b, at, 0xFFFF_FFFF);
        let start = std::time::Instant::now();
        let e = read_err(&b);
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
        assert_eq!(&*e.section, section);
        assert_eq!(e.offset, at as u64);
        assert!(matches!(e.kind, ReadErrorKind::CountTooLarge { count: 0xFFFF_FFFF, .. }), "{at}: {e}");
    }
}

#[test]
fn hostile_unknown_type_and_duplicates() {
    let mut b = tiny_bytes();
    b[24] = 7;
    let e = read_err(&b);
    assert!(e.to_string().contains("unknown type 7"), "{e}");
    assert_eq!(e.offset, 24);
    // Rename "l" to "d" (fixing its CRC): two entries called "d".
    let mut b = tiny_bytes();
    b[100] = b'd';
    set_u32(&mut b, 42, name_crc(b"d"));
    let e = read_err(&b);
    assert!(e.to_string().contains("duplicate name \"d\""), "{e}");
}

#[test]
fn hostile_truncation_at_every_byte() {
    for archive in [tiny_bytes(), continuation_archive()] {
        for n in 0..archive.len() {
            assert!(Archive::from_bytes(&archive[..n]).is_err(), "truncated to {n} bytes was accepted");
        }
    }
}

#[test]
fn hostile_shared_file_amplification() {
    // 40 entries all pointing at one 200-byte File: 8000 bytes of file data from a ~1.8 KB archive.
    let mut h = Heap::new();
    let n = 40u32;
    let dir_pos = 12;
    let names_pos = dir_pos + 12 + 13 * n;
    let file_pos = names_pos + 14 * n;
    let mut dir = le(&[n, n, 0]);
    for i in 0..n {
        let name = format!("{i:02}");
        dir.extend(slot(1, names_pos + 14 * i, name_crc(name.as_bytes()), file_pos));
        h.put(names_pos + 14 * i, &single(name.as_bytes()));
    }
    h.put(0, &header(dir_pos, 0));
    h.put(dir_pos, &dir);
    h.put(file_pos, &single(&[7; 200]));
    let bytes = h.build();
    let e = read_err(&bytes);
    assert!(e.to_string().contains("exceed the archive size"), "{e}");
    // Sharing a record a few times is allowed (it is not a cycle).
    let mut b = tiny_bytes();
    set_u32(&mut b, 46, 129); // "l" becomes a file sharing the File of d/f
    b[37] = 1;
    let a = Archive::from_bytes(&b).unwrap();
    assert_eq!(a.get("l"), Some(&file(b"hi")));
}

#[test]
fn hostile_shared_long_chain_is_bounded() {
    // 40 links share one link String whose chain has 100 empty continuations: 4000 segment visits
    // for an archive of about 1.9 KB. Refused by the work bound instead of taking quadratic time.
    let mut h = Heap::new();
    let n = 40u32;
    let dir_pos = 12;
    let names_pos = dir_pos + 12 + 13 * n;
    let string_pos = names_pos + 14 * n;
    let mut dir = le(&[n, n, 0]);
    for i in 0..n {
        let name = format!("{i:02}");
        dir.extend(slot(2, names_pos + 14 * i, name_crc(name.as_bytes()), string_pos));
        h.put(names_pos + 14 * i, &single(name.as_bytes()));
    }
    h.put(0, &header(dir_pos, 0));
    h.put(dir_pos, &dir);
    let mut at = string_pos + 13;
    h.put(string_pos, &cat(&[&le(&[1, 1, at]), b"x"]));
    for i in 0..100 {
        let next = if i == 99 { 0 } else { at + 8 };
        h.put(at, &le(&[0, next]));
        at += 8;
    }
    let bytes = h.build();
    let e = read_err(&bytes);
    assert!(e.to_string().contains("too many segments and entries for its size"), "{e}");
    // One link using that chain is fine.
    let mut b = bytes.clone();
    set_u32(&mut b, dir_pos as usize, 1);
    let a = Archive::from_bytes(&b).unwrap();
    assert_eq!(a.get("00"), Some(&link("x")));
}

#[test]
fn hostile_too_deep() {
    let bytes = write::encode_unchecked(&deep_tree(MAX_DEPTH + 1)).unwrap();
    let e = read_err(&bytes);
    assert!(e.to_string().contains("nested more than 256 levels deep"), "{e}");
    let ok = deep_tree(MAX_DEPTH);
    assert_eq!(Archive::from_bytes(&ok.to_bytes().unwrap()).unwrap(), ok);
}

// ---------------------------------------------------------------------------------------------
// Folder I/O

/// Everything under `dir`: relative `/` path -> file contents (None for folders). Panics on symlinks.
fn disk_tree(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(dir.to_owned(), String::new())];
    while let Some((d, prefix)) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            let rel = join(&prefix, &name);
            let meta = std::fs::symlink_metadata(e.path()).unwrap();
            assert!(!meta.file_type().is_symlink(), "extraction created a symlink at {rel}");
            if meta.is_dir() {
                out.insert(rel.clone(), None);
                stack.push((e.path(), rel));
            } else {
                out.insert(rel, Some(std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out
}

fn expect_disk(entries: &[(&str, Option<&[u8]>)]) -> BTreeMap<String, Option<Vec<u8>>> {
    entries.iter().map(|(p, d)| ((*p).to_owned(), d.map(<[u8]>::to_vec))).collect()
}

#[test]
fn extract_writes_exactly_the_expected_files() {
    let mut a = Archive::new();
    a.insert_file("a.txt", b"A".to_vec()).unwrap();
    a.insert_file("dir/b.bin", vec![1, 2, 3]).unwrap();
    a.insert_file("dir/sub/c", b"C".to_vec()).unwrap();
    a.create_dir_all("empty").unwrap();
    a.insert_link("la", "a.txt").unwrap();
    a.insert_link("ld", "dir").unwrap();
    a.insert_link("lx", "nope/x").unwrap();
    // A round trip through bytes first: extraction works on what the reader gives.
    let a = Archive::from_bytes(&a.to_bytes().unwrap()).unwrap();

    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("out");
    let report = a.extract_to(&dest).unwrap();
    assert_eq!(
        disk_tree(&dest),
        expect_disk(&[
            ("a.txt", Some(b"A")),
            ("dir", None),
            ("dir/b.bin", Some(&[1, 2, 3])),
            ("dir/sub", None),
            ("dir/sub/c", Some(b"C")),
            ("empty", None),
            ("la", Some(b"A")),
            ("ld", None),
            ("ld/b.bin", Some(&[1, 2, 3])),
            ("ld/sub", None),
            ("ld/sub/c", Some(b"C")),
        ])
    );
    assert_eq!(report.links_copied, ["la", "ld"]);
    assert_eq!(report.links_skipped.len(), 1);
    assert_eq!(report.links_skipped[0].path, "lx");
    assert!(report.links_skipped[0].reason.contains("no entry at \"nope\""), "{:?}", report.links_skipped);
    assert_eq!(report.files, 6);
    assert_eq!(report.bytes, 1 + 3 + 1 + 1 + 3 + 1);
    // Nothing outside the destination.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    // Extracting again overwrites in place.
    a.extract_to(&dest).unwrap();
}

#[test]
fn extract_refuses_link_cycles() {
    let tmp = tempfile::tempdir().unwrap();
    let a = Archive { root: tree(vec![("a", link("b")), ("b", link("a"))]) };
    assert!(matches!(a.extract_to(tmp.path().join("1")), Err(PafError::LinkCycle { .. })));
    // A link copying its own directory into itself.
    let a = Archive { root: tree(vec![("d", Node::Dir(tree(vec![("self", link("d")), ("f", file(b"x"))])))]) };
    let err = a.extract_to(tmp.path().join("2")).unwrap_err();
    assert!(matches!(&err, PafError::LinkCycle { path } if path == "d/self"), "{err}");
    // Two directories linking to each other.
    let a = Archive {
        root: tree(vec![
            ("p", Node::Dir(tree(vec![("to_q", link("q"))]))),
            ("q", Node::Dir(tree(vec![("to_p", link("p"))]))),
        ]),
    };
    assert!(matches!(a.extract_to(tmp.path().join("3")), Err(PafError::LinkCycle { .. })));
}

#[test]
fn extract_refuses_link_bombs() {
    // Each level holds 16 links to the level below: 16^5 copies of the bottom file.
    let mut root = Dir::default();
    root.entries.insert("l0".into(), Node::Dir(tree(vec![("f", file(b"x"))])));
    for level in 1..=5 {
        let mut d = Dir::default();
        for i in 0..16 {
            d.entries.insert(format!("c{i}"), link(&format!("l{}", level - 1)));
        }
        root.entries.insert(format!("l{level}"), Node::Dir(d));
    }
    let a = Archive { root };
    let tmp = tempfile::tempdir().unwrap();
    // With small limits, so the test does not write 100 000 files first.
    let err = a.extract_to_limited(tmp.path().join("1"), 1 << 20, 500).unwrap_err();
    assert!(matches!(err, PafError::LinkExpansionTooLarge { .. }), "{err}");
    assert!(err.to_string().contains("500 entries"), "{err}");
    // The same limits allow a modest number of link copies.
    let mut a = Archive::new();
    a.insert_file("d/f", vec![1; 100]).unwrap();
    for i in 0..10 {
        a.insert_link(&format!("l{i}"), "d").unwrap();
    }
    let report = a.extract_to_limited(tmp.path().join("2"), 1000, 20).unwrap();
    assert_eq!(report.links_copied.len(), 10);
    assert_eq!((report.files, report.bytes), (11, 1100), "link copies count as files");
    let err = a.extract_to_limited(tmp.path().join("3"), 999, 20).unwrap_err();
    assert!(err.to_string().contains("999 bytes"), "{err}");
    // Refused expansions are counted before anything is written: no destination, no copies.
    assert!(!tmp.path().join("1").exists() && !tmp.path().join("3").exists());
}

/// A link-heavy archive over the limit used to write up to the limit (1 GiB, 1 025 files for a
/// 1 MB archive) before it was refused, and leave it all behind; now it writes nothing, even
/// into a destination that holds other files.
#[test]
fn a_refused_link_expansion_leaves_the_destination_as_it_was() {
    let mut a = Archive::new();
    a.insert_file("big", vec![7; 4096]).unwrap();
    for i in 0..40 {
        a.insert_link(&format!("copy{i:02}"), "big").unwrap();
    }
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("dest");
    std::fs::create_dir_all(&dest).unwrap();
    std::fs::write(dest.join("mine.txt"), b"keep me").unwrap();
    let before = disk_tree(&dest);
    let err = a.extract_to_limited(&dest, 100 * 1024, 1000).unwrap_err();
    assert!(matches!(err, PafError::LinkExpansionTooLarge { .. }), "{err}");
    assert_eq!(disk_tree(&dest), before);
}

/// A failure found only while writing (an existing symlink where a folder goes) removes what
/// the extraction had created so far, and the destination folder it created.
#[cfg(unix)]
#[test]
fn a_failure_while_writing_removes_what_was_created() {
    let tmp = tempfile::tempdir().unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let mut a = Archive::new();
    a.insert_file("a/one", b"1".to_vec()).unwrap();
    a.insert_file("b/two", b"2".to_vec()).unwrap();
    a.insert_file("c/three", b"3".to_vec()).unwrap();
    // "a" extracts, then "b" is a symlink on disk: refused.
    let dest = tmp.path().join("dest");
    std::fs::create_dir_all(&dest).unwrap();
    std::os::unix::fs::symlink(&elsewhere, dest.join("b")).unwrap();
    let err = a.extract_to(&dest).unwrap_err();
    assert!(matches!(err, PafError::UnsafePath { .. }), "{err}");
    let left: Vec<_> = std::fs::read_dir(&dest).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["b"], "only the pre-existing symlink is left");
    // A refused expansion does not even create the destination.
    let nested = tmp.path().join("new/deeper");
    let mut a = Archive::new();
    a.insert_file("x", b"x".to_vec()).unwrap();
    a.insert_link("y", "x").unwrap();
    assert!(a.extract_to_limited(&nested, 0, 10).is_err());
    assert!(!tmp.path().join("new").exists());
}

#[test]
fn extract_refuses_dotdot_names_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("dest");
    for bad in ["..", "a/../../x", "/abs", "."] {
        // Built directly, bypassing the model helpers and the writer.
        let a = Archive {
            root: tree(vec![("ok.txt", file(b"fine")), (bad, Node::Dir(tree(vec![("evil", file(b"pwned"))])))]),
        };
        let err = a.extract_to(&dest).unwrap_err();
        assert!(matches!(err, PafError::InvalidName { .. }), "{bad:?}: {err}");
        // Nothing was written at all: not even the destination.
        assert_eq!(disk_tree(tmp.path()), BTreeMap::new(), "{bad:?}");
    }
    // And the archive bytes with a ".." name are refused by the reader.
    let a = Archive { root: tree(vec![("..", Node::Dir(tree(vec![("evil", file(b"pwned"))])))]) };
    let bytes = write::encode_unchecked(&a).unwrap();
    assert!(read_err(&bytes).to_string().contains("\"..\""));
}

#[cfg(unix)]
#[test]
fn extract_refuses_to_write_through_symlinks() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("dest");
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&dest).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, dest.join("sub")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("target"), dest.join("file")).unwrap();

    let mut a = Archive::new();
    a.insert_file("sub/x", b"x".to_vec()).unwrap();
    let err = a.extract_to(&dest).unwrap_err();
    assert!(matches!(err, PafError::UnsafePath { .. }), "{err}");
    let mut a = Archive::new();
    a.insert_file("file", b"x".to_vec()).unwrap();
    let err = a.extract_to(&dest).unwrap_err();
    assert!(matches!(err, PafError::UnsafePath { .. }), "{err}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

#[test]
fn pack_and_extract_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("textures/sub")).unwrap();
    std::fs::create_dir_all(src.join("empty")).unwrap();
    std::fs::write(src.join("a.txt"), b"A").unwrap();
    std::fs::write(src.join("textures/b.ptf"), [0u8, 1, 2, 255]).unwrap();
    std::fs::write(src.join("textures/sub/c"), b"").unwrap();
    let a = Archive::from_dir(&src).unwrap();
    let mut expected = Archive::new();
    expected.insert_file("a.txt", b"A".to_vec()).unwrap();
    expected.insert_file("textures/b.ptf", vec![0, 1, 2, 255]).unwrap();
    expected.insert_file("textures/sub/c", Vec::new()).unwrap();
    expected.create_dir_all("empty").unwrap();
    assert_eq!(a, expected);

    let bytes = a.to_bytes().unwrap();
    let dst = tmp.path().join("dst");
    Archive::from_bytes(&bytes).unwrap().extract_to(&dst).unwrap();
    assert_eq!(disk_tree(&dst), disk_tree(&src));
    assert_eq!(Archive::from_dir(&dst).unwrap().to_bytes().unwrap(), bytes);
}

#[cfg(unix)]
#[test]
fn pack_symlinks() {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("d")).unwrap();
    std::fs::write(src.join("a.txt"), b"A").unwrap();
    symlink("../a.txt", src.join("d/l")).unwrap();
    symlink("d", src.join("ld")).unwrap();
    let a = Archive::from_dir(&src).unwrap();
    assert_eq!(a.get("d/l"), Some(&link("a.txt")));
    assert_eq!(a.get("ld"), Some(&link("d")));
    assert_eq!(a.resolve("ld/l").unwrap(), Resolved::File(b"A"));

    // Outside the folder: an error naming the symlink.
    let outside = tmp.path().join("outside.txt");
    std::fs::write(&outside, b"O").unwrap();
    symlink(&outside, src.join("out")).unwrap();
    let err = Archive::from_dir(&src).unwrap_err();
    assert!(matches!(&err, PafError::BadSymlink { path, .. } if path.ends_with("out")), "{err}");
    assert!(err.to_string().contains("outside the packed folder"), "{err}");
    std::fs::remove_file(src.join("out")).unwrap();

    // Dangling.
    symlink("nope", src.join("dangling")).unwrap();
    let err = Archive::from_dir(&src).unwrap_err();
    assert!(matches!(err, PafError::BadSymlink { .. }), "{err}");
}

#[cfg(unix)]
#[test]
fn pack_refuses_unstorable_names() {
    use std::os::unix::ffi::OsStrExt;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("back\\slash"), b"").unwrap();
    let err = Archive::from_dir(tmp.path()).unwrap_err();
    assert!(matches!(&err, PafError::UnsupportedName { path, .. } if path.ends_with("back\\slash")), "{err}");

    let tmp = tempfile::tempdir().unwrap();
    let name = std::ffi::OsStr::from_bytes(b"bad\xFFname");
    if std::fs::write(tmp.path().join(name), b"").is_ok() {
        let err = Archive::from_dir(tmp.path()).unwrap_err();
        assert!(err.to_string().contains("not UTF-8"), "{err}");
    }
}
