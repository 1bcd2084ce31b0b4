//! HTML answers for application views: rendered templates, pages of a query and error pages.

use actix_web::body::BoxBody;
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, ResponseError};
use askama::Template;

use super::paginate::{Page, PaginatedQuery};
use crate::db::DbConn;
use crate::error::Error;
use crate::model::RestModel;

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

/// Renders a page of `query` with an askama template (flask-peewee's `object_list`): reads
/// `?page=`, loads the page with the request's connection, builds the template from it and
/// answers 200 with the HTML. A bad `page` is a 400 page, a page past the end is empty.
///
/// ```no_run
/// # use actix_web::{HttpRequest, HttpResponse};
/// # use plover::prelude::*;
/// # use plover::db::DbConn;
/// # use plover::views::{object_list, HtmlError, Page, Query};
/// # diesel::table! { note (id) { id -> Integer, text -> Text } }
/// # #[derive(RestModel)] #[diesel(table_name = note)]
/// # pub struct Note { pub id: i32, pub text: String }
/// #[derive(askama::Template)]
/// #[template(source = "{% for n in page.objects %}<p>{{ n.text }}</p>{% endfor %}\
///     {% if let Some(url) = page.next_url() %}<a href=\"{{ url }}\">Next</a>{% endif %}",
///     ext = "html")]
/// struct Notes {
///     page: Page<Note>,
/// }
///
/// async fn notes(req: HttpRequest, db: DbConn) -> Result<HttpResponse, HtmlError> {
///     let query = Query::<Note>::new().order_by_desc(Note::FIELDS.id).paginate_by(10);
///     object_list(&req, &db, query, |page| Notes { page }).await
/// }
/// ```
pub async fn object_list<M, T>(
    req: &HttpRequest,
    db: &DbConn,
    query: impl Into<PaginatedQuery<M>>,
    template: impl FnOnce(Page<M>) -> T,
) -> Result<HttpResponse, HtmlError>
where
    M: RestModel,
    T: Template,
{
    let page = query.into().get_page(req, db).await?;
    render(&template(page))
}
