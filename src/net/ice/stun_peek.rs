//! What netcade reads of a STUN message itself, beside rice-proto: its
//! class, transaction and addressee (to route it among meetings), and
//! whether it nominates a pair (to follow a nomination rice-proto drops).
//! Read as untrusted bytes: every length is checked, nothing is allocated.

/// A STUN header's fixed magic cookie (RFC 5389 §6).
const MAGIC_COOKIE: [u8; 4] = [0x21, 0x12, 0xA4, 0x42];
/// The STUN `USERNAME` attribute.
const USERNAME: u16 = 0x0006;
/// ICE's `USE-CANDIDATE` attribute (RFC 8445 §16.1).
const USE_CANDIDATE: u16 = 0x0025;
/// The Binding method, ICE's connectivity checks.
const BINDING: u16 = 0x0001;

/// A STUN message's class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StunClass {
    Request,
    Indication,
    Success,
    Error,
}

/// What netcade reads of a STUN message.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Stun<'a> {
    pub class: StunClass,
    /// True for a Binding message (a connectivity check or its answer).
    pub binding: bool,
    pub transaction: [u8; 12],
    /// The part of `USERNAME` before the colon: the receiver's fragment.
    pub username: Option<&'a str>,
    /// It carries `USE-CANDIDATE`: the controlling side nominates the pair.
    pub use_candidate: bool,
}

/// A STUN message's header and the attributes read, or `None` when the
/// bytes are not one.
pub(super) fn stun(datagram: &[u8]) -> Option<Stun<'_>> {
    let header = datagram.get(..20)?;
    if header[0] & 0xC0 != 0 || header[4..8] != MAGIC_COOKIE {
        return None;
    }
    let kind = u16::from_be_bytes([header[0], header[1]]);
    let class = match (kind & 0x0100 != 0, kind & 0x0010 != 0) {
        (false, false) => StunClass::Request,
        (false, true) => StunClass::Indication,
        (true, false) => StunClass::Success,
        (true, true) => StunClass::Error,
    };
    // The method's bits, with the class bits (0x0110) taken out.
    let method = (kind & 0x000F) | ((kind & 0x00E0) >> 1) | ((kind & 0x3E00) >> 2);
    let length = usize::from(u16::from_be_bytes([header[2], header[3]]));
    let body = datagram.get(20..20 + length)?;
    let mut transaction = [0; 12];
    transaction.copy_from_slice(&header[8..20]);
    let mut stun = Stun {
        class,
        binding: method == BINDING,
        transaction,
        username: None,
        use_candidate: false,
    };
    read_attributes(body, &mut stun);
    Some(stun)
}

/// Reads `USERNAME` and `USE-CANDIDATE` among `attributes`, up to the first
/// attribute whose length lies.
fn read_attributes<'a>(mut attributes: &'a [u8], into: &mut Stun<'a>) {
    while attributes.len() >= 4 {
        let kind = u16::from_be_bytes([attributes[0], attributes[1]]);
        let length = usize::from(u16::from_be_bytes([attributes[2], attributes[3]]));
        let Some(value) = attributes.get(4..4 + length) else {
            return;
        };
        match kind {
            USERNAME => {
                into.username = std::str::from_utf8(value)
                    .ok()
                    .and_then(|text| text.split(':').next());
            }
            USE_CANDIDATE => into.use_candidate = true,
            _ => {}
        }
        let padded = 4 + length.div_ceil(4) * 4;
        match attributes.get(padded..) {
            Some(rest) => attributes = rest,
            None => return,
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A Binding message of `class` with transaction `id`, a `USERNAME`
    /// attribute when given, and `USE-CANDIDATE` when `nominates`.
    pub(in crate::net::ice) fn binding(
        class: StunClass,
        id: u8,
        username: Option<&str>,
        nominates: bool,
    ) -> Vec<u8> {
        let kind: u16 = BINDING
            | match class {
                StunClass::Request => 0,
                StunClass::Indication => 0x0010,
                StunClass::Success => 0x0100,
                StunClass::Error => 0x0110,
            };
        let mut body = Vec::new();
        if let Some(name) = username {
            body.extend_from_slice(&USERNAME.to_be_bytes());
            body.extend_from_slice(&(name.len() as u16).to_be_bytes());
            body.extend_from_slice(name.as_bytes());
            body.resize(body.len().div_ceil(4) * 4, 0);
        }
        if nominates {
            body.extend_from_slice(&USE_CANDIDATE.to_be_bytes());
            body.extend_from_slice(&0u16.to_be_bytes());
        }
        let mut message = Vec::new();
        message.extend_from_slice(&kind.to_be_bytes());
        message.extend_from_slice(&(body.len() as u16).to_be_bytes());
        message.extend_from_slice(&MAGIC_COOKIE);
        message.extend_from_slice(&[id; 12]);
        message.extend_from_slice(&body);
        message
    }

    #[test]
    fn a_nominating_check_is_read_as_one() {
        let check = binding(StunClass::Request, 3, Some("ours:theirs"), true);
        let read = stun(&check).unwrap();
        assert_eq!(read.class, StunClass::Request);
        assert!(read.binding && read.use_candidate);
        assert_eq!(read.username, Some("ours"));
        assert_eq!(read.transaction, [3; 12]);
        let plain = binding(StunClass::Request, 3, Some("ours:theirs"), false);
        assert!(!stun(&plain).unwrap().use_candidate);
    }

    #[test]
    fn a_relay_message_is_not_a_binding() {
        // An Allocate request: method 0x003.
        let mut allocate = binding(StunClass::Request, 1, None, false);
        allocate[1] = 0x03;
        assert!(!stun(&allocate).unwrap().binding);
    }

    #[test]
    fn truncated_or_lying_stun_is_not_read() {
        let good = binding(StunClass::Request, 1, Some("aaaa:b"), true);
        assert_eq!(stun(&good).unwrap().username, Some("aaaa"));
        for cut in 0..good.len() {
            let read = stun(&good[..cut]);
            assert!(read.is_none(), "{cut} bytes read as {read:?}");
        }
        let mut long = good.clone();
        long[3] = 0xF0;
        assert_eq!(stun(&long), None);
        // An attribute claiming more than the message holds ends the read.
        let mut lying = good.clone();
        lying[23] = 0xFF;
        let read = stun(&lying).unwrap();
        assert_eq!(read.username, None);
        assert!(!read.use_candidate);
        assert_eq!(stun(b"nc hello, not stun at all"), None);
    }
}
