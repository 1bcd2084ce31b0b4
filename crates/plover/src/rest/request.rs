//! The parts of an HTTP request the REST handlers use, read before any database work: the body
//! (JSON or a form field `data`), the query pairs, and the reply they build.

use std::sync::Arc;

use actix_web::http::header::{HeaderMap, CONTENT_TYPE};
use actix_web::http::{Method, StatusCode};
use actix_web::web::Bytes;
use serde_json::{Map, Value};

use super::conditional;
use crate::auth::Headers;
use crate::error::Error;
use crate::http::body::multipart_pairs;
use crate::http::digest::Tag;
use crate::http::urlencoded::pairs;
use crate::listing::first;

/// A request body, read in full, as its content type says.
#[derive(Debug)]
pub(crate) enum Content {
    /// Raw bytes, expected to be a JSON object.
    Raw(Bytes),
    /// Form fields (urlencoded or multipart); the JSON object is in `data`.
    Form(Vec<(String, String)>),
    /// A body that could not be read as its content type says; reported only where the
    /// body is used, after the checks that come first (docs/contract.md#order-of-checks).
    Invalid(String),
}

/// The body of a create.
#[derive(Debug)]
pub(crate) enum Objects {
    /// One object.
    One(Map<String, Value>),
    /// An array of objects, in order.
    Many(Vec<Map<String, Value>>),
}

/// One REST request, detached from actix so that it can move to a blocking thread.
#[derive(Debug)]
pub(crate) struct ApiRequest {
    pub(crate) method: Method,
    /// The peer's address, when known.
    pub(crate) client: Option<std::net::IpAddr>,
    pub(crate) pk: Option<String>,
    pub(crate) query: Vec<(String, String)>,
    pub(crate) headers: Headers,
    pub(crate) body: Content,
    /// `{prefix}/{name}/`, the canonical list path.
    pub(crate) list_path: Arc<str>,
}

impl ApiRequest {
    /// The form fields of the body (for API-key authentication).
    pub(crate) fn form(&self) -> &[(String, String)] {
        match &self.body {
            Content::Form(pairs) => pairs,
            Content::Raw(_) | Content::Invalid(_) => &[],
        }
    }

    /// The body as a JSON object (docs/contract.md#request-bodies).
    pub(crate) fn json_object(&self) -> Result<Map<String, Value>, Error> {
        match self.json()? {
            Value::Object(map) => Ok(map),
            _ => Err(Error::BadBody("the body must be a JSON object".into())),
        }
    }

    /// The body of a create: a JSON object, or an array of objects (a bulk create).
    pub(crate) fn json_objects(&self) -> Result<Objects, Error> {
        let not_objects =
            || Error::BadBody("the body must be a JSON object or an array of objects".into());
        match self.json()? {
            Value::Object(map) => Ok(Objects::One(map)),
            Value::Array(items) => (items.into_iter())
                .map(|item| match item {
                    Value::Object(map) => Ok(map),
                    _ => Err(not_objects()),
                })
                .collect::<Result<_, _>>()
                .map(Objects::Many),
            _ => Err(not_objects()),
        }
    }

    /// The body as JSON: raw, or the form field `data`.
    fn json(&self) -> Result<Value, Error> {
        let parsed: Result<Value, _> = match &self.body {
            Content::Raw(bytes) => serde_json::from_slice(bytes),
            Content::Form(pairs) => match pairs.iter().find(|(k, _)| k == "data") {
                Some((_, text)) => serde_json::from_str(text),
                None => return Err(Error::BadBody("the form field 'data' is missing".into())),
            },
            Content::Invalid(message) => return Err(Error::BadBody(message.clone())),
        };
        parsed.map_err(|e| Error::BadBody(format!("the body is not valid JSON: {e}")))
    }

    /// The first value of a query parameter.
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        first(&self.query, name)
    }
}

/// A response built on the blocking thread.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    /// JSON text.
    pub(crate) body: Vec<u8>,
    pub(crate) location: Option<String>,
    /// The body's entity tag, where the answer carries one.
    pub(crate) etag: Option<Tag>,
    /// Whether this is the stored answer of an earlier request with the same idempotency key
    /// (`Idempotent-Replayed: true`).
    pub(crate) replayed: bool,
}

impl Reply {
    pub(crate) fn ok(body: Vec<u8>) -> Reply {
        Reply {
            status: StatusCode::OK,
            body,
            location: None,
            etag: None,
            replayed: false,
        }
    }

    /// A 201 answer: the created object at `location`, or the objects of a bulk create.
    pub(crate) fn created(body: Vec<u8>, location: Option<String>) -> Reply {
        Reply {
            status: StatusCode::CREATED,
            location,
            ..Reply::ok(body)
        }
    }

    /// This 200 answer with its body's `ETag`; for a read whose `If-None-Match` names it, a
    /// 304 without a body (docs/contract.md#conditional-requests).
    pub(crate) fn tagged(mut self, headers: &Headers, read: bool) -> Reply {
        if self.status != StatusCode::OK {
            return self;
        }
        let tag = Tag::of(&self.body);
        if read && conditional::not_modified(headers, tag.as_str()) {
            self.status = StatusCode::NOT_MODIFIED;
            self.body = Vec::new();
        }
        self.etag = Some(tag);
        self
    }
}

/// Interprets a body by its content type.
pub(crate) async fn parse_body(headers: &HeaderMap, bytes: Bytes) -> Content {
    let ctype = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if ctype.starts_with("application/x-www-form-urlencoded") {
        return Content::Form(pairs(&bytes));
    }
    if ctype.starts_with("multipart/form-data") {
        // Boxed: the multipart parser's state would otherwise make every request's future
        // larger, multipart or not.
        return Box::pin(multipart_pairs(headers, bytes))
            .await
            .map(Content::Form)
            .unwrap_or_else(Content::Invalid);
    }
    Content::Raw(bytes)
}
