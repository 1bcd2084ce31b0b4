//! The Rust types of fields as columns: how each is bound ([`Column::arg`]) and read back from
//! a row on each engine. A model reads its row field by field through [`Cells`].

use std::borrow::Cow;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::Arc;

use chrono::{NaiveDate, NaiveDateTime};
use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql, QueryableByName};
use diesel::row::{Field, NamedRow, Row};
use diesel::sql_types::{BigInt, Bool, Date, Double, Float, Integer, Text, Timestamp};
use diesel::sqlite::{Sqlite, SqliteValue};

use crate::db::reading;
use crate::db::sqlite_dates::{SqliteDate, SqliteDateTime};
use crate::sql::arg::Arg;
use crate::value::kind::SqlType;

/// A Rust type a model field can have.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a field type Plover knows",
    label = "not a field type",
    note = "use i32, i64, f32, f64, bool, String, chrono::NaiveDate, chrono::NaiveDateTime \
            (or an Option of one), or a plain enum with `#[derive(Choice)]`"
)]
pub trait Column: Sized {
    /// Whether the column takes NULL (an `Option`).
    const NULLABLE: bool = false;
    /// The column's type.
    const SQL_TYPE: SqlType;
    /// The value as a bound argument.
    fn arg(&self) -> Arg<'_>;
    /// A copy of the value (a change written on several rows, or again after a create that
    /// gave way), whether or not the type is `Clone`.
    fn copy(&self) -> Self;
    /// The value `arg` holds, if it is one of this type (the inverse of [`Column::arg`]; NULL
    /// only for an `Option`).
    fn from_arg(arg: Arg<'_>) -> Option<Self>;
    /// The value of a column a list leaves out (never shown).
    fn absent() -> Self;
    /// Reads an SQLite value (`None`: NULL).
    fn read_sqlite(value: Option<SqliteValue<'_, '_, '_>>) -> deserialize::Result<Self>;
    /// Reads a PostgreSQL value (`None`: NULL).
    #[cfg(feature = "postgres")]
    fn read_pg(value: Option<diesel::pg::PgValue<'_>>) -> deserialize::Result<Self>;
}

macro_rules! column {
    ($t:ty, $sql:ty, $kind:ident, $variant:ident, $absent:expr) => {
        column!($t, $sql, $kind, $variant, $absent, $t);
    };
    ($t:ty, $sql:ty, $kind:ident, $variant:ident, $absent:expr, $sqlite:ty) => {
        impl Column for $t {
            const SQL_TYPE: SqlType = SqlType::$kind;
            fn arg(&self) -> Arg<'_> {
                Arg::$variant(self.clone().into())
            }
            fn copy(&self) -> Self {
                self.clone()
            }
            fn from_arg(arg: Arg<'_>) -> Option<Self> {
                match arg {
                    Arg::$variant(value) => Some(value),
                    _ => None,
                }
            }
            fn absent() -> Self {
                $absent
            }
            fn read_sqlite(value: Option<SqliteValue<'_, '_, '_>>) -> deserialize::Result<Self> {
                <$sqlite as FromSql<$sql, Sqlite>>::from_nullable_sql(value).map(Into::into)
            }
            #[cfg(feature = "postgres")]
            fn read_pg(value: Option<diesel::pg::PgValue<'_>>) -> deserialize::Result<Self> {
                <$t as FromSql<$sql, diesel::pg::Pg>>::from_nullable_sql(value)
            }
        }
    };
}

column!(i32, Integer, Integer, I32, 0);
column!(i64, BigInt, BigInt, I64, 0);
column!(f32, Float, Real, F32, 0.0);
column!(f64, Double, Double, F64, 0.0);
column!(bool, Bool, Boolean, Bool, false);
column!(
    NaiveDate,
    Date,
    Date,
    Date,
    NaiveDate::default(),
    SqliteDate
);
column!(
    NaiveDateTime,
    Timestamp,
    Timestamp,
    DateTime,
    NaiveDateTime::default(),
    SqliteDateTime
);

impl Column for String {
    const SQL_TYPE: SqlType = SqlType::Text;
    fn arg(&self) -> Arg<'_> {
        Arg::Text(Cow::Borrowed(self))
    }
    fn copy(&self) -> Self {
        self.clone()
    }
    fn from_arg(arg: Arg<'_>) -> Option<Self> {
        match arg {
            Arg::Text(text) => Some(text.into_owned()),
            _ => None,
        }
    }
    fn absent() -> Self {
        String::new()
    }
    fn read_sqlite(value: Option<SqliteValue<'_, '_, '_>>) -> deserialize::Result<Self> {
        counted(<String as FromSql<Text, Sqlite>>::from_nullable_sql(value)?)
    }
    #[cfg(feature = "postgres")]
    fn read_pg(value: Option<diesel::pg::PgValue<'_>>) -> deserialize::Result<Self> {
        counted(<String as FromSql<Text, diesel::pg::Pg>>::from_nullable_sql(value)?)
    }
}

/// A text read from a row, counted against the request's read budget ([`reading`]).
fn counted(text: String) -> deserialize::Result<String> {
    reading::count(text.len())?;
    Ok(text)
}

impl<T: Column> Column for Option<T> {
    const NULLABLE: bool = true;
    const SQL_TYPE: SqlType = T::SQL_TYPE;
    fn arg(&self) -> Arg<'_> {
        self.as_ref().map_or(Arg::Null(T::SQL_TYPE), Column::arg)
    }
    fn copy(&self) -> Self {
        self.as_ref().map(T::copy)
    }
    fn from_arg(arg: Arg<'_>) -> Option<Self> {
        match arg {
            Arg::Null(_) => Some(None),
            arg => T::from_arg(arg).map(Some),
        }
    }
    fn absent() -> Self {
        None
    }
    fn read_sqlite(value: Option<SqliteValue<'_, '_, '_>>) -> deserialize::Result<Self> {
        value.map(|v| T::read_sqlite(Some(v))).transpose()
    }
    #[cfg(feature = "postgres")]
    fn read_pg(value: Option<diesel::pg::PgValue<'_>>) -> deserialize::Result<Self> {
        value.map(|v| T::read_pg(Some(v))).transpose()
    }
}

