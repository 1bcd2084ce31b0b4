//! The index of a model: columns, sorting, REST-syntax filters, pages, and the form of the
//! bulk actions (bulk.rs).

use std::collections::HashMap;

use actix_web::http::StatusCode;

use super::facets::{RowCount, FACETS};
use super::page::{display_value, Reply};
use super::prepared::{Cx, PreparedAdmin, PreparedColumn};
use super::views::{ActiveFilter, FilterKey, Header, IndexView, Row};
use crate::db::Conn;
use crate::error::Error;
use crate::listing::{allowed, is_filter, NOT, OR, ORDERING, PAGE, SEARCH};
use crate::model::RestModel;
use crate::query::Select;
use crate::sql::{count, count_up_to, estimate};
use crate::urlencoded::{encode, link};

impl<M: RestModel> PreparedAdmin<M> {
    /// `GET {prefix}/{name}/`.
    pub(crate) fn index_page(&self, cx: &Cx<'_>, conn: &mut Conn<'_>) -> Result<Reply, Error> {
        let meta = M::meta();
        // The filter form sends `_fk` (a `field__op` key) and `_fv` (its value): back to the
        // index with that filter added, in the REST syntax.
        if let Some(key) = cx.req.param("_fk") {
            let kept =
                (cx.req.query.iter()).filter(|(k, _)| !matches!(k.as_str(), "_fk" | "_fv" | PAGE));
            let value = cx.req.param("_fv").unwrap_or_default();
            return Ok(Reply::Redirect(link(&self.url(cx), kept, (key, value))));
        }
        // `_facets` asks for the facets' counts: kept in every link, never a filter.
        let counting = self.facets.counting(&cx.req.query)?;
        let conditions: Vec<(String, String)> = (cx.req.query.iter())
            .filter(|(k, _)| k != FACETS)
            .cloned()
            .collect();
        let query = self.list.parse(&conditions, &())?;
        let count = self.row_count(conn, &query.select.conditions_only())?;
        let mut rows = M::load(conn, &query.select)?;
        let has_next = rows.len() as i64 > query.limit;
        rows.truncate(query.limit as usize);

        let mut columns: Vec<Vec<String>> = Vec::with_capacity(self.columns.len());
        for column in &self.columns {
            columns.push(match column {
                PreparedColumn::Field(idx) => self.field_cells(conn, &rows, *idx)?,
                PreparedColumn::Computed(_, value) => rows.iter().map(|r| value(r)).collect(),
                PreparedColumn::Page(title, values) => {
                    let cells = values(conn, &rows)?;
                    if cells.len() != rows.len() {
                        return Err(Error::Internal(format!(
                            "column {title} gave {} values for {} rows",
                            cells.len(),
                            rows.len()
                        )));
                    }
                    cells
                }
            });
        }
        let url = self.url(cx);
        let table_rows = rows
            .iter()
            .enumerate()
            .map(|(n, row)| Row {
                pk: row.pk(),
                cells: columns.iter().map(|c| c[n].clone()).collect(),
                edit: format!("{url}{}/", row.pk()),
            })
            .collect();

        let pairs = &cx.req.query;
        let ordering = cx.req.param(ORDERING).unwrap_or_default();
        // This index with `key` set to `value`, on its first page (but for a page link).
        let with = |key: &str, value: &str| {
            let kept = pairs.iter().filter(|(k, _)| k != key && k != PAGE);
            link(&url, kept, (key, value))
        };
        let headers = self
            .columns
            .iter()
            .map(|c| match c {
                PreparedColumn::Field(idx) => {
                    let name = meta.fields[*idx].name;
                    let sorted = if ordering == name {
                        "asc"
                    } else if ordering.strip_prefix('-') == Some(name) {
                        "desc"
                    } else {
                        ""
                    };
                    let next = if sorted == "asc" {
                        format!("-{name}")
                    } else {
                        name.to_owned()
                    };
                    Header {
                        title: name.to_owned(),
                        sort: Some(with(ORDERING, &next)),
                        sorted,
                    }
                }
                PreparedColumn::Computed(title, _) | PreparedColumn::Page(title, _) => Header {
                    title: title.clone(),
                    sort: None,
                    sorted: "",
                },
            })
            .collect();
        // Filters and groups are chips; the search has its box. All of them go to the export
        // (and `_facets`, which the export ignores).
        let condition = |k: &str| (is_filter(k) && k != FACETS) || k == OR || k == NOT;
        let filters = pairs
            .iter()
            .enumerate()
            .filter(|(_, (k, _))| condition(k))
            .map(|(i, (k, v))| {
                let rest: Vec<(String, String)> = pairs
                    .iter()
                    .enumerate()
                    .filter(|(j, (key, _))| *j != i && key != PAGE)
                    .map(|(_, p)| p.clone())
                    .collect();
                ActiveFilter {
                    key: k.clone(),
                    value: v.clone(),
                    remove: format!("{url}?{}", encode(&rest)),
                }
            })
            .collect();
        let page_link = |page: i64| with(PAGE, &page.to_string());
        let filter_query: Vec<(String, String)> = pairs
            .iter()
            .filter(|(k, _)| condition(k) || k == SEARCH || k == FACETS)
            .cloned()
            .collect();
        let facets = (self.facets).views(conn, meta, &self.list, &url, pairs, counting)?;
        let view = IndexView {
            chrome: cx.chrome.clone(),
            title: self.name.clone(),
            name: self.name.clone(),
            headers,
            rows: table_rows,
            filters,
            filter_keys: self.filter_keys(cx),
            keep: pairs.iter().filter(|(k, _)| k != PAGE).cloned().collect(),
            search: (!self.list.search.is_empty())
                .then(|| cx.req.param(SEARCH).unwrap_or_default().to_owned()),
            search_keep: (pairs.iter())
                .filter(|(k, _)| k != PAGE && k != SEARCH)
                .cloned()
                .collect(),
            page: query.page,
            previous: (query.page > 1).then(|| page_link(query.page - 1)),
            next: has_next.then(|| page_link(query.page.saturating_add(1))),
            action: cx.req.path_and_query(),
            actions: (self.actions.iter())
                .map(|a| (a.name.clone(), a.label.clone()))
                .collect(),
            import: format!("{url}import/"),
            export: if filter_query.is_empty() {
                format!("{url}export/")
            } else {
                format!("{url}export/?{}", encode(&filter_query))
            },
            count_text: count.text(&self.name),
            count,
            facets,
            facets_counted: counting,
            facets_toggle: self.facets.toggle(&url, pairs, counting),
            url,
        };
        Ok(Reply::Html(StatusCode::OK, self.templates.index(&view)?))
    }

