//! `pmfc new`, `pmfc build`, `pmfc watch` and `pmfc bench`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use glam::IVec3;

use pmfedit_bake::cache;
use pmfedit_bake::compile::{
    CompileSettings, StageTimes, bake_chunk, bake_chunk_cached, bake_chunk_timed, compile_full, level_chunks,
    level_vis, write_full_to,
};
use pmfedit_bake::deps::{dirty_chunks, draft_chunks};
use pmfedit_bake::digest::{Digest, FileDigest};
use pmfedit_bake::export::{self, ExportError};
use pmfedit_bake::jobs::Threads;
use pmfedit_bake::memory::{self, RecordBytes, mib};
use pmfedit_bake::rebuild::{ChunkState, Plan, Rebuild};
use pmfedit_bake::scheduler::{Scheduler, Stage};
use pmfedit_bake::vis::VisCache;
use pmfedit_core::edit::{CubeOp, Edit, History};
use pmfedit_core::format::pmf;
use pmfedit_core::map::Map;
use pmfedit_core::map::coords::CubeAddr;
use pmfedit_core::map::octree::Cube;
use pmfedit_core::project::Project;
use pmfedit_core::sample;

use super::{Failure, fail};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Sample {
    /// The small, rich demo map (the editor's default).
    Demo,
    /// Procedural terrain (see `--size`).
    Terrain,
    /// One empty level and the starter library (what the editor's File → New makes).
    Empty,
    /// A building of rooms, corridors, doors and four storeys (16 × 2 × 16 chunks, `--seed`).
    Indoor,
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The project folder to create.
    project: PathBuf,
    #[arg(long, value_enum, default_value = "demo")]
    sample: Sample,
    /// Terrain size in chunks: X,Y,Z.
    #[arg(long, default_value = "8,2,8")]
    size: String,
    /// Seed of the terrain and indoor samples.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The project folder.
    project: PathBuf,
    /// The `.pmf` to write.
    #[arg(short, long)]
    out: PathBuf,
    /// Worker threads (default: the machine's cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Header creation time (Unix seconds); default now. Fix it for reproducible builds.
    #[arg(long)]
    timestamp: Option<u64>,
    /// Treat missing or unusable (empty, unreadable, undecodable) resources as errors.
    #[arg(long)]
    strict: bool,
    /// No progress line.
    #[arg(long, short)]
    quiet: bool,
    /// Portal limits on far visibility for paths of up to this many chunks (0: none; default
    /// 16). Tighter lists in buildings, dearer to compute.
    #[arg(long)]
    portal_steps: Option<u32>,
    /// Portal limits only on levels whose grid has at most this many chunks (default 1024).
    #[arg(long)]
    portal_max_chunks: Option<u32>,
    /// Air cells that would cull less than this percent of the level's geometry cubes write no
    /// visibility lists (they cull nothing instead; default 10, 0: every cell writes its lists).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=100))]
    vis_min_culled: Option<u8>,
    /// Neither read nor write the project's bake cache (`<project>/bakes/`): bake every chunk.
    #[arg(long)]
    no_cache: bool,
    /// How hard the LZ4 frames are searched: `fast` (about `lz4 -1`'s speed) or `high` (about a
    /// third smaller, several times slower: for a map that is shipped). The same map either way;
    /// any LZ4 decoder reads both.
    #[arg(long, value_enum, default_value = "fast")]
    compression: CompressionArg,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The project folder.
    project: PathBuf,
    /// The `.pmf` to keep up to date.
    #[arg(short, long)]
    out: PathBuf,
    #[arg(long)]
    threads: Option<usize>,
    #[arg(long)]
    timestamp: Option<u64>,
    /// Stop after this many rebuilds (for scripts and tests).
    #[arg(long)]
    max_builds: Option<usize>,
    /// Neither read nor write the project's bake cache (`<project>/bakes/`).
    #[arg(long)]
    no_cache: bool,
    /// How hard the LZ4 frames are searched (see `pmfc build --help`).
    #[arg(long, value_enum, default_value = "fast")]
    compression: CompressionArg,
}

/// `--compression`'s values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompressionArg {
    /// One greedy pass (the default; the editor's export).
    Fast,
    /// Hash chains and lazy matching: a smaller file, several times slower.
    High,
}

impl From<CompressionArg> for pmf::Compression {
    fn from(c: CompressionArg) -> Self {
        match c {
            CompressionArg::Fast => pmf::Compression::Fast,
            CompressionArg::High => pmf::Compression::High,
        }
    }
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Terrain size in chunks: X,Y,Z.
    #[arg(long, default_value = "32,4,32")]
    size: String,
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Single-cube edits to time.
    #[arg(long, default_value_t = 20)]
    edits: usize,
    /// Also write the uncompressed chunk blocks the export compresses to this file (to time the
    /// `lz4` command-line tool on the same bytes).
    #[arg(long)]
    chunk_blocks: Option<PathBuf>,
}

fn parse_size(s: &str) -> Result<[u32; 3], String> {
    let v: Vec<u32> = s
        .split(',')
        .map(|t| t.trim().parse::<u32>().map_err(|_| format!("{t:?} is not a count")))
        .collect::<Result<_, _>>()?;
    match v.as_slice() {
        &[x, y, z] if x > 0 && y > 0 && z > 0 => Ok([x, y, z]),
        _ => Err(format!("{s:?}: expected X,Y,Z chunk counts, each at least 1")),
    }
}

fn threads(n: Option<usize>) -> usize {
    n.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get())).max(1)
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Opens the project, its chunk files read on every core.
fn open(project: &Path) -> Result<(Project, Map), Failure> {
    Project::open_with(project, &Threads::all()).map_err(|e| Failure(e.to_string()))
}

pub fn new(a: NewArgs) -> Result<(), Failure> {
    let map = match a.sample {
        Sample::Demo => sample::demo(),
        Sample::Terrain => {
            let [x, y, z] = parse_size(&a.size).map_err(|e| fail(&a.project, e))?;
            sample::terrain(x, y, z, a.seed)
        }
        Sample::Indoor => sample::indoor(a.seed),
        Sample::Empty => {
            sample::empty(a.project.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())
        }
    };
    let mut p = Project::create(&a.project).map_err(|e| Failure(e.to_string()))?;
    let r = p.save(&map).map_err(|e| Failure(e.to_string()))?;
    eprintln!("{}: new project, {} chunk files", a.project.display(), r.chunk_files_written);
    Ok(())
}

/// Resource roots: the project folder, then `assets/` in the current directory and beside the
/// workspace.
fn resource_roots(project: &Path) -> Vec<PathBuf> {
    let mut assets = vec![PathBuf::from("assets")];
    if let Some(d) = option_env!("CARGO_MANIFEST_DIR") {
        assets.push(Path::new(d).join("../assets"));
    }
    export::resource_roots(Some(project), assets)
}

