//! `pmfedit --walkthrough OUT_DIR`: a designer's session on the demo map, played through the
//! same code paths the mouse, the keyboard and the forms use, with a screenshot after each step.
//!
//! Every step pushes [`Command`]s built by the tool functions (`tools::place::click`,
//! `BoxDrag::commit`, …) from picks made by octree ray casts, or the edits the forms make
//! (`ReplaceLibraryItem`, `ReplaceObject`), then waits until the background bake has caught up
//! and the meshes are on the GPU, and saves `OUT_DIR/NN-name.png`. The session ends by undoing
//! everything, redoing it, saving into `OUT_DIR/project`, reopening that project and exporting
//! `OUT_DIR/walkthrough.pmf` (CI then runs `pmfc inspect` on it).
//!
//! The session goes on from an empty map (File → New): a designer's run building a two-room house
//! with a doorway and a roof on the work plane, in the orthographic top view, with a light
//! inside; it is saved and exported with [`HOUSE_TIMESTAMP`] (CI checks that `pmfc build` of the
//! saved project writes the same bytes).
//!
//! Without a renderer (egui_kittest) no screenshot is taken, but every step still runs, so the
//! UI tests play the same session. A screenshot whose viewport is one flat colour, a step that
//! cannot find what it aims at, or a session over [`TIME_LIMIT_S`] fails the run (exit code 1
//! from `main`, the reason on stderr).
//!
//! The session is an [`app::Driver`](crate::app::Driver); whoever starts it keeps a shared handle
//! (`Rc<RefCell<Walkthrough>>`) to read how it went ([`Walkthrough::outcome`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use eframe::egui;
use glam::{DVec3, IVec3};

use pmfedit_core::edit::{Edit, LibItem, LibRef, ObjItem, ObjRef};
use pmfedit_core::format::bin::ReadError;
use pmfedit_core::map::coords::Face;
use pmfedit_core::map::ids::PathAttrs;
use pmfedit_core::map::library::Light;

use crate::app::{App, Driver, DriverStatus, Pending};
use crate::command::Command;
use crate::drivers::{PngError, save_png};
use crate::panels::{LeftTab, RightTab};
use crate::pick::{Mods, Pick};
use crate::selection::Selection;
use crate::shading::Shading;
use crate::tools::{self, box_tool::BoxDrag};
use crate::ui_command::Action;
use crate::viewport::camera::OrthoView;

/// The whole session gives up after this long.
pub const TIME_LIMIT_S: u64 = 1200;

