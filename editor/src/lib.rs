//! `pmfedit`: the PlatinumSrc map editor, as a library so tests (egui_kittest) can drive the
//! real application. The binary is `main.rs`.
//!
//! Layers, lowest first; a module uses only those below it:
//! - data: [`selection`], [`pick`], [`tool_kind`], [`shading`], [`launch`], [`pace`];
//! - [`command`], then [`state`] (the document; `apply` returns what happened);
//! - [`tools`] and [`dnd`]: read the state, return commands;
//! - [`viewport`] and [`panels`], with the helpers [`files`] and [`watch`];
//! - [`app`]: the eframe app, running an optional [`app::Driver`];
//! - the drivers of scripted runs: [`drivers`] (screenshot, benchmark) and [`walkthrough`].

pub mod app;
pub mod command;
pub mod dnd;
pub mod drivers;
pub mod files;
pub mod launch;
pub mod pace;
pub mod panels;
pub mod pick;
pub mod selection;
pub mod shading;
pub mod state;
pub mod tools;
pub mod ui_command;
pub mod viewport;
pub mod walkthrough;
pub mod watch;
