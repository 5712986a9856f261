//! egui_kittest tests of the real application (no GPU): the app is built with
//! `Harness::builder().build_eframe(|cc| App::new(cc, &launch, document))` on the demo, driven by
//! the labels the user sees, and the document is checked through `harness.state()`.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};

use pmfedit::app::App;
use pmfedit::launch::{Document, Launch, Sample};
use pmfedit::tools;
use pmfedit_core::sample;

/// The demo map in a 1400×1000 window. Background bakes keep asking for repaints, so tests step
/// a fixed number of frames instead of `run()` (which waits for the UI to go idle).
fn harness() -> Harness<'static, App> {
    harness_on(Document::sample(Sample::Demo))
}

/// What `main` launches without arguments: the shared asset folder resolved once.
fn launch() -> Launch {
    Launch { assets: pmfedit::watch::assets_dir(), ..Launch::default() }
}

/// `document` in a 1400×1000 window.
fn harness_on(document: Document) -> Harness<'static, App> {
    let mut h =
        Harness::builder().with_size(egui::vec2(1400.0, 1000.0)).build_eframe(|cc| App::new(cc, &launch(), document));
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

/// [`retype`] for the number box of a slider or grid row whose other widget has the same name.
fn retype_number(h: &mut Harness<'_, App>, label: &str, text: &str) {
    let role = egui::accesskit::Role::SpinButton;
    h.get_by_role_and_label(role, label).focus();
    frames(h);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.get_by_role_and_label(role, label).type_text(text);
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
    assert_eq!(h.state().state.tool, tools::place::ID);
    h.get_by_label("2 Erase").click();
    frames(&mut h);
    assert_eq!(h.state().state.tool, tools::erase::ID);
    h.get_by_label("4 Box").click();
    frames(&mut h);
    assert_eq!(h.state().state.tool, tools::box_tool::ID);
}

/// A digit key event picks a tool only when the event itself carries no modifiers: a fast
/// Ctrl+digit tap (the frame's modifier state already released) switches the shading instead,
/// Alt+digit jumps to a bookmark.
#[test]
fn a_tool_is_picked_by_a_key_event_without_modifiers_only() {
    use pmfedit::viewport::render::Shading;
    let mut h = harness();
    let key = |key: egui::Key, modifiers: egui::Modifiers| egui::Event::Key {
        key,
        physical_key: None,
        pressed: true,
        repeat: false,
        modifiers,
    };
    h.event(key(egui::Key::Num2, egui::Modifiers::NONE));
    frames(&mut h);
    assert_eq!(h.state().state.tool, tools::erase::ID);
    // Only the event says Ctrl: no ModifiersChanged around it.
    h.event(key(egui::Key::Num3, egui::Modifiers::COMMAND));
    frames(&mut h);
    assert_eq!(h.state().state.tool, tools::erase::ID, "Ctrl+3 is not the Paint tool");
    assert_eq!(h.state().viewport.shading, Shading::Wireframe, "Ctrl+3 is the wireframe view");
    h.event(key(egui::Key::Num4, egui::Modifiers::ALT));
    frames(&mut h);
    assert_eq!(h.state().state.tool, tools::erase::ID, "Alt+4 is a bookmark");
    h.key_press(egui::Key::Num8);
    frames(&mut h);
    assert_eq!(h.state().state.tool, tools::object::ID);
}

/// Each toolbar button shows its tool's tooltip from the command table on hover.
#[test]
fn the_toolbar_buttons_show_the_command_tables_tooltips() {
    let mut h = harness();
    h.ctx.all_styles_mut(|s| s.interaction.tooltip_delay = 0.0);
    let entries: Vec<_> = pmfedit::ui_command::COMMANDS.iter().filter(|e| e.tool.is_some()).collect();
    assert_eq!(entries.len(), 9);
    for e in entries {
        let button = format!("{} {}", e.keys_text(), e.label);
        assert!(h.query_by_label(e.tooltip).is_none(), "{} shown before hovering", e.label);
        h.get_by_label(&button).hover();
        frames(&mut h);
        h.get_by_label(e.tooltip);
    }
}

/// Esc during a Box drag drops the box: the release applies nothing and leaves no undo step.
#[test]
fn esc_cancels_a_box_drag_without_an_undo_entry() {
    let mut h = harness();
    h.get_by_label("4 Box").click();
    frames(&mut h);
    let (at, _) = pick_at_viewport_centre(&mut h);
    let before = h.state().state.map.snapshot();
    h.drag_at(at);
    frames(&mut h);
    h.hover_at(at + egui::vec2(30.0, 20.0));
    frames(&mut h);
    assert!(h.state().tool().is_some_and(|t| t.dragging()), "the box drag is open");
    h.key_press(egui::Key::Escape);
    frames(&mut h);
    assert!(!h.state().tool().is_some_and(|t| t.dragging()), "Esc dropped the box");
    h.drop_at(at + egui::vec2(30.0, 20.0));
    frames(&mut h);
    assert!(h.state().state.history.is_empty(), "{:?}", h.state().state.history.undo_name());
    assert!(h.state().state.map.content_eq(&before));
    // Without Esc the same drag extrudes one layer: one undo step.
    h.drag_at(at);
    frames(&mut h);
    h.hover_at(at + egui::vec2(30.0, 20.0));
    frames(&mut h);
    h.drop_at(at + egui::vec2(30.0, 20.0));
    frames(&mut h);
    assert_eq!(h.state().state.history.len(), 1);
}

/// F1 opens a window listing every entry of the command table: keys, command and what it does.
#[test]
fn the_f1_window_lists_every_command_table_entry() {
    let mut h = harness();
    let rows = pmfedit::ui_command::rows();
    assert!(h.query_by_label(&rows[0].what).is_none(), "the list is not shown before F1");
    h.key_press(egui::Key::F1);
    frames(&mut h);
    for r in &rows {
        assert!(h.query_all_by_label(&r.what).next().is_some(), "{} is not listed", r.what);
        assert!(h.query_all_by_label(&r.command).next().is_some(), "{} is not listed", r.command);
        let keys = r.keys_text();
        if !keys.is_empty() {
            assert!(h.query_all_by_label(&keys).next().is_some(), "{keys} is not listed");
        }
    }
    h.key_press(egui::Key::F1);
    frames(&mut h);
    assert!(h.query_by_label(&rows[0].what).is_none(), "F1 again closes it");
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
    assert_eq!(h.state().state.selection, pmfedit::selection::Selection::Light { level: 0, id });
    // The viewport takes the frame request: its orbit pivot is now the light.
    assert!(h.state().state.camera_request.is_none(), "the viewport did not take the frame request");
    let pivot = h.state().viewport.camera.pivot();
    assert!(pivot.distance(light.position.as_dvec3()) < 1e-6, "camera pivot {pivot:?}, light at {:?}", light.position);
    h.get_by_label("Intensity").set_value_accesskit(3.0);
    frames(&mut h);
    assert_eq!(h.state().state.map.levels[0].objects.lights().get(id).unwrap().intensity, 3.0);
}

/// Every tab, every library and environment kind, and the inspector of every demo entity type
/// draw without missing glyphs, and every input widget has an accessible name.
#[test]
fn every_panel_draws_and_names_its_widgets() {
    let mut h = harness();
    for tab in ["History", "Bake", "Outliner"] {
        h.get_by_label(tab).click();
        frames(&mut h);
        h.check_accessibility();
    }
    h.get_by_label("Materials").click();
    frames(&mut h);
    for kind in ["Physics", "Sound", "Render"] {
        h.get_by_label(kind).click();
        frames(&mut h);
        h.check_accessibility();
    }
    // The water material shows the liquid (wave) fields.
    h.get_by_label("water").click();
    frames(&mut h);
    h.get_by_label("Wave scale");
    h.check_accessibility();
    h.get_by_label("Environments").click();
    frames(&mut h);
    for kind in ["Sound", "Weather", "Sky", "Gravity"] {
        h.get_by_label(kind).click();
        frames(&mut h);
        h.check_accessibility();
        if kind == "Sky" {
            h.get_by_label("+X skybox");
            h.get_by_label("Bottom cloud layer");
        }
    }
    for tab in ["Level", "Map info"] {
        h.get_by_label(tab).click();
        frames(&mut h);
        h.check_accessibility();
    }
    let entities: Vec<_> = h.state().state.map.levels[0].objects.entities().ids().collect();
    assert!(entities.len() >= 5);
    for id in entities {
        h.state_mut()
            .commands
            .push(pmfedit::command::Command::Select(pmfedit::selection::Selection::Entity { level: 0, id }));
        frames(&mut h);
        h.get_by_label("Add property");
        h.check_accessibility();
    }
}

#[test]
fn deleting_a_material_in_use_asks_for_a_replacement() {
    let mut h = harness();
    let lib = &h.state().state.map.library;
    let (stone, _) = lib.materials().by_name("stone").unwrap();
    let (dirt, _) = lib.materials().by_name("dirt").unwrap();
    assert!(h.state().state.map.material_in_use(stone));
    h.get_by_label("stone").click();
    frames(&mut h);
    h.get_by_label("Delete").click();
    frames(&mut h);
    assert!(h.state().state.map.library.materials().contains(stone), "not deleted without a replacement");
    h.get_by_label_contains("Pick a replacement");
    // "dirt" is in the material list and, once the combo is open, among the replacements.
    let in_list = h.get_by_label("dirt").rect();
    h.get_by_label("Replace with").click();
    frames(&mut h);
    h.get_all_by_label("dirt").find(|n| n.rect() != in_list).expect("dirt is offered").click();
    frames(&mut h);
    h.get_by_label("Delete and replace").click();
    frames(&mut h);
    let map = &h.state().state.map;
    assert!(!map.library.materials().contains(stone));
    assert!(map.material_in_use(dirt));
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    frames(&mut h);
    assert!(h.state().state.map.material_in_use(stone), "undo puts the cubes back");
}

#[test]
fn dragging_a_value_is_one_undo_step() {
    let mut h = harness();
    let (id, name, before) = {
        let (id, l) = h.state().state.map.levels[0].objects.lights().iter().find(|(_, l)| !l.name.is_empty()).unwrap();
        (id, l.name.clone(), l.range)
    };
    h.get_by_label(&name).click();
    frames(&mut h);
    let start = h.get_by_label("Range").rect().center();
    h.drag_at(start);
    h.run_steps(2);
    for dx in [10.0, 20.0, 30.0, 40.0] {
        h.hover_at(start + egui::vec2(dx, 0.0));
        h.run_steps(2);
    }
    h.drop_at(start + egui::vec2(40.0, 0.0));
    frames(&mut h);
    let s = &h.state().state;
    let after = s.map.levels[0].objects.lights().get(id).unwrap().range;
    assert!(after > before, "the drag changed the range ({before} -> {after})");
    let entries: Vec<_> = s.history.entries().map(|e| (e.name.to_owned(), e.steps)).collect();
    assert_eq!(entries.len(), 1, "the frames of the drag merged into one step: {entries:?}");
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    frames(&mut h);
    assert_eq!(h.state().state.map.levels[0].objects.lights().get(id).unwrap().range, before);
}

/// Settle-then-bake through the form: dragging a light's range holds full bakes back (drafts
/// only, `state.rs`'s `a_dragged_material_colour_bakes_drafts_until_it_settles` checks what is
/// baked), releasing the drag settles it.
#[test]
fn a_dragged_value_bakes_drafts_until_it_is_released() {
    let mut h = harness();
    h.state_mut().state.settle_after = Duration::from_secs(3600);
    let name = {
        let (_, l) = h.state().state.map.levels[0].objects.lights().iter().find(|(_, l)| !l.name.is_empty()).unwrap();
        l.name.clone()
    };
    h.get_by_label(&name).click();
    frames(&mut h);
    assert!(!h.state().state.bake.holding());
    let start = h.get_by_label("Range").rect().center();
    h.drag_at(start);
    h.run_steps(2);
    for dx in [10.0, 20.0, 30.0] {
        h.hover_at(start + egui::vec2(dx, 0.0));
        h.run_steps(2);
    }
    let s = &h.state().state;
    assert!(s.bake.holding(), "full bakes are held back mid-drag");
    h.drop_at(start + egui::vec2(30.0, 0.0));
    frames(&mut h);
    let s = &h.state().state;
    assert!(!s.bake.holding(), "the release settles the value");
}

/// A small Model 3D voxel model from the shared test data.
const VOXEL_M3D: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/testdata/m3d/voxel.m3d");

/// File → Import → Model 3D, then the path typed into the prompt: the import starts on its
/// worker thread.
fn import_m3d_through_the_menu(h: &mut Harness<'_, App>, file: &str) {
    h.get_by_label("File").click();
    frames(h);
    h.get_by_label("Import").click();
    frames(h);
    h.get_by_label("Model 3D (.m3d)…").click();
    frames(h);
    retype(h, "Path", file);
}

/// Runs frames until the running import is taken (bounded: a minute, 20 000 frames).
fn frames_until_the_import_is_done(h: &mut Harness<'_, App>) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    for _ in 0..20_000 {
        if h.state().import.is_none() {
            frames(h);
            return;
        }
        assert!(std::time::Instant::now() < deadline, "the import did not finish in a minute");
        h.step();
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("the import did not finish in 20 000 frames");
}

