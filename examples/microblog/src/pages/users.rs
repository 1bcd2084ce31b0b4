//! The user list (`/users/`), profiles (`/users/{username}/`), and following
//! (`POST /users/{username}/follow/` and `/unfollow/`).

use actix_web::{web, HttpRequest, HttpResponse};
use plover::accounts::{CsrfToken, LoggedInUser};
use plover::askama::Template;
use plover::db::{Conn, DbConn, Engine};
use plover::model::RestModel;
use plover::query::Op;
use plover::views::{object_list, render, HtmlError, Page, PageAt, Query};
use plover::Error;
use serde::Deserialize;

use super::{profile_url, see_other, Timeline, PER_PAGE};
use crate::{Message, Relationship, RelationshipChanges, User};

/// `templates/users.html`.
#[derive(Template)]
#[template(path = "users.html", askama = plover::askama)]
struct UsersPage {
    me: Option<User>,
    page: Page<User>,
}

/// `GET /users/`: every user by username, 20 a page.
pub async fn list(
    req: HttpRequest,
    me: Option<LoggedInUser<User>>,
    db: DbConn,
) -> Result<HttpResponse, HtmlError> {
    let me = me.map(LoggedInUser::into_inner);
    let query = Query::<User>::new()
        .order_by(User::FIELDS.username)
        .paginate_by(PER_PAGE);
    object_list(&req, &db, query, |page| UsersPage { me, page }).await
}

/// `templates/user.html`.
#[derive(Template)]
#[template(path = "user.html", askama = plover::askama)]
struct ProfilePage {
    me: Option<User>,
    user: User,
    followers: i64,
    following: i64,
    /// Whether the logged-in user follows this one; `None` on one's own profile or when
    /// anonymous (no button).
    follows: Option<bool>,
    csrf_token: String,
    timeline: Timeline,
}

/// `GET /users/{username}/`: the user, their follower counts, a Follow or Unfollow button,
/// and their messages, newest first, 20 a page. 404 for an unknown user.
pub async fn detail(
    req: HttpRequest,
    username: web::Path<String>,
    me: Option<LoggedInUser<User>>,
    csrf: CsrfToken,
    db: DbConn,
) -> Result<HttpResponse, HtmlError> {
    let at = PageAt::of(&req)?;
    let username = username.into_inner();
    let me = me.map(LoggedInUser::into_inner);
    let csrf_token = csrf.value().to_owned();
    let page = db
        .run(move |conn| {
            let user = by_username(conn, username)?;
            let follows = match &me {
                Some(me) if me.id != user.id => Some(relationships(me.id, user.id).exists(conn)?),
                _ => None,
            };
            Ok(ProfilePage {
                followers: Query::<Relationship>::new()
                    .filter(Relationship::FIELDS.to_user_id, Op::Eq, user.id)
                    .count(conn)?,
                following: Query::<Relationship>::new()
                    .filter(Relationship::FIELDS.from_user_id, Op::Eq, user.id)
                    .count(conn)?,
                timeline: Timeline::load(
                    conn,
                    Query::new().filter(Message::FIELDS.user_id, Op::Eq, user.id),
                    at,
                )?,
                me,
                user,
                follows,
                csrf_token,
            })
        })
        .await?;
    render(&page)
}

/// The fields of the follow and unfollow forms.
#[derive(Debug, Deserialize)]
pub struct CsrfForm {
    #[serde(default)]
    csrf_token: Option<String>,
}

/// `POST /users/{username}/follow/` (login required, CSRF-checked): follows the user (once:
/// following again changes nothing), then 303 back to the profile.
pub async fn follow(
    username: web::Path<String>,
    me: LoggedInUser<User>,
    csrf: CsrfToken,
    form: web::Form<CsrfForm>,
    db: DbConn,
) -> Result<HttpResponse, HtmlError> {
    csrf.verify(form.csrf_token.as_deref())?;
    set_following(&db, me.id, username.into_inner(), true).await
}

/// `POST /users/{username}/unfollow/` (login required, CSRF-checked): stops following the
/// user (nothing to do if not following), then 303 back to the profile.
pub async fn unfollow(
    username: web::Path<String>,
    me: LoggedInUser<User>,
    csrf: CsrfToken,
    form: web::Form<CsrfForm>,
    db: DbConn,
) -> Result<HttpResponse, HtmlError> {
    csrf.verify(form.csrf_token.as_deref())?;
    set_following(&db, me.id, username.into_inner(), false).await
}

/// Makes `me` follow `username` or not, in one transaction, and answers 303 to the profile.
///
/// Following oneself is a 400 page, not a silent no-op: the profile never offers the button,
/// so only a hand-made request gets here, and it should learn that nothing happened.
async fn set_following(
    db: &DbConn,
    me: i32,
    username: String,
    follow: bool,
) -> Result<HttpResponse, HtmlError> {
    let location = profile_url(&username);
    db.run(move |conn| {
        let user = by_username(conn, username)?;
        if user.id == me {
            return Err(Error::BadBody(
                "You cannot follow or unfollow yourself.".into(),
            ));
        }
        conn.transaction(|conn| {
            if conn.engine() == Engine::Postgres {
                // Serializes the follows of one user, so that two concurrent clicks cannot
                // both find no row and both insert one (SQLite's write transactions already
                // run one at a time).
                conn.batch_execute(&format!("SELECT pg_advisory_xact_lock(7337218, {me})"))?;
            }
            let existing = relationships(me, user.id);
            if follow && !existing.exists(conn)? {
                let changes = RelationshipChanges {
                    from_user_id: Some(me),
                    to_user_id: Some(user.id),
                };
                Relationship::insert(conn, changes)?;
            } else if !follow {
                existing.delete(conn)?;
            }
            Ok(())
        })
    })
    .await?;
    Ok(see_other(&location))
}

/// The user named `username`, or a 404.
fn by_username(conn: &mut Conn<'_>, username: String) -> Result<User, Error> {
    Query::<User>::new()
        .filter(User::FIELDS.username, Op::Eq, username)
        .get_or_404(conn)
}

/// The rows saying that `from` follows `to` (one at most, unless made by hand).
fn relationships(from: i32, to: i32) -> Query<Relationship> {
    Query::<Relationship>::new()
        .filter(Relationship::FIELDS.from_user_id, Op::Eq, from)
        .filter(Relationship::FIELDS.to_user_id, Op::Eq, to)
}
