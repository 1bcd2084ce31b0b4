//! Typed filter values, parsed from query-string text by the field's kind.

use chrono::{NaiveDate, NaiveDateTime};

use crate::value::kind::FieldKind;
use crate::value::{parse_date, parse_datetime};

/// A filter value, parsed as the type of the field it is compared with.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    /// SQL NULL (`is=null`).
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer (range-checked for 32-bit fields).
    Int(i64),
    /// A finite float.
    Float(f64),
    /// Text.
    Text(String),
    /// A date.
    Date(NaiveDate),
    /// A date-time.
    DateTime(NaiveDateTime),
}

impl Param {
    /// Which variant this is (its kind, not its value): part of a query's shape, since `IS NULL`
    /// and `= ?` are different SQL.
    pub(crate) fn tag(&self) -> usize {
        match self {
            Param::Null => 0,
            Param::Bool(_) => 1,
            Param::Int(_) => 2,
            Param::Float(_) => 3,
            Param::Text(_) => 4,
            Param::Date(_) => 5,
            Param::DateTime(_) => 6,
        }
    }

    /// Whether this is text of three characters or more: a word that a trigram index can find
    /// (on SQLite, the search index of a `#[rest(search_index)]` field; `crate::sql::search`).
    pub(crate) fn has_trigram(&self) -> bool {
        matches!(self, Param::Text(t) if t.chars().nth(2).is_some())
    }

    /// Parses query-string text as a value of `kind`; the error says what was expected.
    pub fn parse(kind: FieldKind, raw: &str) -> Result<Param, String> {
        match kind {
            FieldKind::Int32 => raw
                .parse::<i32>()
                .map(|v| Param::Int(v.into()))
                .map_err(|_| "expected a 32-bit integer".into()),
            FieldKind::Int64 => raw
                .parse::<i64>()
                .map(Param::Int)
                .map_err(|_| "expected an integer".into()),
            FieldKind::Float => match raw.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(Param::Float(v)),
                _ => Err("expected a number".into()),
            },
            FieldKind::Bool => parse_bool(raw)
                .map(Param::Bool)
                .ok_or_else(|| "expected true, false, 1 or 0".into()),
            FieldKind::Text => crate::value::check_text(raw).map(|()| Param::Text(raw.to_owned())),
            FieldKind::Date => parse_date(raw)
                .map(Param::Date)
                .ok_or_else(|| "expected a date YYYY-MM-DD".into()),
            FieldKind::DateTime => parse_datetime(raw)
                .map(Param::DateTime)
                .ok_or_else(|| "expected a date-time YYYY-MM-DD HH:MM:SS".into()),
        }
    }

    /// Parses the value of an `is` filter: `null`/`none`, or `true`/`false` on booleans.
    pub fn parse_is(kind: FieldKind, raw: &str) -> Result<Param, String> {
        match raw.to_ascii_lowercase().as_str() {
            "null" | "none" => Ok(Param::Null),
            "true" if kind == FieldKind::Bool => Ok(Param::Bool(true)),
            "false" if kind == FieldKind::Bool => Ok(Param::Bool(false)),
            _ if kind == FieldKind::Bool => Err("expected null, none, true or false".into()),
            _ => Err("expected null or none".into()),
        }
    }
}

fn parse_bool(raw: &str) -> Option<bool> {
    match raw {
        "true" | "True" | "1" => Some(true),
        "false" | "False" | "0" => Some(false),
        _ => None,
    }
}

// Rust values as filter values (for `Resource` scopes and `views::Query`).
macro_rules! param_from {
    ($($ty:ty => $variant:ident($conv:expr)),* $(,)?) => {
        $(impl From<$ty> for Param {
            fn from(value: $ty) -> Param {
                Param::$variant($conv(value))
            }
        })*
    };
}

param_from! {
    bool => Bool(std::convert::identity),
    i32 => Int(i64::from),
    i64 => Int(std::convert::identity),
    f64 => Float(std::convert::identity),
    String => Text(std::convert::identity),
    &str => Text(str::to_owned),
    &String => Text(String::clone),
    NaiveDate => Date(std::convert::identity),
    NaiveDateTime => DateTime(std::convert::identity),
}
