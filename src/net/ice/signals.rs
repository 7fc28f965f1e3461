//! The text messages ICE sends through the signaling channel: one line
//! each, starting with `ice-` so other messages can share the channel.

use std::net::SocketAddr;

/// The longest message read; candidates are far shorter.
const MAX_SIGNAL_BYTES: usize = 512;

/// One ICE message to or from the opponent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IceSignal {
    /// The sender's username fragment and password for the checks.
    Credentials {
        /// Username fragment.
        ufrag: String,
        /// Password.
        password: String,
    },
    /// One candidate, as an SDP `a=candidate:` line (trickled).
    Candidate(String),
    /// Names the relay behind one of the sender's relayed candidates.
    Relay {
        /// The relayed candidate's address.
        address: SocketAddr,
        /// The sender's round trip to it.
        round_trip_ms: u64,
        /// Its name.
        name: String,
    },
    /// The sender has no more candidates.
    End,
}

/// A message from the opponent that does not read as an ICE message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{excerpt}`: {why}")]
pub struct SignalParseError {
    excerpt: String,
    why: &'static str,
}

impl SignalParseError {
    pub(super) fn new(text: &str, why: &'static str) -> Self {
        SignalParseError {
            excerpt: text.chars().take(60).collect(),
            why,
        }
    }
}

impl IceSignal {
    /// The message as sent.
    pub fn encode(&self) -> String {
        match self {
            IceSignal::Credentials { ufrag, password } => {
                format!("ice-credentials {ufrag} {password}")
            }
            IceSignal::Candidate(sdp) => format!("ice-candidate {sdp}"),
            IceSignal::Relay {
                address,
                round_trip_ms,
                name,
            } => format!("ice-relay {address} {round_trip_ms} {name}"),
            IceSignal::End => "ice-end".to_owned(),
        }
    }

    /// Reads a received message: `Ok(None)` when it is not an ICE message
    /// (it belongs to someone else on the channel).
    pub fn decode(text: &str) -> Result<Option<IceSignal>, SignalParseError> {
        if !text.starts_with("ice-") {
            return Ok(None);
        }
        if text.len() > MAX_SIGNAL_BYTES {
            return Err(SignalParseError::new(text, "longer than any ICE message"));
        }
        let (kind, rest) = text.split_once(' ').unwrap_or((text, ""));
        let signal = match kind {
            "ice-credentials" => {
                let mut words = rest.split(' ');
                match (words.next(), words.next(), words.next()) {
                    (Some(ufrag), Some(password), None)
                        if is_ice_chars(ufrag, 4) && is_ice_chars(password, 22) =>
                    {
                        IceSignal::Credentials {
                            ufrag: ufrag.to_owned(),
                            password: password.to_owned(),
                        }
                    }
                    _ => return Err(SignalParseError::new(text, "bad credentials")),
                }
            }
            "ice-candidate" if !rest.is_empty() => IceSignal::Candidate(rest.to_owned()),
            "ice-relay" => {
                let mut words = rest.splitn(3, ' ');
                let address = words.next().and_then(|word| word.parse().ok());
                let round_trip_ms = words.next().and_then(|word| word.parse().ok());
                match (address, round_trip_ms, words.next()) {
                    (Some(address), Some(round_trip_ms), Some(name)) if !name.is_empty() => {
                        IceSignal::Relay {
                            address,
                            round_trip_ms,
                            name: name.to_owned(),
                        }
                    }
                    _ => return Err(SignalParseError::new(text, "bad relay description")),
                }
            }
            "ice-end" if rest.is_empty() => IceSignal::End,
            _ => return Err(SignalParseError::new(text, "unknown ICE message")),
        };
        Ok(Some(signal))
    }
}

/// RFC 8445's ice-char (ALPHA / DIGIT / "+" / "/"), at least `min` of them.
fn is_ice_chars(text: &str, min: usize) -> bool {
    text.len() >= min
        && text
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'+' || byte == b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_reads_back_as_it_was_written() {
        let messages = [
            IceSignal::Credentials {
                ufrag: "abcd".into(),
                password: "0123456789012345678901+/".into(),
            },
            IceSignal::Candidate("a=candidate:0 1 UDP 2130706431 10.0.0.2 7000 typ host".into()),
            IceSignal::Relay {
                address: "198.51.100.7:49152".parse().unwrap(),
                round_trip_ms: 18,
                name: "eu west".into(),
            },
            IceSignal::End,
        ];
        for message in messages {
            assert_eq!(IceSignal::decode(&message.encode()), Ok(Some(message)));
        }
    }

    #[test]
    fn messages_for_others_on_the_channel_are_left_alone() {
        assert_eq!(IceSignal::decode("chat hello"), Ok(None));
    }

    #[test]
    fn malformed_ice_messages_are_errors_not_panics() {
        for text in [
            "ice-credentials short x",
            "ice-credentials abcd 0123456789012345678901 extra",
            "ice-relay nowhere 18 eu",
            "ice-relay 198.51.100.7:1 -5 eu",
            "ice-end now",
            "ice-candidate",
            "ice-unknown",
        ] {
            assert!(IceSignal::decode(text).is_err(), "{text}");
        }
        let long = format!("ice-candidate {}", "x".repeat(MAX_SIGNAL_BYTES));
        assert!(IceSignal::decode(&long).is_err());
    }
}
