//! The JSON lookup behind a foreign key's type-ahead search.

use actix_web::http::StatusCode;
use serde_json::json;

use super::page::{object_text, Reply};
use super::prepared::{Cx, PreparedAdmin};
use crate::db::Conn;
use crate::error::Error;
use crate::model::RestModel;
use crate::query::{Filter, Op, Order, Param, Select};

impl<M: RestModel> PreparedAdmin<M> {
    /// `GET {prefix}/{name}/lookup/{field}/?q=&page=`: the related rows whose lookup column
    /// contains `q` (a literal, case-insensitive substring), by that column then key,
    /// `filter_paginate_by` a page.
    pub(crate) fn lookup_json(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        field: &str,
    ) -> Result<Reply, Error> {
        let meta = M::meta();
        let lookup = meta
            .field(field)
            .and_then(|(idx, _)| self.lookups.get(&idx))
            .ok_or(Error::NotFound)?;
        let page = match cx.req.param("page") {
            None => 1,
            Some(raw) => match raw.parse::<i64>() {
                Ok(n) if n >= 1 => n,
                _ => return Err(Error::param("page", "expected an integer >= 1")),
            },
        };
        let target = lookup.target;
        let q = cx.req.param("q").unwrap_or_default();
        self.list
            .limits
            .check_value(q)
            .and_then(|()| crate::value::check_text(q))
            .map_err(|m| Error::param("q", m))?;
        let per_page = self.filter_paginate_by;
        let select = Select {
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
            limit: Some(per_page + 1),
            offset: (page - 1).saturating_mul(per_page),
            ..Select::default()
        };
        let mut rows = (target.ops.load_fields)(conn, &select, &[target.pk, lookup.column])?;
        let has_next = rows.len() as i64 > per_page;
        rows.truncate(per_page as usize);
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
