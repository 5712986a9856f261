//! PMF write/read throughput on a generated 64-chunk map, and our LZ4 frames against the `lz4`
//! command-line tool on the same uncompressed bytes. Then LZ4 encoders side by side (lz4_flex's,
//! ours, `lz4 -1`, `lz4 -9`) on those bytes, on the whole-level visibility shape (repeated far
//! lists), and on the file named by `PMFEDIT_CHUNK_BLOCKS` if set. Prints figures; no targets
//! are asserted.
//!
//! `cargo bench -p pmfedit-core --bench pmf_io`
//! `PMFEDIT_CHUNK_BLOCKS=blocks.bin cargo bench -p pmfedit-core --bench pmf_io` (`pmfc bench --chunk-blocks`)
//! `PMFEDIT_PMF=map.pmf cargo bench -p pmfedit-core --bench pmf_io`: only the export's frames, one by
//! one, ours against `lz4 -1` by CPU time (README, LZ4 by CPU time on a real export)

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pmfedit_core::format::bin::Reader;
use pmfedit_core::format::pmf::{
    self, ChildIndex, Chunk, ChunkClient, ChunkCommon, ChunkServer, ClientCube, ClientGeometry, ClientGeometryCube,
    Cube, CubeKind, File, GeometryCube, GridSize, Level, Lightmap, Material, ParentCube, ServerCube, Vertex,
};
use pmfedit_core::format::{lz4_block, lz4f};

/// A deterministic 4×4×4-chunk map: each chunk is a two-level octree with about half of its 64
/// small cubes solid, every solid cube with six quads, and a 32×32 lightmap.
fn generate() -> File {
    let grid = GridSize { y: 4, x: 4, z: 4 };
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let chunks = (0..grid.len())
        .map(|_| {
            let mut cubes = vec![Cube { kind: CubeKind::Parent(ParentCube::default()), ..Cube::default() }];
            let mut client = vec![ClientCube::default()];
            let mut vertices = Vec::new();
            let mut root_children = [None; 8];
            for child in &mut root_children {
                // Never 0: the root is cube 0.
                *child = ChildIndex::new(cubes.len() as u32);
                let parent_at = cubes.len();
                cubes.push(Cube { kind: CubeKind::Parent(ParentCube::default()), ..Cube::default() });
                client.push(ClientCube::default());
                let mut kids = [None; 8];
                for kid in &mut kids {
                    if rand() % 2 == 0 {
                        continue;
                    }
                    *kid = ChildIndex::new(cubes.len() as u32);
                    cubes.push(Cube {
                        kind: CubeKind::Geometry(GeometryCube { material: (rand() % 2) as u8, ..Default::default() }),
                        ..Cube::default()
                    });
                    let first_vertex = vertices.len() as u32;
                    for q in 0..24 {
                        let f = (rand() % 1000) as f32 / 100.0;
                        vertices.push(Vertex {
                            position: [f, f + 1.0, q as f32],
                            uv: [f, 1.0],
                            lightmap_uv: [0.5, f / 10.0],
                        });
                    }
                    client.push(ClientCube {
                        geometry: ClientGeometry::Geometry(ClientGeometryCube {
                            lightmap: 0,
                            first_vertex,
                            faces: 0x3F,
                        }),
                        ..ClientCube::default()
                    });
                }
                cubes[parent_at].kind = CubeKind::Parent(ParentCube { children: kids });
            }
            cubes[0].kind = CubeKind::Parent(ParentCube { children: root_children });
            let luxels = (0..Lightmap::byte_len(5)).map(|i| ((i * 31 + (rand() % 8) as usize) % 256) as u8).collect();
            let n = cubes.len();
            Chunk {
                common: ChunkCommon {
                    used_materials: vec!["stone".into(), "grass".into()],
                    used_physics_materials: vec!["rock".into()],
                    used_sound_materials: vec!["0".into()],
                    cubes,
                    ..ChunkCommon::default()
                },
                client: ChunkClient {
                    lightmaps: vec![Lightmap { size_exp: 5, luxels }],
                    vertices,
                    cubes: client,
                    ..ChunkClient::default()
                },
                server: ChunkServer { cubes: vec![ServerCube::default(); n], ..ChunkServer::default() },
            }
        })
        .collect();
    let mut level = Level { chunk_size_exp: 4, grid, chunks, ..Level::default() };
    level.common.materials =
        ["stone", "grass"].iter().map(|n| Material { name: n.to_string(), ..Default::default() }).collect();
    level.client.materials = vec![Default::default(); 2];
    File { levels: vec![level], ..File::default() }
}

