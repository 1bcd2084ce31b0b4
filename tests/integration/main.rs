//! Integration tests: one binary, one module per area of SPEC.md. Every test builds the
//! fixture application of `plover_tests` over its own temporary database.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod auth;
mod crud;
mod errors;
mod filters;
mod ordering_pagination;
mod serialization;
mod setup;
