//! Version tags: the strong `ETag` of a REST answer's body, and the version of a row that an
//! admin edit form carries (docs/contract.md#conditional-requests); the SHA-256 that an
//! idempotency key keeps of its request (docs/contract.md#idempotency-keys).

use actix_web::http::header::HeaderValue;
use sha2::{Digest, Sha256};

/// The tag of `bytes`: the first 128 bits of their SHA-256 in hex, quoted as an entity tag.
/// Equal bytes have equal tags.
pub(crate) fn tag(bytes: &[u8]) -> String {
    Tag::of(bytes).as_str().to_owned()
}

/// An entity tag as [`tag`] makes it, held without an allocation: `"` and 32 hex digits and `"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Tag([u8; 34]);

impl Tag {
    /// The tag of `bytes`.
    pub(crate) fn of(bytes: &[u8]) -> Tag {
        let digest = Sha256::digest(bytes);
        let mut tag = [b'"'; 34];
        hex(&digest[..16], &mut tag[1..33]);
        Tag(tag)
    }

    /// The tag's text.
    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or_default()
    }

    /// The tag as the value of an `ETag` header.
    pub(crate) fn header_value(&self) -> HeaderValue {
        HeaderValue::from_bytes(&self.0).unwrap_or_else(|_| HeaderValue::from_static("\"\""))
    }
}

/// The whole SHA-256 of `bytes` in hex (64 characters): what the REST layer keeps of an
/// idempotent request's body and credentials instead of the bytes themselves.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    let mut out = [0; 64];
    hex(&Sha256::digest(bytes), &mut out);
    std::str::from_utf8(&out).unwrap_or_default().to_owned()
}

/// Writes `bytes` in lowercase hex to `out` (twice as long).
fn hex(bytes: &[u8], out: &mut [u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for (byte, pair) in bytes.iter().zip(out.chunks_exact_mut(2)) {
        pair[0] = HEX[usize::from(byte >> 4)];
        pair[1] = HEX[usize::from(byte & 15)];
    }
}

/// The version of a stored row given as its fields' values, in order: their tag, so that any
/// change of the row changes it (the admin's edit form carries it).
#[cfg(feature = "admin")]
pub(crate) fn version(values: impl Iterator<Item = serde_json::Value>) -> String {
    tag(serde_json::Value::Array(values.collect())
        .to_string()
        .as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_and_hashes_are_sha256_in_lowercase_hex() {
        // SHA-256("abc"), FIPS 180-2's first example.
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_hex(b"abc"), abc);
        assert_eq!(tag(b"abc"), format!("\"{}\"", &abc[..32]));
        assert_eq!(Tag::of(b"abc").header_value(), tag(b"abc").as_str());
    }
}
