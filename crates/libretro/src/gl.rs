//! The OpenGL calls of the player's window (cargo feature `gui`), behind a
//! safe API the renderer in `src/gui/` uses.
//!
//! Every `glow` call is an FFI call into the GL driver and so `unsafe`. It
//! lives here because the project keeps all of its `unsafe` code in one
//! audited folder, `crates/libretro/src/`: the renderer decides what to draw, this
//! module only makes the calls, and checks every slice it hands the driver
//! against the size the driver will read or write.

use glow::HasContext;

/// What went wrong building a GL object.
#[derive(Debug, thiserror::Error)]
pub enum GlError {
    /// A shader did not compile.
    #[error("the shader {name} does not compile: {log}")]
    ShaderCompile {
        /// The shader's file name.
        name: String,
        /// The driver's compile log.
        log: String,
    },
    /// A shader program did not link.
    #[error("the shader {name} does not link: {log}")]
    ShaderLink {
        /// The fragment shader's file name.
        name: String,
        /// The driver's link log.
        log: String,
    },
    /// The driver could not create an object.
    #[error("OpenGL: {0}")]
    Create(String),
}

/// The layout of the texels handed to [`Gl::upload`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TexelFormat {
    /// Bytes B, G, R, X (little-endian `0xXXRRGGBB`).
    Bgrx8,
    /// Bytes R, G, B.
    Rgb8,
    /// Bytes R, G, B, A.
    Rgba8,
}

impl TexelFormat {
    /// Bytes one texel takes.
    pub fn bytes_per_texel(self) -> usize {
        match self {
            TexelFormat::Bgrx8 | TexelFormat::Rgba8 => 4,
            TexelFormat::Rgb8 => 3,
        }
    }

    fn gl_format(self) -> u32 {
        match self {
            TexelFormat::Bgrx8 => glow::BGRA,
            TexelFormat::Rgb8 => glow::RGB,
            TexelFormat::Rgba8 => glow::RGBA,
        }
    }
}

/// How a texture is sampled between texels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextureFilter {
    /// The nearest texel, exactly.
    Nearest,
    /// Neighbouring texels blended.
    Linear,
}

/// Whether a quad is drawn over what is there (alpha-blended) or replaces it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blend {
    /// Replace the pixels.
    Opaque,
    /// Blend by the source's alpha.
    Alpha,
}

/// A linked program and the uniforms every shader of `shaders/` reads
/// (`frame`, `source_size`, `output_size`).
pub struct GlProgram {
    program: glow::Program,
    frame: Option<glow::UniformLocation>,
    source_size: Option<glow::UniformLocation>,
    output_size: Option<glow::UniformLocation>,
}

/// A 2D texture and the size it was last allocated at.
pub struct GlTexture {
    texture: glow::Texture,
    size: Option<(u32, u32)>,
}

impl GlTexture {
    /// The size of the last picture uploaded, if any.
    pub fn size(&self) -> Option<(u32, u32)> {
        self.size
    }
}

/// The vertex array and buffer of one textured quad (four vertices of
/// position and texture coordinate).
pub struct GlQuad {
    vertex_array: glow::VertexArray,
    vertex_buffer: glow::Buffer,
}

/// A quad's four vertices, as a triangle strip: clip-space x, y and
/// texture coordinates u, v for each.
pub type QuadVertices = [f32; 16];

/// The GL functions of one context, which must stay current on this
/// thread while the `Gl` lives (the window keeps it so).
pub struct Gl {
    gl: std::sync::Arc<glow::Context>,
}

impl Gl {
    /// Loads the GL functions of the context current on this thread, each
    /// looked up by name with `get_proc_address` (the window's
    /// `SDL_GL_GetProcAddress`).
    pub fn load(get_proc_address: impl FnMut(&str) -> *const std::ffi::c_void) -> Gl {
        // SAFETY: the window's loader returns function pointers of the
        // context made current just before; glow only calls them while that
        // context is current.
        let gl = unsafe { glow::Context::from_loader_function(get_proc_address) };
        Gl {
            gl: std::sync::Arc::new(gl),
        }
    }

