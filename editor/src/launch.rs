//! What the command line asked for: a [`Launch`]. Plain data, parsed once by `main`
//! ([`Launch::parse`]) and handed to [`App::new`](crate::app::App::new) with the opened
//! [`Document`]; nothing reads the arguments or the environment after start-up.
//!
//! A launch names the document (a project folder, or a built-in [`Sample`] with its designed
//! [`StartView`]), the scripted [`Run`] if any (screenshot, benchmark, walkthrough: the drivers
//! in [`crate::drivers`] and [`crate::walkthrough`] carry them out), the initial shading and view
//! distance, and the shared asset folder.

use std::ffi::OsString;
use std::path::PathBuf;

use glam::DVec3;
use pmfedit_bake::jobs::Threads;

use pmfedit_core::edit::ObjRef;
use pmfedit_core::map::Map;
use pmfedit_core::map::library::LevelObjects;
use pmfedit_core::project::{Project, ProjectError};
use pmfedit_core::sample;

use crate::shading::Shading;

/// A map built into the editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sample {
    /// The hand-built demo ([`sample::demo`]): what the editor opens without a project.
    #[default]
    Demo,
    /// A 32 × 4 × 32-chunk procedural landscape ([`sample::terrain`]) for benchmarks.
    Terrain,
}

impl Sample {
    /// The map.
    pub fn map(self) -> Map {
        match self {
            Sample::Demo => sample::demo(),
            Sample::Terrain => sample::terrain(32, 4, 32, 1),
        }
    }

    /// Where the camera starts: the demo's designed view of its building ([`sample::landmarks`]);
    /// the terrain has none (the viewport frames its chunks).
    pub fn start_view(self) -> Option<StartView> {
        match self {
            Sample::Demo => Some(StartView {
                eye: sample::landmarks::CAMERA_EYE.as_dvec3(),
                target: sample::landmarks::CAMERA_TARGET.as_dvec3(),
            }),
            Sample::Terrain => None,
        }
    }
}

/// A camera placement a document starts with (world space).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StartView {
    pub eye: DVec3,
    pub target: DVec3,
}

/// Where the document comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A project folder (holds `map.ron`).
    Project(PathBuf),
    /// A built-in map.
    Sample(Sample),
}

impl Default for Source {
    fn default() -> Self {
        Source::Sample(Sample::Demo)
    }
}

impl Source {
    /// Reads the document.
    pub fn open(&self) -> Result<Document, ProjectError> {
        match self {
            Source::Project(dir) => {
                let (project, map) = Project::open_locked_with(dir, &Threads::all())?;
                Ok(Document { map, project: Some(project), start_view: None })
            }
            Source::Sample(s) => Ok(Document::sample(*s)),
        }
    }
}

/// An opened document: the map, its project (none for a sample) and where the camera starts.
#[derive(Debug)]
pub struct Document {
    pub map: Map,
    pub project: Option<Project>,
    /// `None`: the viewport frames the occupied chunks.
    pub start_view: Option<StartView>,
}

impl Document {
    /// A built-in map, unsaved, with its start view.
    pub fn sample(sample: Sample) -> Self {
        Self { map: sample.map(), project: None, start_view: sample.start_view() }
    }
}

/// A kind of level object, as `--select` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    Light,
    Entity,
    Region,
    LoadRegion,
}

/// A level object named on the command line: `light:NAME`, `entity:NAME`, `region:NAME` or
/// `load:NAME`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectSpec {
    pub kind: ObjectKind,
    pub name: String,
}

impl ObjectSpec {
    /// From `KIND:NAME`.
    pub fn parse(text: &str) -> Option<Self> {
        let (kind, name) = text.split_once(':')?;
        let kind = match kind {
            "light" => ObjectKind::Light,
            "entity" => ObjectKind::Entity,
            "region" => ObjectKind::Region,
            "load" => ObjectKind::LoadRegion,
            _ => return None,
        };
        (!name.is_empty()).then(|| Self { kind, name: name.to_owned() })
    }

