//! Everything netcade draws with OpenGL 3.3 core (through `glow`): the
//! core's frame as a texture drawn through a display shader from
//! `shaders/`, the overlay's RGBA picture over it, and reading the window
//! back for screenshots. The only module outside `src/libretro/` with
//! `unsafe`: every `glow` call is an FFI call into the GL driver.

use crate::app::png::frame_to_rgb;
use crate::emulator::{PixelFormat, VideoFrame};
use crate::gui::layout::Rect;
use crate::gui::GuiError;
use glow::HasContext;

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
    fn filter(self) -> u32 {
        match self {
            DisplayShader::Nearest => glow::NEAREST,
            DisplayShader::SharpBilinear | DisplayShader::Crt => glow::LINEAR,
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

/// A linked program and the uniforms every shader of `shaders/` reads.
struct Program {
    program: glow::Program,
    frame: Option<glow::UniformLocation>,
    source_size: Option<glow::UniformLocation>,
    output_size: Option<glow::UniformLocation>,
}

/// A texture and the size it was last allocated at.
struct SizedTexture {
    texture: glow::Texture,
    size: Option<(u32, u32)>,
}

/// The GL objects netcade draws with, on the window's current context.
pub struct Renderer {
    gl: glow::Context,
    display: Vec<(DisplayShader, Program)>,
    overlay: Program,
    vertex_array: glow::VertexArray,
    vertex_buffer: glow::Buffer,
    frame: SizedTexture,
    overlay_texture: SizedTexture,
    /// A 16-bit frame converted to RGB for upload.
    staging: Vec<u8>,
}

/// Compiles one vertex + fragment pair and links it.
fn link_program(gl: &glow::Context, name: &str, fragment: &str) -> Result<Program, GuiError> {
    // SAFETY: `gl` is a loaded context current on this thread; every object
    // created here is either returned inside `Program` or deleted before
    // returning.
    unsafe {
        let program = gl.create_program().map_err(GuiError::Gl)?;
        let mut shaders = Vec::new();
        for (kind, source) in [
            (glow::VERTEX_SHADER, VERTEX_SHADER),
            (glow::FRAGMENT_SHADER, fragment),
        ] {
            let shader = gl.create_shader(kind).map_err(GuiError::Gl)?;
            gl.shader_source(shader, source);
            gl.compile_shader(shader);
            if !gl.get_shader_compile_status(shader) {
                let log = gl.get_shader_info_log(shader);
                gl.delete_shader(shader);
                gl.delete_program(program);
                return Err(GuiError::ShaderCompile {
                    name: name.to_string(),
                    log: log.trim().to_string(),
                });
            }
            gl.attach_shader(program, shader);
            shaders.push(shader);
        }
        gl.link_program(program);
        for shader in shaders {
            gl.detach_shader(program, shader);
            gl.delete_shader(shader);
        }
        if !gl.get_program_link_status(program) {
            let log = gl.get_program_info_log(program);
            gl.delete_program(program);
            return Err(GuiError::ShaderLink {
                name: name.to_string(),
                log: log.trim().to_string(),
            });
        }
        Ok(Program {
            frame: gl.get_uniform_location(program, "frame"),
            source_size: gl.get_uniform_location(program, "source_size"),
            output_size: gl.get_uniform_location(program, "output_size"),
            program,
        })
    }
}

/// Loads the GL functions of the context current on `video`'s window.
pub fn load_gl(video: &sdl2::VideoSubsystem) -> glow::Context {
    // SAFETY: SDL returns function pointers of the context made current
    // just before; glow only calls them while that context is current.
    unsafe {
        glow::Context::from_loader_function(|name| video.gl_get_proc_address(name) as *const _)
    }
}

impl Renderer {
    /// Builds every program and the quad, texture and buffer objects on
    /// `gl`, which must be current on this thread.
    pub fn new(gl: glow::Context) -> Result<Renderer, GuiError> {
        let mut display = Vec::new();
        for shader in DisplayShader::ALL {
            display.push((
                shader,
                link_program(&gl, shader.file_name(), shader.source())?,
            ));
        }
        let overlay = link_program(&gl, "overlay.frag", OVERLAY_SHADER)?;
        // SAFETY: `gl` is current on this thread; the objects created are
        // owned by the returned renderer and deleted in its `Drop`.
        unsafe {
            let vertex_array = gl.create_vertex_array().map_err(GuiError::Gl)?;
            let vertex_buffer = gl.create_buffer().map_err(GuiError::Gl)?;
            gl.bind_vertex_array(Some(vertex_array));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(vertex_buffer));
            // Four floats a vertex: position (clip space), texcoord.
            let stride = 4 * std::mem::size_of::<f32>() as i32;
            gl.vertex_attrib_pointer_f32(0, 2, glow::FLOAT, false, stride, 0);
            gl.enable_vertex_attrib_array(0);
            gl.vertex_attrib_pointer_f32(1, 2, glow::FLOAT, false, stride, 8);
            gl.enable_vertex_attrib_array(1);
            let frame = SizedTexture {
                texture: gl.create_texture().map_err(GuiError::Gl)?,
                size: None,
            };
            let overlay_texture = SizedTexture {
                texture: gl.create_texture().map_err(GuiError::Gl)?,
                size: None,
            };
            for texture in [frame.texture, overlay_texture.texture] {
                gl.bind_texture(glow::TEXTURE_2D, Some(texture));
                gl.tex_parameter_i32(
                    glow::TEXTURE_2D,
                    glow::TEXTURE_WRAP_S,
                    glow::CLAMP_TO_EDGE as i32,
                );
                gl.tex_parameter_i32(
                    glow::TEXTURE_2D,
                    glow::TEXTURE_WRAP_T,
                    glow::CLAMP_TO_EDGE as i32,
                );
                gl.tex_parameter_i32(
                    glow::TEXTURE_2D,
                    glow::TEXTURE_MIN_FILTER,
                    glow::NEAREST as i32,
                );
                gl.tex_parameter_i32(
                    glow::TEXTURE_2D,
                    glow::TEXTURE_MAG_FILTER,
                    glow::NEAREST as i32,
                );
            }
            Ok(Renderer {
                gl,
                display,
                overlay,
                vertex_array,
                vertex_buffer,
                frame,
                overlay_texture,
                staging: Vec::new(),
            })
        }
    }

    /// `4.5 (Core Profile) Mesa 22.3.6` and the renderer's name.
    pub fn gl_version(&self) -> String {
        // SAFETY: plain queries on the current context.
        unsafe {
            format!(
                "{} ({})",
                self.gl.get_parameter_string(glow::VERSION),
                self.gl.get_parameter_string(glow::RENDERER)
            )
        }
    }

    /// Compiles `fragment` (GLSL 330 core) and links it with the display
    /// vertex shader, then throws it away: proves a shader builds on this
    /// driver. `name` names it in the error.
    pub fn check_shader(&self, name: &str, fragment: &str) -> Result<(), GuiError> {
        let program = link_program(&self.gl, name, fragment)?;
        // SAFETY: the program was created on this context and is unused.
        unsafe { self.gl.delete_program(program.program) };
        Ok(())
    }

    /// The size of the last frame uploaded, if any.
    pub fn frame_size(&self) -> Option<(u32, u32)> {
        self.frame.size
    }

    /// Uploads the core's frame (any pixel format, pitch and size; a new
    /// size reallocates the texture).
    pub fn upload_frame(&mut self, frame: &VideoFrame<'_>) {
        if frame.width == 0 || frame.height == 0 {
            return;
        }
        let bytes_per_pixel = frame.format.bytes_per_pixel();
        let row_bytes = frame.width as usize * bytes_per_pixel;
        let needed = frame.pitch * (frame.height as usize - 1) + row_bytes;
        if frame.format == PixelFormat::Xrgb8888
            && frame.pitch % bytes_per_pixel == 0
            && frame.pixels.len() >= needed
        {
            // Little-endian 0xXXRRGGBB is the bytes B, G, R, X: GL reads
            // the rows in place, `pitch` apart.
            upload(
                &self.gl,
                &mut self.frame,
                (frame.width, frame.height),
                frame.pitch / bytes_per_pixel,
                glow::BGRA,
                glow::UNSIGNED_BYTE,
                &frame.pixels[..needed],
            );
        } else {
            // 16-bit formats (and odd pitches) go through the PNG writer's
            // conversion, so the screen and screenshots round each channel
            // the same way (drivers widen 5- and 6-bit channels differently).
            self.staging = frame_to_rgb(frame);
            self.staging
                .resize(frame.width as usize * frame.height as usize * 3, 0);
            upload(
                &self.gl,
                &mut self.frame,
                (frame.width, frame.height),
                frame.width as usize,
                glow::RGB,
                glow::UNSIGNED_BYTE,
                &self.staging,
            );
        }
    }

    /// Uploads the overlay's picture: `width * height` RGBA pixels, top row first.
    pub fn upload_overlay(&mut self, width: u32, height: u32, rgba: &[u8]) {
        let expected = width as usize * height as usize * 4;
        if width == 0 || height == 0 || rgba.len() < expected {
            return;
        }
        upload(
            &self.gl,
            &mut self.overlay_texture,
            (width, height),
            width as usize,
            glow::RGBA,
            glow::UNSIGNED_BYTE,
            &rgba[..expected],
        );
    }

    /// Clears the window to black and draws the frame into `picture`
    /// through `shader`, then the overlay's picture into `overlay`.
    pub fn draw(
        &mut self,
        window: (u32, u32),
        picture: Option<(Rect, DisplayShader)>,
        overlay: Option<Rect>,
    ) {
        let gl = &self.gl;
        // SAFETY: the context is current; every object used belongs to
        // this renderer.
        unsafe {
            gl.viewport(0, 0, window.0 as i32, window.1 as i32);
            gl.clear_color(0.0, 0.0, 0.0, 1.0);
            gl.clear(glow::COLOR_BUFFER_BIT);
            gl.bind_vertex_array(Some(self.vertex_array));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.vertex_buffer));
            gl.active_texture(glow::TEXTURE0);
        }
        if let (Some((rect, shader)), Some(size)) = (picture, self.frame.size) {
            let program = &self
                .display
                .iter()
                .find(|(s, _)| *s == shader)
                .expect("every shader is linked")
                .1;
            // SAFETY: as above.
            unsafe {
                gl.disable(glow::BLEND);
                gl.bind_texture(glow::TEXTURE_2D, Some(self.frame.texture));
                let filter = shader.filter() as i32;
                gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_MIN_FILTER, filter);
                gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_MAG_FILTER, filter);
            }
            draw_quad(gl, program, window, rect, size);
        }
        if let (Some(rect), Some(size)) = (overlay, self.overlay_texture.size) {
            // SAFETY: as above.
            unsafe {
                gl.enable(glow::BLEND);
                gl.blend_func(glow::SRC_ALPHA, glow::ONE_MINUS_SRC_ALPHA);
                gl.bind_texture(glow::TEXTURE_2D, Some(self.overlay_texture.texture));
            }
            draw_quad(gl, &self.overlay, window, rect, size);
        }
    }

    /// The window's picture as drawn (before it is shown): RGB triples,
    /// top row first.
    pub fn read_window(&self, window: (u32, u32)) -> Vec<u8> {
        let (width, height) = (window.0 as usize, window.1 as usize);
        let mut bottom_up = vec![0u8; width * height * 3];
        // SAFETY: the buffer holds exactly width*height RGB pixels at pack
        // alignment 1.
        unsafe {
            self.gl.pixel_store_i32(glow::PACK_ALIGNMENT, 1);
            self.gl.read_pixels(
                0,
                0,
                window.0 as i32,
                window.1 as i32,
                glow::RGB,
                glow::UNSIGNED_BYTE,
                glow::PixelPackData::Slice(Some(&mut bottom_up)),
            );
        }
        // GL's rows start at the bottom; PNG's at the top.
        let mut top_down = Vec::with_capacity(bottom_up.len());
        for row in bottom_up.chunks(width * 3).rev() {
            top_down.extend_from_slice(row);
        }
        top_down
    }
}

