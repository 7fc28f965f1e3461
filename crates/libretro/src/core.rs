//! A loaded libretro core behind a safe facade.

use super::catching::{catching, CoreException};
use super::context::{self, ActiveContext, CoreContext, HostStrings, MAX_PORTS};
use super::crash::{self, CrashScene, InCore, Phase};
use super::error::LibretroError;
use super::ffi::{self, RetroGameInfo, RetroSystemAvInfo, RetroSystemInfo};
use super::options::{to_c_string, CoreOption, OptionStore};
use libloading::Library;
use netcode::emulator::{Emulator, EmulatorError, SavestateContext, VideoFrame};
use netcode::input::Buttons;
use std::collections::HashSet;
use std::ffi::{c_uint, c_void, CString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Content files larger than this are refused rather than read into memory
/// (cores that take huge content use `need_fullpath` and get only the path).
const MAX_CONTENT_BYTES: u64 = 1 << 30;

/// Game memory assembled from memory maps is capped at this many bytes.
const MAX_MAPPED_MEMORY_BYTES: usize = 64 << 20;

/// How the host is set up for one core.
#[derive(Clone, Debug)]
pub struct CoreConfig {
    /// Answered to GET_SYSTEM_DIRECTORY (BIOS files and the like).
    pub system_dir: PathBuf,
    /// Answered to GET_SAVE_DIRECTORY; SRAM is kept here as `<content stem>.srm`.
    pub save_dir: PathBuf,
    /// Whether SRAM is loaded from and written back to `save_dir`. Netplay
    /// turns it off so both sides start from the same memory.
    pub persist_save_ram: bool,
    /// `--option KEY=VALUE` overrides of the core's options.
    pub option_overrides: Vec<(String, String)>,
    /// Answered to GET_USERNAME.
    pub username: String,
}

impl CoreConfig {
    /// The usual set-up with the system and save folders under `data_dir`
    /// (`system/`, `saves/`), SRAM kept, no overrides.
    pub fn in_data_dir(data_dir: &Path) -> CoreConfig {
        CoreConfig {
            system_dir: data_dir.join("system"),
            save_dir: data_dir.join("saves"),
            persist_save_ram: true,
            option_overrides: Vec::new(),
            username: String::from("netcade"),
        }
    }
}

/// What a core says about itself (`retro_get_system_info`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreInfo {
    /// The core's name, as it reports it (e.g. `Stella`).
    pub name: String,
    /// The core's version string, as it reports it.
    pub version: String,
    /// File extensions it takes, without dots (`["a26", "bin"]`).
    pub valid_extensions: Vec<String>,
    /// The core wants only the content's path, not its bytes.
    pub need_fullpath: bool,
    /// The core wants archives passed as they are, not extracted.
    pub block_extract: bool,
}

/// Picture and sound timing of the loaded game.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AvInfo {
    /// Frames per second the game runs at (rarely exactly 60).
    pub fps: f64,
    /// Audio sample rate, in Hz (stereo sample pairs a second).
    pub sample_rate: f64,
    /// Usual picture width, in pixels.
    pub base_width: u32,
    /// Usual picture height, in pixels.
    pub base_height: u32,
    /// Largest picture width the game may draw, in pixels.
    pub max_width: u32,
    /// Largest picture height the game may draw, in pixels.
    pub max_height: u32,
    /// Display aspect ratio; when the core gives none, width / height.
    pub aspect_ratio: f32,
}

impl AvInfo {
    pub(super) fn from_ffi(info: &RetroSystemAvInfo) -> AvInfo {
        let mut av = AvInfo {
            fps: info.timing.fps,
            sample_rate: info.timing.sample_rate,
            ..AvInfo::default()
        };
        av.set_geometry(&info.geometry);
        av
    }

    pub(super) fn set_geometry(&mut self, geometry: &ffi::RetroGameGeometry) {
        self.base_width = geometry.base_width;
        self.base_height = geometry.base_height;
        self.max_width = geometry.max_width;
        self.max_height = geometry.max_height;
        self.aspect_ratio = if geometry.aspect_ratio > 0.0 {
            geometry.aspect_ratio
        } else if geometry.base_height > 0 {
            geometry.base_width as f32 / geometry.base_height as f32
        } else {
            0.0
        };
    }
}

/// One region of the core's memory map (SET_MEMORY_MAPS).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryDescriptor {
    /// RETRO_MEMDESC_* flags (constant, big-endian, alignment, minimum size).
    pub flags: u64,
    /// Where the region's bytes are in this process (0 for none).
    pub(super) address: usize,
    /// Offset from `address` to the first byte of the region, in bytes.
    pub offset: usize,
    /// Where the region starts in the emulated address space.
    pub start: usize,
    /// Address bits that must match `start` for an address to fall in the
    /// region (0: derived from `len`).
    pub select: usize,
    /// Address bits the chip ignores, removed before indexing the region.
    pub disconnect: usize,
    /// Length of the region, in bytes.
    pub len: usize,
    /// Name of the address space the region is in (empty for the main one).
    pub addrspace: String,
}

impl MemoryDescriptor {
    /// Whether the host can read this region (it has bytes behind it).
    pub fn is_readable(&self) -> bool {
        self.address != 0 && self.len > 0
    }

    /// Read-only regions (ROM) never change, so they add nothing to checksums.
    pub fn is_constant(&self) -> bool {
        self.flags & ffi::RETRO_MEMDESC_CONST != 0
    }
}

/// A button or axis the core described (SET_INPUT_DESCRIPTORS).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputDescriptor {
    /// Controller port, from 0 (player 1).
    pub port: u32,
    /// RETRO_DEVICE_* type of controller (joypad, analog, …).
    pub device: u32,
    /// For analog inputs, which stick (RETRO_DEVICE_INDEX_ANALOG_*); 0 otherwise.
    pub index: u32,
    /// Which button or axis (RETRO_DEVICE_ID_*).
    pub id: u32,
    /// What the core calls it for the player (e.g. `Fire`).
    pub description: String,
}

