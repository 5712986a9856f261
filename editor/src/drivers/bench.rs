//! `--bench-frames N`: after the first load is on screen, measures N frames (intervals, the
//! viewport's and the whole UI pass's CPU time, the GPU's time of the chunk passes, what the last
//! one drew), then makes
//! [`BENCH_EDITS`] scripted edits one after the other (a cube placed on what the camera looks
//! at, then taken away again, alternately) and measures each one's way to the screen
//! (the first re-baked mesh uploaded, the exact lightmaps uploaded, every dirty chunk's full
//! bake), prints the figures and closes the window. The first line says how the open used the
//! project's bake cache and how many chunks it baked: the load figure is an open from saved bakes
//! only when that is 0 (a cache of another version is refused whole and every chunk is baked).
//! The next lines say where the load's time went ([`LoadTimes`]). While the map loads the bench
//! asks for no frames of its own but one every [`LOAD_POLL`]: the load's frames are the app's,
//! paced as a user's ([`crate::pace`]); the measured frames and the edits draw continuously.
//! With `--bench-export PATH` the map as opened is exported there after the frames (timed; the
//! bytes `pmfc build --timestamp 1` writes, [`EXPORT_TIMESTAMP`]), before the edits, and the map
//! as the edits left it to `PATH` with the extension `edited.pmf` after them (the chunks the
//! edits did not re-bake keep their frames from the first export).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use eframe::egui;

use pmfedit_bake::deps::ChunkKey;
use pmfedit_bake::rebuild::ChunkState;
use pmfedit_core::edit::CubeOp;
use pmfedit_core::map::coords::LatticeBox;

use super::{GIVE_UP_S, loaded};
use crate::app::{App, Driver, DriverStatus};
use crate::command::Command;
use crate::pick::Pick;
use crate::tools;

/// Scripted edits a run measures (one after the other).
pub const BENCH_EDITS: usize = 5;

/// How often the bench looks at a load in progress when the app draws no frame of its own:
/// longer than the app's own pacing ([`crate::pace::MAX_DELAY`]), so the load's frames are the
/// ones a user gets.
const LOAD_POLL: Duration = Duration::from_secs(2);

/// The header time a `--bench-export` file is stamped with: `pmfc build --timestamp 1` of the
/// same project writes the same bytes.
pub const EXPORT_TIMESTAMP: u64 = 1;

/// Where the first load's time went, for the lines after the load figure.
#[derive(Debug, Default)]
struct LoadTimes {
    /// Reading the project's files (before the window opens; not in the load figure).
    project_read: Duration,
    /// Seconds from the start of the run to the first frame (the cache read and the engine
    /// start are in it: [`crate::state::OpenTimes`]).
    first_frame: f64,
    /// Frames drawn until the load was on screen.
    frames: u32,
    /// The app's UI passes of those frames.
    ui: Duration,
}

/// An export's seconds, and its bytes, the chunks it encoded and the map's chunks, or why it
/// failed.
/// An export's seconds until its file was written, the seconds it held the UI thread (the
/// export runs on its own thread), and its bytes, chunks encoded and chunks, or why not.
type Exported = (f64, f64, Result<(usize, usize, usize), String>);

#[derive(Debug)]
enum Phase {
    Loading,
    /// Loaded; waiting for the light memos around the view to be warmed up
    /// ([`crate::state::EditorState::warm_up`]), so that the frames are measured with nothing
    /// baking and the edits see what a user who looked a few seconds before editing sees.
    Warming(Instant),
    Settling(u32),
    Measuring,
    /// Waiting for the edited chunk's re-baked mesh (its draft, or its exact bake) to be uploaded
    /// (`first_ms` then set), then for its exact lightmaps (a full bake, or a preview) to be uploaded.
    Edited {
        at: Instant,
        key: ChunkKey,
        first_ms: Option<f64>,
    },
    /// The exact mesh is on screen; waiting for the full bakes of every dirty chunk.
    Finishing {
        at: Instant,
        first_ms: f64,
        exact_ms: f64,
    },
    Done,
}

