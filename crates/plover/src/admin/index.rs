//! The index of a model: columns, sorting, REST-syntax filters, pages, and the form of the
//! bulk actions (bulk.rs).

use std::borrow::Cow;
use std::collections::HashMap;

use actix_web::http::StatusCode;

use super::facets::{is_facet_search, FACETS};
use super::page::{display_value, Reply};
use super::prepared::{Cx, PreparedAdmin, PreparedColumn, CHANGELIST};
use super::views::{ActiveFilter, FilterKey, Header, IndexView, Row};
use crate::db::Conn;
use crate::error::Error;
use crate::listing::links::with_query;
use crate::listing::page::RowCount;
use crate::listing::{
    allowed, first, is_filter, positive, Links, LIMIT, NOT, OR, ORDERING, SEARCH,
};
use crate::model::row::Rows;
use crate::model::FieldKind;
use crate::query::{Order, Select};

/// The parameters of the filter form: a `field__op` key and its value.
const FILTER_KEY: &str = "_fk";
const FILTER_VALUE: &str = "_fv";

impl PreparedAdmin {
    /// `GET {prefix}/{name}/`.
    pub(crate) fn index_page(&self, cx: &Cx<'_>, conn: &mut Conn<'_>) -> Result<Reply, Error> {
        let meta = self.meta;
        let url = self.url(cx);
        let (limit, refused) = self.page_size(&cx.req.query)?;
        // A refused `limit`, and the facets' searches (their facets list what they found), are
        // left out of the page's links.
        let dropped = |k: &str| (refused.is_some() && k == LIMIT) || is_facet_search(k);
        let pairs: Cow<'_, [(String, String)]> = match cx.req.query.iter().any(|(k, _)| dropped(k))
        {
            true => (cx.req.query.iter())
                .filter(|(k, _)| !dropped(k))
                .cloned()
                .collect(),
            false => Cow::Borrowed(&cx.req.query),
        };
        let searches: Vec<(String, String)> = (cx.req.query.iter())
            .filter(|(k, _)| is_facet_search(k))
            .cloned()
            .collect();
        let links = Links::admin(&url, &pairs);
        // The filter form sends `_fk` (a `field__op` key) and `_fv` (its value): back to the
        // index with that filter added, in the REST syntax.
        if let Some(key) = links.param(FILTER_KEY) {
            let value = links.param(FILTER_VALUE).unwrap_or_default();
            let form = |k: &str| k != FILTER_KEY && k != FILTER_VALUE;
            return Ok(Reply::Redirect(links.adding(form, key, value)));
        }
        // `_facets` asks for the facets' counts: kept in every link, never a filter.
        let counting = self.index.facets.counting(&pairs)?;
        let mut conditions: Vec<(String, String)> = (pairs.iter())
            .filter(|(k, _)| k != FACETS && k != LIMIT)
            .cloned()
            .collect();
        conditions.push((LIMIT.to_owned(), limit.to_string()));
        if let (Some(ordering), None) = (&self.index.ordering, links.param(ORDERING)) {
            conditions.push((ORDERING.to_owned(), ordering.clone()));
        }
        let conditions = self.scoped(&conditions);
        let mut query = self.list.parse(&conditions, &())?;
        query.count = Some(self.index.count);
        let page = query.run_with(conn, self.meta, |conn, s| self.model.load(conn, s))?;
        let count = (page.count).ok_or_else(|| Error::Internal("the index is counted".into()))?;
        // Each row's edit page carries this page's place, to come back to it after a save.
        let place = match pairs.is_empty() {
            true => Vec::new(),
            false => vec![(CHANGELIST.to_owned(), with_query(&url, &pairs))],
        };
        let rows = self.rows(conn, &*page.rows, &url, &place)?;
        let show_all = self.show_all(&count, limit, &links);
        // Filters and groups are chips; the search has its box. All of them go to the export
        // (and `_facets`, which the export ignores).
        let condition = |k: &str| (is_filter(k) && k != FACETS) || k == OR || k == NOT;
        let active: Vec<(usize, &(String, String))> = (pairs.iter().enumerate())
            .filter(|(_, (k, _))| condition(k))
            .collect();
        let shown: Vec<(String, String)> = active.iter().map(|(_, p)| (*p).clone()).collect();
        let texts = self.filter_texts(conn, &shown)?;
        let filters = (active.into_iter().zip(texts))
            .map(|((i, (k, v)), text)| ActiveFilter {
                key: k.clone(),
                value: v.clone(),
                text,
                remove: links.without(i),
            })
            .collect();
        let filter_query: Vec<(String, String)> = (pairs.iter())
            .filter(|(k, _)| condition(k) || k == SEARCH || k == FACETS)
            .cloned()
            .collect();
        let facets =
            (self.index.facets).views(conn, meta, &self.list, &links, counting, &searches)?;
        let rights = self.rights(cx);
        let view = IndexView {
            chrome: self.chrome(cx, Vec::new()),
            title: self.meta.verbose_name_plural.to_owned(),
            name: self.name.clone(),
            singular: self.singular(),
            headers: self.headers(&page.query.select.order[..page.query.ordered], &links),
            rows,
            filters,
            filter_keys: self.filter_keys(cx),
            keep: links.kept().cloned().collect(),
            search: (!self.list.search.is_empty())
                .then(|| links.param(SEARCH).unwrap_or_default().to_owned()),
            search_keep: (links.kept())
                .filter(|(k, _)| k != SEARCH)
                .cloned()
                .collect(),
            page: page.query.page,
            previous: page.previous(&links),
            next: page.next(&links),
            action: cx.req.path_and_query(),
            actions: (self.index.actions.iter())
                .filter(|a| rights.allows(a.needs))
                .map(|a| (a.name.clone(), a.label.clone()))
                .collect(),
            import: with_query(&format!("{url}import/"), &place),
            export: with_query(
                &format!("{url}export/"),
                &[filter_query, place.clone()].concat(),
            ),
            count_text: count.text(&self.singular(), &self.counted(2)),
            count,
            facets,
            facets_counted: counting,
            facets_toggle: self.index.facets.toggle(&links, counting),
            read_only: self.read_only || !rights.change,
            can_add: rights.add,
            can_delete: rights.delete,
            add: with_query(&format!("{url}add/"), &place),
            url,
            show_all,
            limit_refused: refused.clone(),
        };
        let status = match refused {
            Some(_) => StatusCode::BAD_REQUEST,
            None => StatusCode::OK,
        };
        Ok(Reply::Html(status, self.templates.index(&view)?))
    }

