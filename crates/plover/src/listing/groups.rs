//! The syntax of filter groups (docs/contract.md#filter-logic): `or=(a__lt=5,b=x)` and
//! `not=(...)`, whose terms are `key=value` pairs and further groups, separated by commas.

use std::borrow::Cow;

use percent_encoding::percent_decode_str;

/// The parameter of a group whose terms any may hold.
pub(crate) const OR: &str = "or";
/// The parameter of a group whose terms must not all hold.
pub(crate) const NOT: &str = "not";

/// One term of a group as written: a filter key with its value, or a nested group.
#[derive(Debug, PartialEq)]
pub(crate) enum Syntax<'a> {
    /// `key=value`, both percent-decoded.
    Term(Cow<'a, str>, &'a str),
    /// `or=(...)` (`not` false) or `not=(...)` (`not` true).
    Group { not: bool, terms: Vec<Syntax<'a>> },
}

/// The terms of a group's value (`(a=1,not=(b=2))`), nested at most `max_depth` groups deep
/// counting the group itself; the error is a message for the client.
pub(crate) fn terms(value: &str, max_depth: usize) -> Result<Vec<Syntax<'_>>, String> {
    group(value, 1, max_depth)
}

fn group(value: &str, depth: usize, max_depth: usize) -> Result<Vec<Syntax<'_>>, String> {
    if depth > max_depth {
        return Err(format!("groups nest at most {max_depth} deep"));
    }
    let inner = value
        .strip_prefix('(')
        .and_then(|v| v.strip_suffix(')'))
        .ok_or("expected (key=value,...)")?;
    if inner.is_empty() {
        return Err("a group needs at least one term".into());
    }
    split(inner)?
        .into_iter()
        .map(|part| {
            for (name, not) in [(OR, false), (NOT, true)] {
                if let Some(nested) = part
                    .strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix('='))
                    .filter(|rest| rest.starts_with('('))
                {
                    let terms = group(nested, depth + 1, max_depth)?;
                    return Ok(Syntax::Group { not, terms });
                }
            }
            let (key, value) = part.split_once('=').ok_or("expected key=value terms")?;
            if key.contains(['(', ')']) || value.contains(['(', ')']) {
                return Err("a value's parentheses must be percent-encoded".into());
            }
            Ok(Syntax::Term(decode(key), value))
        })
        .collect()
}

/// `text` split at the commas outside parentheses; unbalanced parentheses are an error.
fn split(text: &str) -> Result<Vec<&str>, String> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (at, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.checked_sub(1).ok_or("unbalanced parentheses")?,
            ',' if depth == 0 => {
                parts.push(&text[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err("unbalanced parentheses".into());
    }
    parts.push(&text[start..]);
    Ok(parts)
}

/// A key or value of a group's term, percent-decoded (a comma or `|` in a value is `%2C`,
/// `%7C`); bytes that are not UTF-8 become U+FFFD, as in a query string.
pub(crate) fn decode(text: &str) -> Cow<'_, str> {
    percent_decode_str(text).decode_utf8_lossy()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_and_nested_groups() {
        let parsed = terms("(a__lt=5,b=x%2Cy,not=(c=1,or=(d=2)))", 3);
        assert_eq!(
            parsed,
            Ok(vec![
                Syntax::Term("a__lt".into(), "5"),
                Syntax::Term("b".into(), "x%2Cy"),
                Syntax::Group {
                    not: true,
                    terms: vec![
                        Syntax::Term("c".into(), "1"),
                        Syntax::Group {
                            not: false,
                            terms: vec![Syntax::Term("d".into(), "2")]
                        }
                    ]
                }
            ])
        );
    }

    #[test]
    fn malformed_or_too_deep_is_an_error() {
        for bad in [
            "",
            "a=1",
            "(",
            "()",
            "(a=1",
            "a=1)",
            "(a)",
            "(a=1,)",
            "(a=(1))",
            "(a=1))(",
            "(or=())",
            "(not=(a=1)",
            "((a=1))",
        ] {
            assert!(terms(bad, 3).is_err(), "{bad:?}");
        }
        assert!(terms("(or=(not=(a=1)))", 3).is_ok());
        assert!(terms("(or=(not=(or=(a=1))))", 3).is_err());
    }
}