/// A running `--bench-frames`.
pub struct Bench {
    frames: u32,
    started: Instant,
    phase: Phase,
    last: Option<Instant>,
    intervals: Vec<f64>,
    ui_times: Vec<f64>,
    /// Per measured frame: the app's whole UI pass of the frame before, seconds.
    app_times: Vec<f64>,
    /// Per measured frame: the GPU's time for the latest timed chunk passes, seconds (empty
    /// without timer queries: [`crate::viewport::render::PaintTime::gpu_chunks`]).
    gpu_times: Vec<f64>,
    load_seconds: f64,
    /// The warm-up after the load: chunks warmed up, seconds.
    warm: Option<(usize, f64)>,
    /// How the open used the project's bake cache, and how many chunks it had to bake (the
    /// load figure is an open from the cache only when that is 0).
    open: Option<(Option<pmfedit_bake::cache::Report>, usize)>,
    /// Per scripted edit: ms to the first re-baked mesh on screen, to the exact one, to every
    /// full bake.
    edits: Vec<[f64; 3]>,
    /// What the last measured frame drew.
    draw_stats: Option<crate::viewport::render::DrawStats>,
    load: LoadTimes,
    /// The open's steps and the paints' and mesh workers' time when the load was on screen.
    load_parts: Option<(crate::state::OpenTimes, Option<crate::viewport::render::PaintTime>, Duration)>,
    /// What the chunk regions held on the GPU when the load was on screen.
    gpu_bytes: Option<crate::viewport::regions::GpuBytes>,
    /// Where to export the map as opened (taken when done).
    export: Option<PathBuf>,
    /// The export of the map as opened ([`Bench::export`]).
    exported: Option<Exported>,
    /// Where to export the map after the edits, and how that went.
    export_after: Option<PathBuf>,
    exported_after: Option<Exported>,
    /// The cube the last scripted edit placed (level, box), which the next one takes away.
    placed: Option<(usize, LatticeBox)>,
}

impl Bench {
    /// A benchmark measuring `frames` frames (exporting to `export` after them); reading the
    /// project took `project_read`.
    pub fn new(frames: u32, export: Option<PathBuf>, project_read: Duration) -> Self {
        Self {
            frames: frames.max(1),
            started: Instant::now(),
            phase: Phase::Loading,
            last: None,
            intervals: Vec::new(),
            ui_times: Vec::new(),
            app_times: Vec::new(),
            gpu_times: Vec::new(),
            load_seconds: 0.0,
            warm: None,
            open: None,
            edits: Vec::new(),
            draw_stats: None,
            load: LoadTimes { project_read, ..LoadTimes::default() },
            load_parts: None,
            gpu_bytes: None,
            export,
            exported: None,
            export_after: None,
            exported_after: None,
            placed: None,
        }
    }

    /// Exports the map as it is to `path`, timed: seconds, and the bytes and chunks encoded or
    /// why not.
    fn export(app: &mut App, path: PathBuf) -> Exported {
        app.state.export_timestamp = Some(EXPORT_TIMESTAMP);
        app.state.last_export = None;
        let t = Instant::now();
        let mut refused = app.state.apply(Command::Export(path)).err().map(|e| e.to_string());
        let ui_secs = t.elapsed().as_secs_f64();
        // The export runs on its own thread: wait for it.
        app.state.poll_export(true);
        let secs = t.elapsed().as_secs_f64();
        if app.state.pending_export.take().is_some() {
            // Not later: that would be another map.
            refused = Some("chunks were still baking".to_owned());
        }
        let outcome = match (&app.state.last_export, refused) {
            (Some(done), None) => Ok((done.bytes, done.encoded, app.state.bake.slots().len())),
            (_, Some(why)) => Err(why),
            (None, None) => Err(app.state.status.as_ref().map_or_else(|| "not exported".to_owned(), |s| s.0.clone())),
        };
        (secs, ui_secs, outcome)
    }

