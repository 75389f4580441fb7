//! `tai --serve-mcp KEY`: MCP over Streamable HTTP on one thread.
//!
//! A `TcpListener`, every connection and every worker's pipes are driven by one `poll(2)`
//! loop (tiny_http would start an accept thread and a task pool). Each connection is an
//! `Exchange` (bytes in, bytes out) answered by the `Endpoint`; a long call's worker
//! (`worker::Pool`) answers later and the loop writes its reply then. Connections not
//! yet admitted hold a small share of the slots and live briefly, so they cannot starve
//! keyed clients; each address is capped; every connection has a write deadline, and a
//! client that does not read gets no further request read. A connection that goes away
//! ends its worker.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

pub use super::endpoint::Endpoint;
pub use super::exchange::exchange_bytes;
use super::exchange::{Exchange, MAX_HEADER_BYTES, Phase, status_only, write_chunk};
use crate::limits::serve::{self, ACCEPTS_PER_ROUND, CLOSE_GRACE};

/// The server's limits. The defaults serve people; tests shorten the deadlines through
/// `with_overrides` (`TAI_MCP_TEST_LIMITS`).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// A request must arrive whole within this.
    pub request: Duration,
    /// An admitted keep-alive connection with nothing to do is closed after this.
    pub idle: Duration,
    /// A connection with no admitted request yet lives this long from its accept.
    pub unauthenticated: Duration,
    /// Output waiting for a client that does not read: closed after this.
    pub write: Duration,
    /// A `subscriptions/listen` stream with no event is ended after this.
    pub listen_idle: Duration,
    /// A `:` comment on a listen stream this often.
    pub keepalive: Duration,
    pub max_connections: usize,
    /// Connections not yet admitted hold at most this many slots (the oldest is evicted).
    pub unauthenticated_slots: usize,
    /// Connections from one address at most (its oldest unadmitted one is evicted first).
    pub per_peer: usize,
    /// No further request on a connection is read while this much output is unsent.
    pub outbox: usize,
    /// A listen stream whose unsent output passes this is closed.
    pub listen_outbox: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            request: serve::REQUEST_TIMEOUT,
            idle: serve::IDLE_TIMEOUT,
            unauthenticated: serve::UNAUTHENTICATED_TIMEOUT,
            write: serve::WRITE_TIMEOUT,
            listen_idle: serve::LISTEN_IDLE,
            keepalive: serve::KEEPALIVE,
            max_connections: serve::MAX_CONNECTIONS,
            unauthenticated_slots: serve::UNAUTHENTICATED_SLOTS,
            per_peer: serve::PER_PEER,
            outbox: serve::OUTBOX,
            listen_outbox: serve::LISTEN_OUTBOX,
        }
    }
}

impl Limits {
    /// Deadlines from `name=MS,…` (request, idle, unauthenticated, write, listen_idle,
    /// keepalive); unknown names and bad numbers are ignored.
    pub fn with_overrides(mut self, spec: &str) -> Limits {
        for (name, ms) in spec
            .split(',')
            .filter_map(|kv| kv.split_once('='))
            .filter_map(|(k, v)| Some((k.trim(), v.trim().parse::<u64>().ok()?)))
        {
            let d = Duration::from_millis(ms);
            match name {
                "request" => self.request = d,
                "idle" => self.idle = d,
                "unauthenticated" => self.unauthenticated = d,
                "write" => self.write = d,
                "listen_idle" => self.listen_idle = d,
                "keepalive" => self.keepalive = d,
                _ => {}
            }
        }
        self
    }
}

/// The longest the loop sleeps in `poll` before it checks deadlines and the stop flag.
const POLL_ROUND_MS: u16 = 100;

struct Conn {
    stream: TcpStream,
    peer: IpAddr,
    ex: Exchange,
    accepted: Instant,
    /// The poll round it was accepted in (not evicted before a round has read it).
    round: u64,
    /// Since when output has been waiting for the client to take it.
    pending_since: Option<Instant>,
    /// When the exchange closed and the write side was shut (input is drained meanwhile).
    closed_at: Option<Instant>,
}

