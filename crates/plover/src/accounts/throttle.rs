//! Throttling of failed logins per client address and per username from one address, and the
//! summary log of refused attempts (docs/security.md, "A flood of wrong passwords").

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::failures::{self, Count};
use crate::db::{Engine, LazyConn};
use crate::server::ClientKey;

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

/// The most counts kept in the process; beyond it (after dropping the expired ones) new
/// addresses are not counted, and stay bounded by their share of the password checks alone.
const CAPACITY: usize = 100_000;

/// The longest username kept in a count (longer ones are cut: they are counted all the same).
const MAX_NAME: usize = 150;

/// Where the counts are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Store {
    /// In the database on PostgreSQL (several processes usually serve one), in the process on
    /// SQLite.
    Auto,
    /// In the process.
    Memory,
    /// In the database's table `plover_login_failure`, shared by every process serving it.
    Database,
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

/// The failure counts and the summary of refusals of one `Auth` (or one API-key
/// authentication, whose keys stand for usernames).
#[derive(Debug)]
pub(crate) struct Throttle {
    limits: LoginLimits,
    /// Names the counts of this throttle among those of the database's table.
    scope: String,
    /// Whether the names counted are usernames, counted as a login looks them up; else (API
    /// keys) as given.
    usernames: bool,
    store: Store,
    /// The counts kept in the process, by bucket (and those of the database when it fails).
    counts: Mutex<HashMap<String, Count>>,
    shared: failures::Table,
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

/// The time now, in milliseconds since the Unix epoch.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Throttle {
    /// Counts of failed logins under `scope` (the user table's name, say), kept in `store`.
    pub(crate) fn new(limits: LoginLimits, scope: &str, store: Store) -> Throttle {
        Throttle {
            limits,
            scope: scope.to_owned(),
            usernames: true,
            store,
            counts: Mutex::new(HashMap::new()),
            shared: failures::Table::default(),
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

    /// This throttle counting API keys (as given, case and all) instead of usernames.
    pub(crate) fn of_keys(mut self) -> Throttle {
        self.usernames = false;
        self
    }

    /// The buckets an attempt for `username` from `client` counts in: the address's, and the
    /// username's from that address (`true`). A username is counted as it is looked up (NFKC,
    /// trimmed), whatever its case: `ａlice`, `𝐚lice` and ` Alice` are `alice`.
    fn buckets(&self, client: ClientKey, username: &str) -> [(String, bool); 2] {
        let mut name = if self.usernames {
            super::normalize_username(username).to_lowercase()
        } else {
            username.to_owned()
        };
        if name.len() > MAX_NAME {
            let mut end = MAX_NAME;
            while !name.is_char_boundary(end) {
                end -= 1;
            }
            name.truncate(end);
        }
        let scope = &self.scope;
        [
            (format!("{scope}|a|{client}"), false),
            (format!("{scope}|u|{client}|{name}"), true),
        ]
    }

    fn limit(&self, per_username: bool) -> u32 {
        if per_username {
            self.limits.per_username
        } else {
            self.limits.per_address
        }
    }

    fn window_ms(&self) -> u64 {
        u64::try_from(self.limits.window.as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether this throttle's counts live in `db`'s database.
    fn in_database(&self, db: &LazyConn<'_>) -> bool {
        match self.store {
            Store::Auto => db.engine() == Engine::Postgres,
            Store::Memory => false,
            Store::Database => true,
        }
    }

    /// `Err(wait)` when `client` (or `username` from it) is throttled now: the time until it
    /// may try again. `Ok(true)` when failures of `username` from `client` are counted (a
    /// success must end the count: [`Throttle::succeeded`]).
    pub(crate) fn check(
        &self,
        db: &mut LazyConn<'_>,
        client: ClientKey,
        username: &str,
    ) -> Result<bool, Duration> {
        let buckets = self.buckets(client, username);
        let keys = [buckets[0].0.as_str(), buckets[1].0.as_str()];
        let counts = match self.in_database(db) {
            true => self.shared.read(db, keys),
            false => None,
        }
        .unwrap_or_else(|| self.read_memory(keys));
        self.judge(now_ms(), counts)
    }

    /// The wait that the counts `[address, username]` impose at `now`.
    fn judge(&self, now: u64, counts: [Option<Count>; 2]) -> Result<bool, Duration> {
        let mut wait = Duration::ZERO;
        for (count, per_username) in counts.iter().zip([false, true]) {
            let Some(count) = count else {
                continue;
            };
            let limit = self.limit(per_username);
            let expires = count.last.saturating_add(self.window_ms());
            if count.failures < limit || now >= expires {
                continue;
            }
            let delay = self.delay(count.failures - limit);
            let delay = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
            let until = count.last.saturating_add(delay);
            wait = wait.max(Duration::from_millis(until.saturating_sub(now)));
        }
        if wait.is_zero() {
            Ok(counts[1].is_some())
        } else {
            Err(wait)
        }
    }

    fn read_memory(&self, keys: [&str; 2]) -> [Option<Count>; 2] {
        let counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        keys.map(|key| counts.get(key).copied())
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
    pub(crate) fn failed(&self, db: &mut LazyConn<'_>, client: ClientKey, username: &str) {
        let buckets = self.buckets(client, username);
        let now = now_ms();
        if self.in_database(db) {
            let window = self.window_ms();
            let counted = buckets
                .iter()
                .all(|(key, _)| self.shared.add(db, key, now, window));
            // A refused attempt holds no connection past its answer.
            db.release();
            if counted {
                return;
            }
        }
        self.failed_in_memory(now, &buckets);
    }

    fn failed_in_memory(&self, now: u64, buckets: &[(String, bool); 2]) {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let window = self.window_ms();
        for (key, _) in buckets {
            if counts.len() >= CAPACITY && !counts.contains_key(key) {
                counts.retain(|_, c| now < c.last.saturating_add(window));
                if counts.len() >= CAPACITY {
                    continue;
                }
            }
            let count = counts.entry(key.clone()).or_insert(Count {
                failures: 0,
                last: now,
            });
            if now >= count.last.saturating_add(window) {
                count.failures = 0;
            }
            count.failures = count.failures.saturating_add(1);
            count.last = now;
        }
    }

    /// Ends the count of `username` from `client` after a successful login.
    pub(crate) fn succeeded(&self, db: &mut LazyConn<'_>, client: ClientKey, username: &str) {
        let [_, (key, _)] = self.buckets(client, username);
        if self.in_database(db) {
            self.shared.remove(db, &key);
            db.release();
        }
        self.counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key);
    }

    /// Adds a refused attempt to the summary, and logs the summary once its interval is over.
    pub(crate) fn refused(&self, client: ClientKey, why: Refusal) {
        let mut summary = self.summary.lock().unwrap_or_else(PoisonError::into_inner);
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

    fn throttle() -> Throttle {
        Throttle::new(LoginLimits::default(), "t", Store::Memory)
    }

    /// The throttle's counts in the process, at a given time.
    impl Throttle {
        fn check_at(&self, now: u64, client: ClientKey, name: &str) -> Result<(), Duration> {
            let [(a, _), (u, _)] = self.buckets(client, name);
            self.judge(now, self.read_memory([&a, &u])).map(|_| ())
        }

        fn failed_at(&self, now: u64, client: ClientKey, name: &str) {
            self.failed_in_memory(now, &self.buckets(client, name));
        }
    }

    #[test]
    fn the_sixth_attempt_for_a_username_waits_with_growing_delays() {
        let throttle = throttle();
        let at = |s: u64| 1_000_000 + s * 1000;
        for i in 0..5 {
            assert_eq!(throttle.check_at(at(i), client(2), "alice"), Ok(()));
            throttle.failed_at(at(i), client(2), "alice");
        }
        for spelling in [
            "Alice",
            "\u{ff41}lice",
            "\u{1d41a}lice",
            "\u{aa}lice",
            " alice ",
        ] {
            assert_eq!(
                throttle.check_at(at(5), client(2), spelling),
                Err(Duration::from_secs(59)),
                "the 6th attempt, whatever the spelling ({spelling:?}), waits a minute after \
                 the 5th failure"
            );
        }
        assert_eq!(throttle.check_at(at(5), client(3), "alice"), Ok(()));
        assert_eq!(throttle.check_at(at(5), client(2), "bob"), Ok(()));
        assert_eq!(throttle.check_at(at(64), client(2), "alice"), Ok(()));
        throttle.failed_at(at(64), client(2), "alice");
        assert_eq!(
            throttle.check_at(at(65), client(2), "alice"),
            Err(Duration::from_secs(119)),
            "the delay doubles"
        );
        let [_, (key, _)] = throttle.buckets(client(2), "alice");
        throttle
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key);
        assert_eq!(throttle.check_at(at(65), client(2), "alice"), Ok(()));
    }

    #[test]
    fn an_address_is_throttled_whatever_the_usernames_and_counts_expire() {
        let throttle = throttle();
        let t0 = 1_000_000;
        for i in 0..50 {
            throttle.failed_at(t0, client(2), &format!("user{i}"));
        }
        assert!(throttle.check_at(t0, client(2), "anyone").is_err());
        assert_eq!(throttle.check_at(t0, client(3), "anyone"), Ok(()));
        let later = t0 + 15 * 60 * 1000;
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
        let throttle = throttle();
        assert_eq!(throttle.delay(0), Duration::from_secs(60));
        assert_eq!(throttle.delay(3), Duration::from_secs(480));
        assert_eq!(throttle.delay(40), Duration::from_secs(900));
    }

    #[test]
    fn the_summary_names_the_busiest_address() {
        let throttle = throttle();
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
