//! The one ureq `Agent` setup tai uses for every HTTP call: no threads, explicit deadlines.
//!
//! ureq's default resolver spawns a helper thread whenever a resolve timeout applies, so
//! tai gives the agent `SyncResolver`, which resolves on the calling thread. Status codes
//! come back as responses (not errors) so callers can read error bodies. Every wait for a
//! response is cut into short slices (`Interruptible`), so Ctrl-C ends it within 100 ms.
//! Output is held until the connection waits for input (or a batch fills), so a request's
//! head and body leave in one write: one TCP segment, and one wake-up of the server,
//! instead of two (docs/benchmarks.md).

use std::time::Duration;

use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, DefaultConnector, NextTimeout, Transport,
};

/// Resolves with `ToSocketAddrs` on the calling thread (never a helper thread).
#[derive(Debug, Default)]
pub struct SyncResolver(DefaultResolver);

impl Resolver for SyncResolver {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        // Without a timeout the default resolver looks the name up synchronously.
        let sync = NextTimeout {
            after: ureq::unversioned::transport::time::Duration::NotHappening,
            ..timeout
        };
        self.0.resolve(uri, config, sync)
    }
}

/// A thread-free agent. `connect_timeout` bounds the TCP connect; each request sets its
/// own global deadline.
pub fn agent(connect_timeout: Duration) -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(connect_timeout))
        .max_redirects(0)
        .user_agent(concat!("tai/", env!("CARGO_PKG_VERSION")))
        .build();
    ureq::Agent::with_parts(
        config,
        DefaultConnector::default().chain(Interruptible),
        SyncResolver::default(),
    )
}

// One slice of a wait for input: the most a Ctrl-C waits to be seen.
use crate::limits::INTERRUPT_CHECK as SLICE;

/// Wraps every connection so a wait for input looks at the Ctrl-C flag between slices
/// (ureq itself retries a read that a signal interrupted, while a timeout applies).
#[derive(Debug)]
pub struct Interruptible;

impl<In: Transport> Connector<In> for Interruptible {
    type Out = InterruptibleTransport<In>;

    fn connect(
        &self,
        _details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        Ok(chained.map(|inner| InterruptibleTransport {
            inner,
            pending: Vec::new(),
        }))
    }
}

/// Output held back is sent once it reaches this much (or when input is awaited).
const BATCH: usize = 16 * 1024;

#[derive(Debug)]
pub struct InterruptibleTransport<T> {
    inner: T,
    /// Output ureq has handed over and that is not sent yet (a request's head, waiting
    /// for its body).
    pending: Vec<u8>,
}

impl<T: Transport> InterruptibleTransport<T> {
    /// Send what is held back, through the inner transport's output buffer.
    fn flush(&mut self, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let timeout = steady_write_timeout(timeout);
        let mut at = 0;
        while at < self.pending.len() {
            let out = self.inner.buffers().output();
            let n = out.len().min(self.pending.len() - at);
            if n == 0 {
                return Err(ureq::Error::Io(std::io::ErrorKind::WriteZero.into()));
            }
            out[..n].copy_from_slice(&self.pending[at..at + n]);
            self.inner.transmit_output(n, timeout)?;
            at += n;
        }
        self.pending.clear();
        Ok(())
    }
}

/// A write deadline of two seconds or more rounded down to whole seconds: never later
/// than asked, and the same from one request to the next, so the socket's send timeout
/// is not set again (a system call) on every request.
fn steady_write_timeout(timeout: NextTimeout) -> NextTimeout {
    use ureq::unversioned::transport::time::Duration as Until;
    match timeout.after {
        Until::Exact(d) if d >= crate::limits::STEADY_WRITE_TIMEOUT_FROM => NextTimeout {
            after: Until::Exact(Duration::from_secs(d.as_secs())),
            ..timeout
        },
        _ => timeout,
    }
}

