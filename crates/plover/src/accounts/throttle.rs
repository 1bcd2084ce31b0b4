//! Throttling of failed logins per client address and per username from one address, and the
//! summary log of refused attempts (docs/security.md, "A flood of wrong passwords").

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::client::ClientKey;

/// How failed logins are throttled ([`Auth::login_limits`](super::Auth::login_limits)).
///
/// Failures are counted per client address, and per username from one address. Once a count
/// reaches its limit, further attempts of that address (or that username from that address)
/// are refused with 429 and `Retry-After`, without a password check, until a delay has passed
/// since the last failure: `first_delay`, doubled at each further failure, at most `window`.
/// A count ends when `window` passes without a failure; a successful login ends the count of
/// its username from its address. A username's failures from one address never throttle it
/// from another.
///
/// ```
/// use std::time::Duration;
/// use plover::accounts::LoginLimits;
///
/// let limits = LoginLimits::default();
/// assert_eq!((limits.per_username, limits.per_address), (5, 50));
/// assert_eq!(limits.window, Duration::from_secs(15 * 60));
/// let strict = LoginLimits { per_username: 3, ..LoginLimits::default() };
/// # let _ = strict;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginLimits {
    /// Failures of one username from one address before its attempts are throttled (default
    /// 5: the 6th attempt within the window is refused).
    pub per_username: u32,
    /// Failures from one address, whatever the usernames, before its attempts are throttled
    /// (default 50).
    pub per_address: u32,
    /// How long failures are remembered after the last one (default 15 minutes); also the
    /// longest delay.
    pub window: Duration,
    /// The delay after the failure that reaches a limit (default 1 minute), doubled at each
    /// further failure.
    pub first_delay: Duration,
    /// How often refused attempts are summed up in the log (default 1 minute): one line per
    /// interval, never one per attempt.
    pub log_interval: Duration,
}

impl Default for LoginLimits {
    fn default() -> Self {
        LoginLimits {
            per_username: 5,
            per_address: 50,
            window: Duration::from_secs(15 * 60),
            first_delay: Duration::from_secs(60),
            log_interval: Duration::from_secs(60),
        }
    }
}

/// The most counts kept; beyond it (after dropping the expired ones) new addresses are not
/// counted, and stay bounded by their share of the password checks alone.
const CAPACITY: usize = 100_000;

/// The longest username kept in a count (longer ones are cut: they are counted all the same).
const MAX_NAME: usize = 150;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Address(ClientKey),
    Username(ClientKey, String),
}

#[derive(Debug, Clone, Copy)]
struct Count {
    failures: u32,
    last: Instant,
}

/// Why an attempt was refused, for the summary log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The password (or the username) was wrong.
    Wrong,
    /// Refused by the throttle, without a check.
    Throttled,
    /// Refused because the address holds its share of the password checks, or all are taken.
    Busy,
}

/// The failure counts and the summary of refusals of one `Auth`.
#[derive(Debug)]
pub(crate) struct Throttle {
    limits: LoginLimits,
    counts: Mutex<HashMap<Key, Count>>,
    summary: Mutex<Summary>,
}

#[derive(Debug)]
struct Summary {
    since: Instant,
    wrong: u64,
    throttled: u64,
    busy: u64,
    /// Refusals per address; bounded, the rest counted in `others`.
    by_client: HashMap<ClientKey, u64>,
    others: u64,
}

/// Addresses named in one summary's counts, at most.
const SUMMARY_CLIENTS: usize = 1024;

impl Throttle {
    pub(crate) fn new(limits: LoginLimits) -> Throttle {
        Throttle {
            limits,
            counts: Mutex::new(HashMap::new()),
            summary: Mutex::new(Summary {
                since: Instant::now(),
                wrong: 0,
                throttled: 0,
                busy: 0,
                by_client: HashMap::new(),
                others: 0,
            }),
        }
    }

