//! A resource's writes with its model's type erased: what the write paths written once in
//! [`Core`](super::prepared::Core) need of the model and its hooks. An application compiles
//! only this small glue per model, not every write path once per model (the admin's twin is
//! admin/erased.rs).

use serde_json::{Map, Value};

use super::body::{ChangesOf, ToSave};
use super::hooks::Context;
use super::nested::Serialized;
use super::prepared::Prepared;
use crate::auth::AuthUser;
use crate::db::{Conn, LazyConn};
use crate::error::Error;
use crate::model::row::{typed_changes, typed_changes_ref, typed_row, typed_row_owned};
use crate::model::row::{Changes, Row};
use crate::model::RestModel;
use crate::query::Select;
use crate::sql::locked;
use crate::store::{Store, Typed};
use crate::value::param::Param;

/// The changes of one object ready to save (after the hooks' `save_object`), their type
/// erased, and the key the client sent for each field given.
pub(super) struct Item {
    pub(super) changes: Changes,
    pub(super) sent: Vec<(usize, String)>,
}

impl Item {
    /// The erased item of `item`.
    pub(super) fn of<M: RestModel>(item: ToSave<M>) -> Item {
        Item {
            changes: Box::new(item.changes),
            sent: item.sent,
        }
    }
}

/// What the writes of a resource need of its model and hooks.
pub(super) trait Writer {
    /// One object of an upsert parsed as the changes of an update (the fields a create needs
    /// are checked once it is known to create) and given to the hooks' `save_object`, with
    /// its value of the `on` field.
    fn upsert_item(
        &self,
        cx: &Context<'_>,
        db: &mut LazyConn<'_>,
        data: Map<String, Value>,
        on: usize,
    ) -> Result<(Item, Param), Error>;
    /// One object of a create parsed (its nested children taken out) and given to the hooks'
    /// `save_object`.
    fn create_item(
        &self,
        cx: &Context<'_>,
        db: &mut LazyConn<'_>,
        data: Map<String, Value>,
    ) -> Result<Item, Error>;
    /// Checks that every foreign key given refers to an existing row (400 on the sent key).
    fn check_references(&self, conn: &mut Conn<'_>, item: &Item) -> Result<(), Error>;
    /// The `get_query` scope of this request put before the conditions of `select`.
    fn add_scope(&self, cx: &Context<'_>, select: &mut Select) -> Result<(), Error>;
    /// The rows of `select`, locked for the rest of the transaction (PostgreSQL).
    fn locked(&self, conn: &mut Conn<'_>, select: &Select) -> Result<Vec<Box<dyn Row>>, Error>;
    /// A copy of `changes`.
    fn copy_changes(&self, changes: &Changes) -> Result<Changes, Error>;
    /// The hooks' `check_post`.
    fn check_post(&self, cx: &Context<'_>) -> bool;
    /// 403 unless the user owns `row` (with an owner field) and the hooks' `check_put` lets
    /// it be edited.
    fn check_edit(&self, cx: &Context<'_>, row: &dyn Row) -> Result<(), Error>;
    /// 403 unless the user owns `row` (with an owner field) and the hooks' `check_delete`
    /// lets it be deleted.
    fn check_remove(&self, cx: &Context<'_>, row: &dyn Row) -> Result<(), Error>;
    /// The required fields that a create must be given and `changes` lacks.
    fn missing(&self, changes: &mut Changes) -> Result<Vec<&'static str>, Error>;
    /// The hooks' `set_owner`: `user` stamped as the owner (field `idx`) of a new object.
    fn set_owner(&self, changes: &mut Changes, user: &AuthUser, idx: usize) -> Result<(), Error>;
    /// The model's save and delete.
    fn store(&self) -> &'static dyn Store;
    /// The object of `row` as JSON text (nested resources included).
    fn serialize_one(
        &self,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        row: &dyn Row,
    ) -> Result<Vec<u8>, Error>;
    /// The objects of `rows` as JSON text appended to `buf` (as `Prepared::serialize`).
    fn serialize(
        &self,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        rows: Vec<Box<dyn Row>>,
        buf: Vec<u8>,
    ) -> Result<Serialized, Error>;
}

impl<M: RestModel + 'static> Writer for Prepared<M> {
    fn upsert_item(
        &self,
        cx: &Context<'_>,
        db: &mut LazyConn<'_>,
        data: Map<String, Value>,
        on: usize,
    ) -> Result<(Item, Param), Error> {
        let parsed = self.parse_changes(data, false)?;
        let value = self.core.upsert_value(on, M::change(&parsed.changes, on))?;
        Ok((Item::of(self.changes_to_save(cx, db, parsed)?), value))
    }

    fn create_item(
        &self,
        cx: &Context<'_>,
        db: &mut LazyConn<'_>,
        data: Map<String, Value>,
    ) -> Result<Item, Error> {
        let parsed = self.parse_changes(data, true)?;
        Ok(Item::of(self.changes_to_save(cx, db, parsed)?))
    }

    fn check_references(&self, conn: &mut Conn<'_>, item: &Item) -> Result<(), Error> {
        let changes = typed_changes_ref::<M>(&item.changes)?;
        let key = |idx| M::change(changes, idx).and_then(|v| v.as_key());
        self.core.check_references(conn, &item.sent, &key)
    }

    fn add_scope(&self, cx: &Context<'_>, select: &mut Select) -> Result<(), Error> {
        Prepared::add_scope(self, cx, select)
    }

    fn locked(&self, conn: &mut Conn<'_>, select: &Select) -> Result<Vec<Box<dyn Row>>, Error> {
        let rows = locked::<M>(conn, M::meta(), select)?;
        Ok(rows
            .into_iter()
            .map(|row| Box::new(row) as Box<dyn Row>)
            .collect())
    }

    fn copy_changes(&self, changes: &Changes) -> Result<Changes, Error> {
        Ok(Box::new(M::copy_changes(typed_changes_ref::<M>(changes)?)))
    }

    fn check_post(&self, cx: &Context<'_>) -> bool {
        self.hooks.check_post(cx)
    }

    fn check_edit(&self, cx: &Context<'_>, row: &dyn Row) -> Result<(), Error> {
        let row = typed_row::<M>(row)?;
        self.check_owner(cx, row)?;
        if !self.hooks.check_put(cx, row) {
            return Err(Error::Forbidden);
        }
        Ok(())
    }

    fn check_remove(&self, cx: &Context<'_>, row: &dyn Row) -> Result<(), Error> {
        let row = typed_row::<M>(row)?;
        self.check_owner(cx, row)?;
        if !self.hooks.check_delete(cx, row) {
            return Err(Error::Forbidden);
        }
        Ok(())
    }

    fn missing(&self, changes: &mut Changes) -> Result<Vec<&'static str>, Error> {
        let changes = typed_changes::<M>(changes)?;
        Ok(self.core.missing(&ChangesOf::<M>(changes), &[]))
    }

    fn set_owner(&self, changes: &mut Changes, user: &AuthUser, idx: usize) -> Result<(), Error> {
        self.hooks
            .set_owner(typed_changes::<M>(changes)?, user, idx)
    }

    fn store(&self) -> &'static dyn Store {
        Typed::<M>::store()
    }

    fn serialize_one(
        &self,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        row: &dyn Row,
    ) -> Result<Vec<u8>, Error> {
        let rows = std::slice::from_ref(typed_row::<M>(row)?);
        Ok(Prepared::serialize(self, cx, conn, rows, None, Vec::new())?.buf)
    }

    fn serialize(
        &self,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        rows: Vec<Box<dyn Row>>,
        buf: Vec<u8>,
    ) -> Result<Serialized, Error> {
        let rows = rows.into_iter().map(typed_row_owned::<M>);
        let rows = rows.collect::<Result<Vec<M>, Error>>()?;
        Prepared::serialize(self, cx, conn, &rows, None, buf)
    }
}
