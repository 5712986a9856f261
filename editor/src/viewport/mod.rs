//! The 3D viewport: the **baked** chunk meshes with their lightmaps (what the game gets), drawn
//! with three-d, plus the camera, picking and overlays. Pointer input goes to the active tool
//! ([`crate::tools::Tool`]): the viewport knows what the pointer is over, not what a tool does.
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
//! - **Meshes off the UI thread**: each frame the chunks in `bake.changed` are queued, nearest
//!   the camera first; a window of them ([`mesh_window`]: all of them when the workers are idle,
//!   else twice what they finished since the last frame,
//!   [`MESH_JOBS_IN_FLIGHT`]..=[`MESH_JOBS_IN_FLIGHT_MAX`]) goes to the mesh workers
//!   ([`mesher`]), which build GPU-ready meshes ([`gpu_mesh`]); finished ones are handed to the
//!   renderer, which copies them into its shared region buffers ([`regions`]) in the next paint.
//!   The first few of a frame whose workers are idle (an edit's chunks) are meshed on the UI
//!   thread and uploaded in the same frame's paint ([`INLINE_MESH_CHUNKS`]).
//!   Pending chunks keep their last mesh, tinted.
//! - **No GL, still a viewport**: under egui_kittest `cc.gl` is `None`; camera, picking and tools
//!   work and the 3D image is replaced by a note.
//!
//! # Input
//! The camera takes right-drag (fly, with W/A/S/D, Q/E and Shift held), Alt + left drag (orbit),
//! middle drag (pan) and the wheel (zoom towards the point under the pointer, unless the tool
//! holds a box); in the orthographic views ([`camera::OrthoView`]) the right and middle buttons
//! pan. Every map shows the work plane's ground grid; tools that ask for it
//! ([`Tool::plane_use`]) act on the work plane under the pointer where there is no face (or
//! always, as the Box tool does). A primary press goes to
//! the gizmo service first when the tool asks for it ([`crate::tools::ToolInfo::gizmos`]: the
//! selection's handles, object markers, region outlines; see [`gizmo`]), then to the box select
//! of objects where the tool says a press starts one ([`marquee`]), else to the tool:
//! [`Tool::press`], [`Tool::drag`] while held, [`Tool::release`]. What the tool would act on is
//! its [`Tool::preview`], drawn here. Keys are the app's (its command table,
//! [`crate::ui_command`]); it calls back into the viewport for the camera ones
//! ([`Viewport::frame_selection`], [`bookmarks`], [`Viewport::cancel_drag`]).
//!
//! Faces are textured (material texture × colour × lightmap, [`textures`]) and the background is
//! the level's default sky as a gradient ([`sky`]).
//!
//! Drag-and-drop ([`crate::dnd`]): a material row from the library, or texture files from the
//! desktop, held over the view highlight the face under the pointer as the Paint tool does and
//! say "Paint face with …" at the pointer; dropping paints it.

pub mod arena;
pub mod bookmarks;
pub mod camera;
pub mod gizmo;
pub mod gpu_mesh;
pub mod marquee;
pub mod mesh;
pub mod mesher;
pub mod overlay;
pub mod regions;
pub mod render;
pub mod sky;
pub mod textures;
pub mod visibility;

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use eframe::egui;
use eframe::egui_glow;
use glam::DVec3;

use pmfedit_bake::deps::ChunkKey;
use pmfedit_bake::rebuild::ChunkState;
use pmfedit_core::edit::ObjRef;
use pmfedit_core::map::Level;
use pmfedit_core::map::coords::{Face, LatticeBox, MIN_CUBE_EDGE};
use pmfedit_core::map::level::LevelHit;

use crate::command::Command;
use crate::dnd::{self, FileDrop, MaterialDrag};
use crate::panels::form;
use crate::selection::Selection;
use crate::state::EditorState;
use crate::tools::{self, Look, Mark, Mods, Pick, PlaneUse, Pointer, Preview, Tool};

use self::camera::Camera;
use self::overlay::Overlay;
use self::render::{FrameParams, Renderer, Shading, Upload};

/// Fewest chunk mesh jobs handed to the workers and not yet back: the queue is sorted nearest
/// first each frame, so a moving camera's new surroundings go next.
pub const MESH_JOBS_IN_FLIGHT: usize = 64;
/// Most mesh jobs in flight, except when the workers finished everything they had since the
/// last frame (then the whole queue goes). Between the two the window is twice what the workers
/// finished since the last frame: on slow frames (software GL drawing a 4 096-chunk map takes ~300 ms)
/// 64 jobs a frame kept the workers idle most of the time and the open from saved bakes took
/// 13.7 s; a window that follows the workers' pace keeps them busy and the queue still
/// re-sorted about once per frame's worth of work.
pub const MESH_JOBS_IN_FLIGHT_MAX: usize = 2048;
/// Mesh worker threads.
pub const MESH_WORKERS: usize = 2;
/// The first this many chunks to mesh in a frame whose workers have no job in flight (the last
/// edit's chunks, then the nearest) are meshed on the UI thread and uploaded in the same frame's paint ([`inline_budget`]); the rest
/// go to the workers. An edit's draft (the edited chunk and a few around it, a fraction of a
/// millisecond each) is then drawn one frame sooner than through the workers, whose results only
/// the next frame takes: a whole paint later, ~300 ms of software GL on a 4 096-chunk map.
pub const INLINE_MESH_CHUNKS: usize = 4;

/// How many of this frame's chunks the UI thread meshes itself: [`INLINE_MESH_CHUNKS`] when the
/// workers have no job in flight (`in_flight`), else none (they are busy with a batch, whose
/// frame pacing already waits for them).
pub fn inline_budget(in_flight: usize) -> usize {
    if in_flight == 0 { INLINE_MESH_CHUNKS } else { 0 }
}

/// While the mesh workers work, background frames come at most this often, or every two of the
/// last paint's time when that is longer (and the workers wake the frame that takes the rest of
/// their batch): an open from saved bakes paints the map a few times while its chunks stream in,
/// not once for every few hundred (software GL: a paint of a 4 096-chunk map is ~200 ms of the
/// CPU the workers need).
pub const WORKING_FRAME: std::time::Duration = std::time::Duration::from_millis(250);

/// How many mesh jobs may be in flight after this frame's submissions: `queued` chunks wait,
/// `before` jobs were in flight at the start of the frame and `finished` of them came back since.
/// Workers with nothing to do (they finished every job they had since the last frame, or had
/// none) get the rest of the queue at once: an open from saved bakes hands all its chunks out in
/// its first frame, nearest first, instead of a window doubling frame by frame, each frame a
/// paint of the map under software GL. Busy workers get twice what they finished, within
/// [`MESH_JOBS_IN_FLIGHT`]..=[`MESH_JOBS_IN_FLIGHT_MAX`].
pub fn mesh_window(queued: usize, before: usize, finished: usize) -> usize {
    // Nothing in flight any more: every job back, or none handed out.
    if finished == before {
        queued.max(MESH_JOBS_IN_FLIGHT_MAX)
    } else {
        (2 * finished).clamp(MESH_JOBS_IN_FLIGHT, MESH_JOBS_IN_FLIGHT_MAX)
    }
}

/// The delay before the next background frame while the mesh workers work: the paced delay
/// (`background`), at least [`WORKING_FRAME`], and at least twice the last paint (`paint`): a
/// paint of a big map under software GL costs more than the interval, and frames then take at
/// most a third of the CPU the workers need.
pub fn working_frame_delay(background: std::time::Duration, paint: std::time::Duration) -> std::time::Duration {
    background.max(WORKING_FRAME).max(2 * paint)
}