/// Uploads `pixels` (rows `row_length` pixels apart) into `texture`,
/// reallocating it when the size changed.
fn upload(
    gl: &glow::Context,
    texture: &mut SizedTexture,
    size: (u32, u32),
    row_length: usize,
    format: u32,
    kind: u32,
    pixels: &[u8],
) {
    // SAFETY: `pixels` holds `size.1` rows `row_length` pixels apart in
    // `format`/`kind` (checked by the callers), unpack alignment 1.
    unsafe {
        gl.bind_texture(glow::TEXTURE_2D, Some(texture.texture));
        gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
        gl.pixel_store_i32(glow::UNPACK_ROW_LENGTH, row_length as i32);
        if texture.size == Some(size) {
            gl.tex_sub_image_2d(
                glow::TEXTURE_2D,
                0,
                0,
                0,
                size.0 as i32,
                size.1 as i32,
                format,
                kind,
                glow::PixelUnpackData::Slice(Some(pixels)),
            );
        } else {
            gl.tex_image_2d(
                glow::TEXTURE_2D,
                0,
                glow::RGBA8 as i32,
                size.0 as i32,
                size.1 as i32,
                0,
                format,
                kind,
                glow::PixelUnpackData::Slice(Some(pixels)),
            );
            texture.size = Some(size);
        }
        gl.pixel_store_i32(glow::UNPACK_ROW_LENGTH, 0);
    }
}

