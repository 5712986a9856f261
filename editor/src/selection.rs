//! What is selected: plain data about the document (a box of cubes, one cube, or a level
//! object), shared by the commands, the state, the tools, the panels and the viewport.

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
            Selection::None | Selection::Cubes { .. } | Selection::Cube { .. } => None,
        }
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
}
