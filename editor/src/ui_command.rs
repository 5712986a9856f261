//! The one table of what the user can ask for ([`COMMANDS`]): every menu command, shortcut,
//! tool and viewport gesture, each with its label, tooltip and keys. The app derives from it
//! the menus (File, Edit, View, Help: their command items), the toolbar (one button per tool
//! entry), the key handling (a key event is looked up here, with the modifiers it came with),
//! and the F1 list; the README's key table is rendered from it ([`readme_table`]) and a test
//! fails when the README disagrees.
//!
//! Adding a command: one [`Entry`] here and its arm in `App::run`. Adding a tool: one
//! `Entry::tool(&tools::NAME::INFO)` line (see [`crate::tools`]).

use eframe::egui::{self, Key, KeyboardShortcut, ModifierNames, Modifiers};

use crate::command::ToolId;
use crate::tools::{self, ToolInfo, ToolKey};
use crate::viewport::camera::OrthoView;
use crate::viewport::render::Shading;

/// What an entry does when it runs (`App::run` carries it out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    New,
    Open,
    /// The File → Open recent list (a submenu; nothing to run by itself).
    OpenRecent,
    Save,
    SaveAs,
    Export,
    ImportM3d,
    ImportVoxelPlay,
    Quit,
    Undo,
    Redo,
    /// Delete the selected object, region or box of cubes.
    Delete,
    /// Point the camera at the selection.
    Frame,
    /// Paint every face of the selected box with the current material.
    PaintSelection,
    /// Cut away everything above the hovered cube (again: show everything).
    Clip,
    /// Hide the selected box of cubes or objects (again: show everything).
    Hide,
    /// Show only the selected box of cubes, or only the selected objects (again: show everything).
    Isolate,
    /// Esc: cancel the drag in progress.
    Cancel,
    CubeSmaller,
    CubeBigger,
    Shading(Shading),
    /// The camera's view: perspective (`None`) or an orthographic one.
    View(Option<OrthoView>),
    /// Move the work plane one cube along its axis (up in the perspective and top views).
    WorkPlaneUp,
    /// Move the work plane one cube back along its axis.
    WorkPlaneDown,
    /// Ctrl+Alt+digit: store the camera in that bookmark slot.
    StoreBookmark,
    /// Alt+digit: jump to that bookmark slot.
    RecallBookmark,
    /// F1: the list of every entry.
    Shortcuts,
    /// Make this tool the current one.
    Tool(ToolId),
    /// A mouse gesture the viewport handles itself: listed, never run.
    Gesture,
}

/// The menus of the menu bar, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Menu {
    File,
    Edit,
    View,
    Help,
}

impl Menu {
    /// Every menu, left to right.
    pub const ALL: [Menu; 4] = [Menu::File, Menu::Edit, Menu::View, Menu::Help];

    /// Its title in the menu bar.
    pub fn label(self) -> &'static str {
        match self {
            Menu::File => "File",
            Menu::Edit => "Edit",
            Menu::View => "View",
            Menu::Help => "Help",
        }
    }
}

/// Where an entry sits in the menu bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MenuItem {
    pub menu: Menu,
    /// Inside this submenu of `menu` (consecutive entries with the same one share it).
    pub submenu: Option<&'static str>,
    /// A separator goes before it.
    pub separator: bool,
}

/// When an entry's keys work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Always, even while a text field has the keyboard (the key is taken before any widget
    /// sees it).
    Always,
    /// While no text field has the keyboard; looked up after the viewport has picked this
    /// frame's face.
    View,
}

/// What runs an entry besides its menu item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// Nothing (menus only).
    None,
    /// A key with exactly these modifiers.
    Key(KeyboardShortcut),
    /// Either of two keys.
    Either(KeyboardShortcut, KeyboardShortcut),
    /// Digit keys 1–9 with exactly these modifiers; the digit is the argument.
    Digits(Modifiers),
    /// A mouse gesture (documented; the viewport handles it).
    Gesture(&'static str),
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub action: Action,
    /// Menu item / toolbar / F1 name.
    pub label: &'static str,
    /// What it does (hover text, the F1 list, the README).
    pub tooltip: &'static str,
    pub trigger: Trigger,
    pub scope: Scope,
    pub menu: Option<MenuItem>,
    /// The tool it picks (the F1 list and the README list that tool's own keys after it).
    pub tool: Option<&'static ToolInfo>,
}

