//! Waiting without a thread: a sleep is `poll(2)` on no descriptors, so it is bounded and
//! interrupted by signals like every other wait in tai. And the wall clock, in milliseconds.

use std::time::Duration;

use nix::poll::poll;

use crate::deadline::Deadline;

/// Sleep until `until` (or at most 65 s; the caller looks again), returning early on a
/// signal. Never returns at once while the moment is still ahead (see
/// [`Deadline::poll_timeout`]).
pub fn sleep_until(until: Deadline) {
    let _ = poll(&mut [], until.poll_timeout());
}

/// Sleep for `d` (in steps of at most 65 s), returning early on a signal.
pub fn sleep(d: Duration) {
    sleep_until(Deadline::after(d));
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn a_sleep_lasts_its_whole_time_even_under_a_millisecond() {
        for d in [Duration::from_micros(300), Duration::from_millis(30)] {
            let t0 = Instant::now();
            sleep(d);
            assert!(t0.elapsed() >= d, "{d:?}: woke after {:?}", t0.elapsed());
        }
        let t0 = Instant::now();
        sleep_until(Deadline::at(t0));
        assert!(
            t0.elapsed() < Duration::from_secs(2),
            "a passed deadline waits for nothing"
        );
    }
}