    /// Queues a scripted edit; `false` when there is nothing to edit in front of the camera.
    /// Edits alternate: a cube placed on what the camera looks at, then that cube taken away
    /// again, so every edit changes one cube (stacked cubes used to grow towards the camera
    /// until one changed nothing, and the run waited for a re-bake that never came).
    fn edit(&mut self, app: &mut App) -> bool {
        let (cmds, key) = match self.placed.take() {
            Some((level, region)) => {
                let chunk = app.state.map.levels.get(level).map(|l| l.frame().chunk_from_lattice(region.min));
                let Some(chunk) = chunk else { return false };
                let remove = CubeOp::FillBox { region, cube: pmfedit_core::map::octree::Cube::EMPTY };
                (tools::stroke(vec![tools::cube_edit(level, remove)]), (level, chunk))
            }
            None => {
                let Some((cmds, key, region)) = scripted_edit(app) else { return false };
                self.placed = Some((key.0, region));
                (cmds, key)
            }
        };
        app.commands.extend(cmds);
        self.phase = Phase::Edited { at: Instant::now(), key, first_ms: None };
        true
    }

    /// Prints the figures; `edit_ms`: medians of [`Bench::edits`].
    fn report(&self, edit_ms: Option<[f64; 3]>) {
        let stats = |v: &[f64]| {
            let mut s: Vec<f64> = v.iter().map(|x| x * 1e3).collect();
            s.sort_by(f64::total_cmp);
            let q = |p: f64| s.get(((s.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0);
            (q(0.5), q(0.95))
        };
        let (fm, fp) = stats(&self.intervals);
        let (um, up) = stats(&self.ui_times);
        let (am, ap) = stats(&self.app_times);
        match &self.open {
            Some((Some(cache), baked)) => println!("{cache}; {baked} chunks baked on open"),
            Some((None, baked)) => println!("no project (no bake cache): {baked} chunks baked on open"),
            None => {}
        }
        let l = &self.load;
        println!("project files read: {:.2} s (before the window opens; not in the first load)", secs(l.project_read));
        if let Some((open, paint, mesh)) = &self.load_parts {
            println!(
                "open: bake cache read and checked {:.2} s, engine started {:.2} s; first frame at {:.2} s",
                secs(open.cache_read),
                secs(open.engine),
                l.first_frame
            );
            let paint = paint.unwrap_or_default();
            println!(
                "load: {} frames, app UI passes {:.2} s, paints {:.2} s (of which uploads {:.2} s); mesh workers busy {:.2} s",
                l.frames,
                secs(l.ui),
                secs(paint.total),
                secs(paint.uploads),
                secs(*mesh)
            );
        }
        println!("first load (open, cached bakes, bake + upload): {:.2} s", self.load_seconds);
        if let Some((chunks, secs)) = self.warm {
            println!(
                "then light memos warmed up around the view (before the frames and edits): {chunks} chunks in {secs:.2} s"
            );
        }
        if let Some(b) = &self.gpu_bytes {
            use pmfedit_bake::memory::mib;
            println!(
                "chunk regions on the GPU (RAM under software GL): buffers {:.0} MiB ({:.0} used), lightmap atlases {:.0} MiB, their CPU copies {:.0} MiB",
                mib(b.buffers),
                mib(b.buffers_used),
                mib(b.atlases),
                mib(b.atlas_copies)
            );
        }
        println!("frames measured: {}", self.intervals.len());
        println!("frame time (whole app frame incl. paint): median {fm:.2} ms, p95 {fp:.2} ms");
        println!("viewport CPU time per frame: median {um:.3} ms, p95 {up:.3} ms");
        println!("app UI pass CPU time per frame (panels + viewport): median {am:.3} ms, p95 {ap:.3} ms");
        if self.gpu_times.is_empty() {
            println!("GPU time of the chunk passes: n/a (no timer queries)");
        } else {
            let (gm, gp) = stats(&self.gpu_times);
            println!("GPU time of the chunk passes per frame (timer query): median {gm:.3} ms, p95 {gp:.3} ms");
        }
        if let Some(d) = &self.draw_stats {
            println!(
                "last measured frame drew {} chunks ({} culled): {} draw calls ({} chunk index runs), {} triangles",
                d.chunks,
                d.culled,
                d.draws,
                d.runs,
                d.indices / 3
            );
        }
        match &self.exported {
            Some((t, ui, Ok((bytes, encoded, _)))) => println!(
                "export (compile, encode, write; the map as opened): {t:.2} s ({:.1} ms of it on the UI thread), {bytes} bytes, {encoded} chunks encoded",
                ui * 1e3
            ),
            Some((_, _, Err(why))) => println!("export failed: {why}"),
            None => {}
        }
        match &self.exported_after {
            Some((t, ui, Ok((bytes, encoded, chunks)))) => println!(
                "export after the edits: {t:.2} s ({:.1} ms of it on the UI thread), {bytes} bytes, {encoded} of {chunks} chunks encoded (the rest kept from the first)",
                ui * 1e3
            ),
            Some((_, _, Err(why))) => println!("export after the edits failed: {why}"),
            None => {}
        }
        let each: Vec<String> = self.edits.iter().map(|e| format!("{:.0}/{:.0}/{:.0}", e[0], e[1], e[2])).collect();
        println!("edits: {} (first mesh / exact lightmaps / full bakes, ms: {})", self.edits.len(), each.join(", "));
        match edit_ms {
            Some([first, exact, full]) => {
                println!("edit → re-baked mesh uploaded (draft, or the exact bake): median {first:.1} ms");
                println!("edit → exact lightmaps uploaded (the full bake): median {exact:.1} ms");
                println!("edit → full bake of all dirty chunks: median {full:.1} ms");
            }
            None => println!("edit → re-baked mesh uploaded: n/a"),
        }
        if let Some(r) = pmfedit_bake::memory::resident() {
            use pmfedit_bake::memory::mib;
            println!("resident memory: {:.0} MiB now, {:.0} MiB peak", mib(r.now), mib(r.peak));
        }
    }

    /// Reports and closes the window.
    fn finish(&mut self, app: &mut App, ctx: &egui::Context, edit_ms: Option<[f64; 3]>) -> DriverStatus {
        self.report(edit_ms);
        self.phase = Phase::Done;
        app.close_without_asking(ctx);
        DriverStatus::Finished
    }
}

impl Driver for Bench {
    fn frame(&mut self, app: &mut App, ctx: &egui::Context) -> DriverStatus {
        if matches!(self.phase, Phase::Loading) {
            // The open as a user sees it: the app paces its own repaints while the bakes and
            // meshes stream in (`crate::pace`); the bench only looks in now and then.
            ctx.request_repaint_after(LOAD_POLL);
        } else {
            ctx.request_repaint();
        }
        let now = Instant::now();
        let interval = self.last.map(|t| now.duration_since(t).as_secs_f64());
        self.last = Some(now);
        if self.started.elapsed().as_secs() > GIVE_UP_S {
            eprintln!("pmfedit: gave up after {GIVE_UP_S} s (phase {:?})", self.phase);
            if let Phase::Edited { key, .. } = self.phase {
                // Why the edit's chunk never showed: its state, what is still baking and
                // waiting to be uploaded, and what the status line says.
                let state = &app.state;
                eprintln!(
                    "pmfedit: edited chunk {key:?} is {:?}; {} chunks in flight; {} meshes waiting for upload; last upload {:?} ago; status: {:?}",
                    state.bake.state(key),
                    state.bake.in_flight(),
                    app.viewport.uploads_waiting(),
                    app.viewport.uploaded_at(key).map(|t| t.elapsed()),
                    state.status.as_ref().map(|s| &s.0),
                );
            }
            if !self.intervals.is_empty() {
                // The frames are measured: print them (a big map's edits may outlast the limit).
                self.report(None);
            }
            app.close_without_asking(ctx);
            return DriverStatus::Finished;
        }
        match self.phase {
            Phase::Loading => {
                if self.open.is_none() {
                    // The first frame: what the open took from the cache is all the engine has.
                    let state = &app.state;
                    let baked = state.bake.slots().len() - state.cache_report.as_ref().map_or(0, |r| r.reused);
                    self.open = Some((state.cache_report.clone(), baked));
                }
                if self.load.frames == 0 {
                    self.load.first_frame = self.started.elapsed().as_secs_f64();
                }
                self.load.frames += 1;
                // The UI pass of the frame before (this frame's runs after the driver).
                self.load.ui += Duration::from_secs_f64(app.ui_pass_seconds);
                if loaded(app) {
                    self.load_seconds = self.started.elapsed().as_secs_f64();
                    self.load_parts = Some((app.state.open_times, app.viewport.paint_time(), app.viewport.mesh_busy()));
                    self.gpu_bytes = app.viewport.gpu_bytes();
                    self.phase = Phase::Warming(Instant::now());
                }
            }
            Phase::Warming(since) => {
                let (done, left, running) = app.state.bake.warm_ups();
                if app.state.warm_requested() && left == 0 && !running {
                    self.warm = Some((done, since.elapsed().as_secs_f64()));
                    self.phase = Phase::Settling(3);
                }
            }
            Phase::Settling(0) => self.phase = Phase::Measuring,
            Phase::Settling(n) => self.phase = Phase::Settling(n - 1),
            Phase::Measuring => {
                if let Some(i) = interval {
                    self.intervals.push(i);
                    self.ui_times.push(app.viewport.last_ui_seconds);
                    self.app_times.push(app.ui_pass_seconds);
                    if let Some(g) = app.viewport.paint_time().and_then(|p| p.gpu_chunks) {
                        self.gpu_times.push(g.as_secs_f64());
                    }
                    self.draw_stats = app.viewport.draw_stats();
                }
                if self.intervals.len() as u32 >= self.frames
                    && let Some(path) = self.export.take()
                {
                    self.export_after = Some(path.with_extension("edited.pmf"));
                    self.exported = Some(Self::export(app, path));
                }
                if self.intervals.len() as u32 >= self.frames && !self.edit(app) {
                    eprintln!("pmfedit: nothing in front of the camera to edit");
                    return self.finish(app, ctx, None);
                }
            }
            Phase::Edited { at, key, first_ms } => {
                // An upload after the edit's draft or exact bake arrived, once no newer mesh of it is on its way.
                let state = &app.state;
                let uploaded = app.viewport.uploaded_at(key).filter(|&t| t > at);
                if let Some(t) = uploaded
                    .filter(|_| state.bake.state(key) != Some(ChunkState::Queued) && !app.viewport.mesh_pending(key))
                {
                    let ms = t.duration_since(at).as_secs_f64() * 1e3;
                    let first_ms = first_ms.unwrap_or(ms);
                    self.phase = if state.bake.state(key) == Some(ChunkState::Drafted) {
                        Phase::Edited { at, key, first_ms: Some(first_ms) }
                    } else {
                        Phase::Finishing { at, first_ms, exact_ms: ms }
                    };
                }
            }
            Phase::Finishing { at, first_ms, exact_ms } => {
                if app.state.bake.is_settled() {
                    let full_ms = at.elapsed().as_secs_f64() * 1e3;
                    self.edits.push([first_ms, exact_ms, full_ms]);
                    if self.edits.len() >= BENCH_EDITS || !self.edit(app) {
                        if let Some(path) = self.export_after.take() {
                            self.exported_after = Some(Self::export(app, path));
                        }
                        let median = |i: usize| {
                            let mut v: Vec<f64> = self.edits.iter().map(|e| e[i]).collect();
                            v.sort_by(f64::total_cmp);
                            v[v.len() / 2]
                        };
                        let medians = [median(0), median(1), median(2)];
                        return self.finish(app, ctx, Some(medians));
                    }
                }
            }
            Phase::Done => return DriverStatus::Finished,
        }
        DriverStatus::Running
    }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// A cube placed on whatever is straight ahead of the camera (or in the air in front of it),
/// the chunk it is in and the box it fills.
fn scripted_edit(app: &App) -> Option<(Vec<Command>, ChunkKey, LatticeBox)> {
    let state = &app.state;
    let level = state.map.levels.get(state.level)?;
    let camera = &app.viewport.camera;
    let (o, d) = (camera.eye, camera.forward());
    // What the camera looks at, else the ground below a point a little ahead.
    let hit = level.ray_cast_world(o, d, crate::viewport::PICK_DISTANCE).or_else(|| {
        let ahead = o + glam::DVec3::new(d.x, 0.0, d.z).normalize_or_zero() * 20.0;
        level.ray_cast_world(ahead, glam::DVec3::NEG_Y, crate::viewport::PICK_DISTANCE)
    })?;
    let pick = Pick::from_hit(state.level, &hit);
    let target = tools::place::target(state, &pick);
    let chunk = level.frame().chunk_from_lattice(target.min);
    Some((tools::place::click(state, &pick), (state.level, chunk), target.lattice_box()))
}
