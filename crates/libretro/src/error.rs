//! Everything that can go wrong while loading and starting a libretro core,
//! each with a message that names the file or option involved.

use std::path::PathBuf;

/// Why a libretro core or its content could not be loaded or set up; each
/// message names the file, core or option involved.
#[derive(Debug, thiserror::Error)]
pub enum LibretroError {
    /// `--core` names no file (or one that cannot be resolved to a real path).
    #[error("core file {} does not exist", path.display())]
    CoreMissing {
        /// The core path as given.
        path: PathBuf,
    },

    /// `--core` named a directory (which `is_file` alone would call missing).
    #[error(
        "{} is a directory, not a core; give the path of a core library (a *_libretro.so file)",
        path.display()
    )]
    CoreIsDirectory {
        /// The directory given as the core.
        path: PathBuf,
    },

    /// The dynamic loader refused the file: not a shared library, the wrong
    /// architecture, or a library it depends on is missing.
    #[error("{} is not a loadable shared library: {reason}", path.display())]
    NotALibrary {
        /// The core path as given.
        path: PathBuf,
        /// The dynamic loader's own message.
        reason: String,
    },

    /// The file loads but lacks a `retro_*` export every core has.
    #[error("{} is a shared library but not a libretro core (it has no `{symbol}` function)", path.display())]
    NotALibretroCore {
        /// The core path as given.
        path: PathBuf,
        /// The first libretro export found missing, such as `retro_run`.
        symbol: &'static str,
    },

    /// `retro_api_version` returned a version other than the one netcade
    /// implements, so the two would disagree on struct layouts.
    #[error(
        "core {} speaks libretro API version {found}, netcade speaks version {expected}",
        path.display()
    )]
    WrongApiVersion {
        /// The core path as given.
        path: PathBuf,
        /// The version the core reports.
        found: u32,
        /// The version netcade implements (`RETRO_API_VERSION`).
        expected: u32,
    },

    /// This core file is already open in this process; a second instance of
    /// the same file would share (and corrupt) the first one's globals.
    #[error(
        "core {} is already loaded in this process; two instances of one file would share its \
         global state (load a copy of the file instead)",
        path.display()
    )]
    AlreadyLoaded {
        /// The core file, resolved to its real path (as the other instance has it).
        path: PathBuf,
    },

    /// The content path names no file.
    #[error("content file {} does not exist", path.display())]
    ContentMissing {
        /// The content path as given.
        path: PathBuf,
    },

    /// The content path is a directory.
    #[error(
        "{} is a directory, not a content file; give the path of a ROM or game file",
        path.display()
    )]
    ContentIsDirectory {
        /// The directory given as content.
        path: PathBuf,
    },

    /// The content file has no bytes; refused before the core sees it.
    #[error(
        "content file {} is empty (0 bytes); no game is empty, so the file was probably cut \
         short while it was downloaded or copied",
        path.display()
    )]
    ContentEmpty {
        /// The empty content file.
        path: PathBuf,
    },

    /// The system gave no memory for the crash report's own mapping.
    #[error("cannot prepare the crash report for core {}: {source}", path.display())]
    CrashReportUnavailable {
        /// The core path as given.
        path: PathBuf,
        /// Why mapping its page failed.
        #[source]
        source: std::io::Error,
    },

    /// The content file exists but reading it (or its size) failed.
    #[error("cannot read content file {}: {source}", path.display())]
    ContentUnreadable {
        /// The content file.
        path: PathBuf,
        /// The I/O error, such as permission denied.
        #[source]
        source: std::io::Error,
    },

    /// Content the core wants as bytes is larger than netcade will read into
    /// memory (cores that take a path are not limited).
    #[error("content file {} is too large ({size} bytes, the limit is {limit} bytes)", path.display())]
    ContentTooLarge {
        /// The content file.
        path: PathBuf,
        /// Its size, in bytes.
        size: u64,
        /// The most netcade reads into memory for a core, in bytes.
        limit: u64,
    },

    /// `retro_load_game` returned false: the core cannot run this file.
    #[error("core {core} refused the content {}", path.display())]
    ContentRejected {
        /// The core's name (from `retro_get_system_info`).
        core: String,
        /// The content file it refused.
        path: PathBuf,
    },

    /// `retro_load_game` accepted the content but the core sent SHUTDOWN
    /// while loading it.
    #[error(
        "core {core} took the content {} but then asked to shut down, as cores do when they \
         cannot run it{}",
        path.display(),
        content_hint(path)
    )]
    ContentAbandoned {
        /// The core's name.
        core: String,
        /// The content file it gave up on.
        path: PathBuf,
    },

    /// `retro_load_game` accepted the content, but the core logged an error
    /// while loading it and has no state to save: it cannot run it (FBNeo
    /// with a zip that is not a romset it knows says so only later, by
    /// asking to shut down on its first frame).
    #[error(
        "core {core} could not run the content {}: it said \"{said}\"{}",
        path.display(),
        content_hint(path)
    )]
    ContentFailed {
        /// The core's name.
        core: String,
        /// The content file it could not run.
        path: PathBuf,
        /// The first error the core logged while loading it.
        said: String,
    },

    /// The core claims to run without content but its `retro_load_game(NULL)`
    /// returned false.
    #[error("core {core} refused to start without content")]
    NoContentRejected {
        /// The core's name.
        core: String,
    },

    /// No content was given to a core that does not support running without
    /// it (no SET_SUPPORT_NO_GAME).
    #[error("core {core} needs a content file (a ROM) to start")]
    ContentRequired {
        /// The core's name.
        core: String,
    },

    /// Content was given to a core that already has a game loaded.
    #[error("content is already loaded into core {core}")]
    ContentAlreadyLoaded {
        /// The core's name.
        core: String,
    },

    /// An `--option` argument has no `=` or an empty key.
    #[error("option `{text}` is not of the form KEY=VALUE")]
    MalformedOption {
        /// The argument as given.
        text: String,
    },

    /// An option override names a key the core did not declare.
    #[error(
        "core {core} has no option `{key}`; its options are: {}",
        if known.is_empty() { "(none)".to_string() } else { known.join(", ") }
    )]
    UnknownOption {
        /// The core's name.
        core: String,
        /// The key given.
        key: String,
        /// Every key the core declared, in its order.
        known: Vec<String>,
    },

    /// An option override gives a value outside the ones the core declared
    /// for that key.
    #[error("core {core}'s option `{key}` cannot be `{value}`; allowed values: {}", allowed.join(", "))]
    InvalidOptionValue {
        /// The core's name.
        core: String,
        /// The option's key.
        key: String,
        /// The value given.
        value: String,
        /// The values the core declared for the key, in its order.
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
