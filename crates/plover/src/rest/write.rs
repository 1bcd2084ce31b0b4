//! The writes of one record, and of a bulk create (docs/contract.md#endpoints): POST, PUT or
//! PATCH and DELETE on a record, each in one transaction; and what every write of the
//! resource shares (a record as a conditional write finds it, the foreign keys given checked,
//! the history recorded).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::body::{Body, ToSave};
use super::conditional;
use super::hooks::Context;
use super::idempotency::Once;
use super::prepared::{Core, Prepared};
use super::relation::{CreatedChildren, NewChildren};
use super::request::{ApiRequest, Reply};
use crate::db::{Conn, LazyConn};
use crate::error::Error;
use crate::history::{self, Actor, Entry};
use crate::model::{check_reference, save, RestModel};
use crate::sql::cascade::delete_rows;
use crate::sql::rows_locked;

impl<M: RestModel> Prepared<M> {
    /// Checks that every foreign key given refers to an existing row (400 on the sent key).
    pub(super) fn check_references(conn: &mut Conn<'_>, item: &ToSave<M>) -> Result<(), Error> {
        let meta = M::meta();
        for (idx, key) in &item.sent {
            if let Some(id) = M::change(&item.changes, *idx).and_then(|v| v.as_key()) {
                check_reference(conn, &meta.fields[*idx], key, id)?;
            }
        }
        Ok(())
    }

    /// `POST {prefix}/{name}/`: one object (with its nested children), or the objects of a
    /// bulk create; an idempotency key replays the answer of its first request.
    pub(super) fn create(
        &self,
        cx: &Context<'_>,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
        body: Option<Result<Body<M>, Error>>,
        once: Result<Once, Error>,
    ) -> Result<Reply, Error> {
        if !self.hooks.check_post(cx) {
            return Err(Error::Forbidden);
        }
        // The idempotency key after the checks, so that a replay answers only its own client.
        let once = once?;
        if let Some(replay) = once.replay(db)? {
            return Ok(replay);
        }
        let (mut item, children) = match body.unwrap_or_else(|| self.read_create(req))? {
            Body::One(parsed) => (self.changes_to_save(cx, db, parsed)?, NewChildren::none()),
            Body::Parent(data) => self.parse_create(cx, db, data)?,
            Body::Many(items) => return self.create_many(cx, db, items, &once),
        };
        if let Some((user, idx)) = self.owner_user(cx)? {
            self.hooks.set_owner(&mut item.changes, user, idx)?;
        }
        once.write(db, |conn| {
            Self::check_references(conn, &item)?;
            let row = save::<M>(conn, item.changes, None)?;
            self.record(cx, conn, None, Some(&row))?;
            let pk = row.pk();
            let children = children.write(cx, conn, pk)?;
            let location = format!("{}{}/", req.list_path, pk);
            let body = children.add_to(self.one(cx, conn, row)?);
            Ok(Reply::created(body, Some(location)))
        })
    }

    /// `PUT` or `PATCH` on a record: the body's changes saved on `obj`.
    pub(super) fn edit(
        &self,
        cx: &Context<'_>,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
        obj: M,
        body: Option<Result<Body<M>, Error>>,
    ) -> Result<Reply, Error> {
        self.check_owner(cx, &obj)?;
        if !self.hooks.check_put(cx, &obj) {
            return Err(Error::Forbidden);
        }
        self.check_if_match_sent(req)?;
        let item = self.changes_to_save(cx, db, self.one_body(req, body)?)?;
        let obj = db.write(|conn| {
            let obj = self.current(cx, req, conn, obj)?;
            Self::check_references(conn, &item)?;
            let row = save::<M>(conn, item.changes, Some(&obj))?;
            self.record(cx, conn, Some(&obj), Some(&row))?;
            self.one(cx, conn, row)
        })?;
        Ok(Reply::ok(obj))
    }