/// How soon the next frame of animated materials (texture frames, UV scroll) comes at most.
pub const ANIMATION_FRAME: std::time::Duration = std::time::Duration::from_millis(33);
pub use crate::pick::PICK_DISTANCE;

/// eframe's GL loader (`CreationContext::get_proc_address`).
pub type GetProcAddress = dyn Fn(&std::ffi::CStr) -> *const std::ffi::c_void + Send + Sync;

/// The viewport's state (owned by the app).
pub struct Viewport {
    renderer: Option<Arc<Mutex<Renderer>>>,
    /// Why there is no renderer, if there is none.
    pub renderer_error: Option<String>,
    pub camera: Camera,
    camera_ready: bool,
    pub shading: Shading,
    /// A view setting for inspection: multiplies the luxels in the lit mode. 1 (the default)
    /// draws them as the game does (docs/spec/PMF-NOTES.md K5).
    pub exposure: f32,
    /// A view setting for inspection: editor-only light added in the lit mode. 0 (the default)
    /// shows exactly the bake.
    pub ambient: f32,
    /// Draw environment and load regions.
    pub show_regions: bool,
    /// The clip plane's world height: cubes above it are not drawn and not picked, to work
    /// inside rooms (`None`: no clip).
    pub clip: Option<f64>,
    /// Hide or isolate a box of cubes (H, I): not drawn and not picked.
    pub filter: Option<ShowFilter>,
    /// Hide or isolate level objects (H, I with objects selected): not drawn and not picked.
    pub object_filter: Option<ObjectFilter>,
    /// Draw light and entity markers.
    pub show_objects: bool,
    queue: VecDeque<ChunkKey>,
    queued: HashSet<ChunkKey>,
    /// The mesh workers (started with the first chunk to mesh, when there is a renderer).
    mesher: Option<mesher::Mesher>,
    /// Texture reference → texture array layer, shared with the renderer.
    texture_slots: Arc<Mutex<textures::TextureSlots>>,
    gpu_keys: BTreeSet<ChunkKey>,
    /// The chunks among [`Self::gpu_keys`] whose meshes draw an animated material (texture
    /// frames, UV scroll): the view redraws on its own only while there is one.
    animated_chunks: HashSet<ChunkKey>,
    /// The document the uploaded meshes belong to ([`EditorState::document`]).
    document: Option<u64>,
    /// What the uploaded meshes' colours were built from (see [`material_fingerprint`]).
    materials_seen: u64,
    /// Texture frames, UV scroll and emission per material ([`materials_fx`]) and what they
    /// were made from.
    materials_fx: Arc<Vec<render::MaterialFx>>,
    fx_seen: Option<u64>,
    /// The animation clock's start.
    clock: Instant,
    hover: Option<Pick>,
    /// The hovered face's point, world space.
    hover_world: Option<DVec3>,
    /// What the active tool sees of the pointer this frame.
    pointer: Pointer,
    hover_object: Option<(usize, ObjRef)>,
    /// The selection's gizmo this frame, the handle and the region outline under the pointer.
    gizmo: Option<gizmo::Gizmo>,
    gizmo_hover: Option<gizmo::Handle>,
    region_hover: Option<(usize, ObjRef)>,
    /// The viewport rectangle of the last frame.
    rect: egui::Rect,
    /// A gizmo handle (or an object marker's centre) being dragged.
    gizmo_drag: Option<Box<gizmo::GizmoDrag>>,
    /// A box select of objects being dragged.
    marquee: Option<marquee::Marquee>,
    /// How far the view bar reached down into the view last frame, points.
    bar_bottom: f32,
    last_frame: Option<Instant>,
    /// CPU time of the last [`Viewport::ui`] call, seconds.
    pub last_ui_seconds: f64,
    /// How long a background repaint waits: for meshes and textures to upload while chunks bake
    /// or meshes are built, for animation ([`crate::pace`]; the app sets it every frame).
    pub background_repaint: std::time::Duration,
    /// Whether there was input in the last [`crate::pace::INPUT_GRACE`] (set by the app each
    /// frame): then background frames come at once, whatever else is going on.
    pub input_recent: bool,
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
    /// Something is dragged over the view this frame (a library material or files); `true`
    /// when Shift is held (the drop paints the whole cube).
    dropping: Option<bool>,
    /// Files dropped on the view this frame, for the app ([`Viewport::take_file_drop`]).
    file_drop: Option<FileDrop>,
}

impl Viewport {
    /// A viewport drawing through `gl` (`None`: no 3D image, e.g. under egui_kittest).
    pub fn new(gl: Option<Arc<egui_glow::glow::Context>>) -> Self {
        Self::with_gl(gl, None)
    }

    /// [`Viewport::new`], with the GL loader to find the entry points glow lacks (the
    /// multi-draw, [`regions::load_multi_draw`]).
    pub fn with_gl(gl: Option<Arc<egui_glow::glow::Context>>, get_proc_address: Option<&GetProcAddress>) -> Self {
        let texture_slots = Arc::new(Mutex::new(textures::TextureSlots::default()));
        let multi_draw = get_proc_address.and_then(|f| regions::load_multi_draw(f));
        let (renderer, renderer_error) = match gl {
            Some(gl) => match Renderer::new(gl, multi_draw, texture_slots.clone()) {
                Ok(r) => (Some(Arc::new(Mutex::new(r))), None),
                Err(e) => (None, Some(e.to_string())),
            },
            None => (None, Some("no OpenGL context".into())),
        };
        Self {
            renderer,
            renderer_error,
            camera: Camera::default(),
            camera_ready: false,
            shading: Shading::default(),
            exposure: 1.0,
            ambient: 0.0,
            show_regions: true,
            clip: None,
            filter: None,
            object_filter: None,
            show_objects: true,
            queue: VecDeque::new(),
            queued: HashSet::new(),
            mesher: None,
            texture_slots,
            gpu_keys: BTreeSet::new(),
            animated_chunks: HashSet::new(),
            document: None,
            materials_seen: 0,
            materials_fx: Arc::new(Vec::new()),
            fx_seen: None,
            clock: Instant::now(),
            hover: None,
            hover_world: None,
            pointer: Pointer::default(),
            hover_object: None,
            gizmo: None,
            gizmo_hover: None,
            region_hover: None,
            rect: egui::Rect::NOTHING,
            gizmo_drag: None,
            marquee: None,
            bar_bottom: 0.0,
            last_frame: None,
            last_ui_seconds: 0.0,
            background_repaint: std::time::Duration::ZERO,
            input_recent: false,
            textures: textures::TextureStore::default(),
            textured: true,
            edges: true,
            view_distance: 0.0,
            sky: None,
            bookmarks: bookmarks::Bookmarks::default(),
            vis: visibility::VisView::default(),
            dropping: None,
            file_drop: None,
        }
    }

    /// Whether a renderer exists (a GL context was given and the shaders compiled).
    pub fn has_renderer(&self) -> bool {
        self.renderer.is_some()
    }

    /// Chunks waiting to be meshed and uploaded.
    pub fn uploads_waiting(&self) -> usize {
        self.queue.len()
            + self.mesher.as_ref().map_or(0, mesher::Mesher::in_flight)
            + self.renderer.as_ref().map_or(0, |r| r.lock().map_or(0, |r| r.queue.len()))
    }

