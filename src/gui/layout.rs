//! Where the game's picture goes in the window: the largest rectangle of
//! the core's display aspect ratio that fits (letterboxed), or with
//! `--integer-scale` whole multiples of the source pixels. Pure arithmetic,
//! tested without a window.

/// A rectangle in window pixels, `x`/`y` from the top-left corner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    /// Left edge.
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// The rectangle the game's frame is drawn into inside a window of
/// `window` (width, height) pixels. `source` is the frame's size in pixels
/// and `aspect` the shape the core wants it shown at (stella's 160×210
/// frames are 4:3, not 160:210); an aspect of 0 or less means the pixels
/// are square.
///
/// With `integer_scale` the height is the largest whole multiple of the
/// source height that fits, and the width the whole multiple of the source
/// width closest to the aspect (so every source pixel covers the same
/// number of window pixels); at least 1×1, even when that overflows the
/// window.
pub fn fit_frame(window: (u32, u32), source: (u32, u32), aspect: f32, integer_scale: bool) -> Rect {
    let (window_w, window_h) = (window.0.max(1), window.1.max(1));
    let (source_w, source_h) = (source.0.max(1), source.1.max(1));
    let aspect = if aspect > 0.0 && aspect.is_finite() {
        f64::from(aspect)
    } else {
        f64::from(source_w) / f64::from(source_h)
    };
    let (width, height) = if integer_scale {
        let scale_y = (window_h / source_h).max(1);
        let height = scale_y * source_h;
        let wanted_w = f64::from(height) * aspect;
        let mut scale_x = ((wanted_w / f64::from(source_w)).round() as u32).max(1);
        // Keep inside the window when a smaller whole scale would fit.
        while scale_x > 1 && scale_x * source_w > window_w {
            scale_x -= 1;
        }
        (scale_x * source_w, height)
    } else {
        let by_height = (f64::from(window_h) * aspect).round() as u32;
        if by_height <= window_w {
            (by_height.max(1), window_h)
        } else {
            let by_width = (f64::from(window_w) / aspect).round() as u32;
            (window_w, by_width.clamp(1, window_h))
        }
    };
    Rect {
        x: window_w.saturating_sub(width) / 2,
        y: window_h.saturating_sub(height) / 2,
        width,
        height,
    }
}

/// The window size that shows `source` at `scale` times its height in
/// the core's aspect: the size a new window opens at.
pub fn window_size_for(source: (u32, u32), aspect: f32, scale: u32) -> (u32, u32) {
    let height = source.1.max(1) * scale.max(1);
    let aspect = if aspect > 0.0 && aspect.is_finite() {
        f64::from(aspect)
    } else {
        f64::from(source.0.max(1)) / f64::from(source.1.max(1))
    };
    ((f64::from(height) * aspect).round() as u32, height)
}

/// Window rows per overlay pixel: the 8-pixel font stays readable from
/// 720p up (twice as big there, three times at 1080p), and the panel
/// (`overlay_width` pixels wide) never gets wider than the window.
pub fn overlay_scale(window: (u32, u32), overlay_width: u32) -> u32 {
    let by_height = (window.1 + 180) / 360;
    let by_width = window.0 / overlay_width.max(1);
    by_height.min(by_width).max(1)
}

/// Window pixels between the overlay and the window's edges.
const OVERLAY_MARGIN: u32 = 8;

/// The window corner the overlay sits in (Shift+F1 moves it on, clockwise),
/// so the player can keep it off the game's own score or HUD.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Corner {
    /// The top left (where it starts).
    #[default]
    TopLeft,
    /// The top right.
    TopRight,
    /// The bottom right.
    BottomRight,
    /// The bottom left.
    BottomLeft,
}

impl Corner {
    /// The next corner clockwise.
    pub fn next(self) -> Corner {
        match self {
            Corner::TopLeft => Corner::TopRight,
            Corner::TopRight => Corner::BottomRight,
            Corner::BottomRight => Corner::BottomLeft,
            Corner::BottomLeft => Corner::TopLeft,
        }
    }
}

