//! Everything netcade draws with OpenGL 3.3 core (through `glow`): the
//! core's frame as a texture drawn through a display shader from
//! `shaders/`, the overlay's RGBA picture over it, and reading the window
//! back for screenshots. It decides what to draw; the GL calls themselves
//! (FFI, so `unsafe`) are made by [`libretro_host::gl`], the project's
//! one audited folder for `unsafe` code.

use crate::engine::png::frame_to_rgb;
use crate::gui::layout::Rect;
use crate::gui::GuiError;
use libretro_host::gl::{
    Blend, Gl, GlProgram, GlQuad, GlTexture, QuadVertices, TexelFormat, TextureFilter,
};
use netcode::emulator::{PixelFormat, VideoFrame};

/// The vertex shader every program shares: places a quad given in clip space.
pub const VERTEX_SHADER: &str = include_str!("../../shaders/display.vert");
/// The overlay's fragment shader: its RGBA picture, alpha-blended.
pub const OVERLAY_SHADER: &str = include_str!("../../shaders/overlay.frag");

/// The display shaders the game's frame can be drawn through (`--shader`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DisplayShader {
    /// Letterboxed sharp bilinear: crisp at any size (the default).
    #[default]
    SharpBilinear,
    /// Exact source pixels.
    Nearest,
    /// Scanlines and a soft beam.
    Crt,
}

impl DisplayShader {
    /// Every display shader, in the order the cycle key goes through them.
    pub const ALL: [DisplayShader; 3] = [
        DisplayShader::SharpBilinear,
        DisplayShader::Nearest,
        DisplayShader::Crt,
    ];

    /// The name `--shader` takes.
    pub fn name(self) -> &'static str {
        match self {
            DisplayShader::SharpBilinear => "sharp-bilinear",
            DisplayShader::Nearest => "nearest",
            DisplayShader::Crt => "crt",
        }
    }

    /// The shader's file in `shaders/`.
    pub fn file_name(self) -> &'static str {
        match self {
            DisplayShader::SharpBilinear => "sharp_bilinear.frag",
            DisplayShader::Nearest => "nearest.frag",
            DisplayShader::Crt => "crt_scanlines.frag",
        }
    }

    /// The fragment shader's GLSL source, built into netcade.
    pub fn source(self) -> &'static str {
        match self {
            DisplayShader::SharpBilinear => include_str!("../../shaders/sharp_bilinear.frag"),
            DisplayShader::Nearest => include_str!("../../shaders/nearest.frag"),
            DisplayShader::Crt => include_str!("../../shaders/crt_scanlines.frag"),
        }
    }

    /// The next shader in the cycle.
    pub fn next(self) -> DisplayShader {
        let index = Self::ALL.iter().position(|&s| s == self).unwrap_or(0);
        Self::ALL[(index + 1) % Self::ALL.len()]
    }

    /// The texture filter the shader expects (sharp bilinear and the CRT
    /// blend neighbouring texels; nearest fetches them exactly).
    fn filter(self) -> TextureFilter {
        match self {
            DisplayShader::Nearest => TextureFilter::Nearest,
            DisplayShader::SharpBilinear | DisplayShader::Crt => TextureFilter::Linear,
        }
    }
}

impl std::str::FromStr for DisplayShader {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|shader| shader.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|s| s.name()).collect();
                format!("unknown shader {name:?} (shaders: {})", names.join(", "))
            })
    }
}

impl std::fmt::Display for DisplayShader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The GL objects netcade draws with, on the window's current context.
pub struct Renderer {
    gl: Gl,
    display: Vec<(DisplayShader, GlProgram)>,
    overlay: Option<GlProgram>,
    quad: Option<GlQuad>,
    frame: Option<GlTexture>,
    overlay_texture: Option<GlTexture>,
    /// A 16-bit frame converted to RGB for upload.
    staging: Vec<u8>,
}

/// Loads the GL functions of the context current on `video`'s window.
pub fn load_gl(video: &sdl2::VideoSubsystem) -> Gl {
    Gl::load(|name| video.gl_get_proc_address(name) as *const _)
}

