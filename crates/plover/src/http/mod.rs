//! What requests carry, read one way for every component: bodies under their limit (`body`),
//! query strings and urlencoded forms (`urlencoded`), and the digests that tag versions and
//! idempotent requests (`digest`).

pub(crate) mod body;
pub(crate) mod digest;
pub(crate) mod urlencoded;
