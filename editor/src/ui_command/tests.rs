//! The command table: key events looked up with their own modifiers, no key bound twice, the
//! README's table in step with the table.

use std::collections::HashSet;

use super::*;

fn press(modifiers: Modifiers, key: Key) -> KeyboardShortcut {
    KeyboardShortcut::new(modifiers, key)
}

fn key_event(modifiers: Modifiers, key: Key) -> egui::Event {
    egui::Event::Key { key, physical_key: None, pressed: true, repeat: false, modifiers }
}

/// Every key (with its modifiers) an entry answers to, digits spelled out.
fn shortcuts_of(e: &Entry) -> Vec<KeyboardShortcut> {
    const DIGITS: [Key; 9] =
        [Key::Num1, Key::Num2, Key::Num3, Key::Num4, Key::Num5, Key::Num6, Key::Num7, Key::Num8, Key::Num9];
    match e.trigger {
        Trigger::None | Trigger::Gesture(_) => Vec::new(),
        Trigger::Key(k) => vec![k],
        Trigger::Either(a, b) => vec![a, b],
        Trigger::Digits(m) => DIGITS.iter().map(|k| press(m, *k)).collect(),
    }
}

#[test]
fn a_digit_runs_what_its_own_modifiers_say() {
    let hit = |m: Modifiers, k: Key| find(&press(m, k), Scope::View).map(|(e, d)| (e.action, d));
    assert_eq!(hit(Modifiers::NONE, Key::Num2), Some((Action::Tool(tools::erase::ID), None)));
    assert_eq!(hit(Modifiers::COMMAND, Key::Num2), Some((Action::Shading(Shading::Fullbright), None)));
    // What egui-winit sends for Ctrl on Linux and Windows.
    let ctrl = Modifiers::CTRL.plus(Modifiers::COMMAND);
    assert_eq!(hit(ctrl, Key::Num2), Some((Action::Shading(Shading::Fullbright), None)));
    assert_eq!(hit(Modifiers::ALT, Key::Num2), Some((Action::RecallBookmark, Some(2))));
    assert_eq!(hit(Modifiers::COMMAND.plus(Modifiers::ALT), Key::Num7), Some((Action::StoreBookmark, Some(7))));
    assert_eq!(hit(Modifiers::SHIFT, Key::Num2), None, "Shift+2 is nothing");
    assert_eq!(hit(Modifiers::COMMAND, Key::Num9), None, "there are five shadings");
    // Always-scope entries are not found among the view's, and the other way round.
    assert!(find(&press(Modifiers::COMMAND, Key::Z), Scope::View).is_none());
    let redo = |m: Modifiers, k: Key| find(&press(m, k), Scope::Always).map(|(e, _)| e.action);
    assert_eq!(redo(Modifiers::COMMAND, Key::Z), Some(Action::Undo));
    assert_eq!(redo(Modifiers::COMMAND.plus(Modifiers::SHIFT), Key::Z), Some(Action::Redo));
    assert_eq!(redo(Modifiers::COMMAND, Key::Y), Some(Action::Redo));
}

#[test]
fn key_events_keep_the_modifiers_they_came_with() {
    // A fast Ctrl+2 tap: the event says Ctrl even if the frame's modifier state is already
    // back to none; it must never read as a bare 2.
    let events = [
        key_event(Modifiers::COMMAND, Key::Num2),
        egui::Event::ModifiersChanged(Modifiers::NONE),
        key_event(Modifiers::COMMAND, Key::Num2),
        egui::Event::Copy,
        key_event(Modifiers::COMMAND, Key::C),
        egui::Event::Key { key: Key::M, physical_key: None, pressed: false, repeat: false, modifiers: Modifiers::NONE },
    ];
    let pressed: Vec<KeyboardShortcut> = pressed_keys(&events).iter().map(|p| p.shortcut).collect();
    assert_eq!(
        pressed,
        [press(Modifiers::COMMAND, Key::Num2), press(Modifiers::COMMAND, Key::C)],
        "one of each, releases ignored"
    );
    assert_eq!(find(&pressed[0], Scope::View).map(|(e, _)| e.action), Some(Action::Shading(Shading::Fullbright)));
    // The system paste event is Ctrl+V for the Select tool.
    let paste = pressed_keys(&[egui::Event::Paste("x".into())]);
    let key = tool_key(&tools::select::INFO, &paste[0].shortcut).expect("Ctrl+V is a Select key");
    assert_eq!(key.shortcut, press(Modifiers::COMMAND, Key::V));
    assert!(tool_key(&tools::place::INFO, &paste[0].shortcut).is_none());
}

