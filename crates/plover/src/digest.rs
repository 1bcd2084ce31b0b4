//! Version tags: the strong `ETag` of a REST answer's body, and the version of a row that an
//! admin edit form carries (docs/contract.md#conditional-requests).

use sha2::{Digest, Sha256};

#[cfg(feature = "admin")]
use crate::model::RestModel;

/// The tag of `bytes`: the first 128 bits of their SHA-256 in hex, quoted as an entity tag.
/// Equal bytes have equal tags.
pub(crate) fn tag(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(bytes);
    let mut tag = String::with_capacity(34);
    tag.push('"');
    for byte in &digest[..16] {
        tag.push(char::from(HEX[usize::from(byte >> 4)]));
        tag.push(char::from(HEX[usize::from(byte & 15)]));
    }
    tag.push('"');
    tag
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
