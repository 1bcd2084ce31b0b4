//! The demo data set that `cargo run -p microblog` starts with on an empty database.

use std::collections::HashMap;

use plover::db::{Conn, Engine};
use plover::prelude::*;
use plover::views::Query;

use crate::{Message, MessageChanges, Relationship, RelationshipChanges, User, UserChanges};

/// The demo users besides `admin`; each has the password [`DEMO_PASSWORD`].
pub const DEMO_USERS: [&str; 3] = ["alice", "bob", "carol"];

/// The password of the demo users.
pub const DEMO_PASSWORD: &str = "password";

/// Who follows whom.
const FOLLOWS: [(&str, &str); 5] = [
    ("alice", "bob"),
    ("alice", "carol"),
    ("bob", "alice"),
    ("carol", "alice"),
    ("carol", "bob"),
];

/// Author and text of the demo messages, oldest first: one every 6 hours up to now.
const MESSAGES: [(&str, &str); 36] = [
    (
        "admin",
        "Welcome to the Plover microblog! Join, follow people, and post what you are up to.",
    ),
    ("alice", "Hello, world. First post here."),
    ("bob", "Setting up my profile. Who should I follow?"),
    ("carol", "Coffee first, then code."),
    ("alice", "Reading about keyset pagination today."),
    (
        "bob",
        "Rust's borrow checker and I are slowly becoming friends.",
    ),
    ("carol", "Just finished a 10 km run in the rain."),
    (
        "alice",
        "Tip: the REST API lives under /api/ and speaks JSON.",
    ),
    ("bob", "Lunch: ramen. Verdict: excellent."),
    ("carol", "Does anyone else keep a notebook of small ideas?"),
    (
        "alice",
        "Trying out the admin: sorting and filters work nicely.",
    ),
    ("bob", "Deployed on a Friday. Living dangerously."),
    (
        "carol",
        "The plover is a small wading bird, in case you wondered.",
    ),
    ("admin", "Reminder: be kind to each other."),
    ("alice", "Morning walk by the river; the herons were out."),
    ("bob", "Refactoring old code is oddly satisfying."),
    ("carol", "Baked bread for the first time. It is... a brick."),
    (
        "alice",
        "SQLite on my laptop, PostgreSQL in production. Same code.",
    ),
    ("bob", "Weekend plan: nothing at all."),
    ("carol", "Second loaf: much better!"),
    (
        "alice",
        "Finished a good book about birds. Recommendations welcome.",
    ),
    ("bob", "Tea > coffee. Fight me."),
    ("carol", "Learning to juggle. Three balls so far."),
    ("alice", "Bug found, bug fixed, test added."),
    ("bob", "The rain stopped just as I got home."),
    ("carol", "Sketching plovers at the beach this afternoon."),
    ("alice", "Pair programming with bob today, great fun."),
    ("bob", "alice writes the tests, I write the bugs."),
    ("carol", "Four balls! (for about two seconds)"),
    ("alice", "New keyboard. Loud, but I love it."),
    ("bob", "Started a small vegetable garden on the balcony."),
    ("carol", "The sunset from the hill was unreal tonight."),
    (
        "admin",
        "The site got a fresh coat of paint: one small stylesheet, no trackers.",
    ),
    ("alice", "Reading the flask-peewee docs for inspiration."),
    ("bob", "First tomato of the season!"),
    ("carol", "Good night, everyone."),
];

/// Seeds the demo data set if the database has no user yet: `admin` / `admin` (an
/// administrator), [`DEMO_USERS`] with [`DEMO_PASSWORD`], some follows, and 36 messages over
/// the last nine days (two pages of the public timeline). Returns whether it seeded; a
/// database with any user is left alone.
///
/// Everything is written in one transaction. On PostgreSQL an advisory lock keeps processes
/// that start together from seeding twice.
pub fn seed_demo(db: &Database, auth: &Auth<User>) -> Result<bool, plover::Error> {
    fn has_users(conn: &mut Conn<'_>) -> Result<bool, plover::Error> {
        Ok(Query::<User>::new().count(conn)? > 0)
    }
    if db.run_blocking(has_users)? {
        return Ok(false);
    }
    let hash = |raw: &str| {
        auth.make_password(raw)
            .map_err(|e| plover::Error::field("password", e.to_string()))
    };
    let (admin_hash, demo_hash) = (hash("admin")?, hash(DEMO_PASSWORD)?);
    let now = plover::value::now();
    db.run_blocking(|conn| {
        conn.transaction(|conn| {
            if conn.engine() == Engine::Postgres {
                conn.batch_execute("SELECT pg_advisory_xact_lock(7337216);")?;
            }
            if has_users(conn)? {
                return Ok(false);
            }
            let users = std::iter::once(("admin", &admin_hash, true))
                .chain(DEMO_USERS.map(|name| (name, &demo_hash, false)));
            for (days, (name, hash, admin)) in (10..).zip(users) {
                User::insert(
                    conn,
                    UserChanges {
                        username: Some(name.to_owned()),
                        password: Some(hash.clone()),
                        email: Some(format!("{name}@example.com")),
                        join_date: Some(now - chrono::Duration::days(days)),
                        active: Some(true),
                        admin: Some(admin),
                    },
                )?;
            }
            let ids: HashMap<String, i32> = Query::<User>::new()
                .all(conn)?
                .into_iter()
                .map(|u| (u.username, u.id))
                .collect();
            let id = |name: &str| {
                ids.get(name)
                    .copied()
                    .ok_or_else(|| plover::Error::Internal(format!("no demo user {name}")))
            };
            for (from, to) in FOLLOWS {
                let changes = RelationshipChanges {
                    from_user_id: Some(id(from)?),
                    to_user_id: Some(id(to)?),
                };
                Relationship::insert(conn, changes)?;
            }
            for (n, (author, content)) in (1..).zip(MESSAGES) {
                let hours_ago = 6 * (MESSAGES.len() as i64 - n);
                let changes = MessageChanges {
                    user_id: Some(id(author)?),
                    content: Some(content.to_owned()),
                    pub_date: Some(now - chrono::Duration::hours(hours_ago)),
                };
                Message::insert(conn, changes)?;
            }
            Ok(true)
        })
    })
}
