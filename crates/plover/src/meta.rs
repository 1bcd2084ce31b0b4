//! Model metadata: what `#[derive(RestModel)]` generates for each model and field, the
//! type-erased database operations it fills in, and the registry of every model.

use std::any::TypeId;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{PoisonError, RwLock};

use serde_json::Value;

use crate::db::sql_text::SqlCache;
use crate::db::Conn;
use crate::error::Error;
use crate::query::Select;
use crate::value::kind::{FieldKind, SqlType};

/// Compile-time metadata of one field of a model.
#[derive(Debug)]
pub struct FieldMeta {
    /// The field's API name: the column name, or for a foreign key the column without `_id`.
    pub(crate) name: &'static str,
    /// The database column (and Rust field) name.
    pub(crate) column: &'static str,
    /// The key in serialized objects: the name, or `<name>_id` for a foreign key.
    pub(crate) key: &'static str,
    /// The value type.
    pub(crate) kind: FieldKind,
    /// Whether the column accepts NULL (`Option<T>`).
    pub(crate) nullable: bool,
    /// Whether this is the primary key.
    pub(crate) primary_key: bool,
    /// Whether a POST must give it (not null, no default, not the primary key).
    pub(crate) required: bool,
    /// Write-only (`#[rest(write_only)]`, or excluded at the model level): accepted in bodies
    /// and forms, never serialized, filterable or orderable.
    pub(crate) excluded: bool,
    /// Read-only (`#[rest(read_only)]`): serialized, never written by a client (a body key
    /// naming it is a 400; admin forms show it disabled).
    pub(crate) read_only: bool,
    /// Whether no two rows share a value (the primary key, or `#[rest(unique)]`): an equality
    /// filter through a foreign key to it then selects at most one row.
    pub(crate) unique: bool,
    /// The related model of a foreign key.
    pub(crate) fk: Option<fn() -> &'static ModelMeta>,
    /// The column type, from the Rust type.
    pub(crate) sql_type: SqlType,
    /// The column's SQL `DEFAULT` in the generated schema: the literal of a
    /// `#[rest(default = ...)]` that is a plain literal (`0`, `true`, `"x"`, `String::new()`).
    pub(crate) sql_default: Option<&'static str>,
    /// The field's doc comment (`///` lines), the field's description in the API reference.
    pub(crate) doc: &'static str,
    /// What the field accepts beyond its type (`#[rest(min = .., max_len = .., ..)]`, choices).
    pub(crate) constraints: Constraints,
    /// `#[rest(long)]`: text of several lines (a `<textarea>` in the admin).
    pub(crate) long: bool,
    /// `#[rest(search_index)]`: a text field whose substrings are indexed for a search
    /// (`q`, `contains`): on SQLite an FTS5 trigram table kept by triggers, on PostgreSQL a
    /// trigram GIN index (`crate::schema::search`).
    pub(crate) search_index: bool,
    /// `#[rest(private)]`: never serialized, written, filtered or ordered by the API, on any
    /// resource or through any join, unless a resource shows it (`Resource::show`), and then
    /// only there; the admin's forms show and edit it.
    pub(crate) private: bool,
    /// The name people read (`#[rest(verbose_name = "...")]`, else the name humanized:
    /// `join_date` reads `Join date`): the admin's labels and column heads, the API
    /// description's titles.
    pub(crate) verbose_name: &'static str,
}

/// What a field accepts beyond its type, declared in `#[rest(...)]`: checked for every writer
/// before the model's rules (a 400 naming the field), a `CHECK` in the generated schema, and
/// in the API description. Nothing is checked of `NULL`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Constraints {
    /// `min = n`: the smallest number accepted.
    pub min: Option<Bound>,
    /// `max = n`: the largest number accepted.
    pub max: Option<Bound>,
    /// `min_len = n`: the fewest characters (Unicode scalar values) accepted.
    pub min_len: Option<u32>,
    /// `max_len = n`: the most characters accepted.
    pub max_len: Option<u32>,
    /// `not_blank`: at least one character that is not white space.
    pub not_blank: bool,
    /// The only values accepted, as stored: a choice enum's variants, or `choices = [..]`.
    pub choices: &'static [&'static str],
}

