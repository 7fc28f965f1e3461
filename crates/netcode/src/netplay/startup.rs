//! Beginning frame 0 together (seed 000's start-up advantage).
//!
//! Were every machine to start as soon as its handshakes are done, each
//! would begin when it happened to hear from the others: the machine that
//! heard last starts behind by up to a one-way trip, and time sync spends
//! the first seconds pulling it back. Instead one machine, the *start-up
//! host*, starts everyone:
//!
//! 1. Each member, once synchronized with every machine of the match, says
//!    Ready to the host (repeated until a Start arrives).
//! 2. The host measures the round trip to each member (quality reports go
//!    out every 50 ms meanwhile) and, once every member is ready and has
//!    [`MIN_RTT_SAMPLES`] measurements, decides: with the median round trips
//!    `rtt_i`, [`start_delays`] gives each member the wait that makes
//!    `rtt_i / 2 + wait_i` the same for all, and the host its own wait (the
//!    farthest member's one-way trip). Every wait gets the same lead time on
//!    top, so that each machine learns its start moment at least a frame
//!    before it (frontends tick once a frame and can then wake up on time).
//! 3. The host sends each member Start with its wait; the member begins
//!    frame 0 that long after the Start arrives. A Start is resent until
//!    acknowledged (or until the member's input for frame 0 arrives, which
//!    it only sends once started), each copy carrying the wait still left
//!    (zero once the moment passed). A member keeps the first start moment
//!    it learned: a late copy never restarts it.
//!
//! Who is the host: the machine that controls player 0 (slot 0). Every
//! machine knows that from the configuration alone, whatever the dialling
//! pattern of the mesh; in the usual set-up (everyone dials the machine of
//! player 1, which accepts them all and chose the session) it is that
//! machine. If the link to the host closes before its Start arrives, a
//! member starts at once rather than waiting forever.
//!
//! Pure: `now` is a parameter and links are numbered by the caller.

use std::time::Duration;

use crate::protocol::{Millis, MAX_START_DELAY_MS};
use crate::rollback::time_sync::start_delays;

/// Round trips measured to each member before the host decides.
pub const MIN_RTT_SAMPLES: usize = 4;

/// Quality-report interval on the host's links until the start, so the
/// round trips are measured in a fraction of a second.
pub const STARTUP_QUALITY_INTERVAL_MS: Millis = 50;

/// A member repeats Ready this often until the Start arrives.
pub const READY_REPEAT_MS: Millis = 100;

/// The host resends an unacknowledged Start after the member's round trip
/// plus this margin (and never more often than every 50 ms).
const START_RESEND_MARGIN_MS: Millis = 30;
const START_RESEND_MIN_MS: Millis = 50;

/// Round trips kept per member (the median of these is used).
const KEPT_SAMPLES: usize = 8;

/// Where this machine is in the start-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartPhase {
    /// The start moment is not known yet (handshakes, measurements, or the
    /// host's Start not arrived).
    Waiting,
    /// Frame 0 begins at `start_at`.
    Counting {
        /// The caller's clock reading at which frame 0 begins.
        start_at: Millis,
    },
    /// Frame 0 began at `at`.
    Started {
        /// The caller's clock reading at which frame 0 began.
        at: Millis,
    },
}

/// What the start-up asks the netplay session to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartMessage {
    /// Ready, to the host over link `link`.
    Ready {
        /// The caller's number for the link to the start-up host.
        link: usize,
    },
    /// Start, to the member over link `link`.
    Start {
        /// The caller's number for the link to that member.
        link: usize,
        /// Milliseconds the member waits after the Start arrives before frame 0.
        delay_ms: u16,
    },
}

/// What `advance_frame` should do this tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Begin {
    /// Nothing to run yet; the start moment is unknown.
    NotYet,
    /// Frame 0 begins in this many milliseconds.
    In(Millis),
    /// Frame 0 begins now (this tick).
    Now,
    /// Frame 0 began earlier.
    Running,
}

