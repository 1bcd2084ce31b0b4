//! Idempotency keys (docs/contract.md#idempotency-keys): a POST that carries
//! `Idempotency-Key` is performed once per key and credentials; a repeat answers the first
//! answer again, marked `Idempotent-Replayed: true`, and a repeat with another body (or to
//! another resource) is 422.
//!
//! The keys live in the table `plover_idempotency`, made at first use (as the rate limits'
//! table is): one row per credentials and key, written in the same transaction as the create
//! it stands for, so that a create that fails leaves no key behind and may be sent again.
//! Concurrent repeats wait for the first: on PostgreSQL the insert of the same key waits on
//! the unique index until the first transaction ends; on SQLite the writes of a database take
//! turns. Keys expire after the API's [`RestApi::idempotency_ttl`](super::RestApi::idempotency_ttl):
//! an expired key is ignored, and taken over by the next request that sends it.

use std::net::IpAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix_web::http::StatusCode;
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use diesel::RunQueryDsl;

use super::request::{ApiRequest, Content, Reply};
use crate::auth::AuthUser;
use crate::db::by_engine;
use crate::db::{Conn, LazyConn};
use crate::error::Error;
use crate::http::digest::sha256_hex;
use crate::query::MAX_IDEMPOTENCY_KEY_CHARS;

/// The request header that carries the key.
pub(crate) const HEADER: &str = "Idempotency-Key";

/// The response header that marks an answer given again.
pub(crate) const REPLAYED: &str = "idempotent-replayed";

/// How long a key is kept by default: a day.
pub const DEFAULT_IDEMPOTENCY_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// The most expired keys of one client that a request removes (the next requests remove
/// the rest).
const SWEEP: i64 = 100;

/// The idempotency key of one create, or none: [`Once::write`] runs the write plainly then.
#[derive(Debug, Default)]
pub(crate) struct Once(Option<Key>);

/// A key, and what it is stored with.
#[derive(Debug)]
struct Key {
    /// The SHA-256 of the credentials the key belongs to (never the credentials).
    scope: String,
    /// The key as sent.
    key: String,
    /// The resource's list path.
    resource: String,
    /// The SHA-256 of the body as sent.
    request: String,
    /// The creation time, in milliseconds since the epoch, before which a key has expired.
    cutoff: i64,
}

/// The write of a create, run once in its transaction ([`Once::write`]).
type CreateWrite<'a> = dyn FnOnce(&mut Conn<'_>) -> Result<Reply, Error> + 'a;

impl Once {
    /// The key of a POST, belonging to `user` if the request authenticated as one, else to
    /// the API key its authentication checked (`api_key` is asked only when the header is
    /// present), else to its client's address; kept `ttl`. None without the header; 400 for
    /// an empty key, one over [`MAX_IDEMPOTENCY_KEY_CHARS`] characters, or one that is not visible ASCII.
    pub(crate) fn of(
        req: &ApiRequest,
        user: Option<&AuthUser>,
        api_key: &dyn Fn() -> Option<String>,
        ttl: Duration,
    ) -> Result<Once, Error> {
        let mut values = req.headers.get_all(HEADER);
        let Some(value) = values.next() else {
            return Ok(Once(None));
        };
        let bad = |message: &str| Error::BadHeader {
            header: HEADER,
            message: message.to_owned(),
        };
        if values.next().is_some() {
            return Err(bad("send one key"));
        }
        let key = value
            .to_str()
            .map_err(|_| bad("a key is visible ASCII characters"))?
            .trim();
        if key.is_empty() {
            return Err(bad("the key is empty"));
        }
        if key.len() > MAX_IDEMPOTENCY_KEY_CHARS {
            return Err(bad(&format!(
                "a key has at most {MAX_IDEMPOTENCY_KEY_CHARS} characters"
            )));
        }
        if key.bytes().any(|b| !b.is_ascii_graphic() && b != b' ') {
            return Err(bad("a key is visible ASCII characters"));
        }
        let owner = match (user, api_key()) {
            // The name too: a user made on an id that a deleted one had (a SQLite table
            // made without AUTOINCREMENT gives ids again) never inherits its keys.
            (Some(user), _) => format!("user:{}:{}", user.id, user.username),
            (None, Some(api_key)) => format!("api-key:{api_key}"),
            (None, None) => format!("address:{}", address(req.client)),
        };
        let ttl = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
        Ok(Once(Some(Key {
            scope: sha256_hex(owner.as_bytes()),
            key: key.to_owned(),
            resource: req.list_path.to_string(),
            request: sha256_hex(body_of(&req.body)),
            cutoff: now_millis().saturating_sub(ttl),
        })))
    }

