//! Models: the `RestModel` trait `#[derive(RestModel)]` implements, typed field handles, the
//! model's rules and `save`, the one write path; the conversions of field values to and from
//! JSON and filter text that the generated code calls (`convert`); and the metadata the derive
//! generates.

pub(crate) mod choice;
pub(crate) mod constraints;
pub(crate) mod convert;
pub(crate) mod row;
pub(crate) mod usernames;

use std::marker::PhantomData;

use serde_json::Value;

pub use crate::meta::{Bound, Constraints, FieldMeta, IndexColumn, ModelMeta};
pub use crate::value::kind::FieldKind;
pub use choice::Choice;

use crate::db::Conn;
use crate::error::Error;
use crate::query::Select;
use crate::sql::{self, Arg, FromRow};

/// A typed handle of one field of model `M`: what resource and admin options take, so that a
/// misspelled field is a compile error. `#[derive(RestModel)]` generates one per field, as the
/// public fields of `<Model>Fields`, reached through the constant `<Model>::FIELDS`:
///
/// ```
/// # use plover::prelude::*;
/// # diesel::table! { book (id) { id -> Integer, title -> Text, price -> Integer } }
/// #[derive(Debug, RestModel)]
/// #[diesel(table_name = book)]
/// pub struct Book { pub id: i32, pub title: String, pub price: i32 }
///
/// let f = Book::FIELDS;
/// let resource = Resource::<Book>::new().fields([f.id, f.title]).writable([f.title]);
/// assert_eq!(f.price.name(), "price");
/// ```
pub struct Field<M> {
    index: usize,
    _model: PhantomData<fn() -> M>,
}

impl<M> Clone for Field<M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M> Copy for Field<M> {}

impl<M> PartialEq for Field<M> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}

impl<M> Eq for Field<M> {}

impl<M> std::fmt::Debug for Field<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Field({})", self.index)
    }
}

impl<M> Field<M> {
    /// The handle of field `index` (in declaration order); generated code uses it.
    #[doc(hidden)]
    pub const fn at(index: usize) -> Field<M> {
        Field {
            index,
            _model: PhantomData,
        }
    }

    /// The field's position among the model's fields.
    pub fn index(self) -> usize {
        self.index
    }
}

impl<M: RestModel> Field<M> {
    /// The field's metadata.
    pub fn meta(self) -> &'static FieldMeta {
        &M::meta().fields[self.index]
    }

    /// The field's API name (`author` for a foreign key `author_id`).
    pub fn name(self) -> &'static str {
        self.meta().name
    }

    /// The filter path through this foreign key to a field of the related model `N`:
    /// `Message::FIELDS.user_id.join(User::FIELDS.email)` is `user__email`. That this field is a
    /// foreign key to `N` is checked when the resource, admin or query is set up.
    pub fn join<N: RestModel>(self, next: impl Into<Path<N>>) -> Path<M> {
        let next = next.into();
        let mut steps = Vec::with_capacity(next.steps.len() + 1);
        steps.push(Step {
            meta: M::meta,
            index: self.index,
        });
        steps.extend(next.steps);
        Path {
            text: format!("{}__{}", self.name(), next.text),
            steps,
            _model: PhantomData,
        }
    }
}

/// One field of a path: the model it belongs to and its index there.
#[derive(Clone, Copy)]
struct Step {
    meta: fn() -> &'static ModelMeta,
    index: usize,
}

/// A filter path from model `M`: one of its fields, or a chain of joins through foreign keys
/// ([`Field::join`]). Options that take paths take fields too.
pub struct Path<M> {
    text: String,
    steps: Vec<Step>,
    _model: PhantomData<fn() -> M>,
}

impl<M> Clone for Path<M> {
    fn clone(&self) -> Self {
        Path {
            text: self.text.clone(),
            steps: self.steps.clone(),
            _model: PhantomData,
        }
    }
}

impl<M> std::fmt::Debug for Path<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Path({})", self.text)
    }
}

