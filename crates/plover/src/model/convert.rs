//! Conversions of field values: to JSON (output, through serde), from JSON (request bodies)
//! and from filter parameters. One impl per supported Rust field type; generated code calls
//! these traits (through `__private`).

use chrono::{NaiveDate, NaiveDateTime};
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::model::Choice;
use crate::value::{check_text, parse_date, parse_datetime, DateText, DateTimeText};

/// A field type's JSON output, through serde: one impl per type serves both the writer of
/// response bodies ([`write_json`], straight into the bytes) and the JSON values that hooks and
/// the admin see ([`to_json`]), so the two cannot disagree. Dates are `YYYY-MM-DD` and
/// date-times `YYYY-MM-DD HH:MM:SS` (not chrono's own serde forms).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a field type Plover knows",
    label = "not a field type",
    note = "use i32, i64, f32, f64, bool, String, chrono::NaiveDate, chrono::NaiveDateTime \
            (or an Option of one), or a plain enum with `#[derive(Choice)]`"
)]
pub trait JsonField {
    /// Serializes this value in its JSON form.
    fn serialize_json<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error>;

    /// Appends this value's JSON text to a response body. The default serializes through
    /// [`serialize_json`](JsonField::serialize_json); dates and date-times write their text
    /// straight in, as it never needs escaping (the same text: a test compares the two).
    fn write_json(&self, out: &mut Vec<u8>) {
        // Writing into a Vec cannot fail, and field values always serialize.
        let _ = serde_json::to_writer(out, &Json(self));
    }
}

/// A field value, serialized through its [`JsonField`] impl.
struct Json<'a, T: ?Sized>(&'a T);

impl<T: JsonField + ?Sized> Serialize for Json<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_json(serializer)
    }
}

/// Appends the JSON text of a field value to a response body.
pub fn write_json<T: JsonField + ?Sized>(value: &T, out: &mut Vec<u8>) {
    value.write_json(out);
}

/// The JSON value of a field value.
pub fn to_json<T: JsonField + ?Sized>(value: &T) -> Value {
    serde_json::to_value(Json(value)).unwrap_or(Value::Null)
}

macro_rules! serialize_as_is {
    ($($t:ty),*) => {$(
        impl JsonField for $t {
            fn serialize_json<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                self.serialize(serializer)
            }
        }
    )*};
}
serialize_as_is!(i32, i64, f64, bool, String);

impl JsonField for f32 {
    fn serialize_json<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Through the shortest decimal form, so that an f32 0.1 is 0.1, not its widened
        // binary value (serde_json's `Value` widens an f32).
        serializer.serialize_f64(self.to_string().parse::<f64>().unwrap_or(f64::NAN))
    }
}

impl JsonField for NaiveDate {
    fn serialize_json<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Straight from the stack: `collect_str` would escape the text piece by piece.
        DateText(self).with_text(|text| serializer.serialize_str(text))
    }

    fn write_json(&self, out: &mut Vec<u8>) {
        DateText(self).write_json(out);
    }
}

impl JsonField for NaiveDateTime {
    fn serialize_json<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        DateTimeText(self).with_text(|text| serializer.serialize_str(text))
    }

    fn write_json(&self, out: &mut Vec<u8>) {
        DateTimeText(self).write_json(out);
    }
}

impl<T: Choice> JsonField for T {
    fn serialize_json<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.choice())
    }
}

impl<T: JsonField> JsonField for Option<T> {
    fn serialize_json<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Some(value) => value.serialize_json(serializer),
            None => serializer.serialize_none(),
        }
    }

    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Some(value) => value.write_json(out),
            None => out.extend_from_slice(b"null"),
        }
    }
}

/// A field type that parses from a JSON request body.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a field type Plover knows",
    label = "not a field type",
    note = "use i32, i64, f32, f64, bool, String, chrono::NaiveDate, chrono::NaiveDateTime \
            (or an Option of one), or a plain enum with `#[derive(Choice)]`"
)]
pub trait FromJson: Sized {
    /// Parses a JSON value; the error is a message for the client.
    fn from_json(value: &Value) -> Result<Self, String>;
}

macro_rules! int_impls {
    ($($t:ty => $what:literal),*) => {$(
        impl FromJson for $t {
            fn from_json(value: &Value) -> Result<Self, String> {
                value
                    .as_i64()
                    .and_then(|v| <$t>::try_from(v).ok())
                    .ok_or_else(|| concat!("expected ", $what).to_owned())
            }
        }
    )*};
}
int_impls!(i32 => "a 32-bit integer", i64 => "a 64-bit integer");

macro_rules! float_impls {
    ($($t:ty),*) => {$(
        impl FromJson for $t {
            fn from_json(value: &Value) -> Result<Self, String> {
                match value {
                    Value::Number(n) => n
                        .as_f64()
                        .map(|v| v as $t)
                        .filter(|v| v.is_finite())
                        .ok_or_else(|| "expected a finite number".to_owned()),
                    _ => Err("expected a number".to_owned()),
                }
            }
        }
    )*};
}
float_impls!(f32, f64);

impl FromJson for bool {
    fn from_json(value: &Value) -> Result<Self, String> {
        value
            .as_bool()
            .ok_or_else(|| "expected true or false".to_owned())
    }
}

impl FromJson for String {
    fn from_json(value: &Value) -> Result<Self, String> {
        let text = value
            .as_str()
            .ok_or_else(|| "expected a string".to_owned())?;
        check_text(text)?;
        Ok(text.to_owned())
    }
}

