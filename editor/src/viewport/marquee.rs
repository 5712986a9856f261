//! Box select of objects: a rectangle dragged on screen selects every light, entity and region
//! whose marker lies inside it (a region's marker is its centre, where its gizmo's arrows start).
//!
//! Like the gizmo, it is a viewport service: the tool says whether a press starts one
//! ([`crate::tools::Tool::selects_objects_in_rect`]: the Select tool's rule), the viewport holds
//! the drag, draws the rectangle (and outlines what it holds), and on release selects
//! ([`Selection::combined`]: plain replaces, Shift adds, Ctrl toggles). Esc drops it. It works in
//! screen space, so the perspective and the orthographic views behave alike.

use eframe::egui;

use pmfedit_core::edit::ObjRef;
use pmfedit_core::map::Level;

use super::gizmo::View;
use crate::pick::Mods;
use crate::selection::{Combine, Selection};

/// A drag shorter than this on both axes, points, is a click (it selects what a rectangle of no
/// size holds: nothing).
pub const CLICK_PX: f32 = 3.0;

/// What the rectangle may select: which markers show ([`crate::viewport::Viewport`]'s Objects and
/// Regions checkboxes) and which objects are not hidden (H / I).
pub struct Shown<'a> {
    /// Lights and entities are drawn.
    pub objects: bool,
    /// Regions and load regions are drawn.
    pub regions: bool,
    /// Whether an object is not hidden.
    pub object: &'a dyn Fn(ObjRef) -> bool,
}

/// A box select in progress.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Marquee {
    /// The level whose objects it selects (the active one at the press).
    pub level: usize,
    /// Where the press was, points.
    pub start: egui::Pos2,
    /// Where the pointer is now, points.
    pub current: egui::Pos2,
    /// How its objects join the selection (the modifier held at the press).
    pub how: Combine,
}

impl Marquee {
    /// A box select pressed at `pos` on `level` with `mods` held: Ctrl toggles, else Shift adds,
    /// else it replaces.
    pub fn start(level: usize, pos: egui::Pos2, mods: Mods) -> Self {
        let how = if mods.ctrl {
            Combine::Toggle
        } else if mods.shift {
            Combine::Add
        } else {
            Combine::Replace
        };
        Self { level, start: pos, current: pos, how }
    }

    /// The rectangle on screen, points.
    pub fn rect(&self) -> egui::Rect {
        egui::Rect::from_two_pos(self.start, self.current)
    }

    /// The objects of `level` whose markers are inside the rectangle as `view` shows them, in
    /// table order (lights, entities, regions, load regions).
    pub fn objects(&self, level: &Level, view: &View, shown: &Shown<'_>) -> Vec<ObjRef> {
        let rect = self.rect();
        if rect.width() < CLICK_PX && rect.height() < CLICK_PX {
            return Vec::new();
        }
        let o = &level.objects;
        let markers = o
            .lights()
            .iter()
            .map(|(id, _)| ObjRef::Light(id))
            .chain(o.entities().iter().map(|(id, _)| ObjRef::Entity(id)));
        let regions = o
            .regions()
            .iter()
            .map(|(id, _)| ObjRef::Region(id))
            .chain(o.load_regions().iter().map(|(id, _)| ObjRef::LoadRegion(id)));
        let candidates = markers.filter(|_| shown.objects).chain(regions.filter(|_| shown.regions));
        candidates
            .filter(|obj| (shown.object)(*obj))
            .filter(|obj| {
                let p = obj.position(o).map(|p| p.as_dvec3());
                p.and_then(|p| view.to_screen(p)).is_some_and(|s| rect.contains(s))
            })
            .collect()
    }

    /// The selection its release makes from `selection`.
    pub fn finish(&self, selection: &Selection, level: &Level, view: &View, shown: &Shown<'_>) -> Selection {
        selection.combined(self.level, &self.objects(level, view, shown), self.how)
    }

    /// Draws the rectangle over the view.
    pub fn draw(&self, painter: &egui::Painter) {
        let fill = egui::Color32::from_rgba_unmultiplied(77, 204, 255, 28);
        let stroke = egui::Stroke::new(1.0, egui::Color32::from_rgb(77, 204, 255));
        painter.rect(self.rect(), 0.0, fill, stroke, egui::StrokeKind::Inside);
    }
}
