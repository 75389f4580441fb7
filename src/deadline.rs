//! The one deadline type: a moment a wait must not pass. Every wait in tai takes a
//! [`Deadline`] (never "maybe forever") and asks it what is left: [`Deadline::remaining`]
//! for a sleep, [`Deadline::timeout`] for a socket or HTTP timeout (never zero),
//! [`Deadline::poll_timeout`] for `poll(2)` (rounded up to whole milliseconds, so a poll
//! never spins at 0 before the moment passes), and [`Deadline::within`] / [`Deadline::min`]
//! to narrow a wait to a slice (so Ctrl-C is looked at between slices). Pure but for reading
//! the monotonic clock; the `*_at(now)` forms take the clock as a value and are what the
//! tests use. The values waited for live in `crate::limits`.

use std::time::{Duration, Instant};

use nix::poll::PollTimeout;

/// A moment on the monotonic clock a wait must end by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Deadline(Instant);

impl Deadline {
    /// The moment `at`.
    pub fn at(at: Instant) -> Deadline {
        Deadline(at)
    }

    /// `d` from now.
    pub fn after(d: Duration) -> Deadline {
        Deadline::after_from(Instant::now(), d)
    }

    /// `d` from `now` (saturating far in the future rather than overflowing).
    pub fn after_from(now: Instant, d: Duration) -> Deadline {
        Deadline(
            now.checked_add(d)
                .or_else(|| now.checked_add(FAR))
                .unwrap_or(now),
        )
    }

    /// Whichever of the two comes first.
    pub fn min(self, other: Deadline) -> Deadline {
        Deadline(self.0.min(other.0))
    }

    /// This deadline, or `d` from now if that comes first: one slice of a longer wait.
    pub fn within(self, d: Duration) -> Deadline {
        self.min(Deadline::after(d))
    }

    /// What is left now (zero once passed).
    pub fn remaining(self) -> Duration {
        self.remaining_at(Instant::now())
    }

    /// What is left at `now` (zero once passed).
    pub fn remaining_at(self, now: Instant) -> Duration {
        self.0.saturating_duration_since(now)
    }

    /// What is left now as a socket or HTTP timeout: see [`Deadline::timeout_at`].
    pub fn timeout(self) -> Option<Duration> {
        self.timeout_at(Instant::now())
    }

    /// What is left at `now` as a socket or HTTP timeout, or `None` once the moment came:
    /// rounded UP to whole milliseconds, so it is never zero (a zero socket timeout is
    /// refused, or means "forever").
    pub fn timeout_at(self, now: Instant) -> Option<Duration> {
        let left = self.remaining_at(now);
        (!left.is_zero()).then(|| Duration::from_millis(whole_millis(left)))
    }

    /// Whether the moment has come.
    pub fn expired(self) -> bool {
        self.expired_at(Instant::now())
    }

    /// Whether the moment has come at `now`.
    pub fn expired_at(self, now: Instant) -> bool {
        self.remaining_at(now).is_zero()
    }

    /// The timeout for one `poll(2)` now: see [`Deadline::poll_timeout_at`].
    pub fn poll_timeout(self) -> PollTimeout {
        self.poll_timeout_at(Instant::now())
    }

    /// The timeout for one `poll(2)` at `now`: what is left rounded UP to whole
    /// milliseconds (a poll for 0.4 ms waits 1 ms instead of returning at once and spinning),
    /// capped at `u16::MAX` ms (about 65 s; the caller loops and asks again), and 0 once the
    /// moment has come.
    pub fn poll_timeout_at(self, now: Instant) -> PollTimeout {
        PollTimeout::from(poll_millis(self.remaining_at(now)))
    }
}

/// How far "never, for practical purposes" is, when an addition would overflow.
const FAR: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// `left` in whole milliseconds, rounded up (saturating).
fn whole_millis(left: Duration) -> u64 {
    u64::try_from(left.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX)
}

/// `left` as poll(2) milliseconds: rounded up, at most `u16::MAX`.
fn poll_millis(left: Duration) -> u16 {
    u16::try_from(whole_millis(left)).unwrap_or(u16::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_millis_round_up_and_cap() {
        let table = [
            (Duration::ZERO, 0),
            (Duration::from_nanos(1), 1),
            (Duration::from_micros(400), 1),
            (Duration::from_millis(1), 1),
            (Duration::from_micros(1_001), 2),
            (Duration::from_millis(250), 250),
            (Duration::from_millis(65_535), 65_535),
            (Duration::from_millis(65_536), 65_535),
            (Duration::from_secs(3_600), 65_535),
            (Duration::MAX, 65_535),
        ];
        for (left, want) in table {
            assert_eq!(poll_millis(left), want, "{left:?}");
        }
    }

    #[test]
    fn remaining_expired_and_poll_timeout_at_a_given_clock() {
        let t0 = Instant::now();
        let d = Deadline::at(t0 + Duration::from_millis(100));
        // (now, remaining, expired, poll ms)
        let table = [
            (t0, Duration::from_millis(100), false, 100u16),
            (
                t0 + Duration::from_micros(99_500),
                Duration::from_micros(500),
                false,
                1,
            ),
            (t0 + Duration::from_millis(100), Duration::ZERO, true, 0),
            (t0 + Duration::from_secs(5), Duration::ZERO, true, 0),
        ];
        for (now, left, expired, ms) in table {
            assert_eq!(d.remaining_at(now), left, "{:?}", now - t0);
            assert_eq!(d.expired_at(now), expired, "{:?}", now - t0);
            assert_eq!(
                d.poll_timeout_at(now),
                PollTimeout::from(ms),
                "{:?}",
                now - t0
            );
        }
    }

    #[test]
    fn min_and_within_pick_the_sooner() {
        let t0 = Instant::now();
        let a = Deadline::at(t0 + Duration::from_secs(1));
        let b = Deadline::at(t0 + Duration::from_secs(2));
        assert_eq!(a.min(b), a);
        assert_eq!(b.min(a), a);
        let far = Deadline::after(Duration::from_secs(3_600));
        let slice = far.within(Duration::from_millis(100));
        assert!(slice < far && slice.remaining() <= Duration::from_millis(100));
        let near = Deadline::after(Duration::from_millis(10));
        assert_eq!(near.within(Duration::from_secs(60)), near);
    }

    #[test]
    fn after_saturates_and_timeout_is_whole_millis_until_the_moment() {
        let t0 = Instant::now();
        let never = Deadline::after_from(t0, Duration::MAX);
        assert!(never > Deadline::at(t0 + Duration::from_secs(3_600 * 24 * 365)));
        let d = Deadline::at(t0 + Duration::from_micros(2_500));
        // (elapsed, timeout): rounded up to whole ms, never zero, none once passed
        let table = [
            (Duration::ZERO, Some(Duration::from_millis(3))),
            (Duration::from_micros(2_000), Some(Duration::from_millis(1))),
            (Duration::from_micros(2_499), Some(Duration::from_millis(1))),
            (Duration::from_micros(2_500), None),
            (Duration::from_secs(1), None),
        ];
        for (elapsed, want) in table {
            assert_eq!(d.timeout_at(t0 + elapsed), want, "{elapsed:?}");
        }
        assert_eq!(
            Deadline::after_from(t0, Duration::from_secs(3)),
            Deadline::at(t0 + Duration::from_secs(3))
        );
    }
}
