//! The player's volume, set with keys in local play, replays and matches
//! alike: `-` and `=` in tenths, F9 mutes. The sinks that play sound ramp
//! to it (see `netcode::audio::output`).

use crate::gui::window::LocalKey;

/// Volume steps above silence.
const STEPS: u8 = 10;

/// The volume asked for, and whether it is muted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Volume {
    tenths: u8,
    muted: bool,
}

impl Default for Volume {
    fn default() -> Self {
        Volume {
            tenths: STEPS,
            muted: false,
        }
    }
}

impl Volume {
    /// Carries out a volume key: what to tell the player, or `None` when
    /// `key` is not one.
    pub fn press(&mut self, key: LocalKey) -> Option<String> {
        match key {
            LocalKey::VolumeDown => self.tenths = self.tenths.saturating_sub(1),
            LocalKey::VolumeUp => self.tenths = (self.tenths + 1).min(STEPS),
            LocalKey::Mute => self.muted = !self.muted,
            _ => return None,
        }
        if key != LocalKey::Mute {
            self.muted = false;
        }
        Some(if self.muted {
            "sound muted (F9 again to hear it)".to_owned()
        } else {
            format!("volume {} %", u32::from(self.tenths) * 10)
        })
    }

    /// The gain to play at (0–1).
    pub fn level(&self) -> f32 {
        if self.muted {
            0.0
        } else {
            f32::from(self.tenths) / f32::from(STEPS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volume_steps_in_tenths_between_silence_and_full_and_f9_mutes() {
        let mut volume = Volume::default();
        assert_eq!(volume.press(LocalKey::VolumeUp).unwrap(), "volume 100 %");
        assert_eq!(volume.press(LocalKey::VolumeDown).unwrap(), "volume 90 %");
        assert_eq!(volume.level(), 0.9);
        assert_eq!(
            volume.press(LocalKey::Mute).unwrap(),
            "sound muted (F9 again to hear it)"
        );
        assert_eq!(volume.level(), 0.0);
        // A volume key unmutes, as on a TV.
        assert_eq!(volume.press(LocalKey::VolumeDown).unwrap(), "volume 80 %");
        for _ in 0..20 {
            volume.press(LocalKey::VolumeDown);
        }
        assert_eq!(volume.level(), 0.0);
        assert_eq!(volume.press(LocalKey::SaveState), None);
    }
}