impl Constraints {
    /// No constraint.
    pub const NONE: Constraints = Constraints {
        min: None,
        max: None,
        min_len: None,
        max_len: None,
        not_blank: false,
        choices: &[],
    };
}

/// A bound of `min` or `max`: whole for an integer field, else a float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// For `i32` and `i64` fields.
    Int(i64),
    /// For `f32` and `f64` fields.
    Float(f64),
}

impl Bound {
    /// The bound as a float (for comparing and describing).
    pub fn as_f64(self) -> f64 {
        match self {
            // Bounds are literals in the source: far inside f64's exact range in practice.
            #[allow(clippy::cast_precision_loss)]
            Bound::Int(n) => n as f64,
            Bound::Float(x) => x,
        }
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::Int(n) => write!(f, "{n}"),
            Bound::Float(x) => write!(f, "{x}"),
        }
    }
}

/// The setters that `#[derive(RestModel)]` builds a field's metadata with.
impl FieldMeta {
    #[doc(hidden)]
    pub const fn new(
        name: &'static str,
        column: &'static str,
        key: &'static str,
        kind: FieldKind,
        sql_type: SqlType,
    ) -> FieldMeta {
        FieldMeta {
            name,
            column,
            key,
            kind,
            nullable: false,
            primary_key: false,
            required: false,
            excluded: false,
            read_only: false,
            unique: false,
            fk: None,
            sql_type,
            sql_default: None,
            doc: "",
            constraints: Constraints::NONE,
            long: false,
            search_index: false,
            private: false,
            verbose_name: name,
        }
    }

    #[doc(hidden)]
    pub const fn with_verbose_name(mut self, verbose_name: &'static str) -> FieldMeta {
        self.verbose_name = verbose_name;
        self
    }

    #[doc(hidden)]
    pub const fn mark_nullable(mut self) -> FieldMeta {
        self.nullable = true;
        self
    }

    #[doc(hidden)]
    pub const fn mark_primary_key(mut self) -> FieldMeta {
        self.primary_key = true;
        self.unique = true;
        self
    }

    #[doc(hidden)]
    pub const fn mark_required(mut self) -> FieldMeta {
        self.required = true;
        self
    }

    #[doc(hidden)]
    pub const fn mark_write_only(mut self) -> FieldMeta {
        self.excluded = true;
        self
    }

    #[doc(hidden)]
    pub const fn mark_read_only(mut self) -> FieldMeta {
        self.read_only = true;
        self
    }

    #[doc(hidden)]
    pub const fn mark_unique(mut self) -> FieldMeta {
        self.unique = true;
        self
    }

    #[doc(hidden)]
    pub const fn mark_long(mut self) -> FieldMeta {
        self.long = true;
        self
    }

    #[doc(hidden)]
    pub const fn mark_search_index(mut self) -> FieldMeta {
        self.search_index = true;
        self
    }

    #[doc(hidden)]
    pub const fn mark_private(mut self) -> FieldMeta {
        self.private = true;
        self
    }

    #[doc(hidden)]
    pub const fn with_target(mut self, target: fn() -> &'static ModelMeta) -> FieldMeta {
        self.fk = Some(target);
        self
    }

    #[doc(hidden)]
    pub const fn with_default(mut self, literal: &'static str) -> FieldMeta {
        self.sql_default = Some(literal);
        self
    }

    #[doc(hidden)]
    pub const fn with_doc(mut self, doc: &'static str) -> FieldMeta {
        self.doc = doc;
        self
    }

    #[doc(hidden)]
    pub const fn with_constraints(mut self, constraints: Constraints) -> FieldMeta {
        self.constraints = constraints;
        self
    }
}