/// The decompressed bytes of every LZ4 block in the file, concatenated (walks the level layout).
fn uncompressed_blocks(bytes: &[u8]) -> Vec<u8> {
    uncompressed_frames(bytes).concat()
}

/// The decompressed bytes of each LZ4 frame in the file, in file order.
fn uncompressed_frames(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut r = Reader::new(bytes, "bench");
    r.skip(12).unwrap();
    for _ in 0..4 {
        r.cstr().unwrap();
    }
    let gamemodes = r.u8().unwrap();
    for _ in 0..gamemodes {
        r.cstr().unwrap();
    }
    let n = r.u32().unwrap() as usize;
    r.skip(n).unwrap();
    let n = r.u32().unwrap() as usize;
    r.skip(n).unwrap();
    let ext = r.u16().unwrap() as usize;
    let sizes: Vec<usize> = (0..ext).map(|_| r.u32().unwrap() as usize).collect();
    for s in sizes {
        r.skip(s).unwrap();
    }
    let levels = r.u8().unwrap() as usize;
    let sizes: Vec<usize> = (0..levels).map(|_| r.u32().unwrap() as usize).collect();
    let mut out = Vec::new();
    let mut frame = |r: &mut Reader<'_>, compressed: u32, decompressed: u32| {
        let sub = r.sub_same(compressed as usize).unwrap();
        out.push(lz4f::decompress(&sub, decompressed.into()).unwrap());
    };
    for s in sizes {
        let mut l = r.sub_same(s).unwrap();
        l.u8().unwrap();
        let sz: Vec<u32> = (0..6).map(|_| l.u32().unwrap()).collect();
        for k in 0..3 {
            frame(&mut l, sz[k], sz[k + 3]);
        }
        l.u8().unwrap();
        let grid = GridSize::from_bits(l.u32().unwrap());
        l.u32().unwrap();
        let chunk_sizes: Vec<u32> = (0..grid.len() * 6).map(|_| l.u32().unwrap()).collect();
        for c in chunk_sizes.chunks(6) {
            for k in 0..3 {
                frame(&mut l, c[k], c[k + 3]);
            }
        }
    }
    out
}

fn time<T>(min: Duration, mut f: impl FnMut() -> T) -> (Duration, u32) {
    let start = Instant::now();
    let mut n = 0;
    while start.elapsed() < min || n < 3 {
        std::hint::black_box(f());
        n += 1;
    }
    (start.elapsed() / n, n)
}

fn mb_s(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / 1e6
}

/// Runs `lz4 args` with `input` on stdin `reps` times; the mean time per run.
fn lz4_cli(args: &[&str], input: &[u8], reps: u32) -> Option<Duration> {
    let start = Instant::now();
    for _ in 0..reps {
        lz4_cli_output(args, input)?;
    }
    Some(start.elapsed() / reps)
}

/// CPU time this thread has run (Linux `/proc/thread-self/schedstat`, nanoseconds): on a shared,
/// loaded machine the wall time of a run says more about the other processes than about it.
fn thread_cpu() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(Duration::from_nanos(s.split_whitespace().next()?.parse().ok()?))
}

/// User + system CPU time of `lz4 args file > /dev/null`, from bash's `times` (the children's line).
fn lz4_cli_cpu(args: &str, file: &std::path::Path) -> Option<Duration> {
    let script = format!("lz4 {args} -c '{}' > /dev/null || exit 1; times", file.display());
    let out = Command::new("bash").args(["-c", &script]).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    // "0m0.440s 0m0.081s": minutes and seconds, user then system.
    let secs = |t: &str| -> Option<f64> {
        let (m, s) = t.trim_end_matches('s').split_once('m')?;
        Some(m.parse::<f64>().ok()? * 60.0 + s.parse::<f64>().ok()?)
    };
    let line = text.lines().nth(1)?;
    let (u, s) = line.split_once(' ')?;
    Some(Duration::from_secs_f64(secs(u)? + secs(s)?))
}

