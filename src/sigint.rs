//! Ctrl-C as a flag: SIGINT sets an atomic the agent loop checks between steps and reads,
//! so a turn stops cleanly and the prompt comes back with history intact.
//!
//! The only module allowed `unsafe`: installing a signal handler is an unsafe call, and the
//! handler does nothing but store to an atomic (async-signal-safe).
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: nix::libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Catch SIGINT from now on (no SA_RESTART, so a blocked read returns EINTR).
pub fn install() {
    let action = SigAction::new(
        SigHandler::Handler(on_sigint),
        SaFlags::empty(),
        SigSet::empty(),
    );
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    let _ = unsafe { sigaction(Signal::SIGINT, &action) };
}

/// For servers: SIGTERM sets the same flag, so a stop is clean (connections closed).
pub fn install_with_term() {
    install();
    let action = SigAction::new(
        SigHandler::Handler(on_sigint),
        SaFlags::empty(),
        SigSet::empty(),
    );
    // SAFETY: as in `install`.
    let _ = unsafe { sigaction(Signal::SIGTERM, &action) };
}

/// Whether Ctrl-C was pressed since the last `clear`.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

pub fn clear() {
    INTERRUPTED.store(false, Ordering::SeqCst);
}
