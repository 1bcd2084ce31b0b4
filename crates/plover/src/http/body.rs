//! Request bodies: the one way every component (REST, admin, accounts) reads them, under the
//! limit its routes set.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::error::PayloadError;
use actix_web::http::header::{HeaderMap, CONTENT_TYPE};
use actix_web::web::{Bytes, BytesMut};
use actix_web::{FromRequest, HttpRequest};
use futures_util::{Stream, StreamExt};

use crate::error::Error;

/// Default limit of request bodies: 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

/// The largest body the routes it is registered on accept, as app data (like actix's
/// `PayloadConfig`); a larger one is 413. Without one, 1 MiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BodyLimit(pub(crate) usize);

impl BodyLimit {
    /// The limit of the route that `req` matched.
    fn of(req: &HttpRequest) -> usize {
        req.app_data::<BodyLimit>()
            .map_or(DEFAULT_MAX_BODY_BYTES, |limit| limit.0)
    }
}

/// A request body, read in full within its [`BodyLimit`]; as an extractor it is read before the
/// handler runs.
#[derive(Debug)]
pub(crate) struct Body(pub(crate) Bytes);

impl Body {
    /// Reads `payload` to its end: 413 past the limit, 408 when the client stops sending (the
    /// server's body timeout), 400 for a body that breaks off.
    pub(crate) async fn read(
        req: &HttpRequest,
        mut payload: impl Stream<Item = Result<Bytes, PayloadError>> + Unpin,
    ) -> Result<Body, Error> {
        let limit = BodyLimit::of(req);
        let mut buf = BytesMut::new();
        while let Some(chunk) = payload.next().await {
            let chunk = chunk.map_err(|e| match e {
                PayloadError::Overflow => Error::PayloadTooLarge,
                PayloadError::Io(e) if e.kind() == std::io::ErrorKind::TimedOut => Error::Timeout,
                other => Error::BadBody(format!("could not read the body: {other}")),
            })?;
            if buf.len() + chunk.len() > limit {
                return Err(Error::PayloadTooLarge);
            }
            buf.extend_from_slice(&chunk);
        }
        Ok(Body(buf.freeze()))
    }

    /// The pairs of an `application/x-www-form-urlencoded` body, in order.
    #[cfg(feature = "accounts")]
    pub(crate) fn form_pairs(&self) -> Vec<(String, String)> {
        crate::http::urlencoded::pairs(&self.0)
    }
}

/// 400 for a form field whose name or value holds U+0000, which no stored text holds (both
/// engines refuse or cut it). Checked after the form's CSRF token, as every other input.
#[cfg(feature = "accounts")]
pub(crate) fn check_form_text(pairs: &[(String, String)]) -> Result<(), Error> {
    match pairs
        .iter()
        .find(|(k, v)| k.contains('\0') || v.contains('\0'))
    {
        Some((key, _)) => Err(Error::BadBody(format!(
            "the form field '{}' holds U+0000, which is not accepted",
            key.replace('\0', "\\0")
        ))),
        None => Ok(()),
    }
}

/// The fields of a `multipart/form-data` body, in order, each value as text (a file's content
/// too): the message for the client when the body is malformed or a value is not UTF-8.
pub(crate) async fn multipart_pairs(
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

impl FromRequest for Body {
    type Error = Error;
    type Future = Pin<Box<dyn Future<Output = Result<Body, Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let payload = payload.take();
        Box::pin(async move { Body::read(&req, payload).await })
    }
}
