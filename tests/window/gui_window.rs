//! The window itself, in this process, on whatever display `DISPLAY` names
//! (`.ci/run` runs these under `xvfb-run`, where Mesa's llvmpipe gives an
//! OpenGL 4.5 core context): shaders build, every pixel format reaches the
//! screen exactly, and keys injected as SDL events reach the core.
#![cfg(feature = "gui")]

use netcade::engine::inputs::NO_INPUTS;
use netcade::engine::png::frame_to_rgb;
use netcade::gui::input_map::InputMap;
use netcade::gui::menu::script::{key_event, key_repeated};
use netcade::gui::overlay::Overlay;
use netcade::gui::play::{play_in_window, LocalPlay, Pacing};
use netcade::gui::renderer::DisplayShader;
use netcade::gui::window::{DisplayArgs, Window};
use netcade::live::front_end::FrontEnd;
use netcode::emulator::{Emulator, PixelFormat, VideoFrame};
use netcode::input::Buttons;
use sdl2::event::Event;
use sdl2::keyboard::{Keycode, Mod};
use std::sync::Mutex;

/// SDL allows one live context per process, used from the thread that made
/// it: the tests take turns.
static SDL: Mutex<()> = Mutex::new(());

fn open_window(size: (u32, u32), shader: DisplayShader, integer_scale: bool) -> Window {
    let display = DisplayArgs {
        shader,
        integer_scale,
        window_size: Some(size),
        ..DisplayArgs::default()
    };
    Window::open("netcade test", size, 0.0, &display, InputMap::defaults)
        .unwrap_or_else(|err| panic!("the window opens (run under xvfb-run): {err}"))
}

/// `rgb` (width × height) scaled by whole factors.
fn scaled(rgb: &[u8], width: u32, height: u32, by: u32) -> Vec<u8> {
    let mut out = Vec::new();
    for y in 0..height * by {
        for x in 0..width * by {
            let at = (((y / by) * width + x / by) * 3) as usize;
            out.extend_from_slice(&rgb[at..at + 3]);
        }
    }
    out
}

#[test]
fn every_shader_in_the_shaders_folder_compiles_and_links_on_this_driver() {
    let _sdl = SDL.lock().unwrap_or_else(|e| e.into_inner());
    let window = open_window((320, 240), DisplayShader::default(), false);
    assert!(
        window.gl_version().contains("Core Profile")
            || window.gl_version().starts_with('3')
            || window.gl_version().starts_with('4'),
        "{}",
        window.gl_version()
    );
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut checked = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "frag") {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let source = std::fs::read_to_string(&path).unwrap();
            window
                .check_shader(&name, &source)
                .unwrap_or_else(|err| panic!("{err}"));
            checked.push(name);
        }
    }
    checked.sort();
    assert_eq!(
        checked,
        [
            "crt_scanlines.frag",
            "nearest.frag",
            "overlay.frag",
            "sharp_bilinear.frag"
        ]
    );
    let broken = window
        .check_shader(
            "broken.frag",
            "#version 330 core\nvoid main() { nonsense; }\n",
        )
        .unwrap_err()
        .to_string();
    assert!(broken.contains("broken.frag"), "{broken}");
}

/// A test picture: every pixel a different colour, in `format`, rows
/// `pitch` bytes apart (padding filled with junk that must not show).
fn test_pattern(width: u32, height: u32, format: PixelFormat, pitch: usize) -> Vec<u8> {
    let mut bytes = vec![0xa5; pitch * height as usize];
    for y in 0..height {
        for x in 0..width {
            let (r, g, b) = ((x * 8) as u8, (y * 8) as u8, ((x + y) * 4) as u8);
            let at = y as usize * pitch + x as usize * format.bytes_per_pixel();
            match format {
                PixelFormat::Xrgb8888 => bytes[at..at + 4].copy_from_slice(
                    &(u32::from(r) << 16 | u32::from(g) << 8 | u32::from(b)).to_le_bytes(),
                ),
                PixelFormat::Rgb565 => {
                    let value =
                        (u16::from(r) >> 3) << 11 | (u16::from(g) >> 2) << 5 | u16::from(b) >> 3;
                    bytes[at..at + 2].copy_from_slice(&value.to_le_bytes());
                }
                PixelFormat::Rgb1555 => {
                    let value =
                        (u16::from(r) >> 3) << 10 | (u16::from(g) >> 3) << 5 | u16::from(b) >> 3;
                    bytes[at..at + 2].copy_from_slice(&value.to_le_bytes());
                }
            }
        }
    }
    bytes
}