/// The cells of one row, read in field order by a model's generated `RestModel::read`.
pub trait Cells {
    /// The next field's value.
    fn next<T: Column>(&mut self) -> deserialize::Result<T>;
}

/// An engine whose rows Plover reads.
pub(crate) trait Engine: Backend {
    fn read<T: Column>(value: Option<Self::RawValue<'_>>) -> deserialize::Result<T>;
}

impl Engine for Sqlite {
    fn read<T: Column>(value: Option<SqliteValue<'_, '_, '_>>) -> deserialize::Result<T> {
        T::read_sqlite(value)
    }
}

#[cfg(feature = "postgres")]
impl Engine for diesel::pg::Pg {
    fn read<T: Column>(value: Option<diesel::pg::PgValue<'_>>) -> deserialize::Result<T> {
        T::read_pg(value)
    }
}

thread_local! {
    /// Per field, whether the statement being read selects it (`None`: every field): a field
    /// left out has no column in the row and reads as [`Column::absent`]. Set by [`selecting`]
    /// around the reading of a statement's rows, which happens on this thread.
    static SELECTED: RefCell<Option<Arc<[bool]>>> = const { RefCell::new(None) };
}

/// Runs `read` (the reading of the rows of a statement that selects `columns`: per field,
/// whether it is a column of the row; `None`: all of them) with [`Loaded`] reading the rows
/// that way.
pub(crate) fn selecting<T>(columns: Option<&Arc<[bool]>>, read: impl FnOnce() -> T) -> T {
    let before = SELECTED.replace(columns.cloned());
    let out = read();
    SELECTED.set(before);
    out
}

struct RowCells<'r, 's, R, DB> {
    row: &'r R,
    /// The next column of the row.
    at: usize,
    /// The next field of the model.
    field: usize,
    /// Per field, whether the row has its column (`None`: every field).
    selected: Option<&'s [bool]>,
    engine: PhantomData<DB>,
}

impl<'a, R, DB> Cells for RowCells<'_, '_, R, DB>
where
    R: Row<'a, DB>,
    DB: Engine,
{
    fn next<T: Column>(&mut self) -> deserialize::Result<T> {
        let field = self.field;
        self.field += 1;
        if self
            .selected
            .is_some_and(|s| !s.get(field).copied().unwrap_or(true))
        {
            return Ok(T::absent());
        }
        let cell = Row::get(self.row, self.at)
            .ok_or("the row has fewer columns than the model has fields")?;
        self.at += 1;
        DB::read(cell.value())
    }
}

/// A type read from the columns of a row, in order: a model (generated by
/// `#[derive(RestModel)]`, one [`Cells::next`] per field).
pub trait FromRow: Sized + 'static {
    /// Reads the row's cells in order.
    fn read<C: Cells>(cells: &mut C) -> deserialize::Result<Self>;
}

/// A row read as `M` from any query that selects its columns in field order (those of the
/// fields [`selecting`] names).
pub(crate) struct Loaded<M>(pub(crate) M);

impl<M: FromRow, DB: Engine> QueryableByName<DB> for Loaded<M> {
    fn build<'a>(row: &impl NamedRow<'a, DB>) -> deserialize::Result<Self> {
        SELECTED.with_borrow(|selected| {
            let mut cells = RowCells {
                row,
                at: 0,
                field: 0,
                selected: selected.as_deref(),
                engine: PhantomData::<DB>,
            };
            M::read(&mut cells).map(Loaded)
        })
    }
}

