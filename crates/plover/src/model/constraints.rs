//! Field constraints (`#[rest(min, max, min_len, max_len, not_blank, choices)]`), checked in
//! [`save`](super::save) for every writer before the model's rules: one 400 naming every field
//! that is out of bounds.

use std::collections::BTreeMap;

use super::RestModel;
use crate::error::Error;
use crate::meta::{Bound, Constraints, FieldMeta};
use crate::sql::arg::decimal;
use crate::sql::Arg;

/// Checks every given field of `changes` against its constraints.
pub(crate) fn check<M: RestModel>(changes: &M::Changes) -> Result<(), Error> {
    let mut fields = BTreeMap::new();
    for (idx, field) in M::meta().fields.iter().enumerate() {
        if field.constraints == Constraints::NONE {
            continue;
        }
        if let Some(message) = M::change(changes, idx).and_then(|v| violation(field, &v)) {
            fields.insert(field.name.to_owned(), message);
        }
    }
    if fields.is_empty() {
        Ok(())
    } else {
        Err(Error::Validation {
            message: "Validation failed".into(),
            fields,
        })
    }
}

/// A number to compare with a bound: an integer exactly, else as a float.
#[derive(Clone, Copy)]
enum Number {
    Int(i64),
    Float(f64),
}

impl Number {
    fn as_f64(self) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        match self {
            Number::Int(v) => v as f64,
            Number::Float(v) => v,
        }
    }

    fn below(self, bound: Bound) -> bool {
        match (self, bound) {
            (Number::Int(v), Bound::Int(b)) => v < b,
            (n, b) => n.as_f64() < b.as_f64(),
        }
    }

    fn above(self, bound: Bound) -> bool {
        match (self, bound) {
            (Number::Int(v), Bound::Int(b)) => v > b,
            (n, b) => n.as_f64() > b.as_f64(),
        }
    }
}

/// What is wrong with the typed `value` of `field`, if anything (NULL is never out of
/// bounds). An `f32` is compared by the decimal its objects show.
pub(crate) fn violation(field: &FieldMeta, value: &Arg<'_>) -> Option<String> {
    let c = &field.constraints;
    let number = match value {
        Arg::I32(v) => Number::Int(i64::from(*v)),
        Arg::I64(v) => Number::Int(*v),
        Arg::F32(v) => Number::Float(decimal(*v)),
        Arg::F64(v) => Number::Float(*v),
        Arg::Text(text) => return text_violation(c, text),
        _ => return None,
    };
    match (c.min, c.max) {
        (Some(min), Some(max)) if number.below(min) || number.above(max) => {
            Some(format!("must be between {min} and {max}"))
        }
        (Some(min), None) if number.below(min) => Some(format!("must be at least {min}")),
        (None, Some(max)) if number.above(max) => Some(format!("must be at most {max}")),
        _ => None,
    }
}

fn text_violation(c: &Constraints, text: &str) -> Option<String> {
    if !c.choices.is_empty() && !c.choices.contains(&text) {
        return Some(format!("must be one of: {}", c.choices.join(", ")));
    }
    if c.not_blank && text.chars().all(char::is_whitespace) {
        return Some("must not be blank".into());
    }
    if c.min_len.is_none() && c.max_len.is_none() {
        return None;
    }
    let len = text.chars().count();
    let fewer = c.min_len.is_some_and(|n| len < n as usize);
    let more = c.max_len.is_some_and(|n| len > n as usize);
    match (c.min_len, c.max_len) {
        (Some(min), Some(max)) if fewer || more => {
            Some(format!("must have {min} to {max} characters"))
        }
        (Some(min), None) if fewer => Some(format!("must have at least {min} characters")),
        (None, Some(max)) if more => Some(format!("must have at most {max} characters")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::kind::{FieldKind, SqlType};

    fn text(value: &str) -> Arg<'_> {
        Arg::Text(value.into())
    }

    fn field(constraints: Constraints) -> FieldMeta {
        FieldMeta::new("f", "f", "f", FieldKind::Int64, SqlType::BigInt)
            .mark_nullable()
            .with_constraints(constraints)
    }

    #[test]
    fn numbers_are_inside_their_bounds_inclusive() {
        let f = field(Constraints {
            min: Some(Bound::Int(1)),
            max: Some(Bound::Int(5)),
            ..Constraints::NONE
        });
        for ok in [
            Arg::I64(1),
            Arg::I64(5),
            Arg::I32(3),
            Arg::Null(SqlType::BigInt),
        ] {
            assert_eq!(violation(&f, &ok), None, "{ok:?}");
        }
        for bad in [
            Arg::I64(0),
            Arg::I32(6),
            Arg::I64(-9_223_372_036_854_775_807),
        ] {
            assert_eq!(
                violation(&f, &bad).as_deref(),
                Some("must be between 1 and 5")
            );
        }
        let floor = field(Constraints {
            min: Some(Bound::Float(0.5)),
            ..Constraints::NONE
        });
        assert_eq!(
            violation(&floor, &Arg::F64(0.25)).as_deref(),
            Some("must be at least 0.5")
        );
        assert_eq!(violation(&floor, &Arg::F64(0.5)), None);
        // An f32 by the decimal its objects show: 0.5 and 0.1 are inside, as shown.
        assert_eq!(violation(&floor, &Arg::F32(0.5)), None);
        let tenth = field(Constraints {
            max: Some(Bound::Float(0.1)),
            ..Constraints::NONE
        });
        assert_eq!(violation(&tenth, &Arg::F32(0.1)), None);
        assert!(violation(&tenth, &Arg::F32(0.11)).is_some());
        // The largest i64 is compared exactly, not through a float.
        let top = field(Constraints {
            max: Some(Bound::Int(i64::MAX - 1)),
            ..Constraints::NONE
        });
        assert_eq!(violation(&top, &Arg::I64(i64::MAX - 1)), None);
        assert!(violation(&top, &Arg::I64(i64::MAX)).is_some());
    }

    #[test]
    fn text_lengths_count_characters_and_blank_is_white_space_only() {
        let f = field(Constraints {
            min_len: Some(2),
            max_len: Some(3),
            not_blank: true,
            ..Constraints::NONE
        });
        assert_eq!(
            violation(&f, &text("éé")),
            None,
            "two characters, four bytes"
        );
        assert_eq!(
            violation(&f, &text("abcd")).as_deref(),
            Some("must have 2 to 3 characters")
        );
        assert_eq!(
            violation(&f, &text(" \t\u{a0}")).as_deref(),
            Some("must not be blank")
        );
        let choice = field(Constraints {
            choices: &["open", "closed"],
            ..Constraints::NONE
        });
        assert_eq!(violation(&choice, &text("open")), None);
        assert_eq!(
            violation(&choice, &text("Open")).as_deref(),
            Some("must be one of: open, closed")
        );
    }
}