impl Entry {
    /// `action`, without keys or a menu place yet.
    const fn new(action: Action, label: &'static str, tooltip: &'static str) -> Self {
        Self { action, label, tooltip, trigger: Trigger::None, scope: Scope::View, menu: None, tool: None }
    }

    /// Run by `key` with exactly `modifiers`.
    const fn key(mut self, modifiers: Modifiers, key: Key) -> Self {
        self.trigger = Trigger::Key(KeyboardShortcut::new(modifiers, key));
        self
    }

    /// Run by either of two keys.
    const fn either(mut self, a: (Modifiers, Key), b: (Modifiers, Key)) -> Self {
        self.trigger = Trigger::Either(KeyboardShortcut::new(a.0, a.1), KeyboardShortcut::new(b.0, b.1));
        self
    }

    /// Run by the digit keys 1–9 with exactly `modifiers`.
    const fn digits(mut self, modifiers: Modifiers) -> Self {
        self.trigger = Trigger::Digits(modifiers);
        self
    }

    /// A mouse gesture, described as `how`.
    const fn gesture(mut self, how: &'static str) -> Self {
        self.trigger = Trigger::Gesture(how);
        self
    }

    /// Keys that work even while typing.
    const fn always(mut self) -> Self {
        self.scope = Scope::Always;
        self
    }

    /// An item of `menu`.
    const fn menu(mut self, menu: Menu) -> Self {
        self.menu = Some(MenuItem { menu, submenu: None, separator: false });
        self
    }

    /// An item of `menu` after a separator.
    const fn menu_after_separator(mut self, menu: Menu) -> Self {
        self.menu = Some(MenuItem { menu, submenu: None, separator: true });
        self
    }

    /// An item of the submenu `submenu` of `menu`.
    const fn submenu(mut self, menu: Menu, submenu: &'static str) -> Self {
        self.menu = Some(MenuItem { menu, submenu: Some(submenu), separator: false });
        self
    }

    /// A shading of the view: Ctrl + `key`, a View menu item.
    const fn shading(shading: Shading, key: Key, tooltip: &'static str) -> Self {
        Self::new(Action::Shading(shading), shading.label(), tooltip).key(Modifiers::COMMAND, key).menu(Menu::View)
    }

    /// The entry of a tool: its toolbar button and the key (no modifiers) that picks it.
    pub const fn tool(info: &'static ToolInfo) -> Self {
        let mut e = Self::new(Action::Tool(info.id), info.label, info.tooltip).key(Modifiers::NONE, info.key);
        e.tool = Some(info);
        e
    }

    /// The keys (or gesture) as menus and the toolbar show them: `Ctrl+Shift+Z / Ctrl+Y`,
    /// `Alt+1–9`; empty for menu-only entries.
    pub fn keys_text(&self) -> String {
        match self.trigger {
            Trigger::None => String::new(),
            Trigger::Key(k) => shortcut_text(&k),
            Trigger::Either(a, b) => format!("{} / {}", shortcut_text(&a), shortcut_text(&b)),
            Trigger::Digits(m) => format!("{}1–9", modifiers_text(m)),
            Trigger::Gesture(how) => how.to_owned(),
        }
    }

    /// Whether `pressed` (a key with the modifiers it came with) runs this entry, and with
    /// which digit for digit entries.
    pub fn matches(&self, pressed: &KeyboardShortcut) -> Option<Option<u8>> {
        let exact = |k: &KeyboardShortcut| k.logical_key == pressed.logical_key && is_exactly(pressed, k.modifiers);
        match self.trigger {
            Trigger::Key(k) if exact(&k) => Some(None),
            Trigger::Either(a, b) if exact(&a) || exact(&b) => Some(None),
            Trigger::Digits(m) => digit(pressed.logical_key).filter(|_| is_exactly(pressed, m)).map(Some),
            _ => None,
        }
    }
}

