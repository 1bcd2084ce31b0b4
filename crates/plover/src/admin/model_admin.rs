//! `ModelAdmin`: how one model appears in the admin.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Arc;

use super::action::Action;
use super::erased::{typed_changes, typed_row, typed_rows, Changes, Typed};
use super::facets::ShowFacets;
use super::inline::Inline;
use super::prepared::{
    ErasedClean, Exposure, ListOptions, PageValues, Plain, PreparedAdmin, PreparedColumn, RowValue,
};
use super::templates::AdminTemplates;
use crate::db::Conn;
use crate::error::Error;
use crate::listing::{list_setters, ListSpec};
use crate::model::row::{Row, Rows};
use crate::model::{Field, RestModel};

/// A check of a submitted write run before the model's own rules (the webhook endpoints'
/// admin checks URLs and makes secrets so): it may complete the changes, and refuses with a
/// field error (`Error::field`), shown beside the field.
pub(crate) type Clean<M> = Arc<
    dyn Fn(&mut Conn<'_>, &mut <M as RestModel>::Changes, Option<&M>) -> Result<(), Error>
        + Send
        + Sync,
>;

/// Computes one column for a whole page of rows (one query for the page, not one per row).
pub type PageColumn<M> =
    Arc<dyn Fn(&mut Conn<'_>, &[M]) -> Result<Vec<String>, Error> + Send + Sync>;

/// A column of the admin index.
pub enum Column<M> {
    /// A model field (its index; [`Column::field`] makes one from a handle): shown as
    /// stored, sortable.
    Field(usize),
    /// A value computed from each row.
    Computed {
        /// The column title.
        title: String,
        /// The value of a row.
        value: Arc<dyn Fn(&M) -> String + Send + Sync>,
    },
    /// A value computed for a page of rows at once, with the database (counts, sums...).
    PageComputed {
        /// The column title.
        title: String,
        /// The values of the page's rows, in order.
        values: PageColumn<M>,
    },
}

impl<M> std::fmt::Debug for Column<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Column::Field(idx) => f.debug_tuple("Field").field(idx).finish(),
            Column::Computed { title, .. } => f
                .debug_struct("Computed")
                .field("title", title)
                .finish_non_exhaustive(),
            Column::PageComputed { title, .. } => f
                .debug_struct("PageComputed")
                .field("title", title)
                .finish_non_exhaustive(),
        }
    }
}

impl<M: RestModel> Column<M> {
    /// A model field: `Column::field(Message::FIELDS.content)`.
    pub fn field(field: Field<M>) -> Column<M> {
        Column::Field(field.index())
    }
}

impl<M> Column<M> {
    /// A value computed from each row: `Column::computed("shout", |a: &AModel| a.a_field.to_uppercase())`.
    pub fn computed(
        title: &str,
        value: impl Fn(&M) -> String + Send + Sync + 'static,
    ) -> Column<M> {
        Column::Computed {
            title: title.to_owned(),
            value: Arc::new(value),
        }
    }

    /// A value computed for the whole page with one query of your own, for counts and sums
    /// over related rows: the function gets the page's rows and returns one value per row.
    pub fn per_page(
        title: &str,
        values: impl Fn(&mut Conn<'_>, &[M]) -> Result<Vec<String>, Error> + Send + Sync + 'static,
    ) -> Column<M> {
        Column::PageComputed {
            title: title.to_owned(),
            values: Arc::new(values),
        }
    }
}

impl<M: RestModel> From<Field<M>> for Column<M> {
    fn from(field: Field<M>) -> Column<M> {
        Column::field(field)
    }
}

/// The options of one model in the admin (flask-peewee's `ModelAdmin`).
///
/// ```
/// # use plover::prelude::*;
/// # use plover::admin::{Column, ModelAdmin};
/// # diesel::table! { amodel (id) { id -> Integer, a_field -> Text } }
/// # #[derive(RestModel)] #[diesel(table_name = amodel)] #[rest(display = "{a_field}")]
/// # pub struct AModel { pub id: i32, pub a_field: String }
/// let admin = ModelAdmin::<AModel>::new()
///     .columns(vec![
///         Column::field(AModel::FIELDS.id),
///         Column::field(AModel::FIELDS.a_field),
///         Column::computed("shout", |a: &AModel| a.a_field.to_uppercase()),
///     ])
///     .paginate_by(50);
/// ```
pub struct ModelAdmin<M: RestModel> {
    pub(crate) list: ListSpec<M>,
    /// The other options, the model's type erased as they are set.
    pub(crate) plain: Plain,
}

impl<M: RestModel> std::fmt::Debug for ModelAdmin<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelAdmin")
            .field("model", &M::meta().name)
            .field("name", &self.plain.name)
            .field("columns", &self.plain.columns)
            .finish_non_exhaustive()
    }
}

