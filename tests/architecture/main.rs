//! The project's shape: the layers inside each crate import only downward,
//! and docs/design.md's module map names every folder and crate.

mod architecture;
