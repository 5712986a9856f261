//! The tool ids ([`ToolKind`]): plain data the state keeps and
//! [`Command::SetTool`](crate::command::Command::SetTool) carries; what each tool does is in
//! [`crate::tools`].

/// The tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolKind {
    /// Place a cube on the hovered face.
    #[default]
    Place,
    Erase,
    Paint,
    Box,
    Select,
    Corner,
    Eyedropper,
    Object,
    Path,
}

impl ToolKind {
    /// Every tool, in shortcut order (keys 1–9).
    pub const ALL: [ToolKind; 9] = [
        ToolKind::Place,
        ToolKind::Erase,
        ToolKind::Paint,
        ToolKind::Box,
        ToolKind::Select,
        ToolKind::Corner,
        ToolKind::Eyedropper,
        ToolKind::Object,
        ToolKind::Path,
    ];

    /// Name shown in the toolbar.
    pub fn label(self) -> &'static str {
        match self {
            ToolKind::Place => "Place",
            ToolKind::Erase => "Erase",
            ToolKind::Paint => "Paint",
            ToolKind::Box => "Box",
            ToolKind::Select => "Select",
            ToolKind::Corner => "Corner",
            ToolKind::Eyedropper => "Eyedropper",
            ToolKind::Object => "Lights & entities",
            ToolKind::Path => "Path attributes",
        }
    }
}