impl<T: Transport> Transport for InterruptibleTransport<T> {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.inner.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let output = &self.inner.buffers().output()[..amount];
        self.pending.extend_from_slice(output);
        if self.pending.len() >= BATCH {
            self.flush(timeout)?;
        }
        Ok(())
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        use ureq::unversioned::transport::time::Duration as Until;
        if !self.pending.is_empty() {
            self.flush(timeout)?;
        }
        let started = std::time::Instant::now();
        loop {
            let left = match timeout.after {
                Until::Exact(d) => Some(d.saturating_sub(started.elapsed())),
                Until::NotHappening => None,
            };
            let slice = left.map_or(SLICE, |l| l.min(SLICE));
            let this = NextTimeout {
                after: Until::Exact(slice),
                ..timeout
            };
            match self.inner.await_input(this) {
                Err(ureq::Error::Timeout(_)) if left.is_none_or(|l| l > slice) => {
                    if crate::sigint::interrupted() {
                        return Err(ureq::Error::Io(std::io::ErrorKind::Interrupted.into()));
                    }
                }
                other => return other,
            }
        }
    }

    fn is_open(&mut self) -> bool {
        self.inner.is_open()
    }

    fn is_tls(&self) -> bool {
        self.inner.is_tls()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ureq::unversioned::transport::LazyBuffers;
    use ureq::unversioned::transport::time::Duration as Until;

    /// A transport that records what is transmitted, with a small output buffer.
    #[derive(Debug)]
    struct Recorder {
        buffers: LazyBuffers,
        sent: Vec<Vec<u8>>,
    }

    impl Transport for Recorder {
        fn buffers(&mut self) -> &mut dyn Buffers {
            &mut self.buffers
        }
        fn transmit_output(&mut self, amount: usize, _: NextTimeout) -> Result<(), ureq::Error> {
            let out = self.buffers.output()[..amount].to_vec();
            self.sent.push(out);
            Ok(())
        }
        fn await_input(&mut self, _: NextTimeout) -> Result<bool, ureq::Error> {
            Ok(true)
        }
        fn is_open(&mut self) -> bool {
            true
        }
    }

    fn wrapped(output: usize) -> InterruptibleTransport<Recorder> {
        InterruptibleTransport {
            inner: Recorder {
                buffers: LazyBuffers::new(1024, output),
                sent: Vec::new(),
            },
            pending: Vec::new(),
        }
    }

    fn timeout(after: Until) -> NextTimeout {
        NextTimeout {
            after,
            reason: ureq::Timeout::Global,
            per_read: None,
            per_write: None,
        }
    }

    /// ureq's way of handing over output: write it into the buffer, then transmit.
    fn hand_over(t: &mut InterruptibleTransport<Recorder>, bytes: &[u8]) {
        t.buffers().output()[..bytes.len()].copy_from_slice(bytes);
        t.transmit_output(bytes.len(), timeout(Until::NotHappening))
            .unwrap();
    }

    #[test]
    fn a_head_and_its_body_leave_in_one_write_when_the_answer_is_awaited() {
        let mut t = wrapped(4096);
        hand_over(&mut t, b"POST /mcp HTTP/1.1\r\ncontent-length: 2\r\n\r\n");
        hand_over(&mut t, b"{}");
        assert!(t.inner.sent.is_empty(), "nothing leaves before the wait");
        t.await_input(timeout(Until::Exact(Duration::from_secs(5))))
            .unwrap();
        assert_eq!(
            t.inner.sent,
            vec![b"POST /mcp HTTP/1.1\r\ncontent-length: 2\r\n\r\n{}".to_vec()]
        );
        t.await_input(timeout(Until::Exact(Duration::from_secs(5))))
            .unwrap();
        assert_eq!(t.inner.sent.len(), 1, "nothing is sent twice");
    }

    #[test]
    fn a_large_body_leaves_in_order_in_pieces_the_buffer_holds() {
        let mut t = wrapped(1000);
        let body: Vec<u8> = (0..40_000u32).map(|i| (i % 251) as u8).collect();
        for piece in body.chunks(1000) {
            hand_over(&mut t, piece);
        }
        t.await_input(timeout(Until::NotHappening)).unwrap();
        assert!(t.inner.sent.iter().all(|w| w.len() <= 1000));
        assert!(
            t.inner.sent.len() >= 40,
            "sent as it filled, not held whole"
        );
        assert_eq!(t.inner.sent.concat(), body);
        assert!(t.pending.is_empty());
    }

    #[test]
    fn write_deadlines_are_never_later_and_steady_between_requests() {
        let exact = |ms: u64| Until::Exact(Duration::from_millis(ms));
        for (given, wanted) in [
            (exact(500), exact(500)),
            (exact(1999), exact(1999)),
            (exact(2000), exact(2000)),
            (exact(59_999), exact(59_000)),
            (exact(59_001), exact(59_000)),
            (Until::NotHappening, Until::NotHappening),
        ] {
            let got = steady_write_timeout(timeout(given)).after;
            assert_eq!(format!("{got:?}"), format!("{wanted:?}"), "{given:?}");
        }
    }
}