/// Makes imports wait for the gate: each import blocks until the test sends on the returned
/// sender, then runs the real importer and reports on the returned receiver that it returned.
fn gate_imports(h: &mut Harness<'_, App>) -> (Sender<()>, Receiver<()>) {
    let (open_tx, open_rx) = channel::<()>();
    let (done_tx, done_rx) = channel::<()>();
    let (open_rx, done_tx) = (Mutex::new(open_rx), Mutex::new(done_tx));
    h.state_mut().importer = Arc::new(move |map, request, control| {
        let opened = open_rx.lock().unwrap().recv_timeout(Duration::from_secs(60));
        assert!(opened.is_ok(), "the test never opened the gate");
        let result = pmfedit::files::import(map, request, control);
        let _ = done_tx.lock().unwrap().send(());
        result
    });
    (open_tx, done_rx)
}

/// The status bar's message.
fn status(h: &Harness<'_, App>) -> String {
    h.state().state.status.as_ref().map(|(m, _)| m.clone()).unwrap_or_default()
}

#[test]
fn an_import_through_the_file_menu_is_one_undo_step() {
    let mut h = harness();
    let before = h.state().state.map.snapshot();
    import_m3d_through_the_menu(&mut h, VOXEL_M3D);
    frames_until_the_import_is_done(&mut h);
    let state = &h.state().state;
    assert_eq!(state.history.undo_name(), Some("Import voxel.m3d"), "the import is an undo step");
    assert!(state.map.library.materials().len() > before.library.materials().len(), "the import created materials");
    assert!(!state.map.content_eq(&before));
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    frames(&mut h);
    assert!(h.state().state.map.content_eq(&before), "undo takes the whole import back");
    h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::Z);
    frames(&mut h);
    assert!(!h.state().state.map.content_eq(&before), "redo applies it again");
}

#[test]
fn a_running_import_shows_in_the_status_bar_refuses_a_second_one_and_cancel_drops_it() {
    let mut h = harness();
    let (gate, done) = gate_imports(&mut h);
    let before = h.state().state.map.snapshot();
    import_m3d_through_the_menu(&mut h, VOXEL_M3D);
    assert!(h.state().import.is_some(), "the import runs");
    h.get_by_label_contains("Importing voxel.m3d…");
    // The UI keeps running meanwhile: a second import is refused, the first one goes on.
    import_m3d_through_the_menu(&mut h, VOXEL_M3D);
    assert!(status(&h).contains("voxel.m3d is still importing"), "{}", status(&h));
    assert!(h.state().import.is_some());

    h.get_by_label("Cancel import").click();
    frames(&mut h);
    assert!(h.state().import.is_none());
    assert_eq!(status(&h), "Import of voxel.m3d cancelled");
    assert!(h.query_by_label_contains("Importing voxel.m3d").is_none(), "the status bar no longer shows it");
    // The importer finishes after the cancel: its result is dropped.
    gate.send(()).unwrap();
    done.recv_timeout(Duration::from_secs(60)).expect("the importer returned");
    frames(&mut h);
    let state = &h.state().state;
    assert!(state.history.is_empty(), "no undo step: {:?}", state.history.undo_name());
    assert!(state.map.content_eq(&before), "the map is unchanged");
    assert_eq!(status(&h), "Import of voxel.m3d cancelled");
}

#[test]
fn an_import_that_finishes_after_an_edit_is_refused() {
    let mut h = harness();
    let (gate, _done) = gate_imports(&mut h);
    let materials = h.state().state.map.library.materials().len();
    import_m3d_through_the_menu(&mut h, VOXEL_M3D);
    assert!(h.state().import.is_some());
    h.get_by_label("Add light").click();
    frames(&mut h);
    let lights = h.state().state.map.levels[0].objects.lights().len();
    let edit = h.state().state.history.undo_name().map(str::to_owned);
    assert!(edit.is_some(), "the edit went through while the import runs");
    gate.send(()).unwrap();
    frames_until_the_import_is_done(&mut h);
    let state = &h.state().state;
    assert_eq!(status(&h), "The map changed while importing voxel.m3d; import again");
    assert_eq!(state.history.len(), 1, "only the edit is in the history");
    assert_eq!(state.history.undo_name().map(str::to_owned), edit);
    assert_eq!(state.map.library.materials().len(), materials, "no imported materials");
    assert_eq!(state.map.levels[0].objects.lights().len(), lights, "the edit stays");
}

#[test]
fn a_broken_import_file_shows_the_error_with_the_file_and_offset() {
    let mut h = harness();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.m3d");
    // A real model cut short: the reader stops inside its compressed payload.
    let bytes = std::fs::read(VOXEL_M3D).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    import_m3d_through_the_menu(&mut h, file.to_str().unwrap());
    frames_until_the_import_is_done(&mut h);
    let msg = status(&h);
    assert!(msg.starts_with("Import failed: broken.m3d: "), "{msg}");
    assert!(msg.contains("byte"), "the message names the byte offset: {msg}");
    h.get_by_label(&msg);
    assert!(h.state().state.history.is_empty());
    // A missing file names the path.
    let missing = dir.path().join("missing.m3d");
    import_m3d_through_the_menu(&mut h, missing.to_str().unwrap());
    frames_until_the_import_is_done(&mut h);
    let msg = status(&h);
    assert!(msg.starts_with(&format!("Import failed: {}: ", missing.display())), "{msg}");
}

/// The `--walkthrough` session (CI's screenshot run) played without a GPU: every tool, the
/// material and environment forms, a light, undo all, redo all, save, reopen and export, all
/// through the same code paths; the exported file must read back.
#[test]
fn the_walkthrough_session_builds_saves_reopens_and_exports() {
    use pmfedit::walkthrough::Walkthrough;
    use std::{cell::RefCell, rc::Rc};
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness();
    let session = Rc::new(RefCell::new(Walkthrough::new(dir.path().to_owned())));
    h.state_mut().set_driver(Box::new(session.clone()));
    let deadline = std::time::Instant::now() + Duration::from_secs(1200);
    while !session.borrow().is_finished() {
        assert!(std::time::Instant::now() < deadline, "the walkthrough did not finish in 20 minutes");
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    let w = session.borrow();
    assert!(w.failure.is_none(), "{:?}", w.failure);
    assert_eq!(w.outcome().map(|o| o.ok()), Some(Some(0)), "finished, no screenshots without a renderer");
    assert!(w.written.is_empty(), "no renderer, no screenshots");
    // The demo part: the saved project has the edits (the blue wood, the orange light).
    let demo_dir = dir.path().join("project");
    let (_, map) = pmfedit_core::project::Project::open(&demo_dir).unwrap();
    let (_, wood) = map.library.materials().by_name("wood").unwrap();
    assert_eq!(wood.color, [70, 120, 255]);
    assert!(map.levels[0].objects.lights().iter().any(|(_, l)| l.color == [255, 140, 30]));
    // What the tools built, read back from the saved map (world positions, see walkthrough.rs).
    let level = &map.levels[0];
    let material_at = |x: f64, y: f64, z: f64| {
        let (cube, _) = level.get(level.frame().lattice_from_world(glam::DVec3::new(x, y, z))).unwrap();
        cube.is_solid().then(|| {
            let m = cube.face_material(pmfedit_core::map::coords::Face::PosY).unwrap();
            map.library.materials().get(m).unwrap().name.clone()
        })
    };
    assert_eq!(material_at(-7.5, 0.5, -13.5).as_deref(), Some("wood"), "the placed column");
    assert_eq!(material_at(-7.5, 2.5, -13.5), None, "the erased top of the column");
    assert_eq!(material_at(-2.5, 0.5, -11.5).as_deref(), Some("stone"), "the extruded block");
    assert_eq!(material_at(-2.5, 1.5, -11.5), None, "the carved pit");
    assert_eq!(material_at(-2.5, 2.5, -11.5), None, "the carved pit");
    assert_eq!(material_at(-4.5, 2.5, -9.5).as_deref(), Some("sand"), "the cube painted whole");
    assert_eq!(material_at(-2.5, 3.5, -13.5).as_deref(), Some("stone"), "the duplicated row");
    let names = &w.history_names;
    for step in ["Push corner", "Paint material sand", "Set path attributes", "Edit material wood", "Add light"] {
        assert!(names.iter().any(|n| n.starts_with(step)), "no {step:?} step in {names:?}");
    }
    let bytes = std::fs::read(dir.path().join("walkthrough.pmf")).unwrap();
    let file = pmfedit_core::format::pmf::read(&bytes).unwrap();
    assert_eq!(file.levels.len(), 1);
    // The export is exactly a full compile of the reopened map (incremental == full, as the
    // editor runs it) with its resources embedded as a build does.
    let settings = pmfedit_bake::compile::CompileSettings {
        timestamp: file.header.creation_time,
        ..pmfedit_bake::compile::CompileSettings::default()
    };
    let mut full = pmfedit_bake::compile::compile_full(&map, &settings).unwrap();
    let roots = pmfedit_bake::export::resource_roots(Some(&demo_dir), pmfedit::watch::assets_dir());
    pmfedit_bake::resources::embed_resources(&mut full, &roots, &[]).unwrap();
    let full = pmfedit_core::format::pmf::write(&full);
    assert!(full.unwrap() == bytes, "the walkthrough's export differs from a full compile");

    // The house, built from an empty map: floor, walls with the doorway between the rooms, the
    // roof, the light inside; its export is what pmfc build writes for the saved project.
    let state = &h.state().state;
    assert!(!state.is_dirty(), "the house was saved");
    let solid = |x: f64, y: f64, z: f64| {
        let level = &state.map.levels[0];
        level.get(level.frame().lattice_from_world(glam::DVec3::new(x, y, z))).is_ok_and(|(c, _)| c.is_solid())
    };
    assert!(solid(3.5, 0.5, 3.5), "the floor");
    assert!(solid(0.5, 2.5, 3.5) && solid(11.5, 3.5, 3.5) && solid(5.5, 1.5, 0.5), "the outer walls");
    assert!(solid(6.5, 1.5, 1.5) && solid(6.5, 3.5, 3.5), "the partition and the lintel");
    assert!(!solid(6.5, 1.5, 3.5) && !solid(6.5, 2.5, 4.5), "the doorway");
    assert!(!solid(3.5, 1.5, 3.5) && !solid(8.5, 2.5, 4.5), "the rooms");
    assert!(solid(-0.5, 4.5, -0.5) && solid(12.5, 4.5, 8.5), "the roof");
    let lights = state.map.levels[0].objects.lights();
    assert!(lights.iter().any(|(_, l)| (l.position.as_dvec3() - glam::DVec3::new(3.5, 2.5, 4.5)).length() < 1.0));
    let house = std::fs::read(dir.path().join("house.pmf")).unwrap();
    let expected = pmfc_build_bytes(&dir.path().join("house"), &dir.path().join("house-pmfc.pmf"), 1_700_000_000);
    assert!(house == expected, "the house's export differs from pmfc build");
}

#[test]
fn a_texture_picked_from_the_assets_goes_into_the_material() {
    let mut h = harness();
    h.get_by_label("Materials").click();
    frames(&mut h);
    h.get_by_label("grass").click();
    frames(&mut h);
    h.get_by_label("From the assets").click();
    frames(&mut h);
    h.get_by_label("textures/stone.png").click();
    frames(&mut h);
    let (_, grass) = h.state().state.map.library.materials().by_name("grass").unwrap();
    assert_eq!(grass.texture, "textures/stone.png");
    assert_eq!(h.state().state.history.undo_name(), Some("Edit material grass"));
}

/// Ctrl+5 and View → Visibility switch to the visibility view; once the full bakes are in, the
/// status bar names the air cube in front of the hovered face and what it sees.
#[test]
fn the_visibility_view_is_reached_by_shortcut_and_menu_and_names_the_hovered_air_cube() {
    use pmfedit::viewport::render::Shading;
    use pmfedit_core::format::pmf;
    let mut h = harness();
    assert_eq!(h.state().viewport.shading, Shading::Lit);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Num5);
    frames(&mut h);
    assert_eq!(h.state().viewport.shading, Shading::Visibility);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Num1);
    frames(&mut h);
    assert_eq!(h.state().viewport.shading, Shading::Lit);
    h.get_by_label("View").click();
    frames(&mut h);
    h.get_by_label("Visibility\tCtrl+5").click();
    frames(&mut h);
    assert_eq!(h.state().viewport.shading, Shading::Visibility);

    // The pointer on the building's west wall (the start view looks at it), full bakes in.
    let center = h.state().viewport_rect.expect("the viewport was drawn").center();
    h.hover_at(center);
    let deadline = std::time::Instant::now() + Duration::from_secs(600);
    while !h.state().state.bake.is_final() {
        assert!(std::time::Instant::now() < deadline, "the full bakes did not finish");
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    frames(&mut h);
    let app = h.state();
    let status = app.viewport.vis_status();
    assert!(app.viewport.hovered().is_some(), "the pointer is on a face");
    let air = app.viewport.vis_air().unwrap_or_else(|| panic!("no air cube: {status}"));
    assert!(
        status.starts_with(&format!("air cube {} in chunk (", air.index))
            && status.contains(" chunks in the level: ")
            && status.contains(" cubes visible in "),
        "{status}"
    );
    let cube = &app.state.bake.full(air.key).expect("full bake").pmf.common.cubes[air.index as usize];
    assert!(cube.kind == pmf::CubeKind::Empty && cube.visibility.is_some());
    // The hovered face lies on the air cube's box.
    let p = app.viewport.hovered().unwrap();
    let w = app.state.map.levels[0].frame().world_from_lattice_f(p.point);
    let on_box = (0..3).any(|a| (w[a] - air.min[a]).abs() < 1e-9 || (w[a] - air.max[a]).abs() < 1e-9);
    assert!(on_box, "hit {w:?}, air cube {air:?}");
    // The status bar shows the same line.
    h.get_by_label(&status);
}

