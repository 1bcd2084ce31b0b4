//! Rate limits of a REST API or of one resource: fixed windows of requests per client, counted
//! in the process or in the database (so that several processes share them).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix_web::http::header::{HeaderName, HeaderValue};
use diesel::sql_types::{BigInt, Integer, Text};
use diesel::RunQueryDsl;

use crate::auth::AuthUser;
use crate::db::{Conn, LazyConn};
use crate::error::Error;
use crate::server::ClientKey;

/// A rate limit: at most `requests` per client in each window of time; over it a request is
/// answered 429 with `Retry-After` (the seconds until the window ends) and nothing else runs.
/// Every response of a limited API or resource carries `RateLimit-Limit`,
/// `RateLimit-Remaining` and `RateLimit-Reset` (seconds until the window ends).
///
/// Set it on a resource ([`Resource::rate_limit`](super::Resource::rate_limit)) or on the
/// whole API ([`RestApi::rate_limit`](super::RestApi::rate_limit): one budget per client for
/// every resource that sets none). Clients are told apart by address (the default: an IPv4
/// address, or the /64 of an IPv6 one), by the user they authenticated as
/// ([`RateLimit::by_user`]), or by their checked API key ([`RateLimit::by_api_key`]); requests
/// without one are counted by address.
///
/// The counts live in the process ([`RateLimit::new`]), or in the database
/// ([`RateLimit::in_database`]): a table `plover_rate_limit`, made at first use, that every
/// process serving the same database shares. The database store costs one write per request
/// (on SQLite, writes take turns: keep it for several processes that share one file).
///
/// ```
/// use std::time::Duration;
/// use plover::rest::RateLimit;
///
/// let per_client = RateLimit::new(100, Duration::from_secs(60));
/// let per_user_everywhere = RateLimit::per_minute(1_000).by_user().in_database();
/// # let _ = (per_client, per_user_everywhere);
/// ```
#[derive(Debug, Clone)]
pub struct RateLimit {
    requests: u32,
    window: u64,
    by: By,
    store: Store,
}

/// Who a count belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum By {
    Address,
    User,
    ApiKey,
}

#[derive(Debug, Clone)]
enum Store {
    /// Per bucket: the window it counts and the requests in it.
    Memory(Arc<Mutex<HashMap<String, (u64, u32)>>>),
    Database,
}

/// The most buckets counted in the process; past it (after dropping those of past windows),
/// new clients are not counted.
const CAPACITY: usize = 100_000;

/// Where a request stands in its window, for the response's headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RateState {
    limit: u32,
    remaining: u32,
    reset: u64,
}

impl RateState {
    /// `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`.
    pub(crate) fn headers(&self) -> [(HeaderName, HeaderValue); 3] {
        [
            (
                HeaderName::from_static("ratelimit-limit"),
                HeaderValue::from(self.limit),
            ),
            (
                HeaderName::from_static("ratelimit-remaining"),
                HeaderValue::from(self.remaining),
            ),
            (
                HeaderName::from_static("ratelimit-reset"),
                HeaderValue::from(self.reset),
            ),
        ]
    }
}

impl RateLimit {
    /// At most `requests` per client address in each `window` (at least a second), counted in
    /// this process.
    pub fn new(requests: u32, window: Duration) -> RateLimit {
        RateLimit {
            requests,
            window: window.as_secs().max(1),
            by: By::Address,
            store: Store::Memory(Arc::default()),
        }
    }

    /// At most `requests` per client a minute.
    pub fn per_minute(requests: u32) -> RateLimit {
        RateLimit::new(requests, Duration::from_secs(60))
    }

    /// Counts per authenticated user (anonymous requests per address).
    pub fn by_user(mut self) -> RateLimit {
        self.by = By::User;
        self
    }

    /// Counts per API key, for requests whose key the resource's authentication checked
    /// ([`ApiKeyAuthentication`](crate::auth::ApiKeyAuthentication) protecting the request's
    /// method); other requests per address. A key that nobody checked names no budget: a
    /// client could send a new one with each request.
    pub fn by_api_key(mut self) -> RateLimit {
        self.by = By::ApiKey;
        self
    }

    /// Whether the count is by API key.
    pub(crate) fn by_api_key_wanted(&self) -> bool {
        self.by == By::ApiKey
    }

    /// Keeps the counts in the database, shared by every process that serves it.
    pub fn in_database(mut self) -> RateLimit {
        self.store = Store::Database;
        self
    }