/// A written row read as `M` (every field, in field order) from a write's `RETURNING`, and
/// the text of the column after them if the statement returns one: the row's JSON that the
/// outbox keeps (docs/changes.md), returned by the write of a model that records its changes.
pub(crate) struct Snapshot<M>(pub(crate) M, pub(crate) Option<String>);

impl<M: FromRow, DB: Engine> QueryableByName<DB> for Snapshot<M> {
    fn build<'a>(row: &impl NamedRow<'a, DB>) -> deserialize::Result<Self> {
        let mut cells = RowCells {
            row,
            at: 0,
            field: 0,
            selected: None,
            engine: PhantomData::<DB>,
        };
        let model = M::read(&mut cells)?;
        let json = Row::get(row, cells.at).map(|cell| DB::read::<String>(cell.value()));
        Ok(Snapshot(model, json.transpose()?))
    }
}

/// The estimated number of rows of a PostgreSQL plan: `EXPLAIN (FORMAT JSON)`'s
/// `[{"Plan": {"Plan Rows": n, ...}}]`.
#[cfg(feature = "postgres")]
pub(crate) struct Plan(pub(crate) i64);

#[cfg(feature = "postgres")]
impl QueryableByName<diesel::pg::Pg> for Plan {
    fn build<'a>(row: &impl NamedRow<'a, diesel::pg::Pg>) -> deserialize::Result<Self> {
        let field = Row::get(row, 0).ok_or("no column")?;
        let bytes = field.value().ok_or("no plan")?.as_bytes();
        let plan: serde_json::Value = serde_json::from_slice(bytes)?;
        let rows = plan[0]["Plan"]["Plan Rows"]
            .as_f64()
            .ok_or("no row estimate")?;
        // An estimate: rounded, and never below zero.
        #[allow(clippy::cast_possible_truncation)]
        Ok(Plan(rows.max(0.0).round() as i64))
    }
}

/// An integer key or count read from the first column (`INTEGER` or `BIGINT`).
pub(crate) struct Key(pub(crate) i64);

impl QueryableByName<Sqlite> for Key {
    fn build<'a>(row: &impl NamedRow<'a, Sqlite>) -> deserialize::Result<Self> {
        let field = Row::get(row, 0).ok_or("no column")?;
        i64::read_sqlite(field.value()).map(Key)
    }
}

#[cfg(feature = "postgres")]
impl QueryableByName<diesel::pg::Pg> for Key {
    fn build<'a>(row: &impl NamedRow<'a, diesel::pg::Pg>) -> deserialize::Result<Self> {
        /// PostgreSQL's type id of `integer` (`int4`).
        const INT4: u32 = 23;
        let field = Row::get(row, 0).ok_or("no column")?;
        match field.value() {
            Some(v) if v.get_oid().get() == INT4 => i32::read_pg(Some(v)).map(|k| Key(k.into())),
            v => i64::read_pg(v).map(Key),
        }
    }
}

/// A key and a text read from the first two columns (a row's key and its JSON).
pub(crate) struct KeyText(pub(crate) i64, pub(crate) String);

impl QueryableByName<Sqlite> for KeyText {
    fn build<'a>(row: &impl NamedRow<'a, Sqlite>) -> deserialize::Result<Self> {
        let Key(key) = Key::build(row)?;
        let text = Row::get(row, 1).ok_or("no second column")?;
        Ok(KeyText(key, String::read_sqlite(text.value())?))
    }
}

#[cfg(feature = "postgres")]
impl QueryableByName<diesel::pg::Pg> for KeyText {
    fn build<'a>(row: &impl NamedRow<'a, diesel::pg::Pg>) -> deserialize::Result<Self> {
        let Key(key) = Key::build(row)?;
        let text = Row::get(row, 1).ok_or("no second column")?;
        Ok(KeyText(key, String::read_pg(text.value())?))
    }
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;

    use super::Column;
    use crate::sql::arg::Arg;
    use crate::value::kind::SqlType;

    /// `from_arg` reads back what `arg` binds.
    fn round_trip<T: Column + PartialEq + std::fmt::Debug>(value: T) {
        assert_eq!(T::from_arg(value.arg()), Some(value));
    }

    #[test]
    fn from_arg_reads_back_each_type() {
        round_trip(7_i32);
        round_trip(1_i64 << 40);
        round_trip(0.5_f32);
        round_trip(2.25_f64);
        round_trip(true);
        round_trip("text".to_owned());
        round_trip(NaiveDate::from_ymd_opt(2024, 2, 29));
        round_trip(Some(3_i32));
        round_trip(None::<String>);
    }

    #[test]
    fn from_arg_refuses_another_type_and_null_outside_an_option() {
        assert_eq!(i32::from_arg(Arg::I64(1)), None);
        assert_eq!(String::from_arg(Arg::I32(1)), None);
        assert_eq!(i64::from_arg(Arg::Null(SqlType::BigInt)), None);
        assert_eq!(Option::<i64>::from_arg(Arg::Text("1".into())), None);
    }
}
