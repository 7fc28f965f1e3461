//! A room on a signaling server: netcade speaks the protocol of the
//! unmodified `matchbox_server` over a synchronous WebSocket (tungstenite,
//! plain `ws://`). The server names each connection with a peer id, tells
//! the peers already in a room of each newcomer, relays JSON `Signal`s
//! between two peers and says when one leaves; `?next=N` rooms group the
//! next N arrivals and then start empty again.
//!
//! Messages (matchbox_protocol's serde encoding): from the server
//! `{"IdAssigned":ID}`, `{"NewPeer":ID}`, `{"PeerLeft":ID}`,
//! `{"Signal":{"sender":ID,"data":…}}`; to it
//! `{"Signal":{"receiver":ID,"data":…}}` and `"KeepAlive"`. netcade's
//! `data` is always a JSON string: the text of a [`SignalChannel`] message.

use crate::net::signal::{SignalChannel, SignalError};
use std::collections::VecDeque;
use std::fmt;
use std::io::ErrorKind;
use std::net::{TcpStream, ToSocketAddrs};
use std::str::FromStr;
use std::time::{Duration, Instant};
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{Message, WebSocket};

/// The biggest message taken from the server: netcade's signals are a few
/// hundred bytes; a bigger one is a misbehaving peer's, skipped and counted
/// (any peer of the room can send one: it must not end our room).
const MAX_MESSAGE_BYTES: usize = 64 << 10;

/// The biggest message the WebSocket reads at all: what `matchbox_server`
/// (axum's defaults) forwards. Reading what it forwards whole keeps the
/// connection in step, so one peer's oversized signal is skipped rather
/// than ending the room; anything bigger breaks the server's own limit.
const MAX_FORWARDED_BYTES: usize = 64 << 20;

/// The longest peer id the server may give (a UUID is 36 characters).
const MAX_PEER_ID_CHARS: usize = 64;

/// The longest room name (a path segment on the server).
const MAX_ROOM_CHARS: usize = 120;

/// Events of other peers kept while a [`PeerChannel`] reads its own, in
/// bytes of their text (each is at most [`MAX_MESSAGE_BYTES`]).
const MAX_PENDING_BYTES: usize = 256 << 10;

/// Messages read from the server per poll: a server flooding us with what
/// we skip cannot hold a loop in one call.
const READS_PER_POLL: usize = 256;

/// How often a waiting loop looks at the server again.
const POLL_INTERVAL: Duration = Duration::from_millis(10);

/// A signaling server's address: `ws://HOST:PORT` (a path is ignored: the
/// room is the path).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignalServer {
    host: String,
    port: u16,
}

impl SignalServer {
    /// `HOST:PORT` of the server, for connecting and for messages.
    pub fn authority(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

impl fmt::Display for SignalServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ws://{}", self.authority())
    }
}

impl FromStr for SignalServer {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if text.starts_with("wss://") {
            return Err(format!(
                "{text}: wss:// (TLS) is not built into netcade; use a ws:// server (self-hosted, or behind your own TLS proxy)"
            ));
        }
        let Some(rest) = text.strip_prefix("ws://") else {
            return Err(format!("{text}: expected ws://HOST:PORT"));
        };
        let authority = rest.split('/').next().unwrap_or_default();
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port))
                if !host.contains(':') || (host.starts_with('[') && host.ends_with(']')) =>
            {
                (host, port)
            }
            _ => {
                return Err(format!(
                    "{text}: expected ws://HOST:PORT (the port is needed)"
                ))
            }
        };
        let port = port
            .parse::<u16>()
            .map_err(|_| format!("{text}: the port {port:?} is not a number from 0 to 65535"))?;
        let valid_host = !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-.[]:".contains(c));
        if !valid_host {
            return Err(format!("{text}: {host:?} is not a host name or IP address"));
        }
        Ok(SignalServer {
            host: host.to_string(),
            port,
        })
    }
}

/// The id a signaling server gave one connection.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PeerId(String);