/// Every command, key, tool and gesture. Order matters: menus list their items in this order.
pub const COMMANDS: &[Entry] = &[
    // File
    Entry::new(Action::New, "New", "Start a new map with the default asset pack (asks about unsaved changes first)")
        .key(Modifiers::COMMAND, Key::N)
        .always()
        .menu(Menu::File),
    Entry::new(Action::Open, "Open…", "Open a project folder (offers its recovery snapshot when that is newer)")
        .key(Modifiers::COMMAND, Key::O)
        .always()
        .menu(Menu::File),
    Entry::new(Action::OpenRecent, "Open recent", "Open one of the projects opened last").menu(Menu::File),
    Entry::new(Action::Save, "Save", "Save the project (a new map asks for a folder)")
        .key(Modifiers::COMMAND, Key::S)
        .always()
        .menu_after_separator(Menu::File),
    Entry::new(Action::SaveAs, "Save As…", "Save the map as a new project folder")
        .key(Modifiers::COMMAND.plus(Modifiers::SHIFT), Key::S)
        .always()
        .menu(Menu::File),
    Entry::new(Action::Export, "Export PMF…", "Compile the map to a .pmf file once every chunk's full bake is done")
        .key(Modifiers::COMMAND, Key::E)
        .always()
        .menu(Menu::File),
    Entry::new(
        Action::ImportM3d,
        "Model 3D (.m3d)…",
        "Import a Model 3D file's voxels or meshes (runs in the background; one undo step)",
    )
    .submenu(Menu::File, "Import"),
    Entry::new(
        Action::ImportVoxelPlay,
        "Voxel Play world…",
        "Import a Voxel Play world save (runs in the background; one undo step)",
    )
    .submenu(Menu::File, "Import"),
    Entry::new(Action::Quit, "Quit", "Close the editor (asks about unsaved changes first)")
        .menu_after_separator(Menu::File),
    // Edit
    Entry::new(Action::Undo, "Undo", "Undo the last step (a drag is one step; an import too)")
        .key(Modifiers::COMMAND, Key::Z)
        .always()
        .menu(Menu::Edit),
    Entry::new(Action::Redo, "Redo", "Redo the step undone last")
        .either((Modifiers::COMMAND.plus(Modifiers::SHIFT), Key::Z), (Modifiers::COMMAND, Key::Y))
        .always()
        .menu(Menu::Edit),
    Entry::new(Action::Delete, "Delete selection", "Delete the selected light, entity, region or box of cubes")
        .key(Modifiers::NONE, Key::Delete)
        .menu_after_separator(Menu::Edit),
    Entry::new(
        Action::Frame,
        "Frame selection",
        "Point the camera at the selection (nothing selected: at the point under the pointer)",
    )
    .key(Modifiers::NONE, Key::F)
    .menu(Menu::Edit),
    Entry::new(
        Action::PaintSelection,
        "Paint selection",
        "Paint every face of the selected box of cubes with the current material (one undo step)",
    )
    .key(Modifiers::NONE, Key::P)
    .menu(Menu::Edit),
    Entry::new(
        Action::Cancel,
        "Cancel drag",
        "Cancel the drag in progress: a box, a paint, path or corner stroke, a gizmo; nothing of it is applied",
    )
        .key(Modifiers::NONE, Key::Escape),
    Entry::new(Action::CubeSmaller, "Smaller cube", "Halve the edge of the cubes the tools place, erase and select")
        .key(Modifiers::NONE, Key::OpenBracket),
    Entry::new(Action::CubeBigger, "Bigger cube", "Double the edge of the cubes the tools place, erase and select")
        .key(Modifiers::NONE, Key::CloseBracket),
    // View
    Entry::shading(Shading::Lit, Key::Num1, "Material colours × the baked lightmaps: what the game shows"),
    Entry::shading(Shading::Fullbright, Key::Num2, "Material colours with a fixed shade, no lightmaps"),
    Entry::shading(Shading::Wireframe, Key::Num3, "Dark faces with bright triangle edges"),
    Entry::shading(Shading::Lightmap, Key::Num4, "The baked luxels alone, raw, as exported"),
    Entry::shading(
        Shading::Visibility,
        Key::Num5,
        "What the air cube in front of the hovered face sees (compiled visibility data)",
    ),
    Entry::new(Action::View(None), "Perspective", "The perspective camera (fly, orbit)")
        .key(Modifiers::NONE, Key::F5)
        .menu_after_separator(Menu::View),
    Entry::new(
        Action::View(Some(OrthoView::Top)),
        "Top view",
        "Look straight down, orthographic: boxes are drawn on the work plane at their true size",
    )
    .key(Modifiers::NONE, Key::F6)
    .menu(Menu::View),
    Entry::new(
        Action::View(Some(OrthoView::Front)),
        "Front view",
        "Look along +Z, orthographic: boxes are drawn on the vertical work plane",
    )
    .key(Modifiers::NONE, Key::F7)
    .menu(Menu::View),
    Entry::new(
        Action::View(Some(OrthoView::Side)),
        "Side view",
        "Look along +X, orthographic: boxes are drawn on the vertical work plane",
    )
    .key(Modifiers::NONE, Key::F8)
    .menu(Menu::View),
    Entry::new(
        Action::WorkPlaneUp,
        "Work plane up",
        "Move the work plane (the ground grid tools draw on) one cube up, or towards the camera in the front and side views",
    )
    .key(Modifiers::NONE, Key::PageUp)
    .menu_after_separator(Menu::View),
    Entry::new(Action::WorkPlaneDown, "Work plane down", "Move the work plane one cube down, or away from the camera")
        .key(Modifiers::NONE, Key::PageDown)
        .menu(Menu::View),
    Entry::new(
        Action::Clip,
        "Clip above",
        "Cut away every cube above the bottom of the hovered one, to work inside rooms (again: show everything)",
    )
    .key(Modifiers::NONE, Key::C)
    .menu(Menu::View),
    Entry::new(
        Action::Hide,
        "Hide selection",
        "Hide the selected box of cubes, or the selected lights, entities and regions: not drawn, not picked \
         (again: show everything)",
    )
    .key(Modifiers::NONE, Key::H)
    .menu(Menu::View),
    Entry::new(
        Action::Isolate,
        "Isolate selection",
        "Show only the selected box of cubes, or only the selected objects (every other light, entity and region \
         hidden, the cubes stay): the rest is not drawn, not picked (again: show everything)",
    )
    .key(Modifiers::NONE, Key::I)
    .menu(Menu::View),
    Entry::new(Action::StoreBookmark, "Store bookmark", "Store the camera in bookmark slot 1–9")
        .digits(Modifiers::COMMAND.plus(Modifiers::ALT)),
    Entry::new(Action::RecallBookmark, "Go to bookmark", "Jump to the camera bookmark in slot 1–9")
        .digits(Modifiers::ALT),
    // Help
    Entry::new(Action::Shortcuts, "Shortcuts", "This list: every command, key and gesture")
        .key(Modifiers::NONE, Key::F1)
        .always()
        .menu(Menu::Help),
    // Tools (toolbar order)
    Entry::tool(&tools::place::INFO),
    Entry::tool(&tools::erase::INFO),
    Entry::tool(&tools::paint::INFO),
    Entry::tool(&tools::box_tool::INFO),
    Entry::tool(&tools::select::INFO),
    Entry::tool(&tools::corner::INFO),
    Entry::tool(&tools::eyedropper::INFO),
    Entry::tool(&tools::object::INFO),
    Entry::tool(&tools::path::INFO),
    // Viewport gestures
    Entry::new(
        Action::Gesture,
        "Fly",
        "Turn and fly the camera; Q/E down/up, Shift faster, the wheel changes the speed",
    )
    .gesture("right mouse drag + W/A/S/D"),
    Entry::new(Action::Gesture, "Orbit", "Orbit the camera around its pivot").gesture("Alt + left drag"),
    Entry::new(Action::Gesture, "Pan", "Move the camera sideways").gesture("middle drag"),
    Entry::new(
        Action::Gesture,
        "Zoom",
        "Move the camera towards the point under the pointer (it stays under the pointer); in the top, front and \
         side views right or middle drag pans",
    )
    .gesture("mouse wheel"),
    Entry::new(
        Action::Gesture,
        "Add to selection",
        "Select tool, Lights & entities: Shift or Ctrl + click on a light, entity marker or region outline adds it \
         to the selection, or takes it out",
    )
    .gesture("Shift/Ctrl + click"),
    Entry::new(
        Action::Gesture,
        "Box select",
        "Select tool: a drag from the sky or empty ground (or anywhere with Shift or Ctrl) selects every light, \
         entity and region whose marker (a region's centre) is in the rectangle; Shift adds, Ctrl toggles, plain \
         replaces; a plain drag from a face still selects a box of cubes; Esc cancels",
    )
    .gesture("drag over empty space (Shift/Ctrl: anywhere)"),
    Entry::new(
        Action::Gesture,
        "Drop to paint",
        "A library material row, or a PNG/PTF file (copied into the project's textures/, saved maps only), \
         dropped on a face paints it (Shift: the whole cube)",
    )
    .gesture("drag & drop onto a face"),
];

