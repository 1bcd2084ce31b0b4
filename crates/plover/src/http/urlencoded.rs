//! Query strings and urlencoded forms: decoding them into pairs, and encoding pairs into links.

/// The decoded pairs of a query string or an urlencoded form, in order.
pub(crate) fn pairs(text: &[u8]) -> Vec<(String, String)> {
    if text.is_empty() {
        return Vec::new();
    }
    let mut pairs = Vec::with_capacity(text.iter().filter(|&&b| b == b'&').count() + 1);
    pairs.extend(form_urlencoded::parse(text).into_owned());
    pairs
}

/// `k=v&...`, form-encoded.
#[cfg(feature = "admin")]
pub(crate) fn encode<'a>(pairs: impl IntoIterator<Item = &'a (String, String)>) -> String {
    let mut out = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        out.append_pair(k, v);
    }
    out.finish()
}

/// A link to `path` with `pairs`, then `last` (a page number, an ordering) appended.
pub(crate) fn link<'a>(
    path: &str,
    pairs: impl IntoIterator<Item = &'a (String, String)>,
    last: (&str, &str),
) -> String {
    let mut url = String::with_capacity(128);
    url.push_str(path);
    url.push('?');
    let start = url.len();
    let mut out = form_urlencoded::Serializer::for_suffix(url, start);
    for (k, v) in pairs {
        out.append_pair(k, v);
    }
    out.append_pair(last.0, last.1);
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_encode_what_pairs_decode() {
        let decoded = pairs(b"q=a+b%26c&user__username=%C3%A9&page=2");
        assert_eq!(decoded[0], ("q".to_owned(), "a b&c".to_owned()));
        assert_eq!(decoded[1].1, "é");
        let kept = decoded.iter().filter(|(k, _)| k != "page");
        let url = link("/api/message/", kept, ("page", "3"));
        assert_eq!(url, "/api/message/?q=a+b%26c&user__username=%C3%A9&page=3");
        assert_eq!(
            pairs(url.split_once('?').map_or("", |s| s.1).as_bytes()).len(),
            3
        );
        #[cfg(feature = "admin")]
        assert_eq!(encode(&decoded[..1]), "q=a+b%26c");
    }
}
