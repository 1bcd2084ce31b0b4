//! Compile-error tests of `#[derive(RestModel)]`.