/// The entry of `action` (the first, for gestures).
pub fn entry(action: Action) -> Option<&'static Entry> {
    COMMANDS.iter().find(|e| e.action == action)
}

/// Every tool, in toolbar order.
pub fn tools() -> impl Iterator<Item = &'static ToolInfo> {
    COMMANDS.iter().filter_map(|e| e.tool)
}

/// The entry of scope `scope` that `pressed` runs, with its digit.
pub fn find(pressed: &KeyboardShortcut, scope: Scope) -> Option<(&'static Entry, Option<u8>)> {
    COMMANDS.iter().filter(|e| e.scope == scope).find_map(|e| e.matches(pressed).map(|d| (e, d)))
}

/// The key of `tool` that `pressed` is, if any.
pub fn tool_key<'a>(tool: &'a ToolInfo, pressed: &KeyboardShortcut) -> Option<&'a ToolKey> {
    tool.keys
        .iter()
        .find(|k| k.shortcut.logical_key == pressed.logical_key && is_exactly(pressed, k.shortcut.modifiers))
}

/// A key pressed this frame, with the modifiers its event came with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pressed {
    pub shortcut: KeyboardShortcut,
    /// A key-repeat event (the key is held).
    pub repeat: bool,
}

/// The key presses among `events`, each with the modifiers held when it happened (never the
/// frame's modifier state: a fast Ctrl+digit tap must not read as a bare digit). The system's
/// copy, cut and paste events count as Ctrl+C, Ctrl+X and Ctrl+V (egui-winit sends those
/// instead of the keys). Duplicates within a frame count once.
pub fn pressed_keys(events: &[egui::Event]) -> Vec<Pressed> {
    let mut out: Vec<Pressed> = Vec::new();
    for e in events {
        let p = match e {
            egui::Event::Key { key, pressed: true, repeat, modifiers, .. } => {
                Pressed { shortcut: KeyboardShortcut::new(*modifiers, *key), repeat: *repeat }
            }
            egui::Event::Copy => Pressed { shortcut: KeyboardShortcut::new(Modifiers::COMMAND, Key::C), repeat: false },
            egui::Event::Cut => Pressed { shortcut: KeyboardShortcut::new(Modifiers::COMMAND, Key::X), repeat: false },
            egui::Event::Paste(_) | egui::Event::PasteImage(_) => {
                Pressed { shortcut: KeyboardShortcut::new(Modifiers::COMMAND, Key::V), repeat: false }
            }
            _ => continue,
        };
        if !out.iter().any(|o| same_key(&o.shortcut, &p.shortcut)) {
            out.push(p);
        }
    }
    out
}

