//! The JSON lookup behind a foreign key's type-ahead search.

use actix_web::http::StatusCode;
use serde_json::json;

use super::page::{object_text, Reply};
use super::prepared::{Cx, PreparedAdmin};
use crate::db::Conn;
use crate::error::Error;
use crate::listing::{check_search_text, offset, positive, Page, PAGE, SEARCH};
use crate::query::{Filter, Op, Order, Param, Select};

impl PreparedAdmin {
    /// `GET {prefix}/{name}/lookup/{field}/?q=&page=`: the related rows whose lookup column
    /// contains `q` (a literal, case-insensitive substring), by that column then key,
    /// `filter_paginate_by` a page.
    pub(crate) fn lookup_json(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        field: &str,
    ) -> Result<Reply, Error> {
        let meta = self.meta;
        let lookup = meta
            .field(field)
            .and_then(|(idx, _)| self.lookups.by_field.get(&idx))
            .ok_or(Error::NotFound)?;
        let page = positive(PAGE, cx.req.param(PAGE))?.unwrap_or(1);
        let target = lookup.target;
        let q = cx.req.param(SEARCH).unwrap_or_default();
        check_search_text(&self.list.limits, q)?;
        let per_page = self.lookups.per_page;
        let mut select = Select {
            filters: if q.is_empty() {
                Vec::new()
            } else {
                vec![Filter {
                    path: vec![lookup.column],
                    op: Op::Contains,
                    values: vec![Param::Text(q.to_owned())],
                }]
            },
            order: vec![Order::asc(lookup.column), Order::asc(target.pk)],
            offset: offset(page, per_page),
            ..Select::default()
        };
        let columns = [target.pk, lookup.column];
        let load = |s: &Select| (target.ops.load_fields)(conn, s, &columns);
        let Page { rows, has_next } = Page::read(&mut select, per_page, load)?;
        let objects: Vec<serde_json::Value> = rows
            .into_iter()
            .map(|mut r| {
                let text = r.pop().unwrap_or_default();
                let text = match text {
                    serde_json::Value::String(s) => s,
                    serde_json::Value::Null => String::new(),
                    other => other.to_string(),
                };
                let id = r.pop().unwrap_or_default();
                let text = object_text(text, target.name, &id);
                json!({"id": id, "text": text})
            })
            .collect();
        let body = json!({"objects": objects, "page": page, "has_next": has_next});
        Ok(Reply::Json(StatusCode::OK, body.to_string().into_bytes()))
    }
}
