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

/// Every golden file is a valid map, not just a well-formed file: other implementations test
/// against them. Geometry quads lie on their cube's faces (G1, G2), extended-geometry triangles
/// have their corners on the cube's (moved) corners of the right face (C4, G3), every
/// referenced lightmap exists and lightmap UVs lie in `[0, 1]` (K1).
#[test]
fn every_golden_file_is_a_valid_map() {
    let mut problems = Vec::new();
    for case in cases() {
        for (li, level) in case.file.levels.iter().enumerate() {
            let edge = 2f32.powi(i32::from(level.chunk_size_exp));
            for (ci, chunk) in level.chunks.iter().enumerate() {
                let at = format!("{} level {li} chunk {ci}", case.name);
                check_chunk(chunk, edge, &at, &mut problems);
            }
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

/// Cube centers (relative to the chunk center) and edges, by cube index.
fn cube_boxes(chunk: &pmf::Chunk, edge: f32) -> Vec<Option<([f32; 3], f32)>> {
    let cubes = &chunk.common.cubes;
    let mut out = vec![None; cubes.len()];
    if !cubes.is_empty() {
        out[0] = Some(([0.0; 3], edge));
    }
    // Pre-order: a parent comes before its children.
    for i in 0..cubes.len() {
        let (Some((c, e)), pmf::CubeKind::Parent(p)) = (out[i], &cubes[i].kind) else { continue };
        for (bit, child) in p.indices().into_iter().enumerate() {
            if let Some(child) = child {
                let s = pmfedit_tests::tree::child_sign(bit);
                out[child as usize] = Some((std::array::from_fn(|k| c[k] + s[k] * e / 4.0), e / 2.0));
            }
        }
    }
    out
}

fn check_chunk(chunk: &pmf::Chunk, edge: f32, at: &str, problems: &mut Vec<String>) {
    let eps = 1e-4;
    let lightmaps = chunk.client.lightmaps.len();
    let vertices = &chunk.client.vertices;
    for (i, v) in vertices.iter().enumerate() {
        if v.lightmap_uv.iter().any(|u| !(0.0..=1.0).contains(u)) {
            problems.push(format!("{at}: vertex {i} lightmap UV {:?} outside [0, 1]", v.lightmap_uv));
        }
    }
    for (i, b) in cube_boxes(chunk, edge).into_iter().enumerate() {
        let Some((c, e)) = b else {
            problems.push(format!("{at}: cube {i} is no root's descendant"));
            continue;
        };
        let h = e / 2.0;
        let on = |p: [f32; 3], q: [f32; 3]| (0..3).all(|k| (p[k] - q[k]).abs() <= eps);
        match (&chunk.common.cubes[i].kind, &chunk.client.cubes[i].geometry) {
            (pmf::CubeKind::Geometry(_), pmf::ClientGeometry::Geometry(g)) => {
                if g.faces != 0 && usize::from(g.lightmap) >= lightmaps {
                    problems.push(format!("{at}: cube {i} uses lightmap {} of {lightmaps}", g.lightmap));
                }
                let mut n = g.first_vertex as usize;
                for face in (0..6).filter(|f| g.faces & (1 << f) != 0) {
                    let quad = pmfedit_tests::tree::face_quad(c, e, face);
                    for (k, q) in quad.iter().enumerate() {
                        match vertices.get(n + k) {
                            Some(v) if on(v.position, q.position) => {}
                            v => problems.push(format!(
                                "{at}: cube {i} (center {c:?}, edge {e}) face {face} corner {k} is {:?}, not {:?}",
                                v.map(|v| v.position),
                                q.position
                            )),
                        }
                    }
                    n += 4;
                }
            }
            (pmf::CubeKind::ExtGeometry(x), pmf::ClientGeometry::ExtGeometry(g)) => {
                // The cube's corners, moved where the cube says, by PMF corner bit.
                let corner = |bit: usize| -> [f32; 3] {
                    let s = pmfedit_tests::tree::child_sign(bit);
                    let local = x.points.get(bit).unwrap_or(std::array::from_fn(|k| s[k] * h));
                    std::array::from_fn(|k| c[k] + local[k])
                };
                let mut n = g.first_vertex as usize;
                for face in 0..6 {
                    let t = usize::from(g.triangle_counts[face]);
                    if t > 0 && usize::from(g.lightmaps[face]) >= lightmaps {
                        problems.push(format!("{at}: cube {i} face {face} uses lightmap {}", g.lightmaps[face]));
                    }
                    // The face's four corners: those whose sign on the face axis is the face's.
                    let axis = face % 3;
                    let sign = if face < 3 { 1.0 } else { -1.0 };
                    let corners: Vec<[f32; 3]> =
                        (0..8).filter(|&b| pmfedit_tests::tree::child_sign(b)[axis] == sign).map(corner).collect();
                    for k in 0..3 * t {
                        match vertices.get(n + k) {
                            Some(v) if corners.iter().any(|q| on(v.position, *q)) => {}
                            v => problems.push(format!(
                                "{at}: cube {i} (center {c:?}, edge {e}) face {face} vertex {k} is {:?}, not a corner \
                                 of that face {corners:?}",
                                v.map(|v| v.position)
                            )),
                        }
                    }
                    n += 3 * t;
                }
            }
            _ => {}
        }
    }
}
