//! The replicas' pools, their health check, and the memory of clients' positions (PostgreSQL).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use diesel::r2d2::{Pool, PooledConnection};
use diesel::sql_types::{BigInt, Nullable};
use diesel::{Connection, PgConnection, RunQueryDsl};
use parking_lot::Mutex;

use super::{Lsn, Reader, ServedBy};
use crate::db::pg_pool::{self, PgManager};
use crate::db::{Config, ConfigError, Engine};
use crate::error::Error;

/// How long a replica's pool waits for a connection before the read goes to the primary.
const CHECKOUT_WAIT: Duration = Duration::from_millis(500);

/// The most clients remembered at once.
pub(in crate::db) const MAX_CLIENTS: usize = 100_000;

/// One replica: its pool and what the last check found.
struct Replica {
    pool: Pool<PgManager>,
    url: String,
    /// Its replay position at the last check.
    replayed: AtomicU64,
    /// Whether the last check found it reachable, in recovery and within the lag bound.
    healthy: AtomicBool,
}

/// The replicas of a database, their health, and the clients' positions.
pub(in crate::db) struct Replicas {
    servers: Vec<Replica>,
    primary_url: String,
    /// A replica lagging more is skipped.
    pub(crate) max_lag: Duration,
    /// Time between checks.
    pub(crate) every: Duration,
    /// The primary's sampled positions, oldest first, for [`Replicas::max_lag`] and a margin.
    history: Mutex<VecDeque<(Instant, Lsn)>>,
    clients: Mutex<Clients>,
    /// The replica the next read starts looking at (round robin).
    next: AtomicUsize,
}

/// The positions clients saw.
#[derive(Default)]
struct Clients {
    seen: HashMap<u64, (Lsn, Instant)>,
    /// While the memory is full: until when identified clients read from the primary.
    full_until: Option<Instant>,
}

/// `url` with `connect_timeout` (seconds) unless it names one: a check or a checkout does not
/// hang on a replica that does not answer.
fn with_connect_timeout(url: &str) -> String {
    if url.contains("connect_timeout=") {
        return url.to_owned();
    }
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}connect_timeout=2")
}

impl Replicas {
    /// The replicas of `urls` (PostgreSQL URLs of the primary's streaming replicas), with pools
    /// of at most `max` connections whose statements run at most `statement_timeout` ms.
    pub(in crate::db) fn open(
        primary_url: &str,
        urls: &[String],
        max: u32,
        statement_timeout: u64,
        max_lag: Duration,
        every: Duration,
    ) -> Result<Arc<Replicas>, ConfigError> {
        let mut servers = Vec::new();
        for url in urls {
            let config = Config::from_url(url)?;
            if config.engine != Engine::Postgres {
                return Err(ConfigError(format!(
                    "a replica must be a PostgreSQL URL, not '{}'",
                    config.name
                )));
            }
            let url = with_connect_timeout(&config.name);
            let pool = pg_pool::pool(url.clone(), max, CHECKOUT_WAIT, statement_timeout);
            servers.push(Replica {
                pool,
                url,
                replayed: AtomicU64::new(0),
                healthy: AtomicBool::new(false),
            });
        }
        if every.is_zero() || max_lag.is_zero() {
            return Err(ConfigError(
                "options 'replica_max_lag' and 'replica_check_every' must be above 0".into(),
            ));
        }
        Ok(Arc::new(Replicas {
            servers,
            primary_url: with_connect_timeout(primary_url),
            max_lag,
            every,
            history: Mutex::new(VecDeque::new()),
            clients: Mutex::new(Clients::default()),
            next: AtomicUsize::new(0),
        }))
    }

    /// Starts the health check: a thread that checks every [`Replicas::every`] until the
    /// replicas are dropped. The replicas are skipped until its first check.
    pub(in crate::db) fn watch(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let spawned = std::thread::Builder::new()
            .name("plover-replicas".into())
            .spawn(move || check_loop(&weak));
        if let Err(e) = spawned {
            log::error!(
                "the replicas' health check did not start (reads stay on the primary): {e}"
            );
        }
    }

    /// The position a reader needs: what its client saw and what its token names. `MAX` for a
    /// reader that only the primary serves, and while the memory of clients is full (an
    /// identified client then reads from the primary).
    fn needed(&self, reader: &Reader) -> Lsn {
        if reader.primary {
            return Lsn::MAX;
        }
        let token = reader.token.unwrap_or(0);
        let Some(client) = reader.client else {
            return token;
        };
        let mut clients = self.clients.lock();
        if let Some(until) = clients.full_until {
            if Instant::now() < until {
                return Lsn::MAX;
            }
            clients.full_until = None;
        }
        let seen = match clients.seen.get(&client) {
            Some((lsn, at)) if at.elapsed() < self.memory() => *lsn,
            _ => 0,
        };
        seen.max(token)
    }

