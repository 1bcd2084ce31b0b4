//! The writes of one record, and of a bulk create (docs/contract.md#endpoints): POST, PUT or
//! PATCH and DELETE on a record, each in one transaction; and what every write of the
//! resource shares (a record as a conditional write finds it, the foreign keys given checked,
//! the history recorded).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::body::{Body, ToSave};
use super::conditional;
use super::erased::{Item, Writer};
use super::hooks::Context;
use super::idempotency::Once;
use super::prepared::{Core, Prepared};
use super::relation::{CreatedChildren, NewChildren};
use super::request::{ApiRequest, Reply};
use crate::db::{Conn, LazyConn};
use crate::error::Error;
use crate::history::{self, Actor, Entry};
use crate::model::row::Row;
use crate::model::{check_reference, RestModel};
use crate::query::Select;
use crate::sql::cascade::delete_rows;

impl<M: RestModel + 'static> Prepared<M> {
    /// Checks that every foreign key given refers to an existing row (400 on the sent key).
    pub(super) fn check_references(
        &self,
        conn: &mut Conn<'_>,
        item: &ToSave<M>,
    ) -> Result<(), Error> {
        let key = |idx| M::change(&item.changes, idx).and_then(|v| v.as_key());
        self.core.check_references(conn, &item.sent, &key)
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
        let (item, children) = match body.unwrap_or_else(|| self.read_create(req))? {
            Body::One(parsed) => {
                let item = Item::of(self.changes_to_save(cx, db, parsed)?);
                (item, NewChildren::none())
            }
            Body::Parent(data) => self.core.parse_create(self, cx, db, data)?,
            Body::Many(items) => return self.core.create_many(self, cx, db, items, &once),
        };
        self.core.create(self, cx, req, db, item, children, &once)
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
        Writer::check_edit(self, cx, &obj)?;
        self.check_if_match_sent(req)?;
        let item = self.changes_to_save(cx, db, self.one_body(req, body)?)?;
        self.core
            .edit(self, cx, req, db, Box::new(obj), Item::of(item))
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
        self.core.remove(self, cx, req, db, Box::new(obj))
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
        self.core.record_rows(
            cx,
            conn,
            before.map(|r| r as &dyn Row),
            after.map(|r| r as &dyn Row),
        )
    }
}

impl Core {
    /// [`Prepared::create`] of one object (with its nested children), once checked and
    /// parsed, the model's part done by `w`.
    #[allow(clippy::too_many_arguments)]
    fn create(
        &self,
        w: &dyn Writer,
        cx: &Context<'_>,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
        mut item: Item,
        children: NewChildren<'_>,
        once: &Once,
    ) -> Result<Reply, Error> {
        if let Some((user, idx)) = self.owner_user(cx)? {
            w.set_owner(&mut item.changes, user, idx)?;
        }
        once.write(db, |conn| {
            w.check_references(conn, &item)?;
            let row = w.store().save(conn, item.changes, None)?;
            self.record_rows(cx, conn, None, Some(&*row))?;
            let pk = row.pk();
            let children = children.write(cx, conn, pk)?;
            let location = format!("{}{}/", req.list_path, pk);
            let body = children.add_to(self.one(w, cx, conn, row)?);
            Ok(Reply::created(body, Some(location)))
        })
    }

    /// [`Prepared::edit`] once checked and parsed: `item` saved on `obj`.
    fn edit(
        &self,
        w: &dyn Writer,
        cx: &Context<'_>,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
        obj: Box<dyn Row>,
        item: Item,
    ) -> Result<Reply, Error> {
        let obj = db.write(|conn| {
            let obj = self.current(w, cx, req, conn, obj)?;
            w.check_references(conn, &item)?;
            let row = w.store().save(conn, item.changes, Some(&*obj))?;
            self.record_rows(cx, conn, Some(&*obj), Some(&*row))?;
            self.one(w, cx, conn, row)
        })?;
        Ok(Reply::ok(obj))
    }

