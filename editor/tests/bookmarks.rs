//! egui_kittest: camera bookmarks through the View menu and the Ctrl+Alt / Alt + digit keys.

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use glam::DVec3;

use pmfedit::app::App;
use pmfedit::launch::{Document, Launch, Sample};

fn harness() -> Harness<'static, App> {
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 1000.0))
        .build_eframe(|cc| App::new(cc, &Launch::default(), Document::sample(Sample::Demo)));
    h.run_steps(3);
    h
}

fn eye(h: &Harness<'_, App>) -> DVec3 {
    h.state().viewport.camera.eye
}

fn fly_away(h: &mut Harness<'_, App>) {
    h.state_mut().viewport.camera.eye += DVec3::new(25.0, 3.0, -7.0);
    h.state_mut().viewport.camera.yaw += 1.0;
    h.run_steps(2);
}

#[test]
fn the_shortcuts_store_and_recall_a_bookmark() {
    let mut h = harness();
    let start = h.state().viewport.camera.clone();
    h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::ALT, egui::Key::Num2);
    h.run_steps(2);
    assert_eq!(h.state().viewport.bookmarks.list.len(), 1);
    assert_eq!(h.state().viewport.bookmarks.list[0].slot, Some(2));
    fly_away(&mut h);
    assert_ne!(eye(&h), start.eye);
    // A slot with nothing in it leaves the camera alone; Alt+2 brings the view back.
    h.key_press_modifiers(egui::Modifiers::ALT, egui::Key::Num5);
    h.run_steps(2);
    assert_ne!(eye(&h), start.eye);
    let tool = h.state().state.tool;
    h.key_press_modifiers(egui::Modifiers::ALT, egui::Key::Num2);
    h.run_steps(2);
    let cam = &h.state().viewport.camera;
    assert_eq!((cam.eye, cam.yaw, cam.pitch), (start.eye, start.yaw, start.pitch));
    assert_eq!(h.state().state.tool, tool, "Alt+digit does not pick a tool");
}

#[test]
fn the_view_menu_saves_lists_and_jumps_to_a_bookmark() {
    let mut h = harness();
    let start = eye(&h);
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Bookmarks").click();
    h.run_steps(2);
    h.get_by_label_contains("Save current view").click();
    h.run_steps(2);
    let list = &h.state().viewport.bookmarks.list;
    assert_eq!(list.len(), 1);
    assert_eq!((list[0].name.as_str(), list[0].slot), ("View 1", Some(1)));
    fly_away(&mut h);
    if h.query_by_label("View 1 Alt+1").is_none() {
        h.get_by_label("View").click();
        h.run_steps(2);
        h.get_by_label("Bookmarks").click();
        h.run_steps(2);
    }
    h.get_by_label("View 1 Alt+1").click();
    h.run_steps(2);
    assert_eq!(eye(&h), start, "jumped back");
}