impl<M> Path<M> {
    /// The path in the query-string syntax, `user__email`.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The field indexes along the path, one per model, and the field it ends on; or why the
    /// path does not hold (a join through a field that is not a foreign key to the next model).
    pub(crate) fn resolve(&self) -> Result<(Vec<usize>, &'static FieldMeta), String> {
        let mut indexes = Vec::with_capacity(self.steps.len());
        for (n, step) in self.steps.iter().enumerate() {
            let meta = (step.meta)();
            let field = meta
                .fields
                .get(step.index)
                .ok_or_else(|| format!("{} has no field {}", meta.name, step.index))?;
            indexes.push(step.index);
            let Some(next) = self.steps.get(n + 1) else {
                return Ok((indexes, field));
            };
            let next = (next.meta)();
            match field.target() {
                Some(target) if (target.type_id)() == (next.type_id)() => {}
                Some(target) => {
                    return Err(format!(
                        "`{}` of {} refers to {}, not to {}",
                        field.name, meta.name, target.name, next.name
                    ))
                }
                None => {
                    return Err(format!(
                        "`{}` of {} is not a foreign key",
                        field.name, meta.name
                    ))
                }
            }
        }
        Err("the path is empty".into())
    }
}

impl<M: RestModel> From<Field<M>> for Path<M> {
    fn from(field: Field<M>) -> Path<M> {
        Path {
            text: field.name().to_owned(),
            steps: vec![Step {
                meta: M::meta,
                index: field.index,
            }],
            _model: PhantomData,
        }
    }
}

/// The indexes of fields (for options stored by position).
pub(crate) fn indexes<M>(fields: impl IntoIterator<Item = Field<M>>) -> Vec<usize> {
    fields.into_iter().map(Field::index).collect()
}

/// Paths given as fields or joins (for options stored by path).
pub(crate) fn paths<M, P: Into<Path<M>>>(paths: impl IntoIterator<Item = P>) -> Vec<Path<M>> {
    paths.into_iter().map(Into::into).collect()
}

/// Checks that `id` is the primary key of a row of the model that `field` refers to: a 400
/// validation error on `key` otherwise. Fields that are not foreign keys pass.
pub(crate) fn check_reference(
    conn: &mut Conn<'_>,
    field: &FieldMeta,
    key: &str,
    id: i64,
) -> Result<(), Error> {
    let Some(target) = field.fk else {
        return Ok(());
    };
    let target = target();
    let found = sql::ids(conn, target, &Select::ids_in(target.pk, &[id]))?;
    if found.is_empty() {
        return Err(Error::field(
            key,
            format!("no {} with id {id}", target.name),
        ));
    }
    Ok(())
}

/// Writes `changes` the one way every writer does (REST, the admin, and application views that
/// call it): for an insert (`existing` is `None`) the fields not given get their
/// `#[rest(default = ...)]` values ([`RestModel::fill_defaults`]); then the fields'
/// [`Constraints`] (a 400 naming each field out of bounds), the model's [`Rules`], and the
/// insert or an update of the given fields of `existing` (nothing to update: no statement).
/// Call it inside the write's transaction ([`Conn::transaction`]), so that a failing rule or
/// write leaves nothing behind. Returns the row as stored (an insert reads it back with
/// `RETURNING`, an update by its key; a row deleted meanwhile is [`Error::NotFound`]).
/// `M::insert` and `M::update` write without the rules or the defaults.
///
/// ```
/// use plover::prelude::*;
/// use plover::db::Conn;
/// use plover::model::{save, Rules};
/// # diesel::table! { book (id) { id -> Integer, price -> Integer } }
///
/// #[derive(Debug, RestModel)]
/// #[diesel(table_name = book)]
/// #[rest(rules)]
/// pub struct Book { pub id: i32, pub price: i32 }
///
/// impl Rules for Book {
///     fn validate(_: &mut Conn<'_>, c: &BookChanges, _: Option<&Book>) -> Result<(), Error> {
///         match c.price {
///             Some(p) if p < 0 => Err(Error::field("price", "must not be negative")),
///             _ => Ok(()),
///         }
///     }
/// }
///
/// let db = Database::from_url("sqlite://:memory:?max_connections=1").unwrap();
/// db.run_blocking(|c| plover::schema::create_tables(c, &[Book::meta()])).unwrap();
/// let write = |price| {
///     db.run_blocking(move |conn| {
///         conn.transaction(|conn| save::<Book>(conn, BookChanges { price: Some(price) }, None))
///     })
/// };
/// assert_eq!(write(5).unwrap().price, 5);
/// assert!(write(-5).is_err()); // the rule runs here as it does for REST and the admin
/// ```
pub fn save<M: RestModel>(
    conn: &mut Conn<'_>,
    mut changes: M::Changes,
    existing: Option<&M>,
) -> Result<M, Error> {
    if existing.is_none() {
        M::fill_defaults(&mut changes);
    }
    usernames::normalize::<M>(&mut changes)?;
    constraints::check::<M>(&changes)?;
    usernames::check::<M>(conn, &changes, existing)?;
    M::validate(conn, &changes, existing)?;
    M::before_save(conn, &mut changes, existing)?;
    let saved = match existing {
        None => M::insert_row(conn, changes)?,
        Some(row) => {
            if (0..M::meta().fields.len()).any(|i| M::is_set(&changes, i)) {
                M::update(conn, row.pk(), changes)?;
            }
            // Read back: the database may have changed more than was given (triggers,
            // defaults).
            M::load_pk(conn, row.pk())?.ok_or(Error::NotFound)?
        }
    };
    usernames::saved(&saved);
    Ok(saved)
}

