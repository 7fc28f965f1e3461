//! Everything that can go wrong while loading and starting a libretro core,
//! each with a message that names the file or option involved.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LibretroError {
    #[error("core file {} does not exist", path.display())]
    CoreMissing { path: PathBuf },

    /// `--core` named a directory (which `is_file` alone would call missing).
    #[error(
        "{} is a directory, not a core; give the path of a core library (a *_libretro.so file)",
        path.display()
    )]
    CoreIsDirectory { path: PathBuf },

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

    /// The content path is a directory.
    #[error(
        "{} is a directory, not a content file; give the path of a ROM or game file",
        path.display()
    )]
    ContentIsDirectory { path: PathBuf },

    /// The content file has no bytes; refused before the core sees it.
    #[error(
        "content file {} is empty (0 bytes); no game is empty, so the file was probably cut \
         short while it was downloaded or copied",
        path.display()
    )]
    ContentEmpty { path: PathBuf },

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

    /// `retro_load_game` accepted the content but the core sent SHUTDOWN
    /// while loading it.
    #[error(
        "core {core} took the content {} but then asked to shut down, as cores do when they \
         cannot run it{}",
        path.display(),
        content_hint(path)
    )]
    ContentAbandoned { core: String, path: PathBuf },

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

/// What usually makes a core give up on `path`, as a clause to append.
pub(super) fn content_hint(path: &std::path::Path) -> &'static str {
    let is_zip = path
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("zip"));
    if is_zip {
        " (for an arcade core such as FinalBurn Neo: the zip is not a romset it knows, or it \
         lacks files the romset needs)"
    } else {
        " (the file is probably not a game for this core's system)"
    }
}
