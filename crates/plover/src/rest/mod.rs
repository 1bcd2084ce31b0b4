//! The REST API: resources, their options and hooks, and the HTTP endpoints.

mod aggregate;
mod api;
mod body;
mod changes;
mod checks;
mod children;
mod conditional;
mod data;
mod endpoint;
mod erased;
mod filtered;
mod hooks;
mod idempotency;
mod joins;
mod list;
mod nested;
mod prepared;
mod rate;
mod relation;
mod request;
mod resource;
mod sparse;
mod upsert;
mod write;

pub use crate::http::body::DEFAULT_MAX_BODY_BYTES;
pub use api::RestApi;
#[cfg(feature = "testing")]
#[doc(hidden)]
pub use api::{registrations, Registration};
pub use data::Data;
pub(crate) use endpoint::Endpoint as ResourceEndpoint;
pub use hooks::{Context, DefaultHooks, HashPassword, Hooks, Scope};
pub use idempotency::DEFAULT_IDEMPOTENCY_TTL;
#[cfg(feature = "testing")]
#[doc(hidden)]
pub use prepared::ListParser;
pub use rate::RateLimit;
pub use resource::Resource;