/// The material of the face the pointer is over (the grid cube just inside it), if solid.
fn material_under(h: &Harness<'_, App>, pick: &tools::Pick) -> Option<pmfedit_core::map::ids::MaterialId> {
    let s = &h.state().state;
    let (cube, _) = s.map.levels[pick.level].get(pick.inside(s.cube_log2).min).unwrap();
    cube.face_material(pick.face)
}

/// Puts the pointer on the viewport's centre (the start view looks at the building's west wall)
/// and returns the face there.
fn pick_at_viewport_centre(h: &mut Harness<'_, App>) -> (egui::Pos2, tools::Pick) {
    let centre = h.state().viewport_rect.expect("the viewport was drawn").center();
    h.hover_at(centre);
    frames(h);
    let pick = *h.state().viewport.hovered().expect("a face under the viewport's centre");
    (centre, pick)
}

#[test]
fn a_library_material_dropped_on_a_face_paints_it_as_one_undo_step() {
    let mut h = harness();
    h.get_by_label("Materials").click();
    frames(&mut h);
    let (centre, pick) = pick_at_viewport_centre(&mut h);
    let before = h.state().state.map.snapshot();
    let old = material_under(&h, &pick).expect("a solid face");
    let lib = &h.state().state.map.library;
    let (id, name) = ["sand", "wood"]
        .into_iter()
        .map(|n| (lib.materials().id_of(n).unwrap(), n))
        .find(|(id, _)| *id != old)
        .unwrap();
    assert_ne!(h.state().state.material, id, "the drop must not rely on the current material");

    // Press on the library row, move off it (a drag), then over the viewport.
    let row = h.get_by_label(name).rect().center();
    h.drag_at(row);
    h.run_steps(2);
    h.hover_at(row + egui::vec2(-30.0, 0.0));
    h.run_steps(2);
    h.hover_at(centre);
    frames(&mut h);
    assert_eq!(h.state().viewport.hovered(), Some(&pick), "the face under the pointer is picked while dragging");
    h.get_by_label(&format!("Paint face with {name}"));
    assert!(h.state().state.history.is_empty(), "nothing is painted before the drop");
    h.drop_at(centre);
    frames(&mut h);

    assert_eq!(material_under(&h, &pick), Some(id), "the dropped material paints the face");
    assert_ne!(h.state().state.material, id, "a drag is not a click: the current material stays");
    let s = &h.state().state;
    assert_eq!(s.history.len(), 1, "one undo step");
    assert_eq!(s.history.undo_name(), Some(format!("Paint material {name}").as_str()));
    assert!(h.query_by_label_contains("Paint face with").is_none(), "the hint is gone after the drop");
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    frames(&mut h);
    assert!(h.state().state.map.content_eq(&before), "undo restores the face");
    assert_eq!(material_under(&h, &pick), Some(old));
}

/// A file dropped from the desktop, as egui-winit hands it over.
#[derive(Debug)]
struct DroppedPath(std::path::PathBuf);

impl egui::DroppedFile for DroppedPath {
    fn path(&self) -> &std::path::Path {
        &self.0
    }

    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

/// Drops `files` where the pointer is and runs a few frames.
fn drop_files(h: &mut Harness<'_, App>, files: &[&std::path::Path]) {
    h.input_mut().dropped_files =
        files.iter().map(|p| Arc::new(DroppedPath(p.to_path_buf())) as egui::DroppedFileHandle).collect();
    frames(h);
}

/// A small PNG whose pixels depend on `shade`.
fn write_png(path: &std::path::Path, shade: u8) {
    image::RgbaImage::from_pixel(4, 4, image::Rgba([shade, 100, 50, 255])).save(path).unwrap();
}

#[test]
fn an_image_dropped_on_a_face_is_copied_into_the_project_and_paints_the_face() {
    let desktop = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let png = desktop.path().join("brick.png");
    write_png(&png, 200);
    let same_name = other.path().join("brick.png");
    write_png(&same_name, 10);
    let txt = desktop.path().join("notes.txt");
    std::fs::write(&txt, "not a texture").unwrap();
    let mut h = harness();
    let (_, pick) = pick_at_viewport_centre(&mut h);
    let old = material_under(&h, &pick).unwrap();
    let textures = project.path().join("textures");
    let with_texture = |h: &Harness<'_, App>, reference: &str| {
        let lib = &h.state().state.map.library;
        let found: Vec<_> = lib.materials().iter().filter(|(_, m)| m.texture == reference).map(|(id, _)| id).collect();
        assert!(found.len() <= 1, "one material per texture: {found:?}");
        found.first().copied()
    };

    // Unsaved: there is no textures/ folder to copy into.
    drop_files(&mut h, &[&png]);
    assert_eq!(status(&h), "Save the map first: dropped textures are copied into the project's textures/ folder");
    assert!(h.state().state.history.is_empty());
    assert_eq!(material_under(&h, &pick), Some(old));

    h.state_mut().save_as(project.path());
    frames(&mut h);
    assert!(h.state().state.project.is_some(), "saved: {}", status(&h));

    // Held over the face, the pointer says what a drop does.
    let hover_file = |h: &mut Harness<'_, App>, path: Option<&std::path::Path>| {
        h.input_mut().hovered_files =
            path.map(|p| egui::HoveredFile { path: Some(p.to_owned()), ..Default::default() }).into_iter().collect();
        frames(h);
    };
    hover_file(&mut h, Some(&png));
    h.get_by_label("Paint face with brick.png");
    hover_file(&mut h, Some(&txt));
    h.get_by_label("notes.txt is not a PNG or PTF texture");
    hover_file(&mut h, None);
    assert!(h.query_by_label_contains("notes.txt").is_none(), "the hint goes with the hovered file");

    // Not a texture: refused, naming the file.
    drop_files(&mut h, &[&txt]);
    assert!(status(&h).contains("notes.txt"), "{}", status(&h));
    assert!(h.state().state.history.is_empty());
    assert!(!textures.join("notes.txt").exists());

    // The PNG: copied, a material made for it, the face painted, one undo step.
    let materials = h.state().state.map.library.materials().len();
    drop_files(&mut h, &[&png]);
    assert_eq!(std::fs::read(textures.join("brick.png")).unwrap(), std::fs::read(&png).unwrap());
    let brick = with_texture(&h, "textures/brick.png").unwrap_or_else(|| panic!("no material: {}", status(&h)));
    assert_eq!(h.state().state.map.library.materials().get(brick).unwrap().name, "brick");
    assert_eq!(h.state().state.map.library.materials().len(), materials + 1);
    assert_eq!(material_under(&h, &pick), Some(brick));
    assert_eq!(h.state().state.history.len(), 1, "adding the material and painting are one step");
    assert!(status(&h).starts_with("Painted face with brick"), "{}", status(&h));

    // Painted back, then the same file again: the file and the material are reused.
    let back = tools::paint::with_material(&h.state().state, &pick, Default::default(), old);
    h.state_mut().commands.extend(back);
    frames(&mut h);
    assert_eq!(material_under(&h, &pick), Some(old));
    drop_files(&mut h, &[&png]);
    assert_eq!(material_under(&h, &pick), Some(brick));
    assert_eq!(h.state().state.map.library.materials().len(), materials + 1, "no second material");
    assert_eq!(h.state().state.history.undo_name(), Some("Paint material brick"));
    let files = |dir: &std::path::Path| {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    };
    assert_eq!(files(&textures), ["brick.png"], "the identical file is reused");

    // A different file of the same name does not overwrite it; several files: the first is used.
    drop_files(&mut h, &[&same_name, &txt]);
    assert_eq!(files(&textures), ["brick-2.png", "brick.png"]);
    assert_eq!(std::fs::read(textures.join("brick.png")).unwrap(), std::fs::read(&png).unwrap(), "not overwritten");
    let brick2 = with_texture(&h, "textures/brick-2.png").expect("a material for the renamed copy");
    assert_eq!(h.state().state.map.library.materials().get(brick2).unwrap().name, "brick 2");
    assert_eq!(material_under(&h, &pick), Some(brick2));
    assert!(status(&h).contains("only the first of 2 dropped files is used"), "{}", status(&h));

    // One undo takes both the material and the paint back.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    frames(&mut h);
    assert_eq!(material_under(&h, &pick), Some(brick));
    assert_eq!(with_texture(&h, "textures/brick-2.png"), None);
}

/// File → New (Ctrl+N) opens what `pmfc new --sample empty` writes: one empty level and core's
/// starter library (`bake/tests/cli.rs` checks `pmfc`'s side against the same function).
#[test]
fn new_map_gets_the_starter_library() {
    let mut h = harness();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::N);
    frames(&mut h);
    let map = &h.state().state.map;
    let names: Vec<&str> = map.library.materials().iter().map(|(_, m)| m.name.as_str()).collect();
    assert!(map.library.content_eq(&sample::starter_library()), "{names:?}");
    assert_eq!(map.levels.len(), 1);
    assert_eq!(map.levels[0].leaves().filter(|(_, _, c)| c.is_solid()).count(), 0, "an empty level");
}

/// The entity form's flag checkboxes are core's named bits: ticking one by its label sets that
/// bit through the typed API.
#[test]
fn entity_flag_checkboxes_come_from_the_flag_tables() {
    use pmfedit_core::format::pmf::entity::{EntityData, PropFlags};
    let mut h = harness();
    let objects = &h.state().state.map.levels[0].objects;
    let (id, e) = objects.entities().iter().find(|(_, e)| matches!(e.entity.data, EntityData::Prop(_))).unwrap();
    let EntityData::Prop(p) = &e.entity.data else { unreachable!() };
    let before = p.flags;
    assert!(!before.better_physics());
    assert_eq!(e.entity.data.flag_bits(), PropFlags::NAMED);
    h.state_mut().commands.push(pmfedit::command::Command::Select(pmfedit::state::Selection::Entity { level: 0, id }));
    frames(&mut h);
    let bit = PropFlags::NAMED.iter().find(|b| b.name == "BETTER_PHYSICS").unwrap();
    h.get_by_label(bit.label).click();
    frames(&mut h);
    let e = h.state().state.map.levels[0].objects.entities().get(id).unwrap();
    let EntityData::Prop(p) = &e.entity.data else { panic!("still a prop") };
    assert_eq!(p.flags, before.with(PropFlags::BETTER_PHYSICS), "that bit and only that bit");
}

/// Clicks File, then the entry `label` of the File menu (a menu item's label is its text and its
/// keys, e.g. "New Ctrl+N").
fn file_menu(h: &mut Harness<'_, App>, label: &str) {
    h.get_by_label("File").click();
    frames(h);
    h.get_by_label(label).click();
    frames(h);
}

#[test]
fn new_from_the_menu_with_unsaved_changes_asks_first_then_gives_an_empty_map() {
    let mut h = harness();
    h.get_by_label("Add light").click();
    frames(&mut h);
    assert!(h.state().state.is_dirty());
    let lights = h.state().state.map.levels[0].objects.lights().len();

    file_menu(&mut h, "New Ctrl+N");
    h.get_by_label("Unsaved changes");
    assert_eq!(h.state().state.map.levels[0].objects.lights().len(), lights, "nothing replaced before the answer");
    h.get_by_label("Cancel").click();
    frames(&mut h);
    assert!(h.query_by_label("Unsaved changes").is_none());
    assert_eq!(h.state().state.map.levels[0].objects.lights().len(), lights, "cancel keeps the map");

    file_menu(&mut h, "New Ctrl+N");
    h.get_by_label("Discard").click();
    frames(&mut h);
    let s = &h.state().state;
    assert!(s.map.content_eq(&sample::empty("untitled")), "the new map with the starter library");
    assert!(s.map.levels.iter().all(|l| l.chunks().next().is_none()), "a new map has no cubes");
    assert!(s.history.is_empty() && !s.is_dirty() && s.project.is_none());
    assert_eq!(status(&h), "New map with the default asset pack");
}

/// A saved project whose recovery snapshot holds unsaved edits (its name changed).
fn project_with_a_recovery_snapshot(dir: &std::path::Path) -> pmfedit_core::map::Map {
    let map = pmfedit_core::map::Map::new("saved");
    let mut project = pmfedit_core::project::Project::create(dir).unwrap();
    project.save(&map).unwrap();
    let mut edited = map.clone();
    edited.meta.name = "unsaved edits".into();
    project.write_recovery(&edited).unwrap();
    assert!(pmfedit_core::project::Project::recovery_available(dir).unwrap().newer_than_manifest);
    edited
}

