//! The statements on `plover_job`: enqueue, claim, and the end of an attempt. Every value is a
//! bound parameter; each statement has its SQLite and its PostgreSQL text.

use std::time::Duration;

use chrono::NaiveDateTime;
use diesel::sql_types::{BigInt, Integer, Nullable, Text, Timestamp};
use diesel::RunQueryDsl;

use crate::db::{by_engine, Conn};
use crate::error::Error;

/// A job a worker claimed: what its handler needs, and the attempt that identifies the claim.
#[derive(Debug, Clone, diesel::QueryableByName)]
pub(crate) struct Claimed {
    #[diesel(sql_type = BigInt)]
    pub(crate) id: i64,
    #[diesel(sql_type = Text)]
    pub(crate) kind: String,
    #[diesel(sql_type = Text)]
    pub(crate) payload: String,
    /// This attempt's number, from 1: a later claim of the same job has a higher one.
    #[diesel(sql_type = Integer)]
    pub(crate) attempts: i32,
    #[diesel(sql_type = Integer)]
    pub(crate) max_attempts: i32,
}

#[derive(diesel::QueryableByName)]
struct Id {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// `at` plus `by`, saturating.
pub(crate) fn later(at: NaiveDateTime, by: Duration) -> NaiveDateTime {
    chrono::Duration::from_std(by)
        .ok()
        .and_then(|by| at.checked_add_signed(by))
        .unwrap_or(NaiveDateTime::MAX)
}

/// Inserts a queued job; its id.
pub(crate) fn insert(
    conn: &mut Conn<'_>,
    kind: &str,
    payload: &str,
    serial_key: Option<&str>,
    max_attempts: i32,
    run_after: NaiveDateTime,
) -> Result<i64, Error> {
    let now = crate::value::now();
    let ids: Vec<Id> = by_engine!(
        load,
        conn,
        "INSERT INTO plover_job (kind, payload, serial_key, state, attempts, max_attempts, \
         run_after, created, updated) VALUES (?, ?, ?, 'queued', 0, ?, ?, ?, ?) RETURNING id",
        "INSERT INTO plover_job (kind, payload, serial_key, state, attempts, max_attempts, \
         run_after, created, updated) VALUES ($1, $2, $3, 'queued', 0, $4, $5, $6, $7) \
         RETURNING id",
        |q| q
            .bind::<Text, _>(kind)
            .bind::<Text, _>(payload)
            .bind::<Nullable<Text>, _>(serial_key)
            .bind::<Integer, _>(max_attempts)
            .bind::<Timestamp, _>(run_after)
            .bind::<Timestamp, _>(now)
            .bind::<Timestamp, _>(now)
    )
    .map_err(explained)?;
    ids.first()
        .map(|row| row.id)
        .ok_or_else(|| Error::Internal("the job insert returned no id".into()))
}

/// The jobs a claim looks at, as the common table `candidates(id)`, in a few index reads
/// however long the queue: the first job of each serial key that is not `failed` (`heads`,
/// found by skipping from key to key along the `(serial_key, id)` index; the later jobs of a
/// key wait for it), the first due jobs without a key, and the first running jobs whose claim
/// lapsed. `$p` is the engine's parameter prefix (`?` or `$`: parameter 1 is now, 2 the
/// kinds), `$kinds` the engine's rows of a JSON array of names.
macro_rules! candidates {
    ($p:literal, $kinds:expr) => {
        concat!(
            "WITH RECURSIVE heads(id, k) AS (\
             SELECT id, serial_key FROM (SELECT id, serial_key FROM plover_job \
             WHERE serial_key IS NOT NULL AND state <> 'failed' \
             ORDER BY serial_key, id LIMIT 1) AS first \
             UNION ALL \
             SELECT n.id, n.serial_key FROM heads, plover_job AS n \
             WHERE n.id = (SELECT e.id FROM plover_job AS e \
             WHERE e.serial_key > heads.k AND e.state <> 'failed' \
             ORDER BY e.serial_key, e.id LIMIT 1)), \
             candidates(id) AS (SELECT id FROM heads \
             UNION ALL SELECT id FROM (SELECT id FROM plover_job \
             WHERE state = 'queued' AND serial_key IS NULL AND run_after <= ",
            $p,
            "1 AND kind IN (",
            $kinds,
            ") ORDER BY run_after, id LIMIT 64) AS free \
             UNION ALL SELECT id FROM (SELECT id FROM plover_job \
             WHERE state = 'running' AND locked_until <= ",
            $p,
            "1 ORDER BY run_after, id LIMIT 64) AS lapsed) "
        )
    };
}

/// The rows of parameter 2, a JSON array of kind names, on SQLite.
macro_rules! sqlite_kinds {
    () => {
        "SELECT value FROM json_each(?2)"
    };
}

/// [`sqlite_kinds!`] on PostgreSQL.
#[cfg(feature = "postgres")]
macro_rules! pg_kinds {
    () => {
        "SELECT jsonb_array_elements_text($2::jsonb)"
    };
}

/// The jobs a claim may take among the `candidates` (a claim of `kinds` takes those with
/// attempts left, oldest due first; [`fail_lapsed`] ends the others): `$p` and `$kinds` as in
/// [`candidates!`], `$among` how the engine tests `j.id` against the candidates.
macro_rules! claimable {
    ($p:literal, $kinds:expr, $among:literal) => {
        concat!(
            "SELECT j.id FROM plover_job AS j WHERE ",
            $among,
            " AND j.kind IN (",
            $kinds,
            ") AND ((j.state = 'queued' AND j.run_after <= ",
            $p,
            "1) OR (j.state = 'running' AND j.locked_until <= ",
            $p,
            "1 AND j.attempts < j.max_attempts)) ORDER BY j.run_after, j.id LIMIT 1"
        )
    };
}

/// Whether there is work for a claim ([`claim`] or [`fail_lapsed`]): a read, so that idle
/// workers do not take SQLite's write lock on every look.
pub(crate) fn work_waits(conn: &mut Conn<'_>, kinds: &str) -> Result<bool, Error> {
    let now = crate::value::now();
    let found: Vec<Id> = by_engine!(
        load,
        conn,
        concat!(
            candidates!("?", sqlite_kinds!()),
            "SELECT id FROM plover_job AS j WHERE j.id IN (SELECT id FROM candidates) \
             AND ((j.state = 'queued' AND j.run_after <= ?1 AND j.kind IN (",
            sqlite_kinds!(),
            ")) OR (j.state = 'running' AND j.locked_until <= ?1)) LIMIT 1"
        ),
        concat!(
            candidates!("$", pg_kinds!()),
            "SELECT id FROM plover_job AS j WHERE j.id = ANY(ARRAY(SELECT id FROM candidates)) \
             AND ((j.state = 'queued' AND j.run_after <= $1 AND j.kind IN (",
            pg_kinds!(),
            ")) OR (j.state = 'running' AND j.locked_until <= $1)) LIMIT 1"
        ),
        |q| q.bind::<Timestamp, _>(now).bind::<Text, _>(kinds)
    )
    .map_err(explained)?;
    Ok(!found.is_empty())
}

/// Claims the first of the [`claimable!`] jobs: parameter 1 is now, 2 the kinds, 3 when the
/// claim lapses.
const CLAIM_SQLITE: &str = concat!(
    candidates!("?", sqlite_kinds!()),
    "UPDATE plover_job SET state = 'running', attempts = attempts + 1, locked_until = ?3, \
     updated = ?1 WHERE id = (",
    claimable!("?", sqlite_kinds!(), "j.id IN (SELECT id FROM candidates)"),
    ") RETURNING id, kind, payload, attempts, max_attempts"
);

/// [`CLAIM_SQLITE`] on PostgreSQL: rows another claim holds are skipped, not waited for.
#[cfg(feature = "postgres")]
const CLAIM_PG: &str = concat!(
    candidates!("$", pg_kinds!()),
    "UPDATE plover_job SET state = 'running', attempts = attempts + 1, locked_until = $3, \
     updated = $1 WHERE id = (",
    claimable!(
        "$",
        pg_kinds!(),
        "j.id = ANY(ARRAY(SELECT id FROM candidates))"
    ),
    " FOR UPDATE OF j SKIP LOCKED) RETURNING id, kind, payload, attempts, max_attempts"
);

/// Claims one job of `kinds` (a JSON array of names) until `lease` from now, in one
/// statement; `None` when none is due.
pub(crate) fn claim(
    conn: &mut Conn<'_>,
    kinds: &str,
    lease: Duration,
) -> Result<Option<Claimed>, Error> {
    let now = crate::value::now();
    let claimed: Vec<Claimed> = by_engine!(load, conn, CLAIM_SQLITE, CLAIM_PG, |q| q
        .bind::<Timestamp, _>(now)
        .bind::<Text, _>(kinds)
        .bind::<Timestamp, _>(later(now, lease)))
    .map_err(explained)?;
    Ok(claimed.into_iter().next())
}

/// Ends the attempt `job` claimed with success: the job is deleted. Nothing happens when the
/// claim lapsed and another worker claimed the job since.
pub(crate) fn succeeded(conn: &mut Conn<'_>, job: &Claimed) -> Result<(), Error> {
    by_engine!(
        execute,
        conn,
        "DELETE FROM plover_job WHERE id = ? AND attempts = ? AND state = 'running'",
        "DELETE FROM plover_job WHERE id = $1 AND attempts = $2 AND state = 'running'",
        |q| q.bind::<BigInt, _>(job.id).bind::<Integer, _>(job.attempts)
    )?;
    Ok(())
}

/// Ends the attempt `job` claimed with `error`: queued again for `retry_at`, or `failed` when
/// `retry_at` is `None`. Nothing happens when the claim lapsed and another worker claimed the
/// job since.
pub(crate) fn failed(
    conn: &mut Conn<'_>,
    job: &Claimed,
    error: &str,
    retry_at: Option<NaiveDateTime>,
) -> Result<(), Error> {
    let now = crate::value::now();
    let state = if retry_at.is_some() {
        "queued"
    } else {
        "failed"
    };
    by_engine!(
        execute,
        conn,
        "UPDATE plover_job SET state = ?, run_after = COALESCE(?, run_after), \
         locked_until = NULL, last_error = ?, updated = ? \
         WHERE id = ? AND attempts = ? AND state = 'running'",
        "UPDATE plover_job SET state = $1, run_after = COALESCE($2, run_after), \
         locked_until = NULL, last_error = $3, updated = $4 \
         WHERE id = $5 AND attempts = $6 AND state = 'running'",
        |q| q
            .bind::<Text, _>(state)
            .bind::<Nullable<Timestamp>, _>(retry_at)
            .bind::<Text, _>(error)
            .bind::<Timestamp, _>(now)
            .bind::<BigInt, _>(job.id)
            .bind::<Integer, _>(job.attempts)
    )?;
    Ok(())
}

/// Queues the failed job `id` again, due now, with its attempts counted from zero; whether
/// there was such a job.
pub(crate) fn requeue(conn: &mut Conn<'_>, id: i64) -> Result<bool, Error> {
    let now = crate::value::now();
    let changed = by_engine!(
        execute,
        conn,
        "UPDATE plover_job SET state = 'queued', attempts = 0, run_after = ?, \
         locked_until = NULL, updated = ? WHERE id = ? AND state = 'failed'",
        "UPDATE plover_job SET state = 'queued', attempts = 0, run_after = $1, \
         locked_until = NULL, updated = $2 WHERE id = $3 AND state = 'failed'",
        |q| q
            .bind::<Timestamp, _>(now)
            .bind::<Timestamp, _>(now)
            .bind::<BigInt, _>(id)
    )
    .map_err(explained)?;
    Ok(changed > 0)
}

/// What a job whose worker died on its last attempt records.
pub(crate) const LAPSED: &str = "the worker stopped before the job's last attempt ended";

/// Marks `failed` the running jobs whose claim lapsed on their last attempt (a claim takes
/// only those with attempts left); the number marked.
pub(crate) fn fail_lapsed(conn: &mut Conn<'_>) -> Result<usize, Error> {
    let now = crate::value::now();
    by_engine!(
        execute,
        conn,
        "UPDATE plover_job SET state = 'failed', locked_until = NULL, last_error = ?, \
         updated = ? WHERE state = 'running' AND locked_until <= ? \
         AND attempts >= max_attempts",
        "UPDATE plover_job SET state = 'failed', locked_until = NULL, last_error = $1, \
         updated = $2 WHERE state = 'running' AND locked_until <= $3 \
         AND attempts >= max_attempts",
        |q| q
            .bind::<Text, _>(LAPSED)
            .bind::<Timestamp, _>(now)
            .bind::<Timestamp, _>(now)
    )
    .map_err(explained)
}

/// `e`, or where it says that the table `plover_job` does not exist, an error that says how
/// to create it.
fn explained(e: Error) -> Error {
    e.explain_missing_table("the job table", "plover_job", "plover::jobs::Job::meta()")
}
