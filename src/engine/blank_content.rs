//! Content a core accepts but shows nothing for: a wrong ROM for the core
//! often loads, then draws black in silence forever. After a few seconds of
//! that the player is told once, calmly, what it may mean. Pure: it counts
//! the frames it is shown.

use netcode::emulator::{PixelFormat, VideoFrame};

/// Seconds of black and silence before the notice.
pub const BLANK_SECONDS: f64 = 5.0;

/// What the player is told.
pub const BLANK_CONTENT_NOTICE: &str =
    "nothing to see or hear for 5 s: this may be the wrong ROM for this core, or the wrong core for this ROM";

/// Watches the frames shown for black and silence.
#[derive(Debug)]
pub struct BlankContentWatch {
    blank_frames: u32,
    notice_after: u32,
    told: bool,
}

impl BlankContentWatch {
    /// A watch for a game running at `frames_per_second`.
    pub fn new(frames_per_second: f64) -> Self {
        let fps = if frames_per_second.is_finite() && frames_per_second > 0.0 {
            frames_per_second
        } else {
            60.0
        };
        BlankContentWatch {
            blank_frames: 0,
            notice_after: (fps * BLANK_SECONDS).ceil() as u32,
            told: false,
        }
    }

    /// A frame was shown with `picture` (none: the core drew nothing) and
    /// `audio`: the notice, the one time the blank run is long enough.
    pub fn frame_shown(
        &mut self,
        picture: Option<&VideoFrame<'_>>,
        audio: &[i16],
    ) -> Option<&'static str> {
        if self.told {
            return None;
        }
        let blank = picture.is_none_or(is_black) && audio.iter().all(|&sample| sample == 0);
        self.blank_frames = if blank { self.blank_frames + 1 } else { 0 };
        if self.blank_frames < self.notice_after {
            return None;
        }
        self.told = true;
        Some(BLANK_CONTENT_NOTICE)
    }
}

/// Every visible pixel is black (the bits a format ignores aside).
fn is_black(picture: &VideoFrame<'_>) -> bool {
    match picture.format {
        PixelFormat::Xrgb8888 => picture
            .rows()
            .all(|row| row.chunks_exact(4).all(|pixel| pixel[..3] == [0, 0, 0])),
        // 0RGB1555 keeps its top bit unused.
        PixelFormat::Rgb1555 => picture.rows().all(|row| {
            row.chunks_exact(2)
                .all(|pixel| u16::from_le_bytes([pixel[0], pixel[1]]) & 0x7FFF == 0)
        }),
        PixelFormat::Rgb565 => picture.rows().all(|row| row.iter().all(|&byte| byte == 0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picture(format: PixelFormat, pixels: &[u8]) -> VideoFrame<'_> {
        VideoFrame {
            width: 2,
            height: 1,
            pitch: pixels.len(),
            format,
            pixels,
        }
    }

    #[test]
    fn five_seconds_of_black_and_silence_give_the_notice_once() {
        let mut watch = BlankContentWatch::new(60.0);
        let black = [0, 0, 0, 0xFF, 0, 0, 0, 0xFF];
        let shown = picture(PixelFormat::Xrgb8888, &black);
        for _ in 0..299 {
            assert_eq!(watch.frame_shown(Some(&shown), &[0; 8]), None);
        }
        assert_eq!(
            watch.frame_shown(Some(&shown), &[0; 8]),
            Some(BLANK_CONTENT_NOTICE)
        );
        for _ in 0..600 {
            assert_eq!(watch.frame_shown(None, &[]), None, "told once only");
        }
    }

    #[test]
    fn a_lit_pixel_or_a_sound_starts_the_count_again() {
        let mut watch = BlankContentWatch::new(60.0);
        let black = [0u8; 4];
        let lit = [0, 0x80, 0, 0];
        for frame in 0..2_000 {
            let (pixels, audio): (&[u8], &[i16]) = match frame % 200 {
                0 => (&lit, &[0, 0]),
                100 => (&black, &[0, 3]),
                _ => (&black, &[0, 0]),
            };
            let shown = picture(PixelFormat::Rgb565, pixels);
            assert_eq!(watch.frame_shown(Some(&shown), audio), None, "{frame}");
        }
    }

    #[test]
    fn the_bits_a_format_ignores_do_not_light_a_pixel() {
        assert!(is_black(&picture(
            PixelFormat::Rgb1555,
            &[0, 0x80, 0, 0x80]
        )));
        assert!(!is_black(&picture(PixelFormat::Rgb1555, &[1, 0x80, 0, 0])));
        assert!(is_black(&picture(
            PixelFormat::Xrgb8888,
            &[0, 0, 0, 0xFF, 0, 0, 0, 0x01]
        )));
    }
}
