//! A hostile path between netcade processes: a UDP relay on loopback that
//! forwards every datagram between its clients and one upstream address (a
//! host), and mutates a share of them in flight the way a broken or malicious
//! machine on the path would. Seeded, so a failing case can be run again.

use std::collections::{HashMap, VecDeque};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The header netcade puts on a handshake: magic, version, kind, session
/// token (4), sequence number (2); other datagrams have no token.
const HANDSHAKE_HEADER_BYTES: usize = 10;
const HEADER_BYTES: usize = 6;
/// Every datagram ends with a tag of this many bytes.
const TAG_BYTES: usize = 8;
const INPUT_KIND: u8 = 4;
const INPUT_ACK_KIND: u8 = 5;
const QUALITY_REPORT_KIND: u8 = 6;
const CHECKSUM_REPORT_KIND: u8 = 8;
/// Old datagrams kept to replay later.
const KEPT_FOR_REPLAY: usize = 64;

/// What the relay does to the datagrams it picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// One bit of the header flipped.
    FlipHeaderBit,
    /// One bit of the body flipped.
    FlipPayloadBit,
    /// Cut short at a random length.
    Truncate,
    /// Random bytes added at the end.
    Extend,
    /// Sent twice.
    Duplicate,
    /// An older datagram of the same direction sent instead.
    ReplayOld,
    /// In input datagrams, the first bytes of the body (the first frame and
    /// the ack) changed.
    InputFrames,
    /// In input datagrams, a byte further in (slot counts, input counts)
    /// changed.
    InputCounts,
    /// The body of input acks changed.
    Acks,
    /// The body of quality reports (timestamp, frame advantage) changed.
    Quality,
    /// The body of checksum reports changed (forged frames and checksums).
    ChecksumReports,
    /// As if from another session: a handshake's session token changed,
    /// any other datagram's tag (its key is the session's).
    OtherSession,
}

impl Mutation {
    /// Every kind of mutation.
    pub const ALL: [Mutation; 12] = [
        Mutation::FlipHeaderBit,
        Mutation::FlipPayloadBit,
        Mutation::Truncate,
        Mutation::Extend,
        Mutation::Duplicate,
        Mutation::ReplayOld,
        Mutation::InputFrames,
        Mutation::InputCounts,
        Mutation::Acks,
        Mutation::Quality,
        Mutation::ChecksumReports,
        Mutation::OtherSession,
    ];

    /// Whether this mutation applies to a datagram of `kind`.
    fn applies_to(self, kind: u8) -> bool {
        match self {
            Mutation::InputFrames | Mutation::InputCounts => kind == INPUT_KIND,
            Mutation::Acks => kind == INPUT_ACK_KIND,
            Mutation::Quality => kind == QUALITY_REPORT_KIND,
            Mutation::ChecksumReports => kind == CHECKSUM_REPORT_KIND,
            _ => true,
        }
    }
}

/// xorshift64*: enough randomness for picking datagrams, seeded.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound.max(1) as u64) as usize
    }
}

/// What the relay did, counted when it stops.
#[derive(Clone, Copy, Debug, Default)]
pub struct RelayCounts {
    /// Datagrams forwarded (either way).
    pub forwarded: u64,
    /// Of those, the ones it mutated.
    pub mutated: u64,
}

/// A running relay; stops when dropped or [`HostileRelay::stop`]ped.
pub struct HostileRelay {
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<RelayCounts>>,
}

impl HostileRelay {
    /// Relays to `upstream`, mutating `per_mille`/1000 of the datagrams (of
    /// the kinds `mutation` applies to) in both directions.
    pub fn start(
        upstream: SocketAddr,
        mutation: Mutation,
        per_mille: u32,
        seed: u64,
    ) -> HostileRelay {
        let downstream = UdpSocket::bind("127.0.0.1:0").expect("the relay binds a port");
        downstream
            .set_read_timeout(Some(Duration::from_millis(1)))
            .expect("timeouts work");
        let address = downstream.local_addr().expect("bound");
        let stop = Arc::new(AtomicBool::new(false));
        let mut relay = Relay {
            downstream,
            upstream,
            links: HashMap::new(),
            mutation,
            per_mille,
            random: Random(seed | 1),
            kept: VecDeque::new(),
            counts: RelayCounts::default(),
        };
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                relay.pump();
            }
            relay.counts
        });
        HostileRelay {
            address,
            stop,
            thread: Some(thread),
        }
    }

    /// The address clients send to instead of the host's.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Stops relaying and says what it did.
    pub fn stop(mut self) -> RelayCounts {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .map(|thread| thread.join().expect("the relay thread ends"))
            .unwrap_or_default()
    }
}

