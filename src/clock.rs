//! Waiting without a thread: a sleep is `poll(2)` on no descriptors, so it is bounded and
//! interrupted by signals like every other wait in tai.

use std::time::Duration;

use nix::poll::{PollTimeout, poll};

use crate::deadline::Deadline;

/// Sleep until `until` (or at most 65 s; the caller looks again), returning early on a
/// signal. Never returns at once while the moment is still ahead (see
/// [`Deadline::poll_timeout`]).
pub fn sleep_until(until: Deadline) {
    let _ = poll(&mut [], until.poll_timeout());
}

/// Sleep for `d` (in steps of at most 65 s), returning early on a signal.
pub fn sleep(d: Duration) {
    let ms = d.as_millis().clamp(0, u16::MAX as u128) as u16;
    let _ = poll(&mut [], PollTimeout::from(ms));
}