/// The host's view of one member link.
#[derive(Clone, Copy, Debug, Default)]
struct Member {
    open: bool,
    ready: bool,
    samples: [u32; KEPT_SAMPLES],
    sample_count: usize,
    /// Its wait after the decision, once decided (lead time included).
    wait_ms: Option<Millis>,
    acknowledged: bool,
    last_start_sent: Option<Millis>,
}

impl Member {
    fn measured(&self) -> bool {
        self.sample_count >= MIN_RTT_SAMPLES
    }

    /// The median of the kept round trips.
    fn round_trip_ms(&self) -> u32 {
        let kept = self.sample_count.min(KEPT_SAMPLES);
        let mut sorted = self.samples;
        sorted[..kept].sort_unstable();
        sorted.get(kept / 2).copied().unwrap_or(0)
    }
}

#[derive(Clone, Debug)]
enum Role {
    /// No remote machine: frame 0 begins at once.
    Alone,
    Host {
        members: Vec<Member>,
        decided_at: Option<Millis>,
    },
    Member {
        host_link: usize,
        host_open: bool,
        last_ready_at: Option<Millis>,
    },
}

/// One machine's start-up (see the module docs).
#[derive(Clone, Debug)]
pub struct StartUp {
    role: Role,
    phase: StartPhase,
    lead_ms: Millis,
    compensate: bool,
}

impl StartUp {
    /// A machine with no remote machine: it has started.
    pub fn alone(now: Millis) -> StartUp {
        StartUp {
            role: Role::Alone,
            phase: StartPhase::Started { at: now },
            lead_ms: 0,
            compensate: true,
        }
    }

    /// The host, with `links` member links numbered from 0. Every start
    /// moment is `lead_ms` after the decision at the earliest; without
    /// `compensate`, nobody waits for the farther members (for comparison).
    pub fn host(links: usize, lead_ms: Millis, compensate: bool) -> StartUp {
        StartUp {
            role: Role::Host {
                members: vec![
                    Member {
                        open: true,
                        ..Member::default()
                    };
                    links
                ],
                decided_at: None,
            },
            phase: StartPhase::Waiting,
            lead_ms,
            compensate,
        }
    }

    /// A member whose host is over link `host_link`.
    pub fn member(host_link: usize) -> StartUp {
        StartUp {
            role: Role::Member {
                host_link,
                host_open: true,
                last_ready_at: None,
            },
            phase: StartPhase::Waiting,
            lead_ms: 0,
            compensate: true,
        }
    }

    /// Waiting, counting down to frame 0, or started.
    pub fn phase(&self) -> StartPhase {
        self.phase
    }

    /// Whether this machine is the start-up host (it controls player 0).
    pub fn is_host(&self) -> bool {
        matches!(self.role, Role::Host { .. })
    }

    /// Whether frame 0 has begun here.
    pub fn has_started(&self) -> bool {
        matches!(self.phase, StartPhase::Started { .. })
    }

    /// The member on `link` says it is ready.
    pub fn on_peer_ready(&mut self, link: usize) {
        if let Some(member) = self.member_mut(link) {
            member.ready = true;
        }
    }

    /// A round trip measured to the member on `link`.
    pub fn on_round_trip(&mut self, link: usize, sample_ms: u32) {
        if let Some(member) = self.member_mut(link) {
            member.samples[member.sample_count % KEPT_SAMPLES] = sample_ms;
            member.sample_count += 1;
        }
    }

    /// The member on `link` has our Start (it acknowledged it, or its
    /// inputs show it began): no more resends.
    pub fn on_start_acknowledged(&mut self, link: usize) {
        if let Some(member) = self.member_mut(link) {
            member.acknowledged = true;
        }
    }

    /// The host's link `link` waits for a new joiner: what was measured of
    /// the old one is forgotten, and the member counts again.
    pub fn on_link_reopened(&mut self, link: usize) {
        if let Some(member) = self.member_mut(link) {
            *member = Member {
                open: true,
                ..Member::default()
            };
        }
    }

