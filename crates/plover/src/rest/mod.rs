//! The REST API: resources, their options and hooks, and the HTTP endpoints.

mod api;
mod data;
pub(crate) mod delete;
mod endpoint;
mod prepared;
mod request;
mod resource;

pub use api::{RestApi, DEFAULT_MAX_BODY_BYTES};
pub use data::Data;
pub use resource::{Context, DefaultHooks, Hooks, Resource, Scope};