    /// The context's functions, shared with egui's painter (egui_glow
    /// makes its own calls through them, safely).
    pub fn shared_context(&self) -> std::sync::Arc<glow::Context> {
        self.gl.clone()
    }

    /// `4.5 (Core Profile) Mesa 22.3.6` and the renderer's name.
    pub fn version(&self) -> String {
        // SAFETY: plain queries on the current context.
        unsafe {
            format!(
                "{} ({})",
                self.gl.get_parameter_string(glow::VERSION),
                self.gl.get_parameter_string(glow::RENDERER)
            )
        }
    }

    /// Compiles a vertex + fragment pair and links it; `name` names the
    /// fragment shader in the error.
    pub fn link_program(
        &self,
        name: &str,
        vertex: &str,
        fragment: &str,
    ) -> Result<GlProgram, GlError> {
        let gl = &self.gl;
        // SAFETY: the context is current on this thread; every object
        // created here is either returned inside `GlProgram` or deleted
        // before returning.
        unsafe {
            let program = gl.create_program().map_err(GlError::Create)?;
            let mut shaders = Vec::new();
            for (kind, source) in [
                (glow::VERTEX_SHADER, vertex),
                (glow::FRAGMENT_SHADER, fragment),
            ] {
                let shader = match gl.create_shader(kind) {
                    Ok(shader) => shader,
                    Err(reason) => {
                        gl.delete_program(program);
                        return Err(GlError::Create(reason));
                    }
                };
                gl.shader_source(shader, source);
                gl.compile_shader(shader);
                if !gl.get_shader_compile_status(shader) {
                    let log = gl.get_shader_info_log(shader);
                    gl.delete_shader(shader);
                    gl.delete_program(program);
                    return Err(GlError::ShaderCompile {
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
                return Err(GlError::ShaderLink {
                    name: name.to_string(),
                    log: log.trim().to_string(),
                });
            }
            Ok(GlProgram {
                frame: gl.get_uniform_location(program, "frame"),
                source_size: gl.get_uniform_location(program, "source_size"),
                output_size: gl.get_uniform_location(program, "output_size"),
                program,
            })
        }
    }

    /// Deletes a program made on this context.
    pub fn delete_program(&self, program: GlProgram) {
        // SAFETY: the program was created on this (current) context and is
        // consumed, so nothing uses it afterwards.
        unsafe { self.gl.delete_program(program.program) }
    }

    /// Makes the vertex array and buffer of a quad (attribute 0: position,
    /// attribute 1: texture coordinate).
    pub fn create_quad(&self) -> Result<GlQuad, GlError> {
        let gl = &self.gl;
        // SAFETY: the context is current; the objects are returned to the
        // caller, who deletes them with `delete_quad`.
        unsafe {
            let vertex_array = gl.create_vertex_array().map_err(GlError::Create)?;
            let vertex_buffer = match gl.create_buffer() {
                Ok(buffer) => buffer,
                Err(reason) => {
                    gl.delete_vertex_array(vertex_array);
                    return Err(GlError::Create(reason));
                }
            };
            gl.bind_vertex_array(Some(vertex_array));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(vertex_buffer));
            // Four floats a vertex: position (clip space), texcoord.
            let stride = 4 * std::mem::size_of::<f32>() as i32;
            gl.vertex_attrib_pointer_f32(0, 2, glow::FLOAT, false, stride, 0);
            gl.enable_vertex_attrib_array(0);
            gl.vertex_attrib_pointer_f32(1, 2, glow::FLOAT, false, stride, 8);
            gl.enable_vertex_attrib_array(1);
            Ok(GlQuad {
                vertex_array,
                vertex_buffer,
            })
        }
    }

    /// Deletes a quad made on this context.
    pub fn delete_quad(&self, quad: GlQuad) {
        // SAFETY: the objects were created on this (current) context and
        // are consumed.
        unsafe {
            self.gl.delete_buffer(quad.vertex_buffer);
            self.gl.delete_vertex_array(quad.vertex_array);
        }
    }

    /// Makes an empty texture that clamps at its edges.
    pub fn create_texture(&self) -> Result<GlTexture, GlError> {
        let gl = &self.gl;
        // SAFETY: the context is current; the texture is returned to the
        // caller, who deletes it with `delete_texture`.
        unsafe {
            let texture = gl.create_texture().map_err(GlError::Create)?;
            gl.bind_texture(glow::TEXTURE_2D, Some(texture));
            for wrap in [glow::TEXTURE_WRAP_S, glow::TEXTURE_WRAP_T] {
                gl.tex_parameter_i32(glow::TEXTURE_2D, wrap, glow::CLAMP_TO_EDGE as i32);
            }
            Ok(GlTexture {
                texture,
                size: None,
            })
        }
    }

    /// Deletes a texture made on this context.
    pub fn delete_texture(&self, texture: GlTexture) {
        // SAFETY: the texture was created on this (current) context and is
        // consumed.
        unsafe { self.gl.delete_texture(texture.texture) }
    }

    /// Uploads `size` texels of `format` whose rows start `row_length`
    /// texels apart in `pixels`, reallocating the texture when the size
    /// changed. Returns false (and uploads nothing) when `pixels` is too
    /// short for that, or the size is empty.
    pub fn upload(
        &self,
        texture: &mut GlTexture,
        size: (u32, u32),
        row_length: usize,
        format: TexelFormat,
        pixels: &[u8],
    ) -> bool {
        if upload_bytes_needed(size, row_length, format).is_none_or(|n| n > pixels.len()) {
            return false;
        }
        let (Ok(gl_width), Ok(gl_height), Ok(gl_row_length)) = (
            i32::try_from(size.0),
            i32::try_from(size.1),
            i32::try_from(row_length),
        ) else {
            return false;
        };
        let gl = &self.gl;
        // SAFETY: `pixels` holds `height` rows `row_length` texels apart in
        // `format` (checked above) and the unpack alignment is 1, so the
        // driver reads inside the slice.
        unsafe {
            gl.bind_texture(glow::TEXTURE_2D, Some(texture.texture));
            gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
            gl.pixel_store_i32(glow::UNPACK_ROW_LENGTH, gl_row_length);
            let data = glow::PixelUnpackData::Slice(Some(pixels));
            if texture.size == Some(size) {
                gl.tex_sub_image_2d(
                    glow::TEXTURE_2D,
                    0,
                    0,
                    0,
                    gl_width,
                    gl_height,
                    format.gl_format(),
                    glow::UNSIGNED_BYTE,
                    data,
                );
            } else {
                gl.tex_image_2d(
                    glow::TEXTURE_2D,
                    0,
                    glow::RGBA8 as i32,
                    gl_width,
                    gl_height,
                    0,
                    format.gl_format(),
                    glow::UNSIGNED_BYTE,
                    data,
                );
                texture.size = Some(size);
            }
            gl.pixel_store_i32(glow::UNPACK_ROW_LENGTH, 0);
        }
        true
    }

    /// Clears the window of `window` pixels to black.
    pub fn clear(&self, window: (u32, u32)) {
        // SAFETY: state changes on the current context.
        unsafe {
            self.gl
                .viewport(0, 0, clamp_i32(window.0), clamp_i32(window.1));
            self.gl.clear_color(0.0, 0.0, 0.0, 1.0);
            self.gl.clear(glow::COLOR_BUFFER_BIT);
        }
    }

    /// Draws `texture` on `quad` at `vertices` through `program`, sampled
    /// with `filter`, telling the shader it fills `output_size` pixels.
    /// Does nothing while the texture holds no picture.
    #[allow(clippy::too_many_arguments)] // one draw's whole state, each distinct
    pub fn draw_quad(
        &self,
        quad: &GlQuad,
        program: &GlProgram,
        texture: &GlTexture,
        filter: TextureFilter,
        blend: Blend,
        vertices: &QuadVertices,
        output_size: (u32, u32),
    ) {
        let Some(source) = texture.size else {
            return;
        };
        let bytes: Vec<u8> = vertices.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let filter = match filter {
            TextureFilter::Nearest => glow::NEAREST,
            TextureFilter::Linear => glow::LINEAR,
        } as i32;
        let gl = &self.gl;
        // SAFETY: the program, quad and texture belong to the current
        // context; the buffer receives exactly the four vertices drawn.
        unsafe {
            gl.bind_vertex_array(Some(quad.vertex_array));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(quad.vertex_buffer));
            gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &bytes, glow::STREAM_DRAW);
            match blend {
                Blend::Opaque => gl.disable(glow::BLEND),
                Blend::Alpha => {
                    gl.enable(glow::BLEND);
                    gl.blend_func(glow::SRC_ALPHA, glow::ONE_MINUS_SRC_ALPHA);
                }
            }
            gl.active_texture(glow::TEXTURE0);
            gl.bind_texture(glow::TEXTURE_2D, Some(texture.texture));
            gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_MIN_FILTER, filter);
            gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_MAG_FILTER, filter);
            gl.use_program(Some(program.program));
            gl.uniform_1_i32(program.frame.as_ref(), 0);
            gl.uniform_2_f32(
                program.source_size.as_ref(),
                source.0 as f32,
                source.1 as f32,
            );
            gl.uniform_2_f32(
                program.output_size.as_ref(),
                output_size.0 as f32,
                output_size.1 as f32,
            );
            gl.draw_arrays(glow::TRIANGLE_STRIP, 0, 4);
        }
    }

    /// The window's picture as drawn (before it is shown): RGB triples,
    /// bottom row first (GL's order).
    pub fn read_pixels_rgb(&self, window: (u32, u32)) -> Vec<u8> {
        let (width, height) = (window.0 as usize, window.1 as usize);
        let mut bottom_up = vec![0u8; width * height * 3];
        // SAFETY: the buffer holds exactly width*height RGB pixels at pack
        // alignment 1, which is what the driver writes.
        unsafe {
            self.gl.pixel_store_i32(glow::PACK_ALIGNMENT, 1);
            self.gl.read_pixels(
                0,
                0,
                clamp_i32(window.0),
                clamp_i32(window.1),
                glow::RGB,
                glow::UNSIGNED_BYTE,
                glow::PixelPackData::Slice(Some(&mut bottom_up)),
            );
        }
        bottom_up
    }
}