/// A headless rebuild engine (full bakes only) on `threads` workers, starting with every chunk of
/// `map`.
fn engine(map: Arc<Map>, settings: &CompileSettings, threads: usize) -> Rebuild {
    Rebuild::new(Scheduler::new(threads, settings.clone(), Arc::new(|| {})), Plan::FinalOnly, map)
}

/// [`engine`] starting from `bakes` (made earlier of this very map).
fn engine_with(
    map: Arc<Map>,
    settings: &CompileSettings,
    threads: usize,
    bakes: std::collections::BTreeMap<pmfedit_bake::deps::ChunkKey, pmfedit_bake::compile::ChunkBake>,
) -> Rebuild {
    Rebuild::with_bakes(Scheduler::new(threads, settings.clone(), Arc::new(|| {})), Plan::FinalOnly, map, bakes)
}

/// [`engine`] starting from the project's cached bakes (unless `no_cache`): only chunks whose
/// inputs changed are queued. Says how many were reused unless `quiet`. `memos`: keep light
/// memos for later edits (`watch`); a one-shot build does not, they would only take memory.
#[allow(clippy::too_many_arguments)]
fn cached_engine(
    project: &Path,
    map: Map,
    settings: &CompileSettings,
    threads: usize,
    no_cache: bool,
    quiet: bool,
    memos: bool,
    phases: &mut Phases,
) -> (Rebuild, cache::ChunkHashes) {
    let loaded = if no_cache { cache::Loaded::default() } else { cache::load(project, &map, settings) };
    // Their chunks' fresh bakes may get the same names: gone, the cache write replaces them.
    loaded.discard_unusable();
    phases.end("cache read");
    if !quiet && !no_cache {
        eprintln!("{}", loaded.report());
    }
    let scheduler = Scheduler::new(threads, settings.clone(), Arc::new(|| {}));
    scheduler.light_cache().set_on(memos);
    // Kept visibility and pathfinding serve re-bakes, as the light memos do.
    scheduler.vis_cache().set_keep(memos);
    let engine = Rebuild::with_bakes(scheduler, Plan::FinalOnly, Arc::new(map), loaded.bakes);
    phases.end("engine");
    (engine, loaded.hashes)
}

/// Writes the engine's full bakes into the project's bake cache (unless `no_cache`); a failure is
/// a warning (the build itself is fine). `known`: content hashes of the engine's map as it is
/// now (from the cache read of an engine that has not been edited since), else empty.
fn store_cache(project: &Path, engine: &Rebuild, known: &cache::ChunkHashes, no_cache: bool, quiet: bool) {
    if no_cache {
        return;
    }
    let bakes = engine.slots().keys().filter_map(|&k| engine.full(k)).map(|b| &**b);
    match cache::store_known(project, engine.map(), engine.settings(), bakes, known) {
        Ok(s) if !quiet => eprintln!(
            "bake cache: {} entries written, {} kept, {} removed, {:.1} MiB",
            s.written,
            s.kept,
            s.removed,
            s.bytes as f64 / f64::from(1 << 20)
        ),
        Ok(_) => {}
        Err(e) => eprintln!("warning: bake cache not written: {e}"),
    }
}

/// Waits until the engine has baked everything it was asked to, printing a progress bar unless
/// `quiet`; the first failed chunk is the error.
fn finish(engine: &mut Rebuild, quiet: bool) -> Result<(), Failure> {
    let mut last = Instant::now();
    loop {
        engine.poll();
        let settled = engine.is_settled();
        if !quiet && (last.elapsed() > Duration::from_millis(200) || settled) {
            last = Instant::now();
            let total = engine.slots().len();
            let done = total - engine.in_flight();
            let width = 30;
            let filled = done * width / total.max(1);
            eprint!("\r[{}{}] {done}/{total} chunks", "#".repeat(filled), " ".repeat(width - filled));
            let _ = std::io::stderr().flush();
        }
        if settled {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if !quiet {
        eprintln!();
    }
    match engine.slots().iter().find(|(_, s)| s.state == ChunkState::Failed) {
        Some((k, s)) => Err(Failure(format!(
            "level {}, chunk (x {}, y {}, z {}): {}",
            k.0,
            k.1.x,
            k.1.y,
            k.1.z,
            s.error.as_deref().unwrap_or("failed")
        ))),
        None => Ok(()),
    }
}

/// Summary figures of a compiled file of `bytes`, given its chunk records, and the seconds it took.
fn summary<'a>(records: impl Iterator<Item = &'a pmf::Chunk>, bytes: usize, secs: f64) -> String {
    let (mut chunks, mut faces, mut luxels) = (0usize, 0usize, 0usize);
    for c in records {
        chunks += 1;
        luxels += c.client.lightmaps.iter().map(|l| l.edge() * l.edge()).sum::<usize>();
        for cube in &c.client.cubes {
            faces += match &cube.geometry {
                pmf::ClientGeometry::Geometry(g) => (g.faces & 0x3F).count_ones() as usize,
                pmf::ClientGeometry::ExtGeometry(g) => g.triangle_counts.iter().filter(|&&n| n > 0).count(),
                pmf::ClientGeometry::None => 0,
            };
        }
    }
    format!("{chunks} chunks, {faces} faces, {luxels} luxels, {bytes} bytes, {secs:.2} s")
}

/// Embeds the resources `file` names (found in the project, then `assets/`) and writes it: the
/// editor's Export does the same ([`export::write_map`]); the warnings go to stderr.
fn write_map(
    project: &Path,
    out: &Path,
    mut file: pmf::File,
    strict: bool,
    compression: pmf::Compression,
) -> Result<(pmf::File, usize), Failure> {
    let done = export::write_map(&mut file, &resource_roots(project), out, strict, compression)
        .map_err(|e| export_failure(project, e))?;
    for w in done.warnings() {
        eprintln!("warning: {w}");
    }
    Ok((file, done.bytes))
}

/// The chunk records of a whole file.
fn chunks_of(file: &pmf::File) -> impl Iterator<Item = &pmf::Chunk> {
    file.levels.iter().flat_map(|l| &l.chunks)
}

/// Writes the engine's map straight from its bakes (`pmfc watch`: the engine lives on, so its
/// records are not moved out, and not copied either), the warnings to stderr; gives the summary
/// line, `started` being when the build began.
fn write_from_bakes(
    engine: &Rebuild,
    project: &Path,
    out: &Path,
    compression: pmf::Compression,
    started: Instant,
) -> Result<String, Failure> {
    let mut assembled = engine.assemble(None).map_err(|e| fail(project, e))?;
    assembled.compression = compression;
    let done = export::write_assembled(&mut assembled, &resource_roots(project), out, false)
        .map_err(|e| export_failure(project, e))?;
    for w in done.warnings() {
        eprintln!("warning: {w}");
    }
    Ok(summary(assembled.chunks(), done.bytes, started.elapsed().as_secs_f64()))
}

/// An export error in words: naming the project where the project is at fault.
fn export_failure(project: &Path, e: ExportError) -> Failure {
    match e {
        ExportError::Resources(_) | ExportError::Strict(_) => fail(project, e),
        ExportError::Format { .. } | ExportError::Write { .. } => Failure(e.to_string()),
    }
}

/// Where a build's time and memory went, phase by phase, for its last line: seconds, and the
/// resident memory at the end of each phase (what the phase left behind: the map, the decoded
/// bakes, the engine's far lists, the assembled file).
struct Phases {
    done: Vec<(&'static str, f64, Option<u64>)>,
    at: Instant,
}

impl Phases {
    fn start() -> Self {
        Self { done: Vec::new(), at: Instant::now() }
    }

    /// Ends the phase running since the last call (or since [`Phases::start`]) as `name`.
    fn end(&mut self, name: &'static str) {
        let now = Instant::now();
        self.done.push((name, now.duration_since(self.at).as_secs_f64(), memory::resident().map(|r| r.now)));
        self.at = now;
    }
}

impl std::fmt::Display for Phases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list: Vec<String> = self
            .done
            .iter()
            .map(|(name, s, rss)| match rss {
                Some(b) => format!("{name} {s:.2} s ({:.0} MiB)", mib(*b)),
                None => format!("{name} {s:.2} s"),
            })
            .collect();
        write!(f, "phases (resident after each): {}", list.join(", "))?;
        if let Some(r) = memory::resident() {
            write!(f, "; peak resident {:.0} MiB", mib(r.peak))?;
        }
        Ok(())
    }
}