    /// The stored answer of this key, read before any work: a repeat of a create that was
    /// made answers it at once (`save_object` hooks and validation do not run again); a key
    /// used for another request is 422. None without a key, or when the key is new (or
    /// expired); then [`Once::write`] claims it. Makes the table when it is missing.
    pub(crate) fn replay(&self, db: &mut LazyConn<'_>) -> Result<Option<Reply>, Error> {
        let Some(key) = &self.0 else {
            return Ok(None);
        };
        match key.stored(&mut db.conn()?) {
            Err(e) if e.is_missing_table() => {
                // The first key of this database (another process may be making the table at
                // the same moment: the write's transaction finds it all the same).
                let _ = db.conn()?.batch_execute(CREATE);
                Ok(None)
            }
            stored => stored,
        }
    }

    /// Runs the create `write` in one transaction ([`LazyConn::write`]) with the key: first
    /// claimed (waiting for a concurrent request with the same key to end; if that one made the
    /// create, its answer is returned instead, and `write` does not run), then `write`'s answer
    /// stored with it. An error of `write` rolls back the key with the rest.
    pub(crate) fn write(
        &self,
        db: &mut LazyConn<'_>,
        write: impl FnOnce(&mut Conn<'_>) -> Result<Reply, Error>,
    ) -> Result<Reply, Error> {
        self.write_dyn(db, Box::new(write))
    }

    /// [`Once::write`] of a `write` whose type is erased: compiled once, not once per caller.
    fn write_dyn(
        &self,
        db: &mut LazyConn<'_>,
        write: Box<CreateWrite<'_>>,
    ) -> Result<Reply, Error> {
        let Some(key) = &self.0 else {
            return db.write(write);
        };
        db.write(|conn| {
            key.sweep(conn)?;
            if !key.claim(conn)? {
                // A concurrent request with this key made its create first.
                return key
                    .stored(conn)?
                    .ok_or_else(|| Error::Internal("an idempotency key without its row".into()));
            }
            let reply = write(conn)?;
            key.keep(conn, &reply)?;
            Ok(reply)
        })
    }
}

/// The address a key of an anonymous client belongs to: the whole address (an IPv4 address
/// mapped into IPv6 as the IPv4 one), `unknown` where the peer is unknown.
fn address(client: Option<IpAddr>) -> String {
    match client {
        Some(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => v6.to_string(),
        },
        Some(v4) => v4.to_string(),
        None => "unknown".to_owned(),
    }
}

/// The body a create reads, as sent: the raw bytes, or the form field `data` (the other
/// fields of a form are credentials, not the request).
fn body_of(body: &Content) -> &[u8] {
    match body {
        Content::Raw(bytes) => bytes,
        Content::Form(pairs) => pairs
            .iter()
            .find(|(k, _)| k == "data")
            .map_or(&[][..], |(_, v)| v.as_bytes()),
        Content::Invalid(message) => message.as_bytes(),
    }
}

fn now_millis() -> i64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
}

/// The table of the keys, made at first use. `status` is 0 while the create of a claimed
/// key runs (a row no other transaction sees); the index serves the removal of a client's
/// expired keys.
const CREATE: &str = "CREATE TABLE IF NOT EXISTS plover_idempotency (\
     scope TEXT NOT NULL, idem_key TEXT NOT NULL, resource TEXT NOT NULL, \
     request_hash TEXT NOT NULL, status INTEGER NOT NULL, location TEXT, body TEXT NOT NULL, \
     created BIGINT NOT NULL, PRIMARY KEY (scope, idem_key)); \
     CREATE INDEX IF NOT EXISTS plover_idempotency_scope_created \
     ON plover_idempotency (scope, created)";

/// One stored key.
#[derive(diesel::QueryableByName)]
struct Stored {
    #[diesel(sql_type = Text)]
    resource: String,
    #[diesel(sql_type = Text)]
    request_hash: String,
    #[diesel(sql_type = Integer)]
    status: i32,
    #[diesel(sql_type = Nullable<Text>)]
    location: Option<String>,
    #[diesel(sql_type = Text)]
    body: String,
}

