//! Field constraints (`#[rest(min, max, min_len, max_len, not_blank, choices)]`), checked in
//! [`save`](super::save) for every writer before the model's rules: one 400 naming every field
//! that is out of bounds.

use std::collections::BTreeMap;

use serde_json::Value;

use super::RestModel;
use crate::error::Error;
use crate::meta::{Bound, Constraints, FieldMeta};

/// Checks every given field of `changes` against its constraints.
pub(crate) fn check<M: RestModel>(changes: &M::Changes) -> Result<(), Error> {
    let mut fields = BTreeMap::new();
    for (idx, field) in M::meta().fields.iter().enumerate() {
        if field.constraints == Constraints::NONE {
            continue;
        }
        if let Some(value) = M::changes_json(changes, idx) {
            if let Some(message) = violation(field, &value) {
                fields.insert(field.name.to_owned(), message);
            }
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

/// What is wrong with `value` for `field`, if anything (`null` is never out of bounds).
pub(crate) fn violation(field: &FieldMeta, value: &Value) -> Option<String> {
    let c = &field.constraints;
    match value {
        Value::Number(n) => {
            let below = |bound: Bound| match (bound, n.as_i64()) {
                (Bound::Int(b), Some(v)) => v < b,
                (b, _) => n.as_f64().is_some_and(|v| v < b.as_f64()),
            };
            let above = |bound: Bound| match (bound, n.as_i64()) {
                (Bound::Int(b), Some(v)) => v > b,
                (b, _) => n.as_f64().is_some_and(|v| v > b.as_f64()),
            };
            match (c.min, c.max) {
                (Some(min), Some(max)) if below(min) || above(max) => {
                    Some(format!("must be between {min} and {max}"))
                }
                (Some(min), None) if below(min) => Some(format!("must be at least {min}")),
                (None, Some(max)) if above(max) => Some(format!("must be at most {max}")),
                _ => None,
            }
        }
        Value::String(text) => text_violation(c, text),
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
    use serde_json::json;

    use super::*;
    use crate::kind::{FieldKind, SqlType};

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
        for ok in [json!(1), json!(5), json!(3), Value::Null] {
            assert_eq!(violation(&f, &ok), None, "{ok}");
        }
        for bad in [json!(0), json!(6), json!(-9_223_372_036_854_775_807_i64)] {
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
            violation(&floor, &json!(0.25)).as_deref(),
            Some("must be at least 0.5")
        );
        assert_eq!(violation(&floor, &json!(0.5)), None);
        // The largest i64 is compared exactly, not through a float.
        let top = field(Constraints {
            max: Some(Bound::Int(i64::MAX - 1)),
            ..Constraints::NONE
        });
        assert_eq!(violation(&top, &json!(i64::MAX - 1)), None);
        assert!(violation(&top, &json!(i64::MAX)).is_some());
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
            violation(&f, &json!("éé")),
            None,
            "two characters, four bytes"
        );
        assert_eq!(
            violation(&f, &json!("abcd")).as_deref(),
            Some("must have 2 to 3 characters")
        );
        assert_eq!(
            violation(&f, &json!(" \t\u{a0}")).as_deref(),
            Some("must not be blank")
        );
        let choice = field(Constraints {
            choices: &["open", "closed"],
            ..Constraints::NONE
        });
        assert_eq!(violation(&choice, &json!("open")), None);
        assert_eq!(
            violation(&choice, &json!("Open")).as_deref(),
            Some("must be one of: open, closed")
        );
    }
}
