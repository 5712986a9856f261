//! Golden PMF files: `tests/golden/pmf/<case>/<case>.pmf`, built by `pmfedit_tests::golden`.
//!
//! Regenerate with `PMFEDIT_BLESS=1 cargo test -p pmfedit-tests --test golden`.

use std::path::PathBuf;

use pmfedit_core::format::pmf;
use pmfedit_tests::golden::{Case, cases};

fn dir(case: &Case) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("golden/pmf").join(case.name)
}

fn bless() -> bool {
    std::env::var_os("PMFEDIT_BLESS").is_some()
}

/// Reads the committed file of `case`, writing it first when blessing.
fn committed(case: &Case) -> Vec<u8> {
    let d = dir(case);
    let path = d.join(format!("{}.pmf", case.name));
    if bless() {
        let bytes = pmf::write(&case.file).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        std::fs::write(d.join("README.md"), format!("# {}\n\n{}\n", case.name, case.description)).unwrap();
    }
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e} (run with PMFEDIT_BLESS=1 to create it)", path.display()))
}

#[test]
fn writer_reproduces_every_golden_file() {
    for case in cases() {
        let expected = committed(&case);
        let actual = pmf::write(&case.file).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert!(actual == expected, "{}: writer output differs from the committed golden file", case.name);
    }
}

#[test]
fn golden_files_read_back_to_their_builders_and_rewrite_byte_for_byte() {
    for case in cases() {
        let bytes = committed(&case);
        let file = pmf::read(&bytes).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert!(file == case.file, "{}: read gives a different File than the builder", case.name);
        let again = pmf::write(&file).unwrap();
        assert!(again == bytes, "{}: write(read(bytes)) != bytes", case.name);
    }
}

#[test]
fn every_truncation_of_every_golden_file_is_an_error() {
    for case in cases() {
        let bytes = committed(&case);
        for n in 0..bytes.len() {
            assert!(pmf::read(&bytes[..n]).is_err(), "{}: truncated to {n} bytes read without error", case.name);
        }
    }
}

#[test]
fn every_case_has_a_description_and_no_stray_folders() {
    if bless() {
        return; // the other tests are writing the folders right now
    }
    let names: Vec<_> = cases().iter().map(|c| c.name).collect();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("golden/pmf");
    let mut on_disk: Vec<String> =
        std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    on_disk.sort();
    let mut expected: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(on_disk, expected);
    for case in cases() {
        let readme = std::fs::read_to_string(dir(&case).join("README.md")).unwrap();
        assert!(readme.contains(case.description), "{}: README.md out of date", case.name);
    }
}