impl<M: RestModel> Default for ModelAdmin<M> {
    fn default() -> Self {
        ModelAdmin::new()
    }
}

impl<M: RestModel> ModelAdmin<M> {
    /// Every field in forms and columns, 20 rows a page, dependents collected and deleted.
    pub fn new() -> ModelAdmin<M> {
        ModelAdmin {
            list: ListSpec::default(),
            plain: Plain::new(M::meta(), Box::new(Typed::<M>::default())),
        }
    }

    /// The URL name (default: the model's API name).
    pub fn name(mut self, name: &str) -> Self {
        self.plain.name = Some(name.to_owned());
        self
    }

    /// The index columns, in order (default: the primary key and every form field).
    pub fn columns(mut self, columns: impl IntoIterator<Item = Column<M>>) -> Self {
        self.plain.columns = columns.into_iter().map(Column::erase).collect();
        self
    }

    list_setters!();

    /// Rows an index page shows (default 20, Django's `list_per_page`); the same setting as
    /// [`ModelAdmin::paginate_by`].
    pub fn list_per_page(self, n: i64) -> Self {
        self.paginate_by(n)
    }

    /// The most rows one index page shows (default 200, Django's `list_max_show_all`): the
    /// index's `?limit=` may ask for up to this many, and while the filtered rows are more
    /// than a page but at most this many the index offers "Show all" (`?limit=` this bound). A
    /// `limit` over it is refused with a message on the page (status 400), which shows
    /// [`list_per_page`](ModelAdmin::list_per_page) rows. Never below `list_per_page`.
    pub fn list_max_show_all(mut self, n: i64) -> Self {
        self.plain.list_max_show_all = n.max(1);
        self
    }

    /// Rows per page of a foreign-key lookup (default 15).
    pub fn filter_paginate_by(mut self, n: i64) -> Self {
        self.plain.filter_paginate_by = n.max(1);
        self
    }

    /// A foreign key chosen with a type-ahead search on a field of the related model `N`
    /// (`(Message::FIELDS.user_id, User::FIELDS.username)`), instead of a select listing the
    /// related rows. That `field` refers to `N` is checked when the admin is set up.
    pub fn foreign_key_lookup<N: RestModel>(mut self, field: Field<M>, column: Field<N>) -> Self {
        self.plain
            .foreign_key_lookups
            .push((field.index(), N::meta(), column.index()));
        self
    }

    /// Whether the delete page lists the rows a delete would reach (default true).
    pub fn delete_collect_objects(mut self, on: bool) -> Self {
        self.plain.delete_collect_objects = on;
        self
    }

    /// Whether deletes take dependent rows along (default true); when false, a row that
    /// others refer to cannot be deleted (409).
    pub fn delete_recursive(mut self, on: bool) -> Self {
        self.plain.delete_recursive = on;
        self
    }

    /// Adds an action on the rows selected in the index, beside the bulk delete: see
    /// [`Action`]. The index offers the actions in the order they are added.
    pub fn action(mut self, action: Action<M>) -> Self {
        self.plain.actions.push(action.erase());
        self
    }

    /// The index's facets (Django's `list_filter`): beside the rows, each field's values as
    /// links that filter the index by one click, "All" to remove it. A field may be a boolean
    /// (Yes, No), a field with choices (each choice), a foreign key (the related rows, by their
    /// text) or a date or date-time (years, then the months of the chosen year). Any other
    /// field, or one the index may not filter, panics at [`Admin::setup`](super::Admin::setup).
    /// Counts are shown as [`ModelAdmin::show_facets`] says.
    pub fn list_filter(mut self, fields: impl IntoIterator<Item = Field<M>>) -> Self {
        self.plain.list_filter = crate::model::indexes(fields);
        self
    }

    /// When the facets count their values' rows (default [`ShowFacets::Allow`]: when the
    /// request has `_facets=1`, which the index's "Show counts" link adds).
    pub fn show_facets(mut self, show: ShowFacets) -> Self {
        self.plain.show_facets = show;
        self
    }

