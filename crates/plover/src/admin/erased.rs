//! One model's reads and writes with its type erased: what the admin's pages need of the
//! model besides its writes ([`Store`]). The pages are written once against these traits, so
//! an application compiles only the small [`Typed`] glue per model, not every page once per
//! model.

use serde_json::Value;

use crate::db::Conn;
use crate::error::Error;
pub(crate) use crate::model::row::{typed_changes, typed_row, Changes};
use crate::model::row::{Row, Rows};
use crate::model::RestModel;
use crate::query::Select;
use crate::sql;
pub(crate) use crate::store::{Store, Typed};

/// The reads and writes of one model.
pub(crate) trait Model: Store {
    /// The rows of a selection.
    fn load(&self, conn: &mut Conn<'_>, select: &Select) -> Result<Box<dyn Rows>, Error>;
    /// The row with this primary key.
    fn load_pk(&self, conn: &mut Conn<'_>, pk: i64) -> Result<Option<Box<dyn Row>>, Error>;
    /// The rows with these primary keys, locked for the rest of the transaction (PostgreSQL).
    fn load_locked(&self, conn: &mut Conn<'_>, ids: &[i64]) -> Result<Vec<Box<dyn Row>>, Error>;
    /// No changes.
    fn changes(&self) -> Changes;
    /// Sets one field of `changes` from JSON (the message says why it cannot).
    fn set_json(&self, changes: &mut Changes, field: usize, value: &Value) -> Result<(), String>;
    /// One field of `changes` as JSON, when it is set.
    fn changes_json(&self, changes: &Changes, field: usize) -> Option<Value>;
    /// Fills the fields not set with their defaults.
    fn fill_defaults(&self, changes: &mut Changes);
}

/// The rows as their model's, or an internal error (a page given another model's rows).
pub(crate) fn typed_rows<M: 'static>(rows: &dyn Rows) -> Result<&[M], Error> {
    (rows.as_any().downcast_ref::<Vec<M>>())
        .map(Vec::as_slice)
        .ok_or_else(|| Error::Internal("rows of another model".into()))
}

impl<M: RestModel + 'static> Model for Typed<M> {
    fn load(&self, conn: &mut Conn<'_>, select: &Select) -> Result<Box<dyn Rows>, Error> {
        Ok(Box::new(M::load(conn, select)?))
    }
    fn load_pk(&self, conn: &mut Conn<'_>, pk: i64) -> Result<Option<Box<dyn Row>>, Error> {
        Ok(M::load_pk(conn, pk)?.map(|row| Box::new(row) as Box<dyn Row>))
    }
    fn load_locked(&self, conn: &mut Conn<'_>, ids: &[i64]) -> Result<Vec<Box<dyn Row>>, Error> {
        let rows: Vec<M> = sql::rows_locked(conn, M::meta(), ids)?;
        Ok(rows
            .into_iter()
            .map(|row| Box::new(row) as Box<dyn Row>)
            .collect())
    }
    fn changes(&self) -> Changes {
        Box::new(M::Changes::default())
    }
    fn set_json(&self, changes: &mut Changes, field: usize, value: &Value) -> Result<(), String> {
        let changes = typed_changes::<M>(changes).map_err(|e| e.to_string())?;
        M::set_json(changes, field, value)
    }
    fn changes_json(&self, changes: &Changes, field: usize) -> Option<Value> {
        M::changes_json(changes.downcast_ref::<M::Changes>()?, field)
    }
    fn fill_defaults(&self, changes: &mut Changes) {
        if let Some(changes) = changes.downcast_mut::<M::Changes>() {
            M::fill_defaults(changes);
        }
    }
}