/// Why the session failed.
#[derive(Debug, thiserror::Error)]
pub enum WalkthroughError {
    /// Something the session works with is not in the map (the demo's).
    #[error("the map has no {0}")]
    Missing(String),
    /// A ray cast aimed at geometry hit nothing.
    #[error("nothing to hit from {from:?} along {dir:?}")]
    NoHit { from: DVec3, dir: DVec3 },
    /// A click meant for the top of a cube hit another face.
    #[error("expected a top face at {at:?}, hit {face:?}")]
    NotTop { at: DVec3, face: Face },
    /// The app did not do what the step expected (what it did instead).
    #[error("{0}")]
    Unexpected(String),
    /// A file or folder of the session.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// The export wrote no file (the status bar's message says why).
    #[error("{}: {source} (status: {status})", path.display())]
    NotExported { path: PathBuf, source: std::io::Error, status: String },
    /// The exported map does not read back.
    #[error("{}: {source}", path.display())]
    Export { path: PathBuf, source: ReadError },
    /// A screenshot could not be written.
    #[error(transparent)]
    Png(#[from] PngError),
    /// A screenshot's viewport is (nearly) one colour: the 3D view did not draw.
    #[error("{}: the viewport looks blank ({colours} distinct colours)", path.display())]
    Blank { path: PathBuf, colours: usize },
    /// The session ran past [`TIME_LIMIT_S`].
    #[error("gave up after {TIME_LIMIT_S} s at step {step} ({name})")]
    TimedOut { step: usize, name: &'static str },
    /// A step failed.
    #[error("step {step} ({name}): {source}")]
    Step { step: usize, name: &'static str, source: Box<WalkthroughError> },
}

/// A session file's I/O error.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> WalkthroughError + '_ {
    move |source| WalkthroughError::Io { path: path.to_owned(), source }
}

/// What one step does to the app; an error ends the session.
type Act = fn(&mut App, &Path) -> Result<(), WalkthroughError>;

/// One step of the session.
struct Step {
    /// File name stem of its screenshot (`None`: no screenshot, e.g. a sub-step).
    shot: Option<&'static str>,
    act: Act,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// About to run the step's action.
    Act,
    /// Waiting for the bake and uploads (frames waited so far).
    Settle(u32),
    /// Screenshot requested.
    Shooting,
    Finished,
}

/// A running walkthrough.
pub struct Walkthrough {
    out_dir: PathBuf,
    steps: Vec<Step>,
    index: usize,
    phase: Phase,
    started: Instant,
    step_started: Instant,
    shot: Arc<Mutex<Option<Arc<egui::ColorImage>>>>,
    /// Screenshots written, in order.
    pub written: Vec<PathBuf>,
    /// Why the session failed, if it did.
    pub failure: Option<WalkthroughError>,
    /// Seconds each step took to act, bake and upload.
    pub step_seconds: Vec<(&'static str, f64)>,
    /// Close the window at the end (the command-line run; tests keep it open).
    pub close_when_done: bool,
    /// The undo history's step names just before "undo all" (what the session recorded).
    pub history_names: Vec<String>,
}

impl Walkthrough {
    /// The session writing into `out_dir` (created if missing).
    pub fn new(out_dir: PathBuf) -> Self {
        Self {
            out_dir,
            steps: steps(),
            index: 0,
            phase: Phase::Act,
            started: Instant::now(),
            step_started: Instant::now(),
            shot: Arc::new(Mutex::new(None)),
            written: Vec::new(),
            failure: None,
            step_seconds: Vec::new(),
            close_when_done: false,
            history_names: Vec::new(),
        }
    }

    /// Whether every step ran (or the session failed).
    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Finished
    }

    /// How the session ended: the number of screenshots written, or why it failed; `None` while
    /// it runs (or if the window was closed before it finished).
    pub fn outcome(&self) -> Option<Result<usize, &WalkthroughError>> {
        self.is_finished().then(|| self.failure.as_ref().map_or(Ok(self.written.len()), Err))
    }

    /// Prints the step timings and the total.
    pub fn print_report(&self) {
        for (name, s) in &self.step_seconds {
            println!("  {name:<24} {s:>7.2} s");
        }
        println!("walkthrough: {} screenshots in {:.1} s", self.written.len(), self.started.elapsed().as_secs_f64());
    }

    /// Names of the screenshots the session takes, in order.
    pub fn shot_names() -> Vec<&'static str> {
        steps().iter().filter_map(|s| s.shot).collect()
    }

    fn fail(&mut self, why: WalkthroughError) {
        eprintln!("pmfedit walkthrough: {why}");
        self.failure = Some(why);
        self.phase = Phase::Finished;
    }

    /// One frame: runs the current step's action, or waits for it to settle, or takes its
    /// screenshot.
    fn step(&mut self, app: &mut App, ctx: &egui::Context) {
        if self.phase == Phase::Finished {
            return;
        }
        ctx.request_repaint();
        if self.started.elapsed().as_secs() > TIME_LIMIT_S {
            let name = self.steps.get(self.index).and_then(|s| s.shot).unwrap_or("a sub-step");
            self.fail(WalkthroughError::TimedOut { step: self.index + 1, name });
            return;
        }
        match self.phase {
            Phase::Act => {
                if self.index == 0 && !settled(app) {
                    // The first load, before anything is done.
                    return;
                }
                let Some(step) = self.steps.get(self.index) else {
                    self.phase = Phase::Finished;
                    return;
                };
                if let Err(e) = std::fs::create_dir_all(&self.out_dir) {
                    self.fail(io(&self.out_dir)(e));
                    return;
                }
                self.step_started = Instant::now();
                if step.shot == Some("undo-all") {
                    self.history_names = app.state.history.entries().map(|e| e.name.to_owned()).collect();
                }
                if let Err(e) = (step.act)(app, &self.out_dir) {
                    let name = step.shot.unwrap_or("a sub-step");
                    self.fail(WalkthroughError::Step { step: self.index + 1, name, source: Box::new(e) });
                    return;
                }
                self.phase = Phase::Settle(0);
            }
            Phase::Settle(n) => {
                // At least three frames: commands apply, the bake is queued, the result uploads.
                if n < 3 || !settled(app) {
                    self.phase = Phase::Settle(n + 1);
                    return;
                }
                let step = &self.steps[self.index];
                match step.shot {
                    Some(_) if app.viewport.has_renderer() => {
                        let (shot, c) = (self.shot.clone(), ctx.clone());
                        ctx.request_screenshot(move |img| {
                            *shot.lock().unwrap_or_else(|e| e.into_inner()) = Some(img);
                            c.request_repaint();
                        });
                        self.phase = Phase::Shooting;
                    }
                    _ => self.next(),
                }
            }
            Phase::Shooting => {
                let Some(img) = self.shot.lock().unwrap_or_else(|e| e.into_inner()).take() else { return };
                let name = self.steps[self.index].shot.unwrap_or("shot");
                let shots_before = self.steps[..self.index].iter().filter(|s| s.shot.is_some()).count();
                let path = self.out_dir.join(format!("{:02}-{name}.png", shots_before + 1));
                if let Err(colours) = check_not_blank(&img, app.viewport_rect) {
                    self.fail(WalkthroughError::Blank { path, colours });
                    return;
                }
                if let Err(e) = save_png(&img, &path) {
                    self.fail(e.into());
                    return;
                }
                println!("wrote {}", path.display());
                self.written.push(path);
                self.next();
            }
            Phase::Finished => {}
        }
    }

    fn next(&mut self) {
        let name = self.steps[self.index].shot.unwrap_or("(sub-step)");
        self.step_seconds.push((name, self.step_started.elapsed().as_secs_f64()));
        self.index += 1;
        self.phase = if self.index < self.steps.len() { Phase::Act } else { Phase::Finished };
    }
}

/// Nothing baking, nothing waiting for upload, no export waiting.
fn settled(app: &App) -> bool {
    let s = &app.state;
    s.baking() == 0
        && !s.bake.slots().is_empty()
        && s.pending_export.is_none()
        && s.export_job().is_none()
        && (!app.viewport.has_renderer() || app.viewport.uploads_waiting() == 0)
}

/// Refuses a screenshot whose viewport area is (nearly) one colour: the 3D view did not draw.
/// The error is the number of distinct colours seen.
fn check_not_blank(img: &egui::ColorImage, viewport: Option<egui::Rect>) -> Result<(), usize> {
    let [w, h] = img.size;
    if w == 0 || h == 0 {
        return Err(0);
    }
    // The viewport rectangle in pixels (points × pixels per point), else the whole image.
    let scale = w as f32 / img.width().max(1) as f32;
    let r = viewport.unwrap_or(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(w as f32, h as f32)));
    let (x0, y0) = ((r.min.x * scale).max(0.0) as usize, (r.min.y * scale).max(0.0) as usize);
    let (x1, y1) = (((r.max.x * scale) as usize).min(w), ((r.max.y * scale) as usize).min(h));
    let mut colours = std::collections::HashSet::new();
    for y in (y0..y1).step_by(3) {
        for x in (x0..x1).step_by(3) {
            colours.insert(img.pixels[y * w + x].to_array());
        }
    }
    if colours.len() < 64 {
        return Err(colours.len());
    }
    Ok(())
}