    /// Whether a newer mesh of `key` than the one on the GPU is on its way: the chunk waits to be
    /// meshed, is on a mesh worker, or waits for the next paint's upload.
    pub fn mesh_pending(&self, key: ChunkKey) -> bool {
        self.queued.contains(&key)
            || self.mesher.as_ref().is_some_and(|m| m.is_meshing(key))
            || self.renderer.as_ref().is_some_and(|r| {
                r.lock().is_ok_and(|r| r.queue.iter().any(|u| matches!(u, Upload::Set { key: k, .. } if *k == key)))
            })
    }

    /// What the last paint drew (`None` without a renderer).
    pub fn draw_stats(&self) -> Option<render::DrawStats> {
        Some(self.renderer.as_ref()?.lock().ok()?.stats)
    }

    /// The paints' CPU time so far ([`render::PaintTime`]; `None` without a renderer).
    pub fn paint_time(&self) -> Option<render::PaintTime> {
        Some(self.renderer.as_ref()?.lock().ok()?.paint_time)
    }

    /// What the chunk regions hold on the GPU (`None` without a renderer).
    pub fn gpu_bytes(&self) -> Option<regions::GpuBytes> {
        Some(self.renderer.as_ref()?.lock().ok()?.gpu_bytes())
    }

    /// The mesh workers' time on every chunk mesh built so far.
    pub fn mesh_busy(&self) -> std::time::Duration {
        self.mesher.as_ref().map_or(std::time::Duration::ZERO, mesher::Mesher::busy)
    }

    /// When a chunk's mesh last reached the GPU.
    pub fn uploaded_at(&self, key: ChunkKey) -> Option<Instant> {
        self.renderer.as_ref()?.lock().ok()?.uploaded_at.get(&key).copied()
    }

    /// The hovered face, if any.
    pub fn hovered(&self) -> Option<&Pick> {
        self.hover.as_ref()
    }

    /// The pointer as the tools saw it in the last frame (what the app's tool keys act on).
    pub fn pointer(&self) -> &Pointer {
        &self.pointer
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

    /// Makes the visibility view show the air cube at a world point (on the active level)
    /// instead of the one in front of the hovered face; `None` follows the pointer again.
    pub fn pin_visibility(&mut self, point: Option<DVec3>) {
        self.vis.pin = point;
    }

    /// The texture files dropped on the view this frame, if any (the app carries the drop out).
    pub fn take_file_drop(&mut self) -> Option<FileDrop> {
        self.file_drop.take()
    }

    /// Points the camera at the document's start view, else at the occupied bounds.
    pub fn reset_camera(&mut self, state: &EditorState) {
        // A new document starts in perspective.
        self.camera.ortho = None;
        if let Some(v) = state.start_view {
            self.camera.look_at(v.eye, v.target);
        } else if let Some((center, radius)) = state.map.levels.get(state.level).and_then(occupied_sphere) {
            self.camera.look_at(center + DVec3::new(-0.8, 0.6, -0.8).normalize() * radius * 1.6, center);
        } else {
            self.camera.look_at(DVec3::new(-12.0, 8.0, -12.0), DVec3::ZERO);
        }
        self.camera.speed = (self.camera.orbit_distance * 0.5).clamp(4.0, 200.0);
        self.camera_ready = true;
    }

    /// Takes newly baked chunks, hands them to the mesh workers (nearest first; a window
    /// of twice what they finished since the last frame, [`MESH_JOBS_IN_FLIGHT`]..=[`MESH_JOBS_IN_FLIGHT_MAX`]) and queues the finished meshes for the GPU.
    fn sync_uploads(&mut self, state: &mut EditorState, ctx: &egui::Context) {
        if self.document.replace(state.document()).is_some_and(|d| d != state.document()) {
            // The document was replaced.
            self.gpu_keys.clear();
            self.animated_chunks.clear();
            self.queue.clear();
            self.queued.clear();
            if let Some(m) = &mut self.mesher {
                m.reset();
            }
            if let Some(r) = &self.renderer {
                r.lock().expect("renderer").queue.push(Upload::Clear);
            }
            self.vis.reset();
            self.camera_ready = false;
        }
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
        // Chunks with no mesh on the GPU yet (an open: all of them) announce their meshes' size
        // to their regions, so that the shared buffers are sized once ([`regions::Region::reserve`]).
        let mut arriving: BTreeMap<gpu_mesh::RegionKey, (DVec3, u32, u32)> = BTreeMap::new();
        for k in state.bake.take_changed() {
            if self.queued.insert(k) {
                self.queue.push_back(k);
                if !self.gpu_keys.contains(&k)
                    && let (Some(shown), Some(level)) = (state.bake.shown(k), state.map.levels.get(k.0))
                {
                    let (region, _) = gpu_mesh::region_of(k);
                    let (vertices, indices) = gpu_mesh::expected_size(&shown.bake);
                    let origin = level.frame().chunk_center_world(region.first_chunk());
                    let e = arriving.entry(region).or_insert((origin, 0, 0));
                    e.1 = e.1.saturating_add(vertices);
                    e.2 = e.2.saturating_add(indices);
                }
            }
        }
        let Some(renderer) = &self.renderer else {
            self.queue.clear();
            self.queued.clear();
            return;
        };
        if !arriving.is_empty() {
            let reserve = arriving.into_iter().map(|(region, (origin, vertices, indices))| Upload::Reserve {
                region,
                origin,
                vertices,
                indices,
            });
            renderer.lock().expect("renderer").queue.extend(reserve);
        }
        let mesher = self.mesher.get_or_insert_with(|| {
            let ctx = ctx.clone();
            mesher::Mesher::with_wake(MESH_WORKERS, Arc::new(move || ctx.request_repaint()))
        });
        let before = mesher.in_flight();
        let mut uploads: Vec<Upload> =
            mesher.poll().into_iter().map(|b| Upload::Set { key: b.key, mesh: Box::new(b.mesh) }).collect();
        let finished = before - mesher.in_flight();
        let window = mesh_window(self.queue.len(), before, finished);
        let mut inline_left = inline_budget(mesher.in_flight());
        // The last edit's chunks first, then nearest first: the camera's chunk matters most (and
        // the UI thread meshes the first few itself).
        let queued = self.queue.len();
        if queued > window.saturating_sub(mesher.in_flight()) || (inline_left > 0 && queued > inline_left) {
            let eye = self.camera.eye;
            let level = state.level;
            let urgent = state.bake.urgent();
            let dist = |k: &ChunkKey| {
                let d = state.map.levels.get(k.0).map_or(f64::MAX, |l| {
                    let d = l.frame().chunk_center_world(k.1).distance_squared(eye);
                    if k.0 == level { d } else { d + 1e18 }
                });
                (!urgent.contains(k), d)
            };
            self.queue.make_contiguous().sort_by(|a, b| {
                let (a, b) = (dist(a), dist(b));
                a.0.cmp(&b.0).then(a.1.total_cmp(&b.1))
            });
        }
        // The workers wake the UI when they run out of jobs; not while this batch is handed out.
        mesher.hold();
        while mesher.in_flight() < window {
            let Some(k) = self.queue.pop_front() else { break };
            self.queued.remove(&k);
            match (state.bake.shown(k), state.map.levels.get(k.0)) {
                (Some(shown), Some(level)) => {
                    // The library lookups (a few per chunk) happen here; the meshing on a worker.
                    let used = &shown.bake.pmf.common.used_materials;
                    if draws_animated(used, &state.map.library, &self.materials_fx) {
                        self.animated_chunks.insert(k);
                    } else {
                        self.animated_chunks.remove(&k);
                    }
                    let textures = mesh::material_textures(&state.map.library, used);
                    let mut slots = self.texture_slots.lock().expect("texture slots");
                    let layers = textures.iter().map(|t| slots.slot(t) as u32).collect();
                    drop(slots);
                    for t in &textures {
                        self.textures.want(t);
                    }
                    let (region, slot) = gpu_mesh::region_of(k);
                    let frame = level.frame();
                    let origin = frame.chunk_center_world(region.first_chunk());
                    let job = mesher::Job {
                        key: k,
                        bake: shown.bake.clone(),
                        looks: mesh::material_looks(&state.map.library, used),
                        textures,
                        layers,
                        offset: (frame.chunk_center_world(k.1) - origin).as_vec3(),
                        origin,
                        slot,
                    };
                    if inline_left > 0 {
                        inline_left -= 1;
                        // An older job of the chunk still on a worker is dropped when it returns.
                        mesher.cancel(k);
                        uploads.push(Upload::Set { key: k, mesh: Box::new(job.build()) });
                    } else {
                        mesher.submit(job);
                    }
                    self.gpu_keys.insert(k);
                }
                _ => {
                    mesher.cancel(k);
                    self.animated_chunks.remove(&k);
                    if self.gpu_keys.remove(&k) {
                        uploads.push(Upload::Remove(k));
                    }
                }
            }
        }
        mesher.release();
        let loaded = self.textures.pump(textures::LOADS_PER_FRAME);
        uploads.extend(loaded.into_iter().map(|(reference, image)| Upload::Texture { reference, image }));
        if !uploads.is_empty() {
            renderer.lock().expect("renderer").queue.extend(uploads);
        }
    }

    /// Draws the viewport into `ui` (all the space left), forwards the pointer to `tool` (the
    /// active one) and returns the commands they ask for.
    pub fn ui(&mut self, ui: &mut egui::Ui, state: &mut EditorState, mut tool: Option<&mut dyn Tool>) -> Vec<Command> {
        let started = Instant::now();
        let dt = self.last_frame.map_or(1.0 / 60.0, |t| t.elapsed().as_secs_f64()).min(0.1);
        self.last_frame = Some(started);
        let mut out = Vec::new();
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), egui::Sense::click_and_drag());
        if !self.camera_ready {
            self.reset_camera(state);
        }
        if let Some((target, distance)) = state.camera_request.take() {
            self.camera.frame(target, room_distance(state, target, self.camera.forward(), distance));
        }
        self.update_sky(state);
        self.sync_uploads(state, ui.ctx());
        // Without a renderer nothing is uploaded (and textures wait for none).
        if let Some(renderer) = &self.renderer
            && (!self.queue.is_empty()
                || self.mesher.as_ref().is_some_and(|m| m.in_flight() > 0)
                || self.textures.pending() > 0
                || renderer.lock().is_ok_and(|r| !r.queue.is_empty()))
        {
            // While chunks bake, a frame takes CPU from the bakes: paced. While the mesh workers
            // work, a frame takes CPU from them too and soon has more to upload: at most
            // [`WORKING_FRAME`] apart, and the workers wake the next one when they run out of
            // jobs, so it takes their whole batch. Otherwise frames are how the meshes reach the
            // GPU: at once.
            let working = self.mesher.as_ref().is_some_and(mesher::Mesher::working);
            let delay = if self.input_recent {
                std::time::Duration::ZERO
            } else if working {
                let paint = renderer.lock().map_or(std::time::Duration::ZERO, |r| r.paint_time.last);
                working_frame_delay(self.background_repaint, paint)
            } else if state.bake.in_flight() > 0 {
                self.background_repaint
            } else {
                std::time::Duration::ZERO
            };
            ui.ctx().request_repaint_after(delay);
        }

