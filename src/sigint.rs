//! Ctrl-C as a flag: SIGINT sets an atomic that every wait in tai checks (poll loops in
//! short rounds, the agent loop between steps), so a tool call or a turn stops cleanly and
//! the prompt comes back with history intact. A second Ctrl-C within `QUIT_WINDOW` of the
//! first asks tai to quit (`quit_requested`), wherever it is waiting. A deadline set with
//! `stop_at` (a served `chat` turn's) stops the same waits when it passes.
//!
//! The only module allowed `unsafe`: installing a signal handler is an unsafe call, and the
//! handler does nothing but read the monotonic clock and store to atomics
//! (async-signal-safe).
#![allow(unsafe_code)]

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

pub use crate::limits::QUIT_WINDOW;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static QUIT: AtomicBool = AtomicBool::new(false);
/// When the last press came, in ms since `BASE` plus one (0: never).
static LAST_PRESS: AtomicU64 = AtomicU64::new(0);
static BASE: OnceLock<Instant> = OnceLock::new();
/// A deadline every wait honours like a Ctrl-C, in ms since `BASE` plus one (0: none).
static STOP_AT: AtomicU64 = AtomicU64::new(0);

fn ms_since_base(at: Instant) -> u64 {
    let base = *BASE.get_or_init(Instant::now);
    at.saturating_duration_since(base).as_millis() as u64 + 1
}

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

/// A Ctrl-C read as a key (a terminal in raw mode sends no signal): counted like one, so
/// two presses within `QUIT_WINDOW` quit wherever they came from.
pub fn press() {
    let now = ms_since_base(Instant::now());
    if is_second_press(LAST_PRESS.swap(now, Ordering::SeqCst), now) {
        QUIT.store(true, Ordering::SeqCst);
    }
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Catch SIGINT from now on (no SA_RESTART, so a blocked read returns EINTR).
pub fn install() {
    BASE.get_or_init(Instant::now);
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

/// Whether Ctrl-C was pressed since the last `clear`, or the `stop_at` deadline passed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst) || deadline_passed()
}

/// Whether a deadline set with `stop_at` has passed.
pub fn deadline_passed() -> bool {
    passed(
        STOP_AT.load(Ordering::SeqCst),
        ms_since_base(Instant::now()),
    )
}

/// Whether a deadline `at` (as stored; 0 is none) has passed at `now`.
fn passed(at: u64, now: u64) -> bool {
    at != 0 && now >= at
}

/// Until the guard is dropped, every wait that honours Ctrl-C also ends at `at`.
pub fn stop_at(at: Instant) -> StopAt {
    STOP_AT.store(ms_since_base(at), Ordering::SeqCst);
    StopAt(())
}

/// The deadline of `stop_at`, lifted when dropped.
pub struct StopAt(());

impl Drop for StopAt {
    fn drop(&mut self) {
        STOP_AT.store(0, Ordering::SeqCst);
    }
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
    use std::time::Duration;

    #[test]
    fn a_second_press_within_the_window_quits() {
        assert!(!is_second_press(0, 5)); // the first press ever
        assert!(is_second_press(1000, 2500));
        assert!(is_second_press(1000, 3000));
        assert!(!is_second_press(1000, 3001));
    }

    #[test]
    fn a_deadline_stops_waits_until_lifted() {
        assert!(passed(5, 5) && passed(5, 6) && !passed(5, 4) && !passed(0, 9));
        // A far deadline (so no other test's wait is cut short): set, then lifted.
        let guard = stop_at(Instant::now() + Duration::from_secs(3600));
        assert_ne!(STOP_AT.load(Ordering::SeqCst), 0);
        assert!(!deadline_passed());
        drop(guard);
        assert_eq!(STOP_AT.load(Ordering::SeqCst), 0);
    }
}