/// RETRO_SERIALIZATION_QUIRK_* flags a core reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SerializationQuirks(pub u64);

const QUIRK_NAMES: [&str; 7] = [
    "incomplete",
    "must-initialize",
    "core-variable-size",
    "front-variable-size",
    "single-session",
    "endian-dependent",
    "platform-dependent",
];

impl SerializationQuirks {
    /// States may hold bytes that are not part of the game (see docs/design.md).
    pub fn is_platform_dependent(self) -> bool {
        self.0 & (1 << 6) != 0
    }

    /// The state size may change while the game runs.
    pub fn has_variable_size(self) -> bool {
        self.0 & ffi::RETRO_SERIALIZATION_QUIRK_CORE_VARIABLE_SIZE != 0
    }
}

/// `none`, or the quirk names joined with `+`.
impl fmt::Display for SerializationQuirks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            return f.write_str("none");
        }
        let mut names: Vec<String> = QUIRK_NAMES
            .iter()
            .enumerate()
            .filter(|(bit, _)| self.0 & (1 << bit) != 0)
            .map(|(_, name)| name.to_string())
            .collect();
        let unknown = self.0 & !((1 << QUIRK_NAMES.len()) - 1);
        if unknown != 0 {
            names.push(format!("{unknown:#x}"));
        }
        f.write_str(&names.join("+"))
    }
}

/// The core's exports, resolved once at load.
struct CoreApi {
    set_environment: ffi::RetroSetEnvironmentFn,
    set_video_refresh: ffi::RetroSetVideoRefreshFn,
    set_audio_sample: ffi::RetroSetAudioSampleFn,
    set_audio_sample_batch: ffi::RetroSetAudioSampleBatchFn,
    set_input_poll: ffi::RetroSetInputPollFn,
    set_input_state: ffi::RetroSetInputStateFn,
    init: ffi::RetroInitFn,
    deinit: ffi::RetroDeinitFn,
    api_version: ffi::RetroApiVersionFn,
    get_system_info: ffi::RetroGetSystemInfoFn,
    get_system_av_info: ffi::RetroGetSystemAvInfoFn,
    set_controller_port_device: ffi::RetroSetControllerPortDeviceFn,
    reset: ffi::RetroResetFn,
    run: ffi::RetroRunFn,
    serialize_size: ffi::RetroSerializeSizeFn,
    serialize: ffi::RetroSerializeFn,
    unserialize: ffi::RetroUnserializeFn,
    load_game: ffi::RetroLoadGameFn,
    unload_game: ffi::RetroUnloadGameFn,
    get_memory_data: ffi::RetroGetMemoryDataFn,
    get_memory_size: ffi::RetroGetMemorySizeFn,
}

impl CoreApi {
    /// Resolves every export, naming the first one missing.
    fn resolve(library: &Library, path: &Path) -> Result<CoreApi, LibretroError> {
        fn symbol<T: Copy>(
            library: &Library,
            path: &Path,
            name: &'static str,
        ) -> Result<T, LibretroError> {
            let mut symbol_name = Vec::with_capacity(name.len() + 1);
            symbol_name.extend_from_slice(name.as_bytes());
            symbol_name.push(0);
            // SAFETY: each call site names `T` as the function-pointer type
            // libretro.h declares for this export.
            unsafe { library.get::<T>(&symbol_name) }
                .map(|symbol| *symbol)
                .map_err(|_| LibretroError::NotALibretroCore {
                    path: path.to_path_buf(),
                    symbol: name,
                })
        }
        Ok(CoreApi {
            set_environment: symbol(library, path, "retro_set_environment")?,
            set_video_refresh: symbol(library, path, "retro_set_video_refresh")?,
            set_audio_sample: symbol(library, path, "retro_set_audio_sample")?,
            set_audio_sample_batch: symbol(library, path, "retro_set_audio_sample_batch")?,
            set_input_poll: symbol(library, path, "retro_set_input_poll")?,
            set_input_state: symbol(library, path, "retro_set_input_state")?,
            init: symbol(library, path, "retro_init")?,
            deinit: symbol(library, path, "retro_deinit")?,
            api_version: symbol(library, path, "retro_api_version")?,
            get_system_info: symbol(library, path, "retro_get_system_info")?,
            get_system_av_info: symbol(library, path, "retro_get_system_av_info")?,
            set_controller_port_device: symbol(library, path, "retro_set_controller_port_device")?,
            reset: symbol(library, path, "retro_reset")?,
            run: symbol(library, path, "retro_run")?,
            serialize_size: symbol(library, path, "retro_serialize_size")?,
            serialize: symbol(library, path, "retro_serialize")?,
            unserialize: symbol(library, path, "retro_unserialize")?,
            load_game: symbol(library, path, "retro_load_game")?,
            unload_game: symbol(library, path, "retro_unload_game")?,
            get_memory_data: symbol(library, path, "retro_get_memory_data")?,
            get_memory_size: symbol(library, path, "retro_get_memory_size")?,
        })
    }
}

/// Canonical paths of the core files loaded in this process: one file's
/// globals can host only one core instance.
fn loaded_cores() -> &'static Mutex<HashSet<PathBuf>> {
    static LOADED: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    LOADED.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Holds a core file's place in [`loaded_cores`] until dropped.
struct LoadedPath(PathBuf);

impl LoadedPath {
    fn claim(canonical: PathBuf) -> Result<LoadedPath, LibretroError> {
        let mut loaded = loaded_cores()
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        if !loaded.insert(canonical.clone()) {
            return Err(LibretroError::AlreadyLoaded { path: canonical });
        }
        Ok(LoadedPath(canonical))
    }
}

impl Drop for LoadedPath {
    fn drop(&mut self) {
        let mut loaded = loaded_cores()
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        loaded.remove(&self.0);
    }
}