        let gizmos = tool.as_deref().is_some_and(|t| t.info().gizmos);
        self.handle_camera(ui, &response, rect, dt, tool.as_deref().is_some_and(|t| t.takes_wheel()));
        self.update_hover(ui, state, rect, gizmos, tool.as_deref());
        self.update_visibility(state);
        let dragging = self.drag_open(tool.as_deref());
        self.update_gizmo(ui, state, rect, gizmos, dragging);
        self.gizmo_tooltip(&response);
        self.handle_pointer(ui, state, &response, tool.as_mut().map(|t| &mut **t as &mut dyn Tool), &mut out);
        self.handle_drops(ui, state, &response, &mut out);
        state.view_point = Some(self.centre_point(state));
        state.set_camera(state.level, self.camera.eye);

        let preview = match self.dropping {
            // Something dragged over the view targets what the Paint tool would.
            Some(whole_cube) => {
                Preview::with_grid(self.hover.map(|p| tools::paint::marks(state, &p, whole_cube)).unwrap_or_default())
            }
            None => tool.as_deref().map(|t| t.preview(state, self.pointer.pick.as_ref())).unwrap_or_default(),
        };
        let dragging = self.drag_open(tool.as_deref());
        let overlay = self.build_overlay(state, &preview, dragging);
        self.paint(ui, state, rect, overlay);
        if let Some(m) = &self.marquee {
            m.draw(&ui.painter_at(rect));
        }
        self.hud(ui, state, rect, tool.as_deref());
        if let Some(t) = tool.filter(|t| t.has_panel()) {
            out.extend(tool_panel(ui, state, rect, t));
        }
        self.last_ui_seconds = started.elapsed().as_secs_f64();
        out
    }

    /// Where the heads-up text starts, points: below the view bar, however many rows it
    /// wrapped onto last frame (it used to start at a fixed height that a second row covered).
    pub fn hud_top(&self) -> f32 {
        self.rect.top() + self.bar_bottom.max(28.0) + 6.0
    }

    /// Whether a drag is open: a gizmo handle's, a box select's or the tool's.
    fn drag_open(&self, tool: Option<&dyn Tool>) -> bool {
        self.gizmo_drag.is_some() || self.marquee.is_some() || tool.is_some_and(|t| t.dragging())
    }

    /// Whether the level object `obj` of `level` shows (is not hidden by H / I).
    pub fn object_shown(&self, level: usize, obj: ObjRef) -> bool {
        self.object_filter.as_ref().is_none_or(|f| f.shows(level, obj))
    }

    /// The selection a box select's release makes: the shown, unhidden objects in its rectangle
    /// combined with the selection.
    fn marquee_release(&self, state: &EditorState, m: &marquee::Marquee) -> Option<Command> {
        let level = state.map.levels.get(m.level)?;
        let object = |obj| self.object_shown(m.level, obj);
        let shown = marquee::Shown { objects: self.show_objects, regions: self.show_regions, object: &object };
        Some(Command::Select(m.finish(&state.selection, level, &self.view(), &shown)))
    }

    /// The axis the work plane is across (0 = X, 1 = Y, 2 = Z): the view's in the front and
    /// side views, else Y (a horizontal plane).
    pub fn plane_axis(&self) -> usize {
        self.camera.ortho.map_or(1, camera::OrthoView::axis)
    }

    /// Switches the camera between perspective (`None`) and an orthographic view.
    pub fn set_view(&mut self, view: Option<camera::OrthoView>) {
        self.camera.set_ortho(view);
    }

    /// PageUp / PageDown: the work point moved `steps` cubes along the work plane's axis.
    pub fn move_work_plane(&self, state: &EditorState, steps: i32) -> Command {
        let edge = f64::from(1u32 << state.cube_log2) / 8.0;
        let mut p = state.work_point;
        p[self.plane_axis()] += edge * f64::from(steps);
        Command::SetWorkPlane(p)
    }

    fn ndc(&self, rect: egui::Rect, pos: egui::Pos2) -> (f64, f64) {
        let x = f64::from((pos.x - rect.left()) / rect.width().max(1.0)) * 2.0 - 1.0;
        let y = 1.0 - f64::from((pos.y - rect.top()) / rect.height().max(1.0)) * 2.0;
        (x, y)
    }

    fn aspect(rect: egui::Rect) -> f64 {
        f64::from(rect.width().max(1.0) / rect.height().max(1.0))
    }

    /// Fly, orbit, pan and zoom; the wheel zooms unless `tool_wheel` (the tool holds a box).
    fn handle_camera(&mut self, ui: &egui::Ui, response: &egui::Response, rect: egui::Rect, dt: f64, tool_wheel: bool) {
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
        if self.camera.ortho.is_some() {
            // The flat views do not turn: the right and middle buttons pan.
            if flying || response.dragged_by(egui::PointerButton::Middle) {
                self.camera.pan(f64::from(delta.x), f64::from(delta.y), f64::from(rect.height()));
            } else if hovered && scroll != 0.0 && !tool_wheel {
                self.zoom_to_pointer(ui, rect, scroll, None);
            }
            return;
        }
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
        } else if hovered && scroll != 0.0 && !tool_wheel {
            // Towards the face under the pointer (last frame's pick), else along its ray.
            self.zoom_to_pointer(ui, rect, scroll, self.hover_world);
        }
    }

    /// The wheel's zoom, towards what is under the pointer (`target`, world) so that it stays
    /// there on screen.
    fn zoom_to_pointer(&mut self, ui: &egui::Ui, rect: egui::Rect, scroll: f32, target: Option<DVec3>) {
        let Some(pos) = ui.input(|i| i.pointer.hover_pos()) else { return };
        let (x, y) = self.ndc(rect, pos);
        self.camera.zoom_at(f64::from(scroll) / 50.0, x, y, Self::aspect(rect), target);
    }

    fn pointer_ray(&self, ui: &egui::Ui, rect: egui::Rect) -> Option<(DVec3, DVec3)> {
        let pos = ui.input(|i| i.pointer.hover_pos())?;
        if !rect.contains(pos) {
            return None;
        }
        let (x, y) = self.ndc(rect, pos);
        Some(self.camera.ray(x, y, Self::aspect(rect)))
    }

    /// Picks the face under the pointer (and, when `gizmos`, the nearer object marker) and
    /// fills in what the tool sees of the pointer this frame: the face, or the work plane under
    /// the pointer as `tool` asks ([`Tool::plane_use`]).
    fn update_hover(
        &mut self,
        ui: &egui::Ui,
        state: &EditorState,
        rect: egui::Rect,
        gizmos: bool,
        tool: Option<&dyn Tool>,
    ) {
        let (pos, mods, wheel) = ui.input(|i| {
            let m = i.modifiers;
            (i.pointer.latest_pos(), Mods { shift: m.shift, ctrl: m.command, alt: m.alt }, wheel_points(i))
        });
        let ray = self.pointer_ray(ui, rect);
        self.pick_under(state, ray, gizmos);
        let plane = || self.plane_pick(state, ray?);
        let pick = match tool.map_or(PlaneUse::Never, |t| t.plane_use(mods)) {
            PlaneUse::Never => self.hover,
            PlaneUse::Fallback => self.hover.or_else(plane),
            PlaneUse::Always => plane(),
        };
        self.pointer = Pointer { pick, ray, pos, mods, wheel };
    }

    /// The work plane's lattice coordinate on the active level, across [`Viewport::plane_axis`].
    fn work_plane(&self, state: &EditorState) -> Option<(usize, i32)> {
        let level = state.map.levels.get(state.level)?;
        let axis = self.plane_axis();
        Some((axis, level.frame().lattice_from_world_f(state.work_point)[axis].round() as i32))
    }

    /// Where a world ray meets the work plane, as a pick ([`Pick::on_plane`]).
    fn plane_pick(&self, state: &EditorState, (o, d): (DVec3, DVec3)) -> Option<Pick> {
        let (axis, plane) = self.work_plane(state)?;
        let frame = state.map.levels.get(state.level)?.frame();
        let p = Pick::on_plane(state.level, frame.lattice_from_world_f(o), d, axis, plane)?;
        // Not past what picking reaches (a ray grazing the plane meets it very far away).
        (frame.world_from_lattice_f(p.point).distance(o) < self.pick_reach()).then_some(p)
    }

    /// How far picking looks from the camera: [`PICK_DISTANCE`], from the eye's plane in the
    /// orthographic views (their eye sits [`camera::ORTHO_BACK`] behind what they look at).
    fn pick_reach(&self) -> f64 {
        PICK_DISTANCE + if self.camera.ortho.is_some() { camera::ORTHO_BACK } else { 0.0 }
    }

    fn pick_under(&mut self, state: &EditorState, ray: Option<(DVec3, DVec3)>, gizmos: bool) {
        self.hover = None;
        self.hover_world = None;
        self.hover_object = None;
        let Some((o, d)) = ray else { return };
        let Some(level) = state.map.levels.get(state.level) else { return };
        self.hover =
            ray_cast_shown(level, o, d, self.clip, self.filter.as_ref()).map(|h| Pick::from_hit(state.level, &h));
        self.hover_world = self.hover.map(|p| level.frame().world_from_lattice_f(p.point));
        if gizmos {
            let limit = self.hover_world.map_or(self.pick_reach(), |w| (w - o).length() + 0.3);
            let shows = |obj| self.object_shown(state.level, obj);
            self.hover_object = pick_object(level, o, d, limit, shows).map(|id| (state.level, id));
        }
    }

    /// The visibility view: finds the air cube in front of the hovered face (or at
    /// the point [`Viewport::pin_visibility`] set) and, when it or the bakes changed, rebuilds what the renderer needs.
    /// Does nothing in the other shadings.
    fn update_visibility(&mut self, state: &EditorState) {
        if self.shading != Shading::Visibility {
            return;
        }
        let point = match (self.vis.pin, state.map.levels.get(state.level)) {
            (Some(w), Some(level)) => Some(level.frame().lattice_from_world_f(w)),
            (Some(_), None) => None,
            (None, _) => self.hover.as_ref().map(visibility::point_in_front),
        };
        let air = match point {
            Some(p) => visibility::air_cube_at(state, state.level, p),
            None => Err(visibility::NoAir::NothingHovered),
        };
        if self.vis.needs_build(&air, state.bake.revision()) {
            let (chunks, rest_visible) = match &air {
                Ok(a) => {
                    let b = visibility::build(state, a);
                    self.vis.cubes = b.cubes;
                    self.vis.chunks = b.chunks.len();
                    self.vis.level_chunks = state.bake.slots().keys().filter(|k| k.0 == a.key.0).count();
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
        self.vis.waiting = state.bake.in_flight();
    }

    /// Forwards the primary button to the gizmo drag or the tool: a press over the view (not
    /// with Alt, which orbits) goes to the gizmo service first when the tool uses it, then to
    /// the tool; while held, the open drag follows the pointer; on release it ends.
    fn handle_pointer(
        &mut self,
        ui: &egui::Ui,
        state: &EditorState,
        response: &egui::Response,
        mut tool: Option<&mut dyn Tool>,
        out: &mut Vec<Command>,
    ) {
        let (pressed, released, down) =
            ui.input(|i| (i.pointer.primary_pressed(), i.pointer.primary_released(), i.pointer.primary_down()));
        if pressed && response.contains_pointer() && !self.pointer.mods.alt {
            let gizmos = tool.as_deref().is_some_and(|t| t.info().gizmos);
            if !(gizmos && self.gizmo_press(ui, state, out))
                && let Some(t) = tool.as_mut()
            {
                match self.pointer.pos.filter(|_| t.selects_objects_in_rect(&self.pointer)) {
                    Some(pos) => self.marquee = Some(marquee::Marquee::start(state.level, pos, self.pointer.mods)),
                    None => out.extend(t.press(state, &self.pointer)),
                }
            }
        }
        if down {
            if let Some(d) = &mut self.gizmo_drag {
                gizmo::drag_step(d, state, self.hover, self.pointer.ray, self.pointer.mods, out);
            } else if let Some(m) = &mut self.marquee {
                m.current = self.pointer.pos.unwrap_or(m.current);
            } else if let Some(t) = tool.as_mut() {
                out.extend(t.drag(state, &self.pointer));
            }
        }
        if released || (!down && self.drag_open(tool.as_deref())) {
            if self.gizmo_drag.take().is_some() {
                out.push(Command::EndStroke);
            }
            if let Some(m) = self.marquee.take() {
                out.extend(self.marquee_release(state, &m));
            }
            if let Some(t) = tool {
                out.extend(t.release(state));
            }
        }
    }

    /// Esc: a gizmo drag puts the start value back inside its stroke (the history then leaves
    /// no undo step), a box select is dropped, else the tool cancels its own drag.
    pub fn cancel_drag(&mut self, state: &EditorState, tool: Option<&mut dyn Tool>) -> Vec<Command> {
        if self.marquee.take().is_some() {
            return vec![Command::Status("Box select cancelled".into())];
        }
        match self.gizmo_drag.take() {
            Some(d) => {
                let mut out: Vec<Command> = d.cancel().map(Command::Edit).into_iter().collect();
                out.push(Command::EndStroke);
                out.push(Command::Status("Drag cancelled".into()));
                out
            }
            None => tool.map(|t| t.cancel(state)).unwrap_or_default(),
        }
    }

    /// Points the camera at the selection: a light, entity or region from 12 units, a box of
    /// cubes whole; without one, at the point under the pointer.
    pub fn frame_selection(&mut self, state: &EditorState) {
        let target = frame_target(state).or_else(|| {
            let level = state.map.levels.get(state.level)?;
            let p = self.hover?;
            Some((level.frame().world_from_lattice_f(p.point), 5.0))
        });
        if let Some((c, distance)) = target {
            self.camera.frame(c, room_distance(state, c, self.camera.forward(), distance));
        }
    }

    /// The point under the centre of the view, half a unit out of the face there (where new
    /// objects go); the orbit pivot when the centre shows sky.
    pub fn centre_point(&self, state: &EditorState) -> DVec3 {
        let (o, d) = self.camera.ray(0.0, 0.0, Self::aspect(self.rect));
        state
            .map
            .levels
            .get(state.level)
            .and_then(|level| {
                let hit = level.ray_cast_world(o, d, PICK_DISTANCE)?;
                let p = level.frame().world_from_lattice_f(hit.point);
                Some(p + hit.face.normal().as_dvec3() * 0.5)
            })
            .unwrap_or_else(|| self.camera.pivot())
    }

    /// Drag-and-drop onto the view ([`crate::dnd`]): files dropped are kept for the app
    /// ([`Viewport::take_file_drop`]), a library material released here paints the face under the
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
            self.file_drop = Some(FileDrop { files: dropped, pick: self.hover, whole_cube });
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

    /// This frame's lines: objects and regions, the gizmo, the selection, the hovered marker,
    /// the visibility view's air cube, the hovered face, the tool's `preview` and (unless
    /// `dragging`) the grid.
    fn build_overlay(&self, state: &EditorState, preview: &Preview, dragging: bool) -> Overlay {
        let mut o = Overlay::default();
        let Some(level) = state.map.levels.get(state.level) else { return o };
        let frame = level.frame();
        // Every selected light and entity is outlined (one or several).
        let selected = state.selection.objects().filter(|(l, _)| *l == state.level).map(|(_, v)| v).unwrap_or_default();
        let shows = |obj| self.object_shown(state.level, obj);
        o.level_objects(level, &selected, self.show_objects, self.show_regions, &shows);
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
        // The hovered marker, and every one a box select would take.
        let mut hovered: Vec<ObjRef> = self.hover_object.map(|(_, obj)| obj).into_iter().collect();
        if let Some(m) = self.marquee.filter(|m| m.level == state.level) {
            let shown = marquee::Shown { objects: self.show_objects, regions: self.show_regions, object: &shows };
            hovered.extend(m.objects(level, &self.view(), &shown));
        }
        for p in hovered.iter().filter_map(|obj| obj.position(&level.objects)).map(|p| p.as_dvec3()) {
            o.box_lines(p - DVec3::splat(0.3), p + DVec3::splat(0.3), overlay::HOVER);
        }
        // The visibility view's air cube.
        if self.shading == Shading::Visibility
            && let Ok(a) = &self.vis.air
            && a.key.0 == state.level
        {
            o.box_lines(a.min, a.max, overlay::AIR_CUBE);
        }
        if let Some(p) = &self.hover {
            o.with_xray(overlay::XRAY_NONE, |o| o.face_outline(&frame, p.addr, p.face, [1.0, 1.0, 1.0, 0.5]));
        }
        // The tool's drag and target.
        for m in &preview.marks {
            match *m {
                Mark::Face { addr, face, look } => o.face_outline(&frame, addr, face, look_color(look)),
                Mark::Box { region, look } => o.lattice_box(&frame, region, look_color(look)),
                Mark::Point { at, half, look } => {
                    let c = frame.world_from_lattice(at);
                    o.box_lines(c - DVec3::splat(half), c + DVec3::splat(half), look_color(look));
                }
            }
        }
        // The ground grid: the work plane around the point under the pointer (else the view's
        // centre), hidden behind geometry.
        if let Some((axis, plane)) = self.work_plane(state) {
            let centre = self.pointer.ray.or_else(|| Some(self.camera.ray(0.0, 0.0, 1.0)));
            let at = centre
                .and_then(|r| self.plane_pick(state, r))
                .or_else(|| self.plane_pick(state, (self.camera.eye, self.camera.forward())))
                .map(|p| p.point);
            let face = Face::from_index(axis).unwrap_or(Face::PosY);
            let at = at.unwrap_or_else(|| frame.lattice_from_world_f(self.camera.pivot()));
            o.with_xray(overlay::XRAY_NONE, |o| o.ground_grid(&frame, face, plane, at, state.cube_log2));
        }
        if let (Some(p), true, false) = (&self.hover, preview.grid, dragging) {
            let a = p.face.axis();
            let plane = if p.face.is_positive() { p.addr.max()[a] } else { p.addr.min[a] };
            o.with_xray(overlay::XRAY_NONE, |o| o.grid(&frame, p.face, plane, p.point, state.cube_log2, 6));
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
        if !self.animated_chunks.is_empty() {
            // Texture frames and UV scroll move on their own: about 30 frames a second, or as
            // background frames are paced where a frame costs more ([`crate::pace`]).
            ui.ctx().request_repaint_after(ANIMATION_FRAME.max(self.background_repaint));
        }
        let params = FrameParams {
            eye: self.camera.eye,
            forward: self.camera.forward(),
            view_proj: self.camera.projection(aspect) * self.camera.view(),
            shading: self.shading,
            level: state.level,
            pending: state.bake.keys(ChunkState::Queued).collect(),
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
            clip: self.clip,
            filter: self.filter,
            exposure: self.exposure,
            ambient: self.ambient,
            materials: self.materials_fx.clone(),
            time_s: self.clock.elapsed().as_secs_f64(),
            waiting: if self.shading == Shading::Visibility {
                state.bake.keys_in_flight().collect()
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

    /// The heads-up text: the tool and cube size, the hovered face, the tool's own lines, the
    /// gizmo hint, what the GPU holds.
    fn hud(&mut self, ui: &mut egui::Ui, state: &EditorState, rect: egui::Rect, tool: Option<&dyn Tool>) {
        let edge = f64::from(1u32 << state.cube_log2) / 8.0;
        let name = tool.map_or("No tool", |t| t.info().label);
        let view = self.camera.ortho.map_or("Perspective", camera::OrthoView::label);
        let axis = ["x", "y", "z"][self.plane_axis()];
        let plane = state.work_point[self.plane_axis()];
        let mut lines =
            vec![format!("{name} · cube {edge} u · [ ] to change · {view} · work plane {axis} = {plane} (PgUp/PgDn)")];
        if self.shading == Shading::Visibility {
            lines.push(self.vis.status());
        }
        if let Some(p) = &self.hover
            && let Some(level) = state.map.levels.get(p.level)
        {
            let w = level.frame().world_from_lattice_f(p.point);
            let mat = p
                .cube
                .face_material(p.face)
                .and_then(|m| state.map.library.materials().get(m))
                .map_or("?", |m| m.name.as_str());
            lines.push(format!("({:.2}, {:.2}, {:.2}) {:?} · {mat}", w.x, w.y, w.z, p.face));
        }
        lines.extend(tool.map(Tool::hud).unwrap_or_default());
        lines.extend(self.gizmo_hint());
        if let Some(r) = &self.renderer
            && let Ok(r) = r.lock()
        {
            lines.push(format!(
                "{} chunks on GPU, {} drawn ({} draws, {}k triangles) · speed {:.0}",
                r.chunk_count(),
                r.stats.chunks,
                r.stats.draws,
                r.stats.indices / 3000,
                self.camera.speed
            ));
        }
        let painter = ui.painter_at(rect);
        let mut y = self.hud_top();
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
    }

    /// The bar across the top of the view: shading buttons (hover text: `shortcut` of each),
    /// exposure, ambient, textures, objects and regions, and the work plane's typed height.
    /// Call after [`Viewport::ui`]; returns the commands it asks for.
    pub fn view_bar(
        &mut self,
        ui: &mut egui::Ui,
        state: &EditorState,
        shortcut: impl Fn(Shading) -> String,
    ) -> Vec<Command> {
        let rect = self.rect;
        let mut out = Vec::new();
        // Wraps onto more rows in a narrow view rather than losing its last controls; the
        // heads-up text starts below however many rows it took.
        let bar = egui::Rect::from_min_size(rect.min + egui::vec2(6.0, 6.0), egui::vec2(rect.width() - 12.0, 90.0));
        // A dark backing keeps the labels readable over a bright sky.
        let backing =
            egui::Frame::new().fill(egui::Color32::from_black_alpha(110)).corner_radius(4.0).inner_margin(3.0);
        let used = ui.scope_builder(egui::UiBuilder::new().max_rect(bar), |ui| {
            backing.show(ui, |ui| {
                ui.horizontal_wrapped(|ui| {
                    for s in Shading::ALL {
                        if ui.selectable_label(self.shading == s, s.label()).on_hover_text(shortcut(s)).clicked() {
                            self.shading = s;
                        }
                    }
                    ui.separator();
                    ui.label("View exp.").on_hover_text("View exposure");
                    ui.add(egui::DragValue::new(&mut self.exposure).range(0.25..=64.0).speed(0.05).suffix("×"))
                        .on_hover_text(
                            "View setting, not exported: multiplies the luxels in the lit view for inspection \
                         (1 = what the game draws)",
                        );
                    ui.label("View amb.").on_hover_text("View ambient");
                    ui.add(egui::DragValue::new(&mut self.ambient).range(0.0..=1.0).speed(0.005)).on_hover_text(
                        "View setting, not exported: editor-only light added in the lit view (0 = exactly the bake)",
                    );
                    ui.checkbox(&mut self.textured, "Textures")
                        .on_hover_text("Material textures in the lit and fullbright views");
                    ui.separator();
                    ui.checkbox(&mut self.show_objects, "Objects");
                    ui.checkbox(&mut self.show_regions, "Regions");
                    ui.separator();
                    out.extend(self.work_plane_field(ui, state));
                })
            });
        });
        self.bar_bottom = used.response.rect.bottom() - rect.top();
        out
    }

    /// The work plane's height (its coordinate across [`Viewport::plane_axis`]) as a typed field:
    /// a typed value snaps to the grid of the current cube size and the field says so beside
    /// it, as it says when it clamps to [`PICK_DISTANCE`]; PageUp / PageDown move what it shows.
    fn work_plane_field(&self, ui: &mut egui::Ui, state: &EditorState) -> Option<Command> {
        let axis = self.plane_axis();
        let edge = f64::from(1u32 << state.cube_log2) / 8.0;
        ui.label(format!("Work plane {}", ["x", "y", "z"][axis]))
            .on_hover_text("The plane Box draws on and the ground grid lies on (PageUp / PageDown move it a cube)");
        let mut v = state.work_point[axis];
        let shown = form::Shown { snap: Some(edge), suffix: " u", ..form::Shown::default() };
        let r = form::number_shown(ui, "Work plane", &mut v, Some(-PICK_DISTANCE..=PICK_DISTANCE), edge * 0.1, shown);
        // A drag moves it in whole cubes too.
        let v = (v / edge).round() * edge;
        (r.changed() && v != state.work_point[axis]).then(|| {
            let mut p = state.work_point;
            p[axis] = v;
            Command::SetWorkPlane(p)
        })
    }
}

/// The current tool's own controls ([`Tool::panel`]) in a small frame at the view's bottom left.
fn tool_panel(ui: &mut egui::Ui, state: &EditorState, rect: egui::Rect, tool: &mut dyn Tool) -> Vec<Command> {
    let mut out = Vec::new();
    egui::Area::new(egui::Id::unique("pmfedit.tool_panel"))
        .fixed_pos(rect.left_bottom() + egui::vec2(8.0, -8.0))
        .pivot(egui::Align2::LEFT_BOTTOM)
        .constrain_to(rect)
        .show(ui.ctx(), |ui| {
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                out = tool.panel(ui, state);
            });
        });
    out
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

/// Whether a chunk that uses the materials named `used` draws an animated one (texture frames,
/// UV scroll; `fx` from [`materials_fx`] of `library`).
pub fn draws_animated(used: &[String], library: &pmfedit_core::map::Library, fx: &[render::MaterialFx]) -> bool {
    used.iter().any(|name| {
        library.materials().by_name(name).is_some_and(|(id, _)| fx.get(usize::from(id.0)).is_some_and(|m| m.animated()))
    })
}

/// Center and radius of the level's stored chunks.
fn occupied_sphere(level: &Level) -> Option<(DVec3, f64)> {
    let (lo, hi) = level.occupied_bounds()?;
    let f = level.frame();
    let (a, b) = (f.chunk_world_box(lo).0, f.chunk_world_box(hi).1);
    Some(((a + b) * 0.5, (b - a).length() * 0.5))
}

/// Hide or isolate of level objects (H, I with lights, entities or regions selected): hidden
/// objects are neither drawn nor picked (nor box-selected).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectFilter {
    /// The level of `objects` (other levels' objects always show).
    pub level: usize,
    /// The objects selected when it was set.
    pub objects: Vec<ObjRef>,
    /// Only `objects` show (else: every object but them).
    pub isolate: bool,
}

impl ObjectFilter {
    /// Whether `obj` of `level` shows.
    pub fn shows(&self, level: usize, obj: ObjRef) -> bool {
        level != self.level || self.objects.contains(&obj) == self.isolate
    }
}

/// What part of the level the view shows besides the clip plane: only a box (isolate) or all
/// but a box (hide), world coordinates (the selected box of cubes when it was set).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShowFilter {
    pub min: DVec3,
    pub max: DVec3,
    /// Only the box shows (else: everything but the box).
    pub isolate: bool,
}

impl ShowFilter {
    /// Whether the cube holding world point `p` shows.
    pub fn shows(&self, p: DVec3) -> bool {
        let inside = p.cmpgt(self.min).all() && p.cmplt(self.max).all();
        inside == self.isolate
    }
}

/// The first face a world ray hits that the view shows: below the clip height `clip` (a ray
/// from above starts where it crosses the clip plane; a hit above it is no hit) and, with a
/// `filter`, of a cube it shows (hidden cubes are passed through).
pub fn ray_cast_shown(
    level: &Level,
    origin: DVec3,
    dir: DVec3,
    clip: Option<f64>,
    filter: Option<&ShowFilter>,
) -> Option<LevelHit> {
    // A world point just past a hit, inside the cube hit.
    const NUDGE: f64 = 0.01;
    let mut o = origin;
    if let Some(y) = clip
        && o.y > y
    {
        if dir.y >= 0.0 {
            return None;
        }
        o += dir * ((o.y - y) / -dir.y);
    }
    let frame = level.frame();
    // Each pass skips the filter's box (a ray needs at most two).
    for _ in 0..4 {
        let travelled = (o - origin).length();
        if travelled >= PICK_DISTANCE {
            return None;
        }
        let hit = level.ray_cast_world(o, dir, PICK_DISTANCE - travelled)?;
        let at = frame.world_from_lattice_f(hit.point);
        if clip.is_some_and(|y| at.y > y + 1e-6) {
            return None;
        }
        let inside = at + dir * NUDGE;
        let Some(f) = filter.filter(|f| !f.shows(inside)) else {
            return Some(LevelHit { distance: (at - origin).length() / MIN_CUBE_EDGE, ..hit });
        };
        // Go on from where the ray leaves the hidden box, or enters the isolated one.
        let (t_in, t_out) = box_span(at, dir, f.min, f.max)?;
        let t = if f.isolate { t_in } else { t_out };
        if t < 0.0 {
            return None;
        }
        o = at + dir * (t + NUDGE);
    }
    None
}

/// Where a ray (origin, unit direction) is inside the box `min..max`: the distances along it
/// where it enters and leaves (the entry is negative from inside); `None` if it misses.
fn box_span(o: DVec3, d: DVec3, min: DVec3, max: DVec3) -> Option<(f64, f64)> {
    let (mut t_in, mut t_out) = (f64::NEG_INFINITY, f64::INFINITY);
    for a in 0..3 {
        if d[a].abs() < 1e-12 {
            if o[a] < min[a] || o[a] > max[a] {
                return None;
            }
            continue;
        }
        let (t0, t1) = ((min[a] - o[a]) / d[a], (max[a] - o[a]) / d[a]);
        t_in = t_in.max(t0.min(t1));
        t_out = t_out.min(t0.max(t1));
    }
    (t_in <= t_out && t_out >= 0.0).then_some((t_in, t_out))
}

/// How far the camera backs off from `target` against `forward` when framing it: `distance`,
/// or less when a solid cube is nearer, so an object inside a room is framed from inside that
/// room, not from behind its wall.
fn room_distance(state: &EditorState, target: DVec3, forward: DVec3, distance: f64) -> f64 {
    let Some(level) = state.map.levels.get(state.level) else { return distance };
    match level.ray_cast_world(target, -forward, distance) {
        Some(hit) => (hit.world_distance() - 0.25).clamp(0.5, distance),
        None => distance,
    }
}

/// Where [`Viewport::frame_selection`] looks from how far: a light, entity or region from 12
/// units, a box of cubes from 2.5 times its radius (at least 2).
fn frame_target(state: &EditorState) -> Option<(DVec3, f64)> {
    const OBJECT_DISTANCE: f64 = 12.0;
    let whole_box = |level: usize, min, max| {
        let f = state.map.levels.get(level)?.frame();
        let (a, b) = (f.world_from_lattice(min), f.world_from_lattice(max));
        Some(((a + b) * 0.5, ((b - a).length() * 0.5 * 2.5).max(2.0)))
    };
    match state.selection {
        Selection::Cubes { level, min, max } => whole_box(level, min, max),
        Selection::Cube { level, addr } => whole_box(level, addr.min, addr.max()),
        Selection::Light { level, .. }
        | Selection::Entity { level, .. }
        | Selection::Region { level, .. }
        | Selection::LoadRegion { level, .. } => {
            let (_, obj) = state.selection.object()?;
            Some((obj.position(&state.map.levels.get(level)?.objects)?.as_dvec3(), OBJECT_DISTANCE))
        }
        // Several objects: their centre, from far enough to see them all.
        Selection::Objects { level, ref objects } => {
            let level = &state.map.levels.get(level)?.objects;
            let points: Vec<DVec3> = objects.iter().filter_map(|o| o.position(level)).map(|p| p.as_dvec3()).collect();
            let centre = points.iter().sum::<DVec3>() / points.len().max(1) as f64;
            let radius = points.iter().map(|p| p.distance(centre)).fold(0.0, f64::max);
            (!points.is_empty()).then(|| (centre, (radius * 2.5).max(OBJECT_DISTANCE)))
        }
        Selection::None => None,
    }
}

/// The colour of a tool mark.
fn look_color(look: Look) -> [f32; 4] {
    match look {
        Look::Target => overlay::HOVER,
        Look::Add => overlay::PREVIEW_ADD,
        Look::Remove => overlay::PREVIEW_REMOVE,
        Look::Select => overlay::SELECT,
    }
}

/// The nearest light or entity marker the ray passes within 0.35 units of, closer than `limit`,
/// of those `shows` lets through (hidden objects are not picked).
pub fn pick_object(
    level: &Level,
    origin: DVec3,
    dir: DVec3,
    limit: f64,
    shows: impl Fn(ObjRef) -> bool,
) -> Option<ObjRef> {
    let mut best: Option<(f64, ObjRef)> = None;
    let mut test = |p: DVec3, id: ObjRef| {
        let t = (p - origin).dot(dir);
        if t <= 0.0 || t > limit || !shows(id) {
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
mod lit_tests;
#[cfg(test)]
mod tests;