    /// [`Prepared::remove`] once checked: `obj` deleted.
    fn remove(
        &self,
        w: &dyn Writer,
        cx: &Context<'_>,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
        obj: Box<dyn Row>,
    ) -> Result<Reply, Error> {
        let ids = [obj.pk()];
        let delete = |conn: &mut Conn<'_>| match self.actor(cx) {
            Some(actor) => w
                .store()
                .delete(conn, &actor, &ids, self.writes.delete_recursive),
            None => delete_rows(conn, self.meta, &ids, self.writes.delete_recursive),
        };
        let deleted = if conditional::is_conditional(&req.headers) {
            db.write(|conn| {
                self.current(w, cx, req, conn, obj)?;
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
    /// hooks' `save_object` and stamped with the owner, then all written in one transaction
    /// through the write path of a single create; any error and nothing is written (400 with
    /// `items`, by index). Answers 201 with the created objects, in the body's order. An
    /// object's nested children are parsed and written with it (their errors by path under
    /// its index).
    ///
    /// The objects are first written one after the other in one savepoint ([`Self::write_all`]):
    /// one statement per row on the usual path. When a row's write fails, that savepoint rolls
    /// back and they are written again each in a savepoint of its own
    /// ([`Self::write_each`]), so that every object's errors are found (two statements more
    /// per row, only for a bulk create that fails).
    fn create_many(
        &self,
        w: &dyn Writer,
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
            let item = self.parse_create(w, cx, db, data);
            let item = item.and_then(|(mut item, children)| {
                if let Some((user, idx)) = owner {
                    w.set_owner(&mut item.changes, user, idx)?;
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
        once.write(db, |conn| {
            let (rows, created) = match self.write_all(w, cx, conn, &parsed)? {
                Some(rows) => (rows, Vec::new()),
                None => self.write_each(w, cx, conn, parsed)?,
            };
            let objects = w.serialize(cx, conn, rows, b"[".to_vec())?;
            let mut body = if self.writes.children.is_empty() {
                objects.buf
            } else {
                CreatedChildren::add_to_each(objects, created)
            };
            body.push(b']');
            Ok(Reply::created(body, None))
        })
    }

    /// The usual path of [`Self::create_many`]: the objects written one after the other in
    /// one savepoint, for a resource without nested children. `None` when a row's write
    /// failed on an object's error (the savepoint rolled back: [`Self::write_each`] finds
    /// every object's errors), or when the resource has nested children.
    fn write_all(
        &self,
        w: &dyn Writer,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        parsed: &[(Item, NewChildren<'_>)],
    ) -> Result<Option<Vec<Box<dyn Row>>>, Error> {
        if !self.writes.children.is_empty() {
            return Ok(None);
        }
        // Usernames are checked against one read of the user table, not one per object.
        let written = crate::model::usernames::in_bulk(|| {
            conn.transaction(|conn| {
                let mut rows = Vec::with_capacity(parsed.len());
                for (item, _) in parsed {
                    crate::db::cancel::stop_if_client_gone()?;
                    w.check_references(conn, item)?;
                    let row = w.store().save(conn, w.copy_changes(&item.changes)?, None)?;
                    self.record_rows(cx, conn, None, Some(&*row))?;
                    rows.push(row);
                }
                Ok(rows)
            })
        });
        match written {
            Ok(rows) => Ok(Some(rows)),
            Err(e) if e.item_fields().is_some() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// [`Self::create_many`]'s objects written each in a savepoint of its own, so that every
    /// object's errors are found: the created rows and their children, or 400 with `items`.
    #[allow(clippy::type_complexity)]
    fn write_each<'r>(
        &'r self,
        w: &dyn Writer,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        parsed: Vec<(Item, NewChildren<'r>)>,
    ) -> Result<(Vec<Box<dyn Row>>, Vec<CreatedChildren<'r>>), Error> {
        let mut errors = BTreeMap::new();
        // A fresh index of usernames: the rows of a rolled-back `write_all` are not in it.
        crate::model::usernames::in_bulk(|| {
            let mut rows = Vec::with_capacity(parsed.len());
            let mut created = Vec::with_capacity(parsed.len());
            for (index, (item, children)) in parsed.into_iter().enumerate() {
                crate::db::cancel::stop_if_client_gone()?;
                let saved = conn.transaction(|conn| {
                    w.check_references(conn, &item)?;
                    let row = w.store().save(conn, item.changes, None)?;
                    self.record_rows(cx, conn, None, Some(&*row))?;
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
                return Err(Error::Items(errors));
            }
            Ok((rows, created))
        })
    }

    /// The row `obj` as a write about to change it finds it, in the write's transaction: for
    /// a conditional request, read again (and locked on PostgreSQL) and checked against
    /// `If-Match` / `If-None-Match` by the `ETag` of its current representation (412 when it
    /// changed since the client read it; 404 when it is gone); else `obj` as read before.
    fn current(
        &self,
        w: &dyn Writer,
        cx: &Context<'_>,
        req: &ApiRequest,
        conn: &mut Conn<'_>,
        obj: Box<dyn Row>,
    ) -> Result<Box<dyn Row>, Error> {
        if !conditional::is_conditional(&req.headers) {
            return Ok(obj);
        }
        let select = Select::ids_in(self.meta.pk, &[obj.pk()]);
        let current = w.locked(conn, &select)?.pop().ok_or(Error::NotFound)?;
        let shown = w.serialize_one(cx, conn, &*current)?;
        conditional::check_write(&req.headers, &crate::http::digest::tag(&shown))?;
        Ok(current)
    }

    /// One object as JSON text, nested resources included.
    fn one(
        &self,
        w: &dyn Writer,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        row: Box<dyn Row>,
    ) -> Result<Vec<u8>, Error> {
        w.serialize(cx, conn, vec![row], Vec::new())?
            .into_single()
            .ok_or_else(|| Error::Internal("serialization lost the object".into()))
    }

    /// Checks that every foreign key given refers to an existing row (400 on the key sent):
    /// `sent` the fields given with their keys, `key` the value of a field given, if a key.
    pub(super) fn check_references(
        &self,
        conn: &mut Conn<'_>,
        sent: &[(usize, String)],
        key: &dyn Fn(usize) -> Option<i64>,
    ) -> Result<(), Error> {
        for (idx, name) in sent {
            if let Some(id) = key(*idx) {
                check_reference(conn, &self.meta.fields[*idx], name, id)?;
            }
        }
        Ok(())
    }

    /// Records a write of this resource in the history, if it keeps one (`before`/`after` as
    /// [`Entry::of_rows`]).
    pub(super) fn record_rows(
        &self,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        before: Option<&dyn Row>,
        after: Option<&dyn Row>,
    ) -> Result<(), Error> {
        match self.actor(cx) {
            Some(actor) => history::record(
                conn,
                Entry::of_rows(self.meta, &actor, before, after).as_slice(),
            ),
            None => Ok(()),
        }
    }

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