impl Renderer {
    /// Builds every program and the quad and textures on `gl`, which must
    /// be current on this thread.
    pub fn new(gl: Gl) -> Result<Renderer, GuiError> {
        // Built empty first so `Drop` frees whatever was made if a later
        // step fails.
        let mut renderer = Renderer {
            gl,
            display: Vec::new(),
            overlay: None,
            quad: None,
            frame: None,
            overlay_texture: None,
            staging: Vec::new(),
        };
        for shader in DisplayShader::ALL {
            let program =
                renderer
                    .gl
                    .link_program(shader.file_name(), VERTEX_SHADER, shader.source())?;
            renderer.display.push((shader, program));
        }
        renderer.overlay = Some(renderer.gl.link_program(
            "overlay.frag",
            VERTEX_SHADER,
            OVERLAY_SHADER,
        )?);
        renderer.quad = Some(renderer.gl.create_quad()?);
        renderer.frame = Some(renderer.gl.create_texture()?);
        renderer.overlay_texture = Some(renderer.gl.create_texture()?);
        Ok(renderer)
    }

    /// A painter for egui's menus on this renderer's context.
    pub fn ui_painter(&self) -> Result<crate::gui::ui::UiPainter, GuiError> {
        crate::gui::ui::UiPainter::new(&self.gl)
    }

    /// `4.5 (Core Profile) Mesa 22.3.6` and the renderer's name.
    pub fn gl_version(&self) -> String {
        self.gl.version()
    }

    /// Compiles `fragment` (GLSL 330 core) and links it with the display
    /// vertex shader, then throws it away: proves a shader builds on this
    /// driver. `name` names it in the error.
    pub fn check_shader(&self, name: &str, fragment: &str) -> Result<(), GuiError> {
        let program = self.gl.link_program(name, VERTEX_SHADER, fragment)?;
        self.gl.delete_program(program);
        Ok(())
    }

    /// The size of the last frame uploaded, if any.
    pub fn frame_size(&self) -> Option<(u32, u32)> {
        self.frame.as_ref().and_then(GlTexture::size)
    }

    /// Uploads the core's frame (any pixel format, pitch and size; a new
    /// size reallocates the texture).
    pub fn upload_frame(&mut self, frame: &VideoFrame<'_>) {
        let Some(texture) = self.frame.as_mut() else {
            return;
        };
        if frame.width == 0 || frame.height == 0 {
            return;
        }
        let bytes_per_pixel = frame.format.bytes_per_pixel();
        if frame.format == PixelFormat::Xrgb8888 && frame.pitch.is_multiple_of(bytes_per_pixel) {
            // Little-endian 0xXXRRGGBB is the bytes B, G, R, X: GL reads
            // the rows in place, `pitch` apart (the GL layer refuses a
            // slice too short for them).
            if self.gl.upload(
                texture,
                (frame.width, frame.height),
                frame.pitch / bytes_per_pixel,
                TexelFormat::Bgrx8,
                frame.pixels,
            ) {
                return;
            }
        }
        // 16-bit formats (and odd pitches) go through the PNG writer's
        // conversion, so the screen and screenshots round each channel
        // the same way (drivers widen 5- and 6-bit channels differently).
        self.staging = frame_to_rgb(frame);
        self.staging
            .resize(frame.width as usize * frame.height as usize * 3, 0);
        self.gl.upload(
            texture,
            (frame.width, frame.height),
            frame.width as usize,
            TexelFormat::Rgb8,
            &self.staging,
        );
    }

    /// Uploads the overlay's picture: `width * height` RGBA pixels, top row first.
    pub fn upload_overlay(&mut self, width: u32, height: u32, rgba: &[u8]) {
        if let Some(texture) = self.overlay_texture.as_mut() {
            self.gl.upload(
                texture,
                (width, height),
                width as usize,
                TexelFormat::Rgba8,
                rgba,
            );
        }
    }