impl FieldMeta {
    /// The field's API name: the column name, or for a foreign key the column without `_id`.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The name people read: `#[rest(verbose_name = "...")]`, else the name humanized
    /// (`join_date` reads `Join date`).
    pub fn verbose_name(&self) -> &'static str {
        self.verbose_name
    }

    /// The database column (and Rust field) name.
    pub fn column(&self) -> &'static str {
        self.column
    }

    /// The key of this field in serialized objects: `<name>_id` for a foreign key.
    pub fn json_key(&self) -> &'static str {
        self.key
    }

    /// The value type.
    pub fn kind(&self) -> FieldKind {
        self.kind
    }

    /// The column type, from the Rust type.
    pub fn sql_type(&self) -> SqlType {
        self.sql_type
    }

    /// Whether the column accepts NULL (`Option<T>`).
    pub fn is_nullable(&self) -> bool {
        self.nullable
    }

    /// Whether this is the primary key.
    pub fn is_primary_key(&self) -> bool {
        self.primary_key
    }

    /// Whether a POST must give it (not null, no default, not the primary key, not read-only).
    pub fn is_required(&self) -> bool {
        self.required
    }

    /// Write-only (`#[rest(write_only)]`): accepted in bodies and forms, never serialized,
    /// filtered or ordered.
    pub fn is_write_only(&self) -> bool {
        self.excluded
    }

    /// Read-only (`#[rest(read_only)]`): serialized, never written by a client.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Whether no two rows share a value (the primary key, or `#[rest(unique)]`).
    pub fn is_unique(&self) -> bool {
        self.unique
    }

    /// `#[rest(long)]`: text of several lines (a `<textarea>` in the admin).
    pub fn is_long(&self) -> bool {
        self.long
    }

    /// `#[rest(search_index)]`: the field's substrings are indexed for a search
    /// (docs/reference.md#search-q).
    pub fn has_search_index(&self) -> bool {
        self.search_index
    }

    /// `#[rest(private)]`: shown by no resource unless it names the field in `show`.
    pub fn is_private(&self) -> bool {
        self.private
    }

    /// The model a foreign key points at.
    pub fn target(&self) -> Option<&'static ModelMeta> {
        self.fk.map(|meta| meta())
    }

    /// The model a path through this field goes on in: its foreign key's target; an internal
    /// error for a field that is not a foreign key (the paths checked at set-up never are).
    pub(crate) fn joined(&self) -> Result<&'static ModelMeta, Error> {
        self.target().ok_or_else(|| {
            Error::Internal(format!("a path through {}, not a foreign key", self.name))
        })
    }

    /// The column's SQL `DEFAULT` in the generated schema, if the field declares a literal one.
    pub fn sql_default(&self) -> Option<&'static str> {
        self.sql_default
    }

    /// The field's doc comment (`///` lines).
    pub fn doc(&self) -> &'static str {
        self.doc
    }

    /// What the field accepts beyond its type (`#[rest(min = .., max_len = .., ..)]`, choices).
    pub fn constraints(&self) -> &Constraints {
        &self.constraints
    }

    /// Whether `key` names this field (`user` and `user_id` both name a foreign key).
    pub fn answers_to(&self, key: &str) -> bool {
        self.name == key || self.key == key || self.column == key
    }
}