    /// The object of this kind and name in `objects`, if there is one.
    pub fn find(&self, objects: &LevelObjects) -> Option<ObjRef> {
        let name = self.name.as_str();
        match self.kind {
            ObjectKind::Light => objects.lights().id_of(name).map(ObjRef::Light),
            ObjectKind::Entity => objects.entities().id_of(name).map(ObjRef::Entity),
            ObjectKind::Region => objects.regions().id_of(name).map(ObjRef::Region),
            ObjectKind::LoadRegion => objects.load_regions().id_of(name).map(ObjRef::LoadRegion),
        }
    }
}

/// `--screenshot`: what to capture and how the view is set up first.
#[derive(Debug, Clone, PartialEq)]
pub struct ScreenshotRun {
    /// The PNG written.
    pub out: PathBuf,
    /// Frames rendered before the capture (it also waits until nothing is baking).
    pub frames: u32,
    /// `--visibility-point`: start in the visibility view showing the air cube at this world
    /// point.
    pub visibility_point: Option<DVec3>,
    /// `--eye`: the camera looks at the visibility point from here.
    pub eye: Option<DVec3>,
    /// `--select`: select this object (on the active level) and frame it, so its gizmo shows.
    pub select: Option<ObjectSpec>,
}

impl ScreenshotRun {
    /// A capture of `out` after `frames` frames, with the view as it starts.
    pub fn new(out: PathBuf, frames: u32) -> Self {
        Self { out, frames, visibility_point: None, eye: None, select: None }
    }
}

/// A scripted run, or none.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Run {
    /// A person at the keyboard.
    #[default]
    Interactive,
    /// `--screenshot`.
    Screenshot(ScreenshotRun),
    /// `--bench-frames N`: frame times over `frames` frames, then scripted edits' latency;
    /// `--bench-export PATH` exports the opened map there between the two.
    Bench { frames: u32, export: Option<PathBuf> },
    /// `--walkthrough DIR`: the designer's session, screenshots into `dir`.
    Walkthrough { dir: PathBuf },
}

/// What the command line asked for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Launch {
    pub source: Source,
    pub run: Run,
    /// `--shading`: the view's first shading (`None`: lit).
    pub shading: Option<Shading>,
    /// `--view-distance`: chunks farther than this are not drawn, map units (`None`: no limit).
    pub view_distance: Option<f64>,
    /// The shared asset folder (textures the projects can use), resolved once at start-up.
    pub assets: Option<PathBuf>,
}