/// An export's frames compressed one by one as `pmf::write` does, by CPU time on this thread,
/// against `lz4 -1` on the same bytes (concatenated in one file) by its CPU time.
fn export_frames(path: &std::path::Path) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let frames = uncompressed_frames(&bytes);
    let raw: usize = frames.iter().map(Vec::len).sum();
    let Some(before) = thread_cpu() else { return println!("no /proc/thread-self/schedstat: no CPU times") };
    // One compressor for all frames, as each worker of an export keeps one.
    let mut tables = lz4_block::BlockCompressor::new(0);
    let packed: usize = frames.iter().map(|f| lz4f::compress_with(&mut tables, f).len()).sum();
    let ours = thread_cpu().unwrap_or(before) - before;
    println!("{}: {} frames, {raw} bytes uncompressed", path.display(), frames.len());
    let row = |who: &str, n: usize, t: Duration| {
        println!(
            "  {who:<9} {n:>11} bytes ({:>6.2} %), compress {:>7.1} MB/s by CPU ({:.3} s)",
            n as f64 * 100.0 / raw as f64,
            mb_s(raw, t),
            t.as_secs_f64()
        );
    };
    row("ours", packed, ours);
    let dir = tempfile::tempdir().expect("temp dir");
    let concat = dir.path().join("blocks.bin");
    std::fs::write(&concat, frames.concat()).expect("temp file");
    let cli = std::fs::read(&concat).ok().and_then(|b| lz4_cli_output(&["-1", "-c"], &b));
    match (lz4_cli_cpu("-1", &concat), cli) {
        (Some(t), Some(out)) => {
            row("lz4 -1", out.len(), t);
            println!("  ours/lz4 -1 by CPU: {:.2}×", t.as_secs_f64() / ours.as_secs_f64());
        }
        _ => println!("  lz4 -1: command-line tool (or bash) not found"),
    }
}