/// File → Open… and File → Open recent both go through the one open path: the unsaved-changes
/// question, then the offer of the newer recovery snapshot, then the recent files.
#[test]
fn opening_a_project_with_a_newer_snapshot_offers_recovery_from_the_menu_and_the_recent_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("proj");
    project_with_a_recovery_snapshot(&dir);
    let mut h = harness();

    file_menu(&mut h, "Open… Ctrl+O");
    retype(&mut h, "Path", dir.to_str().unwrap());
    h.get_by_label("Recover unsaved edits?");
    assert_eq!(h.state().state.map.meta.name, "Demo", "nothing opened before the answer");
    h.get_by_label("Recover").click();
    frames(&mut h);
    let s = &h.state().state;
    assert_eq!(s.map.meta.name, "unsaved edits");
    assert!(s.is_dirty(), "recovered edits are unsaved");
    assert_eq!(s.project.as_ref().map(|p| p.dir()), Some(dir.as_path()));
    assert_eq!(h.state().recent.paths.first(), Some(&dir), "an opened project is a recent file");

    // The recent-files entry: the unsaved (recovered) edits are asked about first, then the
    // snapshot is offered again; Discard opens the saved map and deletes the snapshot.
    file_menu(&mut h, "Open recent");
    h.get_by_label(&dir.display().to_string()).click();
    frames(&mut h);
    h.get_by_label("Unsaved changes");
    h.get_by_label("Discard").click();
    frames(&mut h);
    h.get_by_label("Recover unsaved edits?");
    h.get_by_label("Discard").click();
    frames(&mut h);
    let s = &h.state().state;
    assert_eq!(s.map.meta.name, "saved");
    assert!(!s.is_dirty());
    assert!(pmfedit_core::project::Project::recovery_available(&dir).is_none(), "the snapshot is discarded");
    assert!(h.query_by_label("Recover unsaved edits?").is_none());
}

/// The app learns from the refused edit itself why the dropped texture's material could not be
/// added: the message carries the library's reason, not whatever the status bar said before.
#[test]
fn a_dropped_image_whose_material_cannot_be_added_reports_the_refusal() {
    use glam::IVec3;
    use pmfedit_core::map::coords::LatticeBox;
    use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
    use pmfedit_core::map::library::{Library, Material};
    use pmfedit_core::map::octree::Cube;
    // A box of cubes and a library with no physics or sound material for a new material to use.
    let mut map = pmfedit_core::map::Map::new("bare library");
    map.library = Library::new();
    let cube = Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0));
    let centre = map.levels[0].frame().lattice_from_world(glam::DVec3::ZERO);
    let block = LatticeBox::new(centre - IVec3::splat(32), centre + IVec3::splat(32));
    map.levels[0].fill_box(block, cube).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let project = pmfedit_core::project::Project::create(tmp.path().join("proj")).unwrap();
    let png = tmp.path().join("brick.png");
    write_png(&png, 90);
    let mut h = harness_on(Document { map, project: Some(project), start_view: None });
    let (_, pick) = pick_at_viewport_centre(&mut h);
    assert!(material_under(&h, &pick).is_some(), "a face to paint");

    h.state_mut().commands.push(pmfedit::command::Command::Status("something else".into()));
    frames(&mut h);
    drop_files(&mut h, &[&png]);
    let refusal = Library::new()
        .add(Material::new("brick", PhysicsId::default(), SoundId::default()))
        .expect_err("no physics material to refer to");
    assert_eq!(status(&h), format!("Could not add a material for textures/brick.png: {refusal}"));
    assert!(h.state().state.history.is_empty(), "nothing applied");
    assert!(h.state().state.map.library.materials().is_empty());
}

/// `--screenshot … --visibility-point P --eye E`, given as a `Launch` (no environment): the run
/// starts in the visibility view of P's air cube, seen from E, wherever the pointer is.
#[test]
fn a_screenshot_launch_with_a_visibility_point_starts_in_the_visibility_view_of_that_point() {
    use glam::DVec3;
    use pmfedit::drivers::screenshot::Screenshot;
    use pmfedit::launch::Run;
    use pmfedit::viewport::render::Shading;
    let args = "--screenshot never.png --frames 1000000 --visibility-point 4.5,3,0 --eye -12,6,-10";
    let launch = Launch::parse(args.split(' ').map(Into::into)).unwrap().unwrap();
    let Run::Screenshot(run) = launch.run.clone() else { panic!("{:?}", launch.run) };
    let mut h = Harness::builder().with_size(egui::vec2(1400.0, 1000.0)).build_eframe(|cc| {
        let mut app = App::new(cc, &launch, launch.source.open().unwrap());
        app.set_driver(Box::new(Screenshot::new(run)));
        app
    });
    h.run_steps(3);
    let (point, eye) = (DVec3::new(4.5, 3.0, 0.0), DVec3::new(-12.0, 6.0, -10.0));
    assert_eq!(h.state().viewport.shading, Shading::Visibility);
    let camera = &h.state().viewport.camera;
    assert!(camera.eye.distance(eye) < 1e-9, "{:?}", camera.eye);
    assert!(camera.forward().dot((point - eye).normalize()) > 0.999_999, "looks at the point");

    let deadline = std::time::Instant::now() + Duration::from_secs(600);
    while !h.state().state.bake.is_final() {
        assert!(std::time::Instant::now() < deadline, "the full bakes did not finish");
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    // The pointer on a face (the building's outside) does not move the view off the point.
    h.hover_at(h.state().viewport_rect.expect("the viewport was drawn").center());
    frames(&mut h);
    let app = h.state();
    assert!(app.viewport.hovered().is_some(), "the pointer is on a face");
    let air = app.viewport.vis_air().unwrap_or_else(|| panic!("no air cube: {}", app.viewport.vis_status()));
    assert!((0..3).all(|a| air.min[a] <= point[a] && point[a] < air.max[a]), "{air:?} does not hold {point:?}");
    assert!(app.viewport.vis_status().starts_with(&format!("air cube {} in chunk (", air.index)));
}

/// What `pmfc build PROJECT -o OUT --timestamp T` writes: the project baked from scratch by a
/// final-only engine (as pmfc runs it), compiled, then written by the library function pmfc
/// calls, with its resource roots (the project, then the shared assets). The file's bytes.
fn pmfc_build_bytes(project: &std::path::Path, out: &std::path::Path, timestamp: u64) -> Vec<u8> {
    use pmfedit_bake::compile::CompileSettings;
    use pmfedit_bake::rebuild::{Plan, Rebuild};
    use pmfedit_bake::scheduler::Scheduler;
    let (_, map) = pmfedit_core::project::Project::open(project).unwrap();
    let settings = CompileSettings { timestamp, ..CompileSettings::default() };
    let scheduler = Scheduler::new(2, settings, Arc::new(|| {}));
    let mut engine = Rebuild::new(scheduler, Plan::FinalOnly, Arc::new(map));
    let deadline = std::time::Instant::now() + Duration::from_secs(600);
    while !engine.is_settled() {
        assert!(std::time::Instant::now() < deadline, "the bake did not finish");
        engine.poll();
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut file = engine.compile(None).unwrap();
    let roots = pmfedit_bake::export::resource_roots(Some(project), pmfedit::watch::assets_dir());
    pmfedit_bake::export::write_map(&mut file, &roots, out, false, pmfedit_core::format::pmf::Compression::Fast)
        .unwrap();
    std::fs::read(out).unwrap()
}

/// Runs frames until the export waiting for the bake has been written (bounded).
fn frames_until_exported(h: &mut Harness<'_, App>) {
    let deadline = std::time::Instant::now() + Duration::from_secs(600);
    while h.state().state.exporting() || h.state().state.last_export.is_none() {
        assert!(std::time::Instant::now() < deadline, "the export never ran: {}", status(h));
        h.step();
        std::thread::sleep(Duration::from_millis(2));
    }
    frames(h);
}

/// Ctrl+E on a saved project writes what `pmfc build` writes, byte for byte (fixed timestamp):
/// the textures the project and the shared assets hold are embedded (the editor used to write
/// `compile()` output with no archive at all), and the status line repeats the build's warning
/// about the texture that is missing.
#[test]
fn export_of_a_saved_project_is_what_pmfc_build_writes_with_its_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("house");
    let mut map = sample::demo();
    let (id, m) = map.library.materials().iter().next().map(|(id, m)| (id, m.clone())).unwrap();
    let mut m = m;
    m.texture = "map:textures/definitely_missing".into();
    map.library.replace(id, m).unwrap();
    pmfedit_core::project::Project::create(&project).unwrap().save(&map).unwrap();
    let expected = pmfc_build_bytes(&project, &dir.path().join("pmfc.pmf"), 1_700_000_000);

    let document = pmfedit::launch::Source::Project(project.clone()).open().unwrap();
    let mut h = harness_on(document);
    h.state_mut().state.export_timestamp = Some(1_700_000_000);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::E);
    frames(&mut h);
    let out = dir.path().join("editor.pmf");
    retype(&mut h, "Path", out.to_str().unwrap());
    frames_until_exported(&mut h);
    let bytes = std::fs::read(&out).unwrap();
    assert!(
        bytes == expected,
        "the editor's export differs from pmfc build ({} vs {} bytes)",
        bytes.len(),
        expected.len()
    );
    let file = pmfedit_core::format::pmf::read(&bytes).unwrap();
    assert!(!file.archive.is_empty(), "no resources embedded");
    let summary = h.state().state.last_export.clone().unwrap();
    assert!(summary.embedded.iter().any(|p| p.ends_with(".ptf")), "{:?}", summary.embedded);
    let msg = status(&h);
    assert!(msg.contains(&format!("embedded: {} resources", summary.embedded.len())), "{msg}");
    assert!(
        msg.contains("warning: 1 missing or unusable resources (not embedded): map:textures/definitely_missing"),
        "{msg}"
    );
}

/// An unsaved map exports what the shared assets hold and says that the project folder was not
/// searched; a map with no textures says that nothing was embedded.
#[test]
fn export_of_an_unsaved_map_says_what_is_embedded() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness();
    let out = dir.path().join("demo.pmf");
    h.state_mut().state.apply(pmfedit::command::Command::Export(out.clone())).unwrap();
    frames_until_exported(&mut h);
    let msg = status(&h);
    assert!(msg.contains("not saved: resources were looked up in the asset folder only"), "{msg}");
    assert!(msg.contains("embedded: ") && !msg.contains("warning"), "{msg}");

    let mut map = pmfedit_core::map::Map::new("bare");
    let ids: Vec<_> = map.library.materials().iter().map(|(id, _)| id).collect();
    for id in ids {
        let mut m = map.library.materials().get(id).unwrap().clone();
        m.texture = String::new();
        map.library.replace(id, m).unwrap();
    }
    let mut h = harness_on(Document { map, project: None, start_view: None });
    h.state_mut().state.asset_roots.clear();
    // Cleared before the export, not after: a map whose bake is already settled exports at once.
    h.state_mut().state.last_export = None;
    h.state_mut().state.apply(pmfedit::command::Command::Export(out.clone())).unwrap();
    frames_until_exported(&mut h);
    assert!(status(&h).contains("embedded archive: none"), "{}", status(&h));
}

/// Where a world point is on screen (points), from the viewport's camera.
fn screen_of(h: &Harness<'_, App>, p: glam::DVec3) -> egui::Pos2 {
    let rect = h.state().viewport_rect.expect("the viewport was drawn");
    let ndc = h.state().viewport.camera.project(p, rect.width() / rect.height()).expect("in front of the camera");
    egui::pos2(rect.left() + (ndc.x + 1.0) * 0.5 * rect.width(), rect.top() + (1.0 - ndc.y) * 0.5 * rect.height())
}

/// One notch of the mouse wheel (away from the user) at the pointer.
fn wheel_notch(h: &mut Harness<'_, App>, lines: f32) {
    h.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Line,
        delta: egui::vec2(0.0, lines),
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Unknown,
        modifiers: egui::Modifiers::NONE,
    });
    frames(h);
}

/// Whether the cube at a world point of level 0 is solid.
fn solid_at(h: &Harness<'_, App>, x: f64, y: f64, z: f64) -> bool {
    let level = &h.state().state.map.levels[0];
    level.get(level.frame().lattice_from_world(glam::DVec3::new(x, y, z))).is_ok_and(|(c, _)| c.is_solid())
}

/// Every solid unit cell of level 0 within `lo..hi` (world, integer corners), as its minimum.
fn solid_cells(h: &Harness<'_, App>, lo: [i32; 3], hi: [i32; 3]) -> Vec<[i32; 3]> {
    let mut out = Vec::new();
    for x in lo[0]..hi[0] {
        for y in lo[1]..hi[1] {
            for z in lo[2]..hi[2] {
                if solid_at(h, f64::from(x) + 0.5, f64::from(y) + 0.5, f64::from(z) + 0.5) {
                    out.push([x, y, z]);
                }
            }
        }
    }
    out
}

