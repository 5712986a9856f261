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
//! Without a renderer (egui_kittest) no screenshot is taken, but every step still runs, so the
//! UI tests play the same session. A screenshot whose viewport is one flat colour, a step that
//! cannot find what it aims at, or a session over [`TIME_LIMIT_S`] fails the run (exit code 1
//! from `main`, the reason on stderr).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use eframe::egui;
use glam::{DVec3, IVec3};

use pmfedit_core::edit::{Edit, LibItem, LibRef, ObjItem, ObjRef};
use pmfedit_core::map::coords::Face;
use pmfedit_core::map::ids::PathAttrs;
use pmfedit_core::map::library::Light;

use crate::app::App;
use crate::command::Command;
use crate::panels::{LeftTab, RightTab};
use crate::state::Selection;
use crate::tools::box_tool::BoxDrag;
use crate::tools::{self, Mods, Pick};
use crate::viewport::render::Shading;

/// The whole session gives up after this long.
pub const TIME_LIMIT_S: u64 = 1200;

/// What one step does to the app; an error ends the session.
type Act = fn(&mut App, &Path) -> Result<(), String>;

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
    pub failure: Option<String>,
    /// Seconds each step took to act, bake and upload.
    pub step_seconds: Vec<(&'static str, f64)>,
    /// Close the window at the end (the command-line run; tests keep it open).
    pub close_when_done: bool,
    /// The undo history's step names just before "undo all" (what the session recorded).
    pub history_names: Vec<String>,
}

static CLI_DIR: OnceLock<PathBuf> = OnceLock::new();
static RESULT: OnceLock<Result<usize, String>> = OnceLock::new();

/// Asks the next [`App`] to play the walkthrough into `out_dir` and close; call before the
/// window opens.
pub fn set_cli(out_dir: PathBuf) {
    let _ = CLI_DIR.set(out_dir);
}

/// How the command-line walkthrough ended: the number of screenshots, or why it failed. `None`
/// if it never finished (the window was closed early).
pub fn cli_result() -> Option<Result<usize, String>> {
    RESULT.get().cloned()
}

/// Prints the step timings and records the result for [`cli_result`].
pub fn report(w: &Walkthrough) {
    for (name, s) in &w.step_seconds {
        println!("  {name:<24} {s:>7.2} s");
    }
    println!("walkthrough: {} screenshots in {:.1} s", w.written.len(), w.started.elapsed().as_secs_f64());
    let _ = RESULT.set(match &w.failure {
        Some(f) => Err(f.clone()),
        None => Ok(w.written.len()),
    });
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

    /// The session `--walkthrough` asked for, if any.
    pub fn from_cli() -> Option<Self> {
        let dir = CLI_DIR.get()?.clone();
        Some(Self { close_when_done: true, ..Self::new(dir) })
    }

    /// Whether every step ran (or the session failed).
    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Finished
    }

    /// Names of the screenshots the session takes, in order.
    pub fn shot_names() -> Vec<&'static str> {
        steps().iter().filter_map(|s| s.shot).collect()
    }

    fn fail(&mut self, why: String) {
        eprintln!("pmfedit walkthrough: {why}");
        self.failure = Some(why);
        self.phase = Phase::Finished;
    }

    /// One frame: called by [`App`] after the panels and the viewport queued their commands and
    /// before they are applied.
    pub fn step(&mut self, app: &mut App, ctx: &egui::Context) {
        if self.phase == Phase::Finished {
            return;
        }
        ctx.request_repaint();
        if self.started.elapsed().as_secs() > TIME_LIMIT_S {
            let name = self.steps.get(self.index).and_then(|s| s.shot).unwrap_or("a sub-step");
            self.fail(format!("gave up after {TIME_LIMIT_S} s at step {} ({name})", self.index + 1));
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
                    self.fail(format!("{}: {e}", self.out_dir.display()));
                    return;
                }
                self.step_started = Instant::now();
                if step.shot == Some("undo-all") {
                    self.history_names = app.state.history.entries().map(|e| e.name.to_owned()).collect();
                }
                if let Err(e) = (step.act)(app, &self.out_dir) {
                    let name = step.shot.unwrap_or("a sub-step");
                    self.fail(format!("step {} ({name}): {e}", self.index + 1));
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
                if let Err(e) = check_not_blank(&img, app.viewport_rect) {
                    self.fail(format!("{}: {e}", path.display()));
                    return;
                }
                if let Err(e) = crate::viewport::script::save_png(&img, &path) {
                    self.fail(format!("{}: {e}", path.display()));
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
        && (!app.viewport.has_renderer() || app.viewport.uploads_waiting() == 0)
}

/// Refuses a screenshot whose viewport area is (nearly) one colour: the 3D view did not draw.
fn check_not_blank(img: &egui::ColorImage, viewport: Option<egui::Rect>) -> Result<(), String> {
    let [w, h] = img.size;
    if w == 0 || h == 0 {
        return Err("empty screenshot".into());
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
        return Err(format!("the viewport looks blank ({} distinct colours)", colours.len()));
    }
    Ok(())
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
                return Err("nothing selected to duplicate".into());
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
                return Err("the eyedropper found no material".into());
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
            let (id, m) = app.state.map.library.materials().by_name("wood").ok_or("the demo has no wood material")?;
            let mut m = m.clone();
            m.color = [70, 120, 255];
            app.panels.show_right = true;
            app.panels.right_tab = RightTab::Materials;
            app.panels.library.material = Some(id);
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
                return Err("placing a light did not select it".into());
            };
            let light = app.state.map.levels[level].objects.lights().get(id).ok_or("the new light is missing")?;
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
                return Err("the light is no longer selected".into());
            };
            let light = app.state.map.levels[level].objects.lights().get(id).ok_or("the light is missing")?;
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
                return Err(format!("only {} undo steps were recorded", app.state.history.len()));
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
                std::fs::remove_dir_all(&project).map_err(|e| format!("{}: {e}", project.display()))?;
            }
            app.commands.push(Command::SaveAs(project));
            Ok(())
        }),
        step("reopen", |app, dir| {
            if app.state.is_dirty() {
                return Err(format!("saving did not clear the unsaved marker: {:?}", app.state.status));
            }
            app.commands.push(Command::Open(dir.join("project")));
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
            let bytes = std::fs::read(&out).map_err(|e| format!("{}: {e} ({:?})", out.display(), app.state.status))?;
            let file = pmfedit_core::format::pmf::read(&bytes).map_err(|e| format!("{}: {e}", out.display()))?;
            println!("exported {} ({} bytes, {} levels)", out.display(), bytes.len(), file.levels.len());
            Ok(())
        }),
    ]
}

