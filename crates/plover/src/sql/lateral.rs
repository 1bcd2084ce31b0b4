//! On PostgreSQL, a page whose ordering starts through a required foreign key
//! (`ordering=user__username` on messages) is read from each related row's first rows
//! (docs/performance.md#growth):
//!
//! ```sql
//! SELECT "message"."id", ... FROM "user" AS "plover_o0_0"
//! CROSS JOIN LATERAL (SELECT "message".* FROM "message"
//!     WHERE "message"."user_id" = "plover_o0_0"."id"
//!     ORDER BY "message"."id" ASC LIMIT $1) AS "message"
//! ORDER BY "plover_o0_0"."username" COLLATE "C" ASC, "message"."id" ASC LIMIT $2 OFFSET $3
//! ```
//!
//! where `$1` is the offset plus the page's limit. The rows are the same as the plain join's:
//! the rows of one author share the first key, so among them the order is the remaining keys'
//! alone, and the rows the page reaches (the first `$1` of the whole order) hold at most the
//! first `$1` of each author by those keys. What changes is the plan: a
//! nested loop keeps only its outer side's order (the users by name), so over the plain join
//! PostgreSQL sorts every message of the first author (10,000 at ten million rows) before it
//! cuts the page; here it sorts at most `$1` of each author it walks.
//!
//! The shape applies ([`applies`]) only where it cannot be slower:
//! - the first key goes through one foreign key that is not nullable to a model that the
//!   selection's `within` does not narrow (an `INNER JOIN`: every row has its related row),
//!   and every other key is on the model itself, the last a unique field that is not nullable
//!   (the primary key that ends every list's ordering), so the order has no ties;
//! - the selection has no conditions: a rare condition (a search word in 20 rows of a
//!   million) is read faster from its own index and its few rows sorted, a plan PostgreSQL
//!   picks over the plain join (1 ms) but cannot over the lateral one, which would walk every
//!   author (625 ms);
//! - the offset and the page hold at most [`MAX_WINDOW`] rows: past them the lateral reads
//!   as many rows as the plain join, each through one more step (the last page of a million
//!   rows: 4.6 to 6.1 s against 2.9 s).
//!
//! SQLite keeps the plain join: its plan reads an author's messages in the order of the index
//! that starts with the foreign key.

use super::writer::{narrows, Writer};
use crate::error::Error;
use crate::meta::ModelMeta;
use crate::query::{Order, Select};
use crate::sql::arg::Arg;

/// The most rows (the offset and the page, with the row that tells whether more follow) that a
/// page read through a lateral join may reach.
pub(crate) const MAX_WINDOW: i64 = 1000;

/// Whether the page that `s` selects of `meta` is read through a lateral join on PostgreSQL
/// (`pg`): see the module's conditions.
pub(crate) fn applies(meta: &ModelMeta, s: &Select, pg: bool) -> bool {
    let (Some(limit), [first, rest @ ..]) = (s.limit, s.order.as_slice()) else {
        return false;
    };
    let [through] = first.through.as_slice() else {
        return false;
    };
    let Some(fk) = meta.fields.get(*through) else {
        return false;
    };
    let Some(target) = fk.target() else {
        return false;
    };
    let unique = |index: usize| {
        meta.fields
            .get(index)
            .is_some_and(|f| (index == meta.pk || f.unique) && !f.nullable)
    };
    pg && !fk.nullable
        && !narrows(&s.within, target)
        && rest.iter().all(|o| o.own_field().is_some())
        && rest.last().and_then(Order::own_field).is_some_and(unique)
        && !s.has_conditions()
        && s.offset.saturating_add(limit) <= MAX_WINDOW
}

/// ` FROM` the related table `CROSS JOIN LATERAL` each related row's first rows of `meta`,
/// under `meta`'s own table name, then the page's ` ORDER BY` and window: the rest of the
/// statement (the selected columns) reads as over the plain table. Call it where [`applies`].
pub(crate) fn from_and_window<'a>(
    w: &mut Writer<'a>,
    meta: &ModelMeta,
    s: &'a Select,
) -> Result<(), Error> {
    let (Some(first), Some(limit)) = (s.order.first(), s.limit) else {
        return Err(Error::Internal("a lateral page without an ordering".into()));
    };
    let fk = meta.field_at(first.through[0])?;
    let target = fk.joined()?;
    let alias = Writer::order_alias(0, 0);
    w.sql(" FROM ");
    w.ident(target.table);
    w.sql(" AS ");
    w.ident(&alias);
    w.sql(" CROSS JOIN LATERAL (SELECT ");
    w.ident(meta.table);
    w.sql(".*");
    w.from(meta);
    w.conditions(meta, s)?;
    w.sql(if s.has_conditions() {
        " AND "
    } else {
        " WHERE "
    });
    w.column(meta, fk);
    w.sql(" = ");
    w.ident(&alias);
    w.sql(".");
    w.ident(target.pk_field().column);
    w.order_by(meta, s, 1)?;
    w.sql(" LIMIT ");
    w.bind(Arg::I64(s.offset.saturating_add(limit)));
    w.sql(") AS ");
    w.ident(meta.table);
    w.order_and_window(meta, s)
}