    /// Clears the window to black and draws the frame into `picture`
    /// through `shader`, then the overlay's picture into `overlay`.
    pub fn draw(
        &mut self,
        window: (u32, u32),
        picture: Option<(Rect, DisplayShader)>,
        overlay: Option<Rect>,
    ) {
        self.gl.clear(window);
        let Some(quad) = self.quad.as_ref() else {
            return;
        };
        if let (Some((rect, shader)), Some(frame)) = (picture, self.frame.as_ref()) {
            if let Some((_, program)) = self.display.iter().find(|(s, _)| *s == shader) {
                self.gl.draw_quad(
                    quad,
                    program,
                    frame,
                    shader.filter(),
                    Blend::Opaque,
                    &quad_vertices(window, rect),
                    (rect.width, rect.height),
                );
            }
        }
        if let (Some(rect), Some(program), Some(texture)) = (
            overlay,
            self.overlay.as_ref(),
            self.overlay_texture.as_ref(),
        ) {
            self.gl.draw_quad(
                quad,
                program,
                texture,
                TextureFilter::Nearest,
                Blend::Alpha,
                &quad_vertices(window, rect),
                (rect.width, rect.height),
            );
        }
    }

    /// The window's picture as drawn (before it is shown): RGB triples,
    /// top row first.
    pub fn read_window(&self, window: (u32, u32)) -> Vec<u8> {
        let bottom_up = self.gl.read_pixels_rgb(window);
        // GL's rows start at the bottom; PNG's at the top.
        let row_bytes = (window.0 as usize * 3).max(1);
        let mut top_down = Vec::with_capacity(bottom_up.len());
        for row in bottom_up.chunks(row_bytes).rev() {
            top_down.extend_from_slice(row);
        }
        top_down
    }
}

/// The clip-space corners of `rect` in a window of `window` pixels, with
/// texture row 0 (the picture's top row) at the top.
fn quad_vertices(window: (u32, u32), rect: Rect) -> QuadVertices {
    let (w, h) = (window.0.max(1) as f32, window.1.max(1) as f32);
    let left = 2.0 * rect.x as f32 / w - 1.0;
    let right = 2.0 * (rect.x + rect.width) as f32 / w - 1.0;
    let top = 1.0 - 2.0 * rect.y as f32 / h;
    let bottom = 1.0 - 2.0 * (rect.y + rect.height) as f32 / h;
    [
        left, top, 0.0, 0.0, //
        right, top, 1.0, 0.0, //
        left, bottom, 0.0, 1.0, //
        right, bottom, 1.0, 1.0,
    ]
}

impl Drop for Renderer {
    fn drop(&mut self) {
        // The window keeps the context alive (and current) until after
        // the renderer drops.
        for (_, program) in self.display.drain(..) {
            self.gl.delete_program(program);
        }
        if let Some(program) = self.overlay.take() {
            self.gl.delete_program(program);
        }
        for texture in [self.frame.take(), self.overlay_texture.take()]
            .into_iter()
            .flatten()
        {
            self.gl.delete_texture(texture);
        }
        if let Some(quad) = self.quad.take() {
            self.gl.delete_quad(quad);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shader_names_parse_and_the_cycle_visits_every_shader() {
        assert_eq!(
            "nearest".parse::<DisplayShader>(),
            Ok(DisplayShader::Nearest)
        );
        assert_eq!("CRT".parse::<DisplayShader>(), Ok(DisplayShader::Crt));
        let err = "blur".parse::<DisplayShader>().unwrap_err();
        assert!(err.contains("sharp-bilinear, nearest, crt"), "{err}");
        let mut seen = vec![DisplayShader::default()];
        while seen.len() < DisplayShader::ALL.len() + 1 {
            seen.push(seen.last().unwrap().next());
        }
        assert_eq!(seen.first(), seen.last());
        assert_eq!(&seen[..3], &DisplayShader::ALL);
    }

    #[test]
    fn every_display_shader_is_a_file_in_shaders() {
        for shader in DisplayShader::ALL {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("shaders")
                .join(shader.file_name());
            assert_eq!(std::fs::read_to_string(path).unwrap(), shader.source());
        }
    }
}
