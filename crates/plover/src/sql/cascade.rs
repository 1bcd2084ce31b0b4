//! Deletes with their dependent rows (docs/contract.md#deletes): rows that reach the deleted ones
//! through a non-nullable foreign key are deleted in turn, nullable references are set to NULL.
//! Runs inside the caller's transaction.

use crate::db::Conn;
use crate::error::Error;
use crate::meta::{all_models, user_references, FieldMeta, ModelMeta};
use crate::sql;

/// Foreign keys deeper than this are a cycle in the schema, not data.
const MAX_DEPTH: usize = 64;

/// Attempts of a recursive delete that keeps meeting dependents inserted while it ran.
const ATTEMPTS: usize = 3;

/// Deletes the rows `ids` of `meta` in one transaction of its own and returns how many of them
/// it deleted; with `recursive` false any dependent row is a 409 (docs/contract.md#deletes):
///
/// - the count comes from the `DELETE` itself, so of concurrent deletes of one row exactly one
///   sees it deleted (the others get 0: the callers answer 404);
/// - a recursive delete that meets a dependent row inserted after it collected the dependents
///   (a foreign-key violation on PostgreSQL, with dependents found again afterwards) starts
///   again, and after [`ATTEMPTS`] answers 503 (a concurrent change conflicted: retry), never
///   409;
/// - a foreign-key violation from a table that no model describes is a 409.
pub(crate) fn delete_rows(
    conn: &mut Conn<'_>,
    meta: &'static ModelMeta,
    ids: &[i64],
    recursive: bool,
) -> Result<usize, Error> {
    let mut seen: Option<Vec<(&str, Vec<i64>)>> = None;
    for _ in 0..ATTEMPTS {
        match conn.transaction(|conn| delete_at(conn, meta, ids, recursive, 0)) {
            Err(e) if is_fk_violation(&e) => {
                // Dependents that changed since the last failure were inserted meanwhile: try
                // again. The same dependents twice: the row is held by a table no model
                // describes.
                let now: Vec<_> = collect_dependents(conn, meta, ids)?
                    .into_iter()
                    .map(|d| (d.model.name, d.ids))
                    .collect();
                if !recursive || seen.as_ref() == Some(&now) {
                    return Err(Error::Conflict("other rows refer to this object".into()));
                }
                seen = Some(now);
            }
            other => return other,
        }
    }
    Err(Error::concurrent_change(&format!(
        "delete of {} rows kept racing inserts of dependent rows",
        meta.name
    )))
}

fn is_fk_violation(e: &Error) -> bool {
    matches!(
        e,
        Error::Database(diesel::result::Error::DatabaseError(
            diesel::result::DatabaseErrorKind::ForeignKeyViolation,
            _,
        ))
    )
}

fn delete_at(
    conn: &mut Conn<'_>,
    meta: &'static ModelMeta,
    ids: &[i64],
    recursive: bool,
    depth: usize,
) -> Result<usize, Error> {
    check_depth(meta, depth)?;
    for (referrer, idx, field) in referrers(conn, meta)? {
        let children = sql::referring(conn, referrer, idx, ids)?;
        if children.is_empty() {
            continue;
        }
        if !recursive {
            return Err(Error::Conflict(format!(
                "{} rows of {} refer to this {}",
                children.len(),
                referrer.name,
                meta.name
            )));
        }
        if field.nullable {
            sql::nullify(conn, referrer, idx, ids)?;
        } else {
            delete_at(conn, referrer, &children, true, depth + 1)?;
        }
    }
    if let Some(before_delete) = meta.ops.before_delete {
        for chunk in ids.chunks(sql::CHUNK) {
            before_delete(conn, chunk)?;
        }
    }
    sql::delete(conn, meta, ids)
}

/// Foreign keys deeper than [`MAX_DEPTH`] are a cycle in the schema.
fn check_depth(meta: &ModelMeta, depth: usize) -> Result<(), Error> {
    if depth > MAX_DEPTH {
        return Err(Error::Internal(format!(
            "foreign keys to {} nest too deep",
            meta.name
        )));
    }
    Ok(())
}

/// A field that refers to the rows of a model: (its model, its index, the field).
type Referrer = (&'static ModelMeta, usize, &'static FieldMeta);

/// Every foreign key that points at `meta`, and for a model of users the fields that hold its
/// keys ([`user_references`]: deleted as required foreign keys are) in the tables the database
/// has (an application without permissions has no tables of them: one statement each to know).
fn referrers(conn: &mut Conn<'_>, meta: &'static ModelMeta) -> Result<Vec<Referrer>, Error> {
    let target_type = (meta.type_id)();
    let mut out: Vec<Referrer> = all_models()
        .flat_map(move |referrer| {
            referrer
                .fields
                .iter()
                .enumerate()
                .filter(move |(_, f)| f.fk.is_some_and(|t| (t().type_id)() == target_type))
                .map(move |(idx, f)| (referrer, idx, f))
        })
        .collect();
    for reference in user_references(meta) {
        if sql::stamp::has_table(conn, reference.0.table)? {
            out.push(reference);
        }
    }
    Ok(out)
}

/// Rows that a recursive delete of `ids` would reach, for a confirmation page.
#[derive(Debug)]
pub(crate) struct Dependents {
    /// Their model.
    pub(crate) model: &'static ModelMeta,
    /// Their primary keys.
    pub(crate) ids: Vec<i64>,
    /// Whether they would only get NULL in a foreign key (else they would be deleted); the
    /// admin's delete page shows them apart.
    #[cfg_attr(not(feature = "admin"), allow(dead_code))]
    pub(crate) nullified: bool,
}

/// Collects, without changing anything, the rows a recursive delete of `ids` of `meta` would
/// delete or set to NULL: one query per foreign key and level (and thousand rows).
pub(crate) fn collect_dependents(
    conn: &mut Conn<'_>,
    meta: &'static ModelMeta,
    ids: &[i64],
) -> Result<Vec<Dependents>, Error> {
    let mut out = Vec::new();
    collect_at(conn, meta, ids, 0, &mut out)?;
    Ok(out)
}

fn collect_at(
    conn: &mut Conn<'_>,
    meta: &'static ModelMeta,
    ids: &[i64],
    depth: usize,
    out: &mut Vec<Dependents>,
) -> Result<(), Error> {
    check_depth(meta, depth)?;
    for (referrer, idx, field) in referrers(conn, meta)? {
        let children = sql::referring(conn, referrer, idx, ids)?;
        if children.is_empty() {
            continue;
        }
        if !field.nullable {
            collect_at(conn, referrer, &children, depth + 1, out)?;
        }
        out.push(Dependents {
            model: referrer,
            ids: children,
            nullified: field.nullable,
        });
    }
    Ok(())
}
