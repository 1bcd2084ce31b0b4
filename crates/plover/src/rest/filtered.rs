//! Writes by filter (docs/contract.md#writes-by-filter): `PATCH` and `DELETE` on a list path
//! change every row the query's filters match, each under the checks and rules of a single
//! write of it, in one transaction, at most `max_affected` rows.

use super::erased::{Item, Writer};
use super::hooks::{Context, ReadChecks};
use super::prepared::{prepend, Core, Prepared};
use super::request::{ApiRequest, Reply};
use crate::db::{Conn, LazyConn};
use crate::error::Error;
use crate::listing::{is_filter, CREDENTIALS};
use crate::model::row::Row;
use crate::model::RestModel;
use crate::query::{Order, Select};
use crate::sql::cascade::delete_rows;

impl<M: RestModel> Prepared<M> {
    /// `PATCH {prefix}/{name}/?<filters>`: the body's changes saved on every matching row.
    pub(super) fn update_matching(
        &self,
        cx: &Context<'_>,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
    ) -> Result<Reply, Error> {
        let select = self.core.matching(&self.hooks, cx, req)?;
        let parsed = self.read_body(req, false)?;
        // The hooks' `save_object` runs once (it may hash a password); each row then gets a
        // copy of what it made.
        let item = Item::of(self.changes_to_save(cx, db, parsed)?);
        self.core.update_matching(self, cx, db, &select, &item)
    }

    /// `DELETE {prefix}/{name}/?<filters>`: every matching row deleted, as a single DELETE
    /// of each would (dependent rows too, or 409, as `delete_recursive` says).
    pub(super) fn delete_matching(
        &self,
        cx: &Context<'_>,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
    ) -> Result<Reply, Error> {
        let select = self.core.matching(&self.hooks, cx, req)?;
        self.core.delete_matching(self, cx, db, &select)
    }
}

impl Core {
    /// [`Prepared::update_matching`] of the rows of `select` and the changes of `item`, the
    /// model's part done by `w`.
    fn update_matching(
        &self,
        w: &dyn Writer,
        cx: &Context<'_>,
        db: &mut LazyConn<'_>,
        select: &Select,
        item: &Item,
    ) -> Result<Reply, Error> {
        let updated = db.write(|conn| {
            let rows = self.matched_rows(w, conn, select)?;
            w.check_references(conn, item)?;
            for row in &rows {
                w.check_edit(cx, &**row)?;
                let changes = w.copy_changes(&item.changes)?;
                let saved = (w.store().save(conn, changes, Some(&**row)))
                    .map_err(|e| on_row(e, row.pk()))?;
                self.record_rows(cx, conn, Some(&**row), Some(&*saved))?;
            }
            Ok(rows.len())
        })?;
        Ok(Reply::ok(format!("{{\"updated\":{updated}}}").into_bytes()))
    }

    /// [`Prepared::delete_matching`] of the rows of `select`, the model's part done by `w`.
    fn delete_matching(
        &self,
        w: &dyn Writer,
        cx: &Context<'_>,
        db: &mut LazyConn<'_>,
        select: &Select,
    ) -> Result<Reply, Error> {
        let deleted = db.write(|conn| {
            let rows = self.matched_rows(w, conn, select)?;
            for row in &rows {
                w.check_remove(cx, &**row)?;
            }
            let ids: Vec<i64> = rows.iter().map(|row| row.pk()).collect();
            let recursive = self.writes.delete_recursive;
            match self.actor(cx) {
                Some(actor) => w.store().delete(conn, &actor, &ids, recursive),
                None => delete_rows(conn, self.meta, &ids, recursive),
            }
        })?;
        Ok(Reply::ok(format!("{{\"deleted\":{deleted}}}").into_bytes()))
    }

    /// The rows of `select`, locked for the write on PostgreSQL; more than `max_affected`:
    /// a 400.
    fn matched_rows(
        &self,
        w: &dyn Writer,
        conn: &mut Conn<'_>,
        select: &Select,
    ) -> Result<Vec<Box<dyn Row>>, Error> {
        let max = self.access.max_affected.unwrap_or_default();
        let rows = w.locked(conn, select)?;
        if rows.len() > max {
            return Err(Error::TooManyAffected(max));
        }
        Ok(rows)
    }

    /// The rows a write by filter names: the list's conditions (filters, `or`/`not`, `q`)
    /// under the `get_query` scope, in key order, one more than `max_affected` (to know when
    /// there are too many). A request without a condition, or with a list parameter that
    /// does not select rows (a page, an ordering), is a 400. `hooks` are the resource's.
    fn matching(
        &self,
        hooks: &dyn ReadChecks,
        cx: &Context<'_>,
        req: &ApiRequest,
    ) -> Result<Select, Error> {
        let max = self.access.max_affected.unwrap_or_default();
        let kept = |key: &str| is_filter(key) || CREDENTIALS.contains(&key);
        if let Some((key, _)) = req.query.iter().find(|(k, _)| !kept(k) && !is_condition(k)) {
            return Err(Error::param(key, "a write by filter takes only filters"));
        }
        let mut select = self.list.conditions(&req.query, &*self.joins)?;
        if select.filters.is_empty() && select.groups.is_empty() {
            return Err(Error::BadBody(
                "a write by filter needs at least one filter in the query string".into(),
            ));
        }
        prepend(hooks.scope_of(cx), &mut select);
        select.within = self.joins.within(cx, self.meta, &select)?;
        select.order = vec![Order::asc(self.meta.pk)];
        select.limit = Some(i64::try_from(max).unwrap_or(i64::MAX).saturating_add(1));
        Ok(select)
    }
}

/// Whether a list parameter that is not a filter still selects rows: a search or a group.
fn is_condition(key: &str) -> bool {
    use crate::listing::{NOT, OR, SEARCH};
    [SEARCH, OR, NOT].contains(&key)
}

/// A row's refusal by the model's rules, naming the row.
fn on_row(e: Error, pk: i64) -> Error {
    match e {
        Error::Validation { fields, .. } => Error::Validation {
            message: format!("Validation failed for the object with key {pk}"),
            fields,
        },
        e => e,
    }
}