/// A libretro core loaded from a shared library, driven frame by frame.
///
/// Not `Send`: the context pointer is handed to the core's callbacks on the
/// thread that calls into it.
pub struct Core {
    api: CoreApi,
    /// Owned (from `Box::into_raw`); freed in `Drop`. A raw pointer rather
    /// than a `Box` because the callbacks turn it into `&mut` while the core
    /// runs, which must not alias a live `Box`.
    context: NonNull<CoreContext>,
    info: CoreInfo,
    path: PathBuf,
    config: CoreConfig,
    initialized: bool,
    content_loaded: bool,
    content_path: Option<PathBuf>,
    /// The content's bytes, kept while the game is loaded: cores may keep
    /// pointing into them.
    content_data: Vec<u8>,
    /// Game memory gathered from memory maps, for cores without system RAM.
    mapped_memory: Vec<u8>,
    uses_mapped_memory: bool,
    time_in_core: Duration,
    /// What `retro_serialize_size` last answered, for a core whose size is
    /// fixed (no `CORE_VARIABLE_SIZE` quirk): some cores serialize a whole
    /// state to answer it (stella), which doubled the cost of every save
    /// and load of a rollback.
    fixed_state_size: Option<usize>,
    /// `retro_run` calls since the content was loaded.
    frames_run: u64,
    /// The frame (counted from 1) on which the core asked to shut down.
    stopped_on_frame: Option<u64>,
    /// What the crash report says if the core crashes (in a mapping of its
    /// own, which stays put while a call into the core is in progress).
    crash_scene: CrashScene,
    // Dropped last, after the core was shut down in `Drop`.
    _loaded_path: LoadedPath,
    _library: Library,
}

/// The canonical path of `core_path`, a file that exists.
fn existing_core_file(core_path: &Path) -> Result<PathBuf, LibretroError> {
    if core_path.is_dir() {
        return Err(LibretroError::CoreIsDirectory {
            path: core_path.to_path_buf(),
        });
    }
    if !core_path.is_file() {
        return Err(LibretroError::CoreMissing {
            path: core_path.to_path_buf(),
        });
    }
    core_path
        .canonicalize()
        .map_err(|_| LibretroError::CoreMissing {
            path: core_path.to_path_buf(),
        })
}

/// Opens the library at `canonical` and finds its libretro exports, of API
/// version 1.
fn open_core_library(
    core_path: &Path,
    canonical: &Path,
) -> Result<(Library, CoreApi), LibretroError> {
    // SAFETY: loading a shared library runs its initialisers; the user
    // chose this file as a core, which is the trust a frontend extends.
    let library = unsafe { Library::new(canonical) }.map_err(|err| LibretroError::NotALibrary {
        path: core_path.to_path_buf(),
        reason: err.to_string(),
    })?;
    let api = CoreApi::resolve(&library, core_path)?;
    // SAFETY: a libretro export taking no arguments; callable before init.
    let found = unsafe { (api.api_version)() };
    if found != ffi::RETRO_API_VERSION {
        return Err(LibretroError::WrongApiVersion {
            path: core_path.to_path_buf(),
            found,
            expected: ffi::RETRO_API_VERSION,
        });
    }
    Ok((library, api))
}

/// The host's side of the callbacks: the core's directories (made if
/// missing), its option store and the strings the environment hands out.
fn host_context(config: &CoreConfig, canonical: &Path) -> NonNull<CoreContext> {
    let assets_dir = canonical.parent().unwrap_or(Path::new(".")).to_path_buf();
    for dir in [&config.system_dir, &config.save_dir] {
        if let Err(err) = std::fs::create_dir_all(dir) {
            tracing::warn!("cannot create {}: {err}", dir.display());
        }
    }
    let strings = HostStrings {
        system_dir: path_c_string(&config.system_dir),
        save_dir: path_c_string(&config.save_dir),
        core_assets_dir: path_c_string(&assets_dir),
        libretro_path: path_c_string(canonical),
        username: to_c_string(&config.username),
    };
    let context = CoreContext::new(OptionStore::new(config.option_overrides.clone()), strings);
    NonNull::from(Box::leak(Box::new(context)))
}

impl Core {
    /// Loads a core file, checks it is a libretro core of API version 1,
    /// hands it the host callbacks and initialises it.
    pub fn load(core_path: &Path, config: CoreConfig) -> Result<Core, LibretroError> {
        let canonical = existing_core_file(core_path)?;
        let loaded_path = LoadedPath::claim(canonical.clone())?;
        crash::install();
        let (library, api) = open_core_library(core_path, &canonical)?;
        let crash_scene =
            CrashScene::new(core_path).map_err(|source| LibretroError::CrashReportUnavailable {
                path: core_path.to_path_buf(),
                source,
            })?;
        let context = host_context(&config, &canonical);
        let mut core = Core {
            api,
            context,
            info: CoreInfo {
                name: String::new(),
                version: String::new(),
                valid_extensions: Vec::new(),
                need_fullpath: false,
                block_extract: false,
            },
            path: core_path.to_path_buf(),
            config,
            initialized: false,
            content_loaded: false,
            fixed_state_size: None,
            content_path: None,
            content_data: Vec::new(),
            mapped_memory: Vec::new(),
            uses_mapped_memory: false,
            time_in_core: Duration::ZERO,
            frames_run: 0,
            stopped_on_frame: None,
            crash_scene,
            _loaded_path: loaded_path,
            _library: library,
        };
        core.info = core.initialize();
        core.context_mut().core_name = core.info.name.clone();
        core.crash_scene
            .describe_core(&core.info.name, core_path, &core.info.valid_extensions);
        tracing::debug!(core = %core.info.name, version = %core.info.version, "loaded {}", core_path.display());
        Ok(core)
    }

