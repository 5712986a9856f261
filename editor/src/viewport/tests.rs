//! The viewport inside the real app under egui_kittest (no GL context): picking and the tools'
//! pointer handling work without a renderer.

use eframe::egui;
use egui_kittest::Harness;

use crate::app::App;
use crate::command::Command;
use crate::launch::{Document, Launch, Sample};
use crate::selection::Selection;
use crate::tools;

fn harness() -> Harness<'static, App> {
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_eframe(|cc| App::new(cc, &Launch::default(), Document::sample(Sample::Demo)));
    h.run_steps(2);
    h
}

/// A point over the building (the demo's start camera looks at it).
const OVER_BUILDING: egui::Pos2 = egui::pos2(640.0, 430.0);

#[test]
fn place_click_without_gl_is_one_undo_step() {
    let mut h = harness();
    assert!(!h.state().viewport.has_renderer());
    h.hover_at(OVER_BUILDING);
    h.run_steps(1);
    assert!(h.state().viewport.hovered().is_some(), "nothing under the pointer");
    h.drag_at(OVER_BUILDING);
    h.run_steps(1);
    h.drop_at(OVER_BUILDING);
    h.run_steps(2);
    assert!(h.state().state.history.can_undo());
    let before_len = h.state().state.history.len();
    assert_eq!(before_len, 1);
}

#[test]
fn select_drag_then_delete_and_cube_size_keys() {
    let mut h = harness();
    h.state_mut().state.apply(Command::SetTool(tools::select::ID)).unwrap();
    h.hover_at(OVER_BUILDING);
    h.run_steps(1);
    h.drag_at(OVER_BUILDING);
    h.run_steps(1);
    h.hover_at(OVER_BUILDING + egui::vec2(40.0, 10.0));
    h.run_steps(1);
    h.drop_at(OVER_BUILDING + egui::vec2(40.0, 10.0));
    h.run_steps(2);
    assert!(matches!(h.state().state.selection, Selection::Cubes { .. }));
    h.hover_at(OVER_BUILDING);
    h.key_press(egui::Key::Delete);
    h.run_steps(2);
    assert!(h.state().state.history.can_undo());
    let size = h.state().state.cube_log2;
    h.key_press(egui::Key::OpenBracket);
    h.run_steps(2);
    assert_eq!(h.state().state.cube_log2, size - 1);
}

/// The view redraws on its own only for chunks that draw an animated material: the demo's water
/// animates (texture frames and UV scroll), its stone does not, a material the chunk does not
/// use counts for nothing, and water without frames or scroll is still.
#[test]
fn only_chunks_that_draw_an_animated_material_keep_the_view_redrawing() {
    use super::{draws_animated, materials_fx};
    let mut library = pmfedit_core::sample::demo().library;
    let fx = materials_fx(&library);
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(draws_animated(&names(&["stone", "water"]), &library, &fx));
    assert!(!draws_animated(&names(&["stone", "grass"]), &library, &fx));
    assert!(!draws_animated(&names(&["no such material"]), &library, &fx));
    let (id, water) = library.materials().by_name("water").unwrap();
    let mut still = water.clone();
    still.texture_advance_us = 0;
    still.uv_scroll = glam::Vec2::ZERO;
    library.replace(id, still).unwrap();
    assert!(!draws_animated(&names(&["stone", "water"]), &library, &materials_fx(&library)));
}

/// The mesh window: idle workers (none handed out yet, as in an open's first frame, or every job
/// back) take the whole queue; busy ones twice what they finished, within the bounds.
#[test]
fn idle_mesh_workers_take_the_whole_queue() {
    use super::{MESH_JOBS_IN_FLIGHT, MESH_JOBS_IN_FLIGHT_MAX, mesh_window};
    assert_eq!(mesh_window(4096, 0, 0), 4096, "an open's first frame hands every chunk out");
    assert_eq!(mesh_window(10, 0, 0), MESH_JOBS_IN_FLIGHT_MAX, "a small queue all goes");
    assert_eq!(mesh_window(4000, 64, 64), 4000, "every job back: the rest at once");
    assert_eq!(mesh_window(4000, 64, 0), MESH_JOBS_IN_FLIGHT, "busy, nothing back yet");
    assert_eq!(mesh_window(4000, 600, 300), 600, "busy: twice what came back");
    assert_eq!(mesh_window(9000, 3000, 2000), MESH_JOBS_IN_FLIGHT_MAX);
}

/// Frames while the mesh workers work: at least [`super::WORKING_FRAME`] apart, longer when the
/// app is paced, and at least two of the last paint's time (a big map under software GL).
#[test]
fn working_frames_leave_the_workers_two_thirds_of_the_time() {
    use super::{WORKING_FRAME, working_frame_delay};
    use std::time::Duration;
    let ms = Duration::from_millis;
    assert_eq!(working_frame_delay(Duration::ZERO, ms(10)), WORKING_FRAME);
    assert_eq!(working_frame_delay(ms(900), ms(10)), ms(900));
    assert_eq!(working_frame_delay(ms(0), ms(300)), ms(600));
}
