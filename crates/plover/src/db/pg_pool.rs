//! PostgreSQL's pooled connections: the session settings of a new connection, and when a
//! connection is tested before it is handed out.
//!
//! A server restart leaves dead connections in the pool. Testing every connection at checkout
//! (a `SELECT 1` round trip) would find them, at the price of one more round trip per request.
//! Instead, as HikariCP does, a connection is tested only when it has sat in the pool for
//! [`TEST_AFTER_IDLE`] or more; one that was in use a moment ago is known to be alive unless
//! its last unit of work lost it, and then it is not put back at all ([`PgPooled::lost`]).
//! A restart that falls inside that half second can cost a request a 503 (try again), as it
//! would had the server gone away during the request.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use diesel::r2d2::{ConnectionManager, CustomizeConnection, Error, ManageConnection};
use diesel::{Connection, PgConnection, RunQueryDsl};

/// How long a connection may sit in the pool before it is tested at checkout.
pub(super) const TEST_AFTER_IDLE: Duration = Duration::from_millis(500);

/// A pooled PostgreSQL connection, with what the pool needs to know about its last use.
pub(super) struct PgPooled {
    pub(super) conn: PgConnection,
    /// When it was last given back to the pool (or made).
    returned: Instant,
    /// Its last unit of work found the server gone: it is closed instead of being put back.
    pub(super) lost: bool,
    /// The server process that serves it (`pg_backend_pid()`), to cancel its statement.
    pub(super) backend: i32,
}

/// diesel's connection manager, with the test at checkout skipped for recently used connections.
pub(super) struct PgManager(pub(super) ConnectionManager<PgConnection>);

impl ManageConnection for PgManager {
    type Connection = PgPooled;
    type Error = Error;

    fn connect(&self) -> Result<PgPooled, Error> {
        let mut conn = self.0.connect()?;
        let backend = diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>(
            "pg_backend_pid()",
        ))
        .get_result(&mut conn)
        .map_err(Error::QueryError)?;
        Ok(PgPooled {
            conn,
            backend,
            returned: Instant::now(),
            lost: false,
        })
    }

    fn is_valid(&self, pooled: &mut PgPooled) -> Result<(), Error> {
        if pooled.returned.elapsed() < TEST_AFTER_IDLE {
            return Ok(());
        }
        self.0.is_valid(&mut pooled.conn)
    }

    /// Called as a connection goes back to the pool.
    fn has_broken(&self, pooled: &mut PgPooled) -> bool {
        pooled.returned = Instant::now();
        pooled.lost || self.0.has_broken(&mut pooled.conn)
    }
}

/// A pool of at most `max` connections to `url`, whose statements run at most
/// `statement_timeout` ms, waiting at most `wait` for a connection at checkout. No connection
/// is made here: the first checkout makes one.
pub(super) fn pool(
    url: String,
    max: u32,
    wait: Duration,
    statement_timeout: u64,
) -> diesel::r2d2::Pool<PgManager> {
    diesel::r2d2::Pool::builder()
        .max_size(max.max(1))
        .min_idle(Some(0))
        .connection_timeout(wait)
        // A server restart leaves dead connections in the pool: those idle for a while are
        // tested as they are checked out (the module's documentation).
        .test_on_check_out(true)
        .connection_customizer(Box::new(PgSession { statement_timeout }))
        .build_unchecked(PgManager(ConnectionManager::new(url)))
}

/// Settings of every new PostgreSQL connection.
#[derive(Debug)]
pub(super) struct PgSession {
    /// Milliseconds a statement may run (0: no limit).
    pub(super) statement_timeout: u64,
}

impl CustomizeConnection<PgPooled, Error> for PgSession {
    fn on_acquire(&self, pooled: &mut PgPooled) -> Result<(), Error> {
        use diesel::connection::SimpleConnection;
        pooled
            .conn
            .batch_execute(&format!(
                "SET statement_timeout = {}",
                self.statement_timeout
            ))
            .map_err(Error::QueryError)
    }
}

/// Cancels statements of pooled connections whose clients went away, over a connection of its
/// own (made when first needed, kept for the next time): the pool may have none to spare.
pub(super) struct Canceller {
    url: String,
    conn: Mutex<Option<PgConnection>>,
}

impl Canceller {
    pub(super) fn new(url: &str) -> Canceller {
        Canceller {
            url: url.to_owned(),
            conn: Mutex::new(None),
        }
    }

    /// The database's URL.
    pub(super) fn url(&self) -> &str {
        &self.url
    }

    /// Asks the server to cancel the statement that `backend` runs now (if any).
    pub(super) fn cancel(&self, backend: i32) {
        let mut slot = self
            .conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.is_none() {
            match PgConnection::establish(&self.url) {
                Ok(conn) => *slot = Some(conn),
                Err(e) => {
                    log::warn!("could not connect to cancel a statement: {e}");
                    return;
                }
            }
        }
        let Some(conn) = slot.as_mut() else { return };
        let cancelled = diesel::sql_query("SELECT pg_cancel_backend($1)")
            .bind::<diesel::sql_types::Integer, _>(backend)
            .execute(conn);
        if let Err(e) = cancelled {
            log::warn!("could not cancel a statement: {e}");
            *slot = None;
        }
    }
}