    /// The documented start-up sequence: the host's callbacks, `retro_init`,
    /// then what the core says of itself.
    fn initialize(&mut self) -> CoreInfo {
        let mut system_info = RetroSystemInfo {
            library_name: std::ptr::null(),
            library_version: std::ptr::null(),
            valid_extensions: std::ptr::null(),
            need_fullpath: false,
            block_extract: false,
        };
        self.call(|api| {
            // SAFETY: the documented start-up sequence: callbacks first (the
            // host's functions match the libretro signatures), then init, then
            // system info into a struct of the declared layout.
            unsafe {
                (api.set_environment)(context::environment_callback);
                (api.set_video_refresh)(context::video_refresh_callback);
                (api.set_audio_sample)(context::audio_sample_callback);
                (api.set_audio_sample_batch)(context::audio_sample_batch_callback);
                (api.set_input_poll)(context::input_poll_callback);
                (api.set_input_state)(context::input_state_callback);
                (api.init)();
                (api.get_system_info)(&mut system_info);
            }
        });
        self.initialized = true;
        // SAFETY: the strings are NULL or NUL-terminated; cores keep them static.
        let text = |ptr| unsafe { context::c_str(ptr) }.map(|s| s.to_string_lossy().into_owned());
        CoreInfo {
            name: text(system_info.library_name).unwrap_or_else(|| file_stem(&self.path)),
            version: text(system_info.library_version).unwrap_or_default(),
            valid_extensions: text(system_info.valid_extensions)
                .unwrap_or_default()
                .split('|')
                .filter(|ext| !ext.is_empty())
                .map(str::to_string)
                .collect(),
            need_fullpath: system_info.need_fullpath,
            block_extract: system_info.block_extract,
        }
    }

    /// Loads the game (`None` for cores that run without content), then
    /// checks the option overrides against what the core declared and
    /// restores SRAM from the save directory.
    pub fn load_content(&mut self, content: Option<&Path>) -> Result<(), LibretroError> {
        if self.content_loaded {
            return Err(LibretroError::ContentAlreadyLoaded {
                core: self.info.name.clone(),
            });
        }
        self.crash_scene.describe_content(content);
        self.enter_phase(Phase::LoadingContent, 0);
        let loaded = match content {
            None => {
                if !self.context().support_no_game {
                    return Err(LibretroError::ContentRequired {
                        core: self.info.name.clone(),
                    });
                }
                // SAFETY: NULL game info is how a no-game core is started.
                let accepted = self.call(|api| unsafe { (api.load_game)(std::ptr::null()) });
                if !accepted {
                    return Err(LibretroError::NoContentRejected {
                        core: self.info.name.clone(),
                    });
                }
                true
            }
            Some(path) => self.load_game_file(path)?,
        };
        self.content_loaded = loaded;
        self.content_path = content.map(Path::to_path_buf);

        let mut av = RetroSystemAvInfo::default();
        // SAFETY: writes a struct of the declared layout; valid after load_game.
        self.call(|api| unsafe { (api.get_system_av_info)(&mut av) });
        self.context_mut().av_info = AvInfo::from_ffi(&av);
        for port in 0..MAX_PORTS as c_uint {
            // SAFETY: plain libretro call; the RetroPad is every core's default device.
            self.call(|api| unsafe {
                (api.set_controller_port_device)(port, ffi::RETRO_DEVICE_JOYPAD)
            });
        }

        self.context().options.validate_overrides(&self.info.name)?;
        if self.config.persist_save_ram {
            self.restore_save_ram();
        }
        self.uses_mapped_memory = self.system_ram().is_none()
            && self
                .context()
                .memory_descriptors
                .iter()
                .any(MemoryDescriptor::is_readable);
        self.refresh_mapped_memory();
        Ok(())
    }

    fn load_game_file(&mut self, path: &Path) -> Result<bool, LibretroError> {
        let absolute = self.read_content(path)?;
        let c_path = path_c_string(&absolute);
        let game = RetroGameInfo {
            path: c_path.as_ptr(),
            data: if self.content_data.is_empty() {
                std::ptr::null()
            } else {
                self.content_data.as_ptr().cast::<c_void>()
            },
            size: self.content_data.len(),
            meta: std::ptr::null(),
        };
        self.context_mut().core_errors.clear();
        // SAFETY: `game` and the strings and bytes it points to outlive the
        // call (the bytes stay in `content_data` while the game is loaded).
        let accepted = self.call(|api| unsafe { (api.load_game)(&game) });
        if !accepted {
            self.content_data = Vec::new();
            return Err(LibretroError::ContentRejected {
                core: self.info.name.clone(),
                path: path.to_path_buf(),
            });
        }
        if let Some(error) = self.why_loaded_content_cannot_run(path) {
            // SAFETY: plain libretro call; load_game succeeded.
            self.call(|api| unsafe { (api.unload_game)() });
            self.content_data = Vec::new();
            return Err(error);
        }
        Ok(true)
    }