    fn keys(client: ClientKey, username: &str) -> [(Key, bool); 2] {
        let mut name = username.to_lowercase();
        if name.len() > MAX_NAME {
            let mut end = MAX_NAME;
            while !name.is_char_boundary(end) {
                end -= 1;
            }
            name.truncate(end);
        }
        [
            (Key::Address(client), false),
            (Key::Username(client, name), true),
        ]
    }

    fn limit(&self, per_username: bool) -> u32 {
        if per_username {
            self.limits.per_username
        } else {
            self.limits.per_address
        }
    }

    /// `Err(wait)` when `client` (or `username` from it) is throttled now: the time until it
    /// may try again.
    pub(crate) fn check(&self, client: ClientKey, username: &str) -> Result<(), Duration> {
        self.check_at(Instant::now(), client, username)
    }

    fn check_at(&self, now: Instant, client: ClientKey, username: &str) -> Result<(), Duration> {
        let Ok(counts) = self.counts.lock() else {
            return Ok(());
        };
        let mut wait = Duration::ZERO;
        for (key, per_username) in Self::keys(client, username) {
            let Some(count) = counts.get(&key) else {
                continue;
            };
            let limit = self.limit(per_username);
            if count.failures < limit || now >= count.last + self.limits.window {
                continue;
            }
            let delay = self.delay(count.failures - limit);
            wait = wait.max((count.last + delay).saturating_duration_since(now));
        }
        if wait.is_zero() {
            Ok(())
        } else {
            Err(wait)
        }
    }

    /// `first_delay` doubled `beyond` times, at most the window.
    fn delay(&self, beyond: u32) -> Duration {
        let factor = 1u32.checked_shl(beyond.min(31)).unwrap_or(u32::MAX);
        self.limits
            .first_delay
            .saturating_mul(factor)
            .min(self.limits.window)
    }

    /// Counts a failed attempt.
    pub(crate) fn failed(&self, client: ClientKey, username: &str) {
        self.failed_at(Instant::now(), client, username);
    }

    fn failed_at(&self, now: Instant, client: ClientKey, username: &str) {
        let Ok(mut counts) = self.counts.lock() else {
            return;
        };
        let window = self.limits.window;
        for (key, _) in Self::keys(client, username) {
            if counts.len() >= CAPACITY && !counts.contains_key(&key) {
                counts.retain(|_, c| now < c.last + window);
                if counts.len() >= CAPACITY {
                    continue;
                }
            }
            let count = counts.entry(key).or_insert(Count {
                failures: 0,
                last: now,
            });
            if now >= count.last + window {
                count.failures = 0;
            }
            count.failures = count.failures.saturating_add(1);
            count.last = now;
        }
    }

    /// Ends the count of `username` from `client` after a successful login.
    pub(crate) fn succeeded(&self, client: ClientKey, username: &str) {
        if let Ok(mut counts) = self.counts.lock() {
            let [_, (key, _)] = Self::keys(client, username);
            counts.remove(&key);
        }
    }

    /// Adds a refused attempt to the summary, and logs the summary once its interval is over.
    pub(crate) fn refused(&self, client: ClientKey, why: Refusal) {
        let Ok(mut summary) = self.summary.lock() else {
            return;
        };
        match why {
            Refusal::Wrong => summary.wrong += 1,
            Refusal::Throttled => summary.throttled += 1,
            Refusal::Busy => summary.busy += 1,
        }
        if summary.by_client.len() < SUMMARY_CLIENTS || summary.by_client.contains_key(&client) {
            *summary.by_client.entry(client).or_default() += 1;
        } else {
            summary.others += 1;
        }
        let now = Instant::now();
        if now.duration_since(summary.since) >= self.limits.log_interval {
            log::warn!("{}", summary.line(now));
            summary.reset(now);
        }
    }
}

