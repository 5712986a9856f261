//! `pmfedit`: the PlatinumSrc map editor.
//!
//! ```text
//! pmfedit [PROJECT] [--screenshot OUT.png] [--frames N] [--bench-frames N] [--bench-terrain]
//!         [--shading lit|fullbright|wireframe|lightmap|visibility] [--view-distance U]
//!         [--walkthrough DIR]
//! ```
//! Opens a project folder, or the built-in demo map when none is given. `--screenshot` renders
//! N frames (default 60) and waits until no chunk is pending, saves the window as a PNG and
//! exits. `--bench-frames N` prints median and p95 frame times over N frames after the first
//! load and the time from a scripted edit to its re-baked mesh being uploaded, then exits
//! (`--bench-terrain`: on `sample::terrain(32, 4, 32, 1)` instead of the demo).
//! `--walkthrough DIR` plays a designer's session on the map (see [`pmfedit::walkthrough`]),
//! saving a screenshot per step into DIR, and exits 1 if any step failed.

use std::path::PathBuf;

use eframe::egui;

use pmfedit::viewport::render::Shading;
use pmfedit::viewport::script::{self, Mode};
use pmfedit_core::project::Project;
use pmfedit_core::sample;

const USAGE: &str = "usage: pmfedit [PROJECT] [--screenshot OUT.png] [--frames N] [--bench-frames N] [--bench-terrain]

Opens a project folder, or the built-in demo map.
  --screenshot OUT.png  render N frames (and until the bake is done), save a PNG, exit
  --frames N            frames before the screenshot (default 60)
  --bench-frames N      print frame times over N frames and one edit's re-bake latency, exit
  --bench-terrain       benchmark on a 32×4×32-chunk procedural terrain instead of the demo
  --shading MODE        start in lit, fullbright, wireframe, lightmap or visibility shading
  --view-distance U     draw only chunks within U map units of the camera (default: no limit)
  --walkthrough DIR     play a scripted editing session (every tool, forms, lights, undo, save,
                        reopen, export), a screenshot per step into DIR, then exit";

fn main() -> anyhow::Result<()> {
    let mut project_dir: Option<PathBuf> = None;
    let mut screenshot: Option<PathBuf> = None;
    let mut frames: u32 = 60;
    let mut bench: Option<u32> = None;
    let mut terrain = false;
    let mut walkthrough: Option<PathBuf> = None;
    let mut args = std::env::args_os().skip(1);
    let number = |v: Option<std::ffi::OsString>, flag: &str| -> anyhow::Result<u32> {
        v.and_then(|s| s.to_str().and_then(|s| s.parse().ok()))
            .ok_or_else(|| anyhow::anyhow!("{flag} needs a number\n\n{USAGE}"))
    };
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--help" | "-h") => {
                println!("{USAGE}");
                return Ok(());
            }
            Some("--screenshot") => {
                screenshot = Some(PathBuf::from(
                    args.next().ok_or_else(|| anyhow::anyhow!("--screenshot needs a path\n\n{USAGE}"))?,
                ));
            }
            Some("--frames") => frames = number(args.next(), "--frames")?,
            Some("--bench-frames") => bench = Some(number(args.next(), "--bench-frames")?),
            Some("--bench-terrain") => terrain = true,
            Some("--view-distance") => script::set_view_distance(f64::from(number(args.next(), "--view-distance")?)),
            Some("--walkthrough") => {
                walkthrough = Some(PathBuf::from(
                    args.next().ok_or_else(|| anyhow::anyhow!("--walkthrough needs a folder\n\n{USAGE}"))?,
                ));
            }
            Some("--shading") => {
                let v = args.next().and_then(|s| s.into_string().ok()).unwrap_or_default();
                let shading =
                    Shading::ALL.into_iter().find(|s| s.label().eq_ignore_ascii_case(&v)).ok_or_else(|| {
                        anyhow::anyhow!("--shading needs lit, fullbright, wireframe, lightmap or visibility\n\n{USAGE}")
                    })?;
                script::set_shading(shading);
            }
            Some(s) if s.starts_with("--") => anyhow::bail!("unknown option {s}\n\n{USAGE}"),
            _ => project_dir = Some(PathBuf::from(arg)),
        }
    }
    let (map, project) = match &project_dir {
        Some(dir) => {
            let (p, m) = Project::open_locked(dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
            (m, Some(p))
        }
        None if terrain => (sample::terrain(32, 4, 32, 1), None),
        None => (sample::demo(), None),
    };
    let scripted = screenshot.is_some() || bench.is_some() || walkthrough.is_some();
    if let Some(dir) = &walkthrough {
        pmfedit::walkthrough::set_cli(dir.clone());
    }
    if let Some(frames) = bench {
        script::set_mode(Mode::Bench { frames: frames.max(1) });
    } else if let Some(out) = screenshot {
        script::set_mode(Mode::Screenshot { out, frames });
    }
    let options = eframe::NativeOptions {
        renderer: eframe::Renderer::Glow,
        depth_buffer: 24,
        // Scripted runs measure and capture as fast as frames come.
        glow_options: eframe::egui_glow::GlowConfiguration { vsync: !scripted, ..Default::default() },
        viewport: egui::ViewportBuilder::default().with_title("pmfedit").with_inner_size([1280.0, 800.0]),
        ..Default::default()
    };
    eframe::run_native("pmfedit", options, Box::new(move |cc| Ok(Box::new(pmfedit::app::App::new(cc, map, project)))))
        .map_err(|e| anyhow::anyhow!("could not open the editor window: {e}"))?;
    if walkthrough.is_some() {
        match pmfedit::walkthrough::cli_result() {
            Some(Ok(_)) => {}
            Some(Err(why)) => anyhow::bail!("walkthrough failed: {why}"),
            None => anyhow::bail!("walkthrough did not finish (the window was closed)"),
        }
    }
    Ok(())
}
