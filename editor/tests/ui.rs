//! egui_kittest tests of the real application (no GPU): the app is built with
//! `Harness::builder().build_eframe(|cc| App::new(cc, sample::demo(), None))`, driven by the
//! labels the user sees, and the document is checked through `harness.state()`.

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use pmfedit::app::App;
use pmfedit::tools::ToolKind;
use pmfedit_core::sample;

/// The demo map in a 1400×1000 window. Background bakes keep asking for repaints, so tests step
/// a fixed number of frames instead of `run()` (which waits for the UI to go idle).
fn harness() -> Harness<'static, App> {
    let mut h =
        Harness::builder().with_size(egui::vec2(1400.0, 1000.0)).build_eframe(|cc| App::new(cc, sample::demo(), None));
    h.run_steps(3);
    h
}

fn frames(h: &mut Harness<'_, App>) {
    h.run_steps(3);
}

/// Replaces the text of a (focused) text field: select all, type, Enter.
fn retype(h: &mut Harness<'_, App>, label: &str, text: &str) {
    h.get_by_label(label).focus();
    frames(h);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.get_by_label(label).type_text(text);
    frames(h);
    h.key_press(egui::Key::Enter);
    frames(h);
}

#[test]
fn a_material_created_through_its_form_appears_in_the_library() {
    let mut h = harness();
    let before = h.state().state.map.library.materials().len();
    h.get_by_label("Materials").click();
    frames(&mut h);
    h.get_by_label("Add material").click();
    frames(&mut h);
    assert_eq!(h.state().state.map.library.materials().len(), before + 1);
    retype(&mut h, "Name", "brick");
    let lib = &h.state().state.map.library;
    assert_eq!(lib.materials().len(), before + 1, "renamed, not added again");
    let (_, m) = lib.materials().by_name("brick").expect("the new material is named brick");
    assert_eq!(m.color, [255, 255, 255]);
    // The list shows it, and its form edits it: a field change is one ReplaceLibraryItem.
    h.get_by_label("brick");
    h.get_by_label("Is transparent").click();
    frames(&mut h);
    let (_, m) = h.state().state.map.library.materials().by_name("brick").unwrap();
    assert!(m.transparent);
    let names: Vec<String> = h.state().state.history.entries().map(|e| e.name.to_owned()).collect();
    assert_eq!(names.len(), 3, "add, rename, replace: {names:?}");
}

#[test]
fn a_weather_field_change_is_undone() {
    let mut h = harness();
    h.get_by_label("Environments").click();
    frames(&mut h);
    h.get_by_label("Weather").click();
    frames(&mut h);
    let breeze = |h: &Harness<'_, App>| {
        let lib = &h.state().state.map.library;
        lib.weather_environments().by_name("breeze").expect("demo has breeze").1.wind
    };
    let old = breeze(&h);
    h.get_by_label("Wind X").set_value_accesskit(7.5);
    frames(&mut h);
    assert_eq!(breeze(&h).x, 7.5);
    assert_eq!(breeze(&h).y, old.y);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    frames(&mut h);
    assert_eq!(breeze(&h), old, "undo brings the value back");
    h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::Z);
    frames(&mut h);
    assert_eq!(breeze(&h).x, 7.5, "redo applies it again");
}

#[test]
fn clicking_a_toolbar_label_picks_the_tool() {
    let mut h = harness();
    assert_eq!(h.state().state.tool, ToolKind::Place);
    h.get_by_label("2 Erase").click();
    frames(&mut h);
    assert_eq!(h.state().state.tool, ToolKind::Erase);
    h.get_by_label("4 Box").click();
    frames(&mut h);
    assert_eq!(h.state().state.tool, ToolKind::Box);
}

#[test]
fn an_overlong_gamemode_is_refused_with_the_reason_and_a_valid_one_is_accepted() {
    let mut h = harness();
    h.get_by_label("Map info").click();
    frames(&mut h);
    let before = h.state().state.map.meta.gamemodes.clone();
    h.get_by_label("New gamemode").focus();
    frames(&mut h);
    h.get_by_label("New gamemode").type_text("capture_the_flag"); // 16 bytes
    frames(&mut h);
    h.get_by_label("Add gamemode").click();
    frames(&mut h);
    assert_eq!(h.state().state.map.meta.gamemodes, before, "refused");
    assert!(h.query_by_label_contains("longer than 15 bytes").is_some(), "the reason is shown");
    assert!(h.state().state.history.is_empty());

    retype(&mut h, "New gamemode", "ctf");
    let modes = &h.state().state.map.meta.gamemodes;
    assert_eq!(modes.last().map(String::as_str), Some("ctf"), "{modes:?}");
    assert_eq!(modes.len(), before.len() + 1);
    assert!(h.query_by_label_contains("longer than 15 bytes").is_none(), "the error is gone");
}

#[test]
fn the_history_panel_lists_steps_and_jumps_to_a_clicked_one() {
    let mut h = harness();
    h.get_by_label("Add light").click();
    frames(&mut h);
    h.get_by_label("Materials").click();
    frames(&mut h);
    h.get_by_label("Add material").click();
    frames(&mut h);
    let names: Vec<String> = h.state().state.history.entries().map(|e| e.name.to_owned()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert_ne!(names[0], names[1]);
    h.get_by_label("History").click();
    frames(&mut h);
    for n in &names {
        h.get_by_label(n);
    }
    let lights = h.state().state.map.levels[0].objects.lights().len();
    let materials = h.state().state.map.library.materials().len();
    h.get_by_label(&names[0]).click();
    frames(&mut h);
    let s = &h.state().state;
    assert_eq!(s.history.head(), 1);
    assert_eq!(s.map.library.materials().len(), materials - 1, "the material step is undone");
    assert_eq!(s.map.levels[0].objects.lights().len(), lights, "the light step stays");
    h.get_by_label("(start)").click();
    frames(&mut h);
    assert_eq!(h.state().state.history.head(), 0);
    assert_eq!(h.state().state.map.levels[0].objects.lights().len(), lights - 1);
}

#[test]
fn selecting_a_light_in_the_outliner_opens_its_inspector_and_frames_it() {
    let mut h = harness();
    let (id, light) = {
        let lights = h.state().state.map.levels[0].objects.lights();
        let (id, l) = lights.iter().find(|(_, l)| !l.name.is_empty()).expect("demo has named lights");
        (id, l.clone())
    };
    h.get_by_label(&light.name).click();
    frames(&mut h);
    assert_eq!(h.state().state.selection, pmfedit::state::Selection::Light { level: 0, id });
    let target = h.state().state.camera_request.map(|(t, _)| t);
    assert_eq!(target, Some(light.position.as_dvec3()));
    h.get_by_label("Intensity").set_value_accesskit(3.0);
    frames(&mut h);
    assert_eq!(h.state().state.map.levels[0].objects.lights().get(id).unwrap().intensity, 3.0);
}
