//! The 3D viewport: the **baked** chunk meshes with their lightmaps (what the game gets), drawn
//! with three-d, plus the camera, picking, the building tools' pointer handling and overlays.
//!
//! # Design
//! - **Paint callback**, not an offscreen texture: three-d draws straight into egui's framebuffer
//!   region from an `egui_glow::CallbackFn` (FRAMEBUFFER_SRGB off, viewport and scissor from the
//!   callback info, depth cleared inside the scissor, egui's intermediate framebuffer wrapped and
//!   handed back). One viewport needs no extra framebuffer, resize handling or copy, and
//!   `ViewportCommand::Screenshot` captures it like the rest of the window.
//! - **Own shaders on three-d's `Program`**: chunk faces are material colour × lightmap (lit),
//!   colour with a fixed shade (fullbright), hidden-line wireframe from a per-vertex edge
//!   attribute, the lightmap alone, or what the air in front of the hovered face sees
//!   ([`visibility`]). Overlay lines are screen-space quads (wide lines work on
//!   core profiles), solid where visible; where hidden behind geometry each line shows at its
//!   own x-ray opacity ([`render::Segment::xray`]): gizmos and the selected object clearly, object
//!   markers and regions faintly, the grid and the hovered face not at all.
//! - **Camera-relative rendering**: the camera position is f64; chunk offsets and overlay points
//!   are moved by `-eye` in f64 before becoming f32, so a 2^27-unit level keeps precision.
//! - **Budgeted uploads**: each frame the chunks in `bake.changed` are queued; at most
//!   [`UPLOADS_PER_FRAME`] (within [`MESH_BUILD_BUDGET`]) are turned into [`mesh::ChunkMesh`]es
//!   (CPU) and handed to the renderer, which uploads them in the next paint. Pending chunks keep
//!   their last mesh, tinted.
//! - **No GL, still a viewport**: under egui_kittest `cc.gl` is `None`; camera, picking and tools
//!   work and the 3D image is replaced by a note.
//!
//! # Controls
//! Fly: right mouse + WASD, Q/E down/up, Shift faster, wheel (while flying) changes speed.
//! Orbit: Alt + left drag; middle drag pans; wheel zooms. `F` frames the selection. `[` / `]`
//! change the cube size. Ctrl+1..5 switch shading. Ctrl+Alt+1..9 store and Alt+1..9 recall camera
//! bookmarks ([`bookmarks`]). Tools: see [`crate::tools`]. With the Select and Lights & entities
//! tools the selection shows its gizmo (arrows, range, box faces; Esc cancels a drag) and region
//! outlines are clickable: see [`gizmo`].
//!
//! Faces are textured (material texture × colour × lightmap, [`textures`]) and the background is
//! the level's default sky as a gradient ([`sky`]).
//!
//! Drag-and-drop ([`crate::dnd`]): a material row from the library, or texture files from the
//! desktop, held over the view highlight the face under the pointer as the Paint tool does and
//! say "Paint face with …" at the pointer; dropping paints it.

pub mod bookmarks;
pub mod camera;
pub mod gizmo;
pub mod mesh;
pub mod overlay;
pub mod render;
pub mod script;
pub mod sky;
pub mod textures;
pub mod visibility;

