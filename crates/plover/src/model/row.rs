//! A stored row with its model's type erased: what code written once for every model (the
//! admin's pages, the history) reads of a row, so that it is compiled once in Plover rather
//! than once per model in the application.

use std::any::Any;

use serde_json::Value;

use super::RestModel;

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
