//! A minimal PNG writer for saving a video frame: 8-bit RGB, stored
//! (uncompressed) deflate blocks. Frames are small, so no compression
//! library is needed.

use netcode::emulator::{PixelFormat, VideoFrame};

/// The frame as 8-bit RGB triples, row after row.
pub fn frame_to_rgb(frame: &VideoFrame<'_>) -> Vec<u8> {
    let mut rgb = Vec::with_capacity(frame.width as usize * frame.height as usize * 3);
    for row in frame.rows() {
        match frame.format {
            PixelFormat::Xrgb8888 => {
                for pixel in row.chunks_exact(4) {
                    let value = u32::from_le_bytes([pixel[0], pixel[1], pixel[2], pixel[3]]);
                    rgb.extend_from_slice(&[(value >> 16) as u8, (value >> 8) as u8, value as u8]);
                }
            }
            PixelFormat::Rgb565 => {
                for pixel in row.chunks_exact(2) {
                    let value = u16::from_le_bytes([pixel[0], pixel[1]]);
                    rgb.extend_from_slice(&[
                        expand(value >> 11, 5),
                        expand((value >> 5) & 0x3f, 6),
                        expand(value & 0x1f, 5),
                    ]);
                }
            }
            PixelFormat::Rgb1555 => {
                for pixel in row.chunks_exact(2) {
                    let value = u16::from_le_bytes([pixel[0], pixel[1]]);
                    rgb.extend_from_slice(&[
                        expand((value >> 10) & 0x1f, 5),
                        expand((value >> 5) & 0x1f, 5),
                        expand(value & 0x1f, 5),
                    ]);
                }
            }
        }
    }
    rgb
}

/// Scales a `bits`-bit channel to 8 bits (full white stays full white).
fn expand(value: u16, bits: u32) -> u8 {
    let max = (1u32 << bits) - 1;
    ((u32::from(value) * 255 + max / 2) / max) as u8
}

/// Encodes `rgb` (`width * height` RGB triples) as a PNG file.
pub fn encode_rgb(width: u32, height: u32, rgb: &[u8]) -> Vec<u8> {
    let row_bytes = width as usize * 3;
    // Each scanline starts with filter type 0 (none).
    let mut raw = Vec::with_capacity((row_bytes + 1) * height as usize);
    for row in rgb.chunks(row_bytes.max(1)).take(height as usize) {
        raw.push(0);
        raw.extend_from_slice(row);
    }

    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::with_capacity(13);
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    // 8 bits per channel, colour type 2 (RGB), deflate, no filter, no interlace.
    header.extend_from_slice(&[8, 2, 0, 0, 0]);
    write_chunk(&mut png, b"IHDR", &header);
    write_chunk(&mut png, b"IDAT", &zlib_stored(&raw));
    write_chunk(&mut png, b"IEND", &[]);
    png
}

/// A zlib stream holding `data` in stored deflate blocks.
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    const MAX_BLOCK: usize = 65_535;
    let mut out = Vec::with_capacity(data.len() + data.len() / MAX_BLOCK * 5 + 16);
    out.extend_from_slice(&[0x78, 0x01]);
    let mut blocks = data.chunks(MAX_BLOCK).peekable();
    if blocks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(block) = blocks.next() {
        let last = u8::from(blocks.peek().is_none());
        let length = block.len() as u16;
        out.push(last);
        out.extend_from_slice(&length.to_le_bytes());
        out.extend_from_slice(&(!length).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

fn write_chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    png.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = png.len();
    png.extend_from_slice(kind);
    png.extend_from_slice(data);
    let crc = crc32(&png[start..]);
    png.extend_from_slice(&crc.to_be_bytes());
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(5552) {
        for &byte in chunk {
            a += u32::from(byte);
            b += a;
        }
        a %= 65_521;
        b %= 65_521;
    }
    (b << 16) | a
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xedb8_8320 & mask);
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_match_their_published_check_values() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(adler32(b"Wikipedia"), 0x11e6_0398);
        // Every PNG ends with the same IEND chunk.
        let png = encode_rgb(1, 1, &[0, 0, 0]);
        assert!(png.ends_with(&[0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xae, 0x42, 0x60, 0x82]));
    }

    #[test]
    fn a_frame_encodes_with_its_size_and_raw_scanlines() {
        let rgb: Vec<u8> = (0..2 * 3 * 3).map(|i| i as u8).collect();
        let png = encode_rgb(3, 2, &rgb);
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
        assert_eq!(&png[12..16], b"IHDR");
        assert_eq!(&png[16..20], &3u32.to_be_bytes());
        assert_eq!(&png[20..24], &2u32.to_be_bytes());
        // IDAT: zlib header, one final stored block of 2 * (1 + 9) bytes.
        let idat = &png[33 + 8..];
        assert_eq!(&idat[..2], &[0x78, 0x01]);
        assert_eq!(&idat[2..7], &[1, 20, 0, !20u8, 0xff]);
        assert_eq!(&idat[7..17], &[0, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn pixel_formats_convert_to_full_range_rgb() {
        let white565 = 0xffffu16.to_le_bytes();
        let frame = VideoFrame {
            width: 1,
            height: 1,
            pitch: 2,
            format: PixelFormat::Rgb565,
            pixels: &white565,
        };
        assert_eq!(frame_to_rgb(&frame), vec![255, 255, 255]);
        let red = 0x00ff_0000u32.to_le_bytes();
        let frame = VideoFrame {
            width: 1,
            height: 1,
            pitch: 4,
            format: PixelFormat::Xrgb8888,
            pixels: &red,
        };
        assert_eq!(frame_to_rgb(&frame), vec![255, 0, 0]);
        let green1555 = (0x1fu16 << 5).to_le_bytes();
        let frame = VideoFrame {
            width: 1,
            height: 1,
            pitch: 2,
            format: PixelFormat::Rgb1555,
            pixels: &green1555,
        };
        assert_eq!(frame_to_rgb(&frame), vec![0, 255, 0]);
    }
}