/// A press at `a`, the pointer moved to `b`, a release there.
fn drag_on_view(h: &mut Harness<'_, App>, a: egui::Pos2, b: egui::Pos2) {
    h.hover_at(a);
    frames(h);
    h.drag_at(a);
    frames(h);
    h.hover_at(b);
    frames(h);
    h.drop_at(b);
    frames(h);
}

/// A new map has no faces, but every map has a work plane: the first click with the Place tool
/// on an empty map puts a cube on it (it used to do nothing: there was no face to click).
#[test]
fn the_first_click_on_an_empty_map_places_a_cube_on_the_work_plane() {
    let mut h = harness_on(empty_map());
    assert_eq!(h.state().state.tool, tools::place::ID);
    let at = screen_of(&h, glam::DVec3::new(2.5, 0.0, 1.5));
    h.hover_at(at);
    frames(&mut h);
    assert!(h.state().viewport.hovered().is_none(), "an empty map has no face to hover");
    h.drag_at(at);
    frames(&mut h);
    h.drop_at(at);
    frames(&mut h);
    assert_eq!(h.state().state.history.len(), 1, "{}", status(&h));
    assert_eq!(solid_cells(&h, [-4, -2, -4], [6, 3, 6]), [[2, 0, 1]], "one cube on the plane, under the pointer");
    // PageUp lifts the work plane one cube: the next click lands a cube higher.
    h.key_press(egui::Key::PageUp);
    frames(&mut h);
    assert_eq!(h.state().state.work_point.y, 1.0);
    let at = screen_of(&h, glam::DVec3::new(-1.5, 1.0, 0.5));
    h.hover_at(at);
    frames(&mut h);
    h.drag_at(at);
    frames(&mut h);
    h.drop_at(at);
    frames(&mut h);
    assert!(solid_at(&h, -1.5, 1.5, 0.5), "{:?}", solid_cells(&h, [-4, -2, -4], [6, 3, 6]));
}

/// The Box tool draws on the work plane by default (pressing over a wall's side no longer
/// makes a vertical slab), on the pressed face with Shift, and one wheel notch adds one layer
/// (it used to take two notches for the first layer and then add two or three).
#[test]
fn box_draws_on_the_work_plane_and_a_wheel_notch_is_one_layer() {
    let mut h = harness_on(empty_map());
    h.key_press(egui::Key::Num4);
    frames(&mut h);
    let a = screen_of(&h, glam::DVec3::new(0.5, 0.0, 0.5));
    let b = screen_of(&h, glam::DVec3::new(3.5, 0.0, 2.5));
    h.hover_at(a);
    frames(&mut h);
    h.drag_at(a);
    frames(&mut h);
    h.hover_at(b);
    frames(&mut h);
    wheel_notch(&mut h, 1.0);
    h.drop_at(b);
    frames(&mut h);
    let cells = solid_cells(&h, [-2, -2, -2], [6, 5, 6]);
    assert_eq!(cells.len(), 4 * 2 * 3, "a 4×3 rectangle two layers high: {cells:?}");
    assert!(cells.iter().all(|c| (0..4).contains(&c[0]) && (0..2).contains(&c[1]) && (0..3).contains(&c[2])));
    // Over the block's side face, a plain drag still draws on the work plane (a floor beside
    // it), not a slab on the side.
    let side = screen_of(&h, glam::DVec3::new(1.5, 1.0, 0.0));
    h.hover_at(side);
    frames(&mut h);
    assert!(h.state().viewport.hovered().is_some_and(|p| p.face == pmfedit_core::map::coords::Face::NegZ));
    let before = solid_cells(&h, [-2, -2, -6], [6, 5, 6]).len();
    let far = screen_of(&h, glam::DVec3::new(1.5, 0.0, -3.5));
    drag_on_view(&mut h, side, far);
    let after = solid_cells(&h, [-2, -2, -6], [6, 5, 6]);
    assert!(after.len() > before, "the drag made nothing");
    assert!(after.iter().all(|c| c[1] < 2), "a slab went up the side: {after:?}");
}

/// The wheel zooms towards the point under the pointer: the face there stays under it (it used
/// to zoom to the screen centre, moving what the designer pointed at away).
#[test]
fn the_wheel_zooms_to_the_pointer() {
    let mut h = harness();
    let rect = h.state().viewport_rect.unwrap();
    let at = rect.center() + egui::vec2(rect.width() * 0.25, rect.height() * 0.15);
    h.hover_at(at);
    frames(&mut h);
    let before = *h.state().viewport.hovered().expect("a face off-centre");
    let eye = h.state().viewport.camera.eye;
    wheel_notch(&mut h, 3.0);
    h.hover_at(at);
    frames(&mut h);
    let after = *h.state().viewport.hovered().expect("still a face there");
    assert!(h.state().viewport.camera.eye.distance(eye) > 0.5, "the wheel did not zoom");
    assert!(after.point.distance(before.point) < 2.0, "{:?} moved to {:?}", before.point, after.point);
}

/// F6 switches to the orthographic top view (F5 back); a Box drag there makes a box of exactly
/// the cells between the pointer's two positions, and the Box panel types one.
#[test]
fn the_top_view_draws_boxes_precisely_and_the_box_panel_types_one() {
    use pmfedit::viewport::camera::OrthoView;
    let mut h = harness_on(empty_map());
    h.key_press(egui::Key::Num4);
    h.key_press(egui::Key::F6);
    frames(&mut h);
    assert_eq!(h.state().viewport.camera.ortho, Some(OrthoView::Top));
    let a = screen_of(&h, glam::DVec3::new(-2.5, 0.0, -1.5));
    let b = screen_of(&h, glam::DVec3::new(3.5, 0.0, 2.5));
    drag_on_view(&mut h, a, b);
    let cells = solid_cells(&h, [-6, -2, -6], [8, 3, 8]);
    assert_eq!(cells.len(), 7 * 5, "{cells:?}");
    assert!(cells.iter().all(|c| (-3..4).contains(&c[0]) && c[1] == 0 && (-2..3).contains(&c[2])), "{cells:?}");
    // The panel shows the box the drag made; typing a size and Fill makes that box.
    let form = |h: &Harness<'_, App>| h.get_by_label("width").value().unwrap_or_default();
    assert_eq!(form(&h), "7");
    h.get_by_label("min x").set_value_accesskit(10.0);
    h.get_by_label("min y").set_value_accesskit(0.0);
    h.get_by_label("min z").set_value_accesskit(-4.0);
    h.get_by_label("width").set_value_accesskit(2.0);
    h.get_by_label("height").set_value_accesskit(3.0);
    h.get_by_label("depth").set_value_accesskit(1.0);
    frames(&mut h);
    h.get_by_label("Fill box").click();
    frames(&mut h);
    let typed = solid_cells(&h, [8, -2, -6], [14, 5, 0]);
    assert_eq!(typed, [[10, 0, -4], [10, 1, -4], [10, 2, -4], [11, 0, -4], [11, 1, -4], [11, 2, -4]]);
    h.key_press(egui::Key::F5);
    frames(&mut h);
    assert_eq!(h.state().viewport.camera.ortho, None);
}

/// What File → New (and `pmfc new --sample empty`) makes: one empty level, the starter library.
fn empty_map() -> Document {
    Document { map: sample::empty("untitled"), project: None, start_view: None }
}

/// Esc during a paint stroke takes back what the stroke painted so far: the map is as before
/// and no step is left applied (the stroke used to stay, as after a release).
#[test]
fn esc_cancels_a_paint_stroke_with_nothing_applied() {
    let mut h = harness();
    h.key_press(egui::Key::Num3);
    frames(&mut h);
    let (at, pick) = pick_at_viewport_centre(&mut h);
    let before = h.state().state.map.snapshot();
    let (other, _) =
        h.state().state.map.library.materials().iter().find(|(id, _)| Some(*id) != material_under(&h, &pick)).unwrap();
    h.state_mut().state.material = other;
    h.drag_at(at);
    frames(&mut h);
    h.hover_at(at + egui::vec2(40.0, 10.0));
    frames(&mut h);
    assert!(!h.state().state.map.content_eq(&before), "the stroke paints live");
    h.key_press(egui::Key::Escape);
    frames(&mut h);
    h.drop_at(at + egui::vec2(40.0, 10.0));
    frames(&mut h);
    assert!(h.state().state.map.content_eq(&before), "the painted faces stay painted");
    assert!(!h.state().state.history.can_undo(), "{:?}", h.state().state.history.undo_name());
    assert_eq!(status(&h), "Paint stroke cancelled");
}

#[test]
fn the_level_tab_sets_the_sun_as_one_undo_step_and_the_view_starts_at_the_exported_brightness() {
    let mut h = harness();
    // What you see is what you export: no exposure, no editor ambient by default.
    assert_eq!((h.state().viewport.exposure, h.state().viewport.ambient), (1.0, 0.0));
    let before = h.state().state.map.levels[0].lighting;
    assert!(before.sun.is_on() && before.sky.is_on() && before.bounces >= 1, "the demo is in daylight");
    h.get_by_label("Level").click();
    frames(&mut h);
    h.get_by_label("Sun elevation").set_value_accesskit(30.0);
    frames(&mut h);
    let after = h.state().state.map.levels[0].lighting;
    assert_eq!(after.sun.elevation, 30.0);
    assert_eq!(after.sun.azimuth, before.sun.azimuth);
    let names: Vec<String> = h.state().state.history.entries().map(|e| e.name.to_owned()).collect();
    assert_eq!(names, ["Set sun, sky and bounce"]);
    h.get_by_label("Bounces");
    h.get_by_label("Sky intensity");
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    frames(&mut h);
    assert_eq!(h.state().state.map.levels[0].lighting, before);
}

// Painting: one current material, fill, the selected box, strokes without gaps (issue 16).

/// The id of a library material that is not `not`.
fn other_material(
    h: &Harness<'_, App>,
    not: pmfedit_core::map::ids::MaterialId,
) -> (pmfedit_core::map::ids::MaterialId, &'static str) {
    let lib = &h.state().state.map.library;
    ["sand", "wood", "stone"]
        .into_iter()
        .map(|n| (lib.materials().id_of(n).unwrap(), n))
        .find(|(id, _)| *id != not)
        .unwrap()
}

/// Clicking a material in the library makes it the one the tools paint with, and its form
/// shows; a newly added material becomes the painting one.
#[test]
fn the_library_selection_is_the_painting_material_and_a_new_material_paints() {
    let mut h = harness();
    h.get_by_label("Materials").click();
    frames(&mut h);
    let (sand, _) = other_material(&h, h.state().state.material);
    h.get_by_label("sand").click();
    frames(&mut h);
    assert_eq!(h.state().state.material, sand, "the clicked material paints");
    assert!(h.query_by_label("(painting)").is_none(), "no second notion of a current material");
    h.get_by_label("Add material").click();
    frames(&mut h);
    let lib = &h.state().state.map.library;
    let (new, _) = lib.materials().by_name("material").expect("the new material");
    assert_eq!(h.state().state.material, new, "the new material is the painting one");
    // The eyedropper's pick shows in the library: the form is the painting material's.
    h.state_mut().state.material = sand;
    frames(&mut h);
    assert_eq!(h.get_by_label("Name").value().as_deref(), Some("sand"), "the form is the painting material's");
}

/// Ctrl+click with the Paint tool fills the connected faces of the same material on that plane:
/// one undo step named for it.
#[test]
fn ctrl_click_fills_connected_faces_of_one_material_as_one_step() {
    let mut h = harness();
    h.get_by_label("3 Paint").click();
    frames(&mut h);
    let (centre, pick) = pick_at_viewport_centre(&mut h);
    let old = material_under(&h, &pick).expect("a solid face");
    let (target, name) = other_material(&h, old);
    h.state_mut().state.material = target;
    let button = |pressed| egui::Event::PointerButton {
        pos: centre,
        button: egui::PointerButton::Primary,
        pressed,
        modifiers: egui::Modifiers::COMMAND,
    };
    h.event(egui::Event::ModifiersChanged(egui::Modifiers::COMMAND));
    h.event(button(true));
    frames(&mut h);
    h.event(button(false));
    h.event(egui::Event::ModifiersChanged(egui::Modifiers::NONE));
    frames(&mut h);
    let s = &h.state().state;
    assert_eq!(s.history.len(), 1, "one undo step");
    let step = s.history.undo_name().unwrap().to_owned();
    assert!(step.starts_with("Fill ") && step.ends_with(&format!("faces with {name}")), "{step}");
    let n: usize = step["Fill ".len()..].split(' ').next().unwrap().parse().unwrap();
    assert!(n > 4, "a wall is more than a few faces: {step}");
    assert_eq!(material_under(&h, &pick), Some(target));
    // A neighbour on the same plane got it too.
    let e = 1 << s.cube_log2;
    let a = pick.face.axis();
    let level = &s.map.levels[pick.level];
    let painted = (0..3).filter(|&ax| ax != a).any(|ax| {
        let mut p = pick.inside(s.cube_log2).min;
        p[ax] += e;
        level.get(p).is_ok_and(|(c, _)| c.face_material(pick.face) == Some(target))
    });
    assert!(painted, "no neighbouring face was filled");
}

