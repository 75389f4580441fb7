//! Ctrl-C as a flag: SIGINT sets an atomic that every wait in tai checks (poll loops in
//! short rounds, the agent loop between steps), so a tool call or a turn stops cleanly and
//! the prompt comes back with history intact. A second Ctrl-C within `QUIT_WINDOW` of the
//! first asks tai to quit (`quit_requested`), wherever it is waiting.
//!
//! The only module allowed `unsafe`: installing a signal handler is an unsafe call, and the
//! handler does nothing but read the monotonic clock and store to atomics
//! (async-signal-safe).
#![allow(unsafe_code)]

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

/// Two presses this close together end tai.
pub const QUIT_WINDOW: Duration = Duration::from_secs(2);

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static QUIT: AtomicBool = AtomicBool::new(false);
/// When the last press came, in ms since `BASE` plus one (0: never).
static LAST_PRESS: AtomicU64 = AtomicU64::new(0);
static BASE: OnceLock<Instant> = OnceLock::new();

/// Whether a press at `now` (ms, as stored) after one at `last` asks to quit.
fn is_second_press(last: u64, now: u64) -> bool {
    last != 0 && now.saturating_sub(last) <= QUIT_WINDOW.as_millis() as u64
}

extern "C" fn on_sigint(_: nix::libc::c_int) {
    if let Some(base) = BASE.get() {
        // clock_gettime(CLOCK_MONOTONIC) is async-signal-safe.
        let now = base.elapsed().as_millis() as u64 + 1;
        if is_second_press(LAST_PRESS.swap(now, Ordering::SeqCst), now) {
            QUIT.store(true, Ordering::SeqCst);
        }
    }
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Catch SIGINT from now on (no SA_RESTART, so a blocked read returns EINTR).
pub fn install() {
    let _ = BASE.set(Instant::now());
    let action = SigAction::new(
        SigHandler::Handler(on_sigint),
        SaFlags::empty(),
        SigSet::empty(),
    );
    // SAFETY: the handler only reads the clock and stores to atomics (async-signal-safe).
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

/// Whether Ctrl-C was pressed twice within `QUIT_WINDOW`: tai should end.
pub fn quit_requested() -> bool {
    QUIT.load(Ordering::SeqCst)
}

/// Forget a press (the prompt is back); a second press soon after still quits.
pub fn clear() {
    INTERRUPTED.store(false, Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_press_within_the_window_quits() {
        assert!(!is_second_press(0, 5)); // the first press ever
        assert!(is_second_press(1000, 2500));
        assert!(is_second_press(1000, 3000));
        assert!(!is_second_press(1000, 3001));
    }
}
