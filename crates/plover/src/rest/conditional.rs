//! Conditional requests (docs/contract.md#conditional-requests, RFC 9110 section 13): the
//! strong `ETag` of a response body, `If-None-Match` on reads (304) and `If-Match` /
//! `If-None-Match` on writes (412), compared with the row's current representation inside
//! the write's transaction.

use crate::auth::Headers;
use crate::error::Error;

/// What a condition header names.
enum Tags {
    /// `*`: any current representation.
    Any,
    /// These entity tags, as sent (`"a"`, `W/"b"`).
    List(Vec<String>),
}

impl Tags {
    /// The tags of every value of header `name`; `None` when the request does not send it.
    fn of(headers: &Headers, name: &str) -> Option<Tags> {
        let mut sent = false;
        let mut tags = Vec::new();
        for value in headers.get_all(name) {
            sent = true;
            let Ok(text) = value.to_str() else {
                continue; // not ASCII: names no tag of ours
            };
            for item in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                if item == "*" {
                    return Some(Tags::Any);
                }
                tags.push(item.to_owned());
            }
        }
        sent.then_some(Tags::List(tags))
    }

    /// Whether they name `current`: `*` always; a strong comparison takes the tags as sent,
    /// a weak one ignores a `W/` prefix (RFC 9110 section 8.8.3.2).
    fn name(&self, current: &str, weak: bool) -> bool {
        match self {
            Tags::Any => true,
            Tags::List(tags) => tags.iter().any(|tag| match tag.strip_prefix("W/") {
                Some(opaque) => weak && opaque == current,
                None => tag == current,
            }),
        }
    }
}

/// Whether a read's `If-None-Match` names the representation tagged `current`: then the
/// answer is 304 without a body.
pub(crate) fn not_modified(headers: &Headers, current: &str) -> bool {
    Tags::of(headers, "if-none-match").is_some_and(|tags| tags.name(current, true))
}

/// Whether a write carries `If-Match` (what [`Resource::require_if_match`] asks for).
///
/// [`Resource::require_if_match`]: crate::rest::Resource::require_if_match
pub(crate) fn has_if_match(headers: &Headers) -> bool {
    headers.get("if-match").is_some()
}

/// Whether a write states a condition on the row's representation at all.
pub(crate) fn is_conditional(headers: &Headers) -> bool {
    has_if_match(headers) || headers.get("if-none-match").is_some()
}

/// The preconditions of a write to an existing row whose representation is tagged `current`
/// (RFC 9110 section 13.2.2): an `If-Match` that does not name it, or an `If-None-Match` that
/// does (`*` included: the row exists), is 412.
pub(crate) fn check_write(headers: &Headers, current: &str) -> Result<(), Error> {
    if let Some(tags) = Tags::of(headers, "if-match") {
        if !tags.name(current, false) {
            return Err(Error::PreconditionFailed);
        }
    } else if let Some(tags) = Tags::of(headers, "if-none-match") {
        if tags.name(current, true) {
            return Err(Error::PreconditionFailed);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::digest::tag as etag;
    use actix_web::http::header::{HeaderName, HeaderValue};

    /// Headers from names and values (a value that is not a header value is left out,
    /// which the assertions below would notice).
    fn headers(pairs: &[(&'static str, &str)]) -> Headers {
        (pairs.iter())
            .filter_map(|(n, v)| Some((HeaderName::from_static(n), HeaderValue::from_str(v).ok()?)))
            .collect()
    }

    #[test]
    fn tags_are_strong_and_follow_the_body() {
        let a = etag(b"{\"id\":1}");
        assert_eq!(a, etag(b"{\"id\":1}"));
        assert_ne!(a, etag(b"{\"id\":2}"));
        assert_eq!(a.len(), 34);
        assert!(a.starts_with('"') && a.ends_with('"') && !a.starts_with("W/"));
    }

    #[test]
    fn if_none_match_compares_weakly_and_takes_lists_and_star() {
        let tag = etag(b"x");
        let weak = format!("W/{tag}");
        assert!(not_modified(&headers(&[("if-none-match", &tag)]), &tag));
        assert!(not_modified(&headers(&[("if-none-match", &weak)]), &tag));
        let list = format!("\"other\", {tag}");
        assert!(not_modified(&headers(&[("if-none-match", &list)]), &tag));
        assert!(not_modified(&headers(&[("if-none-match", "*")]), &tag));
        assert!(!not_modified(
            &headers(&[("if-none-match", "\"other\"")]),
            &tag
        ));
        assert!(!not_modified(&headers(&[]), &tag));
    }

    #[test]
    fn if_match_compares_strongly() {
        let tag = etag(b"x");
        let check = |pairs: &[(&'static str, &str)]| check_write(&headers(pairs), &tag).is_ok();
        assert!(check(&[]));
        assert!(check(&[("if-match", &tag)]));
        assert!(check(&[("if-match", "*")]));
        assert!(check(&[("if-match", "\"a\""), ("if-match", &tag)]));
        assert!(!check(&[("if-match", &format!("W/{tag}"))]));
        assert!(!check(&[("if-match", "\"a\"")]));
        assert!(
            !check(&[("if-match", "")]),
            "an empty If-Match names nothing"
        );
        assert!(!check(&[("if-none-match", "*")]), "the row exists");
        assert!(!check(&[("if-none-match", &tag)]));
        assert!(check(&[("if-none-match", "\"a\"")]));
        // If-Match decides where both are sent.
        assert!(check(&[("if-match", &tag), ("if-none-match", &tag)]));
    }
}
