//! Values bound to a statement: one typed [`Arg`] per placeholder, bound as the column's SQL
//! type on each engine (a PostgreSQL array for `= ANY($n)`).

use std::borrow::Cow;

use chrono::{NaiveDate, NaiveDateTime};
use diesel::query_builder::AstPass;
use diesel::sql_types::{BigInt, Bool, Date, Double, Float, Integer, Nullable, Text, Timestamp};
use diesel::sqlite::Sqlite;
use diesel::QueryResult;

use crate::error::Error;
use crate::value::kind::SqlType;
use crate::value::param::Param;

/// One bound value.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg<'a> {
    /// SQL NULL in a column of this type.
    Null(SqlType),
    /// A boolean.
    Bool(bool),
    /// An `INTEGER`.
    I32(i32),
    /// A `BIGINT`.
    I64(i64),
    /// A `REAL`.
    F32(f32),
    /// A `DOUBLE PRECISION`.
    F64(f64),
    /// Text.
    Text(Cow<'a, str>),
    /// A date.
    Date(NaiveDate),
    /// A date-time.
    DateTime(NaiveDateTime),
    /// Several values of one type, bound as one PostgreSQL array (`= ANY($n)`).
    #[cfg(feature = "postgres")]
    List(List),
}

/// An `f32` as the shortest decimal that reads back as it (0.1, not its widened binary value):
/// the number its objects show.
pub(crate) fn decimal(value: f32) -> f64 {
    value.to_string().parse().unwrap_or(f64::NAN)
}

/// The values of a PostgreSQL array parameter.
#[cfg(feature = "postgres")]
#[derive(Debug, Clone, PartialEq)]
pub enum List {
    /// Booleans.
    Bool(Vec<bool>),
    /// `INTEGER`s.
    I32(Vec<i32>),
    /// `BIGINT`s.
    I64(Vec<i64>),
    /// `REAL`s.
    F32(Vec<f32>),
    /// `DOUBLE PRECISION`s.
    F64(Vec<f64>),
    /// Texts.
    Text(Vec<String>),
    /// Dates.
    Date(Vec<NaiveDate>),
    /// Date-times.
    DateTime(Vec<NaiveDateTime>),
}

impl Arg<'_> {
    /// A filter value as an argument of a column of type `sql`.
    pub(crate) fn of(sql: SqlType, param: &Param) -> Result<Arg<'_>, Error> {
        Ok(match (sql, param) {
            (_, Param::Null) => Arg::Null(sql),
            (SqlType::Boolean, Param::Bool(v)) => Arg::Bool(*v),
            (SqlType::Integer | SqlType::BigInt, Param::Int(v)) => {
                Arg::key(sql, *v).ok_or_else(|| unfit(param))?
            }
            #[allow(clippy::cast_possible_truncation)]
            (SqlType::Real, Param::Float(v)) => Arg::F32(*v as f32),
            (SqlType::Double, Param::Float(v)) => Arg::F64(*v),
            (SqlType::Text, Param::Text(v)) => Arg::Text(Cow::Borrowed(v)),
            (SqlType::Date, Param::Date(v)) => Arg::Date(*v),
            (SqlType::Timestamp, Param::DateTime(v)) => Arg::DateTime(*v),
            _ => return Err(unfit(param)),
        })
    }

    /// An integer key as an argument of a key column of type `sql` (`None`: out of its range,
    /// or not an integer column).
    pub(crate) fn key(sql: SqlType, key: i64) -> Option<Arg<'static>> {
        match sql {
            SqlType::Integer => i32::try_from(key).ok().map(Arg::I32),
            SqlType::BigInt => Some(Arg::I64(key)),
            _ => None,
        }
    }

    /// An integer value as an `i64` (the inverse of [`Arg::key`]); `None` for NULL and the
    /// values of other types.
    pub(crate) fn as_key(&self) -> Option<i64> {
        match self {
            Arg::I32(v) => Some(i64::from(*v)),
            Arg::I64(v) => Some(*v),
            _ => None,
        }
    }

    /// The filter value that finds this value (the inverse of [`Arg::of`]); `None` for NULL.
    pub(crate) fn to_param(&self) -> Option<Param> {
        Some(match self {
            Arg::Null(_) => return None,
            Arg::Bool(v) => Param::Bool(*v),
            Arg::I32(v) => Param::Int(i64::from(*v)),
            Arg::I64(v) => Param::Int(*v),
            Arg::F32(v) => Param::Float(decimal(*v)),
            Arg::F64(v) => Param::Float(*v),
            Arg::Text(v) => Param::Text(v.to_string()),
            Arg::Date(v) => Param::Date(*v),
            Arg::DateTime(v) => Param::DateTime(*v),
            #[cfg(feature = "postgres")]
            Arg::List(_) => return None,
        })
    }

    /// Binds this value on SQLite.
    pub(crate) fn bind_sqlite<'b>(&'b self, out: &mut AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        match self {
            Arg::Null(_) => out.push_bind_param::<Nullable<Integer>, Option<i32>>(&None),
            Arg::Bool(v) => out.push_bind_param::<Bool, _>(v),
            Arg::I32(v) => out.push_bind_param::<Integer, _>(v),
            Arg::I64(v) => out.push_bind_param::<BigInt, _>(v),
            Arg::F32(v) => out.push_bind_param::<Float, _>(v),
            Arg::F64(v) => out.push_bind_param::<Double, _>(v),
            Arg::Text(v) => out.push_bind_param::<Text, str>(v),
            Arg::Date(v) => out.push_bind_param::<Date, _>(v),
            Arg::DateTime(v) => out.push_bind_param::<Timestamp, _>(v),
            #[cfg(feature = "postgres")]
            Arg::List(_) => Err(diesel::result::Error::QueryBuilderError(
                "an array parameter on SQLite".into(),
            )),
        }
    }

    /// Binds this value on PostgreSQL.
    #[cfg(feature = "postgres")]
    pub(crate) fn bind_pg<'b>(
        &'b self,
        out: &mut AstPass<'_, 'b, diesel::pg::Pg>,
    ) -> QueryResult<()> {
        use diesel::sql_types::Array;
        match self {
            Arg::Null(sql) => null(*sql, out),
            Arg::Bool(v) => out.push_bind_param::<Bool, _>(v),
            Arg::I32(v) => out.push_bind_param::<Integer, _>(v),
            Arg::I64(v) => out.push_bind_param::<BigInt, _>(v),
            Arg::F32(v) => out.push_bind_param::<Float, _>(v),
            Arg::F64(v) => out.push_bind_param::<Double, _>(v),
            Arg::Text(v) => out.push_bind_param::<Text, str>(v),
            Arg::Date(v) => out.push_bind_param::<Date, _>(v),
            Arg::DateTime(v) => out.push_bind_param::<Timestamp, _>(v),
            Arg::List(List::Bool(v)) => out.push_bind_param::<Array<Bool>, _>(v),
            Arg::List(List::I32(v)) => out.push_bind_param::<Array<Integer>, _>(v),
            Arg::List(List::I64(v)) => out.push_bind_param::<Array<BigInt>, _>(v),
            Arg::List(List::F32(v)) => out.push_bind_param::<Array<Float>, _>(v),
            Arg::List(List::F64(v)) => out.push_bind_param::<Array<Double>, _>(v),
            Arg::List(List::Text(v)) => out.push_bind_param::<Array<Text>, _>(v),
            Arg::List(List::Date(v)) => out.push_bind_param::<Array<Date>, _>(v),
            Arg::List(List::DateTime(v)) => out.push_bind_param::<Array<Timestamp>, _>(v),
        }
    }
}