impl Drop for HostileRelay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

struct Relay {
    downstream: UdpSocket,
    upstream: SocketAddr,
    /// One socket towards the host per client, so the host sees each client
    /// as its own address.
    links: HashMap<SocketAddr, UdpSocket>,
    mutation: Mutation,
    per_mille: u32,
    random: Random,
    kept: VecDeque<Vec<u8>>,
    counts: RelayCounts,
}

impl Relay {
    fn pump(&mut self) {
        let mut buffer = [0u8; 2048];
        if let Ok((read, client)) = self.downstream.recv_from(&mut buffer) {
            self.links.entry(client).or_insert_with(|| {
                let link = UdpSocket::bind("127.0.0.1:0").expect("the relay binds a port");
                link.set_nonblocking(true).expect("non-blocking works");
                link
            });
            for datagram in self.mangle(&buffer[..read]) {
                let _ = self.links[&client].send_to(&datagram, self.upstream);
            }
        }
        let clients: Vec<SocketAddr> = self.links.keys().copied().collect();
        for client in clients {
            while let Ok(read) = self.links[&client].recv(&mut buffer) {
                for datagram in self.mangle(&buffer[..read]) {
                    let _ = self.downstream.send_to(&datagram, client);
                }
            }
        }
    }

    /// What goes on for one datagram: itself, changed, twice, or an old one.
    fn mangle(&mut self, datagram: &[u8]) -> Vec<Vec<u8>> {
        self.counts.forwarded += 1;
        if self.kept.len() == KEPT_FOR_REPLAY {
            self.kept.pop_front();
        }
        self.kept.push_back(datagram.to_vec());
        let kind = datagram.get(3).copied().unwrap_or(0);
        let picked =
            self.mutation.applies_to(kind) && (self.random.below(1000) as u32) < self.per_mille;
        if !picked {
            return vec![datagram.to_vec()];
        }
        self.counts.mutated += 1;
        let mut changed = datagram.to_vec();
        let handshake = (1..=3).contains(&kind);
        let header = if handshake {
            HANDSHAKE_HEADER_BYTES
        } else {
            HEADER_BYTES
        };
        // The body: after the header, before the tag.
        let body = changed.len().saturating_sub(header + TAG_BYTES);
        match self.mutation {
            Mutation::FlipHeaderBit => {
                let bit = self.random.below(header.min(changed.len()) * 8);
                changed[bit / 8] ^= 1 << (bit % 8);
            }
            Mutation::FlipPayloadBit if body > 0 => {
                let bit = self.random.below(body * 8);
                changed[header + bit / 8] ^= 1 << (bit % 8);
            }
            Mutation::Truncate => {
                let keep = self.random.below(changed.len());
                changed.truncate(keep);
            }
            Mutation::Extend => {
                for _ in 0..1 + self.random.below(64) {
                    changed.push(self.random.next() as u8);
                }
            }
            Mutation::Duplicate => return vec![changed.clone(), changed],
            Mutation::ReplayOld => {
                let old = self.random.below(self.kept.len());
                return vec![self.kept[old].clone()];
            }
            Mutation::InputFrames | Mutation::Acks | Mutation::Quality if body > 0 => {
                self.randomize(&mut changed, header, body.min(6));
            }
            Mutation::InputCounts if body > 6 => {
                let at = header + 6 + self.random.below(body - 6);
                changed[at] = self.random.next() as u8;
            }
            Mutation::ChecksumReports if body > 0 => {
                self.randomize(&mut changed, header, body);
            }
            Mutation::OtherSession if handshake && changed.len() >= 8 => {
                self.randomize(&mut changed, 4, 4);
            }
            Mutation::OtherSession if changed.len() >= header + TAG_BYTES => {
                let tag = changed.len() - TAG_BYTES;
                self.randomize(&mut changed, tag, TAG_BYTES);
            }
            _ => {}
        }
        vec![changed]
    }

    /// Sets one to three of the `len` bytes from `from` to random values.
    fn randomize(&mut self, datagram: &mut [u8], from: usize, len: usize) {
        for _ in 0..1 + self.random.below(3) {
            let at = from + self.random.below(len);
            datagram[at] = self.random.next() as u8;
        }
    }
}
