//! The delete page: the row, the rows a delete would reach, and the confirmation; the delete
//! is recorded in the history.

use actix_web::http::StatusCode;

use super::page::Reply;
use super::prepared::{Cx, PreparedAdmin};
use super::views::{Crumb, DeleteView, Group, Notice};
use crate::db::Conn;
use crate::error::Error;
use crate::model::row::Row;
use crate::query::Select;
use crate::sql::cascade::collect_dependents;

/// Most rows listed per group; the rest are counted.
const LISTED: usize = 100;

impl PreparedAdmin {
    /// `GET|POST {prefix}/{name}/{pk}/delete/`.
    pub(crate) fn delete_view(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        row: Box<dyn Row>,
    ) -> Result<Reply, Error> {
        let pk = row.pk();
        if cx.req.post {
            let recursive = self.deletes.recursive;
            if (self.model).delete(conn, &cx.req.actor, &[pk], recursive)? == 0 {
                return Err(Error::NotFound); // a concurrent delete came first
            }
            let notice = Notice::about(&self.singular(), row.display(), None, "deleted", "");
            return Ok(Reply::Done {
                to: self.list_place(cx),
                notice,
            });
        }
        let groups = self.dependents(conn, &[pk])?;
        let url = self.url(cx);
        let trail = vec![
            Crumb::link(
                row.display(),
                self.keeping_place(cx, &format!("{url}{pk}/")),
            ),
            Crumb::here("Delete"),
        ];
        let view = DeleteView {
            chrome: self.chrome(cx, trail),
            title: format!("Delete {}", row.display()),
            display: row.display(),
            action: self.keeping_place(cx, &format!("{url}{pk}/delete/")),
            url: self.list_place(cx),
            groups,
            collected: self.deletes.collect_objects,
            recursive: self.deletes.recursive,
        };
        Ok(Reply::Html(StatusCode::OK, self.templates.delete(&view)?))
    }

    /// The rows a delete of `ids` would reach, by model (none when the model admin does not
    /// collect them): at most 100 listed a model, the rest counted.
    pub(crate) fn dependents(&self, conn: &mut Conn<'_>, ids: &[i64]) -> Result<Vec<Group>, Error> {
        let mut groups = Vec::new();
        if !self.deletes.collect_objects || ids.is_empty() {
            return Ok(groups);
        }
        for dependents in collect_dependents(conn, self.meta, ids)? {
            let shown = &dependents.ids[..dependents.ids.len().min(LISTED)];
            let model = dependents.model;
            let rows = (model.ops.load_display)(conn, &Select::ids_in(model.pk, shown))?;
            groups.push(Group {
                model: model.verbose_name_plural.to_owned(),
                deleted: !dependents.nullified,
                rows: rows.into_iter().map(|(_, text)| text).collect(),
                more: dependents.ids.len() - shown.len(),
            });
        }
        Ok(groups)
    }
}