    /// Rows a page for the request's `query`: its `limit` up to `list_max_show_all`, else
    /// `list_per_page`; with a `limit` over the bound, also the message saying it was refused.
    /// A `limit` that is not an integer from 1 is a 400, as a bad filter is.
    fn page_size(&self, query: &[(String, String)]) -> Result<(i64, Option<String>), Error> {
        let (per_page, max) = (self.index.per_page, self.index.max_show_all);
        Ok(match positive(LIMIT, first(query, LIMIT))? {
            Some(n) if n > max => (
                per_page,
                Some(format!(
                    "limit={n} was refused: this list shows at most {max} rows a page. \
                     Showing {per_page} a page."
                )),
            ),
            Some(n) => (n, None),
            None => (per_page, None),
        })
    }

    /// The "Show all" link: while the rows matched (counted exactly) are more than a page of
    /// `limit` but at most `list_max_show_all`.
    fn show_all(&self, count: &RowCount, limit: i64, links: &Links<'_>) -> Option<String> {
        let max = self.index.max_show_all;
        (!count.estimated && count.rows > limit && count.rows <= max)
            .then(|| links.with(LIMIT, &max.to_string()))
    }

    /// The rows of the table: each column's cells, and the link to the row's edit page.
    fn rows(
        &self,
        conn: &mut Conn<'_>,
        rows: &dyn Rows,
        url: &str,
        place: &[(String, String)],
    ) -> Result<Vec<Row>, Error> {
        let mut columns: Vec<Vec<String>> = Vec::with_capacity(self.index.columns.len());
        for column in &self.index.columns {
            columns.push(match column {
                PreparedColumn::Field(idx) => self.field_cells(conn, rows, *idx)?,
                PreparedColumn::Computed(_, value) => rows.iter().map(|r| value(r)).collect(),
                PreparedColumn::Page(title, values) => {
                    let cells = values(conn, rows)?;
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
        Ok((rows.iter().enumerate())
            .map(|(n, row)| Row {
                pk: row.pk(),
                cells: columns.iter().map(|c| c[n].clone()).collect(),
                edit: with_query(&format!("{url}{}/", row.pk()), place),
            })
            .collect())
    }

    /// The column headers: a field's sorts by it (descending when the index is sorted by it
    /// ascending), and shows the direction of `ordering` (the terms the request's `ordering`
    /// named) when it names this field alone.
    fn headers(&self, ordering: &[Order], links: &Links<'_>) -> Vec<Header> {
        let meta = self.meta;
        let sorted_by = match ordering {
            [term] if term.through.is_empty() => Some(term),
            _ => None,
        };
        (self.index.columns.iter())
            .map(|c| match c {
                PreparedColumn::Field(idx) => {
                    let name = meta.fields[*idx].name;
                    let sorted = match sorted_by {
                        Some(term) if term.field == *idx && term.desc => "desc",
                        Some(term) if term.field == *idx => "asc",
                        _ => "",
                    };
                    let next = if sorted == "asc" {
                        format!("-{name}")
                    } else {
                        name.to_owned()
                    };
                    Header {
                        title: meta.fields[*idx].verbose_name.to_owned(),
                        sort: Some(links.with(ORDERING, &next)),
                        sorted,
                        nowrap: matches!(
                            meta.fields[*idx].kind,
                            FieldKind::Date | FieldKind::DateTime
                        ),
                    }
                }
                PreparedColumn::Computed(title, _) | PreparedColumn::Page(title, _) => Header {
                    title: title.clone(),
                    sort: None,
                    sorted: "",
                    nowrap: false,
                },
            })
            .collect()
    }

    /// The cells of a field column: the value, or for a foreign key the related row's text
    /// (one query for the page).
    fn field_cells(
        &self,
        conn: &mut Conn<'_>,
        rows: &dyn Rows,
        idx: usize,
    ) -> Result<Vec<String>, Error> {
        let field = self.field(idx);
        let values: Vec<serde_json::Value> = rows.iter().map(|r| r.field_json(idx)).collect();
        let Some(target) = field.target() else {
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
        let meta = self.meta;
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
                .by_field
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
