//! Choices: a plain Rust enum as a field's type, stored as text (`#[derive(Choice)]`).

use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::sql_types::Text;

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

/// A choice loaded from a text column; an unknown text is a load error.
#[doc(hidden)]
#[derive(Debug, FromSqlRow)]
pub struct Stored<T>(pub T);

impl<T: Choice> Default for Stored<T> {
    fn default() -> Self {
        Stored(T::first())
    }
}

impl<T, DB> FromSql<Text, DB> for Stored<T>
where
    T: Choice,
    DB: diesel::backend::Backend,
    String: FromSql<Text, DB>,
{
    fn from_sql(bytes: DB::RawValue<'_>) -> deserialize::Result<Self> {
        let text = String::from_sql(bytes)?;
        T::from_choice(&text)
            .map(Stored)
            .ok_or_else(|| format!("`{text}` is not one of {:?}", T::CHOICES).into())
    }
}

/// The stored text of a choice value, or of an optional one: what an insert or update binds.
#[doc(hidden)]
pub trait Bind {
    /// `&'static str`, or an `Option` of it.
    type Text;
    /// The text.
    fn bind(&self) -> Self::Text;
}

impl<T: Choice> Bind for T {
    type Text = &'static str;
    fn bind(&self) -> &'static str {
        self.choice()
    }
}

impl<T: Choice> Bind for Option<T> {
    type Text = Option<&'static str>;
    fn bind(&self) -> Option<&'static str> {
        self.as_ref().map(Choice::choice)
    }
}

/// A JSON value as a choice of `T`: the message lists the choices.
pub(crate) fn from_json<T: Choice>(value: &serde_json::Value) -> Result<T, String> {
    value
        .as_str()
        .and_then(T::from_choice)
        .ok_or_else(|| format!("must be one of: {}", T::CHOICES.join(", ")))
}
