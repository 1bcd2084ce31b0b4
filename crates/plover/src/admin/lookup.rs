//! The search behind a foreign key's type-ahead: the related rows whose lookup column
//! contains a text. The JSON lookup (lookup_json.rs) answers it a page at a time, and a
//! foreign key's facet lists its first page, without JavaScript.

use std::collections::HashMap;

use serde_json::Value;

use super::names::object_text;
use crate::db::Conn;
use crate::error::Error;
use crate::listing::{offset, Page};
use crate::model::ModelMeta;
use crate::query::{Filter, Op, Order, Param, Select};

/// A foreign key chosen by a type-ahead lookup: the related model, and its field searched.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lookup {
    pub(crate) target: &'static ModelMeta,
    pub(crate) column: usize,
}

/// The foreign keys of one model admin chosen by a type-ahead lookup.
pub(crate) struct Lookups {
    /// Per foreign-key field index, what its lookup searches.
    pub(crate) by_field: HashMap<usize, Lookup>,
    /// Related rows a lookup page (`filter_paginate_by`).
    pub(crate) per_page: i64,
}

/// One page of a lookup's matches: each related row's key and text, and whether more follow.
pub(crate) struct Matches {
    pub(crate) rows: Vec<(Value, String)>,
    pub(crate) has_next: bool,
}

impl Lookup {
    /// Page `page` (from 1) of the related rows whose lookup column contains `q` (a literal,
    /// case-insensitive substring; every row when `q` is empty), by that column then key,
    /// `per_page` a page. `q` is checked by the caller.
    pub(crate) fn search(
        &self,
        conn: &mut Conn<'_>,
        q: &str,
        page: i64,
        per_page: i64,
    ) -> Result<Matches, Error> {
        let target = self.target;
        let mut select = Select {
            filters: if q.is_empty() {
                Vec::new()
            } else {
                vec![Filter {
                    path: vec![self.column],
                    op: Op::Contains,
                    values: vec![Param::Text(q.to_owned())],
                }]
            },
            order: vec![Order::asc(self.column), Order::asc(target.pk)],
            offset: offset(page, per_page),
            ..Select::default()
        };
        crate::sql::search::read_search_keys(conn, target, &mut select)?;
        let columns = [target.pk, self.column];
        let load = |s: &Select| (target.ops.load_fields)(conn, s, &columns);
        let Page { rows, has_next } = Page::read(&mut select, per_page, load)?;
        let rows = rows
            .into_iter()
            .map(|mut r| {
                let text = match r.pop().unwrap_or_default() {
                    Value::String(s) => s,
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                let id = r.pop().unwrap_or_default();
                let text = object_text(text, target.name, &id);
                (id, text)
            })
            .collect();
        Ok(Matches { rows, has_next })
    }
}
