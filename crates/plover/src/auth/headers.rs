//! `Headers`: a request's headers as authenticators see them on the blocking thread.

use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};

/// The headers of a REST request, each name with its values, as an [`Authenticator`]
/// receives them in [`AuthRequest`].
///
/// Names compare without regard to ASCII case, as HTTP says. A name sent more than once
/// keeps each value; [`get`](Headers::get) returns the first, as actix's `HeaderMap` does.
///
/// It is a list rather than a map: a request carries a handful of headers, and a list is one
/// small allocation to hand from the server's thread to the thread that runs the request.
///
/// ```
/// use actix_web::http::header::{HeaderName, HeaderValue};
/// use plover::auth::Headers;
///
/// let headers: Headers = [
///     (HeaderName::from_static("x-token"), HeaderValue::from_static("s3cret")),
///     (HeaderName::from_static("accept"), HeaderValue::from_static("application/json")),
/// ]
/// .into_iter()
/// .collect();
/// assert_eq!(headers.get("X-Token").and_then(|v| v.to_str().ok()), Some("s3cret"));
/// assert!(!headers.contains_key("authorization"));
/// ```
///
/// [`Authenticator`]: super::Authenticator
/// [`AuthRequest`]: super::AuthRequest
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Headers(Vec<(HeaderName, HeaderValue)>);

impl Headers {
    /// The first value of `name`.
    pub fn get(&self, name: impl AsRef<str>) -> Option<&HeaderValue> {
        let name = name.as_ref();
        self.0
            .iter()
            .find(|(n, _)| n.as_str().eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// Every value of `name`, in the order they came.
    pub fn get_all<'a, N: AsRef<str> + 'a>(
        &'a self,
        name: N,
    ) -> impl Iterator<Item = &'a HeaderValue> + 'a {
        self.0
            .iter()
            .filter(move |(n, _)| n.as_str().eq_ignore_ascii_case(name.as_ref()))
            .map(|(_, v)| v)
    }

    /// Whether the request has a header `name`.
    pub fn contains_key(&self, name: impl AsRef<str>) -> bool {
        self.get(name).is_some()
    }

    /// Every name and value.
    pub fn iter(&self) -> impl Iterator<Item = (&HeaderName, &HeaderValue)> {
        self.0.iter().map(|(n, v)| (n, v))
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is no header at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<&HeaderMap> for Headers {
    fn from(map: &HeaderMap) -> Headers {
        let mut list = Vec::with_capacity(map.len());
        list.extend(map.iter().map(|(n, v)| (n.clone(), v.clone())));
        Headers(list)
    }
}

impl FromIterator<(HeaderName, HeaderValue)> for Headers {
    fn from_iter<I: IntoIterator<Item = (HeaderName, HeaderValue)>>(iter: I) -> Headers {
        Headers(iter.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_names_keep_every_value_in_order() {
        let mut map = HeaderMap::new();
        map.append(
            HeaderName::from_static("x-a"),
            HeaderValue::from_static("1"),
        );
        map.append(
            HeaderName::from_static("x-a"),
            HeaderValue::from_static("2"),
        );
        map.insert(
            HeaderName::from_static("x-b"),
            HeaderValue::from_static("3"),
        );
        let headers = Headers::from(&map);
        assert_eq!(headers.len(), 3);
        let a: Vec<_> = headers.get_all("X-A").map(|v| v.as_bytes()).collect();
        assert_eq!(a, [b"1", b"2"]);
        assert_eq!(headers.get("x-a").map(|v| v.as_bytes()), Some(&b"1"[..]));
        assert_eq!(headers.get("x-b").map(|v| v.as_bytes()), Some(&b"3"[..]));
        assert!(headers.get("x-c").is_none());
    }
}
