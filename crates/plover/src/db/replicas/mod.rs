//! Read replicas of a PostgreSQL database (docs/deployment.md#read-replicas): one pool per
//! streaming replica, a health check that measures each one's lag by WAL positions, and the
//! memory of what each client has written and read, so that its reads go only where they
//! see at least as much.
//!
//! **Positions.** Every position is a WAL position (an LSN) as a number of bytes: the
//! primary's `pg_current_wal_lsn()` after a write commits, a replica's
//! `pg_last_wal_replay_lsn()`. A read may go to a replica whose last sampled replay position is
//! at or past the position its client needs; the sample is older than the replica's real
//! position, so the replica has replayed at least that much.
//!
//! **Lag.** Every [`Replicas::every`] a thread of the process samples the primary's position
//! and each replica's replay position. A replica's lag is the time since the primary was at a
//! position the replica has replayed (zero when it has replayed the primary's latest sample):
//! an idle primary does not make a replica lag, unlike `now() - pg_last_xact_replay_timestamp()`.
//! A replica that lags more than [`Replicas::max_lag`], that cannot be reached or that is not
//! in recovery is skipped until a later check finds it well again.
//!
//! **Clients.** A client (its credentials, hashed: [`client_key`]) that wrote or read is
//! remembered with the position it saw, for a time after which every replica that is not
//! skipped has replayed it anyway ([`Replicas::remember`]); the memory holds at most
//! [`MAX_CLIENTS`]. When it is full, identified clients read from the primary until entries
//! expire. Across processes, the consistency token ([`CONSISTENCY_HEADER`]) carries a
//! position from one request to the next.

use std::hash::{BuildHasher, Hasher};

use crate::error::Error;

#[cfg(feature = "postgres")]
mod servers;
#[cfg(feature = "postgres")]
pub(in crate::db) use servers::{position_of, Replicas};

/// The header of the consistency token: a response to a write carries the WAL position of
/// the commit (`0/16B3748`), and a read that sends it back is served by the primary or by a
/// replica that has replayed that position.
pub const CONSISTENCY_HEADER: &str = "Plover-Consistency";

/// The header that names the server of a read (`primary`, `replica-1`, ...) where a database
/// has replicas.
pub const SERVED_BY_HEADER: &str = "Plover-Served-By";

/// A WAL position, in bytes.
pub(crate) type Lsn = u64;

/// Parses a WAL position as PostgreSQL writes it (`16/B374D848`: two hexadecimal numbers of
/// at most 8 digits).
pub(crate) fn parse_lsn(text: &str) -> Option<Lsn> {
    let (high, low) = text.trim().split_once('/')?;
    let part = |s: &str| {
        let ok = (1..=8).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit());
        ok.then(|| u32::from_str_radix(s, 16).ok()).flatten()
    };
    Some((u64::from(part(high)?) << 32) | u64::from(part(low)?))
}

/// A WAL position as PostgreSQL writes it.
pub(crate) fn format_lsn(lsn: Lsn) -> String {
    format!("{:X}/{:X}", lsn >> 32, lsn & 0xFFFF_FFFF)
}

/// The consistency token a request sent ([`CONSISTENCY_HEADER`]): `Ok(None)` without one, a
/// 400 error when it is not a WAL position.
pub(crate) fn token_of(value: Option<&[u8]>) -> Result<Option<Lsn>, Error> {
    let Some(value) = value else {
        return Ok(None);
    };
    std::str::from_utf8(value)
        .ok()
        .and_then(parse_lsn)
        .map(Some)
        .ok_or(Error::BadHeader {
            header: CONSISTENCY_HEADER,
            message: "expected a WAL position as a response's Plover-Consistency header gives it \
                      (such as 0/16B3748)"
                .into(),
        })
}

/// Whether `error` is a replica's refusal that the primary would not give: a statement
/// cancelled because it conflicted with the WAL the replica replays, or a write (which a
/// replica refuses, having written nothing).
#[cfg(feature = "postgres")]
pub(crate) fn is_replica_refusal(error: &Error) -> bool {
    match error {
        Error::Database(diesel::result::Error::DatabaseError(_, info)) => {
            let message = info.message();
            [
                "conflict with recovery",
                "read-only transaction",
                "does not exist",
            ]
            .iter()
            .any(|m| message.contains(m))
        }
        _ => false,
    }
}