impl FromJson for NaiveDate {
    fn from_json(value: &Value) -> Result<Self, String> {
        value
            .as_str()
            .and_then(parse_date)
            .ok_or_else(|| "expected a date YYYY-MM-DD".to_owned())
    }
}

impl FromJson for NaiveDateTime {
    fn from_json(value: &Value) -> Result<Self, String> {
        value
            .as_str()
            .and_then(parse_datetime)
            .ok_or_else(|| "expected a date-time YYYY-MM-DD HH:MM:SS".to_owned())
    }
}

impl<T: Choice> FromJson for T {
    fn from_json(value: &Value) -> Result<Self, String> {
        crate::model::choice::from_json(value)
    }
}

impl<T: FromJson> FromJson for Option<T> {
    fn from_json(value: &Value) -> Result<Self, String> {
        match value {
            Value::Null => Ok(None),
            other => T::from_json(other).map(Some),
        }
    }
}

/// Parses a non-nullable field: `null` gets its own message.
pub(crate) fn from_json_required<T: FromJson>(value: &Value) -> Result<T, String> {
    if value.is_null() {
        return Err("this field may not be null".to_owned());
    }
    T::from_json(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetime_forms() {
        let want = NaiveDate::from_ymd_opt(2020, 1, 2)
            .and_then(|d| d.and_hms_opt(9, 30, 0))
            .unwrap_or_default();
        assert_eq!(parse_datetime("2020-01-02 09:30:00"), Some(want));
        assert_eq!(parse_datetime("2020-01-02T09:30:00"), Some(want));
        assert_eq!(parse_datetime("2020-01-02T09:30:00.000"), Some(want));
        assert!(parse_datetime("2020-01-02T09:30:00.5").is_some_and(|d| d > want));
        assert_eq!(
            parse_datetime("2020-01-02"),
            NaiveDate::from_ymd_opt(2020, 1, 2).and_then(|d| d.and_hms_opt(0, 0, 0))
        );
        assert_eq!(parse_datetime("2020-02-30 00:00:00"), None);
        assert_eq!(parse_datetime("yesterday"), None);
        assert_eq!(parse_date("2020-1-2"), None);
    }

    #[test]
    fn output_formats() {
        let dt = parse_datetime("0987-06-05T04:03:02.999").unwrap_or_default();
        assert_eq!(to_json(&dt), Value::from("0987-06-05 04:03:02"));
        assert_eq!(to_json(&dt.date()), Value::from("0987-06-05"));
        let late = parse_datetime("2024-12-31 23:59:58.75").unwrap_or_default();
        assert_eq!(to_json(&late), Value::from("2024-12-31 23:59:58"));
        let far = NaiveDate::from_ymd_opt(10_000, 1, 2).and_then(|d| d.and_hms_opt(3, 4, 5));
        assert_eq!(to_json(&far), Value::from("10000-01-02 03:04:05"));
        assert_eq!(to_json(&0.1f32), Value::from(0.1));
        let far = NaiveDate::from_ymd_opt(12345, 1, 2).unwrap_or_default();
        assert_eq!(to_json(&far), Value::from("12345-01-02"));
        assert_eq!(to_json(&None::<i32>), Value::Null);
    }

    #[test]
    fn written_json_equals_the_value() {
        fn same<T: JsonField>(v: T) {
            let mut out = Vec::new();
            write_json(&v, &mut out);
            assert_eq!(
                serde_json::from_slice::<Value>(&out).ok(),
                Some(to_json(&v))
            );
        }
        same(-7_i32);
        same(i64::MIN);
        same(0.25_f64);
        same(0.1_f32);
        same(true);
        same("a \"quoted\" \\ line\n".to_owned());
        same(Some(3_i32));
        same(None::<String>);
        same(parse_datetime("2020-01-02 03:04:05.6").unwrap_or_default());
        same(parse_date("1999-12-31").unwrap_or_default());
        // Years beyond four digits, and before year 0: one writer for both forms.
        same(NaiveDate::from_ymd_opt(12345, 1, 2).unwrap_or_default());
        same(NaiveDate::from_ymd_opt(-5, 1, 2).unwrap_or_default());
        for (y, m, d, h, mi, s, nano) in [
            (2024, 2, 29, 23, 59, 59, 999_999_999),
            (1, 1, 1, 0, 0, 0, 0),
            (9999, 12, 31, 12, 5, 9, 0),
            (10_000, 1, 1, 0, 0, 0, 0),
            (-1, 12, 31, 1, 2, 3, 0),
            (2016, 12, 31, 23, 59, 59, 1_500_000_000), // a leap second
        ] {
            let value = NaiveDate::from_ymd_opt(y, m, d)
                .and_then(|date| date.and_hms_nano_opt(h, mi, s, nano))
                .unwrap_or_default();
            assert_ne!(value, NaiveDateTime::default(), "{y}-{m}-{d}");
            same(value);
            same(Some(value));
            same(value.date());
            same(Some(value.date()));
        }
        same(None::<NaiveDateTime>);
        same(None::<NaiveDate>);
    }

    #[test]
    fn integers_are_range_checked() {
        assert!(i32::from_json(&Value::from(2_147_483_648_i64)).is_err());
        assert!(i32::from_json(&Value::from(1.5)).is_err());
        assert!(i32::from_json(&Value::from(true)).is_err());
        assert_eq!(i64::from_json(&Value::from(i64::MIN)), Ok(i64::MIN));
    }
}