/// The given fields of `changes` (never the primary key), as the values a write binds.
fn given<M: RestModel>(changes: &M::Changes) -> Vec<(usize, Arg<'_>)> {
    let meta = M::meta();
    (0..meta.fields.len())
        .filter(|&i| i != meta.pk)
        .filter_map(|i| M::change(changes, i).map(|arg| (i, arg)))
        .collect()
}

/// A model with REST metadata. Implemented by `#[derive(RestModel)]`; see the reference in
/// `docs/reference.md` for the attributes. Rows are selected with
/// [`views::Query`](crate::views::Query) (or by key, [`RestModel::load_pk`]) and written with
/// [`save`]; the methods that take a field's position are hooks of the generated code, not
/// shown here.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a Plover model",
    label = "not a model",
    note = "add `#[derive(RestModel)]` to `{Self}`"
)]
pub trait RestModel: FromRow + Send + Sync {
    /// A partial set of field values for inserts and updates: one `Option` per field
    /// (`None` = not given). Generated as `<Model>Changes` with public fields.
    type Changes: Default + Send + 'static;

    /// The primary key's type (`i32` or `i64`): a foreign key to this model has it.
    type Key;

    /// The model's metadata.
    fn meta() -> &'static ModelMeta;

    /// The primary key.
    fn pk(&self) -> i64;

    /// The row as text for people (the admin's delete page and selects):
    /// `#[rest(display = "{field} ...")]`, else, or where that text is empty or only white
    /// space, `"<name> #<pk>"`.
    fn display(&self) -> String;

    /// One field as a JSON value (date-times as `YYYY-MM-DD HH:MM:SS`).
    #[doc(hidden)]
    fn field_json(&self, field: usize) -> Value;

    /// Appends one field as JSON text (what `field_json` gives, without building a value).
    #[doc(hidden)]
    fn write_field(&self, field: usize, out: &mut Vec<u8>);

    /// One field as the value a write binds: a typed read (of a foreign key, say) that builds
    /// no JSON.
    #[doc(hidden)]
    fn field_arg(&self, field: usize) -> Arg<'_>;

    /// Parses `value` into field `field` of `changes`; the error is a message for the client.
    #[doc(hidden)]
    fn set_json(changes: &mut Self::Changes, field: usize, value: &Value) -> Result<(), String>;