impl Driver for Walkthrough {
    fn frame(&mut self, app: &mut App, ctx: &egui::Context) -> DriverStatus {
        self.step(app, ctx);
        if !self.is_finished() {
            return DriverStatus::Running;
        }
        if self.close_when_done {
            self.print_report();
            app.close_without_asking(ctx);
        }
        DriverStatus::Finished
    }
}

// ----- the session ---------------------------------------------------------------------------

/// Where the walkthrough builds: a flat patch of grass south-west of the building.
const SITE: DVec3 = DVec3::new(-8.0, 0.0, -14.0);

fn step(shot: &'static str, act: Act) -> Step {
    Step { shot: Some(shot), act }
}

fn sub(act: Act) -> Step {
    Step { shot: None, act }
}

fn steps() -> Vec<Step> {
    vec![
        step("open-demo", |_, _| Ok(())),
        step("fly", |app, _| {
            // Right mouse + W for a while, then a look to the left: what the fly camera does.
            let cam = &mut app.viewport.camera;
            for _ in 0..30 {
                let f = cam.forward();
                cam.fly(f * 0.4);
            }
            cam.turn(-0.35, 0.05);
            Ok(())
        }),
        sub(|app, _| {
            look(app, SITE + DVec3::new(-6.0, 11.0, -8.0), SITE + DVec3::new(2.5, 1.0, 3.0));
            material(app, "wood")?;
            app.commands.push(Command::SetTool(tools::place::ID));
            app.commands.push(Command::SetCubeSize(3));
            Ok(())
        }),
        // Place: a column of three cubes, each clicked on top of the last.
        sub(|app, _| place_on_top(app, SITE + DVec3::new(0.5, 0.0, 0.5))),
        sub(|app, _| place_on_top(app, SITE + DVec3::new(0.5, 0.0, 0.5))),
        step("place", |app, _| place_on_top(app, SITE + DVec3::new(0.5, 0.0, 0.5))),
        // Box: a 5 × 5 rectangle on the ground extruded three layers (wheel up ×3).
        step("box-extrude", |app, _| {
            material(app, "stone")?;
            app.commands.push(Command::SetTool(tools::box_tool::ID));
            let a = pick_down(app, SITE + DVec3::new(3.5, 0.0, 0.5))?;
            let b = pick_down(app, SITE + DVec3::new(7.5, 0.0, 4.5))?;
            let drag = drag_between(app, &a, &b, 3);
            let cmds = drag.commit(&app.state);
            app.commands.extend(cmds);
            Ok(())
        }),
        // …and a 3 × 3 pit carved two layers into its top (wheel down ×2).
        step("box-carve", |app, _| {
            let a = pick_down(app, SITE + DVec3::new(4.5, 10.0, 1.5))?;
            let b = pick_down(app, SITE + DVec3::new(6.5, 10.0, 3.5))?;
            let drag = drag_between(app, &a, &b, -2);
            let cmds = drag.commit(&app.state);
            app.commands.extend(cmds);
            Ok(())
        }),
        step("erase", |app, _| {
            app.commands.push(Command::SetTool(tools::erase::ID));
            let p = pick_down(app, SITE + DVec3::new(0.5, 10.0, 0.5))?;
            let cmds = tools::erase::click(&app.state, &p);
            app.commands.extend(cmds);
            Ok(())
        }),
        // Paint: one face (the block's west side) and one whole cube (Shift).
        step("paint", |app, _| {
            material(app, "sand")?;
            app.commands.push(Command::SetTool(tools::paint::ID));
            let side = pick_along(app, SITE + DVec3::new(0.0, 1.5, 2.5), DVec3::X)?;
            let top = pick_down(app, SITE + DVec3::new(3.5, 10.0, 4.5))?;
            let mut cmds = tools::paint::apply(&app.state, &side, Mods::default());
            cmds.extend(tools::paint::apply(&app.state, &top, Mods::SHIFT));
            app.commands.extend(tools::stroke(cmds));
            Ok(())
        }),
        // Select: the block's top row, then Ctrl+D duplicates it upward.
        sub(|app, _| {
            app.commands.push(Command::SetTool(tools::select::ID));
            let a = pick_down(app, SITE + DVec3::new(3.5, 10.0, 0.5))?;
            let b = pick_down(app, SITE + DVec3::new(7.5, 10.0, 0.5))?;
            let drag = drag_between(app, &a, &b, -1);
            app.commands.push(tools::select::finish(&drag));
            Ok(())
        }),
        step("select-duplicate", |app, _| {
            let cmds = tools::select::duplicate(&app.state, IVec3::Y);
            if cmds.is_empty() {
                return Err(unexpected("nothing selected to duplicate"));
            }
            app.commands.extend(cmds);
            Ok(())
        }),
        // Corner: push the column's top corner down by half a unit (extended geometry).
        step("corner", |app, _| {
            app.commands.push(Command::SetTool(tools::corner::ID));
            app.commands.push(Command::Select(Selection::None));
            let p = pick_down(app, SITE + DVec3::new(0.9, 10.0, 0.9))?;
            let (addr, corner) = tools::corner::grab(&app.state, &p);
            let cmds = tools::corner::push(p.level, addr, p.face, corner, 8);
            app.commands.extend(tools::stroke(cmds));
            Ok(())
        }),
        // Eyedropper: pick the grass back up from the ground.
        step("eyedropper", |app, _| {
            app.commands.push(Command::SetTool(tools::eyedropper::ID));
            let p = pick_down(app, SITE + DVec3::new(-2.5, 10.0, -2.5))?;
            let cmds = tools::eyedropper::click(&app.state, &p);
            if cmds.is_empty() {
                return Err(unexpected("the eyedropper found no material"));
            }
            app.commands.extend(cmds);
            Ok(())
        }),
        step("path-attributes", |app, _| {
            app.commands.push(Command::SetTool(tools::path::ID));
            let mut cmds = Vec::new();
            for x in 0..4 {
                let p = pick_down(app, SITE + DVec3::new(-1.5 - f64::from(x), 10.0, 2.5))?;
                cmds.extend(tools::path::apply(&app.state, &p, PathAttrs(1), Mods::default()));
            }
            app.commands.extend(tools::stroke(cmds));
            Ok(())
        }),
        // A material form: the wood turns blue (what the colour picker sends).
        step("material-form", |app, _| {
            let (id, m) = app.state.map.library.materials().by_name("wood").ok_or_else(|| missing("wood material"))?;
            let mut m = m.clone();
            m.color = [70, 120, 255];
            app.panels.show_right = true;
            app.panels.right_tab = RightTab::Materials;
            material(app, "wood")?;
            app.commands
                .push(Command::Edit(Edit::ReplaceLibraryItem { id: LibRef::Material(id), item: LibItem::Material(m) }));
            Ok(())
        }),
        // An environment form: the level's sky.
        step("environment-form", |app, _| environment_edit(app)),
        // Lights: place a point light over the block, then make it orange and wider in the
        // inspector; the lightmaps around it re-bake.
        sub(|app, _| {
            app.commands.push(Command::SetTool(tools::object::ID));
            let p = pick_down(app, SITE + DVec3::new(2.0, 10.0, 6.5))?;
            let cmds = tools::object::place(&app.state, &p, Mods::default());
            app.commands.extend(cmds);
            Ok(())
        }),
        step("light-place", |app, _| {
            let Selection::Light { level, id } = app.state.selection else {
                return Err(unexpected("placing a light did not select it"));
            };
            let light = app.state.map.levels[level].objects.lights().get(id).ok_or_else(|| missing("new light"))?;
            let mut l: Light = light.clone();
            l.position.y += 2.0;
            app.commands.push(Command::Edit(Edit::ReplaceObject {
                level,
                id: ObjRef::Light(id),
                item: ObjItem::Light(l),
            }));
            app.panels.right_tab = RightTab::Inspector;
            Ok(())
        }),
        step("light-edit", |app, _| {
            let Selection::Light { level, id } = app.state.selection else {
                return Err(unexpected("the light is no longer selected"));
            };
            let light = app.state.map.levels[level].objects.lights().get(id).ok_or_else(|| missing("light"))?;
            let mut l: Light = light.clone();
            l.color = [255, 140, 30];
            l.intensity *= 3.0;
            l.range *= 1.5;
            app.commands.push(Command::Edit(Edit::ReplaceObject {
                level,
                id: ObjRef::Light(id),
                item: ObjItem::Light(l),
            }));
            Ok(())
        }),
        step("light-lightmap-view", |app, _| {
            app.viewport.shading = Shading::Lightmap;
            Ok(())
        }),
        // Undo everything (the history panel's first row), then redo it all.
        step("undo-all", |app, _| {
            app.viewport.shading = Shading::Lit;
            if app.state.history.len() < 10 {
                return Err(unexpected(format!("only {} undo steps were recorded", app.state.history.len())));
            }
            app.panels.show_left = true;
            app.panels.left_tab = LeftTab::History;
            app.commands.push(Command::GoTo(0));
            Ok(())
        }),
        step("redo-all", |app, _| {
            app.commands.push(Command::GoTo(app.state.history.len()));
            Ok(())
        }),
        step("save", |app, dir| {
            let project = dir.join("project");
            if project.exists() {
                std::fs::remove_dir_all(&project).map_err(io(&project))?;
            }
            if !app.save_as(&project) {
                return Err(unexpected(format!("saving failed: {:?}", app.state.status)));
            }
            Ok(())
        }),
        step("reopen", |app, dir| {
            if app.state.is_dirty() {
                return Err(unexpected(format!("saving did not clear the unsaved marker: {:?}", app.state.status)));
            }
            app.request(Pending::Open(dir.join("project")));
            Ok(())
        }),
        step("export", |app, dir| {
            let out = dir.join("walkthrough.pmf");
            let _ = std::fs::remove_file(&out);
            app.commands.push(Command::Export(out));
            Ok(())
        }),
        sub(|app, dir| {
            let out = dir.join("walkthrough.pmf");
            let status = app.state.status.as_ref().map(|(m, _)| m.clone()).unwrap_or_default();
            let bytes = std::fs::read(&out).map_err(|source| WalkthroughError::NotExported {
                path: out.clone(),
                source,
                status,
            })?;
            let file = pmfedit_core::format::pmf::read(&bytes)
                .map_err(|source| WalkthroughError::Export { path: out.clone(), source })?;
            println!("exported {} ({} bytes, {} levels)", out.display(), bytes.len(), file.levels.len());
            Ok(())
        }),
        // ----- A designer's run from an empty map: a two-room house. -----
        step("house-new-map", |app, _| {
            app.request(Pending::New);
            if !app.state.map.levels.iter().all(|l| l.chunks().next().is_none()) {
                return Err(unexpected("File → New did not give an empty map"));
            }
            Ok(())
        }),
        // The floor, drawn in the top view on the work plane (height 0).
        step("house-floor-top-view", |app, _| {
            app.run(Action::View(Some(OrthoView::Top)), None);
            app.viewport.camera.frame(HOUSE_CENTRE, 16.0);
            app.commands.push(Command::SetCubeSize(3));
            app.state.cube_log2 = 3;
            material(app, "tiles")?;
            app.commands.push(Command::SetTool(tools::box_tool::ID));
            box_on_work_plane(app, [0, 0], [11, 7], 1)
        }),
        // Walls three layers high on the work plane one cube up (PageUp): four outer walls and a
        // partition with a doorway between the two rooms.
        step("house-walls-top-view", |app, _| {
            material(app, "brick")?;
            work_plane_height(app, 1.0);
            for (a, b) in [([0, 0], [11, 0]), ([0, 7], [11, 7]), ([0, 1], [0, 6]), ([11, 1], [11, 6])] {
                box_on_work_plane(app, a, b, 3)?;
            }
            // The partition at x = 6, the doorway at z 3..5 two cubes high, a lintel over it.
            box_on_work_plane(app, [6, 1], [6, 2], 3)?;
            box_on_work_plane(app, [6, 5], [6, 6], 3)?;
            work_plane_height(app, 3.0);
            box_on_work_plane(app, [6, 3], [6, 4], 1)
        }),
        // A light inside the west room, placed on the work plane at head height.
        step("house-light", |app, _| {
            app.run(Action::View(None), None);
            look(app, DVec3::new(-4.0, 16.0, -6.0), DVec3::new(5.0, 0.0, 4.0));
            work_plane_height(app, 2.0);
            app.commands.push(Command::SetTool(tools::object::ID));
            let p = plane_pick(app, 3.0, 4.0)?;
            let cmds = tools::object::place(&app.state, &p, Mods::default());
            if cmds.is_empty() {
                return Err(unexpected("the Object tool placed nothing on the work plane"));
            }
            app.commands.extend(cmds);
            Ok(())
        }),
        // The roof, one layer over the walls with an overhang, drawn in the top view again.
        step("house-roof", |app, _| {
            material(app, "wood")?;
            app.commands.push(Command::SetTool(tools::box_tool::ID));
            work_plane_height(app, 4.0);
            box_on_work_plane(app, [-1, -1], [12, 8], 1)?;
            look(app, DVec3::new(-9.0, 10.0, -13.0), HOUSE_CENTRE);
            Ok(())
        }),
        // Saved, then exported with a fixed timestamp: CI compares it with `pmfc build` of the
        // saved project (the same bytes).
        step("house-export", |app, dir| {
            let project = dir.join("house");
            if project.exists() {
                std::fs::remove_dir_all(&project).map_err(io(&project))?;
            }
            if !app.save_as(&project) {
                return Err(unexpected(format!("saving the house failed: {:?}", app.state.status)));
            }
            let out = dir.join("house.pmf");
            let _ = std::fs::remove_file(&out);
            app.state.export_timestamp = Some(HOUSE_TIMESTAMP);
            app.commands.push(Command::Export(out));
            Ok(())
        }),
        sub(|app, dir| {
            let out = dir.join("house.pmf");
            let status = app.state.status.as_ref().map(|(m, _)| m.clone()).unwrap_or_default();
            let bytes = std::fs::read(&out).map_err(|source| WalkthroughError::NotExported {
                path: out.clone(),
                source,
                status: status.clone(),
            })?;
            let file = pmfedit_core::format::pmf::read(&bytes)
                .map_err(|source| WalkthroughError::Export { path: out.clone(), source })?;
            if file.archive.is_empty() {
                return Err(unexpected(format!("the house's export embeds no resources ({status})")));
            }
            println!("exported {} ({} bytes): {status}", out.display(), bytes.len());
            Ok(())
        }),
    ]
}