    /// The rows a selection's conditions match. On PostgreSQL, exact up to
    /// `count_exact_up_to` (a count that stops one row after it), above it the planner's
    /// estimate (never below the bound); on SQLite, which has no estimate, one exact count.
    fn row_count(&self, conn: &mut Conn<'_>, select: &Select) -> Result<RowCount, Error> {
        let meta = M::meta();
        if conn.engine() == crate::db::Engine::Sqlite {
            return Ok(RowCount {
                rows: count(conn, meta, select)?,
                estimated: false,
            });
        }
        let bound = self.count_exact_up_to;
        let rows = count_up_to(conn, meta, select, bound.saturating_add(1))?;
        Ok(if rows <= bound {
            RowCount {
                rows,
                estimated: false,
            }
        } else {
            RowCount {
                rows: estimate(conn, meta, select)?.max(rows),
                estimated: true,
            }
        })
    }

    /// The cells of a field column: the value, or for a foreign key the related row's text
    /// (one query for the page).
    fn field_cells(
        &self,
        conn: &mut Conn<'_>,
        rows: &[M],
        idx: usize,
    ) -> Result<Vec<String>, Error> {
        let field = self.field(idx);
        let values: Vec<serde_json::Value> = rows.iter().map(|r| r.field_json(idx)).collect();
        let Some(target) = field.fk.map(|t| t()) else {
            return Ok(values.iter().map(display_value).collect());
        };
        let ids: Vec<i64> = values
            .iter()
            .filter_map(serde_json::Value::as_i64)
            .collect();
        let texts: HashMap<i64, String> = if ids.is_empty() {
            HashMap::new()
        } else {
            (target.ops.load_display)(conn, &Select::ids_in(target.pk, &ids))?
                .into_iter()
                .collect()
        };
        Ok(values
            .iter()
            .map(|v| match v.as_i64() {
                Some(id) => texts.get(&id).cloned().unwrap_or_else(|| id.to_string()),
                None => String::new(),
            })
            .collect())
    }

    /// The `field__op` keys the filter form offers: every filterable field with the operators
    /// of its type; the keys that take one related row's key carry the field's lookup.
    fn filter_keys(&self, cx: &Cx<'_>) -> Vec<FilterKey> {
        use crate::model::FieldKind;
        let meta = M::meta();
        let mut keys = Vec::new();
        for (idx, field) in meta.fields.iter().enumerate() {
            if !allowed(&self.list, &[idx], &()) {
                continue;
            }
            let ops: &[&str] = match field.kind {
                FieldKind::Text => &["eq", "ne", "like", "ilike", "in"],
                FieldKind::Bool => &["eq"],
                _ => &["eq", "ne", "lt", "lte", "gt", "gte", "in"],
            };
            let lookup = self
                .lookups
                .contains_key(&idx)
                .then(|| self.lookup_url(cx, field));
            for op in ops {
                keys.push(FilterKey {
                    key: if *op == "eq" {
                        field.name.to_owned()
                    } else {
                        format!("{}__{op}", field.name)
                    },
                    lookup: lookup.clone().filter(|_| matches!(*op, "eq" | "ne")),
                });
            }
            if field.nullable {
                keys.push(FilterKey {
                    key: format!("{}__is", field.name),
                    lookup: None,
                });
            }
        }
        keys
    }
}
