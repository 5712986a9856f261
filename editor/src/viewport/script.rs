//! The `--screenshot` and `--bench-frames` command-line modes, driven from the viewport's frame
//! loop. `main` sets the [`Mode`] before the window opens.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use eframe::egui;

use pmfedit_bake::deps::ChunkKey;
use pmfedit_bake::rebuild::ChunkState;

use super::Viewport;
use crate::command::Command;
use crate::state::EditorState;
use crate::tools::{self, Pick};

/// What the command line asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// Render `frames` frames (and until nothing is pending), save a PNG, exit.
    Screenshot { out: PathBuf, frames: u32 },
    /// Measure `frames` frames after the first load and one edit's bake→upload latency, exit.
    Bench { frames: u32 },
}

static MODE: OnceLock<Mode> = OnceLock::new();
static SHADING: OnceLock<super::render::Shading> = OnceLock::new();

/// The shading the next [`Viewport`] starts with (`--shading`).
pub fn set_shading(shading: super::render::Shading) {
    let _ = SHADING.set(shading);
}

/// The shading asked for on the command line, if any.
pub fn initial_shading() -> Option<super::render::Shading> {
    SHADING.get().copied()
}

static VIEW_DISTANCE: OnceLock<f64> = OnceLock::new();

/// The view distance the next [`Viewport`] starts with (`--view-distance`).
pub fn set_view_distance(distance: f64) {
    let _ = VIEW_DISTANCE.set(distance);
}

/// The view distance asked for on the command line, if any.
pub fn initial_view_distance() -> Option<f64> {
    VIEW_DISTANCE.get().copied()
}

/// Sets the mode for the next [`Viewport`]; call once, before the app starts.
pub fn set_mode(mode: Mode) {
    let _ = MODE.set(mode);
}

#[derive(Debug)]
enum Phase {
    Loading,
    Settling(u32),
    Measuring,
    /// Waiting for the edited chunk's re-baked mesh (its draft, or its preview) to be uploaded
    /// (`first_ms` then set), then for its exact lightmaps (the preview) to be uploaded.
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

/// A running script.
pub struct Script {
    mode: Mode,
    frame: u32,
    started: Instant,
    phase: Phase,
    last: Option<Instant>,
    intervals: Vec<f64>,
    ui_times: Vec<f64>,
    /// Per measured frame: the app's whole UI pass of the frame before, seconds.
    app_times: Vec<f64>,
    load_seconds: f64,
    shot: Arc<Mutex<Option<Arc<egui::ColorImage>>>>,
    requested: bool,
    /// Per scripted edit: ms to the edited chunk's preview upload, ms to every full bake.
    /// Per scripted edit: ms to the first re-baked mesh on screen, to the exact one, to every
    /// full bake.
    edits: Vec<[f64; 3]>,
    /// What the last measured frame drew.
    draw_stats: Option<super::render::DrawStats>,
}

/// Scripted edits a `--bench-frames` run measures (one after the other).
const BENCH_EDITS: usize = 5;

impl Script {
    /// The script the command line asked for, if any.
    pub fn from_cli() -> Option<Script> {
        let mode = MODE.get()?.clone();
        Some(Script {
            mode,
            frame: 0,
            started: Instant::now(),
            phase: Phase::Loading,
            last: None,
            intervals: Vec::new(),
            ui_times: Vec::new(),
            app_times: Vec::new(),
            load_seconds: 0.0,
            shot: Arc::new(Mutex::new(None)),
            requested: false,
            edits: Vec::new(),
            draw_stats: None,
        })
    }

    /// Whether this is a `--screenshot` run (the pointer is then ignored).
    pub fn is_screenshot(&self) -> bool {
        matches!(self.mode, Mode::Screenshot { .. })
    }

    fn loaded(vp: &Viewport, state: &EditorState) -> bool {
        state.bake.is_settled() && !state.bake.slots().is_empty() && vp.uploads_waiting() == 0
    }

