//! The index's bulk form, `POST {prefix}/{name}/`: the bulk delete of the selected rows, and
//! the application's actions ([`Action`]) with their confirmation page.

use actix_web::http::StatusCode;
use actix_web::ResponseError;

use super::action::PreparedAction;
use super::page::Reply;
use super::prepared::{bad_request, Cx, PreparedAdmin};
use super::rights::require;
use super::views::{ActionView, Crumb, Notice};
use crate::db::Conn;
use crate::error::Error;
use crate::history::{self, Entry};
use crate::model::row::Rows;
use crate::query::{Order, Select};

impl PreparedAdmin {
    /// `POST {prefix}/{name}/`: `action` with the selected `id`s (at most `max_bulk_rows`).
    /// `delete` deletes them in one transaction and leads back to the index. An action's name
    /// answers its confirmation page; with `confirm=yes`, the action runs ([`Self::run_action`])
    /// and leads back to the index with what it did, or on a refusal shows the confirmation
    /// page again with the message.
    pub(crate) fn bulk_action(&self, cx: &Cx<'_>, conn: &mut Conn<'_>) -> Result<Reply, Error> {
        let Some(name) = cx.req.field("action") else {
            return Err(bad_request("choose an action"));
        };
        let action = match name {
            "delete" => None,
            _ => Some(
                (self.index.actions.iter())
                    .find(|a| a.name == name)
                    .ok_or_else(|| bad_request(format!("unknown action '{name}'")))?,
            ),
        };
        let rights = self.rights(cx);
        require(action.map_or(rights.delete, |a| rights.allows(a.needs)))?;
        let ids = self.selected(cx)?;
        let back = cx.req.path_and_query();
        let Some(action) = action else {
            if ids.is_empty() {
                return Ok(Reply::Redirect(back));
            }
            let n = (self.model).delete(conn, &cx.req.actor, &ids, self.deletes.recursive)?;
            return Ok(Reply::Done {
                to: back,
                notice: Notice::text(format!("Deleted {n} {} successfully.", self.counted(n))),
            });
        };
        if ids.is_empty() {
            return Ok(Reply::Done {
                to: back,
                notice: Notice::text(format!(
                    "{}: no row was selected, nothing was done.",
                    action.label
                )),
            });
        }
        if cx.req.field("confirm") != Some("yes") {
            return self.action_page(cx, conn, action, &ids, None);
        }
        match self.run_action(cx, conn, action, &ids) {
            Ok(notice) => Ok(Reply::Done {
                to: back,
                notice: Notice::text(notice),
            }),
            Err(e) if e.status_code().is_client_error() => {
                self.action_page(cx, conn, action, &ids, Some(e))
            }
            Err(e) => Err(e),
        }
    }

    /// The primary keys of the selected rows: 400 when one is not a key, or when there are
    /// more than `max_bulk_rows`.
    fn selected(&self, cx: &Cx<'_>) -> Result<Vec<i64>, Error> {
        let ids = (cx.req.form.iter())
            .filter(|(k, _)| k == "id")
            .map(|(_, v)| v.parse::<i64>())
            .collect::<Result<Vec<i64>, _>>()
            .map_err(|_| bad_request("the selected rows are not primary keys"))?;
        let max = self.list.limits.max_bulk_rows;
        if ids.len() > max {
            return Err(bad_request(format!("select at most {max} rows at once")));
        }
        Ok(ids)
    }

    /// The rows of `ids`, key ascending.
    fn rows_of(&self, conn: &mut Conn<'_>, ids: &[i64]) -> Result<Box<dyn Rows>, Error> {
        let pk = self.meta.pk;
        let select = Select {
            order: vec![Order::asc(pk)],
            ..Select::ids_in(pk, ids)
        };
        self.model.load(conn, &select)
    }

    /// Runs `action` once on the rows of `ids` that exist, in one transaction: an error rolls
    /// back all it wrote. Returns the notice of what it did. Every write of an action runs
    /// here; the selected rows' changes (read before and after) go to the history.
    fn run_action(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        action: &PreparedAction,
        ids: &[i64],
    ) -> Result<String, Error> {
        conn.transaction(|conn| {
            let rows = self.rows_of(conn, ids)?;
            if rows.is_empty() {
                return Ok(format!(
                    "{}: the selected rows no longer exist, nothing was done.",
                    action.label
                ));
            }
            let notice = (action.run)(conn, &*rows)?;
            // What the action did to each row goes to the history, as the forms' writes do.
            let pk = self.meta.pk;
            let after = self.rows_of(conn, ids)?;
            let entries: Vec<Entry> = (rows.iter())
                .filter_map(|before| {
                    let key = before.field_json(pk);
                    let now = after.iter().find(|row| row.field_json(pk) == key);
                    Entry::of_rows(self.meta, &cx.req.actor, Some(before), now)
                })
                .collect();
            history::record(conn, &entries)?;
            Ok(match notice.trim() {
                "" => format!(
                    "{}: done for {} {}.",
                    action.label,
                    rows.len(),
                    self.counted(rows.len())
                ),
                _ => notice,
            })
        })
    }

    /// The confirmation page of `action` on the rows of `ids`; after a refused run, with its
    /// message and status.
    fn action_page(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        action: &PreparedAction,
        ids: &[i64],
        refused: Option<Error>,
    ) -> Result<Reply, Error> {
        let rows = self.rows_of(conn, ids)?;
        let status = refused
            .as_ref()
            .map_or(StatusCode::OK, ResponseError::status_code);
        let view = ActionView {
            chrome: self.chrome(cx, vec![Crumb::here(action.label.clone())]),
            title: action.label.clone(),
            url: cx.req.path_and_query(),
            action: cx.req.path_and_query(),
            name: action.name.clone(),
            rows: rows.iter().map(|r| (r.pk(), r.display())).collect(),
            error: refused.map(|e| e.public_message()),
        };
        Ok(Reply::Html(status, self.templates.action(&view)?))
    }
}