/// Adds `k` (doing `what`) to `seen`; fails if it is there already.
fn bind(seen: &mut Vec<(KeyboardShortcut, &'static str)>, k: KeyboardShortcut, what: &'static str) {
    let clash = seen.iter().find(|(s, _)| s.logical_key == k.logical_key && s.modifiers.matches_exact(k.modifiers));
    if let Some((_, other)) = clash {
        panic!("{} is bound to both {what} and {other}", shortcut_text(&k));
    }
    seen.push((k, what));
}

#[test]
fn no_key_runs_two_things() {
    let mut seen = Vec::new();
    for e in COMMANDS {
        for k in shortcuts_of(e) {
            bind(&mut seen, k, e.label);
        }
    }
    // A tool's own keys may repeat another tool's, never a table key.
    for t in tools() {
        let mut mine = seen.clone();
        for k in t.keys {
            bind(&mut mine, k.shortcut, k.label);
        }
    }
}

#[test]
fn tools_have_distinct_ids_and_keys_and_their_own_info() {
    let infos: Vec<&ToolInfo> = tools().collect();
    assert_eq!(infos.len(), 9);
    let ids: HashSet<ToolId> = infos.iter().map(|t| t.id).collect();
    let keys: HashSet<Key> = infos.iter().map(|t| t.key).collect();
    assert_eq!((ids.len(), keys.len()), (9, 9));
    for t in infos {
        let made = (t.make)();
        assert_eq!(made.info().id, t.id, "{} makes another tool", t.label);
        assert!(!t.tooltip.is_empty());
    }
    assert_eq!(entry(Action::Tool(tools::place::ID)).map(Entry::keys_text).as_deref(), Some("1"));
}

#[test]
fn keys_read_the_same_everywhere() {
    let text = |a: Action| entry(a).map(Entry::keys_text).unwrap_or_default();
    assert_eq!(text(Action::SaveAs), "Ctrl+Shift+S");
    assert_eq!(text(Action::Redo), "Ctrl+Shift+Z / Ctrl+Y");
    assert_eq!(text(Action::CubeSmaller), "[");
    assert_eq!(text(Action::StoreBookmark), "Ctrl+Alt+1–9");
    assert_eq!(text(Action::RecallBookmark), "Alt+1–9");
    assert_eq!(text(Action::Shading(Shading::Visibility)), "Ctrl+5");
    assert_eq!(text(Action::OpenRecent), "");
    // The F1 list has every entry and every tool key; the README every one with keys.
    let rows = rows();
    let tool_keys: usize = tools().map(|t| t.keys.len()).sum();
    assert_eq!(rows.len(), COMMANDS.len() + tool_keys);
    assert!(rows.iter().any(|r| r.keys == ["Shift+M"] && r.command == "Select tool"));
    let table = readme_table();
    assert!(table.contains("| `Ctrl+Shift+Z` / `Ctrl+Y` | Redo |"), "{table}");
    assert!(table.contains("| right mouse drag + W/A/S/D | Fly |"), "{table}");
    assert!(!table.contains("Open recent"), "menu-only entries are not keys");
}

/// Where the README's table sits.
const README_START: &str = "<!-- keys: generated from editor/src/ui_command.rs -->\n";
const README_END: &str = "<!-- /keys -->";

/// The README's key table is the command table's. `PMFEDIT_BLESS=1 cargo test -p pmfedit --lib
/// readme` writes it there.
#[test]
fn readme_key_table_matches_the_command_table() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md");
    let start = readme.find(README_START).expect("README has the keys start marker") + README_START.len();
    let end = start + readme[start..].find(README_END).expect("README has the keys end marker");
    let table = readme_table();
    if std::env::var_os("PMFEDIT_BLESS").is_some() {
        std::fs::write(&path, format!("{}{table}{}", &readme[..start], &readme[end..])).expect("write README.md");
        return;
    }
    assert_eq!(
        readme[start..end],
        table,
        "README.md's key table differs from the command table; regenerate it with \
         `PMFEDIT_BLESS=1 cargo test -p pmfedit --lib readme`"
    );
}
