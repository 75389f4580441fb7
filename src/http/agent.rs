//! The one ureq `Agent` setup tai uses for every HTTP call: no threads, explicit deadlines.
//!
//! ureq's default resolver spawns a helper thread whenever a resolve timeout applies, so
//! tai gives the agent `SyncResolver`, which resolves on the calling thread. Status codes
//! come back as responses (not errors) so callers can read error bodies. Every wait for a
//! response is cut into short slices (`Interruptible`), so Ctrl-C ends it within 100 ms.

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
        Ok(chained.map(InterruptibleTransport))
    }
}

#[derive(Debug)]
pub struct InterruptibleTransport<T>(T);

impl<T: Transport> Transport for InterruptibleTransport<T> {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.0.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        self.0.transmit_output(amount, timeout)
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        use ureq::unversioned::transport::time::Duration as Until;
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
            match self.0.await_input(this) {
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
        self.0.is_open()
    }

    fn is_tls(&self) -> bool {
        self.0.is_tls()
    }
}