use std::collections::{BTreeSet, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use eframe::egui;
use eframe::egui_glow;
use glam::{DVec3, IVec3};

use pmfedit_bake::deps::ChunkKey;
use pmfedit_core::edit::ObjRef;
use pmfedit_core::map::Level;
use pmfedit_core::map::coords::{CubeAddr, Face, LatticeBox};
use pmfedit_core::sample;

use crate::command::Command;
use crate::dnd::{self, MaterialDrag};
use crate::state::{EditorState, Selection};
use crate::tools::box_tool::BoxDrag;
use crate::tools::clipboard::Clipboard;
use crate::tools::{self, Mods, Pick, ToolKind};

use self::camera::Camera;
use self::overlay::Overlay;
use self::render::{FrameParams, Renderer, Shading, Upload};

/// Most chunk meshes built and queued for upload per frame.
pub const UPLOADS_PER_FRAME: usize = 64;
/// CPU time per frame for building chunk meshes; past it the rest waits for the next frame (at
/// least one mesh is built per frame). Frames are slow when there is much to draw (software GL:
/// 100+ ms), so a count limit alone would spread a big map's first load over hundreds of frames.
pub const MESH_BUILD_BUDGET: std::time::Duration = std::time::Duration::from_millis(6);
/// How far picking looks, map units.
pub const PICK_DISTANCE: f64 = 4000.0;

/// A pointer drag in progress.
#[derive(Debug, Clone, Default)]
enum Drag {
    #[default]
    None,
    Box(BoxDrag),
    Select(BoxDrag),
    Corner {
        level: usize,
        addr: CubeAddr,
        face: Face,
        corner: usize,
        start_y: f32,
        applied: i32,
    },
    Paint {
        last: Option<(CubeAddr, Face, bool)>,
    },
    Path {
        last: Option<CubeAddr>,
    },
    /// A gizmo handle (or an object marker's centre) being dragged.
    Gizmo(Box<gizmo::GizmoDrag>),
}

/// The viewport's state (owned by the app).
pub struct Viewport {
    renderer: Option<Arc<Mutex<Renderer>>>,
    /// Why there is no renderer, if there is none.
    pub renderer_error: Option<String>,
    pub camera: Camera,
    camera_ready: bool,
    pub shading: Shading,
    /// Lightmap multiplier of the lit and lightmap modes.
    pub exposure: f32,
    /// Editor-only ambient light of the lit mode (0 shows exactly the bake).
    pub ambient: f32,
    /// Draw environment and load regions.
    pub show_regions: bool,
    /// Draw light and entity markers.
    pub show_objects: bool,
    queue: VecDeque<ChunkKey>,
    queued: HashSet<ChunkKey>,
    gpu_keys: BTreeSet<ChunkKey>,
    had_bakes: bool,
    /// What the uploaded meshes' colours were built from (see [`material_fingerprint`]).
    materials_seen: u64,
    /// Texture frames, UV scroll and emission per material ([`materials_fx`]) and what they
    /// were made from.
    materials_fx: Arc<Vec<render::MaterialFx>>,
    fx_seen: Option<u64>,
    /// The animation clock's start.
    clock: Instant,
    hover: Option<Pick>,
    hover_object: Option<(usize, ObjRef)>,
    /// The selection's gizmo this frame, the handle and the region outline under the pointer.
    gizmo: Option<gizmo::Gizmo>,
    gizmo_hover: Option<gizmo::Handle>,
    region_hover: Option<(usize, ObjRef)>,
    /// The viewport rectangle of the last frame.
    rect: egui::Rect,
    screenshot_selected: bool,
    drag: Drag,
    clipboard: Option<Clipboard>,
    select_normal: IVec3,
    scroll_acc: f32,
    last_frame: Option<Instant>,
    /// CPU time of the last [`Viewport::ui`] call, seconds.
    pub last_ui_seconds: f64,
    /// CPU time of the app's last whole UI pass (panels, viewport, commands; not egui's
    /// tessellation or the GL drawing), seconds; the app sets it.
    pub last_app_seconds: f64,
    /// `--screenshot` / `--bench-frames` driver.
    pub script: Option<script::Script>,
    /// Material textures (UI side).
    pub textures: textures::TextureStore,
    /// Draw material textures in the lit and fullbright views.
    pub textured: bool,
    /// Outline faces in the lit and fullbright views.
    pub edges: bool,
    /// Chunks farther than this from the camera are not drawn, map units (0: no limit). Big
    /// maps under software GL are drawn faster with a limit.
    pub view_distance: f64,
    /// The background gradient of this frame (`None`: the fixed colour).
    sky: Option<sky::SkyColors>,
    /// Camera bookmarks.
    pub bookmarks: bookmarks::Bookmarks,
    /// The visibility view's air cube, counts and status.
    vis: visibility::VisView,
    /// A world point whose air cube the visibility view shows instead of the hovered one
    /// (`PMFEDIT_SCREENSHOT_VIS`).
    pub vis_pin: Option<DVec3>,
    screenshot_vis_done: bool,
    /// Something is dragged over the view this frame (a library material or files); `true`
    /// when Shift is held (the drop paints the whole cube).
    dropping: Option<bool>,
}

impl Viewport {
    /// A viewport drawing through `gl` (`None`: no 3D image, e.g. under egui_kittest).
    pub fn new(gl: Option<Arc<egui_glow::glow::Context>>) -> Self {
        let (renderer, renderer_error) = match gl {
            Some(gl) => match Renderer::new(gl) {
                Ok(r) => (Some(Arc::new(Mutex::new(r))), None),
                Err(e) => (None, Some(e)),
            },
            None => (None, Some("no OpenGL context".into())),
        };
        Self {
            renderer,
            renderer_error,
            camera: Camera::default(),
            camera_ready: false,
            shading: script::initial_shading().unwrap_or_default(),
            exposure: 4.0,
            ambient: 0.3,
            show_regions: true,
            show_objects: true,
            queue: VecDeque::new(),
            queued: HashSet::new(),
            gpu_keys: BTreeSet::new(),
            had_bakes: false,
            materials_seen: 0,
            materials_fx: Arc::new(Vec::new()),
            fx_seen: None,
            clock: Instant::now(),
            hover: None,
            hover_object: None,
            gizmo: None,
            gizmo_hover: None,
            region_hover: None,
            rect: egui::Rect::NOTHING,
            screenshot_selected: false,
            drag: Drag::None,
            clipboard: None,
            select_normal: IVec3::Y,
            scroll_acc: 0.0,
            last_frame: None,
            last_ui_seconds: 0.0,
            last_app_seconds: 0.0,
            script: script::Script::from_cli(),
            textures: textures::TextureStore::default(),
            textured: true,
            edges: true,
            view_distance: script::initial_view_distance().unwrap_or(0.0),
            sky: None,
            bookmarks: bookmarks::Bookmarks::default(),
            vis: visibility::VisView::default(),
            vis_pin: None,
            screenshot_vis_done: false,
            dropping: None,
        }
    }

    /// Whether a renderer exists (a GL context was given and the shaders compiled).
    pub fn has_renderer(&self) -> bool {
        self.renderer.is_some()
    }

    /// Chunks waiting to be meshed and uploaded.
    pub fn uploads_waiting(&self) -> usize {
        self.queue.len() + self.renderer.as_ref().map_or(0, |r| r.lock().map_or(0, |r| r.queue.len()))
    }

    /// What the last paint drew (`None` without a renderer).
    pub fn draw_stats(&self) -> Option<render::DrawStats> {
        Some(self.renderer.as_ref()?.lock().ok()?.stats)
    }

    /// When a chunk's mesh last reached the GPU.
    pub fn uploaded_at(&self, key: ChunkKey) -> Option<Instant> {
        self.renderer.as_ref()?.lock().ok()?.uploaded_at.get(&key).copied()
    }

    /// The hovered face, if any.
    pub fn hovered(&self) -> Option<&Pick> {
        self.hover.as_ref()
    }

    /// The visibility view's status line (its air cube and what it sees, or why there is none).
    /// Current while the visibility shading is on.
    pub fn vis_status(&self) -> String {
        self.vis.status()
    }

    /// The air cube the visibility view shows, if any.
    pub fn vis_air(&self) -> Option<visibility::AirCube> {
        self.vis.air.ok()
    }

    /// Points the camera at the start view: the demo's landmarks, or the occupied bounds.
    pub fn reset_camera(&mut self, state: &EditorState) {
        if state.map.meta.name == "Demo" && state.map.levels.len() == 1 {
            self.camera.look_at(sample::landmarks::CAMERA_EYE.as_dvec3(), sample::landmarks::CAMERA_TARGET.as_dvec3());
        } else if let Some((center, radius)) = state.map.levels.get(state.level).and_then(occupied_sphere) {
            self.camera.look_at(center + DVec3::new(-0.8, 0.6, -0.8).normalize() * radius * 1.6, center);
        } else {
            self.camera.look_at(DVec3::new(-12.0, 8.0, -12.0), DVec3::ZERO);
        }
        self.camera.speed = (self.camera.orbit_distance * 0.5).clamp(4.0, 200.0);
        self.camera_ready = true;
    }

    /// Takes newly baked chunks and turns up to [`UPLOADS_PER_FRAME`] of them, within
    /// [`MESH_BUILD_BUDGET`], into meshes for the GPU.
    fn sync_uploads(&mut self, state: &mut EditorState) {
        let has_bakes = !state.bake.bakes.is_empty();
        if self.had_bakes && !has_bakes && !state.bake.pending.is_empty() {
            // The document was replaced.
            self.gpu_keys.clear();
            self.queue.clear();
            self.queued.clear();
            if let Some(r) = &self.renderer {
                r.lock().expect("renderer").queue.push(Upload::Clear);
            }
            self.vis.reset();
            self.camera_ready = false;
        }
        self.had_bakes = has_bakes;
        // A material colour changed in the library: rebuild every mesh (colours are per vertex).
        let fp = material_fingerprint(state);
        if fp != self.materials_seen {
            self.materials_seen = fp;
            for k in &self.gpu_keys {
                if self.queued.insert(*k) {
                    self.queue.push_back(*k);
                }
            }
        }
        let fx = fx_fingerprint(state);
        if self.fx_seen != Some(fx) {
            self.fx_seen = Some(fx);
            self.materials_fx = Arc::new(materials_fx(&state.map.library));
            for r in self.materials_fx.iter().flat_map(|m| &m.frames) {
                self.textures.want(r);
            }
        }
        for k in std::mem::take(&mut state.bake.changed) {
            if self.queued.insert(k) {
                self.queue.push_back(k);
            }
        }
        let Some(renderer) = &self.renderer else {
            self.queue.clear();
            self.queued.clear();
            return;
        };
        let mut uploads = Vec::new();
        // Nearest first: the camera's chunk matters most.
        if self.queue.len() > UPLOADS_PER_FRAME {
            let eye = self.camera.eye;
            let level = state.level;
            let dist = |k: &ChunkKey| {
                state.map.levels.get(k.0).map_or(f64::MAX, |l| {
                    let d = chunk_center(l, k.1).distance_squared(eye);
                    if k.0 == level { d } else { d + 1e18 }
                })
            };
            self.queue.make_contiguous().sort_by(|a, b| dist(a).total_cmp(&dist(b)));
        }
        let started = Instant::now();
        while uploads.len() < UPLOADS_PER_FRAME && (uploads.is_empty() || started.elapsed() < MESH_BUILD_BUDGET) {
            let Some(k) = self.queue.pop_front() else { break };
            self.queued.remove(&k);
            match (state.bake.bakes.get(&k), state.map.levels.get(k.0)) {
                (Some(bake), Some(level)) => {
                    let mesh = mesh::build_chunk_mesh(bake, &state.map.library);
                    self.textures.want_mesh(&mesh);
                    uploads.push(Upload::Set { key: k, center: chunk_center(level, k.1), mesh: Box::new(mesh) });
                    self.gpu_keys.insert(k);
                }
                _ => {
                    if self.gpu_keys.remove(&k) {
                        uploads.push(Upload::Remove(k));
                    }
                }
            }
        }
        let loaded = self.textures.pump(textures::LOADS_PER_FRAME);
        uploads.extend(loaded.into_iter().map(|(reference, image)| Upload::Texture { reference, image }));
        if !uploads.is_empty() {
            renderer.lock().expect("renderer").queue.extend(uploads);
        }
    }

    /// Draws the viewport into `ui` (all the space left) and returns the commands its tools and
    /// keys ask for.
    pub fn ui(&mut self, ui: &mut egui::Ui, state: &mut EditorState) -> Vec<Command> {
        let started = Instant::now();
        let dt = self.last_frame.map_or(1.0 / 60.0, |t| t.elapsed().as_secs_f64()).min(0.1);
        self.last_frame = Some(started);
        let mut out = Vec::new();
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), egui::Sense::click_and_drag());
        if !self.camera_ready {
            self.reset_camera(state);
        }
        if let Some((target, distance)) = state.camera_request.take() {
            self.camera.frame(target, distance);
        }
        self.update_sky(state);
        self.sync_uploads(state);
        if !self.queue.is_empty()
            || self.textures.pending() > 0
            || self.renderer.as_ref().is_some_and(|r| r.lock().is_ok_and(|r| !r.queue.is_empty()))
        {
            ui.ctx().request_repaint();
        }

        self.handle_camera(ui, &response, rect, dt);
        self.update_hover(ui, state, rect);
        self.screenshot_visibility();
        self.update_visibility(state);
        self.update_gizmo(ui, state, rect);
        self.gizmo_tooltip(&response);
        self.handle_tools(ui, state, &response, &mut out);
        self.handle_drops(ui, state, &response, &mut out);
        self.handle_keys(ui, state, &mut out);
        state.set_camera(state.level, self.camera.eye);

        let overlay = self.build_overlay(state);
        self.paint(ui, state, rect, overlay);
        self.hud(ui, state, rect);
        self.last_ui_seconds = started.elapsed().as_secs_f64();
        if let Some(mut s) = self.script.take() {
            s.step(ui.ctx(), self, state, &mut out);
            self.script = Some(s);
        }
        out
    }

    fn ndc(&self, rect: egui::Rect, pos: egui::Pos2) -> (f64, f64) {
        let x = f64::from((pos.x - rect.left()) / rect.width().max(1.0)) * 2.0 - 1.0;
        let y = 1.0 - f64::from((pos.y - rect.top()) / rect.height().max(1.0)) * 2.0;
        (x, y)
    }

    fn aspect(rect: egui::Rect) -> f64 {
        f64::from(rect.width().max(1.0) / rect.height().max(1.0))
    }

    fn handle_camera(&mut self, ui: &egui::Ui, response: &egui::Response, rect: egui::Rect, dt: f64) {
        let (delta, alt, shift, scroll, keys) = ui.input(|i| {
            let k = |key| i.key_down(key);
            (
                i.pointer.delta(),
                i.modifiers.alt,
                i.modifiers.shift,
                wheel_points(i),
                [k(egui::Key::W), k(egui::Key::S), k(egui::Key::A), k(egui::Key::D), k(egui::Key::Q), k(egui::Key::E)],
            )
        });
        let hovered = response.contains_pointer();
        let flying = response.dragged_by(egui::PointerButton::Secondary);
        if flying {
            self.camera.turn(f64::from(delta.x), f64::from(delta.y));
            if hovered && scroll != 0.0 {
                self.camera.speed = (self.camera.speed * if scroll > 0.0 { 1.2 } else { 1.0 / 1.2 }).clamp(0.5, 2000.0);
            }
            let mut v = DVec3::ZERO;
            let [w, s, a, d, q, e] = keys;
            v.z += f64::from(u8::from(w)) - f64::from(u8::from(s));
            v.x += f64::from(u8::from(d)) - f64::from(u8::from(a));
            v.y += f64::from(u8::from(e)) - f64::from(u8::from(q));
            if v != DVec3::ZERO {
                let speed = self.camera.speed * if shift { 4.0 } else { 1.0 };
                self.camera.fly(v.normalize() * speed * dt);
            }
            ui.ctx().request_repaint();
        } else if alt && response.dragged_by(egui::PointerButton::Primary) {
            self.camera.orbit(f64::from(delta.x), f64::from(delta.y));
        } else if response.dragged_by(egui::PointerButton::Middle) {
            self.camera.pan(f64::from(delta.x), f64::from(delta.y), f64::from(rect.height()));
        } else if hovered && scroll != 0.0 && !matches!(self.drag, Drag::Box(_) | Drag::Select(_)) {
            self.camera.zoom(f64::from(scroll) / 50.0);
        }
    }

    fn pointer_ray(&self, ui: &egui::Ui, rect: egui::Rect) -> Option<(DVec3, DVec3)> {
        let pos = ui.input(|i| i.pointer.hover_pos())?;
        if !rect.contains(pos) {
            return None;
        }
        let (x, y) = self.ndc(rect, pos);
        Some(self.camera.ray(x, y, Self::aspect(rect)))
    }

    fn update_hover(&mut self, ui: &egui::Ui, state: &EditorState, rect: egui::Rect) {
        self.hover = None;
        self.hover_object = None;
        if self.script.as_ref().is_some_and(|s| s.is_screenshot()) {
            return;
        }
        let Some((o, d)) = self.pointer_ray(ui, rect) else { return };
        let Some(level) = state.map.levels.get(state.level) else { return };
        self.hover = level.ray_cast_world(o, d, PICK_DISTANCE).map(|h| Pick::from_hit(state.level, &h));
        if gizmo::tool_uses_gizmos(state.tool) {
            let limit = self
                .hover
                .as_ref()
                .map_or(PICK_DISTANCE, |p| (level.frame().world_from_lattice_f(p.point) - o).length() + 0.3);
            self.hover_object = pick_object(level, o, d, limit).map(|id| (state.level, id));
        }
    }

    /// The visibility view: finds the air cube in front of the hovered face (or at
    /// [`Viewport::vis_pin`]) and, when it or the bakes changed, rebuilds what the renderer needs.
    /// Does nothing in the other shadings.
    fn update_visibility(&mut self, state: &EditorState) {
        if self.shading != Shading::Visibility {
            return;
        }
        let point = match (self.vis_pin, state.map.levels.get(state.level)) {
            (Some(w), Some(level)) => Some(level.frame().lattice_from_world_f(w)),
            (Some(_), None) => None,
            (None, _) => self.hover.as_ref().map(visibility::point_in_front),
        };
        let air = match point {
            Some(p) => visibility::air_cube_at(state, state.level, p),
            None => Err(visibility::NoAir::NothingHovered),
        };
        if self.vis.needs_build(&air, state.bake.revision) {
            let (chunks, rest_visible) = match &air {
                Ok(a) => {
                    let b = visibility::build(state, a);
                    self.vis.cubes = b.cubes;
                    self.vis.chunks = b.chunks.len();
                    (b.chunks, false)
                }
                Err(_) => {
                    self.vis.cubes = 0;
                    self.vis.chunks = 0;
                    (Default::default(), true)
                }
            };
            if let Some(r) = &self.renderer {
                r.lock().expect("renderer").queue.push(Upload::Visibility { chunks, rest_visible });
            }
        }
        self.vis.air = air;
        self.vis.waiting = state.bake.finalizing.len();
    }

    /// `--screenshot` with `PMFEDIT_SCREENSHOT_VIS=x,y,z` (a world point in air): starts in the
    /// visibility view showing that point's air cube; with `PMFEDIT_SCREENSHOT_EYE=x,y,z` too, the
    /// camera looks at the point from there. A debugging aid, not a user setting.
    fn screenshot_visibility(&mut self) {
        if self.screenshot_vis_done || !self.script.as_ref().is_some_and(|s| s.is_screenshot()) {
            return;
        }
        self.screenshot_vis_done = true;
        let parse = |name: &str| -> Option<DVec3> {
            let v: Vec<f64> =
                std::env::var(name).ok()?.split(',').map(|t| t.trim().parse().ok()).collect::<Option<_>>()?;
            (v.len() == 3).then(|| DVec3::new(v[0], v[1], v[2]))
        };
        let Some(point) = parse("PMFEDIT_SCREENSHOT_VIS") else { return };
        self.shading = Shading::Visibility;
        self.vis_pin = Some(point);
        if let Some(eye) = parse("PMFEDIT_SCREENSHOT_EYE") {
            self.camera.look_at(eye, point);
        }
    }

    fn handle_tools(&mut self, ui: &egui::Ui, state: &EditorState, response: &egui::Response, out: &mut Vec<Command>) {
        let (pressed, released, down, mods, pointer_y, scroll) = ui.input(|i| {
            (
                i.pointer.primary_pressed(),
                i.pointer.primary_released(),
                i.pointer.primary_down(),
                Mods { shift: i.modifiers.shift, ctrl: i.modifiers.command, alt: i.modifiers.alt },
                i.pointer.latest_pos().map_or(0.0, |p| p.y),
                wheel_points(i),
            )
        });
        let over = response.contains_pointer();
        // Wheel steps while a box is held.
        let mut wheel_steps = 0;
        if matches!(self.drag, Drag::Box(_) | Drag::Select(_)) {
            self.scroll_acc += scroll;
            while self.scroll_acc >= 30.0 {
                wheel_steps += 1;
                self.scroll_acc -= 30.0;
            }
            while self.scroll_acc <= -30.0 {
                wheel_steps -= 1;
                self.scroll_acc += 30.0;
            }
        } else {
            self.scroll_acc = 0.0;
        }

        self.gizmo_escape(ui, out);
        if pressed && over && !mods.alt && !self.gizmo_press(ui, state, out) {
            self.press(state, mods, pointer_y, out);
        }
        if down {
            self.held(ui, state, mods, pointer_y, wheel_steps, response.rect, out);
        }
        if released || (!down && !matches!(self.drag, Drag::None)) {
            self.release(state, out);
        }
    }

    /// Drag-and-drop onto the view ([`crate::dnd`]): files dropped become
    /// [`Command::DropFiles`], a library material released here paints the face under the
    /// pointer; while either is held over the view the pointer says what a drop would do.
    fn handle_drops(&mut self, ui: &egui::Ui, state: &EditorState, response: &egui::Response, out: &mut Vec<Command>) {
        self.dropping = None;
        let (whole_cube, hovered_file, dropped) = ui.input(|i| {
            (
                i.modifiers.shift,
                i.raw.hovered_files.first().map(|f| f.path.clone()),
                i.raw.dropped_files.iter().map(|f| f.path().to_owned()).collect::<Vec<_>>(),
            )
        });
        if !dropped.is_empty() {
            out.push(Command::DropFiles { files: dropped, pick: self.hover, whole_cube });
            return;
        }
        if let Some(m) = response.dnd_release_payload::<MaterialDrag>() {
            out.extend(dnd::drop_material(state, self.hover.as_ref(), m.0, whole_cube));
            return;
        }
        let what = match (response.dnd_hover_payload::<MaterialDrag>(), hovered_file) {
            (Some(m), _) => state.map.library.materials().get(m.0).map(|m| m.name.clone()),
            // The path is unknown on some platforms until the drop.
            (None, Some(None)) => Some("the file".to_owned()),
            (None, Some(Some(path))) if dnd::is_texture_file(&path) => Some(dnd::file_label(&path)),
            (None, Some(Some(path))) => {
                ui.ctx().set_cursor_icon(egui::CursorIcon::NoDrop);
                let hint = format!("{} is not a PNG or PTF texture", dnd::file_label(&path));
                egui::Tooltip::for_widget(response).at_pointer().show(|ui| ui.label(hint));
                return;
            }
            (None, None) => None,
        };
        let Some(what) = what else { return };
        let hint = if self.hover.is_some() {
            ui.ctx().set_cursor_icon(egui::CursorIcon::Copy);
            dnd::paint_hint(&what, whole_cube)
        } else {
            ui.ctx().set_cursor_icon(egui::CursorIcon::NoDrop);
            format!("No face here to paint with {what}")
        };
        egui::Tooltip::for_widget(response).at_pointer().show(|ui| ui.label(hint));
        self.dropping = Some(whole_cube);
    }

    fn press(&mut self, state: &EditorState, mods: Mods, pointer_y: f32, out: &mut Vec<Command>) {
        let size = state.cube_log2;
        let Some(pick) = self.hover else {
            if state.tool == ToolKind::Select {
                out.push(Command::Select(Selection::None));
            }
            return;
        };
        match state.tool {
            ToolKind::Place => out.extend(tools::place::click(state, &pick)),
            ToolKind::Erase => out.extend(tools::erase::click(state, &pick)),
            ToolKind::Eyedropper => out.extend(tools::eyedropper::click(state, &pick)),
            ToolKind::Object => out.extend(tools::object::place(state, &pick, mods)),
            ToolKind::Paint => {
                out.push(Command::BeginStroke);
                out.extend(tools::paint::apply(state, &pick, mods));
                self.drag = Drag::Paint { last: Some((pick.inside(size), pick.face, mods.shift)) };
            }
            ToolKind::Path => {
                out.push(Command::BeginStroke);
                out.extend(tools::path::apply(state, &pick, state.path_set, mods));
                self.drag = Drag::Path { last: Some(pick.outside(size)) };
            }
            ToolKind::Box | ToolKind::Select => {
                let anchor = pick.outside(size).min;
                let d = BoxDrag {
                    level: pick.level,
                    face: pick.face,
                    anchor,
                    current: anchor,
                    size_log2: size,
                    layers: if state.tool == ToolKind::Box { 0 } else { -1 },
                };
                self.drag = if state.tool == ToolKind::Box { Drag::Box(d) } else { Drag::Select(d) };
            }
            ToolKind::Corner => {
                let (addr, corner) = tools::corner::grab(state, &pick);
                out.push(Command::BeginStroke);
                self.drag =
                    Drag::Corner { level: pick.level, addr, face: pick.face, corner, start_y: pointer_y, applied: 0 };
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn held(
        &mut self,
        ui: &egui::Ui,
        state: &EditorState,
        mods: Mods,
        pointer_y: f32,
        wheel_steps: i32,
        rect: egui::Rect,
        out: &mut Vec<Command>,
    ) {
        let size = state.cube_log2;
        let hover = self.hover;
        let ray = self.pointer_ray(ui, rect);
        let is_select = matches!(self.drag, Drag::Select(_));
        match &mut self.drag {
            Drag::None => {}
            Drag::Paint { last } => {
                if let Some(p) = hover {
                    let key = (p.inside(size), p.face, mods.shift);
                    if *last != Some(key) {
                        *last = Some(key);
                        out.extend(tools::paint::apply(state, &p, mods));
                    }
                }
            }
            Drag::Path { last } => {
                if let Some(p) = hover {
                    let key = p.outside(size);
                    if *last != Some(key) {
                        *last = Some(key);
                        out.extend(tools::path::apply(state, &p, state.path_set, mods));
                    }
                }
            }
            Drag::Box(d) | Drag::Select(d) => {
                if let (Some((o, dir)), Some(level)) = (ray, state.map.levels.get(d.level)) {
                    let frame = level.frame();
                    let a = d.face.axis();
                    let e = 1i32 << d.size_log2;
                    let plane = if d.face.is_positive() { d.anchor[a] } else { d.anchor[a] + e };
                    if let Some(p) = tools::ray_plane(frame.lattice_from_world_f(o), dir, a, f64::from(plane)) {
                        let mut c = CubeAddr::containing(p.floor().as_ivec3(), d.size_log2).min;
                        c[a] = d.anchor[a];
                        d.current = c;
                    }
                }
                if wheel_steps != 0 {
                    if is_select {
                        d.layers = (d.layers - wheel_steps).min(-1);
                    } else {
                        d.layers += wheel_steps;
                        if d.layers == 0 {
                            d.layers = wheel_steps.signum();
                        }
                    }
                }
            }
            Drag::Corner { level, addr, face, corner, start_y, applied } => {
                let steps = ((pointer_y - *start_y) / tools::corner::PIXELS_PER_STEP) as i32;
                if steps != *applied {
                    out.extend(tools::corner::push(*level, *addr, *face, *corner, steps - *applied));
                    *applied = steps;
                }
            }
            Drag::Gizmo(d) => gizmo::drag_step(d, state, hover, ray, mods, out),
        }
    }

    fn release(&mut self, state: &EditorState, out: &mut Vec<Command>) {
        match std::mem::take(&mut self.drag) {
            Drag::None => {}
            Drag::Paint { .. } | Drag::Path { .. } | Drag::Corner { .. } | Drag::Gizmo(_) => {
                out.push(Command::EndStroke)
            }
            Drag::Box(d) => out.extend(d.commit(state)),
            Drag::Select(d) => {
                self.select_normal = d.face.normal();
                out.push(tools::select::finish(&d));
            }
        }
    }

    fn handle_keys(&mut self, ui: &egui::Ui, state: &EditorState, out: &mut Vec<Command>) {
        if ui.ctx().egui_wants_keyboard_input() {
            return;
        }
        let flying = ui.input(|i| i.pointer.secondary_down());
        let (events, mods) = ui.input(|i| (i.events.clone(), i.modifiers));
        let pressed =
            |k: egui::Key| events.iter().any(|e| matches!(e, egui::Event::Key { key, pressed: true, .. } if *key == k));
        let mut copy = false;
        let mut cut = false;
        let mut paste = false;
        for e in &events {
            match e {
                egui::Event::Copy => copy = true,
                egui::Event::Cut => cut = true,
                egui::Event::Paste(_) | egui::Event::PasteImage(_) => paste = true,
                _ => {}
            }
        }
        let ctrl = mods.command;
        copy |= ctrl && pressed(egui::Key::C);
        cut |= ctrl && pressed(egui::Key::X);
        paste |= ctrl && pressed(egui::Key::V);
        let max_size = state.map.levels.get(state.level).map_or(18, |l| l.frame().chunk_lattice_log2());
        if pressed(egui::Key::OpenBracket) && state.cube_log2 > 0 {
            out.push(Command::SetCubeSize(state.cube_log2 - 1));
        }
        if pressed(egui::Key::CloseBracket) && state.cube_log2 < max_size {
            out.push(Command::SetCubeSize(state.cube_log2 + 1));
        }
        if mods.command && !mods.alt {
            let keys = [egui::Key::Num1, egui::Key::Num2, egui::Key::Num3, egui::Key::Num4, egui::Key::Num5];
            for (k, s) in keys.into_iter().zip(Shading::ALL) {
                if pressed(k) {
                    self.shading = s;
                }
            }
        }
        self.bookmark_keys(&events, state, out);
        if flying {
            return;
        }
        if pressed(egui::Key::F) && !ctrl {
            if let Some((c, r)) = selection_sphere(state).or_else(|| {
                let level = state.map.levels.get(state.level)?;
                let p = self.hover?;
                Some((level.frame().world_from_lattice_f(p.point), 2.0))
            }) {
                self.camera.frame(c, (r * 2.5).max(2.0));
            }
        }
        // The system clipboard gets a note: egui-winit turns Ctrl+V into a paste event only
        // when the system clipboard holds something.
        let note = |c: &Clipboard| {
            let s = c.size.as_dvec3() / 8.0;
            format!("pmfedit cubes {}×{}×{}", s.x, s.y, s.z)
        };
        if copy {
            if let Some(c) = tools::select::copy(state) {
                out.push(Command::Status(format!("Copied {} pieces", c.pieces.len())));
                ui.ctx().copy_text(note(&c));
                self.clipboard = Some(c);
            }
        }
        if cut {
            if let Some((c, cmds)) = tools::select::cut(state) {
                ui.ctx().copy_text(note(&c));
                self.clipboard = Some(c);
                out.extend(cmds);
            }
        }
        if paste {
            if let (Some(c), Some(p)) = (&self.clipboard, self.hover) {
                out.extend(tools::select::paste(state, c, &p));
            }
        }
        if ctrl && pressed(egui::Key::D) {
            out.extend(tools::select::duplicate(state, self.select_normal));
        }
        if pressed(egui::Key::Delete) {
            out.extend(tools::select::delete(state));
        }
        if !ctrl {
            if let Some(c) = &self.clipboard {
                if pressed(egui::Key::M) {
                    self.clipboard = Some(c.mirrored(if mods.shift { 2 } else { 0 }));
                    out.push(Command::Status("Clipboard mirrored".into()));
                } else if pressed(egui::Key::R) {
                    self.clipboard = Some(c.rotated());
                    out.push(Command::Status("Clipboard rotated 90°".into()));
                }
            }
        }
    }

    fn build_overlay(&self, state: &EditorState) -> Overlay {
        let mut o = Overlay::default();
        let Some(level) = state.map.levels.get(state.level) else { return o };
        let frame = level.frame();
        let size = state.cube_log2;
        let selected_obj = tools::object::selected_object(state).map(|(_, id)| id);
        o.level_objects(level, selected_obj, self.show_objects, self.show_regions);
        o.with_xray(overlay::XRAY_SELECTED, |o| self.draw_gizmo(state, o));
        // Selection.
        match state.selection {
            Selection::Cubes { level: l, min, max } if l == state.level => {
                o.lattice_box(&frame, LatticeBox::new(min, max), overlay::SELECT);
            }
            Selection::Cube { level: l, addr } if l == state.level => {
                o.lattice_box(&frame, addr.lattice_box(), overlay::SELECT)
            }
            _ => {}
        }
        // Drag previews.
        match &self.drag {
            Drag::Box(d) => {
                let c = if d.layers < 0 { overlay::PREVIEW_REMOVE } else { overlay::PREVIEW_ADD };
                o.lattice_box(&frame, d.region(), c);
            }
            Drag::Select(d) => o.lattice_box(&frame, d.region(), overlay::SELECT),
            _ => {}
        }
        if let Some((_, obj)) = self.hover_object {
            if let Some(p) = tools::object::object_position(state, state.level, obj) {
                o.box_lines(p - DVec3::splat(0.3), p + DVec3::splat(0.3), overlay::HOVER);
            }
        }
        // The visibility view's air cube.
        if self.shading == Shading::Visibility {
            if let Ok(a) = &self.vis.air {
                if a.key.0 == state.level {
                    o.box_lines(a.min, a.max, overlay::AIR_CUBE);
                }
            }
        }
        // Hovered face, the tool's target and the grid.
        if let Some(p) = &self.hover {
            // Something dragged over the view targets what the Paint tool would.
            let tool = if self.dropping.is_some() { ToolKind::Paint } else { state.tool };
            let target = match tool {
                ToolKind::Place | ToolKind::Path => Some((p.outside(size), false)),
                ToolKind::Erase => Some((p.inside(size), true)),
                ToolKind::Paint | ToolKind::Box | ToolKind::Select => Some((p.inside(size), false)),
                ToolKind::Corner => Some((tools::corner::grab(state, p).0, false)),
                ToolKind::Eyedropper | ToolKind::Object => None,
            };
            o.with_xray(overlay::XRAY_NONE, |o| o.face_outline(&frame, p.addr, p.face, [1.0, 1.0, 1.0, 0.5]));
            if let Some((t, remove)) = target {
                let c = if remove { overlay::PREVIEW_REMOVE } else { overlay::HOVER };
                if matches!(tool, ToolKind::Place | ToolKind::Path) || self.dropping == Some(true) {
                    o.lattice_box(&frame, t.lattice_box(), c);
                } else {
                    o.face_outline(&frame, t, p.face, c);
                }
                if tool == ToolKind::Corner {
                    let (addr, corner) = tools::corner::grab(state, p);
                    let cp = frame
                        .world_from_lattice(addr.min + pmfedit_core::map::coords::octant_offset(corner) * addr.edge());
                    let h = 0.06 * f64::from(addr.edge()) / 8.0 + 0.03;
                    o.box_lines(cp - DVec3::splat(h), cp + DVec3::splat(h), overlay::PREVIEW_REMOVE);
                }
            }
            if matches!(self.drag, Drag::None) && tool != ToolKind::Object {
                let a = p.face.axis();
                let plane = if p.face.is_positive() { p.addr.max()[a] } else { p.addr.min[a] };
                o.with_xray(overlay::XRAY_NONE, |o| o.grid(&frame, p.face, plane, p.point, size, 6));
            }
        }
        o
    }

    fn paint(&self, ui: &egui::Ui, state: &EditorState, rect: egui::Rect, overlay: Overlay) {
        let Some(renderer) = &self.renderer else {
            ui.painter().rect_filled(rect, 0.0, egui::Color32::from_gray(30));
            ui.painter().text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                format!("3D view unavailable: {}", self.renderer_error.as_deref().unwrap_or("no renderer")),
                egui::FontId::proportional(14.0),
                egui::Color32::GRAY,
            );
            return;
        };
        let aspect = Self::aspect(rect) as f32;
        if self.materials_fx.iter().any(render::MaterialFx::animated) {
            // Texture frames and UV scroll move on their own: about 30 frames a second.
            ui.ctx().request_repaint_after(std::time::Duration::from_millis(33));
        }
        let params = FrameParams {
            eye: self.camera.eye,
            forward: self.camera.forward(),
            view_proj: self.camera.projection(aspect) * self.camera.view(),
            shading: self.shading,
            level: state.level,
            pending: state.bake.pending.iter().copied().collect(),
            segments: overlay.segments,
            fills: overlay.fills,
            clear_color: {
                let [r, g, b] = sky::DEFAULT_BACKGROUND;
                [r, g, b, 1.0]
            },
            sky: self.sky,
            textured: self.textured,
            edges: self.edges,
            view_distance: self.view_distance,
            exposure: self.exposure,
            ambient: self.ambient,
            materials: self.materials_fx.clone(),
            time_s: self.clock.elapsed().as_secs_f64(),
            waiting: if self.shading == Shading::Visibility {
                state.bake.finalizing.iter().copied().collect()
            } else {
                Vec::new()
            },
        };
        let renderer = renderer.clone();
        let params = Arc::new(params);
        let cb = egui_glow::CallbackFn::new(move |info, painter| {
            let v = info.viewport_in_pixels();
            let c = info.clip_rect_in_pixels();
            let vp = three_d::Viewport {
                x: v.left_px,
                y: v.from_bottom_px,
                width: v.width_px.max(1) as u32,
                height: v.height_px.max(1) as u32,
            };
            let sc = three_d::ScissorBox {
                x: c.left_px,
                y: c.from_bottom_px,
                width: c.width_px.max(0) as u32,
                height: c.height_px.max(0) as u32,
            };
            if let Ok(mut r) = renderer.lock() {
                r.paint(painter, vp, sc, &params);
            }
        });
        ui.painter().add(egui::PaintCallback { rect, callback: Arc::new(cb) });
    }

    fn hud(&mut self, ui: &mut egui::Ui, state: &EditorState, rect: egui::Rect) {
        let edge = f64::from(1u32 << state.cube_log2) / 8.0;
        let mut lines = vec![format!("{} · cube {} u · [ ] to change", state.tool.label(), edge)];
        if self.shading == Shading::Visibility {
            lines.push(self.vis.status());
        }
        if let Some(p) = &self.hover {
            if let Some(level) = state.map.levels.get(p.level) {
                let w = level.frame().world_from_lattice_f(p.point);
                let mat = p
                    .cube
                    .face_material(p.face)
                    .and_then(|m| state.map.library.materials().get(m))
                    .map_or("?", |m| m.name.as_str());
                lines.push(format!("({:.2}, {:.2}, {:.2}) {:?} · {mat}", w.x, w.y, w.z, p.face));
            }
        }
        if let Drag::Box(d) | Drag::Select(d) = &self.drag {
            let r = d.region();
            let s = (r.max - r.min).as_dvec3() / 8.0;
            lines.push(format!("box {}×{}×{} u, {} layers (wheel)", s.x, s.y, s.z, d.layers));
        }
        lines.extend(self.gizmo_hint());
        if let Some(c) = &self.clipboard {
            let s = c.size.as_dvec3() / 8.0;
            lines.push(format!("clipboard {}×{}×{} u", s.x, s.y, s.z));
        }
        if let Some(r) = &self.renderer {
            if let Ok(r) = r.lock() {
                lines.push(format!(
                    "{} chunks on GPU, {} drawn ({} draws, {}k triangles) · speed {:.0}",
                    r.chunk_count(),
                    r.stats.chunks,
                    r.stats.draws,
                    r.stats.indices / 3000,
                    self.camera.speed
                ));
            }
        }
        let painter = ui.painter_at(rect);
        let mut y = rect.top() + 34.0;
        for l in lines {
            painter.text(
                egui::pos2(rect.left() + 9.0, y + 1.0),
                egui::Align2::LEFT_TOP,
                &l,
                egui::FontId::proportional(13.0),
                egui::Color32::from_black_alpha(160),
            );
            painter.text(
                egui::pos2(rect.left() + 8.0, y),
                egui::Align2::LEFT_TOP,
                &l,
                egui::FontId::proportional(13.0),
                egui::Color32::WHITE,
            );
            y += 17.0;
        }
        // Shading buttons.
        let bar = egui::Rect::from_min_size(rect.min + egui::vec2(6.0, 6.0), egui::vec2(rect.width() - 12.0, 24.0));
        ui.scope_builder(egui::UiBuilder::new().max_rect(bar), |ui| {
            ui.horizontal(|ui| {
                for (i, s) in Shading::ALL.into_iter().enumerate() {
                    if ui
                        .selectable_label(self.shading == s, s.label())
                        .on_hover_text(format!("Ctrl+{}", i + 1))
                        .clicked()
                    {
                        self.shading = s;
                    }
                }
                ui.separator();
                ui.label("Exp.").on_hover_text("Exposure");
                ui.add(egui::DragValue::new(&mut self.exposure).range(0.25..=64.0).speed(0.05).suffix("×"))
                    .on_hover_text("Lightmap multiplier of the lit and lightmap views");
                ui.label("Amb.").on_hover_text("Ambient");
                ui.add(egui::DragValue::new(&mut self.ambient).range(0.0..=1.0).speed(0.005))
                    .on_hover_text("Editor-only light added in the lit view (0 = exactly the bake)");
                ui.checkbox(&mut self.textured, "Textures")
                    .on_hover_text("Material textures in the lit and fullbright views");
                ui.separator();
                ui.checkbox(&mut self.show_objects, "Objects");
                ui.checkbox(&mut self.show_regions, "Regions");
            });
        });
    }
}

/// Mouse-wheel movement this frame in points (a wheel notch is 50), positive = away from the
/// user (zoom in / extrude).
fn wheel_points(i: &egui::InputState) -> f32 {
    i.events
        .iter()
        .map(|e| match e {
            egui::Event::MouseWheel { unit, delta, .. } => {
                delta.y
                    * match unit {
                        egui::MouseWheelUnit::Point => 1.0,
                        egui::MouseWheelUnit::Line => 50.0,
                        egui::MouseWheelUnit::Page => 400.0,
                    }
            }
            _ => 0.0,
        })
        .sum()
}

/// A hash of what chunk meshes take from the material library (names, colours, transparency).
fn material_fingerprint(state: &EditorState) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (id, m) in state.map.library.materials().iter() {
        (id, &m.name, m.color, m.alpha, m.transparent, m.liquid, &m.texture, m.render_mode).hash(&mut h);
        // Whether it reads the material table (`mesh::Look::fx`).
        (m.emission, m.texture_advance_us, m.extra_textures.len(), m.uv_scroll.to_array().map(f32::to_bits))
            .hash(&mut h);
    }
    h.finish()
}

