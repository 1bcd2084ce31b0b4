//! The parts of an HTTP request the REST handlers use, read before any database work: the body
//! (JSON or a form field `data`), the query pairs, and the reply they build.

use std::sync::Arc;

use actix_web::http::header::{HeaderMap, CONTENT_TYPE};
use actix_web::http::{Method, StatusCode};
use actix_web::web::Bytes;
use futures_util::StreamExt;
use serde_json::{Map, Value};

use crate::auth::Headers;
use crate::error::Error;
use crate::listing::{kept_in_links, PAGE};
use crate::urlencoded::{link, pairs};

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
        let parsed: Result<Value, _> = match &self.body {
            Content::Raw(bytes) => serde_json::from_slice(bytes),
            Content::Form(pairs) => match pairs.iter().find(|(k, _)| k == "data") {
                Some((_, text)) => serde_json::from_str(text),
                None => return Err(Error::BadBody("the form field 'data' is missing".into())),
            },
            Content::Invalid(message) => return Err(Error::BadBody(message.clone())),
        };
        match parsed {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err(Error::BadBody("the body must be a JSON object".into())),
            Err(e) => Err(Error::BadBody(format!("the body is not valid JSON: {e}"))),
        }
    }

    /// A link to page `page` of this list with every other parameter kept (but `key` and
    /// `secret`), or `""` for page 0.
    pub(crate) fn page_link(&self, page: i64) -> String {
        if page < 1 {
            return String::new();
        }
        self.link(PAGE, &page.to_string())
    }

    /// A link to this list with every parameter kept but the page position (`page`, `cursor`)
    /// and the credentials (`key`, `secret`), and `name=value` added.
    pub(crate) fn link(&self, name: &str, value: &str) -> String {
        let kept = self.query.iter().filter(|(k, _)| kept_in_links(k));
        link(&self.list_path, kept, (name, value))
    }

    /// The first value of a query parameter.
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A response built on the blocking thread.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    /// JSON text.
    pub(crate) body: Vec<u8>,
    pub(crate) location: Option<String>,
}

impl Reply {
    pub(crate) fn ok(body: Vec<u8>) -> Reply {
        Reply {
            status: StatusCode::OK,
            body,
            location: None,
        }
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
        return Box::pin(parse_multipart(headers, bytes))
            .await
            .map(Content::Form)
            .unwrap_or_else(Content::Invalid);
    }
    Content::Raw(bytes)
}

async fn parse_multipart(
    headers: &HeaderMap,
    bytes: Bytes,
) -> Result<Vec<(String, String)>, String> {
    let bad = |e: actix_multipart::MultipartError| format!("malformed multipart body: {e}");
    check_multipart_framing(headers, &bytes)?;
    let stream =
        futures_util::stream::once(
            async move { Ok::<Bytes, actix_web::error::PayloadError>(bytes) },
        );
    let mut multipart = actix_multipart::Multipart::new(headers, stream);
    let mut pairs = Vec::new();
    while let Some(field) = multipart.next().await {
        let mut field = field.map_err(bad)?;
        let name = field.name().map(str::to_owned).unwrap_or_default();
        let mut value = Vec::new();
        while let Some(chunk) = field.next().await {
            value.extend_from_slice(&chunk.map_err(bad)?);
        }
        let text =
            String::from_utf8(value).map_err(|_| format!("form field '{name}' is not UTF-8"))?;
        pairs.push((name, text));
    }
    Ok(pairs)
}

/// Refuses a multipart body before the parser sees it unless its boundary is 4 to 70
/// characters and it holds its close delimiter: the parser (actix-multipart 0.7) panics on a
/// line `--` when the boundary is shorter than 4 characters (RFC 2046 allows 1 to 70; browsers
/// and HTTP clients send 16 or more) and never finishes a body whose close delimiter is missing
/// after a final line break (both found by fuzzing).
fn check_multipart_framing(headers: &HeaderMap, bytes: &[u8]) -> Result<(), String> {
    let boundary = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<actix_web::mime::Mime>().ok())
        .and_then(|m| {
            m.get_param(actix_web::mime::BOUNDARY)
                .map(|b| b.as_str().to_owned())
        })
        .unwrap_or_default();
    if !(4..=70).contains(&boundary.len()) {
        return Err("malformed multipart body: a boundary of 4 to 70 characters is needed".into());
    }
    let close = format!("--{boundary}--");
    let closed = bytes
        .windows(close.len())
        .any(|window| window == close.as_bytes());
    if closed {
        Ok(())
    } else {
        Err("malformed multipart body: the closing boundary is missing".into())
    }
}
