//! Application views built on `plover::views`, under `/views`, for the utilities' tests.

use actix_web::{web, HttpRequest, HttpResponse};
use plover::db::DbConn;
use plover::prelude::*;
use plover::query::Op;
use plover::views::{get_object_or_404, object_list, render, HtmlError, Page, Query};

use crate::{Message, User};

/// One message as a page.
#[derive(askama::Template)]
#[template(
    source = "<h1>Message {{ m.id }}</h1><p>{{ m.content }}</p>",
    ext = "html"
)]
struct MessagePage {
    m: Message,
}

/// A page of messages, with the links a template builds from a `Page`.
#[derive(askama::Template)]
#[template(
    source = "<p id=\"count\">{{ page.count }} messages, page {{ page.number }} of {{ page.pages }}</p>\
<ul>{% for m in page.objects %}<li data-id=\"{{ m.id }}\">{{ m.content }}</li>{% endfor %}</ul>\
{% if let Some(url) = page.previous_url() %}<a rel=\"prev\" href=\"{{ url }}\">Previous</a>{% endif %}\
{% if let Some(url) = page.next_url() %}<a rel=\"next\" href=\"{{ url }}\">Next</a>{% endif %}",
    ext = "html"
)]
struct MessageList {
    page: Page<Message>,
}

/// `GET /views/message/{id}/`: an HTML view.
async fn message_page(id: web::Path<i64>, db: DbConn) -> Result<HttpResponse, HtmlError> {
    let id = id.into_inner();
    let m = db
        .run(move |conn| get_object_or_404::<Message>(conn, id))
        .await?;
    render(&MessagePage { m })
}

/// `GET /views/message/{id}.json`: a JSON view.
async fn message_json(id: web::Path<i64>, db: DbConn) -> Result<HttpResponse, Error> {
    let id = id.into_inner();
    let m = db
        .run(move |conn| get_object_or_404::<Message>(conn, id))
        .await?;
    Ok(HttpResponse::Ok().json(serde_json::json!({ "id": m.id, "content": m.content })))
}

/// `GET /views/by/{username}/latest/`: the newest message of a user, found by a filter.
async fn latest_by(name: web::Path<String>, db: DbConn) -> Result<HttpResponse, HtmlError> {
    let name = name.into_inner();
    let m = db
        .run(move |conn| {
            Query::<Message>::new()
                .filter(
                    Message::FIELDS.user_id.join(User::FIELDS.username),
                    Op::Eq,
                    name,
                )
                .order_by_desc(Message::FIELDS.pub_date)
                .get_or_404(conn)
        })
        .await?;
    render(&MessagePage { m })
}

/// `GET /views/messages/?page=&user=`: messages by id, 3 a page, optionally of one user.
async fn messages(req: HttpRequest, db: DbConn) -> Result<HttpResponse, HtmlError> {
    let mut query = Query::<Message>::new();
    let user = form_urlencoded::parse(req.query_string().as_bytes()).find(|(k, _)| k == "user");
    if let Some((_, user)) = user {
        let id: i64 = user
            .parse()
            .map_err(|_| Error::param("user", "expected an id"))?;
        query = query.filter(Message::FIELDS.user_id, Op::Eq, id);
    }
    object_list(&req, &db, query.paginate_by(3), |page| MessageList { page }).await
}

/// `GET /views/messages.json?page=`: the same pages as JSON (20 a page, the default).
async fn messages_json(req: HttpRequest, db: DbConn) -> Result<HttpResponse, Error> {
    let page = plover::views::PaginatedQuery::from(
        Query::<Message>::new().order_by_desc(Message::FIELDS.id),
    )
    .get_page(&req, &db)
    .await?;
    let ids: Vec<i32> = page.objects.iter().map(|m| m.id).collect();
    Ok(HttpResponse::Ok().json(serde_json::json!({
        "ids": ids,
        "count": page.count,
        "pages": page.pages,
        "next": page.next_url(),
        "previous": page.previous_url(),
    })))
}

/// A view with a query that joins through a field that is not a foreign key: a programming
/// error.
async fn broken(db: DbConn) -> Result<HttpResponse, HtmlError> {
    let path = Message::FIELDS.content.join(User::FIELDS.username);
    let n = db
        .run(move |conn| {
            Query::<Message>::new()
                .filter(path, Op::Eq, "x")
                .count(conn)
        })
        .await?;
    Ok(HttpResponse::Ok().body(n.to_string()))
}

/// Mounts the views under `/views`, with `db` as the request connection's pool.
pub fn routes(db: Database) -> impl Fn(&mut web::ServiceConfig) {
    move |cfg| {
        cfg.service(
            web::scope("/views")
                .app_data(web::Data::new(db.clone()))
                .route("/message/{id}/", web::get().to(message_page))
                .route("/message/{id}.json", web::get().to(message_json))
                .route("/by/{username}/latest/", web::get().to(latest_by))
                .route("/messages/", web::get().to(messages))
                .route("/messages.json", web::get().to(messages_json))
                .route("/broken/", web::get().to(broken)),
        );
    }
}