/// Make room for a connection from `peer`: over the per-peer cap, over the share of
/// unadmitted connections, or over the total, the oldest unadmitted connection (of that
/// peer first) is dropped — only one that has had a poll round to send its head, and only
/// after a last read (`last_read`) found it still unadmitted, so a flood of new
/// connections cannot push out a client before it was read. `false` when no room can be
/// made.
fn make_room(
    conns: &mut Vec<Conn>,
    peer: IpAddr,
    l: &Limits,
    round: u64,
    last_read: &mut dyn FnMut(&mut Conn) -> bool,
) -> bool {
    let mut evict = |conns: &mut Vec<Conn>, only: Option<IpAddr>| -> bool {
        loop {
            let oldest = conns
                .iter()
                .enumerate()
                .filter(|(_, c)| {
                    !c.ex.admitted && c.round < round && only.is_none_or(|p| c.peer == p)
                })
                .min_by_key(|(_, c)| c.accepted)
                .map(|(i, _)| i);
            let Some(i) = oldest else {
                return false;
            };
            // A last read first: a client whose head arrived after its last poll round is
            // admitted now, not dropped for a flood's newer connection. (One admitted stays,
            // even if the read found it closed: the loop ends it as any other.)
            let _ = last_read(&mut conns[i]);
            if !conns[i].ex.admitted {
                conns.remove(i);
                return true;
            }
        }
    };
    if conns.iter().filter(|c| c.peer == peer).count() >= l.per_peer && !evict(conns, Some(peer)) {
        return false;
    }
    if conns.iter().filter(|c| !c.ex.admitted).count() >= l.unauthenticated_slots
        && !evict(conns, None)
    {
        return false;
    }
    conns.len() < l.max_connections || evict(conns, None)
}

/// Whether a connection is past a deadline (or its listen stream fell behind).
fn expired(c: &Conn, now: Instant, l: &Limits) -> bool {
    let since = |t: Instant| now.duration_since(t);
    if c.pending_since.is_some_and(|t| since(t) >= l.write) {
        return true; // a client that does not read what it asked for
    }
    if let Some(t) = c.closed_at {
        return since(t) >= CLOSE_GRACE;
    }
    if !c.ex.admitted && since(c.accepted) >= l.unauthenticated {
        return true;
    }
    match &c.ex.phase {
        Phase::Listening { .. } => c.ex.output.len() > l.listen_outbox,
        // The worker's own deadline bounds the wait.
        Phase::Waiting(_) => false,
        // Closing with nothing left to write (the write side is shut on the next pump):
        // bounded all the same.
        Phase::Closing => since(c.ex.since) >= l.request,
        _ if c.ex.receiving() => since(c.ex.since) >= l.request,
        _ => since(c.ex.since) >= l.idle && c.ex.output.is_empty(),
    }
}

