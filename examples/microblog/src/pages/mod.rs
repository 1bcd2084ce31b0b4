//! The example's HTML pages, flask-peewee's example app in Rust: the public timeline, the
//! private timeline of followed users, the user list and profiles with follow and unfollow,
//! posting a message, and joining. Templates are askama's, in `templates/`, extending
//! `base.html`; the stylesheet is served from `/static/style.css`, and the script of the live
//! public timeline from `/static/live.js`.
//!
//! Login and logout are Plover's accounts views (`/accounts/login/`, `/accounts/logout/`).
//! Both go to the accounts component's default next URL, `/` (the homepage, as in
//! flask-peewee), unless a safe `next` says otherwise: a logout lands on a public page, and a
//! `login_required` page sends people back to itself through `next`.
//!
//! Every view answers errors as HTML pages ([`HtmlError`]); every POST form carries the
//! session's CSRF token.

use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpResponse};
use plover::askama::Template;
use plover::views::{render, HtmlError};

mod join;
mod post;
mod timeline;
mod users;

pub use timeline::Timeline;

/// Messages per page on the timelines and profiles, users per page on the user list.
pub const PER_PAGE: i64 = 20;

/// The longest message, in characters.
pub const MAX_MESSAGE_CHARS: usize = 1000;

/// The stylesheet, served by the app (no external downloads).
const STYLE_CSS: &str = include_str!("../../static/style.css");

/// The script of the live public timeline.
const LIVE_JS: &str = include_str!("../../static/live.js");

/// Mounts the pages and the stylesheet.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/", web::get().to(timeline::public))
        .route("/private/", web::get().to(timeline::private))
        .route("/users/", web::get().to(users::list))
        .route("/users/{username}/", web::get().to(users::detail))
        .route("/users/{username}/follow/", web::post().to(users::follow))
        .route(
            "/users/{username}/unfollow/",
            web::post().to(users::unfollow),
        )
        .service(
            web::resource("/post/")
                .route(web::get().to(post::form))
                .route(web::post().to(post::submit)),
        )
        .service(
            web::resource("/join/")
                .route(web::get().to(join::form))
                .route(web::post().to(join::submit)),
        )
        .route("/static/style.css", web::get().to(stylesheet))
        .route("/static/live.js", web::get().to(script));
}

/// `GET /static/style.css`: cacheable for a day.
async fn stylesheet() -> HttpResponse {
    asset("text/css; charset=utf-8", STYLE_CSS)
}

/// `GET /static/live.js`: cacheable for a day.
async fn script() -> HttpResponse {
    asset("text/javascript; charset=utf-8", LIVE_JS)
}

/// A static file of the app, cacheable for a day.
fn asset(content_type: &str, body: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header((header::CACHE_CONTROL, "public, max-age=86400"))
        .body(body)
}

/// The path of a user's profile page, the username percent-encoded as one path segment.
pub fn profile_url(username: &str) -> String {
    match plover::askama::filters::urlencode_strict(username) {
        Ok(name) => format!("/users/{name}/"),
    }
}

/// 303 See Other to `location`: the answer to a POST that worked.
fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, location))
        .finish()
}

/// A page with another status than 200: a form shown again with what was wrong.
fn render_status(status: StatusCode, page: &impl Template) -> Result<HttpResponse, HtmlError> {
    let mut response = render(page)?;
    *response.status_mut() = status;
    Ok(response)
}
