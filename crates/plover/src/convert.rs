//! Conversions of field values: to JSON (output), from JSON (request bodies) and from filter
//! parameters. One impl per supported Rust field type; generated code calls these traits
//! (through `__private`).

use chrono::{NaiveDate, NaiveDateTime};
use serde_json::Value;

use crate::param::Param;
use crate::value::{check_text, parse_date, parse_datetime, write_date, write_datetime};

/// A field type that serializes to JSON.
pub trait ToJson {
    /// The JSON value of this field.
    fn to_json(&self) -> Value;
}

/// A field type that writes itself as JSON text, straight into a response body.
pub trait WriteJson {
    /// Appends the JSON text of this value (the same as `to_json`, without building a `Value`).
    fn write_json(&self, out: &mut Vec<u8>);
}

macro_rules! write_via_serde {
    ($($t:ty),*) => {$(
        impl WriteJson for $t {
            fn write_json(&self, out: &mut Vec<u8>) {
                // Writing into a Vec cannot fail, and these types always serialize.
                let _ = serde_json::to_writer(&mut *out, self);
            }
        }
    )*};
}
write_via_serde!(i32, i64, bool, String);

impl WriteJson for f64 {
    fn write_json(&self, out: &mut Vec<u8>) {
        let _ = serde_json::to_writer(&mut *out, &self.to_json());
    }
}

impl WriteJson for f32 {
    fn write_json(&self, out: &mut Vec<u8>) {
        let _ = serde_json::to_writer(&mut *out, &self.to_json());
    }
}

impl WriteJson for NaiveDate {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'"');
        write_date(out, self);
        out.push(b'"');
    }
}

impl WriteJson for NaiveDateTime {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'"');
        write_datetime(out, self);
        out.push(b'"');
    }
}

impl<T: WriteJson> WriteJson for Option<T> {
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Some(v) => v.write_json(out),
            None => out.extend_from_slice(b"null"),
        }
    }
}

/// A field type that parses from a JSON request body.
pub trait FromJson: Sized {
    /// Parses a JSON value; the error is a message for the client.
    fn from_json(value: &Value) -> Result<Self, String>;
}

/// A field type that a typed filter parameter converts to.
pub trait FromParam: Sized {
    /// Converts a parameter parsed for this field's kind.
    fn from_param(param: &Param) -> Option<Self>;
}

macro_rules! int_impls {
    ($($t:ty => $what:literal),*) => {$(
        impl ToJson for $t {
            fn to_json(&self) -> Value {
                Value::from(*self)
            }
        }
        impl FromJson for $t {
            fn from_json(value: &Value) -> Result<Self, String> {
                value
                    .as_i64()
                    .and_then(|v| <$t>::try_from(v).ok())
                    .ok_or_else(|| concat!("expected ", $what).to_owned())
            }
        }
        impl FromParam for $t {
            fn from_param(param: &Param) -> Option<Self> {
                match param {
                    Param::Int(v) => <$t>::try_from(*v).ok(),
                    _ => None,
                }
            }
        }
    )*};
}
int_impls!(i32 => "a 32-bit integer", i64 => "a 64-bit integer");

macro_rules! float_impls {
    ($($t:ty),*) => {$(
        impl ToJson for $t {
            fn to_json(&self) -> Value {
                // Through the shortest decimal form, so that an f32 0.1 is 0.1, not its
                // widened binary value.
                self.to_string().parse::<f64>().map_or(Value::Null, Value::from)
            }
        }
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
        impl FromParam for $t {
            fn from_param(param: &Param) -> Option<Self> {
                match param {
                    Param::Float(v) => Some(*v as $t),
                    _ => None,
                }
            }
        }
    )*};
}
float_impls!(f32, f64);

impl ToJson for bool {
    fn to_json(&self) -> Value {
        Value::Bool(*self)
    }
}

impl FromJson for bool {
    fn from_json(value: &Value) -> Result<Self, String> {
        value
            .as_bool()
            .ok_or_else(|| "expected true or false".to_owned())
    }
}

impl FromParam for bool {
    fn from_param(param: &Param) -> Option<Self> {
        match param {
            Param::Bool(v) => Some(*v),
            _ => None,
        }
    }
}

impl ToJson for String {
    fn to_json(&self) -> Value {
        Value::String(self.clone())
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

impl FromParam for String {
    fn from_param(param: &Param) -> Option<Self> {
        match param {
            Param::Text(v) => Some(v.clone()),
            _ => None,
        }
    }
}

/// The JSON string of text that `write` appends (always ASCII).
fn text_value(write: impl FnOnce(&mut Vec<u8>)) -> Value {
    let mut out = Vec::with_capacity(19);
    write(&mut out);
    Value::String(String::from_utf8_lossy(&out).into_owned())
}

impl ToJson for NaiveDate {
    fn to_json(&self) -> Value {
        text_value(|out| write_date(out, self))
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

impl FromParam for NaiveDate {
    fn from_param(param: &Param) -> Option<Self> {
        match param {
            Param::Date(v) => Some(*v),
            _ => None,
        }
    }
}

impl ToJson for NaiveDateTime {
    fn to_json(&self) -> Value {
        text_value(|out| write_datetime(out, self))
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

impl FromParam for NaiveDateTime {
    fn from_param(param: &Param) -> Option<Self> {
        match param {
            Param::DateTime(v) => Some(*v),
            _ => None,
        }
    }
}

impl<T: ToJson> ToJson for Option<T> {
    fn to_json(&self) -> Value {
        self.as_ref().map_or(Value::Null, ToJson::to_json)
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
pub fn from_json_required<T: FromJson>(value: &Value) -> Result<T, String> {
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
        assert_eq!(dt.to_json(), Value::from("0987-06-05 04:03:02"));
        assert_eq!(dt.date().to_json(), Value::from("0987-06-05"));
        assert_eq!(0.1f32.to_json(), Value::from(0.1));
        let far = NaiveDate::from_ymd_opt(12345, 1, 2).unwrap_or_default();
        assert_eq!(far.to_json(), Value::from("12345-01-02"));
    }

    #[test]
    fn written_json_equals_the_value() {
        fn same<T: WriteJson + ToJson>(v: T) {
            let mut out = Vec::new();
            v.write_json(&mut out);
            assert_eq!(
                serde_json::from_slice::<Value>(&out).ok(),
                Some(v.to_json())
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
    }

    #[test]
    fn integers_are_range_checked() {
        assert!(i32::from_json(&Value::from(2_147_483_648_i64)).is_err());
        assert!(i32::from_json(&Value::from(1.5)).is_err());
        assert!(i32::from_json(&Value::from(true)).is_err());
        assert_eq!(i64::from_json(&Value::from(i64::MIN)), Ok(i64::MIN));
    }
}
