//! Waiting without a thread: a sleep is `poll(2)` on no descriptors, so it is bounded and
//! interrupted by signals like every other wait in tai. And the wall clock, in milliseconds.

use std::time::Duration;

use nix::poll::{PollTimeout, poll};

/// Sleep for `d` (in steps of at most 65 s), returning early on a signal.
pub fn sleep(d: Duration) {
    let ms = d.as_millis().clamp(0, u16::MAX as u128) as u16;
    let _ = poll(&mut [], PollTimeout::from(ms));
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
