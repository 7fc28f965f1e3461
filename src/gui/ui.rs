//! egui in the window: the launcher's screens and the menus drawn over the
//! game. SDL events reach egui through `egui-sdl2`'s `State` in
//! [`Window::poll`](crate::gui::window::Window::poll), and egui paints on
//! the window's own GL context after the game picture and the overlay.

use crate::gui::GuiError;
use libretro_host::gl::{Gl, GlError};

/// Builds one frame of a menu.
pub type BuildUi<'a> = &'a mut dyn FnMut(&egui::Context);

/// egui's context, its SDL input state and its painter.
pub struct Ui {
    context: egui::Context,
    input: egui_sdl2::State,
    painter: UiPainter,
}

impl Ui {
    /// egui for `window`, painting through `painter`.
    pub fn new(window: &sdl2::video::Window, painter: UiPainter) -> Ui {
        let context = egui::Context::default();
        // Read from a couch, not a desk.
        context.set_zoom_factor(1.5);
        // A menu over a game shows at once, not fading in over frames.
        context.all_styles_mut(|style| style.animation_time = 0.0);
        let input = egui_sdl2::State::new(window, context.clone(), egui::ViewportId::ROOT);
        Ui {
            context,
            input,
            painter,
        }
    }

    /// Hands egui an SDL event; whether egui keeps it to itself (a text
    /// field has the keyboard).
    pub fn on_event(&mut self, window: &sdl2::video::Window, event: &sdl2::event::Event) -> bool {
        let response = self.input.on_event(window, event);
        let is_key = matches!(
            event,
            sdl2::event::Event::KeyDown { .. }
                | sdl2::event::Event::KeyUp { .. }
                | sdl2::event::Event::TextInput { .. }
        );
        response.consumed && (!is_key || self.context.wants_keyboard_input())
    }

    /// Drops the input gathered while no menu is drawn (a game's keys
    /// reach egui too, and must not pile up unread).
    pub fn discard_input(&mut self) {
        drop(self.input.take_egui_input());
    }

    /// Runs `build` for one frame and paints what it laid out over the
    /// window of `size` pixels. Returns how soon egui wants to draw again
    /// with no new input (`Duration::MAX`: not until something happens).
    pub fn draw(&mut self, size: (u32, u32), build: BuildUi<'_>) -> std::time::Duration {
        let mut input = self.input.take_egui_input();
        // egui-sdl2 tells the window's size only after a resize, and input
        // dropped while no menu was drawn took that with it: say it always.
        let points = egui::vec2(size.0 as f32, size.1 as f32) / self.context.pixels_per_point();
        input.screen_rect = Some(egui::Rect::from_min_size(egui::Pos2::ZERO, points));
        let output = self.context.run(input, |context| build(context));
        let repaint_after = output
            .viewport_output
            .get(&egui::ViewportId::ROOT)
            .map_or(std::time::Duration::MAX, |viewport| viewport.repaint_delay);
        self.input.handle_platform_output(output.platform_output);
        let primitives = self
            .context
            .tessellate(output.shapes, output.pixels_per_point);
        self.painter.paint(
            size,
            output.pixels_per_point,
            &primitives,
            &output.textures_delta,
        );
        repaint_after
    }
}

/// egui's GL objects (its shader, buffers and font and image textures) on
/// the window's context: egui_glow's calls are safe, made through the same
/// functions the renderer loaded.
pub struct UiPainter {
    painter: egui_glow::Painter,
}

impl UiPainter {
    /// A painter on `gl`'s context, drawing over whatever the window drew
    /// before.
    pub fn new(gl: &Gl) -> Result<UiPainter, GuiError> {
        let painter = egui_glow::Painter::new(gl.shared_context(), "", None, false)
            .map_err(|err| GlError::Create(format!("egui's painter: {err}")))?;
        Ok(UiPainter { painter })
    }

    /// Uploads `textures` and draws `primitives` over the window of
    /// `window` pixels (blended, scissored to each clip rectangle).
    pub fn paint(
        &mut self,
        window: (u32, u32),
        pixels_per_point: f32,
        primitives: &[egui::ClippedPrimitive],
        textures: &egui::TexturesDelta,
    ) {
        self.painter.paint_and_update_textures(
            [window.0, window.1],
            pixels_per_point,
            primitives,
            textures,
        );
    }
}

impl Drop for UiPainter {
    fn drop(&mut self) {
        self.painter.destroy();
    }
}
