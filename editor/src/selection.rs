//! What is selected: plain data about the document (a box of cubes, one cube, a level object,
//! or several level objects), shared by the commands, the state, the tools, the panels and the
//! viewport. Shift or Ctrl with a click adds an object to the selection or takes it out
//! ([`Selection::toggled`]); a box select combines its objects with the selection
//! ([`Selection::combined`]).

use pmfedit_core::edit::ObjRef;
use pmfedit_core::map::coords::CubeAddr;
use pmfedit_core::map::library::{EntityId, LightId, LoadRegionId, RegionId};

/// What is selected.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Selection {
    #[default]
    None,
    /// A box of cubes (level lattice, max exclusive).
    Cubes {
        level: usize,
        min: glam::IVec3,
        max: glam::IVec3,
    },
    Cube {
        level: usize,
        addr: CubeAddr,
    },
    Light {
        level: usize,
        id: LightId,
    },
    Entity {
        level: usize,
        id: EntityId,
    },
    Region {
        level: usize,
        id: RegionId,
    },
    LoadRegion {
        level: usize,
        id: LoadRegionId,
    },
    /// Two or more level objects of one level (one object is its own variant), in the order
    /// they were added.
    Objects {
        level: usize,
        objects: Vec<ObjRef>,
    },
}

impl Selection {
    /// The selected level object (light, entity, region or load region) and its level; `None`
    /// when cubes or nothing are selected. Its position: [`ObjRef::position`].
    pub fn object(&self) -> Option<(usize, ObjRef)> {
        match *self {
            Selection::Light { level, id } => Some((level, ObjRef::Light(id))),
            Selection::Entity { level, id } => Some((level, ObjRef::Entity(id))),
            Selection::Region { level, id } => Some((level, ObjRef::Region(id))),
            Selection::LoadRegion { level, id } => Some((level, ObjRef::LoadRegion(id))),
            Selection::None | Selection::Cubes { .. } | Selection::Cube { .. } | Selection::Objects { .. } => None,
        }
    }

    /// Every selected level object (one or several) and their level.
    pub fn objects(&self) -> Option<(usize, Vec<ObjRef>)> {
        match self {
            Selection::Objects { level, objects } => Some((*level, objects.clone())),
            _ => self.object().map(|(level, obj)| (level, vec![obj])),
        }
    }

    /// Whether `obj` of `level` is selected (alone or with others).
    pub fn contains(&self, level: usize, obj: ObjRef) -> bool {
        self.objects().is_some_and(|(l, objects)| l == level && objects.contains(&obj))
    }

    /// The selection of `objects` on `level`: none, one object's variant, or [`Selection::Objects`].
    pub fn of_objects(level: usize, mut objects: Vec<ObjRef>) -> Self {
        match objects.len() {
            0 => Selection::None,
            1 => Selection::of_object(level, objects.remove(0)),
            _ => Selection::Objects { level, objects },
        }
    }

    /// Shift/Ctrl+click on `obj`: the selection with `obj` added, or taken out when it was in.
    /// Objects of another level, or cubes, give way to `obj` alone.
    pub fn toggled(&self, level: usize, obj: ObjRef) -> Self {
        let mut objects = match self.objects() {
            Some((l, objects)) if l == level => objects,
            _ => Vec::new(),
        };
        match objects.iter().position(|o| *o == obj) {
            Some(i) => {
                objects.remove(i);
            }
            None => objects.push(obj),
        }
        Self::of_objects(level, objects)
    }

    /// Box select: `objects` of `level` combined with the selection as `how` says. Objects of
    /// another level, or cubes, give way to `objects` alone, as with [`Selection::toggled`].
    pub fn combined(&self, level: usize, objects: &[ObjRef], how: Combine) -> Self {
        let mut out = match (how, self.objects()) {
            (Combine::Replace, _) => Vec::new(),
            (_, Some((l, current))) if l == level => current,
            _ => Vec::new(),
        };
        for obj in objects {
            match (how, out.iter().position(|o| o == obj)) {
                (Combine::Toggle, Some(i)) => {
                    out.remove(i);
                }
                (_, None) => out.push(*obj),
                (_, Some(_)) => {}
            }
        }
        Self::of_objects(level, out)
    }

    /// The selection of the level object `obj` on `level`.
    pub fn of_object(level: usize, obj: ObjRef) -> Self {
        match obj {
            ObjRef::Light(id) => Selection::Light { level, id },
            ObjRef::Entity(id) => Selection::Entity { level, id },
            ObjRef::Region(id) => Selection::Region { level, id },
            ObjRef::LoadRegion(id) => Selection::LoadRegion { level, id },
        }
    }
}

/// How a box select combines what the rectangle holds with the selection (the modifier held).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// No modifier: the rectangle's objects become the selection.
    Replace,
    /// Shift: they join it.
    Add,
    /// Ctrl: each one joins it, or leaves it when it was in.
    Toggle,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_selection_names_its_object_and_back() {
        let objects = [
            ObjRef::Light(LightId(3)),
            ObjRef::Entity(EntityId(4)),
            ObjRef::Region(RegionId(5)),
            ObjRef::LoadRegion(LoadRegionId(6)),
        ];
        for obj in objects {
            let s = Selection::of_object(2, obj);
            assert_eq!(s.object(), Some((2, obj)));
        }
        assert_eq!(Selection::None.object(), None);
        let cube = Selection::Cube { level: 0, addr: CubeAddr::containing(glam::IVec3::ZERO, 3) };
        assert_eq!(cube.object(), None);
    }

    #[test]
    fn toggling_adds_and_removes_objects_of_one_level() {
        let (a, b) = (ObjRef::Light(LightId(1)), ObjRef::Entity(EntityId(2)));
        let one = Selection::None.toggled(0, a);
        assert_eq!(one, Selection::Light { level: 0, id: LightId(1) });
        let two = one.toggled(0, b);
        assert_eq!(two, Selection::Objects { level: 0, objects: vec![a, b] });
        assert!(two.contains(0, b) && !two.contains(1, b));
        assert_eq!(two.object(), None, "no single object: no gizmo");
        assert_eq!(two.toggled(0, a), Selection::Entity { level: 0, id: EntityId(2) });
        assert_eq!(two.toggled(1, a), Selection::Light { level: 1, id: LightId(1) }, "another level starts over");
    }

    #[test]
    fn a_box_select_replaces_adds_or_toggles() {
        let (a, b, c) = (ObjRef::Light(LightId(1)), ObjRef::Entity(EntityId(2)), ObjRef::Region(RegionId(3)));
        let ab = Selection::of_objects(0, vec![a, b]);
        assert_eq!(ab.combined(0, &[c], Combine::Replace), Selection::Region { level: 0, id: RegionId(3) });
        assert_eq!(ab.combined(0, &[b, c], Combine::Add), Selection::Objects { level: 0, objects: vec![a, b, c] });
        assert_eq!(ab.combined(0, &[b, c], Combine::Toggle), Selection::Objects { level: 0, objects: vec![a, c] });
        assert_eq!(ab.combined(0, &[], Combine::Replace), Selection::None, "an empty rectangle clears");
        assert_eq!(ab.combined(0, &[], Combine::Add), ab, "an empty rectangle with Shift keeps");
        assert_eq!(ab.combined(1, &[c], Combine::Add), Selection::Region { level: 1, id: RegionId(3) });
        let cubes = Selection::Cube { level: 0, addr: CubeAddr::containing(glam::IVec3::ZERO, 3) };
        assert_eq!(cubes.combined(0, &[a], Combine::Toggle), Selection::Light { level: 0, id: LightId(1) });
    }
}
