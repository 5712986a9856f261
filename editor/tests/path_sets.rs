//! The path attribute set form (Map info tab): sets are added, named, given a facing and chosen
//! for the path tool through it, each change one undo step.

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use pmfedit::app::App;
use pmfedit::launch::{Document, Launch, Sample};
use pmfedit_core::map::ids::PathAttrs;
use pmfedit_core::map::path_sets::PathSet;

fn frames(h: &mut Harness<'_, App>) {
    h.run_steps(3);
}

#[test]
fn a_set_is_added_named_faced_and_painted() {
    let launch = Launch { assets: pmfedit::watch::assets_dir(), ..Launch::default() };
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 1000.0))
        .build_eframe(|cc| App::new(cc, &launch, Document::sample(Sample::Demo)));
    frames(&mut h);
    h.get_by_label("Map info").click();
    frames(&mut h);
    h.get_by_label("Add set").click();
    frames(&mut h);
    let sets = |h: &Harness<'_, App>| h.state().state.map.path_sets.clone();
    assert_eq!(sets(&h).get(PathAttrs(1)), Some(&PathSet::new("set_1")));
    assert_eq!(h.state().state.path_set, PathAttrs(1), "the new set is the one the path tool paints");

    // Named: a typed name is one step.
    h.get_by_label("Set 1").focus();
    frames(&mut h);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.get_by_label("Set 1").type_text("guard_post");
    frames(&mut h);
    h.key_press(egui::Key::Enter);
    frames(&mut h);
    assert_eq!(sets(&h).get(PathAttrs(1)).map(|s| s.name.as_str()), Some("guard_post"));

    // Faced: the default facing is −Z; a component can be set.
    h.get_by_label("Facing").click();
    frames(&mut h);
    assert_eq!(sets(&h).get(PathAttrs(1)).and_then(|s| s.facing), Some([0.0, 0.0, -1.0]));
    h.get_by_label("Set 1 facing X").set_value_accesskit(1.0);
    frames(&mut h);
    assert_eq!(sets(&h).get(PathAttrs(1)).and_then(|s| s.facing), Some([1.0, 0.0, -1.0]));

    // A typed component outside −1..1 is clamped and says so beside the field.
    h.get_by_label("Set 1 facing Y").focus();
    frames(&mut h);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.get_by_label("Set 1 facing Y").type_text("5");
    frames(&mut h);
    h.key_press(egui::Key::Enter);
    frames(&mut h);
    assert_eq!(sets(&h).get(PathAttrs(1)).and_then(|s| s.facing), Some([1.0, 1.0, -1.0]));
    h.get_by_label("5 is above the maximum: set to 1");

    let names: Vec<String> = h.state().state.history.entries().map(|e| e.name.to_owned()).collect();
    assert!(names.len() >= 3 && names.iter().all(|n| n == "Edit path attribute sets"), "{names:?}");
    // Undo goes back through them.
    h.state_mut().commands.push(pmfedit::command::Command::Undo);
    frames(&mut h);
    assert_eq!(sets(&h).get(PathAttrs(1)).and_then(|s| s.facing), Some([1.0, 0.0, -1.0]));
    h.state_mut().commands.push(pmfedit::command::Command::Undo);
    frames(&mut h);
    assert_eq!(sets(&h).get(PathAttrs(1)).and_then(|s| s.facing), Some([0.0, 0.0, -1.0]));
}