    /// Checks the content file and keeps its bytes in `content_data` for
    /// cores that take bytes; returns its absolute path.
    fn read_content(&mut self, path: &Path) -> Result<PathBuf, LibretroError> {
        if path.is_dir() {
            return Err(LibretroError::ContentIsDirectory {
                path: path.to_path_buf(),
            });
        }
        if !path.is_file() {
            return Err(LibretroError::ContentMissing {
                path: path.to_path_buf(),
            });
        }
        let unreadable = |source| LibretroError::ContentUnreadable {
            path: path.to_path_buf(),
            source,
        };
        let size = std::fs::metadata(path).map_err(unreadable)?.len();
        // Cores told "no bytes" take it for a need_fullpath mix-up or a
        // missing file, which hides the real problem.
        if size == 0 {
            return Err(LibretroError::ContentEmpty {
                path: path.to_path_buf(),
            });
        }
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let is_archive = absolute
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("zip"));
        // Cores that need the path (or an archive they open themselves) get
        // only the path; others get the bytes too.
        if self.info.need_fullpath || is_archive {
            self.content_data = Vec::new();
        } else {
            if size > MAX_CONTENT_BYTES {
                return Err(LibretroError::ContentTooLarge {
                    path: path.to_path_buf(),
                    size,
                    limit: MAX_CONTENT_BYTES,
                });
            }
            self.content_data = std::fs::read(path).map_err(unreadable)?;
        }
        Ok(absolute)
    }

    /// Why a core that accepted `path` cannot run it after all: it asked to
    /// shut down while loading, or it logged an error and has no state.
    fn why_loaded_content_cannot_run(&self, path: &Path) -> Option<LibretroError> {
        if self.context().shutdown_requested {
            return Some(LibretroError::ContentAbandoned {
                core: self.info.name.clone(),
                path: path.to_path_buf(),
            });
        }
        let said = self.context().core_errors.first()?.clone();
        // SAFETY: plain libretro call; content is loaded.
        let state_size = self.call(|api| unsafe { (api.serialize_size)() });
        (state_size == 0).then(|| LibretroError::ContentFailed {
            core: self.info.name.clone(),
            path: path.to_path_buf(),
            said,
        })
    }

    /// What the core says about itself (name, version, extensions).
    pub fn info(&self) -> &CoreInfo {
        &self.info
    }

    /// The core file as given to [`Core::load`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The content loaded with [`Core::load_content`]; `None` before that and
    /// for a core started without content.
    pub fn content_path(&self) -> Option<&Path> {
        self.content_path.as_deref()
    }

    /// Picture size and timing of the loaded game; updated when the core
    /// changes geometry or timing.
    pub fn av_info(&self) -> AvInfo {
        self.context().av_info
    }

    /// The options the core declared, with the value it is given for each.
    pub fn options(&self) -> &[CoreOption] {
        self.context().options.options()
    }

    /// The categories the core groups its options in (v2 definitions).
    pub fn option_categories(&self) -> &[super::options::OptionCategory] {
        self.context().options.categories()
    }

    /// Serialization quirks the core reported (SET_SERIALIZATION_QUIRKS);
    /// none if it reported nothing.
    pub fn serialization_quirks(&self) -> SerializationQuirks {
        SerializationQuirks(self.context().serialization_quirks)
    }

    /// The memory map the core reported (SET_MEMORY_MAPS); empty if it reported none.
    pub fn memory_descriptors(&self) -> &[MemoryDescriptor] {
        &self.context().memory_descriptors
    }

    /// Buttons and axes the core described (SET_INPUT_DESCRIPTORS); empty if
    /// it described none.
    pub fn input_descriptors(&self) -> &[InputDescriptor] {
        &self.context().input_descriptors
    }

    /// Whether the core runs without content (SET_SUPPORT_NO_GAME).
    pub fn supports_no_game(&self) -> bool {
        self.context().support_no_game
    }

    /// The core's main RAM, if it exposes it.
    pub fn system_ram(&self) -> Option<&[u8]> {
        self.memory(ffi::RETRO_MEMORY_SYSTEM_RAM)
    }

    /// The cartridge's battery-backed RAM, if any.
    pub fn save_ram(&self) -> Option<&[u8]> {
        self.memory(ffi::RETRO_MEMORY_SAVE_RAM)
    }

    fn memory(&self, id: c_uint) -> Option<&[u8]> {
        // SAFETY: plain getters; they call no callbacks.
        let (data, size) = unsafe {
            (
                (self.api.get_memory_data)(id),
                (self.api.get_memory_size)(id),
            )
        };
        if data.is_null() || size == 0 {
            return None;
        }
        // SAFETY: the core owns `size` bytes at `data` while the game is
        // loaded; the slice borrows `self`, so no `&mut self` call (which
        // could run the core and change them) can happen while it lives.
        Some(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) })
    }

    fn mut_memory(&mut self, id: c_uint) -> Option<&mut [u8]> {
        // SAFETY: plain getters; they call no callbacks.
        let (data, size) = unsafe {
            (
                (self.api.get_memory_data)(id),
                (self.api.get_memory_size)(id),
            )
        };
        if data.is_null() || size == 0 {
            return None;
        }
        // SAFETY: as in `memory`, and the `&mut self` borrow makes it unique.
        Some(unsafe { std::slice::from_raw_parts_mut(data.cast::<u8>(), size) })
    }

    /// Where SRAM for the loaded content is kept.
    pub fn save_ram_path(&self) -> Option<PathBuf> {
        let stem = self.content_path.as_deref()?.file_stem()?;
        let mut name = stem.to_os_string();
        name.push(".srm");
        Some(self.config.save_dir.join(name))
    }

    fn restore_save_ram(&mut self) {
        let Some(path) = self.save_ram_path() else {
            return;
        };
        if !path.is_file() {
            return;
        }
        match std::fs::read(&path) {
            Ok(saved) => {
                if let Some(sram) = self.mut_memory(ffi::RETRO_MEMORY_SAVE_RAM) {
                    let length = saved.len().min(sram.len());
                    sram[..length].copy_from_slice(&saved[..length]);
                    tracing::info!("restored save RAM from {}", path.display());
                }
            }
            Err(err) => tracing::warn!("cannot read save RAM {}: {err}", path.display()),
        }
    }

    fn persist_save_ram(&self) {
        let Some(path) = self.save_ram_path() else {
            return;
        };
        let Some(sram) = self.save_ram() else { return };
        // Cores without a battery often still expose zeroed SRAM: only write
        // one that holds something, or update a file that already exists.
        if !path.exists() && sram.iter().all(|&byte| byte == 0) {
            return;
        }
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(err) = std::fs::write(&path, sram) {
            tracing::warn!("cannot write save RAM {}: {err}", path.display());
        }
    }

    /// Presses the console's reset button.
    pub fn reset(&mut self) {
        self.enter_phase(Phase::Resetting, self.frames_run);
        // SAFETY: plain libretro call.
        self.call(|api| unsafe { (api.reset)() });
        self.refresh_mapped_memory();
    }

    /// Time spent inside the core's own `retro_run`, `retro_serialize` and
    /// `retro_unserialize` since load or the last reset of this counter.
    pub fn time_in_core(&self) -> Duration {
        self.time_in_core
    }

    /// Sets [`Core::time_in_core`] back to zero, to time a new stretch of frames.
    pub fn reset_time_in_core(&mut self) {
        self.time_in_core = Duration::ZERO;
    }

    /// Records what the next calls into the core are for: in the crash
    /// report, and for GET_SAVESTATE_CONTEXT. `frame` as in
    /// [`CrashScene::set_phase`].
    fn enter_phase(&mut self, phase: Phase, frame: u64) {
        self.crash_scene.set_phase(phase, frame);
        self.context_mut().in_savestate_call =
            matches!(phase, Phase::SavingState | Phase::LoadingState);
    }

    /// Why a core that answers a state size of 0 cannot save.
    fn why_no_state(&self) -> String {
        let name = &self.info.name;
        let content = self.content_path.as_deref().unwrap_or(Path::new(""));
        if !self.context().shutdown_requested {
            if self.frames_run == 0 && self.content_path.is_some() {
                // FBNeo takes a zip it cannot run and only says so (with
                // SHUTDOWN) on its first frame.
                return format!(
                    "core {name} answers a state size of 0 before its first frame: either it \
                     cannot save states, or it could not use the content {}{}",
                    content.display(),
                    super::error::content_hint(content)
                );
            }
            return format!("core {name} does not support savestates");
        }
        format!("core {name} stopped: it asked to shut down")
    }

    /// The work of one rollback as bare libretro calls and nothing else:
    /// `retro_unserialize(from)`, then per buffer in `into` one `retro_run`
    /// (no inputs held, video not rendered) and one `retro_serialize` into
    /// it. The reference a raw C frontend would reach, for the
    /// rollback-budget benchmark's baseline; netcade's own path is the
    /// [`Emulator`] implementation. Each buffer must already hold
    /// `retro_serialize_size` bytes. Returns whether every call succeeded.
    #[doc(hidden)]
    pub fn bare_rollback(&mut self, from: &[u8], into: &mut [Vec<u8>]) -> bool {
        let context = self.context_mut();
        context.inputs = [Buttons::NONE; MAX_PORTS];
        context.render_video = false;
        // The samples of these frames pile up (a few thousand): cleared
        // here rather than per frame, to keep the loop bare.
        context.audio.clear();
        self.call(|api| {
            // SAFETY: `from` holds `from.len()` readable bytes.
            let mut ok = unsafe { (api.unserialize)(from.as_ptr().cast::<c_void>(), from.len()) };
            for buffer in into.iter_mut() {
                // SAFETY: plain libretro calls; `buffer` holds `buffer.len()`
                // writable bytes.
                unsafe {
                    (api.run)();
                    ok &= (api.serialize)(buffer.as_mut_ptr().cast::<c_void>(), buffer.len());
                }
            }
            ok
        })
    }

    fn context(&self) -> &CoreContext {
        // SAFETY: the context lives as long as `self`; callbacks only touch it
        // during `call`, which takes no outstanding borrow of it.
        unsafe { self.context.as_ref() }
    }

    fn context_mut(&mut self) -> &mut CoreContext {
        // SAFETY: as in `context`, and `&mut self` makes the borrow unique.
        unsafe { self.context.as_mut() }
    }

    /// Calls into the core with this core's context active for callbacks
    /// and its crash scene active for the crash report; a C++ exception
    /// that escapes the core comes back as an error.
    fn try_call<R>(&self, body: impl FnOnce(&CoreApi) -> R) -> Result<R, CoreException> {
        let _active = ActiveContext::activate(self.context.as_ptr());
        let _in_core = InCore::enter(&self.crash_scene);
        catching(|| body(&self.api))
    }

    /// Like `try_call`, for a call that has no way to fail: an exception
    /// that escapes it is the core's crash.
    fn call<R>(&self, body: impl FnOnce(&CoreApi) -> R) -> R {
        self.try_call(body).unwrap_or_else(|exception| {
            crash::exception_escaped(&self.crash_scene, &exception.what)
        })
    }

    /// Like `try_call`, adding the time spent to `time_in_core`.
    fn timed_try_call<R>(&mut self, body: impl FnOnce(&CoreApi) -> R) -> Result<R, CoreException> {
        let started = Instant::now();
        let result = self.try_call(body);
        self.time_in_core += started.elapsed();
        result
    }

    /// What to say of an exception that escaped the core while `doing`.
    fn threw(&self, doing: &str, exception: &CoreException) -> String {
        let name = &self.info.name;
        match exception.what.as_str() {
            "" => format!("core {name} threw a C++ exception {doing}"),
            what => format!("core {name} threw a C++ exception {doing}: {what}"),
        }
    }

    /// `retro_serialize` into `into`, sized to what the core promises;
    /// with `zeroed`, bytes it does not write are zero rather than what
    /// `into` held.
    fn serialize_into(&mut self, into: &mut Vec<u8>, zeroed: bool) -> Result<(), EmulatorError> {
        self.check_running()?;
        self.enter_phase(Phase::SavingState, self.frames_run);
        let mut size = self.state_size();
        if size == 0 {
            return Err(EmulatorError::SaveFailed {
                reason: self.why_no_state(),
            });
        }
        if zeroed {
            into.clear();
        }
        // Only bytes beyond the old length are written here.
        into.resize(size, 0);
        // SAFETY: `into` holds `size` writable bytes.
        let mut saved = self
            .timed_try_call(|api| unsafe {
                (api.serialize)(into.as_mut_ptr().cast::<c_void>(), size)
            })
            .map_err(|exception| EmulatorError::SaveFailed {
                reason: self.threw("saving its state", &exception),
            })?;
        if !saved && self.fixed_state_size.is_some() && self.fresh_state_size() != size {
            // A core that changed its size after all: once more at the new one.
            size = self.state_size();
            into.resize(size, 0);
            // SAFETY: `into` holds `size` writable bytes.
            saved = self
                .timed_try_call(|api| unsafe {
                    (api.serialize)(into.as_mut_ptr().cast::<c_void>(), size)
                })
                .map_err(|exception| EmulatorError::SaveFailed {
                    reason: self.threw("saving its state", &exception),
                })?;
        }
        if !saved {
            return Err(EmulatorError::SaveFailed {
                reason: format!("retro_serialize of core {} returned false", self.info.name),
            });
        }
        Ok(())
    }

    /// The size `retro_serialize_size` promises: asked once for a core
    /// whose size is fixed, every time for one whose size varies.
    fn state_size(&mut self) -> usize {
        match self.fixed_state_size {
            Some(size) => size,
            None => self.fresh_state_size(),
        }
    }

    /// Asks the core for its state size again (and remembers it when fixed).
    fn fresh_state_size(&mut self) -> usize {
        // SAFETY: plain libretro call; an exception out of it is the core's
        // crash, as out of any call that cannot fail.
        let size = self
            .timed_try_call(|api| unsafe { (api.serialize_size)() })
            .unwrap_or_else(|exception| {
                crash::exception_escaped(&self.crash_scene, &exception.what)
            });
        let fixed = !self.serialization_quirks().has_variable_size() && size > 0;
        self.fixed_state_size = fixed.then_some(size);
        size
    }

    fn refresh_mapped_memory(&mut self) {
        if !self.uses_mapped_memory {
            return;
        }
        let mut buffer = std::mem::take(&mut self.mapped_memory);
        // SAFETY: the descriptors were declared by this core, whose game is
        // loaded, so their regions are live.
        unsafe { gather_mapped_memory(&self.context().memory_descriptors, &mut buffer) };
        self.mapped_memory = buffer;
    }
}

