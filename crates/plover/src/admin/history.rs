//! The History page of an object, and the latest changes on the dashboard (docs/admin.md#history),
//! read from the table the writes are recorded in ([`crate::history`]).

use std::sync::Arc;

use actix_web::http::StatusCode;

use super::names::object_text;
use super::page::{plain_text, Reply};
use super::prepared::{AdminModel, Cx, PreparedAdmin};
use super::views::{ChangeLine, Crumb, HistoryItem, HistoryView};
use crate::db::Conn;
use crate::error::Error;
use crate::history::{explained, HistoryEntry, MASK};
use crate::listing::{offset, positive, Links, Page, PAGE};
use crate::model::RestModel;
use crate::query::{Filter, Op, Order, Param, Select};

/// Entries a History page shows.
const PER_PAGE: i64 = 50;

/// Entries the dashboard lists.
const RECENT: i64 = 10;

/// One of the latest changes on the dashboard.
pub(super) struct RecentChange {
    /// When, `YYYY-MM-DD HH:MM:SS` UTC.
    pub(super) when: String,
    /// Who (`None`: anonymous).
    pub(super) user: Option<String>,
    /// `add`, `change` or `delete`.
    pub(super) action: String,
    /// The model admin's name.
    pub(super) model: String,
    /// The object's text when it was recorded.
    pub(super) object: String,
    /// The object's History page.
    pub(super) history: String,
}

/// The condition `field = value` on a history entry's own field.
fn equals(field: crate::model::Field<HistoryEntry>, value: Param) -> Filter {
    Filter {
        path: vec![field.index()],
        op: Op::Eq,
        values: vec![value],
    }
}

fn when(entry: &HistoryEntry) -> String {
    entry.created.format("%Y-%m-%d %H:%M:%S").to_string()
}

impl PreparedAdmin {
    /// `GET {prefix}/{name}/{pk}/history/?page=n`: the entries of the row `pk`, newest first,
    /// [`PER_PAGE`] a page, also for a row that was deleted; 404 for a key that names no row
    /// and has no history. Two queries: the page of entries (by the index over table, key and
    /// id) and the row.
    pub(crate) fn history_view(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        raw_pk: &str,
    ) -> Result<Reply, Error> {
        let pk = raw_pk.parse::<i64>().map_err(|_| Error::NotFound)?;
        let page = positive(PAGE, cx.req.param(PAGE))?.unwrap_or(1);
        let f = HistoryEntry::FIELDS;
        let mut select = Select {
            filters: vec![
                equals(f.object_table, Param::Text(self.meta.table.to_owned())),
                equals(f.object_id, Param::Int(pk)),
            ],
            order: vec![Order::desc(f.id.index())],
            offset: offset(page, PER_PAGE),
            ..Select::default()
        };
        let load = |s: &Select| HistoryEntry::load(conn, s).map_err(explained);
        let Page {
            rows: entries,
            has_next,
        } = Page::read(&mut select, PER_PAGE, load)?;
        let row = self.model.load_pk(conn, pk)?;
        let text = match (&row, entries.first()) {
            (Some(row), _) => row.display(),
            (None, Some(entry)) => object_text(entry.object_text.clone(), self.meta.name, pk),
            (None, None) if page == 1 => return Err(Error::NotFound),
            (None, None) => format!("{} #{pk}", self.name),
        };
        // What the forms hide, the History page does not show either.
        let meta = self.meta;
        let shown = |name: &str| {
            (self.forms.fields.iter()).any(|&i| meta.fields[i].name == name)
                || meta.pk_field().name == name
        };
        let items = entries
            .iter()
            .map(|entry| HistoryItem {
                when: when(entry),
                user: entry.username.clone(),
                source: entry.source.clone(),
                action: entry.action.clone(),
                changes: (entry.field_changes().into_iter())
                    .map(|c| {
                        let text = |value: serde_json::Value| {
                            if shown(&c.field) {
                                plain_text(&value)
                            } else {
                                MASK.to_owned()
                            }
                        };
                        ChangeLine {
                            old: c.old.map(text),
                            new: c.new.map(text),
                            // A field since removed from the model keeps its stored name.
                            field: meta
                                .field(&c.field)
                                .map_or(c.field, |(_, f)| f.verbose_name.to_owned()),
                        }
                    })
                    .collect(),
            })
            .collect();
        let url = self.url(cx);
        let here = format!("{url}{pk}/history/");
        // The page is the History page's one parameter, beside the index's place.
        let place = self.place_param(cx);
        let links = Links::admin(&here, &place);
        let edit = self.keeping_place(cx, &format!("{url}{pk}/"));
        let trail = vec![
            match &row {
                Some(_) => Crumb::link(text.clone(), edit.clone()),
                None => Crumb::here(text.clone()),
            },
            Crumb::here("History"),
        ];
        let view = HistoryView {
            chrome: self.chrome(cx, trail),
            title: format!("History of {text}"),
            edit: row.map(|_| edit),
            url: self.list_place(cx),
            entries: items,
            page,
            previous: links.page(page - 1),
            next: has_next
                .then(|| links.page(page.saturating_add(1)))
                .flatten(),
        };
        Ok(Reply::Html(StatusCode::OK, self.templates.history(&view)?))
    }
}

/// The [`RECENT`] latest changes to the rows of `models`, newest first, each linked to its
/// History page under `prefix`: one query, read backwards along the primary key.
pub(super) fn recent(
    models: &[Arc<dyn AdminModel>],
    prefix: &str,
    conn: &mut Conn<'_>,
) -> Result<Vec<RecentChange>, Error> {
    let mut tables: Vec<&'static str> = models.iter().map(|m| m.table()).collect();
    tables.sort_unstable();
    tables.dedup();
    if tables.is_empty() {
        return Ok(Vec::new());
    }
    let f = HistoryEntry::FIELDS;
    let select = Select {
        filters: vec![Filter {
            path: vec![f.object_table.index()],
            op: Op::In,
            values: tables
                .iter()
                .map(|t| Param::Text((*t).to_owned()))
                .collect(),
        }],
        order: vec![Order::desc(f.id.index())],
        limit: Some(RECENT),
        ..Select::default()
    };
    let entries = HistoryEntry::load(conn, &select).map_err(explained)?;
    Ok(entries
        .iter()
        .filter_map(|entry| {
            // The first admin of the model names it (models may be registered twice).
            let model = models.iter().find(|m| m.table() == entry.object_table)?;
            Some(RecentChange {
                when: when(entry),
                user: entry.username.clone(),
                action: entry.action.clone(),
                model: model.name().to_owned(),
                object: object_text(entry.object_text.clone(), model.name(), entry.object_id),
                history: format!("{prefix}/{}/{}/history/", model.name(), entry.object_id),
            })
        })
        .collect())
}