pub fn build(a: BuildArgs) -> Result<(), Failure> {
    let start = Instant::now();
    let mut phases = Phases::start();
    let (_, map) = open(&a.project)?;
    phases.end("open");
    let mut settings = CompileSettings { timestamp: a.timestamp.unwrap_or_else(now), ..CompileSettings::default() };
    if let Some(vis) = settings.visibility.as_mut() {
        vis.portal_steps = a.portal_steps.unwrap_or(vis.portal_steps);
        vis.portal_max_chunks = a.portal_max_chunks.unwrap_or(vis.portal_max_chunks);
        vis.min_culled = a.vis_min_culled.unwrap_or(vis.min_culled);
    }
    // The build bakes what the cache did not give and edits nothing: the read's chunk hashes
    // still hold for the cache write.
    let (mut engine, hashes) =
        cached_engine(&a.project, map, &settings, threads(a.threads), a.no_cache, a.quiet, false, &mut phases);
    finish(&mut engine, a.quiet)?;
    phases.end("bake");
    if !a.quiet {
        let records = engine
            .slots()
            .values()
            .filter_map(|s| s.full.as_ref())
            .fold(RecordBytes::default(), |acc, b| acc + RecordBytes::of(&b.pmf));
        let m = |b: u64| format!("{:.0}", mib(b));
        eprintln!(
            "bakes in memory (MiB): {} = cubes {}, visibility {}, lighting {}, vertices {}, other {}",
            m(records.total()),
            m(records.cubes),
            m(records.visibility),
            m(records.lighting),
            m(records.vertices),
            m(records.other)
        );
    }
    store_cache(&a.project, &engine, &hashes, a.no_cache, a.quiet);
    phases.end("cache write");
    let skipped = engine.slots().values().filter_map(|s| s.full.as_ref()).filter(|b| b.stats.vis_skipped).count();
    if skipped > 0 {
        eprintln!(
            "warning: {skipped} chunks see too many cubes to list, even naming their own chunk whole: their air cells with the longest lists carry no visibility data"
        );
    }
    let file = engine.into_file(None).map_err(|e| fail(&a.project, e))?;
    phases.end("compile");
    let (file, n) = write_map(&a.project, &a.out, file, a.strict, a.compression.into())?;
    phases.end("write");
    eprintln!("{}: {}", a.out.display(), summary(chunks_of(&file), n, start.elapsed().as_secs_f64()));
    if !a.quiet {
        eprintln!("{phases}");
    }
    for (i, level) in file.levels.iter().enumerate() {
        let p = pmfedit_bake::vis::oracle::pair_counts(level);
        if p.cells > 0 {
            eprintln!(
                "level {i}: visibility culls {:.1}% of (air cell, drawn geometry cube) pairs ({} of {} air cells carry data, {} cubes draw)",
                100.0 * p.culled(),
                p.cells,
                p.air,
                p.cubes
            );
        }
    }
    Ok(())
}