#[test]
fn every_pixel_format_with_padded_rows_is_shown_pixel_for_pixel_through_nearest_at_integer_scale() {
    let _sdl = SDL.lock().unwrap_or_else(|e| e.into_inner());
    let (width, height) = (32u32, 24u32);
    let mut window = open_window((width * 3, height * 3), DisplayShader::Nearest, true);
    for format in [
        PixelFormat::Xrgb8888,
        PixelFormat::Rgb565,
        PixelFormat::Rgb1555,
    ] {
        let pitch = width as usize * format.bytes_per_pixel() + 12;
        let pixels = test_pattern(width, height, format, pitch);
        let frame = VideoFrame {
            width,
            height,
            pitch,
            format,
            pixels: &pixels,
        };
        let (w, h, shown) = window
            .present(Some(&frame), 0.0, None, true)
            .expect("the picture is captured");
        assert_eq!((w, h), (width * 3, height * 3));
        assert!(
            shown == scaled(&frame_to_rgb(&frame), width, height, 3),
            "{format:?}: the window's picture differs from the frame scaled 3x"
        );
    }
}

#[test]
fn a_geometry_change_shows_the_new_size_letterboxed_at_once() {
    let _sdl = SDL.lock().unwrap_or_else(|e| e.into_inner());
    let mut window = open_window((128, 96), DisplayShader::Nearest, true);
    let big = test_pattern(64, 48, PixelFormat::Xrgb8888, 256);
    let frame = VideoFrame {
        width: 64,
        height: 48,
        pitch: 256,
        format: PixelFormat::Xrgb8888,
        pixels: &big,
    };
    window.present(Some(&frame), 0.0, None, false);
    // A smaller picture (as after SET_GEOMETRY): 2x fits 32x24 three times,
    // so it is scaled 4x and centred.
    let small = test_pattern(32, 24, PixelFormat::Xrgb8888, 128);
    let frame = VideoFrame {
        width: 32,
        height: 24,
        pitch: 128,
        format: PixelFormat::Xrgb8888,
        pixels: &small,
    };
    let (_, _, shown) = window.present(Some(&frame), 0.0, None, true).unwrap();
    assert!(shown == scaled(&frame_to_rgb(&frame), 32, 24, 4));
}

#[test]
fn keys_injected_as_sdl_events_move_duels_fighter_through_the_default_mapping() {
    let _sdl = SDL.lock().unwrap_or_else(|e| e.into_inner());
    let mut window = open_window((320, 240), DisplayShader::default(), false);
    let mut duel = support::load_duel_dojo();
    let x_of_fighter_1 = |core: &libretro_host::Core| {
        let at = duel::layout::F1_X.offset;
        i32::from_le_bytes(core.game_memory()[at..at + 4].try_into().unwrap())
    };
    let start = x_of_fighter_1(&duel.core);
    let key = |down: bool| key_event(down, Keycode::D, Mod::NOMOD);
    window.push_event(key(true)).unwrap();
    for _ in 0..30 {
        window.poll();
        let held = window.held(2);
        assert_eq!(held[0], Buttons::RIGHT, "D is player 1's right");
        duel.core.run_frame(&held, true);
    }
    let moved = x_of_fighter_1(&duel.core);
    assert!(
        moved > start,
        "fighter 1 walked right: x {start} -> {moved}"
    );
    window.push_event(key(false)).unwrap();
    window.poll();
    assert_eq!(window.held(2)[0], Buttons::NONE);
}

/// A key pressed (`repeat`: held long enough for the keyboard to repeat it).
fn key_down(keycode: Keycode, repeat: bool) -> Event {
    if repeat {
        key_repeated(keycode)
    } else {
        key_event(true, keycode, Mod::NOMOD)
    }
}

/// A match's window showing Duel, its input config read from `config`
/// (kept out of the user's).
fn match_window(config: &std::path::Path) -> netcade::gui::front_end::WindowFrontEnd {
    std::env::set_var("NETCADE_CONFIG_DIR", config);
    let duel = support::load_duel_dojo();
    netcade::gui::front_end::WindowFrontEnd::open(&duel.core, &DisplayArgs::default())
        .expect("the window opens")
}

#[test]
fn closing_a_matchs_window_asks_the_frame_loop_to_leave_and_its_keys_play_as_the_local_player() {
    let _sdl = SDL.lock().unwrap_or_else(|e| e.into_inner());
    let config = tempfile::tempdir().unwrap();
    let mut front = match_window(config.path());
    front
        .window()
        .push_event(key_down(Keycode::J, false))
        .unwrap();
    assert_eq!(front.local_buttons(), Some(Buttons::B));
    assert!(!front.quit_requested());
    front
        .window()
        .push_event(Event::Quit { timestamp: 0 })
        .unwrap();
    front.local_buttons();
    assert!(front.quit_requested());
}

