//! Choices: a plain Rust enum as a field's type, stored as text (`#[derive(Choice)]`).

use std::borrow::Cow;

use diesel::deserialize;
use diesel::sqlite::SqliteValue;

use crate::sql::{Arg, Column};
use crate::value::kind::SqlType;

/// A field type with a fixed set of values: a plain enum (variants without data) deriving
/// `Choice`. It is stored as text, the variant's name in snake case or its
/// `#[rest(rename = "...")]`; in JSON it is that text. A body or form value that is not one of
/// them is a 400 listing them; so is a filter value. The generated schema holds a `CHECK`, and
/// the admin shows a select.
///
/// ```
/// use plover::prelude::*;
/// use plover::model::Choice;
///
/// #[derive(Debug, Clone, Copy, PartialEq, Choice)]
/// pub enum Status {
///     Open,
///     #[rest(rename = "done")]
///     Closed,
///     OnHold,
/// }
///
/// assert_eq!(Status::CHOICES, ["open", "done", "on_hold"]);
/// assert_eq!(Status::OnHold.choice(), "on_hold");
/// assert_eq!(Status::from_choice("done"), Some(Status::Closed));
/// assert_eq!(Status::from_choice("Closed"), None);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a field type Plover knows",
    label = "not a field type",
    note = "use i32, i64, f32, f64, bool, String, chrono::NaiveDate, chrono::NaiveDateTime \
            (or an Option of one), or a plain enum with `#[derive(Choice)]`"
)]
pub trait Choice: Sized + Send + Sync + 'static {
    /// Every value as stored, in declaration order.
    const CHOICES: &'static [&'static str];

    /// This value as stored.
    fn choice(&self) -> &'static str;

    /// The value stored as `text`, if it is one.
    fn from_choice(text: &str) -> Option<Self>;

    /// The first variant: the value of a column a list leaves out (never shown).
    #[doc(hidden)]
    fn first() -> Self;
}

impl<T: Choice> Column for T {
    const SQL_TYPE: SqlType = SqlType::Text;
    fn arg(&self) -> Arg<'_> {
        Arg::Text(Cow::Borrowed(self.choice()))
    }
    fn copy(&self) -> Self {
        T::from_choice(self.choice()).unwrap_or_else(T::first)
    }
    fn from_arg(arg: Arg<'_>) -> Option<Self> {
        match arg {
            Arg::Text(text) => T::from_choice(&text),
            _ => None,
        }
    }
    fn absent() -> Self {
        T::first()
    }
    fn read_sqlite(value: Option<SqliteValue<'_, '_, '_>>) -> deserialize::Result<Self> {
        stored(String::read_sqlite(value)?)
    }
    #[cfg(feature = "postgres")]
    fn read_pg(value: Option<diesel::pg::PgValue<'_>>) -> deserialize::Result<Self> {
        stored(String::read_pg(value)?)
    }
}

/// The choice stored as `text`; an unknown text is a load error.
fn stored<T: Choice>(text: String) -> deserialize::Result<T> {
    T::from_choice(&text).ok_or_else(|| format!("`{text}` is not one of {:?}", T::CHOICES).into())
}

/// A JSON value as a choice of `T`: the message lists the choices.
pub(crate) fn from_json<T: Choice>(value: &serde_json::Value) -> Result<T, String> {
    value
        .as_str()
        .and_then(T::from_choice)
        .ok_or_else(|| format!("must be one of: {}", T::CHOICES.join(", ")))
}
