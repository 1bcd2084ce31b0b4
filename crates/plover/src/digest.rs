//! Version tags: the strong `ETag` of a REST answer's body, and the version of a row that an
//! admin edit form carries (docs/contract.md#conditional-requests); the SHA-256 that an
//! idempotency key keeps of its request (docs/contract.md#idempotency-keys).

use sha2::{Digest, Sha256};

#[cfg(feature = "admin")]
use crate::model::RestModel;

/// The tag of `bytes`: the first 128 bits of their SHA-256 in hex, quoted as an entity tag.
/// Equal bytes have equal tags.
pub(crate) fn tag(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut tag = String::with_capacity(34);
    tag.push('"');
    push_hex(&mut tag, &digest[..16]);
    tag.push('"');
    tag
}

/// The whole SHA-256 of `bytes` in hex (64 characters): what the REST layer keeps of an
/// idempotent request's body and credentials instead of the bytes themselves.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    let mut hex = String::with_capacity(64);
    push_hex(&mut hex, &Sha256::digest(bytes));
    hex
}

/// Appends `bytes` to `out` in lowercase hex, without an allocation per byte.
fn push_hex(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for byte in bytes {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 15)]));
    }
}

/// The version of a stored row: the tag of every field's value, so that any change of the
/// row changes it (the admin's edit form carries it).
#[cfg(feature = "admin")]
pub(crate) fn version<M: RestModel>(row: &M) -> String {
    let values: Vec<serde_json::Value> = (0..M::meta().fields.len())
        .map(|idx| row.field_json(idx))
        .collect();
    tag(serde_json::Value::Array(values).to_string().as_bytes())
}