/// The header time the house's export is stamped with (`pmfc build --timestamp` gives the same
/// bytes for the saved project).
pub const HOUSE_TIMESTAMP: u64 = 1_700_000_000;

/// The middle of the house (world).
const HOUSE_CENTRE: DVec3 = DVec3::new(6.0, 2.0, 4.0);

/// Moves the work plane to world height `y` (what PageUp / PageDown do a cube at a time).
fn work_plane_height(app: &mut App, y: f64) {
    let p = DVec3::new(0.0, y, 0.0);
    app.commands.push(Command::SetWorkPlane(p));
    // Tools called in this frame read the state.
    app.state.work_point = p;
}

/// The work plane (horizontal, at the state's height) under world column `(x, z)`, as the
/// viewport picks it for a pointer there in the top view.
fn plane_pick(app: &App, x: f64, z: f64) -> Result<Pick, WalkthroughError> {
    let level = app.state.map.levels.get(app.state.level).ok_or_else(|| missing("active level"))?;
    let frame = level.frame();
    let plane = frame.lattice_from_world_f(app.state.work_point).y.round() as i32;
    let from = DVec3::new(x, app.state.work_point.y + 50.0, z);
    Pick::on_plane(app.state.level, frame.lattice_from_world_f(from), DVec3::NEG_Y, 1, plane)
        .ok_or(WalkthroughError::NoHit { from, dir: DVec3::NEG_Y })
}

