//! Helpers for the application's own views (flask-peewee's `utils`): [`Query`] to load rows by
//! field names, [`get_object_or_404`], pages of a query ([`PaginatedQuery`], [`Page`]) and
//! [`object_list`] to render one with an askama template, and [`HtmlError`] to answer errors
//! as HTML pages.
//!
//! A JSON view returns `Result<_, plover::Error>` and its errors are JSON bodies
//! (docs/contract.md#errors); an HTML view returns `Result<HttpResponse, HtmlError>` and the
//! same errors are HTML pages with the same statuses. [`render`], [`object_list`] and
//! [`HtmlError`] need the `html` feature (on by default); the rest serves REST-only builds too.
//! `docs/views.md` is the chapter on these helpers, with HTML examples.
//!
//! ```no_run
//! # use actix_web::{web, HttpResponse};
//! # use plover::prelude::*;
//! # use plover::db::DbConn;
//! # use plover::views::get_object_or_404;
//! # diesel::table! { note (id) { id -> Integer, text -> Text } }
//! # #[derive(RestModel)] #[diesel(table_name = note)]
//! # pub struct Note { pub id: i32, pub text: String }
//! // GET /notes/{id}.json: the note, or a 404 `{"error": "Not found"}`.
//! async fn note(id: web::Path<i64>, db: DbConn) -> Result<HttpResponse, plover::Error> {
//!     let id = id.into_inner();
//!     let note = db.run(move |conn| get_object_or_404::<Note>(conn, id)).await?;
//!     Ok(HttpResponse::Ok().json(serde_json::json!({"id": note.id, "text": note.text})))
//! }
//! ```

#[cfg(feature = "html")]
mod html;
mod paginate;
mod query;

#[cfg(feature = "html")]
pub use html::{object_list, render, HtmlError};
pub use paginate::{Page, PageAt, PaginatedQuery, PAGINATE_BY};
pub use query::Query;

use crate::db::Conn;
use crate::error::Error;
use crate::model::RestModel;

/// The row of `M` with primary key `pk`, or [`Error::NotFound`] (a 404: a JSON body from a
/// JSON view, a page from an HTML view through [`HtmlError`]). To load by a filter instead,
/// use [`Query::get_or_404`].
pub fn get_object_or_404<M: RestModel>(conn: &mut Conn<'_>, pk: i64) -> Result<M, Error> {
    M::load_pk(conn, pk)?.ok_or(Error::NotFound)
}