/// The bytes the driver reads for an upload of `size` texels whose rows
/// start `row_length` texels apart (the last row only to its width); none
/// for an empty size, rows shorter than the width, or an overflow.
fn upload_bytes_needed(size: (u32, u32), row_length: usize, format: TexelFormat) -> Option<usize> {
    let (width, height) = (size.0 as usize, size.1 as usize);
    if width == 0 || height == 0 || row_length < width {
        return None;
    }
    (height - 1)
        .checked_mul(row_length)?
        .checked_add(width)?
        .checked_mul(format.bytes_per_texel())
}

/// A window dimension as GL's `i32` (no window is 2³¹ pixels wide; a
/// clamped size reads or draws less, never more).
fn clamp_i32(value: u32) -> i32 {
    i32::try_from(value).unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upload_reads_every_row_at_its_pitch_but_the_last_only_to_its_width() {
        // 3 rows of 4 BGRX texels, rows 6 texels apart: 2 full pitches + 1 row.
        assert_eq!(
            upload_bytes_needed((4, 3), 6, TexelFormat::Bgrx8),
            Some((2 * 6 + 4) * 4)
        );
        assert_eq!(upload_bytes_needed((2, 2), 2, TexelFormat::Rgb8), Some(12));
    }

    #[test]
    fn uploads_of_nothing_of_overlapping_rows_or_of_overflowing_sizes_are_refused() {
        assert_eq!(upload_bytes_needed((0, 3), 4, TexelFormat::Rgba8), None);
        assert_eq!(upload_bytes_needed((4, 0), 4, TexelFormat::Rgba8), None);
        assert_eq!(upload_bytes_needed((4, 3), 3, TexelFormat::Rgba8), None);
        assert_eq!(
            upload_bytes_needed((u32::MAX, u32::MAX), usize::MAX, TexelFormat::Rgba8),
            None
        );
    }
}
