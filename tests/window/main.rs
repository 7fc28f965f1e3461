//! The window (cargo feature `gui`), opened for real under Xvfb: what it
//! drew is read back from its screenshots.

mod gui_chat;
mod gui_launcher;
mod gui_library;
mod gui_netplay;
mod gui_play;
mod gui_replay;
mod gui_window;
