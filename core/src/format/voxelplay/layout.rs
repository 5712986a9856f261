//! What each format version contains: the per-version [`Layout`], the record sizes and the parsed
//! [`Header`]. Shared by the reader (`read`) and the format 5/6 search (`resolve`), which both
//! depend on this module and not on each other's internals.

/// How a format's run tails are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TailLayout {
    /// 5, 6: depends on each definition's render type.
    PerDefinition,
    /// 7–11: flags byte + rotation marker (+ angles).
    FlagsAndRotation,
    /// 12–14: flags byte.
    Flags,
}

/// What a format version contains (see the table in the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Layout {
    pub version: u8,
    pub chunk_size_byte: bool,
    pub item_definitions: bool,
    pub tail: TailLayout,
    pub populated_byte: bool,
    pub light_item: bool,
    pub items: bool,
    pub voxel_properties: bool,
    pub game_objects: bool,
    pub custom_sections: bool,
}

impl Layout {
    /// The layout of `version`, or `None` if it is not read.
    pub fn of(version: u8) -> Option<Layout> {
        if !(super::MIN_VERSION..=super::MAX_VERSION).contains(&version) {
            return None;
        }
        Some(Layout {
            version,
            chunk_size_byte: version >= 10,
            item_definitions: version >= 6,
            tail: match version {
                5 | 6 => TailLayout::PerDefinition,
                7..=11 => TailLayout::FlagsAndRotation,
                _ => TailLayout::Flags,
            },
            populated_byte: version >= 14,
            light_item: version >= 8,
            items: version >= 6,
            voxel_properties: version >= 13,
            game_objects: version >= 9,
            custom_sections: version >= 11,
        })
    }

    /// Bytes of a torch record.
    pub fn light_size(&self) -> usize {
        if self.light_item { 16 } else { 14 }
    }

    /// The fewest bytes a chunk can take.
    pub(super) fn min_chunk_size(&self) -> usize {
        12 + 1
            + usize::from(self.populated_byte)
            + 2
            + 2
            + if self.items { 2 } else { 0 }
            + if self.voxel_properties { 2 } else { 0 }
    }
}

/// Bytes of an item record.
pub(super) const ITEM_SIZE: usize = 16;
/// Bytes of a run's fixed fields.
pub(super) const RUN_SIZE: usize = 9;

/// The header: everything before the chunks.
#[derive(Debug, Clone)]
pub(super) struct Header {
    pub layout: Layout,
    pub chunk_size: u8,
    pub character_position: [f32; 3],
    pub character_rotation: [f32; 3],
    pub camera_rotation: [f32; 3],
    pub voxel_definitions: Vec<String>,
    pub item_definitions: Vec<String>,
    pub chunk_count: usize,
    /// Absolute offset of the first chunk.
    pub body_start: usize,
}

impl Header {
    /// Voxels per chunk.
    pub fn volume(&self) -> u32 {
        u32::from(self.chunk_size).pow(3)
    }
}