/// A command line that cannot be carried out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    /// A flag without its value.
    #[error("{flag} needs {what}")]
    Missing { flag: &'static str, what: &'static str },
    /// An option this editor does not have.
    #[error("unknown option {0}")]
    Unknown(String),
    /// Two scripted runs at once.
    #[error("choose one of --screenshot, --bench-frames and --walkthrough")]
    TwoRuns,
    /// A screenshot setting without `--screenshot`.
    #[error("{0} only works with --screenshot")]
    NeedsScreenshot(&'static str),
    /// A benchmark setting without `--bench-frames`.
    #[error("{0} only works with --bench-frames")]
    NeedsBench(&'static str),
    /// `--eye` without the point it looks at.
    #[error("--eye needs --visibility-point (the point the camera looks at)")]
    EyeWithoutPoint,
}

impl Launch {
    /// Whether a driver, not a person, runs the editor.
    pub fn is_scripted(&self) -> bool {
        self.run != Run::Interactive
    }

    /// Parses the arguments (without the program name); `None` for `--help`. The asset folder
    /// is left for the caller to resolve.
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Option<Launch>, LaunchError> {
        let mut launch = Launch::default();
        let (mut screenshot, mut frames, mut bench, mut walkthrough, mut terrain) = (None, 60, None, None, false);
        let (mut visibility_point, mut eye, mut select, mut bench_export) = (None, None, None, None);
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let Some(flag) = arg.to_str() else {
                launch.source = Source::Project(PathBuf::from(arg));
                continue;
            };
            let mut value =
                |flag: &'static str, what: &'static str| args.next().ok_or(LaunchError::Missing { flag, what });
            match flag {
                "--help" | "-h" => return Ok(None),
                "--screenshot" => screenshot = Some(PathBuf::from(value("--screenshot", "a path")?)),
                "--frames" => frames = number(value("--frames", "a number")?, "--frames")?,
                "--bench-frames" => bench = Some(number(value("--bench-frames", "a number")?, "--bench-frames")?),
                "--bench-terrain" => terrain = true,
                "--bench-export" => bench_export = Some(PathBuf::from(value("--bench-export", "a path")?)),
                "--walkthrough" => walkthrough = Some(PathBuf::from(value("--walkthrough", "a folder")?)),
                "--view-distance" => {
                    let what = "a distance in map units";
                    let v = value("--view-distance", what)?;
                    let d = v.to_str().and_then(|s| s.parse::<f64>().ok()).filter(|d| d.is_finite() && *d >= 0.0);
                    launch.view_distance = Some(d.ok_or(LaunchError::Missing { flag: "--view-distance", what })?);
                }
                "--shading" => {
                    let what = "lit, fullbright, wireframe, lightmap or visibility";
                    let v = value("--shading", what)?;
                    let v = v.to_str().unwrap_or_default();
                    let s = Shading::ALL.into_iter().find(|s| s.label().eq_ignore_ascii_case(v));
                    launch.shading = Some(s.ok_or(LaunchError::Missing { flag: "--shading", what })?);
                }
                "--visibility-point" => {
                    visibility_point = Some(point(value("--visibility-point", XYZ)?, "--visibility-point")?)
                }
                "--eye" => eye = Some(point(value("--eye", XYZ)?, "--eye")?),
                "--select" => {
                    let what = "KIND:NAME (KIND: light, entity, region or load)";
                    let v = value("--select", what)?;
                    let spec = v.to_str().and_then(ObjectSpec::parse);
                    select = Some(spec.ok_or(LaunchError::Missing { flag: "--select", what })?);
                }
                s if s.starts_with("--") => return Err(LaunchError::Unknown(s.to_owned())),
                _ => launch.source = Source::Project(PathBuf::from(arg)),
            }
        }
        if terrain && launch.source == Source::default() {
            launch.source = Source::Sample(Sample::Terrain);
        }
        let runs =
            usize::from(screenshot.is_some()) + usize::from(bench.is_some()) + usize::from(walkthrough.is_some());
        if runs > 1 {
            return Err(LaunchError::TwoRuns);
        }
        if eye.is_some() && visibility_point.is_none() {
            return Err(LaunchError::EyeWithoutPoint);
        }
        if bench_export.is_some() && bench.is_none() {
            return Err(LaunchError::NeedsBench("--bench-export"));
        }
        launch.run = match (screenshot, bench, walkthrough) {
            (Some(out), _, _) => Run::Screenshot(ScreenshotRun { out, frames, visibility_point, eye, select }),
            (None, ..) if visibility_point.is_some() => return Err(LaunchError::NeedsScreenshot("--visibility-point")),
            (None, ..) if select.is_some() => return Err(LaunchError::NeedsScreenshot("--select")),
            (None, Some(frames), _) => Run::Bench { frames: frames.max(1), export: bench_export },
            (None, None, Some(dir)) => Run::Walkthrough { dir },
            (None, None, None) => Run::Interactive,
        };
        Ok(Some(launch))
    }
}

/// What a point flag needs.
const XYZ: &str = "a point x,y,z (map units)";

fn number(v: OsString, flag: &'static str) -> Result<u32, LaunchError> {
    v.to_str().and_then(|s| s.parse().ok()).ok_or(LaunchError::Missing { flag, what: "a number" })
}