/// Whether two presses are the same key and modifiers (Ctrl and Command are one).
fn same_key(a: &KeyboardShortcut, b: &KeyboardShortcut) -> bool {
    a.logical_key == b.logical_key && is_exactly(a, b.modifiers)
}

/// Whether the modifiers of `pressed` are exactly `pattern` (Ctrl and Command are one).
fn is_exactly(pressed: &KeyboardShortcut, pattern: Modifiers) -> bool {
    pressed.modifiers.matches_exact(pattern)
}

/// Slot 1–9 of a digit key.
pub fn digit(key: Key) -> Option<u8> {
    use Key::*;
    [Num1, Num2, Num3, Num4, Num5, Num6, Num7, Num8, Num9].iter().position(|k| *k == key).map(|i| i as u8 + 1)
}

/// Modifiers as `Ctrl+Alt+Shift+` (empty without any); the same on every platform, so the
/// README does not depend on where it was generated.
fn modifiers_text(m: Modifiers) -> String {
    let s = ModifierNames::NAMES.format(&m, false);
    if s.is_empty() { s } else { s + "+" }
}

/// A key with its modifiers: `Ctrl+Shift+S`, `[`, `F1`.
pub fn shortcut_text(k: &KeyboardShortcut) -> String {
    modifiers_text(k.modifiers) + k.logical_key.symbol_or_name()
}

