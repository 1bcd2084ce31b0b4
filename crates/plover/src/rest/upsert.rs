//! Upsert (docs/contract.md#upsert): `PUT {prefix}/{name}/?on=<unique field>` with an object
//! or an array of them updates the row each names by that field, or creates it, in one
//! transaction.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;

use super::body::REQUIRED;
use super::erased::{Item, Writer};
use super::hooks::Context;
use super::prepared::{Core, Prepared};
use super::request::{ApiRequest, Objects, Reply};
use crate::db::{Conn, LazyConn};
use crate::error::Error;
use crate::listing::{allowed, CREDENTIALS, ON};
use crate::model::row::{Changes, Row};
use crate::model::RestModel;
use crate::query::{Filter, Op, Select};
use crate::sql::Arg;
use crate::value::param::Param;

/// What an upsert wrote of one object.
struct Written {
    row: Box<dyn Row>,
    created: bool,
}

impl<M: RestModel + 'static> Prepared<M> {
    /// `PUT {prefix}/{name}/?on=<field>`.
    pub(super) fn upsert(
        &self,
        cx: &Context<'_>,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
    ) -> Result<Reply, Error> {
        self.core.upsert(self, cx, req, db)
    }
}

impl Core {
    /// `PUT {prefix}/{name}/?on=<field>`, the model's part done by `w`.
    fn upsert(
        &self,
        w: &dyn Writer,
        cx: &Context<'_>,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
    ) -> Result<Reply, Error> {
        let on = self.upsert_field(req)?;
        let (items, one) = match req.json_objects()? {
            Objects::One(data) => (vec![data], true),
            Objects::Many(items) if items.len() > self.list.limits.max_bulk_rows => {
                return Err(Error::TooManyItems(self.list.limits.max_bulk_rows))
            }
            Objects::Many(items) => (items, false),
        };
        // Every object parsed and given to the hooks' `save_object` before the transaction.
        let mut errors = BTreeMap::new();
        let mut parsed = Vec::with_capacity(items.len());
        for (index, data) in items.into_iter().enumerate() {
            // Hooks may hash a password per object: none more once the client has gone.
            crate::db::cancel::stop_if_client_gone()?;
            match w.upsert_item(cx, db, data, on) {
                Ok((item, value)) => parsed.push((index, item, value)),
                Err(e) if one => return Err(e),
                Err(e) => {
                    errors.insert(index, e.item_fields().ok_or(e)?);
                }
            }
        }
        if !errors.is_empty() {
            return Err(Error::Items(errors));
        }
        // Usernames are checked against one read of the user table, not one per object.
        let (body, created, location) = db.write(|conn| {
            crate::model::usernames::in_bulk(|| {
                let mut written = Vec::with_capacity(parsed.len());
                for (index, item, value) in parsed {
                    crate::db::cancel::stop_if_client_gone()?;
                    // Each object in a savepoint: every object's errors are found.
                    let item =
                        conn.transaction(|conn| self.upsert_one(w, cx, conn, item, on, value));
                    match item {
                        Ok(item) => written.push(item),
                        Err(e) if one => return Err(e),
                        Err(e) => {
                            errors.insert(index, e.item_fields().ok_or(e)?);
                        }
                    }
                }
                if !errors.is_empty() {
                    return Err(Error::Items(std::mem::take(&mut errors)));
                }
                let created = written.iter().any(|w| w.created);
                let rows: Vec<Box<dyn Row>> = written.into_iter().map(|w| w.row).collect();
                if one {
                    let location = created.then(|| format!("{}{}/", req.list_path, rows[0].pk()));
                    let body = w.serialize(cx, conn, rows, Vec::new())?.buf;
                    return Ok((body, created, location));
                }
                let mut body = w.serialize(cx, conn, rows, b"[".to_vec())?.buf;
                body.push(b']');
                Ok((body, created, None))
            })
        })?;
        Ok(Reply {
            status: if created {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            },
            location,
            body,
            etag: None,
            replayed: false,
        })
    }

    /// The value of the `on` field (`idx`) that an upsert's object gives (`change`), as the
    /// parameter that finds its row (400 without one).
    pub(super) fn upsert_value(&self, on: usize, change: Option<Arg<'_>>) -> Result<Param, Error> {
        let field = &self.meta.fields[on];
        change
            .and_then(|v| v.to_param())
            .ok_or_else(|| Error::field(field.json_key(), "needed to find the row (on=)"))
    }