/// A Box drag on the work plane from cell `a` to cell `b` (world `[x, z]` of unit cells,
/// inclusive) with `layers` layers: what pressing over `a`, moving to `b`, turning the wheel
/// and releasing does with the Box tool.
fn box_on_work_plane(app: &mut App, a: [i32; 2], b: [i32; 2], layers: i32) -> Result<(), WalkthroughError> {
    let centre = |c: [i32; 2]| (f64::from(c[0]) + 0.5, f64::from(c[1]) + 0.5);
    let (ax, az) = centre(a);
    let (bx, bz) = centre(b);
    let pa = plane_pick(app, ax, az)?;
    let pb = plane_pick(app, bx, bz)?;
    let mut drag = BoxDrag::start(&pa, app.state.cube_log2, 1);
    drag.current = pb.outside(app.state.cube_log2).min;
    drag.add_layers(layers - 1);
    let cmds = drag.commit(&app.state);
    app.commands.extend(cmds);
    Ok(())
}

fn missing(what: impl Into<String>) -> WalkthroughError {
    WalkthroughError::Missing(what.into())
}

fn unexpected(what: impl Into<String>) -> WalkthroughError {
    WalkthroughError::Unexpected(what.into())
}

fn look(app: &mut App, eye: DVec3, target: DVec3) {
    app.viewport.camera.look_at(eye, target);
}

