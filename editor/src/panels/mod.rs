//! Side panels and forms. Panels read the [`EditorState`](crate::state::EditorState) and push
//! [`Command`](crate::command::Command)s; they never change the document themselves.
//!
//! Layout: the left panel has the outliner, the undo history and the bake log (tabs); the right
//! panel has the material library, environments, level settings, map metadata and the inspector
//! of the selected light, entity or region (tabs). Selecting an object switches the right panel
//! to the inspector. Both panels are resized by dragging their inner edge, within
//! [`LEFT_WIDTH`] and [`RIGHT_WIDTH`] and never so wide that the view is narrower than
//! [`VIEW_MIN_WIDTH`]; their content scrolls rather than widening them. See [`form`] for how
//! forms map to undoable edits.

pub mod bake;
pub mod entity;
pub mod environments;
pub mod form;
pub mod history;
pub mod inspector;
pub mod level;
pub mod library;
pub mod meta;
pub mod options;
pub mod outliner;
pub mod path_attrs;

use eframe::egui::{self, Ui};

use crate::command::Command;
use crate::selection::Selection;
use crate::state::EditorState;
use crate::watch::Thumbnails;

pub use self::form::Sink;

/// What a panel gets: the document to read, where to send commands, thumbnails.
pub struct PanelCtx<'a> {
    pub state: &'a EditorState,
    pub sink: Sink<'a>,
    pub thumbs: &'a mut Thumbnails,
}

/// The narrowest the 3D view gets beside the side panels: its view bar (shadings, exposure,
/// ambient, textures, objects, regions) still fits. The panels' maximum widths give way to it.
pub const VIEW_MIN_WIDTH: f32 = 680.0;

/// The widths the left panel can be dragged to (a persisted width outside is clamped on load).
pub const LEFT_WIDTH: std::ops::RangeInclusive<f32> = 160.0..=400.0;

/// The widths the right panel can be dragged to.
pub const RIGHT_WIDTH: std::ops::RangeInclusive<f32> = 240.0..=560.0;

/// Tabs of the left panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LeftTab {
    #[default]
    Outliner,
    History,
    Bake,
}

/// Tabs of the right panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RightTab {
    #[default]
    Materials,
    Environments,
    Level,
    Map,
    Inspector,
}

impl RightTab {
    pub const ALL: [RightTab; 5] =
        [RightTab::Materials, RightTab::Environments, RightTab::Level, RightTab::Map, RightTab::Inspector];

    pub fn label(self) -> &'static str {
        match self {
            RightTab::Materials => "Materials",
            RightTab::Environments => "Environments",
            RightTab::Level => "Level",
            RightTab::Map => "Map info",
            RightTab::Inspector => "Inspector",
        }
    }
}

/// Every panel's own UI state (not part of the document).
#[derive(Debug)]
pub struct Panels {
    pub show_left: bool,
    pub show_right: bool,
    pub left_tab: LeftTab,
    pub right_tab: RightTab,
    pub library: library::LibraryPanel,
    pub environments: environments::EnvPanel,
    pub meta: meta::MetaPanel,
    pub entity: entity::EntityPanel,
    /// A drag opened a stroke that is not closed yet.
    stroke_open: bool,
    last_selection: Selection,
}

impl Default for Panels {
    fn default() -> Self {
        Self {
            show_left: true,
            show_right: true,
            left_tab: LeftTab::default(),
            right_tab: RightTab::default(),
            library: Default::default(),
            environments: Default::default(),
            meta: Default::default(),
            entity: Default::default(),
            stroke_open: false,
            last_selection: Selection::None,
        }
    }
}

impl Panels {
    /// Shows the side panels (call before the central panel).
    pub fn show(&mut self, ui: &mut Ui, state: &EditorState, commands: &mut Vec<Command>, thumbs: &mut Thumbnails) {
        let ctx = ui.ctx().clone();
        if state.selection != self.last_selection {
            self.last_selection = state.selection.clone();
            if !matches!(state.selection, Selection::None | Selection::Cubes { .. } | Selection::Cube { .. }) {
                self.right_tab = RightTab::Inspector;
            }
        }
        let mut cx = PanelCtx { state, sink: Sink::new(&ctx, commands, &mut self.stroke_open), thumbs };
        // The right panel first: the left one then knows what is left for the view.
        if self.show_right {
            let left = if self.show_left { *LEFT_WIDTH.start() } else { 0.0 };
            let max = (ui.available_width() - VIEW_MIN_WIDTH - left).min(*RIGHT_WIDTH.end()).max(*RIGHT_WIDTH.start());
            let panel = egui::Panel::right("right_panel").resizable(true).default_size(340.0);
            panel.size_range(*RIGHT_WIDTH.start()..=max).show(ui, |ui| {
                ui.horizontal_wrapped(|ui| {
                    for t in RightTab::ALL {
                        ui.selectable_value(&mut self.right_tab, t, t.label());
                    }
                });
                ui.separator();
                egui::ScrollArea::vertical().id_salt("right_scroll").show(ui, |ui| match self.right_tab {
                    RightTab::Materials => self.library.ui(ui, &mut cx),
                    RightTab::Environments => self.environments.ui(ui, &mut cx),
                    RightTab::Level => level::ui(ui, &mut cx),
                    RightTab::Map => {
                        self.meta.ui(ui, &mut cx);
                        ui.separator();
                        path_attrs::ui(ui, &mut cx);
                    }
                    RightTab::Inspector => match state.selection {
                        Selection::Light { level, id } => inspector::light(ui, &mut cx, level, id),
                        Selection::Entity { level, id } => self.entity.ui(ui, &mut cx, level, id),
                        Selection::Region { level, id } => inspector::region(ui, &mut cx, level, id),
                        Selection::LoadRegion { level, id } => inspector::load_region(ui, &mut cx, level, id),
                        Selection::Objects { ref objects, .. } => {
                            ui.label(format!(
                                "{} selected. Delete removes them; with the Select tool Ctrl+C, Ctrl+X, Ctrl+V and \
                                 Ctrl+D copy, cut, paste and duplicate them (one undo step each).",
                                crate::tools::select::objects_text(objects.len())
                            ));
                        }
                        _ => {
                            ui.label(
                                "Select a light, entity or region in the outliner or the viewport (Shift or Ctrl+click \
                                 selects several).",
                            );
                        }
                    },
                });
            });
        }
        if self.show_left {
            let max = (ui.available_width() - VIEW_MIN_WIDTH).min(*LEFT_WIDTH.end()).max(*LEFT_WIDTH.start());
            let panel = egui::Panel::left("left_panel").resizable(true).default_size(220.0);
            panel.size_range(*LEFT_WIDTH.start()..=max).show(ui, |ui| {
                ui.horizontal(|ui| {
                    ui.selectable_value(&mut self.left_tab, LeftTab::Outliner, "Outliner");
                    ui.selectable_value(&mut self.left_tab, LeftTab::History, "History");
                    ui.selectable_value(&mut self.left_tab, LeftTab::Bake, "Bake");
                });
                ui.separator();
                // Scrolls both ways: a wide tab (the bake log) scrolls instead of widening the
                // panel (a panel keeps the width its content forced on it).
                egui::ScrollArea::both().id_salt("left_scroll").show(ui, |ui| match self.left_tab {
                    LeftTab::Outliner => outliner::ui(ui, &mut cx),
                    LeftTab::History => history::ui(ui, &mut cx),
                    LeftTab::Bake => bake::ui(ui, &mut cx),
                });
            });
        }
        cx.sink.finish_frame();
    }
}