/// P paints every face of the selected box with the current material: one named step.
#[test]
fn p_paints_the_selected_box() {
    use pmfedit::selection::Selection;
    let mut h = harness();
    let (_, pick) = pick_at_viewport_centre(&mut h);
    let old = material_under(&h, &pick).unwrap();
    let (target, name) = other_material(&h, old);
    let addr = pick.inside(h.state().state.cube_log2);
    h.state_mut().state.material = target;
    h.state_mut().state.selection = Selection::Cube { level: pick.level, addr };
    h.key_press(egui::Key::P);
    frames(&mut h);
    let s = &h.state().state;
    assert_eq!(s.history.undo_name(), Some(format!("Paint selection with {name}").as_str()));
    assert_eq!(material_under(&h, &pick), Some(target));
}

/// A fast stroke (the pointer jumps far between two frames) paints every cell it crossed.
#[test]
fn a_fast_paint_stroke_leaves_no_gaps() {
    let mut h = harness();
    h.get_by_label("3 Paint").click();
    frames(&mut h);
    let (centre, pick) = pick_at_viewport_centre(&mut h);
    let old = material_under(&h, &pick).unwrap();
    let (target, _) = other_material(&h, old);
    h.state_mut().state.material = target;
    // The points a quarter, half and three quarters along the stroke, before it.
    let end = centre + egui::vec2(160.0, 0.0);
    let mids: Vec<(egui::Pos2, tools::Pick)> = [0.25f32, 0.5, 0.75]
        .into_iter()
        .map(|t| {
            let p = centre + (end - centre) * t;
            h.hover_at(p);
            frames(&mut h);
            (p, *h.state().viewport.hovered().expect("a face along the stroke"))
        })
        .collect();
    for (_, p) in &mids {
        assert_ne!(material_under(&h, p), Some(target));
    }
    h.drag_at(centre);
    h.run_steps(1);
    h.hover_at(end);
    h.run_steps(1);
    h.drop_at(end);
    frames(&mut h);
    assert_eq!(h.state().state.history.len(), 1, "a stroke is one step");
    for (at, p) in &mids {
        assert_eq!(material_under(&h, p), Some(target), "the cell under {at:?} was skipped");
    }
}

/// A paste is one undo step named for what the user did ("Paste 1 cube"), not after its first
/// edit ("Fill box … (10 steps)").
#[test]
fn a_paste_step_is_named_paste() {
    use pmfedit::selection::Selection;
    let mut h = harness();
    h.get_by_label("5 Select").click();
    frames(&mut h);
    let (_, pick) = pick_at_viewport_centre(&mut h);
    let addr = pick.inside(h.state().state.cube_log2);
    h.state_mut().state.selection = Selection::Cube { level: pick.level, addr };
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::C);
    frames(&mut h);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::V);
    frames(&mut h);
    let s = &h.state().state;
    assert_eq!(s.history.len(), 1);
    assert_eq!(s.history.undo_name(), Some("Paste 1 cube"));
}

// Form fields say when they clamp or refuse; an unchanged commit records nothing (issue 16).

/// Selects the first named demo light through the outliner; its id.
fn select_a_light(h: &mut Harness<'_, App>) -> pmfedit_core::map::library::LightId {
    let (id, name) = {
        let lights = h.state().state.map.levels[0].objects.lights();
        let (id, l) = lights.iter().find(|(_, l)| !l.name.is_empty()).expect("demo has named lights");
        (id, l.name.clone())
    };
    h.get_by_label(&name).click();
    frames(h);
    id
}

/// The selected demo light.
fn light(h: &Harness<'_, App>, id: pmfedit_core::map::library::LightId) -> pmfedit_core::map::library::Light {
    h.state().state.map.levels[0].objects.lights().get(id).unwrap().clone()
}

/// Typed values out of range are clamped and say so beside the field; text that is not a number
/// (or NaN) is refused and says so; the history records only real changes.
#[test]
fn number_fields_say_when_they_clamp_or_refuse_what_was_typed() {
    let mut h = harness();
    let id = select_a_light(&mut h);
    let before = light(&h, id);
    retype(&mut h, "Intensity", "-5");
    assert_eq!(light(&h, id).intensity, 0.0);
    h.get_by_label("-5 is below the minimum: set to 0");
    retype(&mut h, "Range", "1e30");
    assert_eq!(light(&h, id).range, 4096.0);
    h.get_by_label("1e30 is above the maximum: set to 4096");
    let steps = h.state().state.history.len();
    retype(&mut h, "Range", "abc");
    assert_eq!(light(&h, id).range, 4096.0);
    h.get_by_label("“abc” is not a number: kept 4096");
    retype(&mut h, "Position X", "NaN");
    assert_eq!(light(&h, id).position.x, before.position.x);
    h.get_by_label_contains("NaN is not a number: kept");
    assert_eq!(h.state().state.history.len(), steps, "a refused value records nothing");
    // A plain value clears the field's note.
    retype(&mut h, "Range", "12");
    assert_eq!(light(&h, id).range, 12.0);
    assert!(h.query_by_label_contains("is not a number: kept 4096").is_none());
}

/// A slider's typed value is checked the same way: 999° in a 180° cone says it was set to 180.
#[test]
fn a_slider_says_when_it_clamps_a_typed_value() {
    use pmfedit_core::edit::{Edit, ObjItem, ObjRef};
    use pmfedit_core::map::library::LightShape;
    let mut h = harness();
    let id = select_a_light(&mut h);
    let mut l = light(&h, id);
    l.shape = LightShape::Spot { direction: glam::Vec3::NEG_Y, cone_radius: 30.0 };
    let edit = Edit::ReplaceObject { level: 0, id: ObjRef::Light(id), item: ObjItem::Light(l) };
    h.state_mut().commands.push(pmfedit::command::Command::Edit(edit));
    frames(&mut h);
    retype_number(&mut h, "Cone radius", "999");
    assert!(matches!(light(&h, id).shape, LightShape::Spot { cone_radius, .. } if cone_radius == 180.0));
    h.get_by_label_contains("is above the maximum: set to 180");
}

/// Enter on a field whose value shows rounded keeps the exact value: no undo step, no re-bake.
#[test]
fn enter_on_an_unchanged_field_records_nothing() {
    use pmfedit_core::edit::{Edit, ObjItem, ObjRef};
    let mut h = harness();
    let id = select_a_light(&mut h);
    let mut l = light(&h, id);
    l.intensity = 0.613_724_5;
    let edit = Edit::ReplaceObject { level: 0, id: ObjRef::Light(id), item: ObjItem::Light(l) };
    h.state_mut().commands.push(pmfedit::command::Command::Edit(edit));
    frames(&mut h);
    let steps = h.state().state.history.len();
    let generation = h.state().state.generation();
    h.get_by_label("Intensity").focus();
    frames(&mut h);
    h.key_press(egui::Key::Enter);
    frames(&mut h);
    assert_eq!(light(&h, id).intensity, 0.613_724_5, "the exact value is kept");
    assert_eq!(h.state().state.history.len(), steps, "{:?}", h.state().state.history.undo_name());
    assert_eq!(h.state().state.generation(), generation, "nothing re-bakes");
}

/// After undoing an import the status line no longer says "Imported …": it names what was undone.
#[test]
fn undoing_an_import_replaces_its_status_message() {
    let mut h = harness();
    import_m3d_through_the_menu(&mut h, VOXEL_M3D);
    frames_until_the_import_is_done(&mut h);
    assert!(status(&h).starts_with("Imported "), "{}", status(&h));
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    frames(&mut h);
    assert_eq!(status(&h), "Undone: Import voxel.m3d");
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Y);
    frames(&mut h);
    assert_eq!(status(&h), "Redone: Import voxel.m3d");
}

// Layout (issue 16).

/// The left panel's edge drags to resize it; the Bake tab does not widen it; dragged as wide as
/// it goes it stops at its maximum, and the view keeps its whole view bar.
#[test]
fn the_left_panel_resizes_by_its_edge_within_bounds_that_keep_the_view_bar() {
    let mut h = harness();
    let view = |h: &Harness<'_, App>| h.state().viewport_rect.expect("the viewport was drawn");
    let start = view(&h).left();
    assert!((200.0..260.0).contains(&start), "default width {start}");
    h.get_by_label("Bake").click();
    frames(&mut h);
    assert!((view(&h).left() - start).abs() < 1.0, "the Bake tab widened the panel to {}", view(&h).left());
    // Drag the edge 80 points to the right.
    let y = view(&h).center().y;
    let edge = egui::pos2(start - 1.0, y);
    h.drag_at(edge);
    h.run_steps(2);
    h.hover_at(edge + egui::vec2(80.0, 0.0));
    h.run_steps(2);
    h.drop_at(edge + egui::vec2(80.0, 0.0));
    frames(&mut h);
    let wider = view(&h).left();
    assert!((wider - (start + 80.0)).abs() < 3.0, "dragged from {start} to {wider}");
    // As far right as the pointer goes: the panel stops at its maximum.
    let edge = egui::pos2(wider - 1.0, y);
    h.drag_at(edge);
    h.run_steps(2);
    h.hover_at(egui::pos2(1300.0, y));
    h.run_steps(2);
    h.drop_at(egui::pos2(1300.0, y));
    frames(&mut h);
    let v = view(&h);
    assert!(v.left() <= *pmfedit::panels::LEFT_WIDTH.end() + 1.0, "the panel grew to {}", v.left());
    assert!(v.width() >= pmfedit::panels::VIEW_MIN_WIDTH - 1.0, "the view shrank to {}", v.width());
    for control in ["View amb.", "Textures", "Objects", "Regions"] {
        let r = h.get_by_label(control).rect();
        assert!(v.contains(r.min) && r.max.x <= v.right(), "{control} at {r:?} is not inside the view {v:?}");
    }
    // A narrow window: the view bar wraps instead of losing its last controls.
    h.set_size(egui::vec2(1000.0, 800.0));
    frames(&mut h);
    let v = view(&h);
    for control in ["View amb.", "Textures", "Objects", "Regions"] {
        let r = h.get_by_label(control).rect();
        assert!(v.contains(r.min) && r.max.x <= v.right() + 0.5, "{control} at {r:?} is not inside the view {v:?}");
    }
}

// Dialogs (issue 16).

/// Browse… on a desktop without a dialog service (the dialog answers "nothing" at once) says so
/// and puts the keyboard in the typed path.
#[test]
fn browse_without_a_dialog_service_says_so_and_focuses_the_path() {
    let mut h = harness();
    h.state_mut().dialogs = pmfedit::files::Dialogs::with(Arc::new(|_, _| None));
    file_menu(&mut h, "Open… Ctrl+O");
    h.get_by_label("Browse…").click();
    for _ in 0..100 {
        frames(&mut h);
        if h.query_by_label("No file dialog is available here: type the path").is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    h.get_by_label("No file dialog is available here: type the path");
    frames(&mut h);
    assert!(h.get_by_label("Path").is_focused(), "the typed path has the keyboard");
}

/// File → Import asks where the model goes (default: the view's focus) and its cube size, like
/// `pmfc import --at --cube-size`.
#[test]
fn the_import_prompt_asks_for_position_and_cube_size() {
    let mut h = harness();
    let (open, _done) = gate_imports(&mut h);
    h.get_by_label("File").click();
    frames(&mut h);
    h.get_by_label("Import").click();
    frames(&mut h);
    h.get_by_label("Model 3D (.m3d)…").click();
    frames(&mut h);
    let pivot = h.state().viewport.camera.pivot();
    let x = h.get_by_label("Position X").accesskit_node().numeric_value().expect("a number field");
    assert!((x - pivot.x).abs() <= 0.5, "position X {x}, view focus {pivot:?}");
    retype(&mut h, "Position X", "40");
    retype(&mut h, "Position Y", "8");
    retype(&mut h, "Position Z", "-16");
    h.get_by_label("Cube size").click();
    frames(&mut h);
    h.get_by_label("0.5 m").click();
    frames(&mut h);
    retype(&mut h, "Path", VOXEL_M3D);
    let request = h.state().import.as_ref().expect("the import runs").request.clone();
    assert_eq!(request.at, glam::DVec3::new(40.0, 8.0, -16.0));
    assert_eq!(request.cube_log2, 2);
    open.send(()).unwrap();
    frames_until_the_import_is_done(&mut h);
    assert_eq!(h.state().state.history.undo_name(), Some("Import voxel.m3d"));
}

// Several objects at a time (issue 16).

/// The names of the first `n` named demo lights and their ids.
fn demo_lights(h: &Harness<'_, App>, n: usize) -> Vec<(pmfedit_core::map::library::LightId, String)> {
    let lights = h.state().state.map.levels[0].objects.lights();
    let named: Vec<_> = lights.iter().filter(|(_, l)| !l.name.is_empty()).map(|(id, l)| (id, l.name.clone())).collect();
    assert!(named.len() >= n, "the demo has {} named lights", named.len());
    named.into_iter().take(n).collect()
}

/// Ctrl+click in the outliner selects several lights; Delete removes them as one undo step.
#[test]
fn ctrl_click_in_the_outliner_selects_several_objects_and_delete_removes_them_in_one_step() {
    use pmfedit::selection::Selection;
    use pmfedit_core::edit::ObjRef;
    let mut h = harness();
    let lights = demo_lights(&h, 2);
    let before = h.state().state.map.levels[0].objects.lights().len();
    h.get_by_label(&lights[0].1).click();
    frames(&mut h);
    h.get_by_label(&lights[1].1).click_modifiers(egui::Modifiers::COMMAND);
    frames(&mut h);
    let both = vec![ObjRef::Light(lights[0].0), ObjRef::Light(lights[1].0)];
    assert_eq!(h.state().state.selection, Selection::Objects { level: 0, objects: both });
    h.get_by_label_contains("2 objects selected");
    // Shift+click takes one out again.
    h.get_by_label(&lights[0].1).click_modifiers(egui::Modifiers::SHIFT);
    frames(&mut h);
    assert_eq!(h.state().state.selection, Selection::Light { level: 0, id: lights[1].0 });
    h.get_by_label(&lights[0].1).click_modifiers(egui::Modifiers::SHIFT);
    frames(&mut h);
    h.key_press(egui::Key::Delete);
    frames(&mut h);
    let s = &h.state().state;
    assert_eq!(s.map.levels[0].objects.lights().len(), before - 2);
    assert_eq!((s.history.len(), s.history.undo_name()), (1, Some("Delete 2 objects")));
}

/// With the Select tool, Ctrl+D duplicates the selected objects and Ctrl+C, Ctrl+V pastes them
/// onto the hovered face: one named undo step each.
#[test]
fn selected_objects_are_duplicated_copied_and_pasted_in_one_step_each() {
    use pmfedit::selection::Selection;
    use pmfedit_core::edit::ObjRef;
    let mut h = harness();
    let lights = demo_lights(&h, 2);
    let count = |h: &Harness<'_, App>| h.state().state.map.levels[0].objects.lights().len();
    let before = count(&h);
    h.get_by_label("5 Select").click();
    frames(&mut h);
    let objects = lights.iter().map(|(id, _)| ObjRef::Light(*id)).collect();
    h.state_mut().state.selection = Selection::Objects { level: 0, objects };
    let (_, pick) = pick_at_viewport_centre(&mut h);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::D);
    frames(&mut h);
    assert_eq!(count(&h), before + 2);
    assert_eq!(h.state().state.history.undo_name(), Some("Duplicate 2 objects"));
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::C);
    frames(&mut h);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::V);
    frames(&mut h);
    let s = &h.state().state;
    assert_eq!(count(&h), before + 4);
    assert_eq!((s.history.len(), s.history.undo_name()), (2, Some("Paste 2 objects")));
    // The pasted pair is centred just out of the hovered face.
    let at = tools::object::drop_point(s, &pick).unwrap();
    let newest: Vec<glam::Vec3> =
        s.map.levels[0].objects.lights().iter().map(|(_, l)| l.position).collect::<Vec<_>>()[before + 2..].to_vec();
    let centre = (newest[0] + newest[1]) / 2.0;
    assert!(centre.distance(at) < 1e-3, "pasted around {centre:?}, face point {at:?}");
}