fn material(app: &mut App, name: &str) -> Result<(), WalkthroughError> {
    let (id, _) = app.state.map.library.materials().by_name(name).ok_or_else(|| missing(format!("material {name}")))?;
    app.commands.push(Command::SetMaterial(id));
    // The command applies at the end of the frame; tools called in this frame read the state.
    app.state.material = id;
    Ok(())
}

/// The face hit by a ray from `from` along `dir` (world space) on the active level.
fn pick_along(app: &App, from: DVec3, dir: DVec3) -> Result<Pick, WalkthroughError> {
    let level = app.state.map.levels.get(app.state.level).ok_or_else(|| missing("active level"))?;
    let hit = level
        .ray_cast_world(from - dir * 6.0, dir.normalize(), crate::viewport::PICK_DISTANCE)
        .ok_or(WalkthroughError::NoHit { from, dir })?;
    Ok(Pick::from_hit(app.state.level, &hit))
}

/// The surface straight below `at` (from 20 units above it).
fn pick_down(app: &App, at: DVec3) -> Result<Pick, WalkthroughError> {
    pick_along(app, DVec3::new(at.x, 20.0, at.z), DVec3::NEG_Y)
}

fn place_on_top(app: &mut App, at: DVec3) -> Result<(), WalkthroughError> {
    let p = pick_down(app, at)?;
    if p.face != Face::PosY {
        return Err(WalkthroughError::NotTop { at, face: p.face });
    }
    let cmds = tools::place::click(&app.state, &p);
    app.commands.extend(cmds);
    Ok(())
}