    /// `DELETE` on a record: `obj` deleted (dependent rows too, or 409, as
    /// `delete_recursive` says).
    pub(super) fn remove(
        &self,
        cx: &Context<'_>,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
        obj: M,
    ) -> Result<Reply, Error> {
        self.check_owner(cx, &obj)?;
        if !self.hooks.check_delete(cx, &obj) {
            return Err(Error::Forbidden);
        }
        self.check_if_match_sent(req)?;
        let ids = [obj.pk()];
        let delete = |conn: &mut Conn<'_>| match self.actor(cx) {
            Some(actor) => history::delete::<M>(conn, &actor, &ids, self.writes.delete_recursive),
            None => delete_rows(conn, M::meta(), &ids, self.writes.delete_recursive),
        };
        let deleted = if conditional::is_conditional(&req.headers) {
            db.write(|conn| {
                self.current(cx, req, conn, obj)?;
                delete(conn)
            })?
        } else {
            delete(&mut db.conn()?)?
        };
        if deleted == 0 {
            return Err(Error::NotFound); // a concurrent delete came first
        }
        Ok(Reply::ok(br#"{"deleted":1}"#.to_vec()))
    }

    /// A bulk create (docs/contract.md#bulk-writes): every object parsed, given to the
    /// hooks' `save_object` and stamped with the owner, then all written in one transaction,
    /// each through the write path of a single create in a savepoint, so that every object's
    /// errors are found; any error and nothing is written (400 with `items`, by index).
    /// Answers 201 with the created objects, in the body's order. An object's nested
    /// children are parsed and written with it (their errors by path under its index).
    fn create_many(
        &self,
        cx: &Context<'_>,
        db: &mut LazyConn<'_>,
        items: Vec<Map<String, Value>>,
        once: &Once,
    ) -> Result<Reply, Error> {
        let mut errors = BTreeMap::new();
        let mut parsed = Vec::with_capacity(items.len());
        let owner = self.owner_user(cx)?;
        for (index, data) in items.into_iter().enumerate() {
            // Parsing may hash a password per object: none more once the client has gone.
            crate::db::cancel::stop_if_client_gone()?;
            let item = self.parse_create(cx, db, data);
            let item = item.and_then(|(mut item, children)| {
                if let Some((user, idx)) = owner {
                    self.hooks.set_owner(&mut item.changes, user, idx)?;
                }
                Ok((item, children))
            });
            match item {
                Ok(item) => parsed.push(item),
                Err(e) => {
                    errors.insert(index, e.item_fields().ok_or(e)?);
                }
            }
        }
        if !errors.is_empty() {
            return Err(Error::Items(errors));
        }
        // Usernames are checked against one read of the user table, not one per object.
        once.write(db, |conn| {
            crate::model::usernames::in_bulk(|| {
                let mut rows = Vec::with_capacity(parsed.len());
                let mut created = Vec::with_capacity(parsed.len());
                for (index, (item, children)) in parsed.into_iter().enumerate() {
                    crate::db::cancel::stop_if_client_gone()?;
                    let saved = conn.transaction(|conn| {
                        Self::check_references(conn, &item)?;
                        let row = save::<M>(conn, item.changes, None)?;
                        self.record(cx, conn, None, Some(&row))?;
                        let children = children.write(cx, conn, row.pk())?;
                        Ok((row, children))
                    });
                    match saved {
                        Ok((row, children)) => {
                            rows.push(row);
                            created.push(children);
                        }
                        Err(e) => {
                            errors.insert(index, e.item_fields().ok_or(e)?);
                        }
                    }
                }
                if !errors.is_empty() {
                    return Err(Error::Items(std::mem::take(&mut errors)));
                }
                let objects = self.serialize(cx, conn, &rows, None, b"[".to_vec())?;
                let mut body = if self.writes.children.is_empty() {
                    objects.buf
                } else {
                    CreatedChildren::add_to_each(objects, created)
                };
                body.push(b']');
                Ok(Reply::created(body, None))
            })
        })
    }

    /// The row `obj` as a write about to change it finds it, in the write's transaction: for
    /// a conditional request, read again (and locked on PostgreSQL) and checked against
    /// `If-Match` / `If-None-Match` by the `ETag` of its current representation (412 when it
    /// changed since the client read it; 404 when it is gone); else `obj` as read before.
    fn current(
        &self,
        cx: &Context<'_>,
        req: &ApiRequest,
        conn: &mut Conn<'_>,
        obj: M,
    ) -> Result<M, Error> {
        if !conditional::is_conditional(&req.headers) {
            return Ok(obj);
        }
        let mut rows: Vec<M> = rows_locked(conn, M::meta(), &[obj.pk()])?;
        let current = rows.pop().ok_or(Error::NotFound)?;
        let shown = self.serialize(cx, conn, std::slice::from_ref(&current), None, Vec::new())?;
        conditional::check_write(&req.headers, &crate::http::digest::tag(&shown.buf))?;
        Ok(current)
    }

    /// Records a write of this resource in the history, if it keeps one (`before`/`after` as
    /// [`Entry::of`]).
    pub(super) fn record(
        &self,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        before: Option<&M>,
        after: Option<&M>,
    ) -> Result<(), Error> {
        match self.actor(cx) {
            Some(actor) => history::record(conn, Entry::of(&actor, before, after).as_slice()),
            None => Ok(()),
        }
    }
}

impl Core {
    /// Who the history records as the author of this request's write; `None` when the
    /// resource keeps no history.
    pub(super) fn actor(&self, cx: &Context<'_>) -> Option<Actor> {
        actor(self.writes.history, cx)
    }
}

/// Who the history records as the author of this request's write, where writes are recorded
/// (`history`).
fn actor(history: bool, cx: &Context<'_>) -> Option<Actor> {
    history.then(|| Actor {
        user: cx.user.map(|u| (u.id, u.username.clone())),
        source: "api",
    })
}