impl PeerId {
    fn parse(value: &serde_json::Value) -> Option<PeerId> {
        let text = value.as_str()?;
        let plausible = !text.is_empty()
            && text.len() <= MAX_PEER_ID_CHARS
            && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        plausible.then(|| PeerId(text.to_string()))
    }

    /// The id as the server wrote it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PeerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What the server says happened in the room.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoomEvent {
    /// A peer entered after us (peers already there say nothing: they
    /// show themselves by signalling).
    Arrived(PeerId),
    /// A peer left.
    Left(PeerId),
    /// A peer's message to us.
    Signal {
        /// Who sent it.
        from: PeerId,
        /// What it says.
        text: String,
    },
}

/// One event from the server's text, or `None` for what netcade does not
/// use or cannot read (a misbehaving peer's junk costs nothing else).
fn parse_event(text: &str) -> Option<ServerEvent> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let object = value.as_object()?;
    if object.len() != 1 {
        return None;
    }
    let (kind, body) = object.iter().next()?;
    Some(match kind.as_str() {
        "IdAssigned" => ServerEvent::IdAssigned(PeerId::parse(body)?),
        "NewPeer" => ServerEvent::Room(RoomEvent::Arrived(PeerId::parse(body)?)),
        "PeerLeft" => ServerEvent::Room(RoomEvent::Left(PeerId::parse(body)?)),
        "Signal" => ServerEvent::Room(RoomEvent::Signal {
            from: PeerId::parse(body.get("sender")?)?,
            text: body.get("data")?.as_str()?.to_string(),
        }),
        _ => return None,
    })
}

enum ServerEvent {
    IdAssigned(PeerId),
    Room(RoomEvent),
}

/// A connection to one room of a signaling server. Never blocks after
/// [`RoomClient::enter`]: loops poll it.
pub struct RoomClient {
    socket: WebSocket<TcpStream>,
    me: PeerId,
    /// Events read while looking for something else, for the next poll.
    pending: VecDeque<RoomEvent>,
    /// The bytes of text in `pending`.
    pending_bytes: usize,
    /// Messages over [`MAX_MESSAGE_BYTES`] skipped so far.
    oversized: u64,
}

impl RoomClient {
    /// Connects to `server`, enters `room` (with `?next=N` when `group` is
    /// given) and waits for the server to name us, at most `timeout`.
    pub fn enter(
        server: &SignalServer,
        room: &str,
        group: Option<u8>,
        timeout: Duration,
    ) -> Result<RoomClient, SignalError> {
        let valid_room = !room.is_empty()
            && room.len() <= MAX_ROOM_CHARS
            && room
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        if !valid_room {
            return Err(SignalError::Server(format!("{room:?} is not a room name")));
        }
        let started = Instant::now();
        let unreachable =
            |why: String| SignalError::Server(format!("cannot reach {server}: {why}"));
        let address = server
            .authority()
            .to_socket_addrs()
            .map_err(|error| unreachable(error.to_string()))?
            .next()
            .ok_or_else(|| unreachable("the name has no address".into()))?;
        let stream = TcpStream::connect_timeout(&address, timeout)
            .map_err(|error| unreachable(error.to_string()))?;
        // Non-blocking from here on: the upgrade and the server's first
        // words have one deadline however the server paces its bytes.
        stream
            .set_nonblocking(true)
            .and_then(|()| stream.set_nodelay(true))
            .map_err(|error| unreachable(error.to_string()))?;
        let query = group.map(|n| format!("?next={n}")).unwrap_or_default();
        let url = format!("{server}/{room}{query}");
        let deadline = started + timeout;
        let mut socket = upgrade(stream, url, server, deadline)?;
        let me = first_id(&mut socket, server, deadline)?;
        Ok(RoomClient {
            socket,
            me,
            pending: VecDeque::new(),
            pending_bytes: 0,
            oversized: 0,
        })
    }

    /// Messages skipped for their size (over 64 KiB) so far.
    pub fn oversized_skipped(&self) -> u64 {
        self.oversized
    }

    /// Our id in the room.
    pub fn me(&self) -> &PeerId {
        &self.me
    }

