//! `pmfedit`: the PlatinumSrc map editor, as a library so tests (egui_kittest) can drive the
//! real application. The binary is `main.rs`.

pub mod app;
pub mod command;
pub mod dnd;
pub mod files;
pub mod panels;
pub mod pick;
pub mod selection;
pub mod state;
pub mod tools;
pub mod ui_command;
pub mod viewport;
pub mod walkthrough;
pub mod watch;
