//! The example's HTML pages: a homepage with the newest messages and a `login_required` page
//! to post one. Login and logout are Plover's accounts views (`/accounts/login/`).

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use plover::prelude::*;
use plover::query::Select;
use serde::Deserialize;

use crate::{Message, MessageChanges, User};

/// HTML-escapes text.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page frame: title, navigation for `user`, content.
fn layout(title: &str, user: Option<&User>, content: &str) -> HttpResponse {
    let nav =
        match user {
            Some(u) => format!(
            "<span>Logged in as <strong>{}</strong></span> <a href=\"/post/\">Post a message</a> \
             {}<a href=\"/accounts/logout/\">Log out</a>",
            escape(&u.username),
            if u.admin { "<a href=\"/admin/\">Admin</a> " } else { "" }
        ),
            None => "<a href=\"/accounts/login/\">Log in</a>".into(),
        };
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(format!(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{title} - Plover microblog</title><style>{CSS}</style></head><body>\
             <header><a class=\"brand\" href=\"/\">Plover microblog</a><nav>{nav}</nav></header>\
             <main><h1>{title}</h1>{content}</main></body></html>"
        ))
}

const CSS: &str = "body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1d2939;background:#f9fafb}\
header{display:flex;justify-content:space-between;align-items:center;padding:.75rem 1.5rem;\
background:#fff;border-bottom:1px solid #eaecf0}header nav{display:flex;gap:1rem;align-items:center}\
a{color:#2563eb}.brand{font-weight:700;text-decoration:none;color:#1d2939}\
main{max-width:40rem;margin:2rem auto;padding:0 1rem}ul{list-style:none;padding:0}\
li{background:#fff;border:1px solid #eaecf0;border-radius:10px;padding:.75rem 1rem;margin:0 0 .75rem}\
.meta{color:#667085;font-size:.85rem}textarea{width:100%;min-height:6rem;font:inherit;padding:.5rem;\
border:1px solid #d0d5dd;border-radius:8px;box-sizing:border-box}button{margin-top:.75rem;padding:.5rem 1.25rem;\
font:inherit;font-weight:600;color:#fff;background:#2563eb;border:0;border-radius:8px}\
.error{color:#b42318}";

/// `GET /`: the ten newest messages.
pub async fn home(
    user: Option<LoggedInUser<User>>,
    db: web::Data<Database>,
) -> Result<HttpResponse, Error> {
    let newest = Select {
        order: vec![(
            Message::meta().field("pub_date").map_or(0, |(i, _)| i),
            true,
        )],
        limit: Some(10),
        ..Select::default()
    };
    let messages = db.run(move |conn| Message::load(conn, &newest)).await?;
    let mut items = String::new();
    for m in &messages {
        items.push_str(&format!(
            "<li><p>{}</p><p class=\"meta\">user {} &middot; {}</p></li>",
            escape(&m.content),
            m.user_id,
            m.pub_date.format("%Y-%m-%d %H:%M")
        ));
    }
    let content = format!(
        "<p>The REST API is at <a href=\"/api/message/\">/api/</a>.</p>\
         <h2>Newest messages</h2><ul>{items}</ul>"
    );
    Ok(layout("Home", user.as_deref(), &content))
}

/// The message form, with an error and the text typed so far.
fn post_page(user: &User, csrf: &CsrfToken, content: &str, error: Option<&str>) -> HttpResponse {
    let error = error.map_or(String::new(), |e| {
        format!("<p class=\"error\" role=\"alert\">{}</p>", escape(e))
    });
    let form = format!(
        "{error}<form method=\"post\" action=\"/post/\">\
         <input type=\"hidden\" name=\"csrf_token\" value=\"{}\">\
         <label for=\"content\">Message</label>\
         <textarea id=\"content\" name=\"content\" required>{}</textarea>\
         <button type=\"submit\">Post</button></form>",
        escape(csrf.value()),
        escape(content)
    );
    layout("Post a message", Some(user), &form)
}

/// `GET /post/` (login required): the form.
pub async fn post_form(user: LoggedInUser<User>, csrf: CsrfToken) -> HttpResponse {
    post_page(&user, &csrf, "", None)
}

/// The posted form.
#[derive(Debug, Deserialize)]
pub struct PostForm {
    #[serde(default)]
    content: String,
    #[serde(default)]
    csrf_token: Option<String>,
}

/// `POST /post/` (login required): saves the message as the logged-in user, then shows the
/// homepage.
pub async fn post_submit(
    user: LoggedInUser<User>,
    csrf: CsrfToken,
    form: web::Form<PostForm>,
    db: web::Data<Database>,
) -> Result<HttpResponse, Error> {
    let form = form.into_inner();
    csrf.verify(form.csrf_token.as_deref())?;
    let content = form.content.trim().to_owned();
    if content.is_empty() {
        return Ok(post_page(
            &user,
            &csrf,
            &form.content,
            Some("Write something first."),
        ));
    }
    let changes = MessageChanges {
        user_id: Some(user.id),
        content: Some(content),
        pub_date: Some(plover::value::now()),
    };
    db.run(move |conn| conn.transaction(|conn| Message::insert(conn, changes)))
        .await?;
    Ok(HttpResponse::SeeOther()
        .insert_header((header::LOCATION, "/"))
        .finish())
}

/// Mounts the pages.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/", web::get().to(home)).service(
        web::resource("/post/")
            .route(web::get().to(post_form))
            .route(web::post().to(post_submit)),
    );
}
