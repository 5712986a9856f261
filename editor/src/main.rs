//! `pmfedit`: the PlatinumSrc map editor.
//!
//! For now a window that opens and says what it is; the real application arrives with the editor issue.

use eframe::egui;

fn main() -> anyhow::Result<()> {
    let options = eframe::NativeOptions {
        renderer: eframe::Renderer::Glow,
        depth_buffer: 24,
        viewport: egui::ViewportBuilder::default().with_title("pmfedit").with_inner_size([1024.0, 640.0]),
        ..Default::default()
    };
    eframe::run_native("pmfedit", options, Box::new(|_cc| Ok(Box::new(App))))
        .map_err(|e| anyhow::anyhow!("could not open the editor window: {e}"))
}

#[derive(Default)]
struct App;

impl eframe::App for App {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        egui::CentralPanel::default().show(ui, |ui| {
            ui.heading("pmfedit");
            ui.label(format!("PlatinumSrc map editor {} — the window is open.", env!("CARGO_PKG_VERSION")));
            ui.label("The map editing tools are being built; `pmfc` already reads and inspects PMF files.");
        });
    }
}
