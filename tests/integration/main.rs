//! Integration tests: one binary, one module per area of docs/contract.md. Every test builds the
//! fixture application of `plover_tests` over its own temporary database: SQLite, or
//! PostgreSQL when `PLOVER_TEST_PG_URL` is set to an admin URL (see `plover_tests`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod accounts;
mod admin;
mod aggregates;
mod auth;
mod bulk;
mod changes;
mod commands;
mod conditional;
mod counts;
mod crud;
mod deliveries;
mod errors;
mod fields;
mod filter_logic;
mod filtered_writes;
mod filters;
mod fuzz;
mod history;
mod hooks;
mod hostile;
mod idempotency;
mod jobs;
mod joins;
mod library;
mod logins;
mod microblog;
mod nested_create;
mod openapi;
mod ordering_pagination;
mod properties;
mod query;
mod rate_limits;
mod rules;
mod schema;
mod search;
mod serialization;
mod setup;
mod sparse_fields;
mod tokens;
mod upsert;
mod usernames;
mod views;
mod webhooks;
