//! The permissions stamp (docs/permissions.md): a counter in the one-row table
//! `plover_permission_stamp` that every write to a table of permissions raises, in the write's
//! own transaction. A request reads it with the user of its credentials, in the same
//! statement; the permissions a process keeps of a user are current while the stamp they were
//! read under is still the stamp: a grant or a revocation anywhere, in any process, changes it,
//! and the very next request reads them again.

use diesel::deserialize;
use diesel::sql_types::{BigInt, Text};
use diesel::RunQueryDsl;

use super::column::{Cells, FromRow};
use super::Writer;
use crate::db::{by_engine, Conn, LazyConn};
use crate::error::Error;
use crate::meta::ModelMeta;

/// The table of the stamp.
pub(crate) const TABLE: &str = "plover_permission_stamp";

/// The tables whose writes raise the stamp: those of groups and permissions.
pub(crate) const STAMPED: [&str; 4] = [
    "plover_group",
    "plover_group_permission",
    "plover_user_group",
    "plover_user_permission",
];

/// Raises the stamp when `meta` is a table of permissions (else does nothing): one statement,
/// which also makes the stamp's row the first time.
pub(crate) fn touched(conn: &mut Conn<'_>, meta: &ModelMeta) -> Result<(), Error> {
    if !STAMPED.contains(&meta.table) {
        return Ok(());
    }
    conn.batch_execute(
        "INSERT INTO plover_permission_stamp (id, stamp) VALUES (1, 1) \
         ON CONFLICT (id) DO UPDATE SET stamp = plover_permission_stamp.stamp + 1",
    )
}

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Whether the database of `db` has the stamp's table: looked up on the first call for a
/// database and remembered (an application creates its tables before it serves).
pub(crate) fn present(db: &mut LazyConn<'_>) -> Result<bool, Error> {
    let known = db.database().stamp_table();
    if let Some(&present) = known.get() {
        return Ok(present);
    }
    let found = has_table(&mut db.conn()?, TABLE)?;
    Ok(*known.get_or_init(|| found))
}

/// Whether the database has the table `table` (in the current schema on PostgreSQL): one
/// statement.
pub(crate) fn has_table(conn: &mut Conn<'_>, table: &str) -> Result<bool, Error> {
    let found: Count = by_engine!(
        get_result,
        conn,
        "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?",
        "SELECT count(*) AS n FROM pg_catalog.pg_tables \
         WHERE schemaname = current_schema() AND tablename = $1",
        |q| q.bind::<Text, _>(table)
    )?;
    Ok(found.n > 0)
}

/// Writes, after the columns of a `SELECT`, the stamp as one more column (0 before the first
/// write to a table of permissions).
pub(super) fn select(w: &mut Writer<'_>) {
    w.sql(", (SELECT stamp FROM ");
    w.ident(TABLE);
    w.sql(" WHERE id = 1)");
}

/// A row read with the stamp that follows its columns ([`select`]).
pub(crate) struct Stamped<T>(pub(crate) T, pub(crate) i64);

impl<T: FromRow> FromRow for Stamped<T> {
    fn read<C: Cells>(cells: &mut C) -> deserialize::Result<Self> {
        let row = T::read(cells)?;
        let stamp: Option<i64> = cells.next()?;
        Ok(Stamped(row, stamp.unwrap_or(0)))
    }
}