    /// How long a client's position is kept: past it, every replica still admitted has
    /// replayed it (its lag is below [`Replicas::max_lag`], checked every
    /// [`Replicas::every`]), so it is a bound the replicas keep anyway.
    fn memory(&self) -> Duration {
        self.max_lag * 2 + self.every * 4
    }

    /// Remembers that `client` saw position `lsn` (it wrote it, or read a state that had it).
    pub(in crate::db) fn remember(&self, client: u64, lsn: Lsn) {
        let now = Instant::now();
        let memory = self.memory();
        let mut clients = self.clients.lock();
        if clients.seen.len() >= MAX_CLIENTS && !clients.seen.contains_key(&client) {
            clients
                .seen
                .retain(|_, (_, at)| now.duration_since(*at) < memory);
            if clients.seen.len() >= MAX_CLIENTS {
                log::warn!("the memory of clients' positions is full: identified clients read from the primary for a while");
                clients.full_until = Some(now + memory);
                return;
            }
        }
        let entry = clients.seen.entry(client).or_insert((lsn, now));
        if lsn >= entry.0 || now.duration_since(entry.1) >= memory {
            *entry = (lsn, now);
        }
    }

    /// A connection to a well replica that has replayed what `reader` needs, with the
    /// replica's index; `None` when there is none (the read goes to the primary). A replica
    /// whose pool gives no connection is skipped until the next check finds it well.
    pub(in crate::db) fn checkout(
        &self,
        reader: &Reader,
    ) -> Option<(usize, PooledConnection<PgManager>)> {
        let needed = self.needed(reader);
        let n = self.servers.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        for i in (0..n).map(|k| (start + k) % n) {
            let replica = &self.servers[i];
            if !replica.healthy.load(Ordering::Acquire)
                || replica.replayed.load(Ordering::Acquire) < needed
            {
                continue;
            }
            match replica.pool.get() {
                Ok(conn) => return Some((i, conn)),
                Err(e) => {
                    log::warn!("replica {} gave no connection, skipped: {e}", i + 1);
                    self.failed(i);
                }
            }
        }
        None
    }

    /// Skips replica `i` until a check finds it well again.
    pub(in crate::db) fn failed(&self, i: usize) {
        if let Some(replica) = self.servers.get(i) {
            replica.healthy.store(false, Ordering::Release);
        }
    }

    /// Keeps a sample of the primary's position, and forgets those no longer needed.
    fn sample_primary(&self, now: Instant, lsn: Lsn) {
        let mut history = self.history.lock();
        history.push_back((now, lsn));
        let keep = self.max_lag + self.every * 2;
        while history
            .front()
            .is_some_and(|(at, _)| now.duration_since(*at) > keep)
        {
            history.pop_front();
        }
    }

    /// How far a replica that replayed up to `replayed` lags: the time since the primary's
    /// latest sampled position that it has replayed; `None` when it replayed none of the
    /// samples kept (it lags more than they cover, or nothing is known yet).
    fn lag(&self, now: Instant, replayed: Lsn) -> Option<Duration> {
        let history = self.history.lock();
        let (latest_at, latest) = *history.back()?;
        if replayed >= latest {
            return Some(now.saturating_duration_since(latest_at));
        }
        // The replica has all that the primary had at the sample before the first one past
        // its position (the primary moved past it some time after).
        let past = history.iter().position(|(_, lsn)| *lsn > replayed)?;
        let (had_at, _) = history.get(past.checked_sub(1)?)?;
        Some(now.saturating_duration_since(*had_at))
    }

    /// One health check: the primary's position, then each replica's.
    fn check(&self, conns: &mut Conns) {
        let now = Instant::now();
        match position(&mut conns.primary, &self.primary_url, PRIMARY_LSN) {
            Some(lsn) => self.sample_primary(now, lsn),
            None => {
                log::warn!("the replicas' health check could not read the primary's WAL position")
            }
        }
        for (i, replica) in self.servers.iter().enumerate() {
            let replayed = position(&mut conns.replicas[i], &replica.url, REPLAY_LSN);
            let lag = replayed.and_then(|lsn| self.lag(Instant::now(), lsn));
            let well = lag.is_some_and(|lag| lag <= self.max_lag);
            if let Some(lsn) = replayed {
                replica.replayed.fetch_max(lsn, Ordering::AcqRel);
            }
            let was = replica.healthy.swap(well, Ordering::AcqRel);
            if was != well {
                match lag {
                    _ if well => log::info!("replica {} is well again: reads may use it", i + 1),
                    Some(lag) => log::warn!("replica {} lags {lag:?}: skipped", i + 1),
                    None if replayed.is_some() => {
                        log::warn!("replica {} lags past the kept samples: skipped", i + 1)
                    }
                    None => log::warn!("replica {} cannot be reached: skipped", i + 1),
                }
            }
        }
    }
}