    /// The link is closed: the host stops waiting for (and sending to) that
    /// member; a member whose host left starts at the next poll.
    pub fn on_link_closed(&mut self, link: usize) {
        match &mut self.role {
            Role::Host { members, .. } => {
                if let Some(member) = members.get_mut(link) {
                    member.open = false;
                }
            }
            Role::Member {
                host_link,
                host_open,
                ..
            } if *host_link == link => *host_open = false,
            _ => {}
        }
    }

    /// A Start arrived over `link` at `now`. Returns the start moment if it
    /// set one: only the host's first Start does; later copies change nothing.
    pub fn on_start_requested(
        &mut self,
        now: Millis,
        link: usize,
        delay_ms: u16,
    ) -> Option<Millis> {
        let Role::Member { host_link, .. } = self.role else {
            return None;
        };
        if link != host_link || self.phase != StartPhase::Waiting {
            return None;
        }
        let start_at = now + Millis::from(delay_ms);
        self.phase = StartPhase::Counting { start_at };
        Some(start_at)
    }

    /// Runs the start-up's timers: hands `send` the messages due now, and
    /// returns the start moment if it was decided in this call.
    /// `synchronized`: every machine of the match finished its handshake
    /// with us.
    pub fn poll(
        &mut self,
        now: Millis,
        synchronized: bool,
        mut send: impl FnMut(StartMessage),
    ) -> Option<Millis> {
        let mut decided = None;
        match &mut self.role {
            Role::Alone => {}
            Role::Host {
                members,
                decided_at,
            } => {
                let everyone_measured =
                    members.iter().all(|m| !m.open || (m.ready && m.measured()));
                if decided_at.is_none() && synchronized && everyone_measured {
                    *decided_at = Some(now);
                    let host_wait = decide(members, self.lead_ms, self.compensate);
                    let start_at = now + host_wait;
                    self.phase = StartPhase::Counting { start_at };
                    decided = Some(start_at);
                }
                if let Some(decided_at) = *decided_at {
                    resend_starts(members, now, decided_at, &mut send);
                }
            }
            Role::Member {
                host_link,
                host_open,
                last_ready_at,
            } => {
                if self.phase == StartPhase::Waiting {
                    if !*host_open {
                        self.phase = StartPhase::Counting { start_at: now };
                        decided = Some(now);
                    } else if synchronized
                        && last_ready_at.is_none_or(|at| now.saturating_sub(at) >= READY_REPEAT_MS)
                    {
                        *last_ready_at = Some(now);
                        send(StartMessage::Ready { link: *host_link });
                    }
                }
            }
        }
        decided
    }

    /// What the frame loop does at `now`. Frame 0 begins once its moment
    /// has come and every machine is `synchronized` with us.
    pub fn begin(&mut self, now: Millis, synchronized: bool) -> Begin {
        match self.phase {
            StartPhase::Started { .. } => Begin::Running,
            StartPhase::Waiting => Begin::NotYet,
            StartPhase::Counting { start_at } if now < start_at => Begin::In(start_at - now),
            StartPhase::Counting { .. } if !synchronized => Begin::NotYet,
            StartPhase::Counting { .. } => {
                self.phase = StartPhase::Started { at: now };
                Begin::Now
            }
        }
    }

    fn member_mut(&mut self, link: usize) -> Option<&mut Member> {
        match &mut self.role {
            Role::Host { members, .. } => members.get_mut(link),
            _ => None,
        }
    }
}

