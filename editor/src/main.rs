//! `pmfedit`: the PlatinumSrc map editor.
//!
//! ```text
//! pmfedit [PROJECT] [--screenshot OUT.png] [--frames N] [--visibility-point X,Y,Z [--eye X,Y,Z]]
//!         [--select KIND:NAME] [--bench-frames N [--bench-export OUT.pmf]] [--bench-terrain]
//!         [--shading lit|fullbright|wireframe|lightmap|visibility] [--view-distance U]
//!         [--walkthrough DIR]
//! ```
//! Opens a project folder, or the built-in demo map when none is given. `--screenshot` renders
//! N frames (default 60) and waits until no chunk is pending, saves the window as a PNG and
//! exits; `--visibility-point` starts it in the visibility view of that point's air cube (seen
//! from `--eye`), `--select` selects and frames an object so its gizmo shows.
//! `--bench-frames N` prints median and p95 frame times (and the GPU's time of the chunk passes,
//! where the GL has timer queries) over N frames after the first load and
//! the time from a scripted edit to its re-baked mesh being uploaded, then exits
//! (`--bench-terrain`: on `sample::terrain(32, 4, 32, 1)` instead of the demo;
//! `--bench-export OUT.pmf`: also exports the map as opened, timed, before the edits).
//! `--walkthrough DIR` plays a designer's session on the map (see [`pmfedit::walkthrough`]),
//! saving a screenshot per step into DIR, and exits 1 if any step failed.
//!
//! The command line is read once into a [`Launch`]; the shared asset folder (`PMFEDIT_ASSETS`,
//! else `assets/` beside the executable) is resolved here too.

use std::cell::RefCell;
use std::rc::Rc;

use eframe::egui;

use pmfedit::app::{App, Driver};
use pmfedit::drivers::{bench::Bench, screenshot::Screenshot};
use pmfedit::launch::{Launch, Run};
use pmfedit::walkthrough::Walkthrough;

const USAGE: &str = "usage: pmfedit [PROJECT] [--screenshot OUT.png] [--frames N] [--bench-frames N] [--bench-terrain]

Opens a project folder, or the built-in demo map.
  --screenshot OUT.png    render N frames (and until the bake is done), save a PNG, exit
  --frames N              frames before the screenshot (default 60)
  --visibility-point X,Y,Z  screenshot in the visibility view of the air cube at that world point
  --eye X,Y,Z             …with the camera there, looking at the point
  --select KIND:NAME      screenshot with that object selected and framed (KIND: light, entity,
                          region or load)
  --bench-frames N        print frame times over N frames and one edit's re-bake latency, exit
  --bench-export OUT.pmf  with --bench-frames: export the map as opened (before the edits),
                          stamped as `pmfc build --timestamp 1` stamps it, and print the time
  --bench-terrain         benchmark on a 32×4×32-chunk procedural terrain instead of the demo
  --shading MODE          start in lit, fullbright, wireframe, lightmap or visibility shading
  --view-distance U       draw only chunks within U map units of the camera (default: no limit)
  --walkthrough DIR       play a scripted editing session (every tool, forms, lights, undo, save,
                          reopen, export), a screenshot per step into DIR, then exit

Environment: PMFEDIT_ASSETS names the shared asset folder (default: assets/ beside the program).";

/// Runs the editor; an error is printed as one message (with its causes), never as a debug dump
/// with a stack backtrace (`RUST_BACKTRACE` set), and the exit code is 1.
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pmfedit: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let Some(mut launch) = Launch::parse(std::env::args_os().skip(1)).map_err(|e| anyhow::anyhow!("{e}\n\n{USAGE}"))?
    else {
        println!("{USAGE}");
        return Ok(());
    };
    launch.assets = pmfedit::watch::assets_dir();
    let opening = std::time::Instant::now();
    let document = launch.source.open()?;
    let project_read = opening.elapsed();
    let walkthrough = match &launch.run {
        Run::Walkthrough { dir } => {
            let mut w = Walkthrough::new(dir.clone());
            w.close_when_done = true;
            Some(Rc::new(RefCell::new(w)))
        }
        _ => None,
    };
    let driver: Option<Box<dyn Driver>> = match &launch.run {
        Run::Interactive => None,
        Run::Screenshot(run) => Some(Box::new(Screenshot::new(run.clone()))),
        Run::Bench { frames, export } => Some(Box::new(Bench::new(*frames, export.clone(), project_read))),
        Run::Walkthrough { .. } => walkthrough.clone().map(|w| Box::new(w) as Box<dyn Driver>),
    };
    let options = eframe::NativeOptions {
        renderer: eframe::Renderer::Glow,
        depth_buffer: 24,
        // Scripted runs measure and capture as fast as frames come.
        glow_options: eframe::egui_glow::GlowConfiguration { vsync: !launch.is_scripted(), ..Default::default() },
        viewport: egui::ViewportBuilder::default().with_title("pmfedit").with_inner_size([1280.0, 800.0]),
        ..Default::default()
    };
    let creator = move |cc: &eframe::CreationContext<'_>| {
        let mut app = App::new(cc, &launch, document);
        if let Some(driver) = driver {
            app.set_driver(driver);
        }
        Ok(Box::new(app) as Box<dyn eframe::App>)
    };
    eframe::run_native("pmfedit", options, Box::new(creator))
        .map_err(|e| anyhow::anyhow!("could not open the editor window: {e}"))?;
    if let Some(w) = walkthrough {
        match w.borrow().outcome() {
            Some(Ok(_)) => {}
            Some(Err(why)) => anyhow::bail!("walkthrough failed: {why}"),
            None => anyhow::bail!("walkthrough did not finish (the window was closed)"),
        }
    }
    Ok(())
}