// Working inside rooms (issue 16).

/// Add light and Add entity put the new object at the point under the view's centre.
#[test]
fn add_light_and_add_entity_place_the_object_under_the_view_centre() {
    let mut h = harness();
    let (_, pick) = pick_at_viewport_centre(&mut h);
    let at = tools::object::drop_point(&h.state().state, &pick).unwrap();
    h.get_by_label("Add light").click();
    frames(&mut h);
    let objects = &h.state().state.map.levels[0].objects;
    let (_, light) = objects.lights().iter().last().unwrap();
    assert!(light.position.distance(at) < 0.05, "the light is at {:?}, the view centre at {at:?}", light.position);
    h.get_by_label("Add entity").click();
    frames(&mut h);
    let objects = &h.state().state.map.levels[0].objects;
    let (_, e) = objects.entities().iter().last().unwrap();
    assert!(e.position().unwrap().distance(at) < 0.05, "the entity is at {:?}", e.position());
}

/// Selecting a light inside a closed room in the outliner frames it from inside the room: the
/// camera backs off only up to the wall behind it.
#[test]
fn framing_an_object_inside_a_room_keeps_the_camera_in_the_room() {
    use pmfedit_core::edit::{CubeOp, Edit, ObjItem};
    use pmfedit_core::map::coords::LatticeBox;
    use pmfedit_core::map::library::Light;
    use pmfedit_core::map::octree::Cube;
    let mut h = harness();
    let frame = h.state().state.map.levels[0].frame();
    let lattice = |x: f64, y: f64, z: f64| frame.lattice_from_world(glam::DVec3::new(x, y, z));
    // A closed 6×6×6 room (walls one unit thick) high above the demo.
    let outer = LatticeBox::new(lattice(-4.0, 40.0, -4.0), lattice(4.0, 48.0, 4.0));
    let inner = LatticeBox::new(lattice(-3.0, 41.0, -3.0), lattice(3.0, 47.0, 3.0));
    let stone = Cube::solid(Default::default(), Default::default(), Default::default());
    let commands = [
        Edit::Cubes { level: 0, op: CubeOp::FillBox { region: outer, cube: stone } },
        Edit::Cubes { level: 0, op: CubeOp::ClearBox { region: inner } },
        Edit::AddObject { level: 0, item: ObjItem::Light(Light::point("inside", glam::Vec3::new(0.0, 44.0, 0.0))) },
    ];
    h.state_mut().commands.extend(commands.map(pmfedit::command::Command::Edit));
    frames(&mut h);
    h.get_by_label("inside").click();
    frames(&mut h);
    let eye = h.state().viewport.camera.eye;
    let inside = (-3.0..3.0).contains(&eye.x) && (41.0..47.0).contains(&eye.y) && (-3.0..3.0).contains(&eye.z);
    assert!(inside, "the camera is at {eye:?}, outside the room");
    let pivot = h.state().viewport.camera.pivot();
    assert!(pivot.distance(glam::DVec3::new(0.0, 44.0, 0.0)) < 1e-6, "the light is framed: {pivot:?}");
}

/// C clips the view at the bottom of the hovered cube: faces above it are neither drawn nor
/// picked (the pointer reaches what is below); C again shows everything.
#[test]
fn the_clip_plane_cuts_away_what_is_above_the_hovered_cube() {
    let mut h = harness();
    let (centre, pick) = pick_at_viewport_centre(&mut h);
    let frame = h.state().state.map.levels[0].frame();
    let bottom = frame.world_from_lattice(pick.addr.min).y;
    h.key_press(egui::Key::C);
    frames(&mut h);
    assert_eq!(h.state().viewport.clip, Some(bottom));
    // The pointer now goes through the clipped cube to what lies below the plane, if anything.
    h.hover_at(centre + egui::vec2(1.0, 0.0));
    frames(&mut h);
    if let Some(p) = h.state().viewport.hovered() {
        let y = frame.world_from_lattice_f(p.point).y;
        assert!(y <= bottom + 1e-6, "picked a face at {y}, above the clip at {bottom}");
        assert_ne!(p.addr, pick.addr, "the clipped cube is still picked");
    }
    h.key_press(egui::Key::C);
    frames(&mut h);
    assert_eq!(h.state().viewport.clip, None);
    h.hover_at(centre);
    frames(&mut h);
    assert_eq!(h.state().viewport.hovered(), Some(&pick), "the cube is back");
}

/// H hides the selected box of cubes (the pointer reaches what is behind it), I shows only it;
/// either again shows everything.
#[test]
fn hide_and_isolate_a_selected_box() {
    use pmfedit::selection::Selection;
    let mut h = harness();
    let (centre, pick) = pick_at_viewport_centre(&mut h);
    let addr = pick.inside(h.state().state.cube_log2);
    h.state_mut().state.selection = Selection::Cube { level: pick.level, addr };
    h.key_press(egui::Key::H);
    frames(&mut h);
    assert!(h.state().viewport.filter.is_some_and(|f| !f.isolate));
    h.hover_at(centre + egui::vec2(1.0, 0.0));
    h.hover_at(centre);
    frames(&mut h);
    let behind = h.state().viewport.hovered().copied();
    assert!(
        behind.is_none_or(|p| p.inside(h.state().state.cube_log2) != addr),
        "the hidden cube is picked: {behind:?} {addr:?} {pick:?}"
    );
    h.key_press(egui::Key::H);
    frames(&mut h);
    assert!(h.state().viewport.filter.is_none());
    // Isolated, the selected cube is what the pointer finds; a cube beside it is not.
    h.key_press(egui::Key::I);
    frames(&mut h);
    assert!(h.state().viewport.filter.is_some_and(|f| f.isolate));
    h.hover_at(centre + egui::vec2(1.0, 0.0));
    h.hover_at(centre);
    frames(&mut h);
    assert_eq!(h.state().viewport.hovered().map(|p| p.inside(h.state().state.cube_log2)), Some(addr));
    h.hover_at(centre + egui::vec2(200.0, 0.0));
    frames(&mut h);
    let beside = h.state().viewport.hovered().map(|p| p.inside(h.state().state.cube_log2));
    assert!(beside.is_none_or(|a| a == addr), "a cube outside the isolated box is picked: {beside:?}");
    h.key_press(egui::Key::I);
    frames(&mut h);
    assert!(h.state().viewport.filter.is_none());
}

// Box select, Shift/Ctrl click in the view, hide/isolate of objects (issue 16).

/// Three lights, a prop and a load region on an empty map (the Select tool current); their refs
/// in table order: lights, the prop, the region.
fn objects_on_an_empty_map(h: &mut Harness<'_, App>) -> Vec<pmfedit_core::edit::ObjRef> {
    use pmfedit_core::edit::{Edit, ObjItem, ObjRef};
    use pmfedit_core::format::pmf::entity::{EntityData, Prop};
    use pmfedit_core::map::library::{EntityId, Light, LightId, LoadRegion, LoadRegionId, MapEntity};
    let v = glam::Vec3::new;
    let prop = Prop { position: [1.0, 1.0, 2.0], box_pos: [0.2; 3], box_neg: [-0.2; 3], ..Prop::default() };
    let items = [
        ObjItem::Light(Light::point("a", v(0.0, 1.0, 0.0))),
        ObjItem::Light(Light::point("b", v(3.0, 1.0, -2.0))),
        ObjItem::Light(Light::point("c", v(-4.0, 1.0, 5.0))),
        ObjItem::Entity(Box::new(MapEntity::new("p", EntityData::Prop(prop)))),
        ObjItem::LoadRegion(LoadRegion {
            name: "r".into(),
            min: v(5.0, 0.0, -6.0),
            max: v(7.0, 2.0, -4.0),
            ..LoadRegion::default()
        }),
    ];
    for item in items {
        h.state_mut().commands.push(pmfedit::command::Command::Edit(Edit::AddObject { level: 0, item }));
    }
    h.key_press(egui::Key::Num5);
    frames(h);
    assert_eq!(h.state().state.tool, tools::select::ID);
    let o = &h.state().state.map.levels[0].objects;
    let lights: Vec<LightId> = o.lights().iter().map(|(id, _)| id).collect();
    let entity: EntityId = o.entities().iter().map(|(id, _)| id).next().unwrap();
    let region: LoadRegionId = o.load_regions().iter().map(|(id, _)| id).next().unwrap();
    let mut refs: Vec<ObjRef> = lights.into_iter().map(ObjRef::Light).collect();
    refs.extend([ObjRef::Entity(entity), ObjRef::LoadRegion(region)]);
    assert_eq!(refs.len(), 5);
    refs
}

/// Where an object's marker is on screen.
fn screen_of_object(h: &Harness<'_, App>, obj: pmfedit_core::edit::ObjRef) -> egui::Pos2 {
    let p = obj.position(&h.state().state.map.levels[0].objects).unwrap();
    screen_of(h, p.as_dvec3())
}

/// The corners of a screen rectangle around the markers of `inside`, checked to hold none of
/// `outside`.
fn rect_around(
    h: &Harness<'_, App>,
    inside: &[pmfedit_core::edit::ObjRef],
    outside: &[pmfedit_core::edit::ObjRef],
) -> (egui::Pos2, egui::Pos2) {
    let points: Vec<egui::Pos2> = inside.iter().map(|o| screen_of_object(h, *o)).collect();
    let r = egui::Rect::from_points(&points).expand(12.0);
    for o in outside {
        let all: Vec<_> = inside.iter().chain(outside).map(|o| screen_of_object(h, *o)).collect();
        assert!(!r.contains(screen_of_object(h, *o)), "{o:?} is inside the test's rectangle {r:?}: {all:?}");
    }
    (r.left_top(), r.right_bottom())
}

/// A drag from `a` to `b` with `mods` held throughout.
fn drag_with(h: &mut Harness<'_, App>, mods: egui::Modifiers, a: egui::Pos2, b: egui::Pos2) {
    h.event(egui::Event::ModifiersChanged(mods));
    drag_on_view(h, a, b);
    h.event(egui::Event::ModifiersChanged(egui::Modifiers::NONE));
    frames(h);
}

/// A click at `at` with `mods` held.
fn click_with(h: &mut Harness<'_, App>, mods: egui::Modifiers, at: egui::Pos2) {
    drag_with(h, mods, at, at);
}

