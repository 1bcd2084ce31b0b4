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

/// The bulk delete's label, in its notices.
const DELETE: &str = "Delete";

impl PreparedAdmin {
    /// `POST {prefix}/{name}/`: `action` with the selected `id`s (at most `max_bulk_rows`).
    /// No action chosen (`action` empty) or no row selected leads back to the index with a
    /// notice. Otherwise the action's confirmation page lists the rows (for `delete`, with the
    /// rows the delete would reach); with `confirm=yes`, `delete` deletes them in one
    /// transaction and an application's action runs ([`Self::run_action`]), then back to the
    /// index with what was done; a refused action shows its confirmation page again with the
    /// message.
    pub(crate) fn bulk_action(&self, cx: &Cx<'_>, conn: &mut Conn<'_>) -> Result<Reply, Error> {
        let Some(name) = cx.req.field("action") else {
            return Err(bad_request("choose an action"));
        };
        let back = cx.req.path_and_query();
        if name.is_empty() {
            return Ok(Reply::Done {
                to: back,
                notice: Notice::text("No action was chosen, nothing was done."),
            });
        }
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
        let label = action.map_or(DELETE, |a| a.label.as_str());
        if ids.is_empty() {
            return Ok(Reply::Done {
                to: back,
                notice: Notice::text(format!("{label}: no row was selected, nothing was done.")),
            });
        }
        // The index's form asks for the confirmation page (`confirm=ask`), whose form confirms
        // (`confirm=yes`); a bare bulk delete (`action=delete` and the ids, as a script sends
        // it: docs/admin.md#actions) deletes at once.
        let ask = match cx.req.field("confirm") {
            Some("yes") => false,
            Some(_) => true,
            None => action.is_some(),
        };
        if ask {
            return self.action_page(cx, conn, action, &ids, None);
        }
        let Some(action) = action else {
            let n = (self.model).delete(conn, &cx.req.actor, &ids, self.deletes.recursive)?;
            return Ok(Reply::Done {
                to: back,
                notice: Notice::text(format!("Deleted {n} {} successfully.", self.counted(n))),
            });
        };
        match self.run_action(cx, conn, action, &ids) {
            Ok(notice) => Ok(Reply::Done {
                to: back,
                notice: Notice::text(notice),
            }),
            Err(e) if e.status_code().is_client_error() => {
                self.action_page(cx, conn, Some(action), &ids, Some(e))
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

    /// The confirmation page of `action` (`None`: the bulk delete, with the rows it would
    /// reach) on the rows of `ids`; after a refused run, with its message and status.
    fn action_page(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        action: Option<&PreparedAction>,
        ids: &[i64],
        refused: Option<Error>,
    ) -> Result<Reply, Error> {
        let rows = self.rows_of(conn, ids)?;
        let status = refused
            .as_ref()
            .map_or(StatusCode::OK, ResponseError::status_code);
        let (name, title) = match action {
            Some(a) => (a.name.clone(), a.label.clone()),
            None => ("delete".to_owned(), "Delete the selected rows".to_owned()),
        };
        let keys: Vec<i64> = rows.iter().map(|r| r.pk()).collect();
        let groups = match action {
            None => self.dependents(conn, &keys)?,
            Some(_) => Vec::new(),
        };
        let view = ActionView {
            chrome: self.chrome(cx, vec![Crumb::here(title.clone())]),
            title,
            url: cx.req.path_and_query(),
            action: cx.req.path_and_query(),
            name,
            rows: rows.iter().map(|r| (r.pk(), r.display())).collect(),
            error: refused.map(|e| e.public_message()),
            groups,
            collected: action.is_none() && self.deletes.collect_objects,
            recursive: self.deletes.recursive,
        };
        Ok(Reply::Html(status, self.templates.action(&view)?))
    }
}