/// Sets every open member's wait and returns the host's own (both with the
/// lead time added).
fn decide(members: &mut [Member], lead_ms: Millis, compensate: bool) -> Millis {
    // Index 0 is the host itself; a closed member counts as no distance.
    let mut round_trips = [Duration::ZERO; crate::rollback::MAX_PLAYERS];
    let used = (members.len() + 1).min(round_trips.len());
    for (slot, member) in round_trips[1..used].iter_mut().zip(members.iter()) {
        if member.open && compensate {
            *slot = Duration::from_millis(u64::from(member.round_trip_ms()));
        }
    }
    let delays = start_delays(&round_trips[..used]);
    for (member, delay) in members.iter_mut().zip(&delays[1..]) {
        member.wait_ms = Some(lead_ms + delay.as_millis() as Millis);
    }
    lead_ms + delays[0].as_millis() as Millis
}

/// Sends Start to every open member that has not acknowledged it and whose
/// last copy had time to be answered, with the wait still left.
fn resend_starts(
    members: &mut [Member],
    now: Millis,
    decided_at: Millis,
    send: &mut impl FnMut(StartMessage),
) {
    for (link, member) in members.iter_mut().enumerate() {
        let Some(wait_ms) = member.wait_ms else {
            continue;
        };
        if !member.open || member.acknowledged {
            continue;
        }
        let resend_after = (Millis::from(member.round_trip_ms()) + START_RESEND_MARGIN_MS)
            .max(START_RESEND_MIN_MS);
        let due = member
            .last_start_sent
            .is_none_or(|at| now.saturating_sub(at) >= resend_after);
        if !due {
            continue;
        }
        member.last_start_sent = Some(now);
        let left = wait_ms.saturating_sub(now - decided_at);
        // Members refuse longer waits as a claim no host can make.
        let delay_ms = left.min(Millis::from(MAX_START_DELAY_MS)) as u16;
        send(StartMessage::Start { link, delay_ms });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(startup: &mut StartUp, now: Millis, synchronized: bool) -> Vec<StartMessage> {
        let mut out = Vec::new();
        startup.poll(now, synchronized, |message| out.push(message));
        out
    }

    fn measure(host: &mut StartUp, link: usize, rtt: u32) {
        host.on_peer_ready(link);
        for _ in 0..MIN_RTT_SAMPLES {
            host.on_round_trip(link, rtt);
        }
    }

    #[test]
    fn the_host_waits_for_every_member_to_be_ready_and_measured() {
        let mut host = StartUp::host(2, 50, true);
        measure(&mut host, 0, 20);
        assert!(sent(&mut host, 10, true).is_empty());
        host.on_peer_ready(1);
        host.on_round_trip(1, 160);
        assert!(
            sent(&mut host, 20, true).is_empty(),
            "one sample is not enough"
        );
        measure(&mut host, 1, 160);
        assert!(
            sent(&mut host, 30, false).is_empty(),
            "not synchronized yet"
        );
        assert_eq!(host.phase(), StartPhase::Waiting);
        assert_eq!(
            sent(&mut host, 40, true),
            vec![
                StartMessage::Start {
                    link: 0,
                    delay_ms: 50 + 70
                },
                StartMessage::Start {
                    link: 1,
                    delay_ms: 50
                },
            ]
        );
        // The host waits for the farthest member's one-way trip.
        assert_eq!(
            host.phase(),
            StartPhase::Counting {
                start_at: 40 + 50 + 80
            }
        );
    }

    #[test]
    fn a_start_is_resent_with_the_wait_left_until_acknowledged() {
        let mut host = StartUp::host(2, 50, true);
        measure(&mut host, 0, 20);
        measure(&mut host, 1, 100);
        assert_eq!(sent(&mut host, 1000, true).len(), 2);
        assert!(
            sent(&mut host, 1020, true).is_empty(),
            "not before a round trip"
        );
        host.on_start_acknowledged(0);
        // Member 1's wait was 50: 80 ms later (> 100 + 30 would be 130) ...
        assert!(sent(&mut host, 1080, true).is_empty());
        assert_eq!(
            sent(&mut host, 1130, true),
            vec![StartMessage::Start {
                link: 1,
                delay_ms: 0
            }]
        );
        host.on_start_acknowledged(1);
        assert!(sent(&mut host, 2000, true).is_empty());
    }

    #[test]
    fn the_wait_left_shrinks_by_the_time_since_the_decision() {
        let mut host = StartUp::host(1, 200, true);
        measure(&mut host, 0, 10);
        assert_eq!(
            sent(&mut host, 0, true),
            vec![StartMessage::Start {
                link: 0,
                delay_ms: 200
            }]
        );
        assert_eq!(
            sent(&mut host, 60, true),
            vec![StartMessage::Start {
                link: 0,
                delay_ms: 140
            }]
        );
    }

    #[test]
    fn a_closed_member_is_neither_awaited_nor_sent_to() {
        let mut host = StartUp::host(2, 0, true);
        measure(&mut host, 0, 40);
        host.on_link_closed(1);
        assert_eq!(
            sent(&mut host, 5, true),
            vec![StartMessage::Start {
                link: 0,
                delay_ms: 0
            }]
        );
        assert_eq!(host.phase(), StartPhase::Counting { start_at: 25 });
    }

    #[test]
    fn without_compensation_nobody_waits_for_the_farther_members() {
        let mut host = StartUp::host(2, 50, false);
        measure(&mut host, 0, 20);
        measure(&mut host, 1, 160);
        let delays: Vec<_> = sent(&mut host, 0, true);
        assert!(delays
            .iter()
            .all(|m| matches!(m, StartMessage::Start { delay_ms: 50, .. })));
        assert_eq!(host.phase(), StartPhase::Counting { start_at: 50 });
    }

    #[test]
    fn the_median_round_trip_ignores_one_slow_measurement() {
        let mut host = StartUp::host(1, 0, true);
        host.on_peer_ready(0);
        for rtt in [40, 41, 400, 39, 40] {
            host.on_round_trip(0, rtt);
        }
        sent(&mut host, 0, true);
        assert_eq!(host.phase(), StartPhase::Counting { start_at: 20 });
    }

    #[test]
    fn a_member_says_ready_once_synchronized_and_repeats_until_the_start() {
        let mut member = StartUp::member(2);
        assert!(sent(&mut member, 0, false).is_empty());
        assert_eq!(
            sent(&mut member, 10, true),
            vec![StartMessage::Ready { link: 2 }]
        );
        assert!(sent(&mut member, 50, true).is_empty());
        assert_eq!(
            sent(&mut member, 110, true),
            vec![StartMessage::Ready { link: 2 }]
        );
        assert_eq!(member.on_start_requested(120, 2, 30), Some(150));
        assert!(sent(&mut member, 300, true).is_empty());
    }

    #[test]
    fn a_member_keeps_its_first_start_moment_and_never_restarts() {
        let mut member = StartUp::member(0);
        assert_eq!(member.begin(0, true), Begin::NotYet);
        assert_eq!(
            member.on_start_requested(100, 1, 5),
            None,
            "not from the host"
        );
        assert_eq!(member.on_start_requested(100, 0, 40), Some(140));
        assert_eq!(member.on_start_requested(130, 0, 0), None);
        assert_eq!(member.begin(120, true), Begin::In(20));
        assert_eq!(member.begin(140, false), Begin::NotYet);
        assert_eq!(member.begin(141, true), Begin::Now);
        assert_eq!(member.on_start_requested(200, 0, 0), None);
        assert_eq!(member.begin(200, true), Begin::Running);
        assert_eq!(member.phase(), StartPhase::Started { at: 141 });
    }

    #[test]
    fn a_member_whose_host_left_starts_at_once() {
        let mut member = StartUp::member(0);
        member.on_link_closed(0);
        assert_eq!(member.poll(70, true, |_| {}), Some(70));
        assert_eq!(member.begin(70, true), Begin::Now);
    }

    #[test]
    fn a_machine_alone_has_started() {
        let mut alone = StartUp::alone(5);
        assert!(alone.has_started());
        assert_eq!(alone.begin(5, true), Begin::Running);
    }
}
