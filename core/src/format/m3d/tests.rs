use std::io::Write as _;

use super::read as read_mod;
use super::*;
use crate::format::bin::ReadErrorKind;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/testdata/m3d/");

fn file(name: &str) -> Vec<u8> {
    let dir = std::path::Path::new(DATA);
    assert!(dir.is_dir(), "the shared test data folder {DATA} is missing (it sits beside the repository)");
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn text(name: &str) -> String {
    String::from_utf8(file(name)).unwrap()
}

/// The inflated payload of a compressed test file.
fn payload(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(&bytes[8..]).read_to_end(&mut out).unwrap();
    out
}

/// A file holding `payload` uncompressed.
fn wrap(payload: &[u8]) -> Vec<u8> {
    let mut out = b"3DMO".to_vec();
    out.extend_from_slice(&(payload.len() as u32 + 8).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

use std::io::Read as _;

#[test]
fn every_test_file_reads() {
    let dir = std::path::Path::new(DATA);
    assert!(dir.is_dir(), "the shared test data folder {DATA} is missing");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
        if ext == "m3d" || ext == "a3d" {
            let bytes = std::fs::read(&path).unwrap();
            let m = read_any(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(!m.faces.is_empty() || !m.voxel_blocks.is_empty(), "{}: no geometry", path.display());
            n += 1;
        }
    }
    assert_eq!(n, 8);
}

#[test]
fn voxel_model_matches_its_ascii_twin() {
    let b = read(&file("voxel.m3d")).unwrap();
    let a = read_a3d(&text("voxel.a3d")).unwrap();
    assert_eq!(b.source, Source::BinaryCompressed);
    assert_eq!(a.source, Source::Ascii);
    assert_eq!(b.name, "(noname)");
    assert_eq!((b.license.as_str(), b.author.as_str()), ("MIT", "bzt"));
    assert_eq!((a.name.as_str(), a.license.as_str(), a.author.as_str()), ("(noname)", "MIT", "bzt"));
    let colors: Vec<u32> = b.voxel_types.iter().map(|t| t.color.0).collect();
    assert_eq!(colors, [0xff74_3f3f, 0xffff_ffff, 0xff26_71df]);
    assert_eq!(b.voxel_types, a.voxel_types);
    assert_eq!(b.voxel_types[0].color.rgb(), [0x3f, 0x3f, 0x74]);
    assert_eq!(b.voxel_blocks, a.voxel_blocks);
    let block = &b.voxel_blocks[0];
    assert_eq!((block.position, block.size), ([0, 0, 0], [3, 2, 2]));
    assert_eq!(b.voxel_count(), 4);
    // Layer 0: row z=0 is "1 . 1", row z=1 "0 . ."; layer 1: "2 . .", ". . .".
    assert_eq!(block.get(0, 0, 0), Some(Voxel::Type(1)));
    assert_eq!(block.get(1, 0, 0), Some(Voxel::Unset));
    assert_eq!(block.get(2, 0, 0), Some(Voxel::Type(1)));
    assert_eq!(block.get(0, 0, 1), Some(Voxel::Type(0)));
    assert_eq!(block.get(0, 1, 0), Some(Voxel::Type(2)));
    assert_eq!(block.get(2, 1, 1), Some(Voxel::Unset));
    assert_eq!(block.get(3, 0, 0), None);
    let t = b.types.unwrap();
    assert_eq!((t.coord(), t.voxel_dim(), t.voxel_pixel(), t.color(), t.skin()), (1, 1, 1, 1, 0));
}

#[test]
fn cubes() {
    let m = read(&file("cube.m3d")).unwrap();
    assert_eq!((m.vertices.len(), m.faces.len()), (8, 12));
    assert_eq!(m.name, "cube.obj");
    assert!(m.faces.iter().all(|f| f.material.is_none() && f.normals == [None; 3]));
    // int8 coordinates: 127 reads as 1.0.
    assert!(m.vertices.iter().all(|v| v.position.iter().all(|&c| c == 0.0 || c == 1.0)));

    let m = read(&file("cube_normals.m3d")).unwrap();
    assert_eq!(m.faces.len(), 12);
    assert!(m.faces.iter().all(|f| f.normals.iter().all(Option::is_some)));

    let m = read(&file("cube_usemtl.m3d")).unwrap();
    assert_eq!(m.faces.len(), 12);
    let names: Vec<&str> = m.materials.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names.len(), 3);
    assert!(m.materials.iter().all(|m| m.defined && m.diffuse().is_some()));
    assert!(m.faces.iter().all(|f| f.material.is_some()));
    assert_eq!(m.faces.iter().map(|f| f.material).collect::<std::collections::BTreeSet<_>>().len(), 3);

    let b = read(&file("cube_with_vertexcolors.m3d")).unwrap();
    let a = read_a3d(&text("cube_with_vertexcolors.a3d")).unwrap();
    assert_eq!(b.faces, a.faces);
    assert_eq!(b.vertices.len(), a.vertices.len());
    for (vb, va) in b.vertices.iter().zip(&a.vertices) {
        // The binary file stores a colour index for every vertex; the ASCII twin omits the colour
        // of the normal vectors.
        if va.color.is_some() {
            assert_eq!(vb.color, va.color);
        }
        for (x, y) in vb.position.iter().zip(&va.position) {
            assert!((x - y).abs() < 1e-6);
        }
    }
}

#[test]
fn cesium_man() {
    let m = read(&file("CesiumMan.m3d")).unwrap();
    assert!(m.vertices.len() > 100 && m.faces.len() > 100, "{} vertices {} faces", m.vertices.len(), m.faces.len());
    assert!(m.bone_count > 0 && m.skin_count > 0);
    assert!(!m.texcoords.is_empty());
    assert!(m.skipped.iter().any(|c| c.magic == "ACTN"));
    assert!(m.faces.iter().any(|f| f.texcoords.iter().all(Option::is_some)));
    assert_eq!((m.types.unwrap().coord(), m.types.unwrap().skin()), (1, 2));
}

#[test]
fn truncation_is_an_error_at_every_byte() {
    for name in ["voxel.m3d", "cube.m3d", "cube_usemtl.m3d"] {
        let bytes = file(name);
        for n in 0..bytes.len() {
            assert!(read(&bytes[..n]).is_err(), "{name} cut at {n}");
        }
        // The same, inside the payload (the header size always matches).
        let p = payload(&bytes);
        assert!(read(&wrap(&p)).is_ok());
        for n in 0..p.len() {
            assert!(read(&wrap(&p[..n])).is_err(), "{name} payload cut at {n}");
        }
    }
    let t = text("voxel.a3d");
    for n in 0..t.len() {
        // Never a panic; a cut inside the voxel rows leaves a short block, which is an error.
        let r = read_a3d(&t[..n]);
        if n >= t.find("Voxel").unwrap() + 5 && n < t.len() - 8 {
            assert!(r.is_err(), "voxel.a3d cut at {n}");
        }
    }
}

#[test]
fn forged_sizes_are_errors() {
    let p = payload(&file("voxel.m3d"));
    let voxd = p.windows(4).position(|w| w == b"VOXD").unwrap();
    // The block's size bytes (name u8, 3 × i8 position, then sizes) claim 127³ voxels.
    let mut q = p.clone();
    q[voxd + 8 + 4..voxd + 8 + 7].copy_from_slice(&[127, 127, 127]);
    let e = read(&wrap(&q)).unwrap_err().to_string();
    assert!(e.contains("VOXD chunk") && e.contains("cannot be encoded"), "{e}");
    // A chunk length past the end.
    let mut q = p.clone();
    q[voxd + 4..voxd + 8].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = read(&wrap(&q)).unwrap_err().to_string();
    assert!(e.contains("VOXD chunk declares"), "{e}");
    // A chunk length below its header.
    q[voxd + 4..voxd + 8].copy_from_slice(&3u32.to_le_bytes());
    assert!(read(&wrap(&q)).unwrap_err().to_string().contains("less than its 8-byte header"));
    // A voxel type past VOXT.
    let mut q = p.clone();
    let rle = voxd + 8 + 9;
    assert_eq!(q[rle], 3);
    q[rle + 1] = 7;
    let e = read(&wrap(&q)).unwrap_err();
    let M3dError::Read(r) = &e else { panic!("{e}") };
    assert_eq!(r.offset, rle as u64 + 1 + 8, "a file offset: the payload starts at byte 8");
    assert!(e.to_string().contains("voxel type 7 is out of range"), "{e}");
    // A CMAP that is not whole colours.
    let mut q = p.clone();
    let cmap = p.windows(4).position(|w| w == b"CMAP").unwrap();
    q[cmap + 4] = 19;
    assert!(read(&wrap(&q)).is_err());
    // A string offset past the table.
    let mut q = p.clone();
    q[voxd + 8] = 200;
    assert!(read(&wrap(&q)).unwrap_err().to_string().contains("outside the string table"));
    // No OMD3.
    let mut q = p.clone();
    let n = q.len();
    q[n - 4..].copy_from_slice(b"XXXX");
    assert!(read(&wrap(&q)).is_err());
    // File size in the header larger than the file.
    let mut f = file("cube.m3d");
    f[4] = 0xFF;
    assert!(read(&f).unwrap_err().to_string().contains("header says the file is"));

    let mesh = payload(&file("cube.m3d"));
    let at = mesh.windows(4).position(|w| w == b"MESH").unwrap();
    let mut q = mesh.clone();
    q[at + 9] = 200;
    let e = read(&wrap(&q)).unwrap_err().to_string();
    assert!(e.contains("MESH chunk") && e.contains("vertex index 200 is out of range"), "{e}");
    // VRTS count forged: a length that is not whole records.
    let at = mesh.windows(4).position(|w| w == b"VRTS").unwrap();
    let mut q = mesh.clone();
    q.insert(at + 8, 0);
    q[at + 4] += 1;
    assert!(read(&wrap(&q)).unwrap_err().to_string().contains("whole number"));
}

#[test]
fn zlib_bomb_is_refused_without_inflating_it() {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    z.write_all(b"HEAD").unwrap();
    for _ in 0..100 {
        z.write_all(&zeros).unwrap();
    }
    let compressed = z.finish().unwrap();
    assert!(compressed.len() < 1 << 20);
    let mut f = b"3DMO".to_vec();
    f.extend_from_slice(&(compressed.len() as u32 + 8).to_le_bytes());
    f.extend_from_slice(&compressed);
    let e = read(&f).unwrap_err();
    assert!(matches!(e, M3dError::InflateLimit { offset: 8, .. }), "{e}");
    assert!(e.to_string().contains("zip bomb"));
    assert_eq!(inflate_limit(compressed.len()), (compressed.len() * 64).max(1 << 20));
}

#[test]
fn corrupt_zlib_and_magic() {
    let mut f = file("voxel.m3d");
    f[20] ^= 0xFF;
    f[30] ^= 0xFF;
    assert!(read(&f).is_err());
    assert!(read(b"3dmodel 1\n").unwrap_err().to_string().contains("ASCII"));
    assert!(read(b"GIF89a..").unwrap_err().to_string().contains("not a Model 3D"));
    assert!(read_any(b"3dmo\xff").is_err());
    assert!(is_m3d(b"3DMO") && is_m3d(b"3dmodel 1") && !is_m3d(b"PK"));
}

#[test]
fn every_width_reads() {
    // A synthetic uncompressed model for each vc/vi/si/ci/vd/vp combination that matters.
    for vc in 0..4u32 {
        for (vi, si) in [(0u32, 0u32), (1, 1), (2, 2)] {
            for ci in [0u32, 1, 2, 3] {
                let m = synthetic(vc, vi, si, ci);
                let r = read(&wrap(&m)).unwrap_or_else(|e| panic!("vc {vc} vi {vi} si {si} ci {ci}: {e}"));
                assert_eq!(r.vertices.len(), 3);
                assert_eq!(r.faces.len(), 1);
                assert_eq!(r.faces[0].vertices, [0, 1, 2]);
                assert!((r.vertices[1].position[0] - 1.0).abs() < 1e-6, "vc {vc}: {:?}", r.vertices[1]);
                assert!((r.vertices[2].position[1] + 1.0).abs() < 1e-6);
                let expect = match ci {
                    3 => None,
                    _ => Some(Rgba(0xff00_00ff)),
                };
                assert_eq!(r.vertices[0].color, expect, "ci {ci}");
                assert_eq!(r.materials[0].name, "mat");
                assert_eq!(r.faces[0].material, Some(0));
            }
        }
    }
}

fn idx(w: &mut Vec<u8>, field: u32, v: u64) {
    match field {
        0 => w.push(v as u8),
        1 => w.extend_from_slice(&(v as u16).to_le_bytes()),
        2 => w.extend_from_slice(&(v as u32).to_le_bytes()),
        _ => {}
    }
}

fn chunk(out: &mut Vec<u8>, magic: &[u8; 4], body: &[u8]) {
    out.extend_from_slice(magic);
    out.extend_from_slice(&(body.len() as u32 + 8).to_le_bytes());
    out.extend_from_slice(body);
}

fn synthetic(vc: u32, vi: u32, si: u32, ci: u32) -> Vec<u8> {
    let types = vc | vi << 2 | si << 4 | ci << 6 | 3 << 8 | 3 << 10 | 3 << 14 | 3 << 18 | 3 << 20 | 3 << 22 | 3 << 24;
    let strtab = b"t\0\0\0\0mat\0";
    let mut p = Vec::new();
    let mut head = 1.0f32.to_le_bytes().to_vec();
    head.extend_from_slice(&types.to_le_bytes());
    head.extend_from_slice(strtab);
    chunk(&mut p, b"HEAD", &head);
    if ci == 0 || ci == 1 {
        let mut c = Vec::new();
        c.extend_from_slice(&0xff00_00ffu32.to_le_bytes());
        chunk(&mut p, b"CMAP", &c);
    }
    let mut v = Vec::new();
    for (x, y) in [(0.0f64, 0.0f64), (1.0, 0.0), (0.0, -1.0)] {
        for c in [x, y, 0.0, 1.0] {
            match vc {
                0 => v.push((c * 127.0) as i8 as u8),
                1 => v.extend_from_slice(&((c * 32767.0) as i16).to_le_bytes()),
                2 => v.extend_from_slice(&(c as f32).to_le_bytes()),
                _ => v.extend_from_slice(&c.to_le_bytes()),
            }
        }
        match ci {
            2 => v.extend_from_slice(&0xff00_00ffu32.to_le_bytes()),
            3 => {}
            f => idx(&mut v, f, 0),
        }
    }
    chunk(&mut p, b"VRTS", &v);
    let mut mt = Vec::new();
    idx(&mut mt, si, 5);
    mt.push(prop::NS);
    mt.extend_from_slice(&2.0f32.to_le_bytes());
    chunk(&mut p, b"MTRL", &mt);
    let mut mesh = vec![0];
    idx(&mut mesh, si, 5);
    mesh.push(0x30);
    for i in 0..3 {
        idx(&mut mesh, vi, i);
    }
    chunk(&mut p, b"MESH", &mesh);
    p.extend_from_slice(b"OMD3");
    p
}

#[test]
fn writer_round_trips() {
    let mut m = read(&file("voxel.m3d")).unwrap();
    m.voxel_types[1].name = Some("white stone/2".into());
    m.voxel_types[2].shape = 300;
    m.voxel_types[2].rotation = 3;
    m.voxel_types[0].items = vec![VoxelItem { count: 5, name: Some("coin".into()) }];
    m.voxel_blocks.push(VoxelBlock {
        name: Some("second".into()),
        position: [-200, 5, 70],
        size: [300, 1, 1],
        uncertainty: 10,
        group: 2,
        data: (0..300).map(|i| [0, 1, 2, VOXEL_UNSET, VOXEL_CLEAR][(i / 7) % 5]).collect(),
    });
    let bytes = write_voxel_model(&m).unwrap();
    let r = read(&bytes).unwrap();
    assert_eq!(r.voxel_blocks, m.voxel_blocks);
    assert_eq!(r.voxel_types[1].name.as_deref(), Some("white_stone_2"));
    assert_eq!(r.voxel_types[2].shape, 300);
    assert_eq!(r.voxel_types[2].rotation, 3);
    assert_eq!(r.voxel_types[0].items, m.voxel_types[0].items);
    assert_eq!(r.types.unwrap().voxel_dim(), 2);
    // Many types: 16-bit pixels.
    let m = Model {
        voxel_types: (0..300).map(|i| VoxelType { color: Rgba(i), ..VoxelType::default() }).collect(),
        voxel_blocks: vec![VoxelBlock {
            size: [300, 2, 1],
            data: (0..600).map(|i| if i < 300 { i as u16 } else { VOXEL_CLEAR }).collect(),
            ..VoxelBlock::default()
        }],
        ..Model::default()
    };
    let r = read(&write_voxel_model(&m).unwrap()).unwrap();
    assert_eq!(r.types.unwrap().voxel_pixel(), 2);
    assert_eq!(r.voxel_blocks, m.voxel_blocks);
    assert_eq!(r.voxel_types, m.voxel_types);
}

#[test]
fn ascii_details() {
    let t = text("cube_with_vertexcolors.a3d");
    assert!(t.contains("\r\n"));
    let lf = t.replace("\r\n", "\n");
    assert_eq!(read_a3d(&t).unwrap(), read_a3d(&lf).unwrap());
    let src = "3dmodel 2\nname\nlic\nme\ndesc line 1\ndesc line 2\n\nVoxTypes\n#ff0000ff/02/101 red_stone\n#ff00ff00\n\n\
               Material red_stone\nKd #ff0000ff\nmap_Kd tex1\nbogus 1\n\nVoxel blk\npos -1 0 -1\ndim 2 1 2\nuncertain 50 3\n\
               layer\n0 -\n. 1\n\nSomething\n1 2 3\n\nEnd\n";
    let m = read_a3d(src).unwrap();
    assert_eq!(m.scale, 2.0);
    assert_eq!(m.description, "desc line 1\ndesc line 2");
    assert_eq!(m.voxel_types[0].rotation, 2);
    assert_eq!(m.voxel_types[0].shape, 0x101);
    assert_eq!(m.voxel_types[0].name.as_deref(), Some("red_stone"));
    assert_eq!(m.materials[0].diffuse(), Some(Rgba(0xff00_00ff)));
    assert_eq!(m.materials[0].texture_maps().collect::<Vec<_>>(), ["tex1"]);
    let b = &m.voxel_blocks[0];
    assert_eq!((b.position, b.size, b.uncertainty, b.group), ([-1, 0, -1], [2, 1, 2], 127, 3));
    assert_eq!(b.data, [0, VOXEL_CLEAR, VOXEL_UNSET, 1]);
    assert_eq!(m.skipped.len(), 1);
    assert_eq!(m.warnings.len(), 2, "{:?}", m.warnings);
    for bad in [
        "3dmodel 1\nn\nl\na\n\nVoxTypes\n#ff000000\n\nVoxel\ndim 2 1 1\nlayer\n0 1\n",
        "3dmodel 1\nn\nl\na\n\nVoxTypes\n#ff000000\n\nVoxel\ndim 2 1 1\nlayer\n0\n",
        "3dmodel 1\nn\nl\na\n\nVoxTypes\n#ff000000\n\nVoxel\ndim 2 2 1\nlayer\n0 0\n",
        "3dmodel 1\nn\nl\na\n\nVoxTypes\n#ff000000\n\nVoxel\ndim 99999 99999 99999\nlayer\n0 0\n",
        "3dmodel 1\nn\nl\na\n\nVertex\n0 0 0 1\n\nMesh\n0 0 1\n",
        "3dmodel 1\nn\nl\na\n\nVertex\n0 0 0 1\n\nMesh\n0 0 0 0\n",
        "3dmodel 1\nn\nl\n",
        "3dmode",
    ] {
        assert!(read_a3d(bad).is_err(), "{bad:?}");
    }
    let e = read_a3d("3dmodel 1\nn\nl\na\n\nVertex\n0 0 0 1\n\nMesh\n0 0 5\n").unwrap_err();
    assert_eq!(e, M3dError::Ascii { line: 10, reason: "vertex 5 is out of range (1 vertices)".into() });
}

#[test]
fn index_widths_follow_the_reference() {
    use crate::format::bin::Reader;
    let mut r = Reader::new(&[253, 254, 255, 0xFD, 0xFF, 0xFE, 0xFF, 0xFF, 0xFF], "t");
    assert_eq!(read_mod::index(&mut r, 1).unwrap(), 253);
    assert_eq!(read_mod::index(&mut r, 1).unwrap(), -2);
    assert_eq!(read_mod::index(&mut r, 1).unwrap(), -1);
    assert_eq!(read_mod::index(&mut r, 2).unwrap(), 65533);
    assert_eq!(read_mod::index(&mut r, 2).unwrap(), -2);
    assert_eq!(read_mod::index(&mut r, 0).unwrap(), -1);
    let e = read_mod::index(&mut r, 4).unwrap_err();
    assert!(matches!(e.kind, ReadErrorKind::Truncated { .. }));
}

#[test]
fn mutated_files_never_panic() {
    // A small deterministic xorshift: mutate 1–4 bytes of each payload many times.
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for name in ["voxel.m3d", "cube.m3d", "cube_normals.m3d", "cube_usemtl.m3d", "cube_with_vertexcolors.m3d"] {
        let p = payload(&file(name));
        for _ in 0..3000 {
            let mut q = p.clone();
            for _ in 0..1 + next() % 4 {
                let i = (next() % q.len() as u64) as usize;
                q[i] = next() as u8;
            }
            if let Ok(m) = read(&wrap(&q)) {
                for f in &m.faces {
                    assert!(f.vertices.iter().all(|&v| (v as usize) < m.vertices.len()));
                }
                for b in &m.voxel_blocks {
                    assert_eq!(b.data.len() as u64, b.size.iter().map(|&x| u64::from(x)).product::<u64>());
                }
            }
        }
    }
    for name in ["voxel.a3d", "cube_with_vertexcolors.a3d"] {
        let t = file(name);
        for _ in 0..3000 {
            let mut q = t.clone();
            let i = (next() % q.len() as u64) as usize;
            q[i] = b"0123456789 .-#\n/{}layerdimposVoxel"[(next() % 34) as usize];
            let _ = read_any(&q);
        }
    }
}

#[test]
fn preview_chunk_before_either_payload() {
    let bytes = file("voxel.m3d");
    let preview = b"\x89PNG\r\n\x1a\nfake preview";
    for body in [bytes[8..].to_vec(), payload(&bytes)] {
        let mut f = b"3DMO\0\0\0\0PRVW".to_vec();
        f.extend_from_slice(&(preview.len() as u32 + 8).to_le_bytes());
        f.extend_from_slice(preview);
        f.extend_from_slice(&body);
        let n = f.len() as u32;
        f[4..8].copy_from_slice(&n.to_le_bytes());
        let m = read(&f).unwrap();
        assert_eq!(m.preview.as_deref(), Some(&preview[..]));
        assert_eq!(m.voxel_count(), 4);
        // A preview longer than the file.
        f[12] = 0xFF;
        assert!(read(&f).is_err());
    }
}