#[test]
fn esc_in_a_matchs_window_asks_first_and_a_second_press_leaves() {
    let _sdl = SDL.lock().unwrap_or_else(|e| e.into_inner());
    let config = tempfile::tempdir().unwrap();
    let mut front = match_window(config.path());
    front
        .window()
        .push_event(key_down(Keycode::Escape, false))
        .unwrap();
    front.local_buttons();
    assert!(!front.quit_requested(), "one press does not end the match");
    assert_eq!(
        front.notices_shown(),
        ["press Esc again to leave the match"]
    );
    // Holding Esc down is still the one press.
    front
        .window()
        .push_event(key_down(Keycode::Escape, true))
        .unwrap();
    front.local_buttons();
    assert!(!front.quit_requested(), "a held key is one press");
    front
        .window()
        .push_event(key_down(Keycode::Escape, false))
        .unwrap();
    front.local_buttons();
    assert!(front.quit_requested(), "the second press leaves");
}

#[test]
fn esc_in_local_play_opens_the_menu_pausing_the_game_and_a_second_esc_quits() {
    let _sdl = SDL.lock().unwrap_or_else(|e| e.into_inner());
    let mut window = open_window((320, 240), DisplayShader::default(), false);
    let mut duel = support::load_duel_dojo();
    let mut play = LocalPlay::new(&mut duel.core, 100, 1 << 20, Box::new(())).unwrap();
    window.push_event(key_down(Keycode::Escape, false)).unwrap();
    window.push_event(key_down(Keycode::Escape, false)).unwrap();
    // Ten seconds of frames, unless Esc leaves first.
    let pacing = Pacing {
        frames: Some(600),
        speed: 1.0,
        screenshot_at: None,
        timeline: None,
    };
    let mut idle = |_: &Window| NO_INPUTS;
    play_in_window(
        &mut window,
        &mut play,
        pacing,
        &mut idle,
        false,
        &mut Vec::new(),
    )
    .unwrap();
    assert_eq!(play.frame(), 0, "it left before running a frame");
}

/// The smallest rectangle (x, y, width, height) holding every pixel of the
/// `width`-wide RGB picture `rgb` that is not `background`.
fn bounding_box(rgb: &[u8], width: u32, background: [u8; 3]) -> Option<(u32, u32, u32, u32)> {
    let mut found: Option<(u32, u32, u32, u32)> = None;
    for (index, pixel) in rgb.chunks(3).enumerate() {
        if pixel == background {
            continue;
        }
        let (x, y) = (index as u32 % width, index as u32 / width);
        let (left, top, right, bottom) = found.unwrap_or((x, y, x, y));
        found = Some((left.min(x), top.min(y), right.max(x), bottom.max(y)));
    }
    found.map(|(left, top, right, bottom)| (left, top, right - left + 1, bottom - top + 1))
}

#[test]
fn shift_f1_moves_the_overlay_round_the_corners_of_the_window_at_the_size_of_its_content() {
    let _sdl = SDL.lock().unwrap_or_else(|e| e.into_inner());
    let (width, height) = (640u32, 480u32);
    let mut window = open_window((width, height), DisplayShader::Nearest, false);
    // A plain green game picture: the overlay darkens what it covers.
    let green: Vec<u8> = [0u8, 200, 0, 0].repeat(64 * 48);
    let frame = VideoFrame {
        width: 64,
        height: 48,
        pitch: 256,
        format: PixelFormat::Xrgb8888,
        pixels: &green,
    };
    let mut overlay = Overlay::new(false);
    overlay.notice(0, "a spectator joined");
    let canvas = overlay.render(0).expect("the notice shows");
    // Content-sized: the notice's 18 characters, not a fixed panel.
    assert!(canvas.width < 20 * 8, "{}", canvas.width);
    let covered = |window: &mut Window| {
        let (w, _, shown) = window
            .present(Some(&frame), 4.0 / 3.0, Some(&canvas), true)
            .unwrap();
        bounding_box(&shown, w, [0, 200, 0]).expect("the overlay is drawn")
    };
    // At 480 rows the overlay is drawn 1:1, 8 pixels from the edges.
    let (w, h) = (canvas.width, canvas.height);
    assert_eq!(covered(&mut window), (8, 8, w, h), "top left at first");
    let shift_f1 = key_event(true, Keycode::F1, Mod::LSHIFTMOD);
    for expected in [
        (width - 8 - w, 8),
        (width - 8 - w, height - 8 - h),
        (8, height - 8 - h),
        (8, 8),
    ] {
        window.push_event(shift_f1.clone()).unwrap();
        assert_eq!(window.poll(), [], "the window moves it itself");
        assert_eq!(covered(&mut window), (expected.0, expected.1, w, h));
    }
    // F1 alone still shows or hides the panel.
    window.push_event(key_down(Keycode::F1, false)).unwrap();
    assert_eq!(window.poll(), [netcade::gui::window::Action::ToggleOverlay]);
}

