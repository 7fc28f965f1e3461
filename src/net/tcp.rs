//! A TCP connection read and written without blocking, for peers whose
//! protocol runs over a stream (RetroArch's netplay): bytes go out as the
//! kernel takes them, the rest waits for the next flush.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

/// What a look at the connection found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Received {
    /// This many bytes came (0: none yet).
    Bytes(usize),
    /// The peer closed the connection.
    Closed,
}

/// A connected, non-blocking TCP stream with Nagle off.
#[derive(Debug)]
pub struct TcpLink {
    stream: TcpStream,
    pending: Vec<u8>,
}

impl TcpLink {
    /// Connects to `address`, waiting at most `timeout`.
    pub fn connect(address: SocketAddr, timeout: Duration) -> std::io::Result<TcpLink> {
        TcpLink::over(TcpStream::connect_timeout(&address, timeout)?)
    }

    /// A connected stream (one a [`TcpListening`] accepted) as a link.
    fn over(stream: TcpStream) -> std::io::Result<TcpLink> {
        // Every frame's input is a few bytes: send each at once.
        stream.set_nodelay(true)?;
        stream.set_nonblocking(true)?;
        Ok(TcpLink {
            stream,
            pending: Vec::new(),
        })
    }

    /// Reads what has come into the end of `into`.
    pub fn receive(&mut self, into: &mut Vec<u8>) -> std::io::Result<Received> {
        let mut chunk = [0u8; 16 * 1024];
        let mut total = 0;
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    return Ok(if total == 0 {
                        Received::Closed
                    } else {
                        Received::Bytes(total)
                    })
                }
                Ok(read) => {
                    into.extend_from_slice(&chunk[..read]);
                    total += read;
                }
                Err(error) if error.kind() == ErrorKind::WouldBlock => {
                    return Ok(Received::Bytes(total))
                }
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
    }

    /// Queues `bytes` and sends what the kernel takes of everything queued.
    pub fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.pending.extend_from_slice(bytes);
        self.flush()
    }

    /// Sends what the kernel takes of the queue.
    pub fn flush(&mut self) -> std::io::Result<()> {
        while !self.pending.is_empty() {
            match self.stream.write(&self.pending) {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                Ok(sent) => {
                    self.pending.drain(..sent);
                }
                Err(error) if error.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }

    /// Bytes still queued.
    pub fn queued(&self) -> usize {
        self.pending.len()
    }

    /// Waits until bytes come, the connection fails or `timeout` passes
    /// (the stream is peeked with a read timeout; nothing is consumed). A
    /// failure is left for [`TcpLink::receive`] to report.
    pub fn wait(&mut self, timeout: Duration) {
        let peek = |stream: &TcpStream| -> std::io::Result<()> {
            stream.set_nonblocking(false)?;
            stream.set_read_timeout(Some(timeout.max(Duration::from_micros(100))))?;
            stream.peek(&mut [0u8; 1])?;
            Ok(())
        };
        let _ = peek(&self.stream);
        // Back to non-blocking whatever the peek found; a socket that
        // refuses even that fails the next receive.
        let _ = self.stream.set_nonblocking(true);
    }
}

/// A TCP port listened on without blocking, for peers that connect to us
/// (RetroArch players joining a netcade host).
#[derive(Debug)]
pub struct TcpListening {
    listener: TcpListener,
}

impl TcpListening {
    /// Listens on `port` of every address (0: any free port).
    pub fn bind(port: u16) -> std::io::Result<TcpListening> {
        let listener = TcpListener::bind((std::net::Ipv4Addr::UNSPECIFIED, port))?;
        listener.set_nonblocking(true)?;
        Ok(TcpListening { listener })
    }

    /// The port listened on.
    pub fn port(&self) -> u16 {
        self.listener
            .local_addr()
            .map_or(0, |address| address.port())
    }

    /// A connection that came, if one did (one that fails to set up is
    /// dropped).
    pub fn accept(&self) -> Option<(TcpLink, SocketAddr)> {
        loop {
            match self.listener.accept() {
                Ok((stream, address)) => {
                    if let Ok(link) = TcpLink::over(stream) {
                        return Some((link, address));
                    }
                }
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
    }
}
