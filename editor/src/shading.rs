//! The viewport's shading modes ([`Shading`]): plain data, so the command line
//! ([`crate::launch`]) can name one; how each is drawn is in [`crate::viewport::render`].

/// How chunk faces are shaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Shading {
    /// Material colour × baked lightmap (what the game shows).
    #[default]
    Lit,
    /// Material colour with a fixed directional shade.
    Fullbright,
    /// Dark faces with bright triangle edges (quad diagonals hidden).
    Wireframe,
    /// The lightmaps alone: the raw luxels (no exposure, no transfer curve).
    Lightmap,
    /// What the air cube in front of the hovered face sees (compiled visibility data): visible
    /// cubes shaded as fullbright, the rest dark ([`crate::viewport::visibility`]).
    Visibility,
}

impl Shading {
    /// Every mode, in menu and shortcut order (Ctrl+1…5).
    pub const ALL: [Shading; 5] =
        [Shading::Lit, Shading::Fullbright, Shading::Wireframe, Shading::Lightmap, Shading::Visibility];

    /// The name in menus and on the command line (`--shading`, any case).
    pub const fn label(self) -> &'static str {
        match self {
            Shading::Lit => "Lit",
            Shading::Fullbright => "Fullbright",
            Shading::Wireframe => "Wireframe",
            Shading::Lightmap => "Lightmap",
            Shading::Visibility => "Visibility",
        }
    }
}