    /// One frame.
    pub fn step(&mut self, ctx: &egui::Context, vp: &mut Viewport, state: &mut EditorState, out: &mut Vec<Command>) {
        self.frame += 1;
        ctx.request_repaint();
        let now = Instant::now();
        let interval = self.last.map(|t| now.duration_since(t).as_secs_f64());
        self.last = Some(now);
        if self.started.elapsed().as_secs() > 600 {
            eprintln!("pmfedit: gave up after 600 s (phase {:?})", self.phase);
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        match self.mode.clone() {
            Mode::Screenshot { out: path, frames } => self.screenshot(ctx, vp, state, &path, frames),
            Mode::Bench { frames } => self.bench(ctx, vp, state, out, frames, interval),
        }
    }

    fn screenshot(&mut self, ctx: &egui::Context, vp: &Viewport, state: &EditorState, path: &PathBuf, frames: u32) {
        if let Some(img) = self.shot.lock().expect("shot").take() {
            match save_png(&img, path) {
                Ok(()) => println!("wrote {} ({}×{})", path.display(), img.size[0], img.size[1]),
                Err(e) => eprintln!("pmfedit: {}: {e}", path.display()),
            }
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        if !self.requested && self.frame >= frames && (Self::loaded(vp, state) || !vp.has_renderer()) {
            // Two more frames so the last uploads are painted.
            match self.phase {
                Phase::Loading => self.phase = Phase::Settling(2),
                Phase::Settling(0) => {
                    let shot = self.shot.clone();
                    let c = ctx.clone();
                    ctx.request_screenshot(move |img| {
                        *shot.lock().expect("shot") = Some(img);
                        c.request_repaint();
                    });
                    self.requested = true;
                }
                Phase::Settling(n) => self.phase = Phase::Settling(n - 1),
                _ => {}
            }
        }
    }

    fn bench(
        &mut self,
        ctx: &egui::Context,
        vp: &Viewport,
        state: &mut EditorState,
        out: &mut Vec<Command>,
        frames: u32,
        interval: Option<f64>,
    ) {
        match self.phase {
            Phase::Loading => {
                if Self::loaded(vp, state) {
                    self.load_seconds = self.started.elapsed().as_secs_f64();
                    self.phase = Phase::Settling(3);
                }
            }
            Phase::Settling(0) => self.phase = Phase::Measuring,
            Phase::Settling(n) => self.phase = Phase::Settling(n - 1),
            Phase::Measuring => {
                if let Some(i) = interval {
                    self.intervals.push(i);
                    self.ui_times.push(vp.last_ui_seconds);
                    self.app_times.push(vp.last_app_seconds);
                    self.draw_stats = vp.draw_stats();
                }
                if self.intervals.len() as u32 >= frames {
                    let Some((cmds, key)) = scripted_edit(vp, state) else {
                        eprintln!("pmfedit: nothing in front of the camera to edit");
                        self.report(None);
                        self.phase = Phase::Done;
                        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                        return;
                    };
                    out.extend(cmds);
                    self.phase = Phase::Edited { at: Instant::now(), key, first_ms: None };
                }
            }
            Phase::Edited { at, key, first_ms } => {
                // An upload after the edit's draft or preview bake arrived.
                let uploaded = vp.uploaded_at(key).filter(|&t| t > at);
                if let Some(t) =
                    uploaded.filter(|_| state.bake.state(key) != Some(ChunkState::Queued) && vp.uploads_waiting() == 0)
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
                if state.bake.is_settled() {
                    let full_ms = at.elapsed().as_secs_f64() * 1e3;
                    self.edits.push([first_ms, exact_ms, full_ms]);
                    let next = if self.edits.len() < BENCH_EDITS { scripted_edit(vp, state) } else { None };
                    match next {
                        Some((cmds, key)) => {
                            out.extend(cmds);
                            self.phase = Phase::Edited { at: Instant::now(), key, first_ms: None };
                        }
                        None => {
                            let median = |i: usize| {
                                let mut v: Vec<f64> = self.edits.iter().map(|e| e[i]).collect();
                                v.sort_by(f64::total_cmp);
                                v[v.len() / 2]
                            };
                            self.report(Some([median(0), median(1), median(2)]));
                            self.phase = Phase::Done;
                            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                        }
                    }
                }
            }
            Phase::Done => {}
        }
    }

    /// Prints the figures; `edit_ms`: medians of [`Script::edits`].
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
        println!("first load (bake + upload): {:.2} s", self.load_seconds);
        println!("frames measured: {}", self.intervals.len());
        println!("frame time (whole app frame incl. paint): median {fm:.2} ms, p95 {fp:.2} ms");
        println!("viewport CPU time per frame: median {um:.3} ms, p95 {up:.3} ms");
        println!("app UI pass CPU time per frame (panels + viewport): median {am:.3} ms, p95 {ap:.3} ms");
        if let Some(d) = &self.draw_stats {
            println!(
                "last measured frame drew {} chunks ({} culled): {} draw calls, {} triangles",
                d.chunks,
                d.culled,
                d.draws,
                d.indices / 3
            );
        }
        let each: Vec<String> = self.edits.iter().map(|e| format!("{:.0}/{:.0}/{:.0}", e[0], e[1], e[2])).collect();
        println!("edits: {} (first mesh / exact lightmaps / full bakes, ms: {})", self.edits.len(), each.join(", "));
        match edit_ms {
            Some([first, exact, full]) => {
                println!("edit → re-baked mesh uploaded (draft or preview): median {first:.1} ms");
                println!("edit → exact lightmaps uploaded (preview): median {exact:.1} ms");
                println!("edit → full bake of all dirty chunks: median {full:.1} ms");
            }
            None => println!("edit → re-baked mesh uploaded: n/a"),
        }
    }
}

/// A cube placed on whatever is straight ahead of the camera (or in the air in front of it).
fn scripted_edit(vp: &Viewport, state: &EditorState) -> Option<(Vec<Command>, ChunkKey)> {
    let level = state.map.levels.get(state.level)?;
    let (o, d) = (vp.camera.eye, vp.camera.forward());
    // What the camera looks at, else the ground below a point a little ahead.
    let hit = level.ray_cast_world(o, d, super::PICK_DISTANCE).or_else(|| {
        let ahead = o + glam::DVec3::new(d.x, 0.0, d.z).normalize_or_zero() * 20.0;
        level.ray_cast_world(ahead, glam::DVec3::NEG_Y, super::PICK_DISTANCE)
    })?;
    let pick = Pick::from_hit(state.level, &hit);
    let target = tools::place::target(state, &pick);
    let chunk = level.frame().chunk_from_lattice(target.min);
    Some((tools::place::click(state, &pick), (state.level, chunk)))
}

pub(crate) fn save_png(img: &egui::ColorImage, path: &PathBuf) -> Result<(), String> {
    let [w, h] = img.size;
    let bytes: Vec<u8> = img.pixels.iter().flat_map(|c| c.to_array()).collect();
    let buf = image::RgbaImage::from_raw(w as u32, h as u32, bytes).ok_or("bad screenshot size")?;
    buf.save(path).map_err(|e| e.to_string())
}