    /// Sets field `field` of `changes` to a typed value (a foreign key, a password's hash):
    /// the write-side twin of [`RestModel::change`], with no JSON between. The error says the
    /// value is not of the field's type.
    #[doc(hidden)]
    fn set_arg(changes: &mut Self::Changes, field: usize, arg: Arg<'_>) -> Result<(), String>;

    /// Field `field` of `changes` as the value a write binds, if given.
    #[doc(hidden)]
    fn change(changes: &Self::Changes, field: usize) -> Option<Arg<'_>>;

    /// Whether field `field` of `changes` was given.
    #[doc(hidden)]
    fn is_set(changes: &Self::Changes, field: usize) -> bool {
        Self::change(changes, field).is_some()
    }

    /// Field `field` of `changes` as JSON, if given.
    #[doc(hidden)]
    fn changes_json(changes: &Self::Changes, field: usize) -> Option<Value>;

    /// A copy of `changes`, value by value (a change written on several rows).
    #[doc(hidden)]
    fn copy_changes(changes: &Self::Changes) -> Self::Changes;

    /// Fills the fields that were not given with their defaults (`None` for nullable fields).
    fn fill_defaults(changes: &mut Self::Changes);

    /// Loads the rows of a selection.
    #[doc(hidden)]
    fn load(conn: &mut Conn<'_>, select: &Select) -> Result<Vec<Self>, Error> {
        sql::rows(conn, Self::meta(), select)
    }

    /// Loads the row with primary key `pk`, if there is one: a query of fixed shape, prepared
    /// once per connection.
    fn load_pk(conn: &mut Conn<'_>, pk: i64) -> Result<Option<Self>, Error> {
        sql::by_pk(conn, Self::meta(), pk)
    }

    /// Loads the row whose field `field`, a unique text field (`#[rest(unique)]` on a
    /// `String`), equals `value`: a query of fixed shape, as [`RestModel::load_pk`]. An error
    /// for any other field.
    #[doc(hidden)]
    fn load_unique(conn: &mut Conn<'_>, field: usize, value: &str) -> Result<Option<Self>, Error> {
        let meta = Self::meta();
        match meta.fields.get(field) {
            Some(f) if f.unique && f.kind == FieldKind::Text => {
                sql::by_field(conn, meta, field, &Arg::Text(value.into()))
            }
            _ => Err(Error::Internal("not a unique text field".into())),
        }
    }

    /// Inserts a row from complete changes; returns the row as stored, read back by the
    /// insert itself (`INSERT ... RETURNING`).
    fn insert_row(conn: &mut Conn<'_>, changes: Self::Changes) -> Result<Self, Error> {
        sql::insert(conn, Self::meta(), &given::<Self>(&changes), Self::pk)
    }

    /// Inserts a row from complete changes; returns its primary key.
    fn insert(conn: &mut Conn<'_>, changes: Self::Changes) -> Result<i64, Error> {
        Self::insert_row(conn, changes).map(|row| row.pk())
    }

    /// Updates the given fields of one row; returns the number of rows changed.
    fn update(conn: &mut Conn<'_>, pk: i64, changes: Self::Changes) -> Result<usize, Error> {
        sql::update(conn, Self::meta(), pk, &given::<Self>(&changes))
    }

    /// The model's validation ([`Rules::validate`] with `#[rest(rules)]`; none otherwise).
    fn validate(
        _conn: &mut Conn<'_>,
        _changes: &Self::Changes,
        _existing: Option<&Self>,
    ) -> Result<(), Error> {
        Ok(())
    }

    /// The model's before-save step ([`Rules::before_save`] with `#[rest(rules)]`).
    fn before_save(
        _conn: &mut Conn<'_>,
        _changes: &mut Self::Changes,
        _existing: Option<&Self>,
    ) -> Result<(), Error> {
        Ok(())
    }

    /// The model's before-delete step ([`Rules::before_delete`] with `#[rest(rules)]`).
    fn before_delete(_conn: &mut Conn<'_>, _row: &Self) -> Result<(), Error> {
        Ok(())
    }
}

/// Rules of a model that every writer runs (docs/contract.md#models): REST POST and PUT, the
/// admin's add and edit forms. They run inside the write's transaction with its connection,
/// after the resource's `save_object` (so no resource can bypass them) and before the row is
/// written; an error writes nothing. Declare them with `#[rest(rules)]` on the struct and
/// implement this trait; both methods default to doing nothing.
///
/// ```
/// use plover::prelude::*;
/// use plover::db::Conn;
/// # diesel::table! { book (id) { id -> Integer, title -> Text, price -> Integer } }
///
/// #[derive(RestModel)]
/// #[diesel(table_name = book)]
/// #[rest(rules)]
/// pub struct Book {
///     pub id: i32,
///     pub title: String,
///     pub price: i32,
/// }
///
/// impl plover::model::Rules for Book {
///     fn validate(
///         _conn: &mut Conn<'_>,
///         changes: &BookChanges,
///         _existing: Option<&Book>,
///     ) -> Result<(), plover::Error> {
///         match changes.price {
///             Some(price) if price < 0 => Err(plover::Error::field("price", "must not be negative")),
///             _ => Ok(()),
///         }
///     }
/// }
/// ```
pub trait Rules: RestModel {
    /// Field errors of the write about to happen (`Error::field` or `Error::Validation`):
    /// REST answers 400 with `fields`, the admin shows the form again with the message beside
    /// the field. `changes` holds the given fields (on create also the defaults); `existing`
    /// is the row an update changes.
    fn validate(
        conn: &mut Conn<'_>,
        changes: &Self::Changes,
        existing: Option<&Self>,
    ) -> Result<(), Error> {
        let _ = (conn, changes, existing);
        Ok(())
    }

