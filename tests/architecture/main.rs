//! The project's shape: the layers inside each crate import only downward,
//! no files import each other in a ring, and docs/design.md's module map
//! names every folder and crate.

mod design_map;
mod imports;
mod layers;
mod source;