/// Copies the writable regions of a memory map into `into` (cleared first,
/// allocation reused), each region once even when it is mirrored.
///
/// # Safety
/// Every readable descriptor whose region fits in the address space has `len`
/// readable bytes at `address + offset`.
unsafe fn gather_mapped_memory(descriptors: &[MemoryDescriptor], into: &mut Vec<u8>) {
    into.clear();
    // The numbers come from the core: a region whose end does not fit in
    // the address space cannot be real, and is left out rather than
    // overflowing.
    let region = |descriptor: &MemoryDescriptor| {
        let address = descriptor.address.checked_add(descriptor.offset)?;
        address.checked_add(descriptor.len)?;
        Some((address, descriptor.len))
    };
    // The regions that count: readable, writable, and real.
    let counted = |descriptor: &MemoryDescriptor| {
        (descriptor.is_readable() && !descriptor.is_constant())
            .then(|| region(descriptor))
            .flatten()
    };
    for (index, descriptor) in descriptors.iter().enumerate() {
        let Some((address, len)) = counted(descriptor) else {
            continue;
        };
        // Maps are short, so a scan of the earlier ones finds mirrors
        // without allocating every frame.
        if descriptors[..index]
            .iter()
            .any(|earlier| counted(earlier) == Some((address, len)))
        {
            continue;
        }
        if len > MAX_MAPPED_MEMORY_BYTES - into.len() {
            break;
        }
        // SAFETY: per the function's contract.
        let bytes = unsafe { std::slice::from_raw_parts(address as *const u8, len) };
        into.extend_from_slice(bytes);
    }
}