#[test]
fn esc_opens_the_match_menu_and_the_player_holds_nothing_while_it_is_open() {
    let _sdl = SDL.lock().unwrap_or_else(|e| e.into_inner());
    let config = tempfile::tempdir().unwrap();
    let mut front = match_window(config.path());
    front
        .window()
        .push_event(key_down(Keycode::D, false))
        .unwrap();
    assert_eq!(front.local_buttons(), Some(Buttons::RIGHT), "D plays");
    front
        .window()
        .push_event(key_down(Keycode::Escape, false))
        .unwrap();
    assert_eq!(
        front.local_buttons(),
        Some(Buttons::NONE),
        "the menu is open: the match goes on with the player holding nothing"
    );
    assert!(!front.quit_requested());
}

#[test]
fn a_menu_drawn_over_the_game_leaves_the_game_picture_unchanged_once_closed() {
    let _sdl = SDL.lock().unwrap_or_else(|e| e.into_inner());
    let mut window = open_window((640, 480), DisplayShader::Nearest, true);
    let frame_pixels = test_pattern(64, 48, PixelFormat::Xrgb8888, 256);
    let frame = VideoFrame {
        width: 64,
        height: 48,
        pitch: 256,
        format: PixelFormat::Xrgb8888,
        pixels: &frame_pixels,
    };
    let (_, _, before) = window.present(Some(&frame), 0.0, None, true).unwrap();
    let menu = netcade::gui::match_menu::MatchMenu::default();
    let lines = ["ping 12 ms, input delay 1 frames".to_string()];
    let mut draw_menu = |context: &egui::Context| {
        menu.draw(context, &lines, "nearest");
    };
    // egui measures a new area in its first frame and shows it from the
    // second.
    window.present_with_menu(None, 0.0, None, Some(&mut draw_menu), false);
    let (_, _, with_menu) = window
        .present_with_menu(None, 0.0, None, Some(&mut draw_menu), true)
        .unwrap();
    assert!(with_menu != before, "the menu is drawn over the game");
    let (_, _, after) = window.present(None, 0.0, None, true).unwrap();
    assert!(after == before, "closed, the game's picture is as it was");
}

/// Where a test writes a picture for the manual: `docs/images/NAME` with
/// `NETCADE_DOC_IMAGES=1`, else a file of `dir`.
fn picture_path(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    if std::env::var_os("NETCADE_DOC_IMAGES").is_some() {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs/images")
            .join(name)
    } else {
        dir.join(name)
    }
}

#[test]
fn the_match_menu_shows_the_connection_in_words_and_each_players_figures() {
    use netcade::live::front_end::{MatchView, PlayerFigures};
    let _sdl = SDL.lock().unwrap_or_else(|e| e.into_inner());
    let config = tempfile::tempdir().unwrap();
    let shot = picture_path(config.path(), "match-menu-connection.png");
    std::env::set_var("NETCADE_CONFIG_DIR", config.path());
    let mut duel = support::load_duel_dojo();
    let display = DisplayArgs {
        window_size: Some((960, 720)),
        screenshot_at: vec!["3".to_string(), shot.display().to_string()],
        ..DisplayArgs::default()
    };
    let mut front =
        netcade::gui::front_end::WindowFrontEnd::open(&duel.core, &display).expect("a window");
    front
        .window()
        .push_event(key_down(Keycode::Escape, false))
        .unwrap();
    front.local_buttons();
    let player = |slot, ping_ms, delay, last_rollback| PlayerFigures {
        slot,
        ping_ms: Some(ping_ms),
        delay: Some(delay),
        run_ahead: None,
        last_rollback,
        fingerprint: None,
    };
    for frame in 1..=3 {
        duel.core.run_frame(&[Buttons::RIGHT, Buttons::LEFT], true);
        let view = MatchView {
            frame,
            new_picture: true,
            connection: Some("opponent's connection is unstable".to_string()),
            desync: Some("desync at frame 1234, repaired".to_string()),
            players: vec![player(1, 48, 2, 3), player(2, 12, 1, 0)],
            ..MatchView::default()
        };
        front.present(&duel.core, &view);
    }
    let picture = support::screenshot::read_png(&shot);
    assert_eq!(picture.size(), (960, 720));
    // The menu's panel (egui's grey, which Duel never draws) covers a good
    // part of the game.
    let panel = picture.egui_grey_pixels(0..picture.height);
    assert!(panel > 100_000, "{panel} pixels of the menu's panel");
}