/// Several arguments of one type as one PostgreSQL array.
#[cfg(feature = "postgres")]
pub(crate) fn list(sql: SqlType, args: Vec<Arg<'_>>) -> Result<Arg<'static>, Error> {
    fn all<T>(args: Vec<Arg<'_>>, pick: impl Fn(Arg<'_>) -> Option<T>) -> Result<Vec<T>, Error> {
        args.into_iter()
            .map(|a| pick(a).ok_or_else(|| Error::Internal("mixed array values".into())))
            .collect()
    }
    // Each arm keeps the values of one variant; a value of another is a bug of the caller.
    macro_rules! gather {
        ($arg:ident => $list:ident) => {
            List::$list(all(args, |a| match a {
                Arg::$arg(v) => Some(v.into()),
                _ => None,
            })?)
        };
    }
    Ok(Arg::List(match sql {
        SqlType::Boolean => gather!(Bool => Bool),
        SqlType::Integer => gather!(I32 => I32),
        SqlType::BigInt => gather!(I64 => I64),
        SqlType::Real => gather!(F32 => F32),
        SqlType::Double => gather!(F64 => F64),
        SqlType::Text => gather!(Text => Text),
        SqlType::Date => gather!(Date => Date),
        SqlType::Timestamp => gather!(DateTime => DateTime),
    }))
}

/// NULL bound as a column of type `sql`: PostgreSQL checks a parameter's type against the
/// column it goes into.
#[cfg(feature = "postgres")]
fn null<'b>(sql: SqlType, out: &mut AstPass<'_, 'b, diesel::pg::Pg>) -> QueryResult<()> {
    match sql {
        SqlType::Boolean => out.push_bind_param::<Nullable<Bool>, Option<bool>>(&None),
        SqlType::Integer => out.push_bind_param::<Nullable<Integer>, Option<i32>>(&None),
        SqlType::BigInt => out.push_bind_param::<Nullable<BigInt>, Option<i64>>(&None),
        SqlType::Real => out.push_bind_param::<Nullable<Float>, Option<f32>>(&None),
        SqlType::Double => out.push_bind_param::<Nullable<Double>, Option<f64>>(&None),
        SqlType::Text => out.push_bind_param::<Nullable<Text>, Option<String>>(&None),
        SqlType::Date => out.push_bind_param::<Nullable<Date>, Option<NaiveDate>>(&None),
        SqlType::Timestamp => {
            out.push_bind_param::<Nullable<Timestamp>, Option<NaiveDateTime>>(&None)
        }
    }
}

fn unfit(param: &Param) -> Error {
    Error::Internal(format!("filter value {param:?} does not fit its field"))
}