/// One line of the F1 list and the README table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The keys that run it (alternatives), or the gesture; empty: menus only.
    pub keys: Vec<String>,
    /// `keys` describes a mouse gesture.
    pub gesture: bool,
    /// The entry's label; a tool and its own keys say which tool.
    pub command: String,
    pub what: String,
}

impl Row {
    /// The keys as one text: `Ctrl+Shift+Z / Ctrl+Y`.
    pub fn keys_text(&self) -> String {
        self.keys.join(" / ")
    }
}

/// Every entry in table order, each tool followed by the keys it answers to while active.
pub fn rows() -> Vec<Row> {
    let mut out = Vec::new();
    for e in COMMANDS {
        let keys = match e.trigger {
            Trigger::None => Vec::new(),
            Trigger::Key(k) => vec![shortcut_text(&k)],
            Trigger::Either(a, b) => vec![shortcut_text(&a), shortcut_text(&b)],
            Trigger::Digits(_) | Trigger::Gesture(_) => vec![e.keys_text()],
        };
        let command = match e.tool {
            Some(t) => format!("{} tool", t.label),
            None => e.label.to_owned(),
        };
        let gesture = matches!(e.trigger, Trigger::Gesture(_));
        out.push(Row { keys, gesture, command: command.clone(), what: e.tooltip.to_owned() });
        for k in e.tool.map_or(&[][..], |t| t.keys) {
            let keys = vec![shortcut_text(&k.shortcut)];
            out.push(Row { keys, gesture: false, command: command.clone(), what: k.label.to_owned() });
        }
    }
    out
}

/// The README's key table (markdown): every row with keys or a gesture, keys in code spans.
/// Regenerate the README's copy with `PMFEDIT_BLESS=1 cargo test -p pmfedit --lib readme`.
pub fn readme_table() -> String {
    let mut s = String::from("| keys | command | what it does |\n| --- | --- | --- |\n");
    for r in rows().into_iter().filter(|r| !r.keys.is_empty()) {
        let keys = if r.gesture {
            r.keys_text()
        } else {
            r.keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(" / ")
        };
        s.push_str(&format!("| {keys} | {} | {} |\n", r.command, r.what));
    }
    s
}

#[cfg(test)]
mod tests;