pub fn watch(a: WatchArgs) -> Result<(), Failure> {
    use notify::RecursiveMode;
    use notify_debouncer_full::new_debouncer;

    let settings = CompileSettings { timestamp: a.timestamp.unwrap_or_else(now), ..CompileSettings::default() };
    let (_, map) = open(&a.project)?;
    let t = Instant::now();
    let (mut engine, hashes) =
        cached_engine(&a.project, map, &settings, threads(a.threads), a.no_cache, false, true, &mut Phases::start());
    // Each re-export encodes only the chunks re-baked since the last.
    engine.keep_export_frames(true);
    finish(&mut engine, true)?;
    // Unedited since the cache read: its hashes hold for this first write only.
    store_cache(&a.project, &engine, &hashes, a.no_cache, true);
    drop(hashes);
    eprintln!("{}: {}", a.out.display(), write_from_bakes(&engine, &a.project, &a.out, a.compression.into(), t)?);
    let mut builds = 1;
    if a.max_builds.is_some_and(|m| builds >= m) {
        return Ok(());
    }

    let (tx, rx) = std::sync::mpsc::channel();
    let mut debouncer = new_debouncer(Duration::from_millis(150), None, tx).map_err(|e| fail(&a.project, e))?;
    debouncer.watch(&a.project, RecursiveMode::Recursive).map_err(|e| fail(&a.project, e))?;
    if Path::new("assets").is_dir() {
        let _ = debouncer.watch(Path::new("assets"), RecursiveMode::Recursive);
    }
    eprintln!("watching {} (Ctrl+C to stop)", a.project.display());
    let out_abs = std::fs::canonicalize(&a.out).unwrap_or(a.out.clone());
    for events in rx {
        let Ok(events) = events else { continue };
        let relevant = events.iter().any(|e| {
            !matches!(e.event.kind, notify::EventKind::Access(_))
                && e.event.paths.iter().any(|p| {
                    let p = std::fs::canonicalize(p).unwrap_or(p.clone());
                    p != out_abs
                        && !p.components().any(|c| c.as_os_str() == ".recovery" || c.as_os_str() == cache::DIR)
                        && !p.to_string_lossy().ends_with(".tmp")
                })
        });
        if !relevant {
            continue;
        }
        let t = Instant::now();
        let new_map = match Project::open_with(&a.project, &Threads::all()) {
            Ok((_, m)) => m,
            Err(e) => {
                eprintln!("{e} (keeping the last build)");
                continue;
            }
        };
        let n_dirty = engine.reload(Arc::new(new_map));
        if let Err(Failure(e)) = finish(&mut engine, true) {
            eprintln!("{e} (keeping the last build)");
            continue;
        }
        store_cache(&a.project, &engine, &cache::ChunkHashes::default(), a.no_cache, true);
        match write_from_bakes(&engine, &a.project, &a.out, a.compression.into(), t) {
            Ok(summary) => eprintln!("re-baked {n_dirty} chunks; {}: {summary}", a.out.display()),
            Err(Failure(e)) => eprintln!("{e}"),
        }
        // The next change is likely near this one: bakes there go first and keep their light
        // memos, and while we wait, the memos around it are warmed up (bakes from the cache
        // carry none), so that its re-bake traces only what it reaches.
        engine.focus_on_last_edit();
        builds += 1;
        if a.max_builds.is_some_and(|m| builds >= m) {
            break;
        }
    }
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

pub fn bench(a: BenchArgs) -> Result<(), Failure> {
    let [x, y, z] = parse_size(&a.size).map_err(Failure)?;
    let settings = CompileSettings { timestamp: 1, ..CompileSettings::default() };
    let t = Instant::now();
    let mut map = sample::terrain(x, y, z, 1);
    let build_map_s = t.elapsed().as_secs_f64();
    let after_map = memory::resident();
    eprintln!("terrain({x},{y},{z}): built in {build_map_s:.2} s; baking on {} threads…", a.threads);

    let t = Instant::now();
    let mut engine = engine(Arc::new(map.clone()), &settings, a.threads);
    finish(&mut engine, a.json)?;
    let full_bake_s = t.elapsed().as_secs_f64();
    let chunks = engine.slots().len();
    let after_bake = memory::resident();
    // The light memos the engine keeps for later edits (real editor memory, within its budget).
    let kept_memo = serde_json::json!({
        "points": engine.light_cache().points(),
        "mib": mib(engine.light_cache().bytes() as u64),
    });
    let records = engine
        .slots()
        .values()
        .filter_map(|s| s.full.as_ref())
        .fold(RecordBytes::default(), |acc, b| acc + RecordBytes::of(&b.pmf));
    // Open with a warm bake cache: write the cache of the baked terrain now, and once the bench's
    // engine is gone (an editor opening a project holds one set of bakes, not two) time what an
    // open adds to reading the project: loading the entries (read, check, decode) until the
    // engine is final with nothing to bake.
    struct RemoveOnDrop(PathBuf);
    impl Drop for RemoveOnDrop {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let cache_dir = RemoveOnDrop(std::env::temp_dir().join(format!("pmfc-bench-cache-{}", std::process::id())));
    let t = Instant::now();
    let bakes = engine.slots().keys().filter_map(|&k| engine.full(k)).map(|b| &**b);
    let stored = cache::store(&cache_dir.0, engine.map(), &settings, bakes).map_err(|e| Failure(e.to_string()))?;
    let cache_store_s = t.elapsed().as_secs_f64();
    // The map the cache was written for (the edits below change the bench's map and the engine's).
    let cached_map = engine.map().clone();
    let after_cache = memory::resident();
    // Export: compile + encode + LZ4, streamed as an export writes its file (chunk by chunk, in
    // file order, as they are ready: `export::write_assembled`), on `threads` threads, then on
    // one; the same bytes whatever the count. The stream goes into a digest of the file's bytes
    // (`digest::FileDigest`) instead of to disk, so neither file is ever whole in memory.
    let t = Instant::now();
    let assembled = engine.assemble(None).map_err(|e| Failure(e.to_string()))?;
    let exported = digest_export(&assembled, a.threads)?;
    let export_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let serial = digest_export(&assembled, 1)?;
    let export_1_thread_s = t.elapsed().as_secs_f64();
    if serial != exported {
        return Err(Failure("the export differs between 1 and several threads".into()));
    }
    let after_export = memory::resident();
    // Where the export's time goes: LZ4 alone (one thread, in-process) on the same uncompressed
    // chunk blocks, each compressed as the export compresses it (one frame per block, one
    // compressor reused); the rest is encoding the records. Chunk by chunk: only the LZ4 calls
    // are timed, their sum is the figure.
    let mut blocks_out = match &a.chunk_blocks {
        Some(path) => Some((
            std::io::BufWriter::new(
                std::fs::File::create(path).map_err(|e| Failure(format!("{}: {e}", path.display())))?,
            ),
            path,
        )),
        None => None,
    };
    let (mut raw_chunk_bytes, mut lz4_bytes, mut lz4_only) = (0usize, 0usize, Duration::ZERO);
    let mut lz4 = pmfedit_core::format::lz4_block::BlockCompressor::new(0);
    let mut frames = Vec::new();
    let mut write_failed = None;
    assembled
        .each_chunk_blocks(|blocks| {
            for block in blocks {
                raw_chunk_bytes += block.len();
                frames.clear();
                let t = Instant::now();
                lz4_bytes += pmfedit_core::format::lz4f::compress_into(&mut lz4, block, &mut frames);
                lz4_only += t.elapsed();
                if let Some((w, path)) = &mut blocks_out
                    && write_failed.is_none()
                    && let Err(e) = w.write_all(block)
                {
                    write_failed = Some(format!("{}: {e}", path.display()));
                }
            }
        })
        .map_err(|e| Failure(e.to_string()))?;
    if let Some((w, path)) = blocks_out
        && write_failed.is_none()
        && let Err(e) = w.into_inner().map_err(|e| e.into_error()).and_then(|f| f.sync_all())
    {
        write_failed = Some(format!("{}: {e}", path.display()));
    }
    if let Some(e) = write_failed {
        return Err(Failure(e));
    }
    let lz4_only_s = lz4_only.as_secs_f64();
    drop(assembled);
    let after_lz4 = memory::resident();
    // Single-cube edits near the middle of the map, each followed by an incremental re-bake.
    let mut history = History::new();
    let level = &map.levels[0];
    let frame = level.frame();
    let occupied = level.occupied_bounds().ok_or_else(|| Failure("empty terrain".into()))?;
    let mid = (occupied.0.as_ivec3() + occupied.1.as_ivec3()) / 2;
    let mut per_edit = Vec::new();
    let (mut mesh_ms, mut light_ms, mut air_ms, mut other_ms) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut dirty_counts = Vec::new();
    // The engine's wall time from an edit to every dirty chunk's final bake, on `threads` workers.
    let mut final_ms = Vec::new();
    // Chunks the engine re-baked per edit (the static spread and the readers of the edited
    // chunk), and the full bakes whose far visibility lists it wrote again in place (far sets
    // changed by a changed summary) with the time that took, the new summary grid included.
    let mut engine_chunks = Vec::new();
    let (mut far_refreshed, mut far_refresh_ms) = (Vec::new(), Vec::new());
    // What telling the engine about an edit takes (`Rebuild::edited`: the spread, the chunks
    // that entered or left the grid, the far refresh, the queueing): the editor's UI thread
    // waits for it on every edit.
    let mut request_ms = Vec::new();
    // Visibility work of an edit in the engine: its far refresh (the new summary grid included)
    // plus the visibility stage of every full bake the edit made it do (own lists worked out or
    // taken from the chunk's last bake, far lists written from the grid), summed over its
    // workers; the pathfinding stage of the same bakes apart; how many bakes worked their own
    // lists out and how many took them.
    let (mut vis_ms, mut vis_bakes_ms, mut path_ms) = (Vec::new(), Vec::new(), Vec::new());
    let (mut own_made, mut own_reused) = (Vec::new(), Vec::new());
    // The editor's first stage: mesh + lightmaps of the dirty chunks (and of the edited chunk).
    let preview = settings.preview();
    let (mut preview_ms, mut preview_edited_ms) = (Vec::new(), Vec::new());
    // The final bake of the edited chunk alone, and the final bakes' time per dirty chunk.
    let (mut final_edited_ms, mut final_per_chunk_ms) = (Vec::new(), Vec::new());
    // The editor's draft stage (cheap lighting: hard sun, few sky rays, no bounce) of the dirty
    // chunks: what the designer sees first after an edit.
    let draft = settings.draft();
    // What the engine drafts (the chunks that draw the edit, `deps::draft_chunks`), and, for
    // comparison with earlier figures, drafts of every dirty chunk of the static spread.
    let (mut draft_ms, mut draft_all_ms, mut draft_counts) = (Vec::new(), Vec::new(), Vec::new());
    // Light memo use of the engine's re-bakes, summed over the edits: [neighbourhood, beyond].
    let (mut memo_points, mut memo_reused, mut memo_chunks) = ([0usize; 2], [0usize; 2], [0usize; 2]);
    // The engine's final bakes of an edit: their summed time (the work the workers shared), the
    // longest one, and the edited chunk's (which of them bounds the wall time).
    let (mut final_work_ms, mut final_longest_ms, mut final_engine_edited_ms) = (Vec::new(), Vec::new(), Vec::new());
    // The draft stage's parts (mesh, light, rest), summed over the drafted chunks.
    let (mut draft_mesh_ms, mut draft_light_ms, mut draft_rest_ms) = (Vec::new(), Vec::new(), Vec::new());
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    // Summaries kept between the edits' bakes, as the engine keeps them.
    let vis_cache = VisCache::new(settings.visibility.unwrap_or_default());
    for i in 0..a.edits {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let chunk = mid + IVec3::new((seed % 3) as i32 - 1, 0, ((seed >> 8) % 3) as i32 - 1);
        let min = frame.chunk_min_lattice(pmfedit_core::map::coords::ChunkCoord::from_ivec3(chunk));
        let local =
            IVec3::new(((seed >> 16) % 16) as i32 * 8, ((seed >> 24) % 16) as i32 * 8, ((seed >> 32) % 16) as i32 * 8);
        let addr = CubeAddr::containing(min + local, 3);
        let cube = if i % 2 == 0 {
            Cube::solid(Default::default(), Default::default(), Default::default())
        } else {
            Cube::EMPTY
        };
        let before = map.snapshot();
        let Ok(changes) = history.apply(&mut map, Edit::Cubes { level: 0, op: CubeOp::SetCube { addr, cube } }) else {
            continue;
        };
        // Emptying a cube that is already air changes nothing: no edit to time (the engine
        // does no work, and the figures below would count its last edit's again).
        if changes.is_empty() {
            continue;
        }
        let edited = (0, pmfedit_core::map::coords::ChunkCoord::from_ivec3(chunk));
        let t = Instant::now();
        bake_chunk(&map, edited.0, edited.1, &preview).map_err(|e| Failure(e.to_string()))?;
        preview_edited_ms.push(ms(t.elapsed()));
        let t = Instant::now();
        bake_chunk(&map, edited.0, edited.1, &settings).map_err(|e| Failure(e.to_string()))?;
        final_edited_ms.push(ms(t.elapsed()));
        let t = Instant::now();
        for &(li, c) in &dirty_chunks(&before, &map, &changes, &settings) {
            bake_chunk(&map, li, c, &preview).map_err(|e| Failure(e.to_string()))?;
        }
        preview_ms.push(ms(t.elapsed()));
        let t = Instant::now();
        for &(li, c) in &dirty_chunks(&before, &map, &changes, &settings) {
            bake_chunk(&map, li, c, &draft).map_err(|e| Failure(e.to_string()))?;
        }
        draft_all_ms.push(ms(t.elapsed()));
        let t = Instant::now();
        let drafted = draft_chunks(&map, &changes);
        let mut parts = StageTimes::default();
        for &(li, c) in &drafted {
            // With the engine's light memos, as its drafts are baked.
            let (_, times) = bake_chunk_cached(&map, li, c, &draft, &vis_cache, Some(engine.light_cache()))
                .map_err(|e| Failure(e.to_string()))?;
            parts.mesh += times.mesh;
            parts.light += times.light;
            parts.other += times.air + times.other;
        }
        draft_ms.push(ms(t.elapsed()));
        draft_mesh_ms.push(ms(parts.mesh));
        draft_light_ms.push(ms(parts.light));
        draft_rest_ms.push(ms(parts.other));
        draft_counts.push(drafted.len() as f64);
        let t = Instant::now();
        let dirty = dirty_chunks(&before, &map, &changes, &settings);
        let mut st = StageTimes::default();
        for &(li, c) in &dirty {
            let (_, times) =
                bake_chunk_timed(&map, li, c, &settings, &vis_cache).map_err(|e| Failure(e.to_string()))?;
            st.mesh += times.mesh;
            st.light += times.light;
            st.air += times.air;
            st.vis += times.vis;
            st.other += times.other;
        }
        per_edit.push(ms(t.elapsed()));
        final_per_chunk_ms.push(ms(t.elapsed()) / dirty.len().max(1) as f64);
        mesh_ms.push(ms(st.mesh));
        light_ms.push(ms(st.light));
        air_ms.push(ms(st.air));
        other_ms.push(ms(st.other));
        dirty_counts.push(dirty.len() as f64);
        let t = Instant::now();
        let work = engine.vis_cache().work();
        let snapshot = Arc::new(map.clone());
        let asked = Instant::now();
        engine_chunks.push(engine.edited(snapshot, &changes) as f64);
        request_ms.push(ms(asked.elapsed()));
        let requeued: Vec<_> = engine.keys_in_flight().collect();
        let (n, refresh) = engine.last_far_refresh();
        far_refreshed.push(n as f64);
        far_refresh_ms.push(ms(refresh));
        finish(&mut engine, true)?;
        final_ms.push(ms(t.elapsed()));
        let work = engine.vis_cache().work() - work;
        let bakes_vis = Duration::from_nanos(work.vis_ns);
        vis_ms.push(ms(bakes_vis + refresh));
        vis_bakes_ms.push(ms(bakes_vis));
        path_ms.push(ms(Duration::from_nanos(work.path_ns)));
        own_made.push(work.own_made as f64);
        own_reused.push(work.own_reused as f64);
        // How much of the re-baked chunks' far light came from their light memos, in the edited
        // chunk's neighbourhood and beyond it (the readers).
        let full_ms = |key| engine.slot(key).and_then(|s| s.times[Stage::Full.index()]).map_or(0.0, ms);
        final_work_ms.push(requeued.iter().map(|&k| full_ms(k)).sum::<f64>());
        final_longest_ms.push(requeued.iter().map(|&k| full_ms(k)).fold(0.0, f64::max));
        final_engine_edited_ms.push(full_ms(edited));
        for key in requeued {
            let Some(memo) = engine.light_cache().get(key.0, key.1) else { continue };
            let near = (key.1.as_ivec3() - chunk).abs().max_element() <= 1;
            let at = usize::from(!near);
            memo_points[at] += memo.points();
            memo_reused[at] += memo.reused();
            memo_chunks[at] += 1;
        }
    }
    let after_edits = memory::resident();
    // Incremental == full: the engine's export after the edits against a full compile of the
    // edited map from scratch (every chunk baked again, on `threads` threads, without memos),
    // both streamed into digests chunk by chunk (the full compile's bakes dropped as they are
    // written), not held as two whole files.
    let t = Instant::now();
    let incremental = digest_export(&engine.assemble(None).map_err(|e| Failure(e.to_string()))?, a.threads)?;
    let mut full = FileDigest::new();
    write_full_to(&map, &settings, a.threads, &mut full).map_err(|e| Failure(e.to_string()))?;
    let full = full.finish().map_err(|e| Failure(format!("the full compile's digest: {e}")))?;
    let invariant_check_s = t.elapsed().as_secs_f64();
    let invariant_held = incremental == full;
    let after_invariant = memory::resident();
    drop(engine);
    let t = Instant::now();
    let loaded = cache::load(&cache_dir.0, &cached_map, &settings);
    let reused = loaded.bakes.len();
    let warm = engine_with(cached_map, &settings, a.threads, loaded.bakes);
    let open_cached_s = t.elapsed().as_secs_f64();
    let warm_final = warm.is_final();
    drop(warm);
    drop(cache_dir);
    if !warm_final || reused != chunks {
        return Err(Failure(format!("the warm cache reused {reused} of {chunks} chunks")));
    }
    let after_open_cached = memory::resident();
    let light_parts = light_parts(&map, &settings, mid)?;

    // Meshing alone: re-bake the geometry of sampled chunks.
    let sample_chunks: Vec<_> = map.levels[0].chunks().map(|(c, _)| *c).take(64).collect();
    let t = Instant::now();
    let mut quads = 0usize;
    for &c in &sample_chunks {
        let g = pmfedit_bake::chunk::bake_geometry(&map, 0, c, &settings.bake).map_err(|e| Failure(e.to_string()))?;
        quads += g.mesh.quad_count();
    }
    let mesh_s = t.elapsed().as_secs_f64();

    let (ours_us, ours_quads, theirs) = mesh_comparison()?;

    // Visibility alone, every chunk of the level on `threads` threads: the summaries and the
    // grid's far sets, then every chunk's lists.
    let opaque = pmfedit_bake::vis::OpaqueMaterials::of(&map.library);
    let voxels = settings.visibility.unwrap_or_default().voxels_log2;
    let summary_us = pmfedit_bake::vis::summary::summary_us_per_chunk(&map.levels[0], &opaque, voxels, 3);
    let t = Instant::now();
    let lv =
        level_vis(&VisCache::new(settings.visibility.unwrap_or_default()), &map, 0, map.levels[0].frame().center_chunk);
    let grid_s = t.elapsed().as_secs_f64();
    let all = level_chunks(&map.levels[0]);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = std::sync::Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..a.threads.max(1) {
            scope.spawn(|| {
                let level = &map.levels[0];
                let empty = pmfedit_core::map::octree::Octree::new(level.frame().chunk_lattice_log2());
                while let Some(&c) = all.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                    let octree = level.chunk(c).map_or(&empty, |ch| ch.octree());
                    let layout = pmfedit_bake::layout::ChunkLayout::build(octree, &settings.bake);
                    let cells = layout.air_cell_addrs(level.frame().chunk_min_lattice(c));
                    if let Err(e) = pmfedit_bake::vis::bake_chunk_vis_in(&lv, level, c, &cells) {
                        *failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.to_string());
                    }
                }
            });
        }
    });
    if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(Failure(e));
    }
    let vis_s = t.elapsed().as_secs_f64();

    // The built-in demo as `pmfc build` exports it: is it lit?
    let t = Instant::now();
    let demo = compile_full(&sample::demo(), &settings).map_err(|e| Failure(e.to_string()))?;
    let demo_bake_s = t.elapsed().as_secs_f64();
    let demo_luxels = pmfedit_bake::inspect::luxel_stats(&demo);

    let median = percentile(&mut per_edit.clone(), 0.5);
    let mut figures = serde_json::json!({
        "map": format!("terrain({x},{y},{z})"),
        "threads": a.threads,
        "chunks": chunks,
        "full_bake_s": full_bake_s,
        // Opening the baked terrain with its bake cache (every entry current): load + check +
        // decode, until the engine is final; and writing the cache from scratch.
        "open_cached_s": open_cached_s,
        "cache_store_s": cache_store_s,
        "cache_bytes": stored.bytes,
        // Single-cube edits timed (of `--edits` tried: emptying air changes nothing).
        "edits_timed": per_edit.len(),
        "edit_rebake_ms": { "median": median, "p95": percentile(&mut per_edit.clone(), 0.95) },
        // Preview bakes (mesh + lightmaps, no visibility or pathfinding) of the same edits: all
        // dirty chunks, and the edited chunk alone (what the editor shows first).
        "edit_preview_rebake_ms": {
            "median": percentile(&mut preview_ms.clone(), 0.5),
            "p95": percentile(&mut preview_ms, 0.95),
            "edited_chunk_median": percentile(&mut preview_edited_ms, 0.5),
        },
        "edit_stage_ms_median": {
            "mesh": percentile(&mut mesh_ms, 0.5),
            "light": percentile(&mut light_ms, 0.5),
            "other": percentile(&mut other_ms, 0.5),
            "vis_and_path": percentile(&mut air_ms, 0.5),
        },
        // Draft bakes (the interactive plan's first lighting) of the chunks the engine drafts
        // (the edited chunks and the face neighbours the edit touches), one thread.
        "edit_draft_ms": { "median": percentile(&mut draft_ms.clone(), 0.5), "p95": percentile(&mut draft_ms, 0.95) },
        "edit_dirty_chunks_median": percentile(&mut dirty_counts, 0.5),
        // The rebuild engine on `threads` workers: edit → every dirty chunk's final bake, wall.
        "edit_final_ms": { "median": percentile(&mut final_ms.clone(), 0.5), "p95": percentile(&mut final_ms, 0.95) },
        "edit_engine_chunks_median": percentile(&mut engine_chunks, 0.5),
        // The engine's visibility work per edit: far refresh (grid included) + the visibility
        // stage of its full bakes, summed over the workers; the bakes' part alone; their
        // pathfinding; bakes that worked out their own lists / took their last bake's.
        "edit_vis_ms": { "median": percentile(&mut vis_ms.clone(), 0.5), "p95": percentile(&mut vis_ms, 0.95) },
        "edit_vis_parts_median": {
            "bakes_vis_ms": percentile(&mut vis_bakes_ms, 0.5),
            "bakes_path_ms": percentile(&mut path_ms, 0.5),
            "own_lists_made": percentile(&mut own_made, 0.5),
            "own_lists_reused": percentile(&mut own_reused, 0.5),
        },
        "edit_far_refresh": {
            "bakes_median": percentile(&mut far_refreshed.clone(), 0.5),
            "bakes_p95": percentile(&mut far_refreshed, 0.95),
            "ms_median": percentile(&mut far_refresh_ms.clone(), 0.5),
            "ms_p95": percentile(&mut far_refresh_ms, 0.95),
        },
        // Wall time of the full bake (all threads) over the median single-thread edit re-bake.
        "full_over_incremental": full_bake_s * 1e3 / median.max(1e-9),
        "mesh_us_per_chunk": mesh_s * 1e6 / sample_chunks.len().max(1) as f64,
        "mesh_quads_per_s": quads as f64 / mesh_s.max(1e-9),
        "mesh_32cubed": {
            "ours_us": ours_us,
            "ours_quads_per_s": ours_quads,
            "block_mesh_us": theirs.map(|t| t.0),
            "block_mesh_quads_per_s": theirs.map(|t| t.1),
        },
        // Summaries and far sets, then every chunk's lists, on `threads` threads.
        "full_vis_rebuild_s": vis_s,
        "vis_grid_s": grid_s,
        "vis_summary_us_per_chunk": summary_us,
        "export_s": export_s,
        "export_1_thread_s": export_1_thread_s,
        "export_mb_per_s": exported.len as f64 / 1e6 / export_s.max(1e-9),
        // The uncompressed chunk blocks the export compresses, per second of export: compare
        // with `lz4` on the same bytes (`--chunk-blocks FILE`).
        "export_uncompressed_mb_per_s": raw_chunk_bytes as f64 / 1e6 / export_s.max(1e-9),
        "chunk_blocks_bytes": raw_chunk_bytes,
        "lz4_only_1_thread_s": lz4_only_s,
        "lz4_only_bytes": lz4_bytes,
        "file_bytes": exported.len,
        // Resident memory (VmRSS / VmHWM): after the full bake, the peak until the export is
        // written, and the peak of the whole run; `phases`: resident at the end of each phase
        // and the peak so far (the phase where the peak rises is the one that set it).
        "resident_mib": {
            "after_full_bake": after_bake.map(|r| mib(r.now)),
            "peak_through_export": after_export.map(|r| mib(r.peak)),
            "peak": memory::resident().map(|r| mib(r.peak)),
        },
        // Where the full bakes' records take memory (struct sizes and buffers, no allocator
        // overhead), MiB.
        "bake_record_mib": {
            "total": mib(records.total()),
            "cubes": mib(records.cubes),
            "visibility": mib(records.visibility),
            "lighting": mib(records.lighting),
            "vertices": mib(records.vertices),
            "other": mib(records.other),
        },
        "incremental_equals_full": invariant_held,
        // The demo's exported luxels (every lightmap page, padding included), one thread.
        "demo_luxels": {
            "count": demo_luxels.luxels,
            "mean": demo_luxels.mean,
            "share_ge_64": demo_luxels.share_ge_64,
            "bake_s": demo_bake_s,
        },
    });
    // Set here rather than in the literal above, which is at `json!`'s recursion limit.
    // One thread: the final bake of the edited chunk alone (what the edit's own chunk would wait
    // if it were lit first), and the final bakes of the dirty chunks per chunk.
    figures["invariant_check_s"] = invariant_check_s.into();
    // Resident at the end of each phase and the peak so far (the phase where the peak rises is
    // the one that set it), MiB.
    figures["resident_mib"]["phases"] = phases_json(&[
        ("map", after_map),
        ("full_bake", after_bake),
        ("bake_cache_store", after_cache),
        ("export", after_export),
        ("lz4_only", after_lz4),
        ("edits", after_edits),
        ("invariant_check", after_invariant),
        ("open_cached", after_open_cached),
        ("end", memory::resident()),
    ]);
    // The light memos kept after the full bake (real editor memory, within the cache's budget of
    // points): points, and their tables, MiB.
    figures["light_memo_after_full_bake"] = kept_memo;
    figures["edit_final_edited_chunk_ms_median"] = percentile(&mut final_edited_ms, 0.5).into();
    figures["edit_engine_request_ms"] = serde_json::json!({
        "median": percentile(&mut request_ms.clone(), 0.5),
        "p95": percentile(&mut request_ms, 0.95),
    });
    figures["edit_final_per_dirty_chunk_ms_median"] = percentile(&mut final_per_chunk_ms, 0.5).into();
    figures["light_parts_ms_per_chunk"] = light_parts;
    figures["edit_draft_chunks_median"] = percentile(&mut draft_counts, 0.5).into();
    figures["edit_draft_parts_ms_median"] = serde_json::json!({
        "mesh": percentile(&mut draft_mesh_ms, 0.5),
        "light": percentile(&mut draft_light_ms, 0.5),
        "rest": percentile(&mut draft_rest_ms, 0.5),
    });
    // The engine's final bakes per edit: their summed time over the workers, the longest, and the
    // edited chunk's own (in the engine, with its memo).
    figures["edit_final_bakes_ms_median"] = serde_json::json!({
        "sum": percentile(&mut final_work_ms, 0.5),
        "longest": percentile(&mut final_longest_ms, 0.5),
        "edited_chunk": percentile(&mut final_engine_edited_ms, 0.5),
    });
    // Drafts of every dirty chunk of the static spread, one thread (the `edit_draft_ms` of
    // earlier versions, before the engine drafted only the chunks that draw the edit).
    figures["edit_draft_all_dirty_ms"] = serde_json::json!({
        "median": percentile(&mut draft_all_ms.clone(), 0.5),
        "p95": percentile(&mut draft_all_ms, 0.95),
    });
    // The engine's re-bakes after the edits: chunks, luxels and air cells, and the share of
    // those whose far light came from the chunk's light memo (rays that entered no changed
    // chunk), in the edited chunk's neighbourhood and beyond it.
    let share = |k: usize| memo_reused[k] as f64 / memo_points[k].max(1) as f64;
    figures["edit_light_memo"] = serde_json::json!({
        "neighbourhood": { "chunks": memo_chunks[0], "points": memo_points[0], "reused_share": share(0) },
        "beyond": { "chunks": memo_chunks[1], "points": memo_points[1], "reused_share": share(1) },
    });
    if a.json {
        println!("{}", serde_json::to_string_pretty(&figures).map_err(|e| Failure(e.to_string()))?);
    } else {
        for (k, v) in figures.as_object().into_iter().flatten() {
            println!("{k:28} {v}");
        }
    }
    if invariant_held { Ok(()) } else { Err(Failure("incremental != full".into())) }
}

