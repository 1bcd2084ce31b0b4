//! The JSON lookup behind a foreign key's type-ahead search.

use actix_web::http::StatusCode;
use serde_json::{json, Value};

use super::lookup::Matches;
use super::page::Reply;
use super::prepared::{Cx, PreparedAdmin};
use crate::db::Conn;
use crate::error::Error;
use crate::listing::{check_search_text, positive, PAGE, SEARCH};

impl PreparedAdmin {
    /// `GET {prefix}/{name}/lookup/{field}/?q=&page=`: the related rows whose lookup column
    /// contains `q` ([`Lookup::search`](super::lookup::Lookup::search)), `filter_paginate_by` a
    /// page.
    pub(crate) fn lookup_json(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        field: &str,
    ) -> Result<Reply, Error> {
        let lookup = (self.meta.field(field))
            .and_then(|(idx, _)| self.lookups.by_field.get(&idx))
            .ok_or(Error::NotFound)?;
        let page = positive(PAGE, cx.req.param(PAGE))?.unwrap_or(1);
        let q = cx.req.param(SEARCH).unwrap_or_default();
        check_search_text(&self.list.limits, q)?;
        let Matches { rows, has_next } = lookup.search(conn, q, page, self.lookups.per_page)?;
        let objects: Vec<Value> = (rows.into_iter())
            .map(|(id, text)| json!({"id": id, "text": text}))
            .collect();
        let body = json!({"objects": objects, "page": page, "has_next": has_next});
        Ok(Reply::Json(StatusCode::OK, body.to_string().into_bytes()))
    }
}
