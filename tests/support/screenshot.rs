//! The pictures a window saves (`--screenshot-at`, a launcher script's
//! `screenshot`), read back and checked structurally: what a test looks
//! for in them is said once here, not again in each window test.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::Path;

/// The colour of the overlay's text, drawn opaque.
pub const OVERLAY_TEXT: [u8; 3] = [240, 240, 240];

/// A window's picture: its size and RGB bytes, row by row from the top.
pub struct Picture {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

/// Reads the RGB picture a window saved at `path`.
pub fn read_png(path: &Path) -> Picture {
    let file = std::fs::File::open(path)
        .unwrap_or_else(|err| panic!("the window wrote {}: {err}", path.display()));
    let mut reader = png::Decoder::new(file).read_info().expect("a PNG");
    let mut rgb = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut rgb).expect("one image");
    assert_eq!(info.color_type, png::ColorType::Rgb, "{}", path.display());
    rgb.truncate(info.buffer_size());
    Picture {
        width: info.width,
        height: info.height,
        rgb,
    }
}

impl Picture {
    /// Width and height.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// The pixels of rows `rows`, three bytes each.
    pub fn pixels(&self, rows: Range<u32>) -> impl Iterator<Item = &[u8]> {
        let row_bytes = self.width as usize * 3;
        self.rgb[rows.start as usize * row_bytes..rows.end as usize * row_bytes].chunks(3)
    }

    /// How many pixels of rows `rows` are exactly `colour`.
    pub fn count_colour(&self, rows: Range<u32>, colour: [u8; 3]) -> usize {
        self.pixels(rows).filter(|pixel| *pixel == colour).count()
    }

    /// How many pixels of rows `rows` are light grey to white: egui's text
    /// on its dark panels.
    pub fn light_pixels(&self, rows: Range<u32>) -> usize {
        self.pixels(rows)
            .filter(|pixel| pixel.iter().all(|channel| *channel > 100))
            .count()
    }

    /// How many pixels of rows `rows` are egui's dark grey (its panels and
    /// windows in the dark theme; no game or overlay colour is that grey).
    pub fn egui_grey_pixels(&self, rows: Range<u32>) -> usize {
        self.pixels(rows)
            .filter(|pixel| pixel[0] == pixel[1] && pixel[1] == pixel[2])
            .filter(|pixel| (20..40).contains(&pixel[0]))
            .count()
    }

    /// How many different colours rows `rows` hold.
    pub fn colours(&self, rows: Range<u32>) -> usize {
        self.pixels(rows).collect::<BTreeSet<_>>().len()
    }

    /// The game is drawn: its lower half (Duel's floor and fighters, below
    /// any overlay panel) has several colours and is mostly lit.
    pub fn assert_the_lower_half_shows_the_game(&self) {
        let lower = self.height / 2..self.height;
        let colours = self.colours(lower.clone());
        assert!(colours >= 3, "colours in the lower half: {colours}");
        let lit = self
            .pixels(lower)
            .filter(|pixel| pixel.iter().any(|&channel| channel > 16))
            .count();
        let quarter = (self.width * (self.height / 2) / 4) as usize;
        assert!(lit > quarter, "lit pixels in the lower half: {lit}");
    }
}
