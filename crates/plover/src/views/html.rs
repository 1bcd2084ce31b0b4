//! HTML answers for application views: rendered templates and error pages.

use actix_web::body::BoxBody;
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use askama::Template;

use crate::error::Error;

/// An [`Error`] answered as an HTML page instead of a JSON body: the same status and headers
/// (`Allow`, `WWW-Authenticate`), and a short page that says what went wrong. HTML views return
/// `Result<HttpResponse, HtmlError>`; `?` converts every Plover error.
#[derive(Debug)]
pub struct HtmlError(pub Error);

impl From<Error> for HtmlError {
    fn from(error: Error) -> Self {
        HtmlError(error)
    }
}

impl std::fmt::Display for HtmlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[derive(Template)]
#[template(
    source = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{{ status }} {{ reason }}</title></head>\
<body><main><h1>{{ reason }}</h1><p>{{ message }}</p><p><a href=\"/\">Home</a></p></main></body></html>\n",
    ext = "html"
)]
struct ErrorPage<'a> {
    status: u16,
    reason: &'a str,
    message: String,
}

impl ResponseError for HtmlError {
    fn status_code(&self) -> StatusCode {
        self.0.status_code()
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = self.0.error_response();
        let status = response.status();
        let page = ErrorPage {
            status: status.as_u16(),
            reason: status.canonical_reason().unwrap_or("Error"),
            message: self.0.public_message(),
        };
        let Ok(html) = page.render() else {
            return response;
        };
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        response.set_body(BoxBody::new(html))
    }
}

/// A 200 HTML response from an askama template; a template error is a 500 page.
pub fn render(template: &impl Template) -> Result<HttpResponse, HtmlError> {
    let html = template
        .render()
        .map_err(|e| Error::Internal(format!("template: {e}")))?;
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(html))
}
