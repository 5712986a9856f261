//! Side panels and forms. Panels read the [`EditorState`](crate::state::EditorState) and push
//! [`Command`](crate::command::Command)s; they never change the document themselves.
