//! Everything that can go wrong while loading and starting a libretro core,
//! each with a message that names the file or option involved.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LibretroError {
    #[error("core file {} does not exist", path.display())]
    CoreMissing { path: PathBuf },

    #[error("{} is not a loadable shared library: {reason}", path.display())]
    NotALibrary { path: PathBuf, reason: String },

    #[error("{} is a shared library but not a libretro core (it has no `{symbol}` function)", path.display())]
    NotALibretroCore { path: PathBuf, symbol: &'static str },

    #[error(
        "core {} speaks libretro API version {found}, netcade speaks version {expected}",
        path.display()
    )]
    WrongApiVersion {
        path: PathBuf,
        found: u32,
        expected: u32,
    },

    #[error(
        "core {} is already loaded in this process; two instances of one file would share its \
         global state (load a copy of the file instead)",
        path.display()
    )]
    AlreadyLoaded { path: PathBuf },

    #[error("content file {} does not exist", path.display())]
    ContentMissing { path: PathBuf },

    #[error("cannot read content file {}: {source}", path.display())]
    ContentUnreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("content file {} is too large ({size} bytes, the limit is {limit} bytes)", path.display())]
    ContentTooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },

    #[error("core {core} refused the content {}", path.display())]
    ContentRejected { core: String, path: PathBuf },

    #[error("core {core} refused to start without content")]
    NoContentRejected { core: String },

    #[error("core {core} needs a content file (a ROM) to start")]
    ContentRequired { core: String },

    #[error("content is already loaded into core {core}")]
    ContentAlreadyLoaded { core: String },

    #[error("option `{text}` is not of the form KEY=VALUE")]
    MalformedOption { text: String },

    #[error(
        "core {core} has no option `{key}`; its options are: {}",
        if known.is_empty() { "(none)".to_string() } else { known.join(", ") }
    )]
    UnknownOption {
        core: String,
        key: String,
        known: Vec<String>,
    },

    #[error("core {core}'s option `{key}` cannot be `{value}`; allowed values: {}", allowed.join(", "))]
    InvalidOptionValue {
        core: String,
        key: String,
        value: String,
        allowed: Vec<String>,
    },
}