/// The type of [`ModelOps::before_delete`].
pub(crate) type BeforeDelete = fn(&mut Conn<'_>, &[i64]) -> Result<(), Error>;

/// `(primary key, display text)` of the rows of a selection.
pub(crate) type LoadDisplay = fn(&mut Conn<'_>, &Select) -> Result<Vec<(i64, String)>, Error>;

/// Some fields (by index) of the rows of a selection, one JSON value per field.
pub(crate) type LoadFields = fn(&mut Conn<'_>, &Select, &[usize]) -> Result<Vec<Vec<Value>>, Error>;

/// Type-erased operations of a model that need its Rust type, used where the model is only known
/// at run time (recursive deletes, the admin's selects and exports).
#[derive(Debug)]
// The admin's selects and exports read `load_display` and `load_fields`.
#[cfg_attr(not(feature = "admin"), allow(dead_code))]
pub(crate) struct ModelOps {
    /// The model's [`Rules::before_delete`](crate::model::Rules::before_delete) for the rows
    /// with these primary keys, run before they are deleted (`None` without `#[rest(rules)]`).
    pub(crate) before_delete: Option<BeforeDelete>,
    /// The primary key and display text of the rows of a selection.
    pub(crate) load_display: LoadDisplay,
    /// Some fields (by index) of the rows of a selection, as JSON values.
    pub(crate) load_fields: LoadFields,
}

/// One column of a declared index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexColumn {
    /// The column.
    pub column: &'static str,
    /// Whether the index keeps it in descending order (`-name` in `#[rest(index = "...")]`).
    pub descending: bool,
}

/// Compile-time metadata of a model.
#[derive(Debug)]
pub struct ModelMeta {
    /// Lowercase model name, the default API name (`message`).
    pub(crate) name: &'static str,
    /// The name people read of one row (`#[rest(verbose_name = "...")]`, else the struct's
    /// name humanized: `Message`, `Blog post`).
    pub(crate) verbose_name: &'static str,
    /// Of several rows (`#[rest(verbose_name_plural = "...")]`, else the plural of
    /// `verbose_name`: `Messages`).
    pub(crate) verbose_name_plural: &'static str,
    /// The database table.
    pub(crate) table: &'static str,
    /// Every field, in declaration order.
    pub(crate) fields: &'static [FieldMeta],
    /// Index of the primary key in `fields`.
    pub(crate) pk: usize,
    /// The declared indexes, each a list of columns (`#[rest(index)]` on a field,
    /// `#[rest(index = "a, -b")]` on the struct); foreign keys get theirs without a declaration.
    pub(crate) indexes: &'static [&'static [IndexColumn]],
    /// The first paragraph of the struct's doc comment, the resource's description in the API
    /// reference.
    pub(crate) doc: &'static str,
    /// The Rust type, to check `include_resources` at set-up.
    pub(crate) type_id: fn() -> TypeId,
    /// Database operations.
    pub(crate) ops: ModelOps,
    /// The SQL texts of the model's statements by shape.
    pub(crate) cache: SqlCache,
    /// Whether its writes record their events in the outbox (docs/changes.md).
    changes: AtomicBool,
}

/// The setters that `#[derive(RestModel)]` builds a model's metadata with.
impl ModelMeta {
    /// A model's metadata (`__private::model` fills in the operations for its type).
    pub(crate) const fn new(
        name: &'static str,
        table: &'static str,
        fields: &'static [FieldMeta],
        pk: usize,
        type_id: fn() -> TypeId,
        ops: ModelOps,
    ) -> ModelMeta {
        ModelMeta {
            name,
            verbose_name: name,
            verbose_name_plural: name,
            table,
            fields,
            pk,
            indexes: &[],
            doc: "",
            type_id,
            ops,
            cache: SqlCache::new(),
            changes: AtomicBool::new(false),
        }
    }

    #[doc(hidden)]
    pub const fn with_doc(mut self, doc: &'static str) -> ModelMeta {
        self.doc = doc;
        self
    }

    #[doc(hidden)]
    pub const fn with_verbose_names(
        mut self,
        singular: &'static str,
        plural: &'static str,
    ) -> ModelMeta {
        self.verbose_name = singular;
        self.verbose_name_plural = plural;
        self
    }

    #[doc(hidden)]
    pub const fn with_indexes(mut self, indexes: &'static [&'static [IndexColumn]]) -> ModelMeta {
        self.indexes = indexes;
        self
    }
}