/// Serve until SIGINT or SIGTERM.
pub fn serve(
    endpoint: &mut Endpoint,
    listener: TcpListener,
    limits: Limits,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let mut conns: Vec<Conn> = Vec::new();
    let mut round: u64 = 0;
    let mut next_id: u64 = 0;
    // One read buffer for every connection, zeroed once (not per readiness: 1% of a call).
    let mut buf = vec![0u8; 16 * 1024];
    while !crate::sigint::interrupted() {
        let now = Instant::now();
        for c in &mut conns {
            if let Phase::Listening {
                body,
                opened,
                last_write,
                ..
            } = &mut c.ex.phase
            {
                if now.duration_since(*opened) >= limits.listen_idle {
                    c.ex.end_stream(); // idle too long: answered and closed
                } else if now.duration_since(*last_write) >= limits.keepalive {
                    // A comment keeps proxies from cutting the stream.
                    write_chunk(body, b": keepalive\n\n", &mut c.ex.output);
                    *last_write = now;
                }
            }
            note_pending(c, now);
        }
        conns.retain(|c| {
            let keep = !expired(c, now, &limits);
            if !keep {
                endpoint.forget(c.ex.id);
            }
            keep
        });
        let mut fds = vec![PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
        for c in &conns {
            let mut ev = PollFlags::empty();
            // A client that does not take its answers sends no more requests meanwhile;
            // one waiting on a worker is read until its pipelined input is full.
            if (c.ex.output.len() < limits.outbox || c.closed_at.is_some())
                && !(c.ex.waiting() && c.ex.input.len() >= MAX_HEADER_BYTES)
            {
                ev |= PollFlags::POLLIN;
            }
            if !c.ex.output.is_empty() {
                ev |= PollFlags::POLLOUT;
            }
            fds.push(PollFd::new(c.stream.as_fd(), ev));
        }
        // The workers' pipes wake the loop like connections do.
        if let Some(pool) = &endpoint.workers {
            for (fd, ev) in pool.poll_fds() {
                fds.push(PollFd::new(fd, ev));
            }
        }
        if poll(&mut fds, PollTimeout::from(POLL_ROUND_MS)).is_err() {
            continue; // EINTR: check the stop flag
        }
        let ready: Vec<bool> = fds
            .iter()
            .map(|f| f.revents().is_some_and(|r| !r.is_empty()))
            .collect();
        drop(fds);
        let mut dead = Vec::new();
        for (i, c) in conns.iter_mut().enumerate() {
            if ready[i + 1] && !pump(c, endpoint, &mut buf) {
                dead.push(i);
            }
        }
        for i in dead.into_iter().rev() {
            endpoint.forget(conns.remove(i).ex.id);
        }
        // Finished workers' answers, each to the connection waiting for it.
        for (id, answer) in endpoint.ready(Instant::now()) {
            if let Some(c) = conns.iter_mut().find(|c| c.ex.id == id) {
                c.ex.deliver(answer, endpoint);
                match flush(c) {
                    Flushed::Dead => c.closed_at = Some(Instant::now() - CLOSE_GRACE),
                    // `Connection: close` (or HTTP/1.0): closed once answered, as inline.
                    Flushed::All if c.ex.is_closing() && c.closed_at.is_none() => {
                        let _ = c.stream.shutdown(std::net::Shutdown::Write);
                        c.closed_at = Some(Instant::now());
                    }
                    _ => {}
                }
                note_pending(c, Instant::now());
            }
        }
        // New connections last, so the indices above matched the poll; a few per round,
        // each read at once (a prompt client is admitted before any flood can evict it).
        round += 1;
        if ready[0] {
            for _ in 0..ACCEPTS_PER_ROUND {
                let Ok((stream, addr)) = listener.accept() else {
                    break;
                };
                let mut last_read = |c: &mut Conn| pump(c, endpoint, &mut buf);
                if !make_room(&mut conns, addr.ip(), &limits, round, &mut last_read) {
                    let mut s = stream;
                    let _ = s.write_all(&status_only(503, "Service Unavailable"));
                    continue;
                }
                let _ = stream.set_nonblocking(true);
                let _ = stream.set_nodelay(true);
                if let Some(mut ex) = Exchange::new(limits.outbox) {
                    next_id += 1;
                    ex.id = next_id;
                    conns.push(Conn {
                        stream,
                        peer: addr.ip(),
                        ex,
                        accepted: Instant::now(),
                        round,
                        pending_since: None,
                        closed_at: None,
                    });
                    if let Some(c) = conns.last_mut()
                        && !pump(c, endpoint, &mut buf)
                    {
                        conns.pop();
                    }
                }
            }
        }
    }
    if let Some(pool) = endpoint.workers.as_mut() {
        pool.stop_all();
    }
    // Stopping: end each listen stream gracefully (its response, then the last chunk).
    for c in &mut conns {
        if matches!(c.ex.phase, Phase::Listening { .. }) {
            c.ex.end_stream();
            let _ = c.stream.set_nonblocking(false);
            let _ = c.stream.set_write_timeout(Some(CLOSE_GRACE));
            let _ = c.stream.write_all(&c.ex.output);
        }
    }
    Ok(())
}

/// Start or stop the write deadline as output waits or is all taken.
fn note_pending(c: &mut Conn, now: Instant) {
    match (c.ex.output.is_empty(), c.pending_since) {
        (true, _) => c.pending_since = None,
        (false, None) => c.pending_since = Some(now),
        (false, Some(_)) => {}
    }
}

enum Flushed {
    All,
    /// The socket is full: wait for POLLOUT.
    Blocked,
    Dead,
}

/// Write as much pending output as the socket takes.
fn flush(c: &mut Conn) -> Flushed {
    while !c.ex.output.is_empty() {
        match c.stream.write(&c.ex.output) {
            Ok(0) => return Flushed::Dead,
            Ok(n) => {
                c.ex.output.drain(..n);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Flushed::Blocked,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Flushed::Dead,
        }
    }
    Flushed::All
}

/// Move bytes for one ready connection, reading through `buf`; `false` when it is done.
fn pump(c: &mut Conn, endpoint: &mut Endpoint, buf: &mut [u8]) -> bool {
    if matches!(flush(c), Flushed::Dead) {
        return false;
    }
    // Read while the client sends and there is room for its answers; each chunk goes
    // through the exchange at once, so a refused request's body is never held.
    while c.ex.output.len() < c.ex.outbox || c.closed_at.is_some() {
        let room = if c.ex.waiting() {
            MAX_HEADER_BYTES
                .saturating_sub(c.ex.input.len())
                .min(buf.len())
        } else {
            buf.len()
        };
        if room == 0 {
            break;
        }
        match c.stream.read(&mut buf[..room]) {
            Ok(0) => return false,
            Ok(n) => {
                c.ex.receive(&buf[..n], endpoint);
                if n < room {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    // Output drained below the outbox: requests already read may go on.
    c.ex.advance(endpoint);
    match flush(c) {
        Flushed::Dead => return false,
        Flushed::Blocked => {}
        Flushed::All if c.ex.is_closing() && c.closed_at.is_none() => {
            // Answered for good: no more writes; reads are drained until the grace ends.
            let _ = c.stream.shutdown(std::net::Shutdown::Write);
            c.closed_at = Some(Instant::now());
        }
        Flushed::All => {}
    }
    note_pending(c, Instant::now());
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_take_test_overrides() {
        let l = Limits::default().with_overrides("write=300, listen_idle=5,bogus=1,idle=x");
        assert_eq!(
            (l.write, l.listen_idle, l.idle),
            (
                Duration::from_millis(300),
                Duration::from_millis(5),
                Limits::default().idle
            )
        );
    }
}
