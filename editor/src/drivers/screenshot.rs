//! `--screenshot OUT.png`: renders at least the asked number of frames and until the first load is
//! on screen, then saves the window as a PNG and closes it. The view can first be set up from
//! the command line ([`ScreenshotRun`]): the visibility view of a pinned point (seen from an
//! eye), or an object selected and framed so its gizmo shows. The pointer is ignored, so no
//! hover highlight lands in the picture.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use eframe::egui;

use super::{GIVE_UP_S, loaded, save_png};
use crate::app::{App, Driver, DriverStatus};
use crate::command::Command;
use crate::launch::ScreenshotRun;
use crate::selection::Selection;
use crate::shading::Shading;

/// A running `--screenshot`.
pub struct Screenshot {
    run: ScreenshotRun,
    frame: u32,
    started: Instant,
    /// Frames still to paint before the capture, once everything is loaded.
    settling: Option<u32>,
    requested: bool,
    shot: Arc<Mutex<Option<Arc<egui::ColorImage>>>>,
}

impl Screenshot {
    /// The capture `run` asks for.
    pub fn new(run: ScreenshotRun) -> Self {
        Self { run, frame: 0, started: Instant::now(), settling: None, requested: false, shot: Arc::default() }
    }

    /// The first frame: the view the command line asked for.
    fn set_up_view(&self, app: &mut App) {
        if let Some(point) = self.run.visibility_point {
            app.viewport.shading = Shading::Visibility;
            app.viewport.pin_visibility(Some(point));
            if let Some(eye) = self.run.eye {
                app.viewport.camera.look_at(eye, point);
            }
        }
        let Some(spec) = &self.run.select else { return };
        let level = app.state.level;
        let Some(objects) = app.state.map.levels.get(level).map(|l| &l.objects) else { return };
        let Some(obj) = spec.find(objects) else {
            eprintln!("pmfedit: --select: no {:?} named {:?} on level {level}", spec.kind, spec.name);
            return;
        };
        if let Some(p) = obj.position(objects) {
            app.viewport.camera.frame(p.as_dvec3(), 14.0);
        }
        app.commands.push(Command::Select(Selection::of_object(level, obj)));
        app.commands.push(Command::SetTool(crate::tools::object::ID));
    }
}

/// Pointer input (a screenshot shows no hover).
fn is_pointer(e: &egui::Event) -> bool {
    matches!(
        e,
        egui::Event::PointerMoved(_)
            | egui::Event::MouseMoved(_)
            | egui::Event::PointerButton { .. }
            | egui::Event::PointerGone
            | egui::Event::MouseWheel { .. }
            | egui::Event::Touch { .. }
    )
}

impl Driver for Screenshot {
    fn input(&mut self, raw: &mut egui::RawInput) {
        raw.events.retain(|e| !is_pointer(e));
    }

    fn frame(&mut self, app: &mut App, ctx: &egui::Context) -> DriverStatus {
        self.frame += 1;
        ctx.request_repaint();
        if self.frame == 1 {
            self.set_up_view(app);
        }
        if self.started.elapsed().as_secs() > GIVE_UP_S {
            eprintln!("pmfedit: gave up after {GIVE_UP_S} s (frame {})", self.frame);
            app.close_without_asking(ctx);
            return DriverStatus::Finished;
        }
        let path = &self.run.out;
        if let Some(img) = self.shot.lock().unwrap_or_else(|e| e.into_inner()).take() {
            match save_png(&img, path) {
                Ok(()) => println!("wrote {} ({}×{})", path.display(), img.size[0], img.size[1]),
                Err(e) => eprintln!("pmfedit: {e}"),
            }
            app.close_without_asking(ctx);
            return DriverStatus::Finished;
        }
        // Without a renderer (tests) nothing is uploaded: only the frame count matters.
        let ready = loaded(app) || !app.viewport.has_renderer();
        if self.requested || self.frame < self.run.frames || !ready {
            return DriverStatus::Running;
        }
        // Two more frames so the last uploads are painted.
        match self.settling {
            None => self.settling = Some(2),
            Some(0) => {
                let (shot, c) = (self.shot.clone(), ctx.clone());
                ctx.request_screenshot(move |img| {
                    *shot.lock().unwrap_or_else(|e| e.into_inner()) = Some(img);
                    c.request_repaint();
                });
                self.requested = true;
            }
            Some(n) => self.settling = Some(n - 1),
        }
        DriverStatus::Running
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_screenshot_run_drops_pointer_input_and_keeps_the_rest() {
        let mut s = Screenshot::new(ScreenshotRun::new("x.png".into(), 1));
        let mut raw = egui::RawInput {
            events: vec![
                egui::Event::PointerMoved(egui::pos2(10.0, 10.0)),
                egui::Event::Text("a".into()),
                egui::Event::PointerButton {
                    pos: egui::pos2(10.0, 10.0),
                    button: egui::PointerButton::Primary,
                    pressed: true,
                    modifiers: egui::Modifiers::NONE,
                },
                egui::Event::PointerGone,
            ],
            ..Default::default()
        };
        s.input(&mut raw);
        assert_eq!(raw.events, vec![egui::Event::Text("a".into())]);
    }
}