    /// Counts a request of `client` (authenticated as `user`, with the checked API key
    /// `api_key`) against the limit of `scope` (a resource's name, or `*` for the API's own
    /// limit): its state, or 429 once over.
    pub(crate) fn hit(
        &self,
        scope: &str,
        client: Option<IpAddr>,
        user: Option<&AuthUser>,
        api_key: Option<&str>,
        db: &mut LazyConn<'_>,
    ) -> Result<RateState, (Error, Option<RateState>)> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let window = now / self.window;
        let reset = (window + 1) * self.window - now;
        let who = match (self.by, user, api_key) {
            (By::User, Some(user), _) => format!("u:{}", user.id),
            (By::ApiKey, _, Some(key)) => format!("k:{key}"),
            _ => format!("a:{}", ClientKey::of(client)),
        };
        let bucket = format!("{scope}|{who}");
        let count = match &self.store {
            Store::Memory(counts) => count_in_memory(counts, bucket, window),
            Store::Database => count_in_database(db, &bucket, window).map_err(|e| (e, None))?,
        };
        let state = RateState {
            limit: self.requests,
            remaining: self.requests.saturating_sub(count),
            reset,
        };
        if count > self.requests {
            return Err((
                Error::TooManyRequests(Duration::from_secs(reset)),
                Some(state),
            ));
        }
        Ok(state)
    }
}

fn count_in_memory(
    counts: &Mutex<HashMap<String, (u64, u32)>>,
    bucket: String,
    window: u64,
) -> u32 {
    let mut counts = counts.lock().unwrap_or_else(PoisonError::into_inner);
    if counts.len() >= CAPACITY && !counts.contains_key(&bucket) {
        counts.retain(|_, (w, _)| *w == window);
        if counts.len() >= CAPACITY {
            return 0;
        }
    }
    let entry = counts.entry(bucket).or_insert((window, 0));
    if entry.0 != window {
        *entry = (window, 0);
    }
    entry.1 = entry.1.saturating_add(1);
    entry.1
}

/// The table of the counts, made at first use.
const CREATE: &str = "CREATE TABLE IF NOT EXISTS plover_rate_limit (\
     bucket TEXT PRIMARY KEY, win BIGINT NOT NULL, hits INTEGER NOT NULL)";

#[derive(diesel::QueryableByName)]
struct Hits {
    #[diesel(sql_type = Integer)]
    hits: i32,
}

/// Adds a request to `bucket`'s count of `window` (a new window starts at one), in one
/// statement that every process sharing the database runs on the same row.
fn count_in_database(db: &mut LazyConn<'_>, bucket: &str, window: u64) -> Result<u32, Error> {
    let window = i64::try_from(window).unwrap_or(i64::MAX);
    let upsert = |conn: &mut Conn<'_>| -> Result<i32, Error> {
        let hits: Vec<Hits> = match conn {
            Conn::Sqlite(c) => diesel::sql_query(UPSERT_SQLITE)
                .bind::<Text, _>(bucket)
                .bind::<BigInt, _>(window)
                .load(*c)?,
            #[cfg(feature = "postgres")]
            Conn::Pg(c) => diesel::sql_query(UPSERT_PG)
                .bind::<Text, _>(bucket)
                .bind::<BigInt, _>(window)
                .load(*c)?,
        };
        Ok(hits.first().map_or(1, |h| h.hits))
    };
    let hits = match db.write(upsert) {
        Ok(hits) => hits,
        // The first request of a database: the table is made (another process may be making it
        // at the same moment), and the count taken again.
        Err(e) if e.is_missing_table() => {
            let _ = db.write(|conn| conn.batch_execute(CREATE));
            db.write(upsert)?
        }
        Err(e) => return Err(e),
    };
    Ok(u32::try_from(hits).unwrap_or(0))
}

const UPSERT_SQLITE: &str = "INSERT INTO plover_rate_limit (bucket, win, hits) VALUES (?, ?, 1) \
     ON CONFLICT (bucket) DO UPDATE SET \
     hits = CASE WHEN plover_rate_limit.win = excluded.win THEN plover_rate_limit.hits + 1 ELSE 1 END, \
     win = excluded.win RETURNING hits";

#[cfg(feature = "postgres")]
const UPSERT_PG: &str = "INSERT INTO plover_rate_limit (bucket, win, hits) VALUES ($1, $2, 1) \
     ON CONFLICT (bucket) DO UPDATE SET \
     hits = CASE WHEN plover_rate_limit.win = excluded.win THEN plover_rate_limit.hits + 1 ELSE 1 END, \
     win = excluded.win RETURNING hits";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_counts_start_again_in_a_new_window() {
        let counts = Mutex::new(HashMap::new());
        assert_eq!(count_in_memory(&counts, "a".into(), 7), 1);
        assert_eq!(count_in_memory(&counts, "a".into(), 7), 2);
        assert_eq!(count_in_memory(&counts, "b".into(), 7), 1);
        assert_eq!(count_in_memory(&counts, "a".into(), 8), 1);
    }
}