/// `x,y,z` as a world point.
fn point(v: OsString, flag: &'static str) -> Result<DVec3, LaunchError> {
    let parsed: Option<Vec<f64>> =
        v.to_str().and_then(|s| s.split(',').map(|t| t.trim().parse().ok().filter(|x: &f64| x.is_finite())).collect());
    match parsed.as_deref() {
        Some(&[x, y, z]) => Ok(DVec3::new(x, y, z)),
        _ => Err(LaunchError::Missing { flag, what: XYZ }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &str) -> Result<Option<Launch>, LaunchError> {
        Launch::parse(args.split_whitespace().map(OsString::from))
    }

    #[test]
    fn no_arguments_open_the_demo_interactively() {
        let l = parse("").unwrap().unwrap();
        assert_eq!(l, Launch::default());
        assert_eq!(l.source, Source::Sample(Sample::Demo));
        assert!(!l.is_scripted());
        assert_eq!(parse("--help").unwrap(), None);
    }

    #[test]
    fn a_screenshot_with_its_view_settings() {
        let l =
            parse("proj --screenshot out.png --frames 30 --visibility-point 4.5,3,0 --eye -6,4,-3 --select light:lamp")
                .unwrap()
                .unwrap();
        assert_eq!(l.source, Source::Project("proj".into()));
        let Run::Screenshot(s) = &l.run else { panic!("{:?}", l.run) };
        assert_eq!((s.out.to_str(), s.frames), (Some("out.png"), 30));
        assert_eq!(s.visibility_point, Some(DVec3::new(4.5, 3.0, 0.0)));
        assert_eq!(s.eye, Some(DVec3::new(-6.0, 4.0, -3.0)));
        assert_eq!(s.select, Some(ObjectSpec { kind: ObjectKind::Light, name: "lamp".into() }));
        assert!(l.is_scripted());
    }

    #[test]
    fn shading_view_distance_bench_and_terrain() {
        let l = parse("--bench-frames 0 --bench-terrain --shading WIREFRAME --view-distance 96").unwrap().unwrap();
        assert_eq!(l.run, Run::Bench { frames: 1, export: None });
        assert_eq!(l.source, Source::Sample(Sample::Terrain));
        assert_eq!(l.shading, Some(Shading::Wireframe));
        assert_eq!(l.view_distance, Some(96.0));
        let e = parse("proj --bench-frames 20 --bench-export out.pmf").unwrap().unwrap();
        assert_eq!(e.run, Run::Bench { frames: 20, export: Some("out.pmf".into()) });
        let w = parse("--walkthrough /tmp/wt").unwrap().unwrap();
        assert_eq!(w.run, Run::Walkthrough { dir: "/tmp/wt".into() });
    }

    #[test]
    fn bad_command_lines_say_what_is_wrong() {
        let err = |args: &str| parse(args).unwrap_err().to_string();
        assert_eq!(err("--frames x"), "--frames needs a number");
        assert_eq!(err("--screenshot"), "--screenshot needs a path");
        assert_eq!(err("--shading pretty"), "--shading needs lit, fullbright, wireframe, lightmap or visibility");
        assert_eq!(
            err("--screenshot a.png --visibility-point 1,2"),
            "--visibility-point needs a point x,y,z (map units)"
        );
        assert_eq!(err("--visibility-point 1,2,3"), "--visibility-point only works with --screenshot");
        assert_eq!(err("--select lamp"), "--select needs KIND:NAME (KIND: light, entity, region or load)");
        assert_eq!(
            err("--screenshot a.png --eye 1,2,3"),
            "--eye needs --visibility-point (the point the camera looks at)"
        );
        assert_eq!(
            err("--screenshot a.png --walkthrough d"),
            "choose one of --screenshot, --bench-frames and --walkthrough"
        );
        assert_eq!(err("--bench-export a.pmf"), "--bench-export only works with --bench-frames");
        assert_eq!(err("--fast"), "unknown option --fast");
    }

    #[test]
    fn the_demo_starts_at_its_landmark_view_and_a_selection_finds_its_object() {
        let doc = Source::default().open().unwrap();
        let view = doc.start_view.expect("the demo has a start view");
        assert_eq!(view.eye, sample::landmarks::CAMERA_EYE.as_dvec3());
        assert_eq!(Sample::Terrain.start_view(), None);
        let objects = &doc.map.levels[0].objects;
        let (id, lamp) = objects.lights().iter().find(|(_, l)| !l.name.is_empty()).unwrap();
        let spec = ObjectSpec::parse(&format!("light:{}", lamp.name)).unwrap();
        assert_eq!(spec.find(objects), Some(ObjRef::Light(id)));
        assert_eq!(ObjectSpec::parse("entity:nobody").unwrap().find(objects), None);
    }
}
