//! Where to go after a login or logout: the `next` parameter, with open-redirect safety.

/// Bytes kept as they are in a `Location` path and query; everything else is percent-encoded.
fn keep(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?%#".contains(&b)
}

/// `next` as it goes into `Location`, if it is a same-site path (docs/contract.md#accounts).
///
/// The value must start with exactly one `/` that is not followed by `/` or `\` (`//host` and
/// `/\host` are other sites to a browser), and hold no control characters (a browser drops
/// tabs and newlines, which would turn `/\t/host` into `//host`). Leading blanks fail the first
/// rule. What passes is percent-encoded outside the characters a path and query may hold
/// (space, `\`, `"`, `<`, `>`, non-ASCII...), and checked again in that encoded form, which
/// is what the browser gets.
pub fn safe_next(raw: &str) -> Option<String> {
    if raw.chars().any(char::is_control) {
        return None;
    }
    let mut encoded = String::with_capacity(raw.len());
    for &b in raw.as_bytes() {
        if keep(b) {
            encoded.push(char::from(b));
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    let safe = |s: &str| {
        let b = s.as_bytes();
        b.first() == Some(&b'/') && !matches!(b.get(1), Some(b'/' | b'\\'))
    };
    (safe(raw) && safe(&encoded)).then_some(encoded)
}

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn same_site_paths_pass_encoded() {
        assert_eq!(safe_next("/").as_deref(), Some("/"));
        assert_eq!(
            safe_next("/private/?a=1&b=two#top").as_deref(),
            Some("/private/?a=1&b=two#top")
        );
        assert_eq!(
            safe_next("/p/?y=a b").as_deref(),
            Some("/p/?y=a%20b"),
            "a space is encoded"
        );
        assert_eq!(safe_next("/p/?y=a%20b").as_deref(), Some("/p/?y=a%20b"));
        assert_eq!(safe_next("/caf\u{e9}").as_deref(), Some("/caf%C3%A9"));
        assert_eq!(safe_next("/a\\b").as_deref(), Some("/a%5Cb"));
        assert_eq!(safe_next("/\"><x").as_deref(), Some("/%22%3E%3Cx"));
    }

    #[test]
    fn other_sites_and_tricks_fail() {
        for evil in [
            "",
            "http://evil.example/",
            "https://evil.example/x",
            "//evil.example/",
            "//evil.example",
            "/\\evil.example",
            "\\\\evil.example",
            "javascript:alert(1)",
            "http:/evil.example/",
            " /x",
            "\t//evil.example",
            "/\t/evil.example",
            "/\n/evil.example",
            "/\r\nSet-Cookie: x=1",
            "/\u{0}x",
            "evil.example",
            "\u{a0}/x",
        ] {
            assert_eq!(safe_next(evil), None, "{evil:?}");
        }
    }
}
