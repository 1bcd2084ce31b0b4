//! The wait before a failed job's next attempt: exponential, capped, with jitter.

use std::time::Duration;

/// The wait after failed attempt `attempt` (from 1): `base` doubled for each attempt before
/// it, at most `cap`, then a random point of its upper half ("equal jitter": `unit` in
/// `[0, 1)` picks it), so that jobs that failed together do not all come back together.
pub(crate) fn wait(attempt: u32, base: Duration, cap: Duration, unit: f64) -> Duration {
    let doublings = attempt.saturating_sub(1).min(31);
    let full = base.saturating_mul(1 << doublings).min(cap);
    let half = full / 2;
    half + half.mul_f64(unit.clamp(0.0, 1.0))
}

/// [`wait`] with a random `unit`.
pub(crate) fn random_wait(attempt: u32, base: Duration, cap: Duration) -> Duration {
    wait(attempt, base, cap, rand::random::<f64>())
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn waits_double_per_attempt_up_to_the_cap_and_jitter_stays_in_the_upper_half() {
        let cap = Duration::from_secs(60);
        let full: Vec<Duration> = (1..=8).map(|a| wait(a, 2 * S, cap, 1.0)).collect();
        assert_eq!(full, [2, 4, 8, 16, 32, 60, 60, 60].map(Duration::from_secs));
        assert_eq!(wait(3, 2 * S, cap, 0.0), 4 * S);
        assert_eq!(wait(3, 2 * S, cap, 0.5), 6 * S);
        assert_eq!(wait(1_000, 2 * S, cap, 1.0), cap); // no overflow
        assert_eq!(wait(5, Duration::ZERO, cap, 0.7), Duration::ZERO);
    }
}