    /// The address this machine reaches the server from: the interface a
    /// peer reached the same way most likely reaches us on.
    pub fn local_ip(&self) -> Option<std::net::IpAddr> {
        self.socket
            .get_ref()
            .local_addr()
            .ok()
            .map(|address| address.ip())
    }

    /// The next event, or `None` when nothing is waiting. An error means
    /// the server went away (or broke its protocol): the room is gone.
    pub fn poll(&mut self) -> Result<Option<RoomEvent>, SignalError> {
        if let Some(event) = self.pending.pop_front() {
            self.pending_bytes -= event_bytes(&event);
            return Ok(Some(event));
        }
        self.read_event()
    }

    /// The next event from the socket (not the pending ones), or `None`
    /// when nothing is waiting.
    fn read_event(&mut self) -> Result<Option<RoomEvent>, SignalError> {
        for _ in 0..READS_PER_POLL {
            match self.socket.read() {
                Ok(Message::Text(text)) if text.len() > MAX_MESSAGE_BYTES => {
                    self.oversized += 1;
                    tracing::warn!(
                        "skipped a message of {} bytes from the signaling server ({} so far)",
                        text.len(),
                        self.oversized
                    );
                }
                Ok(Message::Text(text)) => match parse_event(text.as_str()) {
                    Some(ServerEvent::Room(event)) => return Ok(Some(event)),
                    // A second id, or junk: nothing to act on.
                    Some(ServerEvent::IdAssigned(_)) | None => continue,
                },
                Ok(Message::Close(_)) => return Err(gone("closed the connection")),
                Ok(_) => continue,
                Err(tungstenite::Error::Io(error)) if error.kind() == ErrorKind::WouldBlock => {
                    return Ok(None)
                }
                Err(error) => return Err(gone(&error.to_string())),
            }
        }
        Ok(None)
    }

    /// Keeps `event` for the room's next poll, up to a bound: a server
    /// flooding us loses its oldest.
    fn keep_for_later(&mut self, event: RoomEvent) {
        self.pending_bytes += event_bytes(&event);
        self.pending.push_back(event);
        while self.pending_bytes > MAX_PENDING_BYTES {
            let Some(oldest) = self.pending.pop_front() else {
                break;
            };
            self.pending_bytes -= event_bytes(&oldest);
        }
    }

    /// The next event within `timeout`, or `None` when none came.
    pub fn wait(&mut self, timeout: Duration) -> Result<Option<RoomEvent>, SignalError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(event) = self.poll()? {
                return Ok(Some(event));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// Sends `text` to the peer `to` (the server drops it when `to` left).
    pub fn send(&mut self, to: &PeerId, text: &str) -> Result<(), SignalError> {
        let request = serde_json::json!({ "Signal": { "receiver": to.as_str(), "data": text } });
        self.write(Message::text(request.to_string()))
    }

    /// Tells the server (and any proxy in between) that we are still here.
    pub fn keep_alive(&mut self) -> Result<(), SignalError> {
        self.write(Message::text("\"KeepAlive\""))
    }

    /// A channel to one peer of the room.
    pub fn channel_to(&mut self, peer: PeerId) -> PeerChannel<'_> {
        PeerChannel { room: self, peer }
    }

    fn write(&mut self, message: Message) -> Result<(), SignalError> {
        match self.socket.send(message) {
            Ok(()) => Ok(()),
            // Queued: the socket takes it on a later write or poll.
            Err(tungstenite::Error::Io(error)) if error.kind() == ErrorKind::WouldBlock => Ok(()),
            Err(error) => Err(gone(&error.to_string())),
        }
    }
}

impl Drop for RoomClient {
    fn drop(&mut self) {
        // Leaving politely lets the server tell the room at once.
        let _ = self.socket.close(None);
        let _ = self.socket.flush();
    }
}

/// What an event weighs in the pending queue: its text, and a little for
/// the peer's id.
fn event_bytes(event: &RoomEvent) -> usize {
    match event {
        RoomEvent::Arrived(peer) | RoomEvent::Left(peer) => peer.0.len(),
        RoomEvent::Signal { from, text } => from.0.len() + text.len(),
    }
}

