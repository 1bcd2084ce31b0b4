//! A stored row with its model's type erased: what code written once for every model (the
//! admin's pages, the history) reads of a row, so that it is compiled once in Plover rather
//! than once per model in the application.

use std::any::Any;

use serde_json::Value;

use super::RestModel;
use crate::db::Conn;
use crate::error::Error;

/// A model's `Changes`, its type erased.
pub(crate) type Changes = Box<dyn Any + Send>;

/// A stored row of some model, its type erased.
pub(crate) trait Row {
    /// The primary key.
    fn pk(&self) -> i64;
    /// The row as text for people.
    fn display(&self) -> String;
    /// A field's value as JSON (by field index).
    fn field_json(&self, field: usize) -> Value;
    /// The row itself, for the code of its own model to take back.
    #[cfg_attr(not(feature = "admin"), allow(dead_code))]
    fn as_any(&self) -> &dyn Any;
    /// The row itself, owned, for the code of its own model to take back.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<M: RestModel + 'static> Row for M {
    fn pk(&self) -> i64 {
        RestModel::pk(self)
    }
    fn display(&self) -> String {
        RestModel::display(self)
    }
    fn field_json(&self, field: usize) -> Value {
        RestModel::field_json(self, field)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// Rows of one model, in order, their type erased.
pub(crate) trait Rows {
    /// How many.
    fn len(&self) -> usize;
    /// The row at `i` (below [`Rows::len`]).
    fn row(&self, i: usize) -> &dyn Row;
    /// Keeps the first `len` rows.
    fn truncate(&mut self, len: usize);
    /// The rows themselves (a `Vec` of the model), for the model's own code.
    #[cfg_attr(not(feature = "admin"), allow(dead_code))]
    fn as_any(&self) -> &dyn Any;
}

impl<M: RestModel + 'static> Rows for Vec<M> {
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn row(&self, i: usize) -> &dyn Row {
        &self[i]
    }
    fn truncate(&mut self, len: usize) {
        Vec::truncate(self, len);
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg_attr(not(feature = "admin"), allow(dead_code))]
impl dyn Rows + '_ {
    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &dyn Row> {
        (0..self.len()).map(|i| self.row(i))
    }
}

impl<R: Rows + ?Sized> Rows for Box<R> {
    fn len(&self) -> usize {
        (**self).len()
    }
    fn row(&self, i: usize) -> &dyn Row {
        (**self).row(i)
    }
    fn truncate(&mut self, len: usize) {
        (**self).truncate(len);
    }
    fn as_any(&self) -> &dyn Any {
        (**self).as_any()
    }
}

/// The row as its model's, or an internal error.
pub(crate) fn typed_row<M: 'static>(row: &dyn Row) -> Result<&M, Error> {
    (row.as_any().downcast_ref::<M>())
        .ok_or_else(|| Error::Internal("a row of another model".into()))
}

/// The changes as their model's, or an internal error.
pub(crate) fn typed_changes<M: RestModel>(changes: &mut Changes) -> Result<&mut M::Changes, Error> {
    (changes.downcast_mut::<M::Changes>())
        .ok_or_else(|| Error::Internal("changes of another model".into()))
}

/// The changes as their model's (read only), or an internal error.
pub(crate) fn typed_changes_ref<M: RestModel>(changes: &Changes) -> Result<&M::Changes, Error> {
    (changes.downcast_ref::<M::Changes>())
        .ok_or_else(|| Error::Internal("changes of another model".into()))
}

/// [`save`](super::save) of changes and a row whose types are erased: an insert, or an update
/// of `existing`.
pub(crate) fn save_erased<M: RestModel + 'static>(
    conn: &mut Conn<'_>,
    changes: Changes,
    existing: Option<&dyn Row>,
) -> Result<Box<dyn Row>, Error> {
    let changes = (changes.downcast::<M::Changes>())
        .map_err(|_| Error::Internal("changes of another model".into()))?;
    let existing = existing.map(typed_row::<M>).transpose()?;
    Ok(Box::new(super::save::<M>(conn, *changes, existing)?))
}

/// The owned row as its model's, or an internal error.
pub(crate) fn typed_row_owned<M: 'static>(row: Box<dyn Row>) -> Result<M, Error> {
    (row.into_any().downcast::<M>())
        .map(|row| *row)
        .map_err(|_| Error::Internal("a row of another model".into()))
}
