//! On PostgreSQL, a condition through a foreign key inside an `or` group (each word of a
//! search `q` is such a group) is read first as the keys of the related rows it selects, when
//! they are few, and the group compares the foreign key with them: `user_id = ANY($1)`
//! instead of `user_id IN (SELECT id FROM "user" WHERE ...)` (docs/performance.md#growth).
//!
//! The rows are the same. What changes is the plan: PostgreSQL's planner cannot estimate a
//! subquery inside an `OR` (it assumes half the rows match), so it walks the primary key
//! expecting to fill a page at once, and reads the whole table when the word is rare. With the
//! keys bound as an array it knows how many rows they select, and it can combine the indexes
//! of the group's conditions (a trigram index on a text column, the foreign key's index) with
//! a `BitmapOr`. Past [`MAX_KEYS`] related rows the subquery stays: so many match that walking
//! the primary key finds a page soon. SQLite, which has no index for a substring, keeps the
//! subquery (and one statement).

use super::ids;
use super::writer::selects_one;
use crate::db::{Conn, Engine};
use crate::error::Error;
use crate::meta::ModelMeta;
use crate::query::{Filter, Group, Op, Param, Select, Term, Within};

/// The most related keys that replace a condition's subquery.
pub(crate) const MAX_KEYS: usize = 1000;

/// On PostgreSQL, replaces each condition through a foreign key that is a term of one of
/// `select`'s `or` groups (not nested) by the keys of the related rows it selects, when there
/// are at most [`MAX_KEYS`] of them; on SQLite, nothing.
pub(crate) fn read_related_keys(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    select: &mut Select,
) -> Result<(), Error> {
    if conn.engine() != Engine::Postgres {
        return Ok(());
    }
    let within = &select.within;
    for group in &mut select.groups {
        let Group::Any(terms) = group else { continue };
        for term in terms {
            let Term::Filter(filter) = term else { continue };
            if let Some(keys) = related_keys(conn, meta, filter, within)? {
                *filter = Filter {
                    path: vec![filter.path[0]],
                    op: Op::In,
                    values: keys.into_iter().map(Param::Int).collect(),
                };
            }
        }
    }
    Ok(())
}

/// The keys of the rows that `filter`, a condition through a foreign key of `meta`, selects in
/// the related model, under the same rules as its subquery (the related model's `within`
/// conditions); `None` for a condition on `meta`'s own field, one that selects at most one row
/// (its subquery is already a scalar the planner estimates), or past [`MAX_KEYS`] rows.
fn related_keys(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    filter: &Filter,
    within: &[Within],
) -> Result<Option<Vec<i64>>, Error> {
    let [first, rest @ ..] = filter.path.as_slice() else {
        return Ok(None);
    };
    let Some(target) = meta.field_at(*first)?.target() else {
        return Ok(None);
    };
    if rest.is_empty() || selects_one(target, filter, 1) {
        return Ok(None);
    }
    let mut filters = vec![Filter {
        path: rest.to_vec(),
        op: filter.op,
        values: filter.values.clone(),
    }];
    let scope = within.iter().filter(|w| w.table == target.table);
    filters.extend(scope.flat_map(|w| w.filters.iter().cloned()));
    let related = Select {
        filters,
        limit: Some(MAX_KEYS as i64 + 1),
        within: within.to_vec(),
        ..Select::default()
    };
    let keys = ids(conn, target, &related)?;
    Ok((keys.len() <= MAX_KEYS).then_some(keys))
}