    /// Writes one object of an upsert: an update of the row that `on` = `value` finds, if
    /// this request sees one, else a create.
    ///
    /// Exactly once under concurrency, on both engines: the row found is locked (PostgreSQL's
    /// `FOR UPDATE`; SQLite's writers follow each other), and a create runs in a savepoint of
    /// its own. When a concurrent upsert (or create) of the same value commits between this
    /// one's look-up and its insert, the insert meets the unique index on `on`: the savepoint
    /// is rolled back, the row is looked up again, and the object updates it, as Django's
    /// `update_or_create` does. The racers thus answer one 201 and 200s, and the values of the
    /// last to commit stay.
    fn upsert_one(
        &self,
        w: &dyn Writer,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        item: Item,
        on: usize,
        value: Param,
    ) -> Result<Written, Error> {
        let mut select = Select {
            filters: vec![Filter {
                path: vec![on],
                op: Op::Eq,
                values: vec![value],
            }],
            limit: Some(1),
            ..Select::default()
        };
        w.add_scope(cx, &mut select)?;
        // Locked on PostgreSQL (a concurrent writer of the row waits for this transaction).
        let found = w.locked(conn, &select)?.pop();
        w.check_references(conn, &item)?;
        let changes = item.changes;
        if let Some(row) = found {
            return self.upsert_update(w, cx, conn, &*row, changes);
        }
        // A create that a concurrent writer forestalls leaves the changes for the update.
        let create = w.copy_changes(&changes)?;
        match conn.transaction(|conn| self.upsert_create(w, cx, conn, create)) {
            Err(e) if e.unique_column() == Some(self.meta.fields[on].column) => {
                // Created meanwhile by a concurrent writer that committed: update it (a row
                // this request does not see stays a conflict).
                match w.locked(conn, &select)?.pop() {
                    Some(row) => self.upsert_update(w, cx, conn, &*row, changes),
                    None => Err(e),
                }
            }
            created => created.map(|row| Written { row, created: true }),
        }
    }

    /// The update of an upsert: `row`, found by its `on` value, takes `changes`.
    fn upsert_update(
        &self,
        w: &dyn Writer,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        row: &dyn Row,
        changes: Changes,
    ) -> Result<Written, Error> {
        w.check_edit(cx, row)?;
        let saved = w.store().save(conn, changes, Some(row))?;
        self.record_rows(cx, conn, Some(row), Some(&*saved))?;
        Ok(Written {
            row: saved,
            created: false,
        })
    }

    /// The create of an upsert whose `on` value finds no row: what a POST needs, the owner
    /// set, the row saved and its history recorded.
    fn upsert_create(
        &self,
        w: &dyn Writer,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        mut changes: Changes,
    ) -> Result<Box<dyn Row>, Error> {
        if !w.check_post(cx) {
            return Err(Error::Forbidden);
        }
        let mut missing = BTreeMap::new();
        for name in w.missing(&mut changes)? {
            missing.insert(name.to_owned(), REQUIRED.to_owned());
        }
        if !missing.is_empty() {
            return Err(Error::Validation {
                message: "Validation failed".into(),
                fields: missing,
            });
        }
        if let Some((user, idx)) = self.owner_user(cx)? {
            w.set_owner(&mut changes, user, idx)?;
        }
        let saved = w.store().save(conn, changes, None)?;
        self.record_rows(cx, conn, None, Some(&*saved))?;
        Ok(saved)
    }
    /// The field of `?on=`: a unique field this resource lets clients filter on and write
    /// (not the key, not the owner field). Any other parameter but credentials is a 400.
    fn upsert_field(&self, req: &ApiRequest) -> Result<usize, Error> {
        let mut keys = req.query.iter().map(|(k, _)| k.as_str());
        if let Some(key) = keys.find(|k| *k != ON && !CREDENTIALS.contains(k)) {
            return Err(Error::param(key, "an upsert takes only on=<field>"));
        }
        let name = req
            .param(ON)
            .ok_or_else(|| Error::param(ON, "name the unique field that finds the rows"))?;
        match self.meta.field(name) {
            Some((idx, _)) if self.finds_rows(idx) => Ok(idx),
            _ => Err(Error::param(
                ON,
                "expected a unique field that this resource lets clients filter on and write",
            )),
        }
    }

    /// Whether an upsert may find rows by field `idx`: a unique field this resource lets
    /// clients filter on and write (not the key, not the owner field).
    fn finds_rows(&self, idx: usize) -> bool {
        let meta = self.meta;
        meta.fields[idx].unique
            && idx != meta.pk
            && Some(idx) != self.writes.owner
            && self.writes.writable[idx]
            && allowed(&self.list, &[idx], &*self.joins)
    }

    /// The fields an upsert may find rows by, where this resource upserts.
    pub(super) fn upsert_fields(&self) -> impl Iterator<Item = usize> + '_ {
        let fields = 0..self.meta.fields.len();
        fields.filter(move |&idx| self.access.upsert && self.finds_rows(idx))
    }
}
