//! Inlines (docs/admin.md#inlines): the rows of a child model that refer to a parent, edited
//! as a table on the parent's add and edit pages and saved with the parent in one transaction.
//! This module holds the option ([`Inline`]) and the rows a form submits ([`Posted`]); the
//! preparation, the table and the save are in `inline_form`.

use std::any::TypeId;
use std::collections::BTreeMap;

use super::erased::Model;
use crate::model::{Field, ModelMeta, RestModel};

/// The children of model `C` edited on the parent's add and edit pages
/// ([`ModelAdmin::inline`](super::ModelAdmin::inline)): the rows whose foreign key `fk` refers to the parent.
///
/// ```
/// # use plover::prelude::*;
/// # use plover::admin::{Inline, ModelAdmin};
/// # diesel::table! { author (id) { id -> Integer, name -> Text } }
/// # diesel::table! { book (id) { id -> Integer, author_id -> Integer, title -> Text } }
/// # #[derive(RestModel)] #[diesel(table_name = author)] pub struct Author { pub id: i32, pub name: String }
/// # #[derive(RestModel)] #[diesel(table_name = book)]
/// # pub struct Book { pub id: i32, #[rest(fk = Author)] pub author_id: i32, pub title: String }
/// let admin = ModelAdmin::<Author>::new().inline(
///     Inline::<Book>::new(Book::FIELDS.author_id)
///         .fields([Book::FIELDS.title])
///         .extra(2)
///         .max_shown(50)
///         .can_delete(true),
/// );
/// ```
///
/// That `fk` is a foreign key to the parent's model, and that the inline shows every field a
/// new child needs, is checked when the admin is set up ([`Admin::setup`](super::Admin::setup)
/// panics otherwise, naming the models and the field).
pub struct Inline<C: RestModel> {
    pub(crate) fk: Field<C>,
    pub(crate) fields: Option<Vec<Field<C>>>,
    pub(crate) extra: usize,
    pub(crate) max_shown: usize,
    pub(crate) can_delete: bool,
}

impl<C: RestModel> std::fmt::Debug for Inline<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inline")
            .field("model", &C::meta().name)
            .field("fk", &self.fk.name())
            .field("extra", &self.extra)
            .field("max_shown", &self.max_shown)
            .field("can_delete", &self.can_delete)
            .finish_non_exhaustive()
    }
}

impl<C: RestModel> Inline<C> {
    /// The rows of `C` whose foreign key `fk` refers to the parent: every field but the key and
    /// `fk` as columns, 3 empty rows for new children, at most 50 stored children shown, a
    /// delete checkbox on each.
    pub fn new(fk: Field<C>) -> Inline<C> {
        Inline {
            fk,
            fields: None,
            extra: 3,
            max_shown: 50,
            can_delete: true,
        }
    }

    /// The columns, in order (default: every field but the key and the foreign key to the
    /// parent, which the inline sets itself).
    pub fn fields(mut self, fields: impl IntoIterator<Item = Field<C>>) -> Self {
        self.fields = Some(fields.into_iter().collect());
        self
    }

    /// The empty rows shown for new children (default 3); the "Add another" button adds more.
    pub fn extra(mut self, n: usize) -> Self {
        self.extra = n;
        self
    }

    /// The most stored children shown, key ascending (default 50); beyond, the inline links to
    /// the child model's index, filtered to this parent.
    pub fn max_shown(mut self, n: usize) -> Self {
        self.max_shown = n;
        self
    }

    /// Whether each stored child has a delete checkbox (default true). A child is deleted as
    /// the child model's admin deletes it (its `delete_recursive`, or by default with its
    /// dependent rows).
    pub fn can_delete(mut self, on: bool) -> Self {
        self.can_delete = on;
        self
    }
}

/// An [`Inline`] with its child type erased, as the model admin keeps it until the admin is
/// set up (`inline_form` makes it and prepares it): the child model's tables and indexes, and
/// its reads and writes.
pub(crate) struct ErasedInline {
    /// The child model.
    pub(crate) meta: &'static ModelMeta,
    /// The child model's type, as the registrations are keyed.
    pub(crate) child: TypeId,
    /// The foreign key to the parent (an index of the child's fields).
    pub(crate) fk: usize,
    /// The columns given ([`Inline::fields`]), if any.
    pub(crate) fields: Option<Vec<usize>>,
    pub(crate) extra: usize,
    pub(crate) max_shown: usize,
    pub(crate) can_delete: bool,
    /// The child model's reads and writes.
    pub(crate) model: Box<dyn Model>,
}

impl std::fmt::Debug for ErasedInline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ErasedInline")
            .field("model", &self.meta.name)
            .field("fk", &self.meta.fields[self.fk].name)
            .finish_non_exhaustive()
    }
}

/// One submitted child row, as text.
#[derive(Debug, Default)]
pub(crate) struct PostedRow {
    /// Its number in the form.
    pub(crate) number: u32,
    /// The stored child it edits; `None`: a new child.
    pub(crate) pk: Option<i64>,
    /// Whether its delete checkbox is checked.
    pub(crate) delete: bool,
    /// The submitted text of each of the inline's fields, in their order (`None`: not sent,
    /// for a checkbox: unchecked).
    pub(crate) raw: Vec<Option<String>>,
    /// Messages per field name; the empty name for the row as a whole.
    pub(crate) errors: BTreeMap<String, String>,
}

/// The rows one inline's part of a submitted form holds, in the order of their numbers.
#[derive(Debug, Default)]
pub(crate) struct Posted {
    pub(crate) rows: Vec<PostedRow>,
}

impl Posted {
    /// Whether a row has an error.
    pub(crate) fn has_errors(&self) -> bool {
        self.rows.iter().any(|r| !r.errors.is_empty())
    }
}