impl Emulator for Core {
    fn run_frame(&mut self, inputs: &[Buttons], render: bool) {
        let context = self.context_mut();
        for (port, held) in context.inputs.iter_mut().enumerate() {
            *held = inputs.get(port).copied().unwrap_or(Buttons::NONE);
        }
        context.render_video = render;
        context.audio.clear();
        self.enter_phase(Phase::RunningFrame, self.frames_run + 1);
        // SAFETY: plain libretro call; content is loaded.
        if let Err(exception) = self.timed_try_call(|api| unsafe { (api.run)() }) {
            crash::exception_escaped(&self.crash_scene, &exception.what);
        }
        self.frames_run += 1;
        if self.context().shutdown_requested && self.stopped_on_frame.is_none() {
            self.stopped_on_frame = Some(self.frames_run);
        }
        self.refresh_mapped_memory();
    }

    fn run_frame_unheard(&mut self, inputs: &[Buttons], render: bool) {
        self.context_mut().play_audio = false;
        self.run_frame(inputs, render);
        self.context_mut().play_audio = true;
    }

    fn check_running(&self) -> Result<(), EmulatorError> {
        let Some(frame) = self.stopped_on_frame else {
            return Ok(());
        };
        let content = self.content_path.as_deref().unwrap_or(Path::new(""));
        let when = if frame == 1 {
            "on its first frame".to_string()
        } else {
            format!("on its frame {frame}")
        };
        Err(EmulatorError::CoreStopped {
            reason: format!(
                "core {} asked to shut down {when} running {}, as cores do when they cannot run \
                 the content{}",
                self.info.name,
                content.display(),
                super::error::content_hint(content)
            ),
            on_first_frame: frame == 1,
        })
    }

    fn save_state(&mut self, into: &mut Vec<u8>) -> Result<(), EmulatorError> {
        // Zeroed every time: cores may write less than they promise, and
        // leftover bytes would make equal states checksum differently.
        // Clearing keeps the allocation, so this allocates only on growth.
        self.serialize_into(into, true)
    }

    fn save_state_to_load(&mut self, into: &mut Vec<u8>) -> Result<(), EmulatorError> {
        // Not zeroed: whatever the core does not write is never read back
        // by its unserialize, and clearing a whole promised buffer costs
        // genesis_plus_gx five times its own serialize (1 MB promised,
        // ~145 KB written).
        self.serialize_into(into, false)
    }