/// A click on an object's marker with `mods` held; the selection after.
fn click_object(
    h: &mut Harness<'_, App>,
    mods: egui::Modifiers,
    obj: pmfedit_core::edit::ObjRef,
) -> pmfedit::selection::Selection {
    let at = screen_of_object(h, obj);
    click_with(h, mods, at);
    h.state().state.selection.clone()
}

/// With the Select tool a drag over empty space selects every light, entity and region whose
/// marker is in the rectangle; Shift adds, Ctrl toggles, Esc cancels, a click on nothing
/// clears (it used to be Outliner-only: the view's drags only selected boxes of cubes).
#[test]
fn a_rectangle_over_empty_space_selects_the_objects_in_it() {
    use pmfedit::selection::Selection;
    let mut h = harness_on(empty_map());
    let o = objects_on_an_empty_map(&mut h);
    let steps = h.state().state.history.len();
    let (a, b) = rect_around(&h, &[o[0], o[1], o[3]], &[o[2], o[4]]);
    drag_on_view(&mut h, a, b);
    assert_eq!(h.state().state.selection, Selection::Objects { level: 0, objects: vec![o[0], o[1], o[3]] });
    assert_eq!(h.state().state.history.len(), steps, "selecting is no edit");
    // Shift adds the third light.
    let (a, b) = rect_around(&h, &[o[2]], &[o[0], o[1], o[3], o[4]]);
    drag_with(&mut h, egui::Modifiers::SHIFT, a, b);
    assert_eq!(h.state().state.selection, Selection::Objects { level: 0, objects: vec![o[0], o[1], o[3], o[2]] });
    // Ctrl toggles: the second light leaves, the region (its centre) joins.
    let (a, b) = rect_around(&h, &[o[1], o[4]], &[o[0], o[2], o[3]]);
    drag_with(&mut h, egui::Modifiers::COMMAND, a, b);
    let toggled = Selection::Objects { level: 0, objects: vec![o[0], o[3], o[2], o[4]] };
    assert_eq!(h.state().state.selection, toggled);
    // Esc during the drag drops it: the selection stays.
    let (a, b) = rect_around(&h, &[o[1]], &[o[0], o[2], o[3], o[4]]);
    h.hover_at(a);
    frames(&mut h);
    h.drag_at(a);
    frames(&mut h);
    h.hover_at(b);
    frames(&mut h);
    h.key_press(egui::Key::Escape);
    frames(&mut h);
    h.drop_at(b);
    frames(&mut h);
    assert_eq!(h.state().state.selection, toggled);
    assert!(status(&h).contains("Box select cancelled"), "{}", status(&h));
    // A plain click on nothing clears the selection, as before.
    let rect = h.state().viewport_rect.unwrap();
    click_with(&mut h, egui::Modifiers::NONE, rect.center_top() + egui::vec2(0.0, 80.0));
    assert_eq!(h.state().state.selection, Selection::None);
}

/// In the top view a plain drag that starts on a face still selects a box of cubes; with Shift
/// (or Ctrl) the same drag selects the objects over it instead.
#[test]
fn in_the_top_view_shift_drag_selects_objects_over_cubes_and_a_plain_drag_cubes() {
    use pmfedit::selection::Selection;
    use pmfedit_core::edit::{CubeOp, Edit};
    use pmfedit_core::map::coords::LatticeBox;
    use pmfedit_core::map::octree::Cube;
    let mut h = harness_on(empty_map());
    let o = objects_on_an_empty_map(&mut h);
    // A floor under every object.
    let frame = h.state().state.map.levels[0].frame();
    let lattice = |x: f64, y: f64, z: f64| frame.lattice_from_world(glam::DVec3::new(x, y, z));
    let floor = LatticeBox::new(lattice(-8.0, -1.0, -8.0), lattice(8.0, 0.0, 8.0));
    let stone = Cube::solid(Default::default(), Default::default(), Default::default());
    let fill = Edit::Cubes { level: 0, op: CubeOp::FillBox { region: floor, cube: stone } };
    h.state_mut().commands.push(pmfedit::command::Command::Edit(fill));
    h.key_press(egui::Key::F6);
    frames(&mut h);
    assert!(h.state().viewport.camera.ortho.is_some());
    let (a, b) = rect_around(&h, &[o[0], o[1]], &[o[2], o[3], o[4]]);
    drag_with(&mut h, egui::Modifiers::SHIFT, a, b);
    assert_eq!(h.state().state.selection, Selection::Objects { level: 0, objects: vec![o[0], o[1]] });
    drag_on_view(&mut h, a, b);
    assert!(matches!(h.state().state.selection, Selection::Cubes { .. }), "{:?}", h.state().state.selection);
}

/// Shift+click on two light markers in the view selects both; Ctrl+click on one again takes it
/// out (the other tests select several objects through the Outliner).
#[test]
fn shift_and_ctrl_click_on_markers_in_the_view_add_and_remove_objects() {
    use pmfedit::selection::Selection;
    use pmfedit_core::map::library::LightId;
    let mut h = harness_on(empty_map());
    let o = objects_on_an_empty_map(&mut h);
    let id = |i: usize| match o[i] {
        pmfedit_core::edit::ObjRef::Light(id) => id,
        _ => unreachable!(),
    };
    let light = |id: LightId| Selection::Light { level: 0, id };
    let steps = h.state().state.history.len();
    assert_eq!(click_object(&mut h, egui::Modifiers::SHIFT, o[0]), light(id(0)));
    assert_eq!(
        click_object(&mut h, egui::Modifiers::SHIFT, o[1]),
        Selection::Objects { level: 0, objects: vec![o[0], o[1]] }
    );
    assert_eq!(click_object(&mut h, egui::Modifiers::COMMAND, o[0]), light(id(1)));
    // A plain click on a marker selects it alone.
    assert_eq!(click_object(&mut h, egui::Modifiers::NONE, o[2]), light(id(2)));
    assert_eq!(h.state().state.history.len(), steps, "clicks move nothing");
}

/// H hides the selected objects (deselected, not drawn, not picked, not box-selected) and says
/// how many; I shows only the selected ones; either again shows everything.
#[test]
fn hide_and_isolate_selected_objects() {
    use pmfedit::selection::Selection;
    let mut h = harness_on(empty_map());
    let o = objects_on_an_empty_map(&mut h);
    let click = |h: &mut Harness<'_, App>, i: usize| click_object(h, egui::Modifiers::NONE, o[i]);
    h.state_mut().state.selection = Selection::Objects { level: 0, objects: vec![o[0], o[1], o[3]] };
    h.key_press(egui::Key::H);
    frames(&mut h);
    assert!(status(&h).contains("Hidden 3 objects"), "{}", status(&h));
    assert_eq!(h.state().state.selection, Selection::None, "hidden objects are deselected");
    assert_eq!(click(&mut h, 0), Selection::None, "a hidden light is picked");
    assert_eq!(click(&mut h, 2), Selection::of_object(0, o[2]), "a shown light is not picked");
    // A rectangle over everything takes only what shows.
    let (a, b) = rect_around(&h, &o, &[]);
    let rect = h.state().viewport_rect.unwrap();
    let (a, b) = (a.max(rect.min + egui::vec2(2.0, 40.0)), b.min(rect.max - egui::vec2(2.0, 2.0)));
    drag_on_view(&mut h, a, b);
    assert_eq!(h.state().state.selection, Selection::Objects { level: 0, objects: vec![o[2], o[4]] });
    h.key_press(egui::Key::H);
    frames(&mut h);
    assert!(status(&h).contains("Showing everything"), "{}", status(&h));
    assert_eq!(click(&mut h, 0), Selection::of_object(0, o[0]), "shown again");
    // Isolate: only the selected light shows; the cubes are not touched.
    h.key_press(egui::Key::I);
    frames(&mut h);
    assert!(status(&h).contains("Isolated 1 object"), "{}", status(&h));
    assert!(h.state().viewport.filter.is_none(), "isolating objects leaves the cubes shown");
    assert_eq!(click(&mut h, 1), Selection::None, "an object outside the isolated ones is picked");
    assert_eq!(click(&mut h, 0), Selection::of_object(0, o[0]));
    h.key_press(egui::Key::I);
    frames(&mut h);
    assert!(h.state().viewport.object_filter.is_none());
}

// Typed fields that snap or clamp say so (issue 16).

/// The view bar's work plane field: a typed height snaps to the grid and says so, one too far
/// is clamped and says so; PageUp moves the plane and the field follows.
#[test]
fn the_work_plane_field_snaps_a_typed_height_and_follows_page_up() {
    let mut h = harness_on(empty_map());
    retype(&mut h, "Work plane", "2.3");
    assert_eq!(h.state().state.work_point.y, 2.0);
    h.get_by_label("2.3 snapped to the grid: 2");
    retype(&mut h, "Work plane", "1e6");
    assert_eq!(h.state().state.work_point.y, 4000.0);
    h.get_by_label("1000000 is above the maximum: set to 4000");
    retype(&mut h, "Work plane", "-3");
    assert_eq!(h.state().state.work_point.y, -3.0);
    assert!(h.query_by_label_contains("snapped to the grid").is_none(), "a plain value clears the note");
    h.key_press(egui::Key::PageUp);
    frames(&mut h);
    assert_eq!(h.state().state.work_point.y, -2.0);
    let shown = h.get_by_label("Work plane").value().unwrap_or_default();
    assert!(shown.starts_with("-2"), "the field shows {shown:?}");
}

/// The level's chunk size field clamps a typed power of two to 0..=15 and says so beside it (it
/// used to clamp without a word).
#[test]
fn the_chunk_size_field_says_when_it_clamps() {
    let mut h = harness_on(empty_map());
    h.get_by_label("Level").click();
    frames(&mut h);
    retype_number(&mut h, "Chunk size", "20");
    assert_eq!(h.state().state.map.levels[0].chunk_size_log2(), 15);
    h.get_by_label("20 is above the maximum: set to 15");
}

/// At 1280×800 (the CI screenshot's size) the view bar wraps onto a second row; the heads-up
/// text starts below every row of it (the second row used to cover the first heads-up lines).
#[test]
fn the_heads_up_text_starts_below_the_wrapped_view_bar() {
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_eframe(|cc| App::new(cc, &launch(), Document::sample(Sample::Demo)));
    h.run_steps(4);
    let first = h.get_by_label("Lit").rect();
    let bar: Vec<egui::Rect> =
        ["Lit", "Textures", "Objects", "Regions", "Work plane"].into_iter().map(|l| h.get_by_label(l).rect()).collect();
    assert!(bar.iter().any(|r| r.top() > first.bottom()), "the bar fits one row at 1280×800: {bar:?}");
    let hud = h.state().viewport.hud_top();
    for r in bar {
        assert!(hud >= r.bottom(), "the heads-up text at y {hud} overlaps the view bar's {r:?}");
    }
}

/// An editor with nothing to do draws nothing: once the demo's bakes are in, the UI goes idle
/// (`run()` ends) and stays idle until something happens. The window title used to be sent
/// every frame, and a viewport command asks for the next frame at once, so the editor drew
/// without pause (a core under software GL).
#[test]
fn an_idle_editor_stops_drawing() {
    let mut h = harness();
    let deadline = std::time::Instant::now() + Duration::from_secs(600);
    while !h.state().state.bake.is_settled() {
        assert!(std::time::Instant::now() < deadline, "the demo's bakes did not finish");
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    // Within kittest's 4 steps.
    h.try_run().expect("an idle editor asks for no more frames");
    // Something to show (a panel opened) draws again, then idles again.
    h.get_by_label("Materials").click();
    assert!(h.try_run().is_ok(), "idle again after the click");
    assert!(h.get_by_label("Add material").rect().width() > 0.0);
}

/// The Bake tab says how far the idle warm-up of the light memos around the view got: after the
/// view moves to other chunks whose memos are gone, the chunks around it are warmed up and
/// counted there.
#[test]
fn the_bake_tab_shows_the_light_warmed_up_around_the_view() {
    let mut h = harness();
    let deadline = std::time::Instant::now() + Duration::from_secs(600);
    while !h.state().state.bake.is_final() || !h.state().state.warm_requested() {
        assert!(std::time::Instant::now() < deadline, "the full bakes did not finish");
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    // As after an open from the bake cache: no memo anywhere. Then look at another corner.
    h.state().state.bake.light_cache().clear();
    let level = &h.state().state.map.levels[0];
    let (lo, hi) = level.occupied_bounds().unwrap();
    let (a, b) = (level.frame().chunk_center_world(lo), level.frame().chunk_center_world(hi));
    let target = if h.state().state.view_point.is_some_and(|p| p.distance(a) < p.distance(b)) { b } else { a };
    h.state_mut().state.camera_request = Some((target, 30.0));
    h.get_by_label("Bake").click();
    while !matches!(h.state().state.bake.warm_ups(), (1.., 0, false)) {
        assert!(std::time::Instant::now() < deadline, "no warm-up: {:?}", h.state().state.bake.warm_ups());
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    frames(&mut h);
    let (warmed, _, _) = h.state().state.bake.warm_ups();
    h.get_by_label(&format!("light warmed up around the view: {warmed} chunks"));
}
