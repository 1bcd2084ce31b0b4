//! Posting a message (`GET|POST /post/`, login required).

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use plover::accounts::{CsrfToken, LoggedInUser};
use plover::askama::Template;
use plover::db::DbConn;
use plover::model::save;
use plover::views::{render, HtmlError};
use serde::Deserialize;

use super::{render_status, see_other, MAX_MESSAGE_CHARS};
use crate::{Message, MessageChanges, User};

/// `templates/post.html`: the form, with the text typed so far and what is wrong with it.
#[derive(Template)]
#[template(path = "post.html", askama = plover::askama)]
struct PostPage {
    me: Option<User>,
    csrf_token: String,
    content: String,
    error: Option<&'static str>,
}

/// `GET /post/` (login required): the form.
pub async fn form(me: LoggedInUser<User>, csrf: CsrfToken) -> Result<HttpResponse, HtmlError> {
    render(&PostPage {
        me: Some(me.into_inner()),
        csrf_token: csrf.value().to_owned(),
        content: String::new(),
        error: None,
    })
}

/// The posted form; absent fields are empty.
#[derive(Debug, Deserialize)]
pub struct PostForm {
    #[serde(default)]
    content: String,
    #[serde(default)]
    csrf_token: Option<String>,
}

/// `POST /post/` (login required, CSRF-checked): saves the message as the logged-in user and
/// goes to the homepage (as flask-peewee's example does). Empty or too long: the form again,
/// 400, nothing written.
pub async fn submit(
    me: LoggedInUser<User>,
    csrf: CsrfToken,
    form: web::Form<PostForm>,
    db: DbConn,
) -> Result<HttpResponse, HtmlError> {
    let form = form.into_inner();
    csrf.verify(form.csrf_token.as_deref())?;
    let content = form.content.trim();
    let error = if content.is_empty() {
        Some("Write something first.")
    } else if content.chars().count() > MAX_MESSAGE_CHARS {
        Some("A message may be at most 1,000 characters long.")
    } else {
        None
    };
    if error.is_some() {
        let page = PostPage {
            me: Some(me.into_inner()),
            csrf_token: csrf.value().to_owned(),
            content: form.content,
            error,
        };
        return render_status(StatusCode::BAD_REQUEST, &page);
    }
    let changes = MessageChanges {
        user_id: Some(me.id),
        content: Some(content.to_owned()),
        pub_date: Some(plover::value::now()),
    };
    db.run(move |conn| conn.transaction(|conn| save::<Message>(conn, changes, None)))
        .await?;
    Ok(see_other("/"))
}