/// The digest of the file `assembled` exports, streamed into it on `threads` threads as an export
/// streams its file to disk ([`export::write_assembled`]).
fn digest_export(assembled: &pmfedit_bake::compile::Assembled<'_>, threads: usize) -> Result<Digest, Failure> {
    let mut sink = FileDigest::new();
    assembled.write_to(threads, &mut sink).map_err(|e| Failure(e.to_string()))?;
    sink.finish().map_err(|e| Failure(format!("the export's digest: {e}")))
}

/// `{phase: {now, peak}}` resident MiB, for `pmfc bench --json`'s `resident_mib.phases`.
fn phases_json(phases: &[(&str, Option<memory::Resident>)]) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    for (name, r) in phases {
        if let Some(r) = r {
            out.insert((*name).into(), serde_json::json!({ "now": mib(r.now), "peak": mib(r.peak) }));
        }
    }
    out.into()
}

/// Where the light stage's time goes, ms per chunk (one thread), over the chunks of the 2 × 2
/// columns at `mid`: the light stage with the compile settings, and by difference with cheaper
/// settings: bounce (bounce off), sky gathering at luxels (1 ray instead of
/// [`rays`](pmfedit_bake::light::GatherSettings::rays)) and at air cells (1 ray instead of
/// `cell_rays`), the soft sun (1 disc ray instead of `sun_rays`); `rest` is what the cheapest
/// settings still take (lights, one ray of each kind, patches, packing, and the chunk's meshing).
fn light_parts(map: &Map, settings: &CompileSettings, mid: IVec3) -> Result<serde_json::Value, Failure> {
    let level = &map.levels[0];
    let (lo, hi) = level.occupied_bounds().ok_or_else(|| Failure("empty terrain".into()))?;
    let chunks: Vec<_> = (lo.y..=hi.y)
        .flat_map(|y| (0..2).flat_map(move |dx| (0..2).map(move |dz| mid + IVec3::new(dx, 0, dz)).map(move |c| (c, y))))
        .map(|(c, y)| pmfedit_core::map::coords::ChunkCoord::new(c.x, y, c.z))
        .collect();
    // Preview bakes (no visibility, no pathfinding): the light stage plus meshing, a few ms.
    let light_ms = |s: &CompileSettings| -> Result<f64, Failure> {
        let t = Instant::now();
        for &c in &chunks {
            bake_chunk(map, 0, c, s).map_err(|e| Failure(e.to_string()))?;
        }
        Ok(ms(t.elapsed()) / chunks.len().max(1) as f64)
    };
    let mut s = settings.preview();
    let full = light_ms(&s)?;
    // The same bakes recording a light memo (what the engine's bakes do; no memo to start from).
    let t = Instant::now();
    let vis = VisCache::new(s.visibility.unwrap_or_default());
    let memos = pmfedit_bake::light::LightCache::new(s.light.clone(), true);
    for &c in &chunks {
        bake_chunk_cached(map, 0, c, &s, &vis, Some(&memos)).map_err(|e| Failure(e.to_string()))?;
    }
    let recording = ms(t.elapsed()) / chunks.len().max(1) as f64;
    s.light.gather.bounce = false;
    let no_bounce = light_ms(&s)?;
    s.light.gather.rays = 1;
    let no_luxel_sky = light_ms(&s)?;
    s.light.gather.cell_rays = 1;
    let no_cell_sky = light_ms(&s)?;
    s.light.gather.sun_rays = 1;
    let rest = light_ms(&s)?;
    Ok(serde_json::json!({
        "chunks": chunks.len(),
        "total": full,
        "memo_recording": recording - full,
        "bounce": full - no_bounce,
        "sky_luxels": no_bounce - no_luxel_sky,
        "sky_air_cells": no_luxel_sky - no_cell_sky,
        "soft_sun": no_cell_sky - rest,
        "rest": rest,
    }))
}

