//! A resource's list (docs/contract.md#lists): the request parsed by its list plan, scoped by
//! the hooks, one page run, and the page written with its `meta`.

use super::changes;
use super::hooks::{Context, ReadChecks};
use super::prepared::Prepared;
use super::request::{ApiRequest, Reply};
use crate::changes::order::settle;
use crate::changes::watch::cursor;
use crate::db::LazyConn;
use crate::error::Error;
use crate::listing::{Links, CURSOR};
use crate::model::RestModel;

/// The `meta` of a list page (docs/contract.md#lists).
#[derive(serde::Serialize)]
struct PageMeta<'a> {
    model: &'a str,
    page: i64,
    previous: &'a str,
    next: &'a str,
    /// The rows the filters match, when counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<i64>,
    /// The pages of `limit` rows they fill, when counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pages: Option<i64>,
    /// The id of the last event of the change feed that the page's snapshot includes, when
    /// asked for (`changes=cursor`).
    #[serde(skip_serializing_if = "Option::is_none")]
    changes_cursor: Option<i64>,
}

impl<M: RestModel> Prepared<M> {
    /// 403 unless the hooks let the request read the list (its pages, its aggregates).
    pub(super) fn check_list_read(&self, cx: &Context<'_>) -> Result<(), Error> {
        self.hooks.check_list_read(cx)
    }

    /// `GET` on the list path: one page of the rows the request's filters, the resource's
    /// scope and the joins' rules let through.
    pub(super) fn list(
        &self,
        cx: &Context<'_>,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
    ) -> Result<Reply, Error> {
        self.check_list_read(cx)?;
        let wants_cursor = changes::wants_cursor(req, self.access.changes)?;
        let pairs = match wants_cursor {
            true => changes::conditions_only(&req.query),
            false => req.query.clone(),
        };
        let mut query = self.list.parse(&pairs, &*self.joins)?;
        query.database = Some(db.database().id());
        let conn = &mut db.conn()?;
        let meta = M::meta();
        let sparse = self.sparse_of(&req.query)?;
        query.select.columns = self.list_columns(sparse.as_ref(), &query.select.order);
        self.add_scope(cx, &mut query.select)?;
        query.select.within = self.joins.within(cx, meta, &query.select)?;
        query.page_by_cursor(meta, self.keyset, req.param(CURSOR))?;
        // With its cursor, the page and the newest event are read in one snapshot, after the
        // events committed before have their places.
        let (page, changes_cursor) = match wants_cursor {
            false => (query.run::<M>(conn)?, None),
            true => {
                settle(conn)?;
                conn.snapshot(|conn| Ok((query.run::<M>(conn)?, Some(cursor(conn)?))))?
            }
        };
        let links = Links::rest(&req.list_path, &req.query);
        let previous = page.previous(&links).unwrap_or_default();
        let next = page.next(&links).unwrap_or_default();
        let meta = PageMeta {
            model: &self.name,
            page: page.query.page,
            previous: &previous,
            next: &next,
            count: page.count.map(|n| n.rows),
            pages: page.pages(),
            changes_cursor,
        };
        // The page in one buffer: the meta, then the objects written in place.
        let mut body = Vec::with_capacity(256 + page.rows.len() * 128);
        body.extend_from_slice(b"{\"meta\":");
        serde_json::to_writer(&mut body, &meta).map_err(|e| Error::Internal(e.to_string()))?;
        body.extend_from_slice(b",\"objects\":[");
        let mut body = self
            .serialize(cx, conn, &page.rows, sparse.as_ref(), body)?
            .buf;
        body.extend_from_slice(b"]}");
        Ok(Reply::ok(body))
    }
}
