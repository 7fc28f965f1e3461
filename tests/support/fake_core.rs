//! Fake libretro cores compiled at test time with the C compiler netcade's
//! own build already needs (for its log shim): a core that misbehaves in
//! one chosen way, which no real core does on demand.

use std::path::{Path, PathBuf};

/// What the fake core does; each `in_*` is C code run at the start of that
/// libretro function (it may use `frames`, the `retro_run` calls so far,
/// the `crash_*` helpers of the template and `ask_to_shut_down`; built as
/// C++, `throw_from_core` too).
#[derive(Clone, Debug)]
pub struct FakeCore {
    /// What `retro_api_version` answers.
    pub api_version: u32,
    pub in_load_game: &'static str,
    pub in_system_info: &'static str,
    pub in_run: &'static str,
    pub in_serialize: &'static str,
    pub in_unserialize: &'static str,
    /// Built as C++ (as Stella, whose exceptions escape its C functions).
    pub cplusplus: bool,
}

impl Default for FakeCore {
    fn default() -> Self {
        FakeCore {
            api_version: 1,
            in_load_game: "",
            in_system_info: "",
            in_run: "",
            in_serialize: "",
            in_unserialize: "",
            cplusplus: false,
        }
    }
}

/// A working core named "Fake" that takes `.fake` files, draws nothing and
/// saves 16 bytes; its 4 bytes of system RAM mix every frame's buttons of
/// two players (so two machines agree only if they ran the same inputs);
/// `@IN_*@` mark where the chosen misbehaviour goes.
const TEMPLATE: &str = r#"
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#ifdef __cplusplus
#include <stdexcept>
/* An exception out of a C entry point, as a C++ core's bug lets one out. */
static void throw_from_core(const char *what) { throw std::runtime_error(what); }
extern "C" {
#endif

struct retro_system_info {
    const char *library_name; const char *library_version;
    const char *valid_extensions; bool need_fullpath; bool block_extract;
};
struct retro_system_av_info {
    unsigned base_width, base_height, max_width, max_height; float aspect_ratio;
    double fps, sample_rate;
};

static unsigned frames;
static unsigned mix;
static volatile int zero;
static bool (*environment)(unsigned command, void *data);
static void (*input_poll)(void);
static short (*input_state)(unsigned port, unsigned device, unsigned index, unsigned id);

/* Both joypads' twelve RetroPad buttons, mixed into system RAM. */
static void mix_buttons(void) {
    if (!input_poll || !input_state) return;
    input_poll();
    for (unsigned port = 0; port < 2; port++)
        for (unsigned id = 0; id < 12; id++)
            mix = mix * 31u + (input_state(port, 1, 0, id) ? id + 1 : 0);
}

/* RETRO_ENVIRONMENT_SHUTDOWN: what cores send when they cannot go on. */
static void ask_to_shut_down(void) { environment(7, NULL); }

/* Real faults, as a core's own bug would raise them. */
static void crash_with_sigfpe(void) { volatile int one = 1; one = one / zero; }
static void crash_with_sigsegv(void) { *(volatile int *)(size_t)zero = 1; }
static int crash_with_stack_overflow(int depth) {
    volatile char frame[4096];
    frame[0] = (char)depth;
    return crash_with_stack_overflow(depth + 1) + frame[0];
}

static void *crash_thread(void *unused) { (void)unused; crash_with_sigsegv(); return NULL; }
/* A fault on a thread the core started itself, as a renderer thread's. */
static void crash_on_own_thread(void) {
    pthread_t thread;
    pthread_create(&thread, NULL, crash_thread, NULL);
    pthread_join(thread, NULL);
}

unsigned retro_api_version(void) { return @API_VERSION@; }
void retro_set_environment(bool (*f)(unsigned, void *)) { environment = f; }
void retro_set_video_refresh(void *f) { (void)f; }
void retro_set_audio_sample(void *f) { (void)f; }
void retro_set_audio_sample_batch(void *f) { (void)f; }
void retro_set_input_poll(void (*f)(void)) { input_poll = f; }
void retro_set_input_state(short (*f)(unsigned, unsigned, unsigned, unsigned)) { input_state = f; }
void retro_init(void) {}
void retro_deinit(void) {}
void retro_get_system_info(struct retro_system_info *info) {
    @IN_SYSTEM_INFO@
    memset(info, 0, sizeof *info);
    info->library_name = "Fake";
    info->library_version = "1";
    info->valid_extensions = "fake";
}
void retro_get_system_av_info(struct retro_system_av_info *av) {
    memset(av, 0, sizeof *av);
    av->base_width = av->max_width = 4;
    av->base_height = av->max_height = 4;
    av->fps = 60.0;
    av->sample_rate = 48000.0;
}
void retro_set_controller_port_device(unsigned port, unsigned device) { (void)port; (void)device; }
void retro_reset(void) {}
void retro_run(void) { frames++; mix_buttons(); @IN_RUN@ }
size_t retro_serialize_size(void) { return 16; }
bool retro_serialize(void *data, size_t size) {
    @IN_SERIALIZE@
    memset(data, 0, size);
    memcpy(data, &frames, sizeof frames);
    memcpy((char *)data + 4, &mix, sizeof mix);
    return true;
}
bool retro_unserialize(const void *data, size_t size) {
    @IN_UNSERIALIZE@
    (void)size;
    memcpy(&frames, data, sizeof frames);
    memcpy(&mix, (const char *)data + 4, sizeof mix);
    return true;
}
bool retro_load_game(const void *game) { (void)game; @IN_LOAD_GAME@ return true; }
void retro_unload_game(void) {}
/* RETRO_MEMORY_SYSTEM_RAM is 2. */
void *retro_get_memory_data(unsigned id) { return id == 2 ? &mix : NULL; }
size_t retro_get_memory_size(unsigned id) { return id == 2 ? sizeof mix : 0; }
#ifdef __cplusplus
}
#endif
"#;

impl FakeCore {
    /// Compiles the core into `dir` and returns the library's path.
    pub fn build(&self, dir: &Path) -> PathBuf {
        let source = TEMPLATE
            .replace("@API_VERSION@", &self.api_version.to_string())
            .replace("@IN_LOAD_GAME@", self.in_load_game)
            .replace("@IN_SYSTEM_INFO@", self.in_system_info)
            .replace("@IN_RUN@", self.in_run)
            .replace("@IN_SERIALIZE@", self.in_serialize)
            .replace("@IN_UNSERIALIZE@", self.in_unserialize);
        let c_file = dir.join(if self.cplusplus {
            "fake_core.cpp"
        } else {
            "fake_core.c"
        });
        let library = dir.join("fake_libretro.so");
        std::fs::write(&c_file, source).unwrap();
        let (variable, default) = if self.cplusplus {
            ("CXX", "c++")
        } else {
            ("CC", "cc")
        };
        let compiler = std::env::var(variable).unwrap_or_else(|_| default.to_string());
        // -O0: the faults must stay in the code as written.
        let status = std::process::Command::new(&compiler)
            .args(["-shared", "-fPIC", "-O0", "-pthread", "-o"])
            .arg(&library)
            .arg(&c_file)
            .status()
            .unwrap_or_else(|err| panic!("cannot run the C compiler {compiler}: {err}"));
        assert!(status.success(), "{compiler} could not build the fake core");
        library
    }
}