/// The same 32³ voxels (a height field with holes) meshed by our mesher and, when built with
/// `--features block-mesh-bench`, by `block_mesh::visible_block_faces`: (µs, quads/s) each.
#[allow(clippy::type_complexity)]
fn mesh_comparison() -> Result<(f64, f64, Option<(f64, f64)>), Failure> {
    const N: usize = 32;
    let solid = |x: usize, y: usize, z: usize| {
        let h = 8 + ((x * 7 + z * 13) % 11) + ((x / 4 + z / 3) % 5);
        y < h && !(x % 5 == 2 && z % 7 == 3 && y > 3)
    };
    let mut map = Map::new("mesh bench");
    map.levels[0] = pmfedit_core::map::Level::new("main", 5).map_err(|e| Failure(e.to_string()))?;
    let frame = map.levels[0].frame();
    let min = frame.chunk_min_lattice(frame.center_chunk);
    let stone = Cube::solid(Default::default(), Default::default(), Default::default());
    for x in 0..N {
        for z in 0..N {
            for y in 0..N {
                if solid(x, y, z) {
                    let at = min + IVec3::new(x as i32, y as i32, z as i32) * 8;
                    map.levels[0].set_cube(CubeAddr::containing(at, 3), stone).map_err(|e| Failure(e.to_string()))?;
                }
            }
        }
    }
    let settings = pmfedit_bake::BakeSettings::default();
    let runs = 20;
    let t = Instant::now();
    let mut quads = 0;
    for _ in 0..runs {
        let g = pmfedit_bake::chunk::bake_geometry(&map, 0, frame.center_chunk, &settings)
            .map_err(|e| Failure(e.to_string()))?;
        quads = g.mesh.quad_count();
    }
    let ours = t.elapsed().as_secs_f64() / runs as f64;
    Ok((ours * 1e6, quads as f64 / ours, block_mesh_figures(&solid, runs)))
}

#[cfg(feature = "block-mesh-bench")]
fn block_mesh_figures(solid: &dyn Fn(usize, usize, usize) -> bool, runs: u32) -> Option<(f64, f64)> {
    let chunk = pmfedit_bake::mesh::BlockMeshChunk::new(solid);
    let t = Instant::now();
    let mut quads = 0;
    for _ in 0..runs {
        quads = chunk.mesh();
    }
    let s = t.elapsed().as_secs_f64() / f64::from(runs);
    Some((s * 1e6, quads as f64 / s))
}

#[cfg(not(feature = "block-mesh-bench"))]
fn block_mesh_figures(_: &dyn Fn(usize, usize, usize) -> bool, _: u32) -> Option<(f64, f64)> {
    None
}