    fn load_state(&mut self, from: &[u8]) -> Result<(), EmulatorError> {
        self.check_running()?;
        self.enter_phase(Phase::LoadingState, self.frames_run);
        let mut expected = self.state_size();
        if from.len() != expected && self.fixed_state_size.is_some() {
            expected = self.fresh_state_size();
        }
        let size_ok = if self.serialization_quirks().has_variable_size() {
            !from.is_empty()
        } else {
            from.len() == expected
        };
        if !size_ok {
            return Err(EmulatorError::LoadFailed {
                reason: format!(
                    "the state is {} bytes, core {} expects {expected}",
                    from.len(),
                    self.info.name
                ),
            });
        }
        // SAFETY: `from` holds `from.len()` readable bytes.
        let loaded = self
            .timed_try_call(|api| unsafe {
                (api.unserialize)(from.as_ptr().cast::<c_void>(), from.len())
            })
            .map_err(|exception| EmulatorError::LoadFailed {
                reason: self.threw("loading the state", &exception),
            })?;
        if !loaded {
            return Err(EmulatorError::LoadFailed {
                reason: format!(
                    "retro_unserialize of core {} returned false",
                    self.info.name
                ),
            });
        }
        self.refresh_mapped_memory();
        Ok(())
    }

    fn set_savestate_context(&mut self, context: SavestateContext) {
        self.context_mut().savestate_context = context;
    }

    fn game_memory(&self) -> &[u8] {
        if self.uses_mapped_memory {
            &self.mapped_memory
        } else {
            self.system_ram().unwrap_or(&[])
        }
    }

    fn video_frame(&self) -> Option<VideoFrame<'_>> {
        self.context().frame.as_video_frame()
    }

    fn audio_samples(&self) -> &[i16] {
        &self.context().audio
    }

    fn frames_per_second(&self) -> f64 {
        self.context().av_info.fps
    }

    fn sample_rate(&self) -> f64 {
        self.context().av_info.sample_rate
    }
}

impl Drop for Core {
    fn drop(&mut self) {
        self.enter_phase(Phase::Unloading, self.frames_run);
        if self.content_loaded {
            if self.config.persist_save_ram {
                self.persist_save_ram();
            }
            // SAFETY: plain libretro call; the game is loaded.
            self.call(|api| unsafe { (api.unload_game)() });
        }
        if self.initialized {
            // SAFETY: plain libretro call; init ran.
            self.call(|api| unsafe { (api.deinit)() });
        }
        // SAFETY: created by `Box::leak` in `load`, freed once here; the core
        // has been shut down, so no callback can reach it any more.
        drop(unsafe { Box::from_raw(self.context.as_ptr()) });
    }
}

impl fmt::Debug for Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Core")
            .field("path", &self.path)
            .field("info", &self.info)
            .field("content", &self.content_path)
            .finish_non_exhaustive()
    }
}

fn path_c_string(path: &Path) -> CString {
    to_c_string(&path.to_string_lossy())
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn descriptor(bytes: &[u8], offset: usize, len: usize, flags: u64) -> MemoryDescriptor {
        MemoryDescriptor {
            flags,
            address: bytes.as_ptr() as usize,
            offset,
            start: 0,
            select: 0,
            disconnect: 0,
            len,
            addrspace: String::new(),
        }
    }

    #[test]
    fn mapped_memory_is_the_writable_regions_each_counted_once() {
        let work_ram = [1u8, 2, 3, 4];
        let rom = [9u8; 8];
        let save_ram = [5u8, 6, 7, 8];
        let descriptors = vec![
            descriptor(&rom, 0, rom.len(), ffi::RETRO_MEMDESC_CONST),
            descriptor(&work_ram, 0, 4, 0),
            descriptor(&work_ram, 0, 4, 0), // a mirror
            descriptor(&save_ram, 2, 2, 0),
            MemoryDescriptor {
                address: 0,
                ..descriptor(&rom, 0, 4, 0)
            },
        ];
        let mut gathered = vec![0xff; 64];
        // SAFETY: every readable descriptor points into a live local array.
        unsafe { gather_mapped_memory(&descriptors, &mut gathered) };
        assert_eq!(gathered, vec![1, 2, 3, 4, 7, 8]);
    }

    #[test]
    fn a_memory_map_with_impossible_sizes_is_left_out_not_overflowed() {
        let work_ram = [1u8, 2, 3, 4];
        let descriptors = vec![
            descriptor(&work_ram, usize::MAX, 4, 0),
            descriptor(&work_ram, 0, usize::MAX, 0),
            descriptor(&work_ram, 0, 4, 0),
        ];
        let mut gathered = Vec::new();
        // SAFETY: the only descriptor whose region fits in the address
        // space points into a live local array; the others must be skipped
        // before any read.
        unsafe { gather_mapped_memory(&descriptors, &mut gathered) };
        assert_eq!(gathered, vec![1, 2, 3, 4]);
    }

    #[test]
    fn quirks_print_their_names() {
        assert_eq!(SerializationQuirks(0).to_string(), "none");
        assert_eq!(
            SerializationQuirks((1 << 6) | (1 << 1)).to_string(),
            "must-initialize+platform-dependent"
        );
        assert!(SerializationQuirks(1 << 6).is_platform_dependent());
        assert_eq!(SerializationQuirks(1 << 9).to_string(), "0x200");
    }

    #[test]
    fn an_aspect_ratio_of_zero_means_width_over_height() {
        let mut av = AvInfo::default();
        av.set_geometry(&ffi::RetroGameGeometry {
            base_width: 320,
            base_height: 240,
            max_width: 320,
            max_height: 240,
            aspect_ratio: 0.0,
        });
        assert!((av.aspect_ratio - 4.0 / 3.0).abs() < 1e-6);
    }

    #[test]
    fn the_default_config_keeps_saves_and_system_files_apart_and_persists_sram() {
        let config = CoreConfig::in_data_dir(Path::new("data"));
        assert_ne!(config.save_dir, config.system_dir);
        assert!(config.persist_save_ram);
        assert!(config.option_overrides.is_empty());
    }
}
