//! `pmfedit`: the PlatinumSrc map editor.
//!
//! `pmfedit [PROJECT]` opens a project folder, or the built-in demo map when none is given.

use std::path::PathBuf;

use eframe::egui;

use pmfedit_core::project::Project;
use pmfedit_core::sample;

fn main() -> anyhow::Result<()> {
    let mut project_dir: Option<PathBuf> = None;
    for arg in std::env::args_os().skip(1) {
        if arg == "--help" || arg == "-h" {
            println!("usage: pmfedit [PROJECT]\n\nOpens a project folder, or the built-in demo map.");
            return Ok(());
        }
        project_dir = Some(PathBuf::from(arg));
    }
    let (map, project) = match &project_dir {
        Some(dir) => {
            let (p, m) = Project::open(dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
            (m, Some(p))
        }
        None => (sample::demo(), None),
    };
    let options = eframe::NativeOptions {
        renderer: eframe::Renderer::Glow,
        depth_buffer: 24,
        viewport: egui::ViewportBuilder::default().with_title("pmfedit").with_inner_size([1280.0, 800.0]),
        ..Default::default()
    };
    eframe::run_native("pmfedit", options, Box::new(move |cc| Ok(Box::new(pmfedit::app::App::new(cc, map, project)))))
        .map_err(|e| anyhow::anyhow!("could not open the editor window: {e}"))
}