/// What [`materials_fx`] depends on.
fn fx_fingerprint(state: &EditorState) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (id, m) in state.map.library.materials().iter() {
        (id, &m.texture, &m.extra_textures, m.texture_advance_us, m.emission).hash(&mut h);
        m.uv_scroll.to_array().map(f32::to_bits).hash(&mut h);
    }
    h.finish()
}

/// The renderer's material table source: entry `id` for library material `id` (the mesh's row
/// `id + 1`), defaults for unused ids.
pub fn materials_fx(library: &pmfedit_core::map::Library) -> Vec<render::MaterialFx> {
    let mut out: Vec<render::MaterialFx> = Vec::new();
    for (id, m) in library.materials().iter() {
        let i = usize::from(id.0);
        if out.len() <= i {
            out.resize(i + 1, render::MaterialFx::default());
        }
        out[i] = render::MaterialFx {
            frames: std::iter::once(&m.texture).chain(&m.extra_textures).cloned().collect(),
            frame_us: m.texture_advance_us,
            scroll: m.uv_scroll.to_array(),
            emission: m.emission.map(|c| f32::from(c) / 255.0),
        };
    }
    out
}

/// World position of a chunk's center.
pub fn chunk_center(level: &Level, c: pmfedit_core::map::coords::ChunkCoord) -> DVec3 {
    let f = level.frame();
    f.world_from_lattice(f.chunk_min_lattice(c) + IVec3::splat(f.chunk_edge() / 2))
}