fn look(app: &mut App, eye: DVec3, target: DVec3) {
    app.viewport.camera.look_at(eye, target);
}

fn material(app: &mut App, name: &str) -> Result<(), String> {
    let (id, _) = app.state.map.library.materials().by_name(name).ok_or_else(|| format!("no material {name}"))?;
    app.commands.push(Command::SetMaterial(id));
    // The command applies at the end of the frame; tools called in this frame read the state.
    app.state.material = id;
    Ok(())
}

/// The face hit by a ray from `from` along `dir` (world space) on the active level.
fn pick_along(app: &App, from: DVec3, dir: DVec3) -> Result<Pick, String> {
    let level = app.state.map.levels.get(app.state.level).ok_or("no active level")?;
    let hit = level
        .ray_cast_world(from - dir * 6.0, dir.normalize(), crate::viewport::PICK_DISTANCE)
        .ok_or_else(|| format!("nothing to hit from {from:?} along {dir:?}"))?;
    Ok(Pick::from_hit(app.state.level, &hit))
}

/// The surface straight below `at` (from 20 units above it).
fn pick_down(app: &App, at: DVec3) -> Result<Pick, String> {
    pick_along(app, DVec3::new(at.x, 20.0, at.z), DVec3::NEG_Y)
}

fn place_on_top(app: &mut App, at: DVec3) -> Result<(), String> {
    let p = pick_down(app, at)?;
    if p.face != Face::PosY {
        return Err(format!("expected a top face at {at:?}, hit {:?}", p.face));
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
fn environment_edit(app: &mut App) -> Result<(), String> {
    use pmfedit_core::map::library::{EnvKind, EnvRef, Environment};
    let lib = &app.state.map.library;
    let id = app.state.map.levels[app.state.level]
        .environments
        .sky
        .or_else(|| lib.sky_environments().iter().next().map(|(id, _)| id))
        .ok_or("the demo has no sky environment")?;
    let mut env = lib.sky_environments().get(id).ok_or("the sky is missing")?.clone();
    let (water, _) = lib.materials().by_name("water").ok_or("no water material")?;
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