    /// Up to how many rows the index counts exactly on PostgreSQL (default 10,000): the count
    /// reads at most `n + 1` rows, and above `n` the index shows the planner's estimate,
    /// marked "about" (never below the bound). SQLite, which has no estimate, counts them all.
    pub fn count_exact_up_to(mut self, n: i64) -> Self {
        self.plain.count_exact_up_to = n.max(0);
        self
    }

    /// Shows the rows without letting anyone write them by hand: no add page and no import,
    /// and each row's page shows its values (long texts in full) without a Save button. Rows
    /// may still be deleted, one by one or in bulk, and the [`Action`]s run: they are the
    /// only writes (the job queue's admin, [`Admin::jobs`](super::Admin::jobs), is such).
    pub fn read_only(mut self) -> Self {
        self.plain.read_only = true;
        self
    }

    /// The index's order when the request does not choose one (a column header's link
    /// does): by `field`, descending when `descending` (the newest first, by key:
    /// `.ordering(Job::FIELDS.id, true)`). The default is the primary key ascending.
    pub fn ordering(mut self, field: Field<M>, descending: bool) -> Self {
        let name = M::meta().fields[field.index()].name;
        self.plain.ordering = Some(if descending {
            format!("-{name}")
        } else {
            name.to_owned()
        });
        self
    }

    /// The templates of this model's pages (default: the crate's,
    /// [`DefaultTemplates`](super::templates::DefaultTemplates)); see [`AdminTemplates`].
    pub fn templates(mut self, templates: impl AdminTemplates) -> Self {
        self.plain.templates = Arc::new(templates);
        self
    }

    /// Edits the rows of the model `C` that refer to this one on its add and edit pages, as
    /// a table under the form (Django's inlines): see [`Inline`]. The parent and its children
    /// are saved in one transaction. Repeat for several; they show in the order added.
    pub fn inline<C: RestModel>(mut self, inline: Inline<C>) -> Self {
        self.plain.inlines.push(inline.erase());
        self
    }

    /// The check every add and edit runs first: it may complete the changes, and refuses with
    /// a field error.
    pub(crate) fn clean(mut self, clean: Clean<M>) -> Self {
        self.plain.clean = Some(erase_clean(clean));
        self
    }

    /// Filters every index and export applies before the request's, in the REST syntax
    /// (`kind=plover.webhook`): a view of some rows, not a permission.
    pub(crate) fn scope(mut self, pairs: Vec<(String, String)>) -> Self {
        self.plain.scope = pairs;
        self
    }

    /// What the admin lets people see and filter ([`Plain::exposure`]).
    pub(crate) fn exposure(&self) -> Exposure {
        self.plain.exposure(&ListOptions::of(&self.list))
    }

    /// Checks the options against the model and builds the tables ([`Plain::prepare`]).
    /// Misconfigurations panic here, at start.
    pub(crate) fn prepare(self, exposures: &HashMap<TypeId, Exposure>) -> PreparedAdmin {
        self.plain.prepare(ListOptions::of(&self.list), exposures)
    }
}

impl<M: RestModel> Column<M> {
    /// The column for rows whose type is erased.
    fn erase(self) -> PreparedColumn {
        match self {
            Column::Field(idx) => PreparedColumn::Field(idx),
            Column::Computed { title, value } => {
                PreparedColumn::Computed(title, erase_value(value))
            }
            Column::PageComputed { title, values } => {
                PreparedColumn::Page(title, erase_values(values))
            }
        }
    }
}

/// A row's value of a computed column, for rows whose type is erased.
fn erase_value<M: RestModel>(value: Arc<dyn Fn(&M) -> String + Send + Sync>) -> RowValue {
    Arc::new(move |row: &dyn Row| {
        typed_row::<M>(row)
            .map(|row| value(row))
            .unwrap_or_default()
    })
}

/// A page's values of a computed column, for rows whose type is erased.
fn erase_values<M: RestModel>(values: PageColumn<M>) -> PageValues {
    Arc::new(move |conn: &mut Conn<'_>, rows: &dyn Rows| values(conn, typed_rows::<M>(rows)?))
}

/// The model admin's `clean`, for changes and rows whose type is erased.
fn erase_clean<M: RestModel>(clean: Clean<M>) -> ErasedClean {
    Arc::new(
        move |conn: &mut Conn<'_>, changes: &mut Changes, row: Option<&dyn Row>| {
            let row = row.map(typed_row::<M>).transpose()?;
            clean(conn, typed_changes::<M>(changes)?, row)
        },
    )
}
