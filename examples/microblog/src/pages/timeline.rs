//! The public timeline (`/`; its first page shows new messages live) and the private one
//! (`/private/`: the people the user follows).

use std::collections::HashMap;

use actix_web::{HttpRequest, HttpResponse};
use plover::accounts::LoggedInUser;
use plover::askama::Template;
use plover::db::{Conn, DbConn};
use plover::query::Op;
use plover::views::{render, HtmlError, Page, PageAt, Query};
use plover::Error;

use super::PER_PAGE;
use crate::{Message, Relationship, User};

/// A page of messages, newest first, with their authors' usernames.
#[derive(Debug)]
pub struct Timeline {
    /// The messages of this page, and the links to the others.
    pub page: Page<Message>,
    /// Username by user id, for the authors of this page.
    authors: HashMap<i32, String>,
}

impl Timeline {
    /// Loads page `at` of the messages `query` selects, newest first, and their authors.
    pub fn load(conn: &mut Conn<'_>, query: Query<Message>, at: PageAt) -> Result<Timeline, Error> {
        let page = query
            .order_by_desc(Message::FIELDS.pub_date)
            .order_by_desc(Message::FIELDS.id)
            .paginate_by(PER_PAGE)
            .load(conn, at)?;
        let mut ids: Vec<i32> = page.objects.iter().map(|m| m.user_id).collect();
        ids.sort_unstable();
        ids.dedup();
        let authors = if ids.is_empty() {
            Vec::new()
        } else {
            Query::<User>::new()
                .filter_any(User::FIELDS.id, Op::In, ids)
                .all(conn)?
        };
        Ok(Timeline {
            page,
            authors: authors.into_iter().map(|u| (u.id, u.username)).collect(),
        })
    }

    /// The username of a message's author.
    pub fn author(&self, message: &Message) -> &str {
        self.authors
            .get(&message.user_id)
            .map_or("", String::as_str)
    }
}

/// `templates/timeline.html`: either timeline.
#[derive(Template)]
#[template(path = "timeline.html", askama = plover::askama)]
struct TimelinePage {
    me: Option<User>,
    /// The private timeline (else the public one).
    private: bool,
    /// How many people the user follows (private timeline).
    following: usize,
    timeline: Timeline,
    /// The change feed the page follows live (the public timeline's first page), from the
    /// position read with the page.
    feed: Option<String>,
}

/// `GET /`: every message, newest first, 20 a page.
pub async fn public(
    req: HttpRequest,
    me: Option<LoggedInUser<User>>,
    db: DbConn,
) -> Result<HttpResponse, HtmlError> {
    let at = PageAt::of(&req)?;
    // The page and the feed's position in one snapshot: the feed brings every message the
    // page does not show.
    let (timeline, after) = db
        .run(move |conn| {
            conn.snapshot(|conn| {
                let timeline = Timeline::load(conn, Query::new(), at)?;
                Ok((timeline, plover::changes::cursor(conn)?))
            })
        })
        .await?;
    let feed = (timeline.page.number == 1).then(|| format!("/api/message/changes/?after={after}"));
    render(&TimelinePage {
        me: me.map(LoggedInUser::into_inner),
        private: false,
        following: 0,
        timeline,
        feed,
    })
}

/// `GET /private/` (login required): the messages of the people the user follows, newest
/// first, 20 a page.
pub async fn private(
    req: HttpRequest,
    me: LoggedInUser<User>,
    db: DbConn,
) -> Result<HttpResponse, HtmlError> {
    let at = PageAt::of(&req)?;
    let me = me.into_inner();
    let my_id = me.id;
    let (following, timeline) = db
        .run(move |conn| {
            let mut followed: Vec<i32> = Query::<Relationship>::new()
                .filter(Relationship::FIELDS.from_user_id, Op::Eq, my_id)
                .all(conn)?
                .into_iter()
                .map(|r| r.to_user_id)
                .collect();
            followed.sort_unstable();
            followed.dedup();
            let author = Message::FIELDS.user_id;
            let query = Query::new().filter_any(author, Op::In, followed.iter().copied());
            Ok((followed.len(), Timeline::load(conn, query, at)?))
        })
        .await?;
    render(&TimelinePage {
        me: Some(me),
        private: true,
        following,
        timeline,
        feed: None,
    })
}
