//! What admin views answer, the error page, templates rendered, and values as text.

use actix_web::http::{header, StatusCode};
use actix_web::HttpResponse;
use askama::Template;
use serde_json::Value;

use super::views::{render, Chrome};
use crate::error::Error;

/// What a view answers.
#[derive(Debug)]
pub(crate) enum Reply {
    /// An HTML page.
    Html(StatusCode, String),
    /// 303 to a URL.
    Redirect(String),
    /// A JSON body.
    Json(StatusCode, Vec<u8>),
    /// A download.
    File {
        content_type: &'static str,
        filename: String,
        body: Vec<u8>,
    },
}

impl Reply {
    /// A 200 page from a template.
    pub(crate) fn page(template: &impl Template) -> Result<Reply, Error> {
        Ok(Reply::Html(StatusCode::OK, render(template)?))
    }

    /// The HTTP response.
    pub(crate) fn into_response(self) -> HttpResponse {
        match self {
            Reply::Html(status, html) => HttpResponse::build(status)
                .content_type("text/html; charset=utf-8")
                .insert_header((header::CACHE_CONTROL, "no-store"))
                .body(html),
            Reply::Redirect(to) => HttpResponse::SeeOther()
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
            } => HttpResponse::Ok()
                .content_type(content_type)
                .insert_header((
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{filename}\""),
                ))
                .body(body),
        }
    }
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
        Ok(html) => Reply::Html(status, html).into_response(),
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
