//! The one ureq `Agent` setup tai uses for every HTTP call: no threads, explicit deadlines.
//!
//! ureq's default resolver spawns a helper thread whenever a resolve timeout applies, so
//! tai gives the agent `SyncResolver`, which resolves on the calling thread. Status codes
//! come back as responses (not errors) so callers can read error bodies.

use std::time::Duration;

use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

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
    ureq::Agent::with_parts(config, DefaultConnector::default(), SyncResolver::default())
}