impl Summary {
    /// One line: the counts by reason, the number of addresses and the busiest one.
    fn line(&self, now: Instant) -> String {
        let total = self.wrong + self.throttled + self.busy;
        let top = self
            .by_client
            .iter()
            .max_by_key(|(_, n)| **n)
            .map(|(client, n)| format!(", most from {client} ({n})"))
            .unwrap_or_default();
        let others = if self.others > 0 {
            format!(" and {} from further addresses", self.others)
        } else {
            String::new()
        };
        format!(
            "accounts: {total} refused logins in the last {} s ({} wrong, {} throttled, {} busy) \
             from {} addresses{others}{top}",
            now.duration_since(self.since).as_secs(),
            self.wrong,
            self.throttled,
            self.busy,
            self.by_client.len(),
        )
    }

    fn reset(&mut self, now: Instant) {
        self.since = now;
        self.wrong = 0;
        self.throttled = 0;
        self.busy = 0;
        self.by_client.clear();
        self.others = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(last: u8) -> ClientKey {
        ClientKey::of(Some(std::net::IpAddr::from([127, 0, 0, last])))
    }

    #[test]
    fn the_sixth_attempt_for_a_username_waits_with_growing_delays() {
        let throttle = Throttle::new(LoginLimits::default());
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        for i in 0..5 {
            assert_eq!(throttle.check_at(at(i), client(2), "alice"), Ok(()));
            throttle.failed_at(at(i), client(2), "alice");
        }
        assert_eq!(
            throttle.check_at(at(5), client(2), "Alice"),
            Err(Duration::from_secs(59)),
            "the 6th attempt, whatever the case, waits a minute after the 5th failure"
        );
        assert_eq!(throttle.check_at(at(5), client(3), "alice"), Ok(()));
        assert_eq!(throttle.check_at(at(5), client(2), "bob"), Ok(()));
        assert_eq!(throttle.check_at(at(64), client(2), "alice"), Ok(()));
        throttle.failed_at(at(64), client(2), "alice");
        assert_eq!(
            throttle.check_at(at(65), client(2), "alice"),
            Err(Duration::from_secs(119)),
            "the delay doubles"
        );
        throttle.succeeded(client(2), "alice");
        assert_eq!(throttle.check_at(at(65), client(2), "alice"), Ok(()));
    }

    #[test]
    fn an_address_is_throttled_whatever_the_usernames_and_counts_expire() {
        let throttle = Throttle::new(LoginLimits::default());
        let t0 = Instant::now();
        for i in 0..50 {
            throttle.failed_at(t0, client(2), &format!("user{i}"));
        }
        assert!(throttle.check_at(t0, client(2), "anyone").is_err());
        assert_eq!(throttle.check_at(t0, client(3), "anyone"), Ok(()));
        let later = t0 + Duration::from_secs(15 * 60);
        assert_eq!(throttle.check_at(later, client(2), "anyone"), Ok(()));
        throttle.failed_at(later, client(2), "anyone");
        assert_eq!(
            throttle.check_at(later, client(2), "anyone"),
            Ok(()),
            "a count that ran out starts again from one"
        );
    }

    #[test]
    fn delays_stop_at_the_window() {
        let throttle = Throttle::new(LoginLimits::default());
        assert_eq!(throttle.delay(0), Duration::from_secs(60));
        assert_eq!(throttle.delay(3), Duration::from_secs(480));
        assert_eq!(throttle.delay(40), Duration::from_secs(900));
    }

    #[test]
    fn the_summary_names_the_busiest_address() {
        let throttle = Throttle::new(LoginLimits::default());
        throttle.refused(client(2), Refusal::Wrong);
        throttle.refused(client(2), Refusal::Throttled);
        throttle.refused(client(3), Refusal::Busy);
        let summary = throttle
            .summary
            .lock()
            .map(|s| s.line(s.since))
            .unwrap_or_default();
        assert_eq!(
            summary,
            "accounts: 3 refused logins in the last 0 s (1 wrong, 1 throttled, 1 busy) from 2 \
             addresses, most from 127.0.0.2 (2)"
        );
    }
}