/// A box drag from the face under `a` to the face under `b` with `layers` wheel steps.
fn drag_between(app: &App, a: &Pick, b: &Pick, layers: i32) -> BoxDrag {
    let size = app.state.cube_log2;
    BoxDrag {
        level: a.level,
        face: a.face,
        anchor: a.outside(size).min,
        current: b.outside(size).min,
        size_log2: size,
        layers,
    }
}

/// Changes the level's default sky (or, without one, the first sky environment): its top
/// and side skybox materials become the water, so the background follows.
fn environment_edit(app: &mut App) -> Result<(), WalkthroughError> {
    use pmfedit_core::map::library::{EnvKind, EnvRef, Environment};
    let lib = &app.state.map.library;
    let id = app.state.map.levels[app.state.level]
        .environments
        .sky
        .or_else(|| lib.sky_environments().iter().next().map(|(id, _)| id))
        .ok_or_else(|| missing("sky environment"))?;
    let mut env = lib.sky_environments().get(id).ok_or_else(|| missing("sky"))?.clone();
    let (water, _) = lib.materials().by_name("water").ok_or_else(|| missing("water material"))?;
    // Faces +X, +Y, +Z, −X, (not −Y), −Z.
    for face in [0, 1, 2, 3, 5] {
        env.skybox[face] = Some(water);
    }
    app.panels.show_right = true;
    app.panels.right_tab = RightTab::Environments;
    app.panels.environments.kind = Some(EnvKind::Sky);
    app.panels.environments.selected = Some(EnvRef::Sky(id));
    app.commands.push(Command::Edit(Edit::ReplaceLibraryItem {
        id: LibRef::Environment(EnvRef::Sky(id)),
        item: LibItem::Environment(Environment::Sky(env)),
    }));
    Ok(())
}