impl Key {
    /// The live row of this key, as a replay of its answer; 422 when it was stored for another
    /// request.
    fn stored(&self, conn: &mut Conn<'_>) -> Result<Option<Reply>, Error> {
        let rows: Vec<Stored> = by_engine!(
            load,
            conn,
            "SELECT resource, request_hash, status, location, body FROM plover_idempotency \
             WHERE scope = ? AND idem_key = ? AND created >= ?",
            "SELECT resource, request_hash, status, location, body FROM plover_idempotency \
             WHERE scope = $1 AND idem_key = $2 AND created >= $3",
            |q| q
                .bind::<Text, _>(&self.scope)
                .bind::<Text, _>(&self.key)
                .bind::<BigInt, _>(self.cutoff)
        )?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(None);
        };
        if row.resource != self.resource || row.request_hash != self.request {
            return Err(Error::IdempotencyKeyReused);
        }
        let status = u16::try_from(row.status)
            .ok()
            .and_then(|s| StatusCode::from_u16(s).ok())
            .ok_or_else(|| Error::Internal(format!("stored status {}", row.status)))?;
        Ok(Some(Reply {
            status,
            body: row.body.into_bytes(),
            location: row.location,
            etag: None,
            replayed: true,
        }))
    }

    /// Removes up to [`SWEEP`] expired keys of this key's client (on PostgreSQL, those no
    /// other transaction holds: the removal never waits).
    fn sweep(&self, conn: &mut Conn<'_>) -> Result<(), Error> {
        let scope = &self.scope;
        by_engine!(
            execute,
            conn,
            "DELETE FROM plover_idempotency WHERE scope = ? AND idem_key IN (\
             SELECT idem_key FROM plover_idempotency WHERE scope = ? AND created < ? LIMIT ?)",
            "DELETE FROM plover_idempotency WHERE scope = $1 AND idem_key IN (\
             SELECT idem_key FROM plover_idempotency WHERE scope = $2 AND created < $3 \
             LIMIT $4 FOR UPDATE SKIP LOCKED)",
            |q| q
                .bind::<Text, _>(scope)
                .bind::<Text, _>(scope)
                .bind::<BigInt, _>(self.cutoff)
                .bind::<BigInt, _>(SWEEP)
        )?;
        Ok(())
    }

    /// Claims the key in the write's transaction: true when this request inserted it (or took
    /// over an expired row), false when a live row holds it. On PostgreSQL the insert waits
    /// while another transaction holds the same key, and claims it if that one rolled back.
    fn claim(&self, conn: &mut Conn<'_>) -> Result<bool, Error> {
        let claimed = by_engine!(
            execute,
            conn,
            "INSERT INTO plover_idempotency \
             (scope, idem_key, resource, request_hash, status, location, body, created) \
             VALUES (?, ?, ?, ?, 0, NULL, '', ?) \
             ON CONFLICT (scope, idem_key) DO UPDATE SET resource = excluded.resource, \
             request_hash = excluded.request_hash, status = 0, location = NULL, body = '', \
             created = excluded.created WHERE plover_idempotency.created < ?",
            "INSERT INTO plover_idempotency \
             (scope, idem_key, resource, request_hash, status, location, body, created) \
             VALUES ($1, $2, $3, $4, 0, NULL, '', $5) \
             ON CONFLICT (scope, idem_key) DO UPDATE SET resource = excluded.resource, \
             request_hash = excluded.request_hash, status = 0, location = NULL, body = '', \
             created = excluded.created WHERE plover_idempotency.created < $6",
            |q| q
                .bind::<Text, _>(&self.scope)
                .bind::<Text, _>(&self.key)
                .bind::<Text, _>(&self.resource)
                .bind::<Text, _>(&self.request)
                .bind::<BigInt, _>(now_millis())
                .bind::<BigInt, _>(self.cutoff)
        )?;
        Ok(claimed > 0)
    }

    /// Stores the answer of the create with its claimed key.
    fn keep(&self, conn: &mut Conn<'_>, reply: &Reply) -> Result<(), Error> {
        let body = String::from_utf8_lossy(&reply.body);
        by_engine!(
            execute,
            conn,
            "UPDATE plover_idempotency SET status = ?, location = ?, body = ? \
             WHERE scope = ? AND idem_key = ?",
            "UPDATE plover_idempotency SET status = $1, location = $2, body = $3 \
             WHERE scope = $4 AND idem_key = $5",
            |q| q
                .bind::<Integer, _>(i32::from(reply.status.as_u16()))
                .bind::<Nullable<Text>, _>(reply.location.as_deref())
                .bind::<Text, _>(&*body)
                .bind::<Text, _>(&self.scope)
                .bind::<Text, _>(&self.key)
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_anonymous_key_belongs_to_the_whole_address() {
        assert_eq!(address("127.0.0.2".parse().ok()), "127.0.0.2");
        assert_eq!(address("::ffff:10.0.0.1".parse().ok()), "10.0.0.1");
        assert_ne!(
            address("2001:db8::1".parse().ok()),
            address("2001:db8::2".parse().ok()),
            "two hosts of one /64 are two clients here"
        );
        assert_eq!(address(None), "unknown");
    }
}