/// Center and radius of the level's stored chunks.
fn occupied_sphere(level: &Level) -> Option<(DVec3, f64)> {
    let (lo, hi) = level.occupied_bounds()?;
    let f = level.frame();
    let a = f.world_from_lattice(f.chunk_min_lattice(lo));
    let b = f.world_from_lattice(f.chunk_min_lattice(hi) + IVec3::splat(f.chunk_edge()));
    Some(((a + b) * 0.5, (b - a).length() * 0.5))
}

/// Center and radius of the selection, world space.
fn selection_sphere(state: &EditorState) -> Option<(DVec3, f64)> {
    match state.selection {
        Selection::Cubes { level, min, max } => {
            let f = state.map.levels.get(level)?.frame();
            let (a, b) = (f.world_from_lattice(min), f.world_from_lattice(max));
            Some(((a + b) * 0.5, (b - a).length() * 0.5))
        }
        Selection::Cube { level, addr } => {
            let f = state.map.levels.get(level)?.frame();
            let (a, b) = (f.world_from_lattice(addr.min), f.world_from_lattice(addr.max()));
            Some(((a + b) * 0.5, (b - a).length() * 0.5))
        }
        Selection::Light { .. } | Selection::Entity { .. } => {
            let (level, obj) = tools::object::selected_object(state)?;
            Some((tools::object::object_position(state, level, obj)?, 1.0))
        }
        Selection::Region { level, id } => {
            let r = state.map.levels.get(level)?.objects.regions().get(id)?;
            let (lo, hi) = r.bounds();
            Some((((lo + hi) * 0.5).as_dvec3(), f64::from((hi - lo).length() * 0.5)))
        }
        Selection::LoadRegion { level, id } => {
            let r = state.map.levels.get(level)?.objects.load_regions().get(id)?;
            Some((((r.min + r.max) * 0.5).as_dvec3(), f64::from((r.max - r.min).length() * 0.5)))
        }
        Selection::None => None,
    }
}

/// The nearest light or entity marker the ray passes within 0.35 units of, closer than `limit`.
pub fn pick_object(level: &Level, origin: DVec3, dir: DVec3, limit: f64) -> Option<ObjRef> {
    let mut best: Option<(f64, ObjRef)> = None;
    let mut test = |p: DVec3, id: ObjRef| {
        let t = (p - origin).dot(dir);
        if t <= 0.0 || t > limit {
            return;
        }
        let d = (origin + dir * t - p).length();
        if d < 0.35 && best.is_none_or(|(bt, _)| t < bt) {
            best = Some((t, id));
        }
    };
    for (id, l) in level.objects.lights().iter() {
        test(l.position.as_dvec3(), ObjRef::Light(id));
    }
    for (id, e) in level.objects.entities().iter() {
        if let Some(p) = e.position() {
            test(p.as_dvec3(), ObjRef::Entity(id));
        }
    }
    best.map(|(_, id)| id)
}

#[cfg(test)]
mod tests;