/// Where an overlay picture of `overlay` (width, height) pixels is drawn
/// in a window of `window` pixels: scaled by [`overlay_scale`], in
/// `corner`, [`OVERLAY_MARGIN`] from its edges.
pub fn overlay_rect(window: (u32, u32), overlay: (u32, u32), corner: Corner) -> Rect {
    let scale = overlay_scale(window, overlay.0);
    let (width, height) = (overlay.0 * scale, overlay.1 * scale);
    let x = match corner {
        Corner::TopLeft | Corner::BottomLeft => OVERLAY_MARGIN,
        Corner::TopRight | Corner::BottomRight => window.0.saturating_sub(width + OVERLAY_MARGIN),
    };
    let y = match corner {
        Corner::TopLeft | Corner::TopRight => OVERLAY_MARGIN,
        Corner::BottomLeft | Corner::BottomRight => {
            window.1.saturating_sub(height + OVERLAY_MARGIN)
        }
    };
    Rect {
        x,
        y,
        width,
        height,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overlay_doubles_at_720p_triples_at_1080p_and_never_outgrows_the_window() {
        assert_eq!(overlay_scale((640, 480), 360), 1);
        assert_eq!(overlay_scale((960, 720), 360), 2);
        assert_eq!(overlay_scale((1280, 720), 360), 2);
        assert_eq!(overlay_scale((1920, 1080), 360), 3);
        // A tall narrow window: the panel's width decides.
        assert_eq!(overlay_scale((400, 1080), 360), 1);
        assert_eq!(overlay_scale((100, 100), 360), 1);
    }

    #[test]
    fn the_overlay_sits_in_each_corner_in_turn_a_margin_from_the_edges() {
        let window = (960, 720);
        let mut corner = Corner::default();
        let mut seen = Vec::new();
        for _ in 0..4 {
            let rect = overlay_rect(window, (100, 50), corner);
            assert_eq!(
                (rect.width, rect.height),
                (200, 100),
                "scaled twice at 720p"
            );
            seen.push((rect.x, rect.y));
            corner = corner.next();
        }
        assert_eq!(corner, Corner::TopLeft, "four presses come back");
        assert_eq!(seen, [(8, 8), (752, 8), (752, 612), (8, 612)]);
        // Wider than the window: it starts at the left edge.
        assert_eq!(overlay_rect((50, 50), (100, 10), Corner::TopRight).x, 0);
    }

    #[test]
    fn a_wide_window_letterboxes_the_picture_at_its_aspect_in_the_middle() {
        let rect = fit_frame((1000, 480), (320, 240), 4.0 / 3.0, false);
        assert_eq!(
            rect,
            Rect {
                x: 180,
                y: 0,
                width: 640,
                height: 480
            }
        );
        let tall = fit_frame((640, 1000), (320, 240), 4.0 / 3.0, false);
        assert_eq!((tall.width, tall.height, tall.y), (640, 480, 260));
    }

    #[test]
    fn stella_frames_are_shown_four_by_three_not_by_their_pixel_grid() {
        let rect = fit_frame((800, 600), (160, 210), 4.0 / 3.0, false);
        assert_eq!((rect.width, rect.height), (800, 600));
    }

    #[test]
    fn integer_scale_uses_whole_multiples_of_the_source_pixels() {
        let rect = fit_frame((700, 500), (320, 240), 4.0 / 3.0, true);
        assert_eq!((rect.width, rect.height), (640, 480));
        assert_eq!((rect.x, rect.y), (30, 10));
        // Stella: 2x the rows, and the column scale closest to 4:3.
        let stella = fit_frame((1000, 500), (160, 210), 4.0 / 3.0, true);
        assert_eq!((stella.width, stella.height), (640, 420));
    }

    #[test]
    fn a_window_smaller_than_the_source_still_shows_it_once_at_integer_scale() {
        let rect = fit_frame((100, 100), (320, 240), 4.0 / 3.0, true);
        assert_eq!((rect.width, rect.height), (320, 240));
    }

    #[test]
    fn no_aspect_means_square_pixels() {
        let rect = fit_frame((640, 640), (256, 224), 0.0, false);
        assert_eq!((rect.width, rect.height), (640, 560));
    }

    #[test]
    fn a_new_window_shows_the_picture_at_its_aspect() {
        assert_eq!(window_size_for((320, 240), 4.0 / 3.0, 3), (960, 720));
        assert_eq!(window_size_for((160, 210), 4.0 / 3.0, 2), (560, 420));
    }
}