fn gone(why: &str) -> SignalError {
    SignalError::Server(format!(
        "the connection to the signaling server ended ({why})"
    ))
}

/// The server did not get as far as naming us by the deadline.
fn too_late(server: &SignalServer) -> SignalError {
    SignalError::Server(format!(
        "{server} did not name us in time: is it a matchbox_server?"
    ))
}

/// The WebSocket upgrade of the non-blocking `stream`, done by `deadline`:
/// a server dripping its answer does not hold us past it.
fn upgrade(
    stream: TcpStream,
    url: String,
    server: &SignalServer,
    deadline: Instant,
) -> Result<WebSocket<TcpStream>, SignalError> {
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_FORWARDED_BYTES))
        .max_frame_size(Some(MAX_FORWARDED_BYTES));
    let mut handshake = tungstenite::client::client_with_config(url, stream, Some(config));
    loop {
        match handshake {
            Ok((socket, _)) => return Ok(socket),
            Err(tungstenite::HandshakeError::Interrupted(midway)) => {
                if Instant::now() >= deadline {
                    return Err(too_late(server));
                }
                std::thread::sleep(POLL_INTERVAL);
                handshake = midway.handshake();
            }
            Err(tungstenite::HandshakeError::Failure(error)) => {
                return Err(SignalError::Server(format!(
                    "{server} is not a signaling server we can speak with: {error}"
                )))
            }
        }
    }
}

/// The server's first message names us, before `deadline`: a server that
/// only pings (or drips) does not hold us past it.
fn first_id(
    socket: &mut WebSocket<TcpStream>,
    server: &SignalServer,
    deadline: Instant,
) -> Result<PeerId, SignalError> {
    loop {
        if Instant::now() >= deadline {
            return Err(too_late(server));
        }
        match socket.read() {
            Ok(Message::Text(text)) => match parse_event(text.as_str()) {
                Some(ServerEvent::IdAssigned(id)) => return Ok(id),
                _ => {
                    return Err(SignalError::Server(format!(
                        "{server} did not name us first: is it a matchbox_server?"
                    )))
                }
            },
            Ok(Message::Close(_)) => return Err(gone("closed the connection")),
            Ok(_) => continue,
            Err(tungstenite::Error::Io(error)) if error.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(POLL_INTERVAL)
            }
            Err(error) => return Err(gone(&error.to_string())),
        }
    }
}

/// The room as a [`SignalChannel`] to one peer: its signals come through,
/// its departure is [`SignalError::PeerGone`], other peers' events wait
/// for the room's next poll.
pub struct PeerChannel<'a> {
    room: &'a mut RoomClient,
    peer: PeerId,
}

impl SignalChannel for PeerChannel<'_> {
    fn send(&mut self, message: &str) -> Result<(), SignalError> {
        self.room.send(&self.peer, message)
    }

    fn try_receive(&mut self) -> Result<Option<String>, SignalError> {
        let ours = |event: &RoomEvent| match event {
            RoomEvent::Signal { from, .. } | RoomEvent::Left(from) => *from == self.peer,
            RoomEvent::Arrived(_) => false,
        };
        // Our peer's events kept by an earlier reader come first.
        let event = match self.room.pending.iter().position(ours) {
            Some(index) => self.room.pending.remove(index).inspect(|event| {
                self.room.pending_bytes -= event_bytes(event);
            }),
            None => {
                let mut found = None;
                for _ in 0..READS_PER_POLL {
                    match self.room.read_event()? {
                        Some(event) if ours(&event) => {
                            found = Some(event);
                            break;
                        }
                        Some(other) => self.room.keep_for_later(other),
                        None => break,
                    }
                }
                found
            }
        };
        match event {
            Some(RoomEvent::Signal { text, .. }) => Ok(Some(text)),
            Some(RoomEvent::Left(_)) => Err(SignalError::PeerGone),
            _ => Ok(None),
        }
    }
}