fn main() {
    // `PMFEDIT_PMF=map.pmf`: only the per-frame comparison on that export.
    if let Some(path) = std::env::var_os("PMFEDIT_PMF") {
        return export_frames(std::path::Path::new(&path));
    }
    let file = generate();
    let bytes = pmf::write(&file).expect("generated map writes");
    let raw = uncompressed_blocks(&bytes);
    let min = Duration::from_millis(1500);
    println!("generated map: 64 chunks, {} bytes compressed, {} bytes uncompressed", bytes.len(), raw.len());

    let (w, n) = time(min, || pmf::write(&file).unwrap());
    println!(
        "pmf write: {:>8.2} ms  {:>7.1} MB/s (uncompressed)  [{n} runs]",
        w.as_secs_f64() * 1e3,
        mb_s(raw.len(), w)
    );
    let (r, n) = time(min, || pmf::read(&bytes).unwrap());
    println!(
        "pmf read:  {:>8.2} ms  {:>7.1} MB/s (uncompressed)  [{n} runs]",
        r.as_secs_f64() * 1e3,
        mb_s(raw.len(), r)
    );

    let (c, _) = time(min, || lz4f::compress(&raw));
    let frame = lz4f::compress(&raw);
    let (d, _) = time(min, || lz4f::decompress(&Reader::new(&frame, "bench"), raw.len() as u64).unwrap());
    println!(
        "ours  lz4 frame: compress {:>7.1} MB/s, decompress {:>7.1} MB/s, ratio {:.3}",
        mb_s(raw.len(), c),
        mb_s(raw.len(), d),
        frame.len() as f64 / raw.len() as f64
    );
    // The CLI pays process start-up; a 1×-input run with empty input measures that and is subtracted.
    let reps = 20;
    match (lz4_cli(&["-1", "-c"], &raw, reps), lz4_cli(&["-1", "-c"], b"", reps)) {
        (Some(tc), Some(t0)) => {
            let theirs_c = tc.saturating_sub(t0).max(Duration::from_micros(1));
            let cli_frame = lz4_cli_output(&["-1", "-c"], &raw).unwrap_or_default();
            let theirs_d =
                lz4_cli(&["-d", "-c"], &cli_frame, reps).map(|t| t.saturating_sub(t0).max(Duration::from_micros(1)));
            println!(
                "lz4 CLI   frame: compress {:>7.1} MB/s, decompress {:>7.1} MB/s, ratio {:.3} (start-up {:.2} ms subtracted)",
                mb_s(raw.len(), theirs_c),
                theirs_d.map_or(f64::NAN, |t| mb_s(raw.len(), t)),
                cli_frame.len() as f64 / raw.len() as f64,
                t0.as_secs_f64() * 1e3
            );
            println!(
                "ours/theirs: compress {:.2}×, decompress {:.2}×",
                theirs_c.as_secs_f64() / c.as_secs_f64(),
                theirs_d.map_or(f64::NAN, |t| t.as_secs_f64() / d.as_secs_f64())
            );
        }
        _ => println!("lz4 command-line tool not found (apt-get install lz4): no comparison"),
    }

    // Encoders side by side: lz4_flex's (what `lz4f::compress` used before), ours, `lz4 -1`/`-9`.
    println!();
    encoders("generated map, chunk blocks", &raw, min);
    encoders("far lists: 300 cells × 4 096 (chunk, 0)", &lz4_block::far_list_sample(300, 4096), min);
    // The chunk blocks of a real export: `pmfc bench … --chunk-blocks FILE`.
    if let Some(path) = std::env::var_os("PMFEDIT_CHUNK_BLOCKS") {
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.to_string_lossy()));
        encoders(&format!("{}", path.to_string_lossy()), &bytes, min);
    }
}

/// Prints the compressed size and the compression speed of each encoder on `raw`.
fn encoders(name: &str, raw: &[u8], min: Duration) {
    println!("{name}: {} bytes", raw.len());
    let flex = || {
        let mut enc =
            lz4_flex::frame::FrameEncoder::with_frame_info(flex_info(raw.len()), Vec::with_capacity(raw.len() / 2));
        enc.write_all(raw).unwrap();
        enc.finish().unwrap()
    };
    let row = |who: &str, bytes: usize, t: Duration| {
        println!(
            "  {who:<9} {:>11} bytes ({:>6.2} %), compress {:>7.1} MB/s",
            bytes,
            bytes as f64 * 100.0 / raw.len() as f64,
            mb_s(raw.len(), t)
        );
    };
    let (t, _) = time(min, flex);
    row("lz4_flex", flex().len(), t);
    let (t, _) = time(min, || lz4f::compress(raw));
    row("ours", lz4f::compress(raw).len(), t);
    let t0 = lz4_cli(&["-1", "-c"], b"", 5);
    for level in ["-1", "-9"] {
        let reps = if raw.len() > 20 << 20 { 2 } else { 5 };
        match (lz4_cli(&[level, "-c"], raw, reps), t0, lz4_cli_output(&[level, "-c"], raw)) {
            (Some(t), Some(t0), Some(out)) => row(&format!("lz4 {level}"), out.len(), t.saturating_sub(t0)),
            _ => println!("  lz4 {level}: command-line tool not found"),
        }
    }
}

/// What `lz4 args` writes for `input` on stdin.
fn lz4_cli_output(args: &[&str], input: &[u8]) -> Option<Vec<u8>> {
    let mut child = Command::new("lz4")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().ok()?;
    writer.join().ok()?.ok()?;
    out.status.success().then_some(out.stdout)
}

/// lz4_flex's frame settings as `lz4f::compress` used them before our own encoder.
fn flex_info(len: usize) -> lz4_flex::frame::FrameInfo {
    lz4_flex::frame::FrameInfo::new()
        .block_mode(lz4_flex::frame::BlockMode::Independent)
        .content_checksum(true)
        .content_size(Some(len as u64))
}