/// The reader of a REST request: its client is known by the credentials it sends (the
/// `Authorization` header, an API key's `key` and `secret` in headers or in the query string;
/// none: an anonymous client), its token by [`CONSISTENCY_HEADER`] (400 when that is not a
/// WAL position, with or without replicas). `replicas`: whether the database has any; without,
/// the client is not looked for (nothing remembers it).
pub(crate) fn reader_of(
    headers: &actix_web::http::header::HeaderMap,
    query: &[(String, String)],
    replicas: bool,
) -> Result<Reader, Error> {
    let token = token_of(headers.get(CONSISTENCY_HEADER).map(|v| v.as_bytes()))?;
    if !replicas {
        return Ok(Reader::new(None, token));
    }
    let header = |name: &str| headers.get(name).map_or(&b""[..], |v| v.as_bytes());
    let param = |name: &str| {
        let found = query.iter().find(|(k, _)| k == name);
        found.map_or(&b""[..], |(_, v)| v.as_bytes())
    };
    let parts = [
        header("authorization"),
        header("key"),
        header("secret"),
        param("key"),
        param("secret"),
    ];
    let identified = parts.iter().any(|p| !p.is_empty());
    Ok(Reader::new(identified.then(|| client_key(&parts)), token))
}

/// The reader of a logged-in user's request (the admin's), known by the user's primary key.
#[cfg_attr(not(feature = "admin"), allow(dead_code))]
pub(crate) fn user_reader(user: i64) -> Reader {
    Reader::new(Some(client_key(&[b"user", &user.to_le_bytes()])), None)
}

/// The key under which a client is remembered: a hash of its credentials (`parts`, such as
/// an `Authorization` header), keyed per process.
pub(crate) fn client_key(parts: &[&[u8]]) -> u64 {
    static KEYS: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    let mut hasher = KEYS.get_or_init(Default::default).build_hasher();
    for part in parts {
        hasher.write_usize(part.len());
        hasher.write(part);
    }
    hasher.finish()
}

/// What a unit of work that only reads knows of its client: whom to remember (`client`,
/// `None` for an anonymous one) and the position the client sent (its consistency token).
#[derive(Debug, Clone, Copy, Default)]
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) struct Reader {
    /// The client's key ([`client_key`]), when it is identified.
    pub(crate) client: Option<u64>,
    /// The position the client's consistency token names.
    pub(crate) token: Option<Lsn>,
    /// Whether only the primary serves its reads: they must see every commit so far (a
    /// change feed's live tail, woken by the primary's commits).
    pub(crate) primary: bool,
}

impl Reader {
    /// A reader with this client key and token.
    pub(crate) fn new(client: Option<u64>, token: Option<Lsn>) -> Reader {
        Reader {
            client,
            token,
            primary: false,
        }
    }

    /// The same reader, whose reads only the primary serves.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn on_primary(self) -> Reader {
        Reader {
            primary: true,
            ..self
        }
    }
}

/// Which server a unit of work used last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServedBy {
    /// The primary.
    #[default]
    Primary,
    /// The replica of this index in the configuration's list (from 0).
    Replica(usize),
}

impl std::fmt::Display for ServedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServedBy::Primary => f.write_str("primary"),
            ServedBy::Replica(i) => write!(f, "replica-{}", i + 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_read_and_write_as_postgresql_writes_them() {
        assert_eq!(parse_lsn("16/B374D848"), Some(0x16_B374_D848));
        assert_eq!(parse_lsn("0/0"), Some(0));
        assert_eq!(format_lsn(0x16_B374_D848), "16/B374D848");
        for bad in [
            "",
            "0",
            "/1",
            "1/",
            "x/1",
            "123456789/1",
            "1/2/3",
            "-1/2",
            "1 /2",
        ] {
            assert_eq!(parse_lsn(bad), None, "{bad:?}");
        }
        assert!(token_of(Some(b"zz")).is_err());
        assert_eq!(token_of(None).ok(), Some(None));
        assert_eq!(token_of(Some(b"0/10")).ok(), Some(Some(16)));
    }
}
