//! What admin views answer, the error page, templates rendered, and values as text.

use actix_web::http::{header, StatusCode};
use actix_web::web::Bytes;
use actix_web::HttpResponse;
use askama::Template;
use futures_util::Stream;
use serde_json::Value;

use super::views::{render, Chrome, Notice};
use crate::db::{Conn, Database};
use crate::error::Error;

/// What a view answers.
#[derive(Debug)]
pub(crate) enum Reply {
    /// An HTML page.
    Html(StatusCode, String),
    /// 303 to a URL.
    Redirect(String),
    /// 303 to a URL, whose page then shows `notice` once (what an action or import did).
    Done {
        /// Where to.
        to: String,
        /// What was done.
        notice: Notice,
    },
    /// A JSON body.
    Json(StatusCode, Vec<u8>),
    /// A download.
    File {
        content_type: &'static str,
        filename: String,
        body: Vec<u8>,
    },
    /// A download sent as it is made: `first`, then each piece `rest` makes, one pooled
    /// connection per piece, taken when the client has taken the piece before.
    Stream {
        content_type: &'static str,
        filename: String,
        first: Vec<u8>,
        rest: Box<dyn Chunks>,
    },
}

/// The rest of a streamed download, made piece by piece on the blocking thread pool.
pub(crate) trait Chunks: Send + std::fmt::Debug {
    /// The next piece, read with `conn`; `None` when the download is complete.
    fn next_chunk(&mut self, conn: &mut Conn<'_>) -> Result<Option<Vec<u8>>, Error>;
}

impl Reply {
    /// A 200 page from a template.
    pub(crate) fn page(template: &impl Template) -> Result<Reply, Error> {
        Ok(Reply::Html(StatusCode::OK, render(template)?))
    }

    /// The HTTP response; a streamed download reads its further pieces from `db`.
    pub(crate) fn into_response(self, db: &Database) -> HttpResponse {
        match self {
            Reply::Html(status, html) => html_response(status, html),
            Reply::Redirect(to) | Reply::Done { to, .. } => HttpResponse::SeeOther()
                .insert_header((header::LOCATION, to))
                .finish(),
            Reply::Json(status, body) => HttpResponse::build(status)
                .content_type("application/json")
                .insert_header((header::CACHE_CONTROL, "no-store"))
                .body(body),
            Reply::File {
                content_type,
                filename,
                body,
            } => download(content_type, &filename).body(body),
            Reply::Stream {
                content_type,
                filename,
                first,
                rest,
            } => download(content_type, &filename).streaming(pieces(first, rest, db.clone())),
        }
    }
}

/// An HTML page answered with `status`.
fn html_response(status: StatusCode, html: String) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(html)
}

/// The head of a download named `filename`.
fn download(content_type: &str, filename: &str) -> actix_web::HttpResponseBuilder {
    let mut builder = HttpResponse::Ok();
    builder.content_type(content_type).insert_header((
        header::CONTENT_DISPOSITION,
        format!("attachment; filename=\"{filename}\""),
    ));
    builder
}

/// Where a streamed download is.
enum Step {
    /// `first` is yet to be sent.
    First(Vec<u8>, Box<dyn Chunks>),
    /// The next piece is yet to be made.
    Next(Box<dyn Chunks>),
    /// Complete, or ended by an error.
    Done,
}

/// The body of a streamed download: `first`, then the pieces of `rest`, each made on the
/// blocking thread pool with a connection of its own, only when the connection asks for more
/// (that is, when the client has taken the piece before). An error ends the body, and with it
/// the connection: the client sees an incomplete download.
fn pieces(
    first: Vec<u8>,
    rest: Box<dyn Chunks>,
    db: Database,
) -> impl Stream<Item = Result<Bytes, Error>> {
    futures_util::stream::unfold(Step::First(first, rest), move |step| {
        let db = db.clone();
        async move {
            match step {
                Step::First(first, rest) => Some((Ok(Bytes::from(first)), Step::Next(rest))),
                Step::Next(mut rest) => {
                    let made = db
                        .run(move |conn| Ok((rest.next_chunk(conn), rest)))
                        .await
                        .and_then(|(piece, rest)| Ok((piece?, rest)));
                    match made {
                        Ok((Some(piece), rest)) => Some((Ok(Bytes::from(piece)), Step::Next(rest))),
                        Ok((None, _)) => None,
                        Err(e) => {
                            log::error!("admin: a download ended early: {e}");
                            Some((Err(e), Step::Done))
                        }
                    }
                }
                Step::Done => None,
            }
        }
    })
}

/// An error as an admin page.
#[derive(Template)]
#[template(path = "admin/error.html")]
pub(crate) struct ErrorPage<'a> {
    pub(crate) chrome: Option<&'a Chrome>,
    pub(crate) title: String,
    pub(crate) status: u16,
    pub(crate) message: String,
}

/// The page of an error: its status, and a message that tells what to do.
pub(crate) fn error_page(chrome: Option<&Chrome>, error: &Error) -> HttpResponse {
    let status = actix_web::ResponseError::status_code(error);
    if status.is_server_error() {
        log::error!("admin: {error}");
    }
    let message = error.public_message();
    let page = ErrorPage {
        chrome,
        title: status.canonical_reason().unwrap_or("Error").to_owned(),
        status: status.as_u16(),
        message,
    };
    match page.render() {
        Ok(html) => html_response(status, html),
        Err(_) => HttpResponse::build(status).finish(),
    }
}

/// A stored value as text for people: empty for NULL, `Yes`/`No` for booleans.
pub(crate) fn display_value(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Bool(true) => "Yes".into(),
        Value::Bool(false) => "No".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A stored value as plain text, for form inputs and CSV: NULL empty, booleans
/// `true`/`false`, date-times `YYYY-MM-DD HH:MM:SS`.
pub(crate) fn plain_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