/// Draws the bound texture of `source` pixels into `rect` with `program`.
fn draw_quad(
    gl: &glow::Context,
    program: &Program,
    window: (u32, u32),
    rect: Rect,
    source: (u32, u32),
) {
    let (w, h) = (window.0.max(1) as f32, window.1.max(1) as f32);
    let left = 2.0 * rect.x as f32 / w - 1.0;
    let right = 2.0 * (rect.x + rect.width) as f32 / w - 1.0;
    let top = 1.0 - 2.0 * rect.y as f32 / h;
    let bottom = 1.0 - 2.0 * (rect.y + rect.height) as f32 / h;
    // Texture row 0 is the picture's top row.
    let vertices: [f32; 16] = [
        left, top, 0.0, 0.0, //
        right, top, 1.0, 0.0, //
        left, bottom, 0.0, 1.0, //
        right, bottom, 1.0, 1.0,
    ];
    let bytes: Vec<u8> = vertices.iter().flat_map(|v| v.to_ne_bytes()).collect();
    // SAFETY: the program, vertex array and buffer belong to the current
    // context; the buffer receives exactly the four vertices drawn.
    unsafe {
        gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &bytes, glow::STREAM_DRAW);
        gl.use_program(Some(program.program));
        gl.uniform_1_i32(program.frame.as_ref(), 0);
        gl.uniform_2_f32(
            program.source_size.as_ref(),
            source.0 as f32,
            source.1 as f32,
        );
        gl.uniform_2_f32(
            program.output_size.as_ref(),
            rect.width as f32,
            rect.height as f32,
        );
        gl.draw_arrays(glow::TRIANGLE_STRIP, 0, 4);
    }
}

impl Drop for Renderer {
    fn drop(&mut self) {
        // SAFETY: the objects belong to this renderer's context, which the
        // window keeps alive (and current) until after the renderer drops.
        unsafe {
            for (_, program) in &self.display {
                self.gl.delete_program(program.program);
            }
            self.gl.delete_program(self.overlay.program);
            self.gl.delete_texture(self.frame.texture);
            self.gl.delete_texture(self.overlay_texture.texture);
            self.gl.delete_buffer(self.vertex_buffer);
            self.gl.delete_vertex_array(self.vertex_array);
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
