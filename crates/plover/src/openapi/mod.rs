//! The API describes itself: an OpenAPI 3.1 document at `GET {prefix}/openapi.json` and a
//! reference page at `GET {prefix}/docs/`, both built once by
//! [`RestApi::setup`](crate::rest::RestApi::setup) from the registrations
//! (docs/contract.md#api-description).
//!
//! The document is made of the types of [utoipa](https://docs.rs/utoipa)'s `openapi` module,
//! re-exported here as [`spec`]; an application adds its own operations, or changes
//! descriptions, with [`RestApi::openapi`](crate::rest::RestApi::openapi):
//!
//! ```
//! use plover::openapi::spec::{path::{HttpMethod, Operation}, Info};
//! # use plover::prelude::*;
//! # let db = Database::from_url("sqlite://:memory:").unwrap();
//! let api = RestApi::new(db).openapi(|doc| {
//!     doc.info = Info::new("Microblog", "1.0");
//!     let mut health = Operation::new();
//!     health.summary = Some("Whether the server is up".into());
//!     doc.paths.add_path_operation("/health", vec![HttpMethod::Get], health);
//! });
//! ```
//!
//! A field's `///` comment becomes its description, and a model's its resource's.

mod document;
mod page;
mod params;
mod schema;

use actix_web::http::Method;

pub use utoipa::openapi as spec;

pub(crate) use document::document;
pub(crate) use page::page;

use crate::auth::Described;
use crate::listing::{JoinRules, ListPlan};
use crate::meta::ModelMeta;

/// An object as a resource serializes it: the model, the fields it shows, and the included
/// resources by foreign-key field.
#[derive(Debug)]
pub(crate) struct Shape<'a> {
    pub(crate) meta: &'static ModelMeta,
    pub(crate) exposed: &'a [bool],
    pub(crate) nested: Vec<(usize, Shape<'a>)>,
}

/// What the description needs of one registered resource.
#[derive(Debug)]
pub(crate) struct ResourceDoc<'a> {
    pub(crate) name: &'a str,
    pub(crate) shape: Shape<'a>,
    /// Per field: whether a client may write it here.
    pub(crate) writable: &'a [bool],
    /// The owner field, stamped by the server.
    pub(crate) owner: Option<usize>,
    pub(crate) plan: &'a ListPlan,
    /// The rules of the API's other resources, which joins into their models obey.
    pub(crate) joins: &'a dyn JoinRules,
    /// The verbs of the list path and of the detail path.
    pub(crate) list: Vec<Method>,
    pub(crate) detail: Vec<Method>,
    /// The verbs of the aggregate path (none where the resource does not serve it).
    pub(crate) aggregate: Vec<Method>,
    /// Whether it serves a change feed (`changes/`, and `changes=cursor` on the list).
    pub(crate) changes: bool,
    pub(crate) keyset: bool,
    pub(crate) paginate_by: i64,
    pub(crate) delete_recursive: bool,
    pub(crate) auth: Described,
    /// Whether a rate limit (the resource's or the API's) counts its requests.
    pub(crate) rate_limited: bool,
    /// Whether each verb needs its model permission (`ModelPermissions`): 401 and 403.
    pub(crate) permissions: bool,
    /// Whether reads and updates send an `ETag` (the API's `etags`).
    pub(crate) etags: bool,
    /// Whether PUT, PATCH and DELETE need `If-Match`.
    pub(crate) require_if_match: bool,
    /// The most rows a PATCH or DELETE by filters changes, where the resource serves them.
    pub(crate) max_affected: Option<usize>,
    /// The fields an upsert may find rows by (`?on=`); empty: no upsert.
    pub(crate) upsert_on: Vec<&'static str>,
    /// The writable nested relations, by body key: written by a create only.
    pub(crate) children: Vec<(&'a str, ChildDoc<'a>)>,
}

/// What the description needs of the child resource of a writable nested relation.
#[derive(Debug)]
pub(crate) struct ChildDoc<'a> {
    /// Its objects.
    pub(crate) shape: Shape<'a>,
    /// Per field: whether a client may write it in a child (never the foreign key).
    pub(crate) writable: &'a [bool],
    /// Its owner field, stamped by the server.
    pub(crate) owner: Option<usize>,
}
