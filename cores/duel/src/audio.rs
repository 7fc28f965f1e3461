//! Sound effects as integer-synthesised tones. Oscillator phase, the sound's
//! progress and the noise generator all live in [`State`], so the audio of a
//! frame is fully decided by the state it starts from.

use crate::state::{AudioState, Sfx, State};

pub const SAMPLE_RATE: u32 = 48_000;
/// Stereo frames of audio per video frame (48 000 / 60).
pub const AUDIO_FRAMES_PER_VIDEO_FRAME: usize = 800;
/// Interleaved left/right samples per video frame.
pub const AUDIO_SAMPLES_PER_VIDEO_FRAME: usize = AUDIO_FRAMES_PER_VIDEO_FRAME * 2;

/// Shape of one sound effect.
struct Tone {
    /// Length in samples.
    duration: u32,
    start_hz: u32,
    end_hz: u32,
    peak: i32,
}

const JUMP: Tone = Tone {
    duration: SAMPLE_RATE * 15 / 100,
    start_hz: 300,
    end_hz: 900,
    peak: 6000,
};
const HIT: Tone = Tone {
    duration: SAMPLE_RATE * 8 / 100,
    start_hz: 110,
    end_hz: 70,
    peak: 9000,
};
const KNOCK_OUT: Tone = Tone {
    duration: SAMPLE_RATE * 12 / 10,
    start_hz: 880,
    end_hz: 110,
    peak: 8000,
};

fn tone(sfx: Sfx) -> Option<&'static Tone> {
    match sfx {
        Sfx::Silence => None,
        Sfx::Jump => Some(&JUMP),
        Sfx::Hit => Some(&HIT),
        Sfx::KnockOut => Some(&KNOCK_OUT),
    }
}

/// Fills `out` (interleaved stereo, `out.len() / 2` frames) with the sound
/// playing in `state`, advancing it; silence when nothing plays.
pub fn mix_audio(state: &mut State, out: &mut [i16]) {
    for frame in out.chunks_mut(2) {
        let sample = next_sample(&mut state.audio);
        frame.fill(sample);
    }
}

fn next_sample(audio: &mut AudioState) -> i16 {
    let Some(tone) = tone(audio.sfx) else {
        return 0;
    };
    if audio.elapsed >= tone.duration {
        audio.sfx = Sfx::Silence;
        audio.elapsed = 0;
        audio.phase = 0;
        return 0;
    }
    let elapsed = i64::from(audio.elapsed);
    let duration = i64::from(tone.duration);
    let (start, end) = (i64::from(tone.start_hz), i64::from(tone.end_hz));
    let hz = start + (end - start) * elapsed / duration;
    let increment = ((hz.max(0) as u64) << 32) / u64::from(SAMPLE_RATE);
    audio.phase = audio.phase.wrapping_add(increment as u32);
    // Linear fade-out over the sound's length.
    let amplitude = i64::from(tone.peak) * (duration - elapsed) / duration;

    let wave: i64 = match audio.sfx {
        Sfx::Jump => square(audio.phase),
        Sfx::Hit => {
            audio.noise = lfsr(audio.noise);
            let noise = if audio.noise & 1 != 0 { 32767 } else { -32767 };
            (square(audio.phase) + noise) / 2
        }
        Sfx::KnockOut => triangle(audio.phase),
        Sfx::Silence => 0,
    };
    audio.elapsed += 1;
    (wave * amplitude / 32768) as i16
}

fn square(phase: u32) -> i64 {
    if phase < 0x8000_0000 {
        32767
    } else {
        -32767
    }
}

fn triangle(phase: u32) -> i64 {
    let p = i64::from(phase >> 16);
    if p < 32768 {
        p * 2 - 32768
    } else {
        (65535 - p) * 2 - 32768
    }
}

/// 16-bit Galois LFSR (taps 16, 14, 13, 11): the game's seeded noise.
fn lfsr(n: u16) -> u16 {
    let shifted = n >> 1;
    if n & 1 != 0 {
        shifted ^ 0xb400
    } else {
        shifted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::dojo;
    use crate::sim::{start_sound, step, PAD_UP};

    fn frame_of_audio(s: &mut State) -> Vec<i16> {
        let mut out = vec![0i16; AUDIO_SAMPLES_PER_VIDEO_FRAME];
        mix_audio(s, &mut out);
        out
    }

    #[test]
    fn a_video_frame_carries_800_stereo_frames() {
        assert_eq!(AUDIO_FRAMES_PER_VIDEO_FRAME as u32 * 60, SAMPLE_RATE);
        assert_eq!(AUDIO_SAMPLES_PER_VIDEO_FRAME, 1600);
    }

    #[test]
    fn the_game_is_silent_until_something_happens() {
        let mut s = dojo();
        step(&mut s, [0, 0]);
        assert!(frame_of_audio(&mut s).iter().all(|&v| v == 0));
    }

    #[test]
    fn a_jump_makes_a_sound_in_both_channels() {
        let mut s = dojo();
        step(&mut s, [PAD_UP, 0]);
        let out = frame_of_audio(&mut s);
        assert!(out.iter().any(|&v| v != 0));
        assert!(out.chunks(2).all(|lr| lr[0] == lr[1]));
    }

    #[test]
    fn the_jump_tone_rises() {
        let mut s = dojo();
        start_sound(&mut s.audio, Sfx::Jump);
        let sign_changes = |out: &[i16]| {
            out.chunks(2)
                .map(|lr| lr[0] > 0)
                .collect::<Vec<_>>()
                .windows(2)
                .filter(|w| w[0] != w[1])
                .count()
        };
        let first = frame_of_audio(&mut s);
        let _ = frame_of_audio(&mut s);
        let _ = frame_of_audio(&mut s);
        let fourth = frame_of_audio(&mut s);
        assert!(sign_changes(&fourth) > sign_changes(&first));
    }

    #[test]
    fn sounds_end_and_silence_returns() {
        for sfx in [Sfx::Jump, Sfx::Hit, Sfx::KnockOut] {
            let mut s = dojo();
            start_sound(&mut s.audio, sfx);
            for _ in 0..80 {
                frame_of_audio(&mut s);
            }
            assert_eq!(s.audio.sfx, Sfx::Silence, "{sfx:?}");
            assert!(frame_of_audio(&mut s).iter().all(|&v| v == 0), "{sfx:?}");
        }
    }

    #[test]
    fn the_ko_sound_outlasts_a_hit() {
        let length = |sfx| {
            let mut s = dojo();
            start_sound(&mut s.audio, sfx);
            (0..200)
                .position(|_| {
                    frame_of_audio(&mut s);
                    s.audio.sfx == Sfx::Silence
                })
                .unwrap()
        };
        assert!(length(Sfx::KnockOut) > length(Sfx::Hit) * 5);
    }
}