    /// A last step before the write, after `validate`: may complete `changes`, and read or
    /// write other rows in the same transaction ("a loan marks its book as out").
    fn before_save(
        conn: &mut Conn<'_>,
        changes: &mut Self::Changes,
        existing: Option<&Self>,
    ) -> Result<(), Error> {
        let _ = (conn, changes, existing);
        Ok(())
    }

    /// A step before `row` is deleted, by any writer (REST, the admin's delete page and bulk
    /// delete, and the recursive delete of a row it depends on), in the delete's transaction:
    /// may refuse the delete (an error deletes nothing) or write other rows ("a returned loan
    /// puts its book back on the shelf"). Rows whose nullable foreign key a delete sets to
    /// NULL are updated, not deleted: their rules do not run.
    fn before_delete(conn: &mut Conn<'_>, row: &Self) -> Result<(), Error> {
        let _ = (conn, row);
        Ok(())
    }
}

/// Locks the row of `M` with primary key `pk` until the end of the current write transaction,
/// for a rule that reads rows to decide (a cap, a stock): rules of concurrent writes that lock
/// the same row run one after the other, so that none decides on what another is changing.
/// Take it before reading what the rule counts, and lock rows in the same order everywhere.
///
/// On PostgreSQL this is `SELECT ... FOR UPDATE` (READ COMMITTED, PostgreSQL's default, lets
/// two transactions count the same rows at once: twelve concurrent loans under a cap of three
/// gave four without it). On SQLite it does nothing: a write transaction holds the database's
/// write lock from its start (`BEGIN IMMEDIATE`), so writes already take turns.
///
/// ```
/// use plover::prelude::*;
/// use plover::db::Conn;
/// use plover::model::{lock_row, Rules};
/// # diesel::table! { shelf (id) { id -> Integer, free -> Integer } }
///
/// #[derive(RestModel)]
/// #[diesel(table_name = shelf)]
/// #[rest(rules)]
/// pub struct Shelf { pub id: i32, pub free: i32 }
/// impl Rules for Shelf {}
///
/// let db = Database::from_url("sqlite://:memory:?max_connections=1").unwrap();
/// db.run_blocking(|c| plover::schema::create_tables(c, &[Shelf::meta()])).unwrap();
/// let id = db
///     .run_blocking(|c| Shelf::insert(c, ShelfChanges { free: Some(1) }))
///     .unwrap();
/// db.run_blocking(|c| c.transaction(|c| lock_row::<Shelf>(c, id))).unwrap();
/// ```
pub fn lock_row<M: RestModel>(conn: &mut Conn<'_>, pk: i64) -> Result<(), Error> {
    match conn {
        Conn::Sqlite(_) => {
            let _ = pk; // writes take turns already
            Ok(())
        }
        #[cfg(feature = "postgres")]
        Conn::Pg(c) => {
            use diesel::RunQueryDsl;
            let meta = M::meta();
            let sql = format!(
                "SELECT 1 FROM \"{}\" WHERE \"{}\" = $1 FOR UPDATE",
                meta.table, meta.fields[meta.pk].column
            );
            diesel::sql_query(sql)
                .bind::<diesel::sql_types::BigInt, _>(pk)
                .execute(*c)
                .map(|_| ())
                .map_err(Error::from)
        }
    }
}