impl ModelMeta {
    /// Lowercase model name, the default API name (`message`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The name people read of one row: `#[rest(verbose_name = "...")]`, else the struct's
    /// name humanized (`Message`, `Blog post`).
    pub fn verbose_name(&self) -> &'static str {
        self.verbose_name
    }

    /// The name people read of several rows: `#[rest(verbose_name_plural = "...")]`, else the
    /// plural of [`verbose_name`](Self::verbose_name) (`Messages`, `Categories`).
    pub fn verbose_name_plural(&self) -> &'static str {
        self.verbose_name_plural
    }

    /// The database table.
    pub fn table(&self) -> &'static str {
        self.table
    }

    /// Every field, in declaration order.
    pub fn fields(&self) -> &'static [FieldMeta] {
        self.fields
    }

    /// The position of the primary key in [`fields`](Self::fields).
    pub fn pk_index(&self) -> usize {
        self.pk
    }

    /// The declared indexes, each a list of columns (`#[rest(index)]` on a field,
    /// `#[rest(index = "a, -b")]` on the struct); foreign keys get theirs without a declaration.
    pub fn indexes(&self) -> &'static [&'static [IndexColumn]] {
        self.indexes
    }

    /// The first paragraph of the struct's doc comment.
    pub fn doc(&self) -> &'static str {
        self.doc
    }

    /// The field at `index`; an internal error past the model's fields (the indexes made at
    /// set-up never are).
    pub(crate) fn field_at(&self, index: usize) -> Result<&'static FieldMeta, Error> {
        (self.fields.get(index))
            .ok_or_else(|| Error::Internal(format!("{} has no field {index}", self.name)))
    }

    /// The field at the end of a path of field indexes from this model (each but the last a
    /// foreign key into the model of the next), and the model that has it.
    pub(crate) fn leaf(&self, path: &[usize]) -> Result<(&ModelMeta, &'static FieldMeta), Error> {
        let Some((last, through)) = path.split_last() else {
            return Err(Error::Internal("an empty path of fields".into()));
        };
        let mut model = self;
        for &index in through {
            model = model.field_at(index)?.joined()?;
        }
        Ok((model, model.field_at(*last)?))
    }

    /// The field that `key` names (API name or column name).
    pub fn field(&self, key: &str) -> Option<(usize, &'static FieldMeta)> {
        self.fields
            .iter()
            .enumerate()
            .find(|(_, f)| f.answers_to(key))
    }

    /// The primary key field.
    pub fn pk_field(&self) -> &'static FieldMeta {
        &self.fields[self.pk]
    }

    /// Whether the model's writes record their events in the outbox (docs/changes.md).
    pub fn records_changes(&self) -> bool {
        self.changes.load(Ordering::Relaxed)
    }

    /// From now on, in this process, the model's writes record their events in the outbox.
    pub(crate) fn record_changes(&self) {
        self.changes.store(true, Ordering::Relaxed);
    }

    /// Per field, whether the options `fields` (the only ones, if given) and `exclude` leave
    /// it shown; a write-only field never is, a private one only when `show` names it. REST
    /// resources and model admins both expose their fields so.
    pub(crate) fn shown(
        &self,
        fields: Option<&[usize]>,
        exclude: &[usize],
        show: &[usize],
    ) -> Vec<bool> {
        (0..self.fields.len())
            .map(|i| {
                !self.fields[i].excluded
                    && (!self.fields[i].private || show.contains(&i))
                    && fields.is_none_or(|l| l.contains(&i))
                    && !exclude.contains(&i)
            })
            .collect()
    }
}

/// A registered model, collected at link time to find the foreign keys that point at a model.
#[derive(Debug)]
pub struct ModelEntry(pub fn() -> &'static ModelMeta);

inventory::collect!(ModelEntry);

/// Every model that derives `RestModel` in the program.
pub(crate) fn all_models() -> impl Iterator<Item = &'static ModelMeta> {
    inventory::iter::<ModelEntry>.into_iter().map(|e| (e.0)())
}

/// A field that holds the primary key of a user of the application's user model, whichever
/// it is (Plover's own tables cannot name it in a foreign key): the `user_id` of the tables of
/// permissions. Deleting a user deletes the rows that hold its key here, as a required
/// foreign key's rows are deleted ([`user_references`]). Collected at link time.
#[derive(Debug)]
pub(crate) struct UserReference {
    /// The model of the field.
    pub(crate) model: fn() -> &'static ModelMeta,
    /// The field's column.
    pub(crate) column: &'static str,
}

inventory::collect!(UserReference);

/// The models of users: each that an `Auth` was built for ([`note_user_model`]).
static USER_MODELS: RwLock<Vec<TypeId>> = RwLock::new(Vec::new());

/// Notes `meta` as a model of users: the [`UserReference`] fields refer to its rows.
pub(crate) fn note_user_model(meta: &'static ModelMeta) {
    let id = (meta.type_id)();
    let mut models = USER_MODELS.write().unwrap_or_else(PoisonError::into_inner);
    if !models.contains(&id) {
        models.push(id);
    }
}

/// The [`UserReference`] fields that point at `meta`'s rows (none unless it is a model of
/// users): (their model, the field's index, the field).
pub(crate) fn user_references(
    meta: &ModelMeta,
) -> impl Iterator<Item = (&'static ModelMeta, usize, &'static FieldMeta)> {
    let models = USER_MODELS.read().unwrap_or_else(PoisonError::into_inner);
    let of_users = models.contains(&(meta.type_id)());
    (inventory::iter::<UserReference>.into_iter())
        .filter(move |_| of_users)
        .filter_map(|r| {
            let model = (r.model)();
            let (idx, field) = model
                .fields
                .iter()
                .enumerate()
                .find(|(_, f)| f.column == r.column)?;
            Some((model, idx, field))
        })
}