/// A stand-in signaling server for tests of what uses rooms.
#[cfg(test)]
pub(crate) mod fake_server {
    use super::*;

    /// In a script: the server closes the connection there.
    pub(crate) const CLOSE: &str = "<close>";

    /// A server on loopback that takes one connection per script, in turn:
    /// names the client `me`, says the script's events in order (or closes
    /// at [`CLOSE`]) and reads what the client sends until it leaves (then
    /// the next connection).
    pub(crate) fn scripted(
        connections: Vec<Vec<String>>,
    ) -> (SignalServer, std::thread::JoinHandle<Vec<Vec<String>>>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let mut received = Vec::new();
            for events in connections {
                let (stream, _) = listener.accept().unwrap();
                let mut socket = tungstenite::accept(stream).unwrap();
                socket
                    .send(Message::text("{\"IdAssigned\":\"me\"}"))
                    .unwrap();
                for event in events {
                    if event == CLOSE {
                        let _ = socket.close(None);
                        break;
                    }
                    socket.send(Message::text(event)).unwrap();
                }
                let mut said = Vec::new();
                while let Ok(Message::Text(text)) = socket.read() {
                    said.push(text.to_string());
                }
                received.push(said);
            }
            received
        });
        (format!("ws://127.0.0.1:{port}").parse().unwrap(), server)
    }

    /// `{"Signal":{"sender":FROM,"data":TEXT}}`, as matchbox writes it.
    pub(crate) fn signal_from(from: &str, text: &str) -> String {
        serde_json::json!({ "Signal": { "sender": from, "data": text } }).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_servers_are_ws_urls_with_a_port() {
        let server: SignalServer = "ws://127.0.0.1:3536".parse().unwrap();
        assert_eq!(server.authority(), "127.0.0.1:3536");
        assert_eq!(server.to_string(), "ws://127.0.0.1:3536");
        let named: SignalServer = "ws://rooms.example.org:80/".parse().unwrap();
        assert_eq!(named.authority(), "rooms.example.org:80");
        let v6: SignalServer = "ws://[::1]:3536".parse().unwrap();
        assert_eq!(v6.authority(), "[::1]:3536");
        for bad in [
            "http://a:1",
            "ws://a",
            "ws://:1",
            "ws://a:99999",
            "ws://a b:1",
        ] {
            assert!(bad.parse::<SignalServer>().is_err(), "{bad}");
        }
        let tls = "wss://a:443".parse::<SignalServer>().unwrap_err();
        assert!(tls.contains("TLS"), "{tls}");
    }

    fn scripted_server(
        events: Vec<String>,
    ) -> (SignalServer, std::thread::JoinHandle<Vec<String>>) {
        let (server, script) = fake_server::scripted(vec![events]);
        let received = std::thread::spawn(move || script.join().unwrap().remove(0));
        (server, received)
    }

    /// Polls `read` until it gives something (a loopback socket delivers
    /// within moments; the bound only guards against a hang).
    fn soon<T>(mut read: impl FnMut() -> Result<Option<T>, SignalError>) -> Result<T, SignalError> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(value) = read()? {
                return Ok(value);
            }
            assert!(Instant::now() < deadline, "nothing arrived");
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    #[test]
    fn a_peer_channel_carries_one_peers_signals_until_it_leaves_and_keeps_the_rest_for_the_room() {
        let events = [
            r#"{"Signal":{"sender":"host","data":"first"}}"#,
            r#"{"NewPeer":"watcher"}"#,
            r#"{"Signal":{"sender":"watcher","data":"not for the channel"}}"#,
            r#"{"Signal":{"sender":"host","data":"second"}}"#,
            r#"{"PeerLeft":"host"}"#,
        ];
        let (server, script) = scripted_server(events.map(String::from).to_vec());
        let mut room =
            RoomClient::enter(&server, "room", Some(2), Duration::from_secs(10)).unwrap();
        assert_eq!(room.me().as_str(), "me");
        let host = PeerId("host".into());
        let mut channel = room.channel_to(host.clone());
        channel.send("hello").unwrap();
        assert_eq!(soon(|| channel.try_receive()).unwrap(), "first");
        assert_eq!(soon(|| channel.try_receive()).unwrap(), "second");
        assert_eq!(soon(|| channel.try_receive()), Err(SignalError::PeerGone));
        let watcher = PeerId("watcher".into());
        assert_eq!(
            room.poll().unwrap(),
            Some(RoomEvent::Arrived(watcher.clone()))
        );
        assert_eq!(
            room.poll().unwrap(),
            Some(RoomEvent::Signal {
                from: watcher,
                text: "not for the channel".into()
            })
        );
        room.keep_alive().unwrap();
        drop(room);
        let sent = script.join().unwrap();
        assert_eq!(
            sent,
            [
                r#"{"Signal":{"data":"hello","receiver":"host"}}"#,
                r#""KeepAlive""#
            ]
        );
    }

    #[test]
    fn a_server_that_goes_away_or_never_names_us_is_an_error_not_a_hang() {
        // A server that says `first` and then drops the connection.
        let saying = |first: &'static str| {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let port = listener.local_addr().unwrap().port();
            let thread = std::thread::spawn(move || {
                let (stream, _) = listener.accept().unwrap();
                let mut socket = tungstenite::accept(stream).unwrap();
                socket.send(Message::text(first)).unwrap();
            });
            let server: SignalServer = format!("ws://127.0.0.1:{port}").parse().unwrap();
            (server, thread)
        };
        let (server, thread) = saying(r#"{"IdAssigned":"me"}"#);
        let mut room = RoomClient::enter(&server, "room", None, Duration::from_secs(10)).unwrap();
        thread.join().unwrap();
        let gone = soon(|| room.poll()).unwrap_err();
        assert!(matches!(gone, SignalError::Server(_)), "{gone:?}");

        let (server, thread) = saying(r#"{"NewPeer":"x"}"#);
        let refused = RoomClient::enter(&server, "room", None, Duration::from_secs(10));
        let error = refused.err().expect("refused").to_string();
        assert!(error.contains("did not name us first"), "{error}");
        thread.join().unwrap();
        let bad_room = RoomClient::enter(&server, "a/b", None, Duration::from_secs(1));
        assert!(bad_room.is_err());
    }

    #[test]
    fn server_events_are_read_as_matchbox_writes_them_and_junk_is_skipped() {
        let id = "0b6d0b4e-4a4c-4b59-9f4a-0e7d1f6c2a11";
        match parse_event(&format!("{{\"IdAssigned\":\"{id}\"}}")) {
            Some(ServerEvent::IdAssigned(peer)) => assert_eq!(peer.as_str(), id),
            _ => panic!("an id"),
        }
        let room = |text: &str| match parse_event(text) {
            Some(ServerEvent::Room(event)) => Some(event),
            _ => None,
        };
        let peer = PeerId(id.to_string());
        assert_eq!(
            room(&format!("{{\"NewPeer\":\"{id}\"}}")),
            Some(RoomEvent::Arrived(peer.clone()))
        );
        assert_eq!(
            room(&format!("{{\"PeerLeft\":\"{id}\"}}")),
            Some(RoomEvent::Left(peer.clone()))
        );
        assert_eq!(
            room(&format!(
                "{{\"Signal\":{{\"sender\":\"{id}\",\"data\":\"hello\"}}}}"
            )),
            Some(RoomEvent::Signal {
                from: peer,
                text: "hello".into()
            })
        );
        let long_id = "a".repeat(MAX_PEER_ID_CHARS + 1);
        for junk in [
            "",
            "[]",
            "\"KeepAlive\"",
            "{\"NewPeer\":5}",
            "{\"NewPeer\":\"a b\"}",
            &format!("{{\"NewPeer\":\"{long_id}\"}}"),
            "{\"Signal\":{\"sender\":\"a\",\"data\":{\"Offer\":\"sdp\"}}}",
            "{\"Signal\":{\"data\":\"x\"}}",
            "{\"Other\":\"a\"}",
            "{\"NewPeer\":\"a\",\"PeerLeft\":\"b\"}",
        ] {
            assert!(parse_event(junk).is_none(), "{junk}");
        }
    }

    #[test]
    fn a_server_that_only_pings_is_left_after_the_timeout_with_its_name() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let pinger = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut socket = tungstenite::accept(stream).unwrap();
            // Until the client leaves.
            while socket.send(Message::Ping(Vec::new().into())).is_ok() {
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let server: SignalServer = format!("ws://127.0.0.1:{port}").parse().unwrap();
        let started = Instant::now();
        let refused = RoomClient::enter(&server, "room", None, Duration::from_millis(300));
        let error = refused.err().expect("refused").to_string();
        assert!(started.elapsed() < Duration::from_secs(5), "{error}");
        assert!(
            error.contains(&server.to_string()) && error.contains("did not name us in time"),
            "{error}"
        );
        pinger.join().unwrap();
    }

    #[test]
    fn other_peers_events_kept_while_a_channel_reads_its_own_are_bounded_in_bytes() {
        let chatter = "x".repeat(1000);
        let flood = 3 * MAX_PENDING_BYTES / chatter.len();
        let mut events: Vec<String> = (0..flood)
            .map(|n| fake_server::signal_from("other", &format!("{n} {chatter}")))
            .collect();
        events.push(fake_server::signal_from("host", "mine"));
        let (server, script) = fake_server::scripted(vec![events]);
        let mut room = RoomClient::enter(&server, "room", None, Duration::from_secs(10)).unwrap();
        let mut channel = room.channel_to(PeerId("host".into()));
        assert_eq!(soon(|| channel.try_receive()).unwrap(), "mine");
        assert!(
            room.pending_bytes <= MAX_PENDING_BYTES,
            "{}",
            room.pending_bytes
        );
        let kept: Vec<String> = std::iter::from_fn(|| room.poll().unwrap())
            .map(|event| match event {
                RoomEvent::Signal { text, .. } => text,
                other => panic!("{other:?}"),
            })
            .collect();
        assert!(kept.len() * chatter.len() <= MAX_PENDING_BYTES);
        assert!(kept.len() > 100, "{}", kept.len());
        // The newest are kept, in order.
        assert!(kept.last().unwrap().starts_with(&format!("{} ", flood - 1)));
        drop(room);
        script.join().unwrap();
    }

    #[test]
    fn an_oversized_signal_is_skipped_and_counted_and_the_room_goes_on() {
        let huge = "x".repeat(MAX_MESSAGE_BYTES + 1);
        let events = vec![
            fake_server::signal_from("rogue", &huge),
            fake_server::signal_from("host", "still here"),
        ];
        let (server, script) = fake_server::scripted(vec![events]);
        let mut room = RoomClient::enter(&server, "room", None, Duration::from_secs(10)).unwrap();
        let event = soon(|| room.poll()).unwrap();
        assert_eq!(
            event,
            RoomEvent::Signal {
                from: PeerId("host".into()),
                text: "still here".into()
            }
        );
        assert_eq!(room.oversized_skipped(), 1);
        drop(room);
        script.join().unwrap();
    }

    #[test]
    fn a_server_that_drips_its_upgrade_answer_is_left_after_the_timeout() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let dripper = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            // A byte of an endless header line every few milliseconds,
            // until the client leaves.
            let answer = b"HTTP/1.1 101 Switching Protocols\r\nX-Slow: ";
            let endless = answer.iter().chain(std::iter::repeat(&b'a'));
            for byte in endless {
                if std::io::Write::write_all(&mut stream, &[*byte]).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        let server: SignalServer = format!("ws://127.0.0.1:{port}").parse().unwrap();
        let started = Instant::now();
        let refused = RoomClient::enter(&server, "room", None, Duration::from_millis(300));
        let error = refused.err().expect("refused").to_string();
        assert!(started.elapsed() < Duration::from_secs(5), "{error}");
        assert!(error.contains(&server.to_string()), "{error}");
        dripper.join().unwrap();
    }
}