/// The primary's position, in bytes.
const PRIMARY_LSN: &str = "(pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint";
/// A replica's replay position, in bytes (NULL on a server that is not in recovery).
const REPLAY_LSN: &str = "(pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint";

/// The health check's own connections (not the pools').
struct Conns {
    primary: Option<PgConnection>,
    replicas: Vec<Option<PgConnection>>,
}

/// Reads `sql` (a position) on `conn`, connecting to `url` first if needed; `None` when the
/// server cannot be reached or gives no position (the connection is then dropped).
fn position(conn: &mut Option<PgConnection>, url: &str, sql: &str) -> Option<Lsn> {
    if conn.is_none() {
        *conn = PgConnection::establish(url).ok();
    }
    let c = conn.as_mut()?;
    let read =
        diesel::select(diesel::dsl::sql::<Nullable<BigInt>>(sql)).get_result::<Option<i64>>(c);
    match read {
        Ok(Some(lsn)) => u64::try_from(lsn).ok(),
        Ok(None) => None,
        Err(_) => {
            *conn = None;
            None
        }
    }
}

/// The health check's thread: checks until the replicas are dropped.
fn check_loop(replicas: &Weak<Replicas>) {
    let mut conns = None;
    loop {
        let Some(me) = replicas.upgrade() else { return };
        let conns = conns.get_or_insert_with(|| Conns {
            primary: None,
            replicas: me.servers.iter().map(|_| None).collect(),
        });
        me.check(conns);
        let every = me.every;
        drop(me);
        std::thread::sleep(every);
    }
}

/// The position a connection's server is at now: the primary's current position, or a
/// replica's replay position.
pub(in crate::db) fn position_of(conn: &mut PgConnection, served: ServedBy) -> Result<Lsn, Error> {
    let sql = match served {
        ServedBy::Primary => PRIMARY_LSN,
        ServedBy::Replica(_) => REPLAY_LSN,
    };
    let lsn = diesel::select(diesel::dsl::sql::<Nullable<BigInt>>(sql))
        .get_result::<Option<i64>>(conn)?;
    lsn.and_then(|l| u64::try_from(l).ok())
        .ok_or_else(|| Error::Internal("the server gave no WAL position".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replicas() -> Arc<Replicas> {
        Replicas::open(
            "postgres://127.0.0.1:1/x",
            &[],
            1,
            0,
            Duration::from_secs(5),
            Duration::from_millis(500),
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn lag_is_the_time_since_the_primary_was_where_the_replica_is() {
        let r = replicas();
        let t0 = Instant::now();
        assert_eq!(r.lag(t0, 100), None, "nothing known yet");
        let at = |s: u64| t0 + Duration::from_secs(s);
        r.sample_primary(at(0), 100);
        r.sample_primary(at(1), 100);
        r.sample_primary(at(2), 200);
        r.sample_primary(at(3), 300);
        // Caught up: an idle primary does not make it lag.
        assert_eq!(r.lag(at(3), 300), Some(Duration::ZERO));
        assert_eq!(r.lag(at(4), 300), Some(Duration::from_secs(1)));
        // At 250: it has what the primary had at 2 s, not what it had at 3 s.
        assert_eq!(r.lag(at(4), 250), Some(Duration::from_secs(2)));
        assert_eq!(r.lag(at(4), 150), Some(Duration::from_secs(3)));
        assert_eq!(r.lag(at(4), 50), None, "behind every sample kept");
    }

    #[test]
    fn clients_need_what_they_saw_and_what_their_token_names() {
        let r = replicas();
        let anonymous = Reader::new(None, Some(7));
        assert_eq!(r.needed(&anonymous), 7);
        r.remember(1, 50);
        r.remember(1, 40);
        assert_eq!(r.needed(&Reader::new(Some(1), None)), 50, "never backwards");
        assert_eq!(r.needed(&Reader::new(Some(1), Some(60))), 60);
        assert_eq!(r.needed(&Reader::new(Some(2), None)), 0);
        let live = Reader::new(Some(2), None).on_primary();
        assert_eq!(r.needed(&live), Lsn::MAX, "no replica serves it");
    }
}
