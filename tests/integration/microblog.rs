//! The microblog example as a web application: joining, posting, following, the timelines,
//! profiles, escaping and the demo data set, through `microblog::routes` (the pages, the
//! accounts views, the API and the admin) over a fresh database per test.

use actix_web::App;
use microblog::{
    create_tables, seed_demo, Message, MessageChanges, Relationship, RelationshipChanges, User,
    UserChanges,
};
use plover::prelude::*;
use plover::query::Op;
use plover::views::Query;
use plover_tests::{
    datetime, fresh_database, input_value, link, unescape_html, Browser, Store, TestService,
};

/// The microblog over its own database (SQLite, or PostgreSQL with `PLOVER_TEST_PG_URL`).
struct Blog {
    service: TestService,
    db: Database,
    auth: Auth<User>,
    _store: Store,
}

impl Blog {
    async fn new() -> Blog {
        let (db, store) = fresh_database("");
        db.run_blocking(create_tables).expect("tables");
        let auth = Auth::<User>::new(db.clone()).cost(4);
        let routes = microblog::routes(&db, &auth);
        let service =
            TestService::new(App::new().wrap(auth.session_middleware()).configure(routes)).await;
        Blog {
            service,
            db,
            auth,
            _store: store,
        }
    }

    fn browser(&self) -> Browser<'_> {
        self.service.browser()
    }

    /// A client logged in as `username` (password `pw`).
    async fn logged_in(&self, username: &str) -> Browser<'_> {
        let browser = self.browser();
        browser.login(username, "pw").await.expect(302);
        browser
    }

    /// Creates a user with the password `pw`; returns its id.
    fn user(&self, username: &str) -> i32 {
        let hash = self.auth.make_password("pw").expect("a hash");
        let changes = UserChanges {
            username: Some(username.to_owned()),
            password: Some(hash),
            email: Some(format!("{username}@example.com")),
            join_date: Some(datetime("2024-01-01 00:00:00")),
            active: Some(true),
            admin: Some(false),
        };
        let id = self
            .db
            .run_blocking(|conn| User::insert(conn, changes))
            .expect("a user");
        i32::try_from(id).expect("a 32-bit id")
    }

    /// Posts `content` as `user` on day `day` of 2024 (at `day` minutes past noon, so that
    /// the order of a day's messages is their order of creation); returns its id.
    fn message(&self, user: i32, content: &str, day: u32) -> i64 {
        let date = datetime("2024-01-01 12:00:00")
            + chrono::Duration::days(i64::from(day))
            + chrono::Duration::minutes(i64::from(day));
        let changes = MessageChanges {
            user_id: Some(user),
            content: Some(content.to_owned()),
            pub_date: Some(date),
        };
        self.db
            .run_blocking(|conn| Message::insert(conn, changes))
            .expect("a message")
    }

    fn follow(&self, from: i32, to: i32) {
        let changes = RelationshipChanges {
            from_user_id: Some(from),
            to_user_id: Some(to),
        };
        self.db
            .run_blocking(|conn| Relationship::insert(conn, changes))
            .expect("a relationship");
    }

    fn find_user(&self, username: &str) -> Option<User> {
        let query = Query::<User>::new().filter(User::FIELDS.username, Op::Eq, username);
        self.db
            .run_blocking(|conn| query.first(conn))
            .expect("a query")
    }

    fn all<M: RestModel>(&self) -> Vec<M> {
        self.db
            .run_blocking(|conn| Query::<M>::new().all(conn))
            .expect("a query")
    }

    fn count<M: RestModel>(&self) -> usize {
        self.all::<M>().len()
    }

    /// `(from, to)` of every relationship.
    fn follows(&self) -> Vec<(i32, i32)> {
        self.all::<Relationship>()
            .iter()
            .map(|r| (r.from_user_id, r.to_user_id))
            .collect()
    }
}

/// The ids of the messages listed on a page, in order.
fn listed(html: &str) -> Vec<i64> {
    html.split("class=\"card message\" data-id=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next()?.parse().ok())
        .collect()
}

/// Asserts an HTML page with this status; returns its text.
#[track_caller]
fn html_page(resp: &plover_tests::Resp, status: u16) -> String {
    resp.expect(status);
    assert_eq!(
        resp.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    resp.text()
}

/// The join form's fields, with a CSRF token.
fn join_fields<'a>(
    token: &'a str,
    username: &'a str,
    email: &'a str,
    password: &'a str,
    password2: &'a str,
) -> [(&'static str, &'a str); 5] {
    [
        ("csrf_token", token),
        ("username", username),
        ("email", email),
        ("password", password),
        ("password2", password2),
    ]
}

#[actix_web::test]
async fn join_stores_a_hash_and_logs_the_new_user_in() {
    let blog = Blog::new().await;
    let browser = blog.browser();
    let html = html_page(&browser.get("/join/").await, 200);
    for field in ["username", "email", "password", "password2"] {
        assert!(html.contains(&format!("<label for=\"{field}\">")), "{html}");
    }
    let token = browser.csrf("/join/").await;
    let name = "Dora_the-explorer.2024_abcdefg"; // 30 characters, every allowed kind
    let resp = browser
        .post_form(
            "/join/",
            &join_fields(&token, name, " dora@example.com ", "s3cret pw", "s3cret pw"),
        )
        .await;
    resp.expect(303);
    assert_eq!(resp.header("location"), Some("/"));

    let dora = blog.find_user(name).expect("the new user");
    assert_ne!(dora.password, "s3cret pw");
    assert!(dora.password.starts_with("$2"), "a bcrypt hash");
    assert!(check_password("s3cret pw", &dora.password));
    assert_eq!(dora.email, "dora@example.com");
    assert!(dora.active && !dora.admin);

    // Logged in from now on.
    let home = html_page(&browser.get("/").await, 200);
    assert!(home.contains(&format!(
        "Logged in as <a href=\"/users/{name}/\">{name}</a>"
    )));
    browser.get("/private/").await.expect(200);
    // A logged-in user has nothing to do on the join page.
    let again = browser.get("/join/").await;
    again.expect(303);
    assert_eq!(again.header("location"), Some("/"));
    let token = browser.csrf("/post/").await;
    let resp = browser
        .post_form(
            "/join/",
            &join_fields(&token, "other", "o@example.com", "pw", "pw"),
        )
        .await;
    resp.expect(303);
    assert_eq!(blog.count::<User>(), 1);
}

#[actix_web::test]
async fn join_validates_every_field_keeps_the_values_and_never_echoes_the_password() {
    let blog = Blog::new().await;
    let browser = blog.browser();
    let token = browser.csrf("/join/").await;
    let long_name = "a".repeat(31);
    let long_password = "p".repeat(73);
    let ok = "good-password";
    // (username, email, password, password again, field, message)
    let cases: [(&str, &str, &str, &str, &str, &str); 10] = [
        (
            "",
            "a@example.com",
            ok,
            ok,
            "username",
            "Choose a username.",
        ),
        (
            "   ",
            "a@example.com",
            ok,
            ok,
            "username",
            "Choose a username.",
        ),
        (
            &long_name,
            "a@example.com",
            ok,
            ok,
            "username",
            "at most 30 characters",
        ),
        (
            "bad name",
            "a@example.com",
            ok,
            ok,
            "username",
            "only letters, digits",
        ),
        (
            "<b>x</b>",
            "a@example.com",
            ok,
            ok,
            "username",
            "only letters, digits",
        ),
        ("zoe", "", ok, ok, "email", "Enter your e-mail address."),
        (
            "zoe",
            "zoe.example.com",
            ok,
            ok,
            "email",
            "does not look like an e-mail",
        ),
        (
            "zoe",
            "a@example.com",
            "",
            "",
            "password",
            "Choose a password.",
        ),
        (
            "zoe",
            "a@example.com",
            &long_password,
            &long_password,
            "password",
            "at most 72 bytes",
        ),
        (
            "zoe",
            "a@example.com",
            ok,
            "good-passw0rd",
            "password2",
            "The two passwords differ.",
        ),
    ];
    for (username, email, password, password2, field, message) in cases {
        let resp = browser
            .post_form(
                "/join/",
                &join_fields(&token, username, email, password, password2),
            )
            .await;
        let html = html_page(&resp, 400);
        let error = format!("<p class=\"field-error\" id=\"{field}-error\">");
        let at = html
            .find(&error)
            .unwrap_or_else(|| panic!("{field}: {html}"));
        assert!(
            unescape_html(&html[at..]).contains(message),
            "{field}: {message}: {html}"
        );
        assert_eq!(html.matches("class=\"field-error\"").count(), 1, "{html}");
        assert!(html.contains("Please correct the errors below."));
        // The values are kept (trimmed), escaped; the passwords are not.
        assert_eq!(
            input_value(&html, "username").as_deref(),
            Some(username.trim())
        );
        assert_eq!(input_value(&html, "email").as_deref(), Some(email.trim()));
        assert!(!html.contains("<b>x</b>"), "escaped: {html}");
        if !password.is_empty() {
            assert!(!html.contains(password), "the password is not echoed");
            assert!(!html.contains(password2), "the password is not echoed");
        }
        assert_eq!(blog.count::<User>(), 0, "nothing written: {field}");
    }
}

#[actix_web::test]
async fn join_with_a_taken_username_is_409_and_writes_nothing() {
    let blog = Blog::new().await;
    blog.user("alice");
    let hash = blog.find_user("alice").expect("alice").password;
    let browser = blog.browser();
    let token = browser.csrf("/join/").await;
    for name in ["alice", "  alice "] {
        let resp = browser
            .post_form(
                "/join/",
                &join_fields(
                    &token,
                    name,
                    "new@example.com",
                    "s3cr3t-taken",
                    "s3cr3t-taken",
                ),
            )
            .await;
        let html = html_page(&resp, 409);
        assert!(
            html.contains("id=\"username-error\">This username is taken"),
            "{html}"
        );
        assert_eq!(input_value(&html, "username").as_deref(), Some("alice"));
        assert_eq!(
            input_value(&html, "email").as_deref(),
            Some("new@example.com")
        );
        assert!(!html.contains("s3cr3t-taken"));
    }
    assert_eq!(blog.count::<User>(), 1);
    let alice = blog.find_user("alice").expect("alice");
    assert_eq!(alice.password, hash, "unchanged");
    assert_eq!(alice.email, "alice@example.com");
    assert!(
        browser.get("/private/").await.code() == 302,
        "not logged in"
    );
}

#[actix_web::test]
async fn join_checks_the_csrf_token() {
    let blog = Blog::new().await;
    let browser = blog.browser();
    browser.get("/join/").await.expect(200);
    for token in ["", "forged"] {
        let resp = browser
            .post_form(
                "/join/",
                &join_fields(token, "zoe", "z@example.com", "pw", "pw"),
            )
            .await;
        html_page(&resp, 403);
    }
    let resp = browser
        .post_form(
            "/join/",
            &[
                ("username", "zoe"),
                ("email", "z@example.com"),
                ("password", "pw"),
                ("password2", "pw"),
            ],
        )
        .await;
    html_page(&resp, 403);
    assert_eq!(blog.count::<User>(), 0);
}

#[actix_web::test]
async fn posting_needs_a_login_a_csrf_token_and_some_text() {
    let blog = Blog::new().await;
    let alice = blog.user("alice");

    // login_required: to the login form, with `next`.
    let anonymous = blog.browser();
    for resp in [
        anonymous.get("/post/").await,
        anonymous
            .post_form("/post/", &[("content", "hi"), ("csrf_token", "x")])
            .await,
    ] {
        resp.expect(302);
        assert_eq!(
            resp.header("location"),
            Some("/accounts/login/?next=%2Fpost%2F")
        );
    }

    let browser = blog.logged_in("alice").await;
    let form = html_page(&browser.get("/post/").await, 200);
    assert!(
        form.contains("<textarea id=\"content\" name=\"content\""),
        "{form}"
    );
    let token = browser.csrf("/post/").await;

    // No token, or a wrong one: 403, nothing written.
    html_page(
        &browser.post_form("/post/", &[("content", "hi")]).await,
        403,
    );
    html_page(
        &browser
            .post_form("/post/", &[("content", "hi"), ("csrf_token", "nope")])
            .await,
        403,
    );
    // Empty, blank, too long: the form again, 400, the text kept.
    let too_long = "x".repeat(1001);
    for (content, message) in [
        ("", "Write something first."),
        (" \n\t ", "Write something first."),
        (too_long.as_str(), "at most 1,000 characters"),
    ] {
        let resp = browser
            .post_form("/post/", &[("content", content), ("csrf_token", &token)])
            .await;
        let html = html_page(&resp, 400);
        assert!(html.contains(message), "{html}");
        assert!(
            html.contains(&format!(
                "required autofocus aria-invalid=\"true\">{content}</textarea>"
            )),
            "{html}"
        );
    }
    assert_eq!(blog.count::<Message>(), 0);

    // 1,000 characters (of two bytes each) fit; the text is trimmed.
    let longest = "é".repeat(1000);
    for content in ["  Hello <world>  ", longest.as_str()] {
        let resp = browser
            .post_form("/post/", &[("content", content), ("csrf_token", &token)])
            .await;
        resp.expect(303);
        assert_eq!(resp.header("location"), Some("/"));
    }
    let messages = blog.all::<Message>();
    let contents: Vec<&str> = messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(contents, ["Hello <world>", longest.as_str()]);
    assert!(messages.iter().all(|m| m.user_id == alice));
}

#[actix_web::test]
async fn follow_and_unfollow_check_the_csrf_token_and_are_idempotent() {
    let blog = Blog::new().await;
    let alice = blog.user("alice");
    let bob = blog.user("bob");

    // Anonymous: no button, and the POST asks for a login.
    let anonymous = blog.browser();
    let html = html_page(&anonymous.get("/users/bob/").await, 200);
    assert!(!html.contains("/follow/"), "{html}");
    let resp = anonymous.post_form("/users/bob/follow/", &[]).await;
    resp.expect(302);
    assert_eq!(
        resp.header("location"),
        Some("/accounts/login/?next=%2Fusers%2Fbob%2Ffollow%2F")
    );

    let browser = blog.logged_in("alice").await;
    let html = html_page(&browser.get("/users/bob/").await, 200);
    assert!(
        html.contains("<form method=\"post\" action=\"/users/bob/follow/\">"),
        "{html}"
    );
    assert!(html.contains("<span id=\"followers\"><strong>0</strong> followers</span>"));
    let token = input_value(&html, "csrf_token").expect("a token");

    for path in ["/users/bob/follow/", "/users/bob/unfollow/"] {
        html_page(&browser.post_form(path, &[]).await, 403);
        html_page(
            &browser.post_form(path, &[("csrf_token", "forged")]).await,
            403,
        );
    }
    assert_eq!(blog.follows(), []);

    for _ in 0..2 {
        let resp = browser
            .post_form("/users/bob/follow/", &[("csrf_token", &token)])
            .await;
        resp.expect(303);
        assert_eq!(resp.header("location"), Some("/users/bob/"));
        assert_eq!(blog.follows(), [(alice, bob)], "followed once");
    }
    let html = html_page(&browser.get("/users/bob/").await, 200);
    assert!(html.contains("action=\"/users/bob/unfollow/\""), "{html}");
    assert!(html.contains("<span id=\"followers\"><strong>1</strong> follower</span>"));
    let mine = html_page(&browser.get("/users/alice/").await, 200);
    assert!(mine.contains("<span id=\"following\"><strong>1</strong> following</span>"));

    for _ in 0..2 {
        let resp = browser
            .post_form("/users/bob/unfollow/", &[("csrf_token", &token)])
            .await;
        resp.expect(303);
        assert_eq!(resp.header("location"), Some("/users/bob/"));
        assert_eq!(blog.follows(), []);
    }

    // An unknown user: 404 pages.
    for path in ["/users/nobody/follow/", "/users/nobody/unfollow/"] {
        let html = html_page(
            &browser.post_form(path, &[("csrf_token", &token)]).await,
            404,
        );
        assert!(html.contains("Not Found"), "{html}");
    }
}

#[actix_web::test]
async fn following_yourself_is_a_400_and_changes_nothing() {
    let blog = Blog::new().await;
    blog.user("alice");
    let browser = blog.logged_in("alice").await;
    let html = html_page(&browser.get("/users/alice/").await, 200);
    assert!(!html.contains("/follow/"), "no button on one's own profile");
    let token = browser.csrf("/post/").await;
    for path in ["/users/alice/follow/", "/users/alice/unfollow/"] {
        let resp = browser.post_form(path, &[("csrf_token", &token)]).await;
        let html = html_page(&resp, 400);
        assert!(
            html.contains("You cannot follow or unfollow yourself."),
            "{html}"
        );
    }
    assert_eq!(blog.follows(), []);
}

#[actix_web::test]
async fn the_private_timeline_shows_exactly_the_followed_users_messages_newest_first() {
    let blog = Blog::new().await;
    let resp = blog.browser().get("/private/").await;
    resp.expect(302);
    assert_eq!(
        resp.header("location"),
        Some("/accounts/login/?next=%2Fprivate%2F")
    );

    let [alice, bob, carol, dave] = ["alice", "bob", "carol", "dave"].map(|u| blog.user(u));
    let b1 = blog.message(bob, "bob 1", 1);
    let d2 = blog.message(dave, "dave 2", 2);
    let c3 = blog.message(carol, "carol 3", 3);
    let b4 = blog.message(bob, "bob 4", 4);
    let a5 = blog.message(alice, "alice 5", 5);
    let browser = blog.logged_in("alice").await;

    // Following nobody: an empty page that says where to find people.
    let html = html_page(&browser.get("/private/").await, 200);
    assert_eq!(listed(&html), Vec::<i64>::new());
    assert!(html.contains("You follow nobody yet"), "{html}");
    assert!(html.contains("<a href=\"/users/\">user list</a>"), "{html}");

    let token = browser.csrf("/post/").await;
    for name in ["bob", "carol"] {
        browser
            .post_form(&format!("/users/{name}/follow/"), &[("csrf_token", &token)])
            .await
            .expect(303);
    }
    let html = html_page(&browser.get("/private/").await, 200);
    assert_eq!(listed(&html), [b4, c3, b1]);
    assert!(!html.contains("You follow nobody yet"));
    assert!(
        html.contains("<a class=\"author\" href=\"/users/carol/\">"),
        "{html}"
    );

    // Someone else's follows are not alice's.
    blog.follow(dave, alice);
    blog.follow(carol, dave);
    let html = html_page(&browser.get("/private/").await, 200);
    assert_eq!(listed(&html), [b4, c3, b1]);
    // The public timeline has everything.
    let html = html_page(&browser.get("/").await, 200);
    assert_eq!(listed(&html), [a5, b4, c3, d2, b1]);

    // Unfollowing bob leaves carol.
    browser
        .post_form("/users/bob/unfollow/", &[("csrf_token", &token)])
        .await
        .expect(303);
    let html = html_page(&browser.get("/private/").await, 200);
    assert_eq!(listed(&html), [c3]);
}

#[actix_web::test]
async fn profiles_show_the_user_their_counts_and_messages_or_404() {
    let blog = Blog::new().await;
    let [alice, bob, carol] = ["alice", "bob", "carol"].map(|u| blog.user(u));
    let b1 = blog.message(bob, "bob 1", 1);
    blog.message(alice, "alice 2", 2);
    let b3 = blog.message(bob, "bob 3", 3);
    blog.follow(alice, bob);
    blog.follow(carol, bob);
    blog.follow(bob, carol);

    let html = html_page(&blog.browser().get("/users/bob/").await, 200);
    assert!(html.contains("<h1>bob</h1>"), "{html}");
    assert!(html.contains("Joined January 1, 2024"), "{html}");
    assert!(html.contains("<span id=\"followers\"><strong>2</strong> followers</span>"));
    assert!(html.contains("<span id=\"following\"><strong>1</strong> following</span>"));
    assert_eq!(listed(&html), [b3, b1]);

    for missing in ["/users/nobody/", "/users/bob2/", "/users/%3Cx%3E/"] {
        let html = html_page(&blog.browser().get(missing).await, 404);
        assert!(html.contains("<h1>Not Found</h1>"), "{html}");
    }

    // The user list: by username, each linking to the profile.
    let html = html_page(&blog.browser().get("/users/").await, 200);
    let at = |name: &str| {
        html.find(&format!("href=\"/users/{name}/\""))
            .unwrap_or_else(|| panic!("{name}: {html}"))
    };
    assert!(at("alice") < at("bob") && at("bob") < at("carol"));
    assert!(html.contains("3 people have joined."), "{html}");
}

#[actix_web::test]
async fn the_public_timeline_pages_newest_first_and_refuses_bad_pages() {
    let blog = Blog::new().await;
    let bob = blog.user("bob");
    let ids: Vec<i64> = (1..=45)
        .map(|n| blog.message(bob, &format!("message {n}"), n))
        .collect();
    let newest: Vec<i64> = ids.iter().rev().copied().collect();
    let browser = blog.browser();

    let html = html_page(&browser.get("/").await, 200);
    assert_eq!(listed(&html), newest[..20]);
    assert!(html.contains("page 1 of 3"), "{html}");
    assert_eq!(link(&html, "prev"), None);
    assert_eq!(link(&html, "next").as_deref(), Some("/?page=2"));

    // Other parameters are kept in the links.
    let html = html_page(&browser.get("/?page=2&lang=en%20GB").await, 200);
    assert_eq!(listed(&html), newest[20..40]);
    assert!(html.contains("page 2 of 3"));
    assert_eq!(link(&html, "prev").as_deref(), Some("/?lang=en+GB&page=1"));
    assert_eq!(link(&html, "next").as_deref(), Some("/?lang=en+GB&page=3"));

    let html = html_page(&browser.get("/?page=3").await, 200);
    assert_eq!(listed(&html), newest[40..]);
    assert_eq!(link(&html, "next"), None);

    // Past the end: an empty page that links back.
    let html = html_page(&browser.get("/?page=9").await, 200);
    assert_eq!(listed(&html), Vec::<i64>::new());
    assert!(html.contains("No messages here."));
    assert_eq!(link(&html, "prev").as_deref(), Some("/?page=8"));

    for bad in ["/?page=0", "/?page=-1", "/?page=two", "/?page="] {
        let html = html_page(&browser.get(bad).await, 400);
        assert!(html.contains("page"), "{bad}: {html}");
    }
}

#[actix_web::test]
async fn user_content_is_escaped_everywhere() {
    let blog = Blog::new().await;
    let alice = blog.user("alice");
    let eve = blog.user("eve<i>\"&");
    let script = "<script>alert(\"x\")</script> & co";
    blog.message(alice, script, 1);
    blog.message(eve, "hi", 2);
    blog.follow(eve, alice);
    let browser = blog.logged_in("eve<i>\"&").await;
    for path in [
        "/",
        "/private/",
        "/users/alice/",
        "/users/",
        "/users/eve%3Ci%3E%22%26/",
    ] {
        let html = html_page(&browser.get(path).await, 200);
        assert!(!html.contains("<script>"), "{path}: {html}");
        assert!(!html.contains("<i>"), "{path}: {html}");
        assert!(!html.contains("eve<"), "{path}: {html}");
        if path != "/users/" && !path.starts_with("/users/eve") {
            assert!(
                unescape_html(&html).contains(&format!("<p class=\"content\">{script}</p>")),
                "{path}: {html}"
            );
        }
        // Links to eve's profile are percent-encoded.
        assert!(
            html.contains("href=\"/users/eve%3Ci%3E%22%26/\""),
            "{path}: {html}"
        );
    }
}

#[actix_web::test]
async fn seed_demo_seeds_an_empty_database_once() {
    let blog = Blog::new().await;
    assert!(seed_demo(&blog.db, &blog.auth).expect("seeded"));
    let users = blog.all::<User>();
    let names: Vec<&str> = users.iter().map(|u| u.username.as_str()).collect();
    assert_eq!(names, ["admin", "alice", "bob", "carol"]);
    assert!(users[0].admin && users[1..].iter().all(|u| !u.admin));
    assert!(check_password("admin", &users[0].password));
    assert!(users[1..]
        .iter()
        .all(|u| check_password("password", &u.password)));
    assert_eq!(blog.count::<Relationship>(), 5);
    let messages = blog.all::<Message>();
    assert_eq!(messages.len(), 36);
    let now = plover::value::now();
    assert!(messages.windows(2).all(|w| w[0].pub_date < w[1].pub_date));
    assert!(messages.iter().all(|m| m.pub_date <= now));

    // Twice: nothing more.
    assert!(!seed_demo(&blog.db, &blog.auth).expect("skipped"));
    assert_eq!(blog.count::<User>(), 4);
    assert_eq!(blog.count::<Message>(), 36);

    // The demo works: two pages of public timeline, a login, a private timeline.
    let browser = blog.browser();
    let html = html_page(&browser.get("/").await, 200);
    assert!(html.contains("page 1 of 2"), "{html}");
    browser.login("alice", "password").await.expect(302);
    let html = html_page(&browser.get("/private/").await, 200);
    let alice = &users[1];
    let followed: Vec<i32> = blog
        .follows()
        .iter()
        .filter(|(from, _)| *from == alice.id)
        .map(|(_, to)| *to)
        .collect();
    let mut expected: Vec<&Message> = messages
        .iter()
        .filter(|m| followed.contains(&m.user_id))
        .collect();
    expected.reverse();
    let expected: Vec<i64> = expected.iter().take(20).map(|m| i64::from(m.id)).collect();
    assert_eq!(listed(&html), expected);

    // A database with a user is left alone.
    let other = Blog::new().await;
    other.user("someone");
    assert!(!seed_demo(&other.db, &other.auth).expect("skipped"));
    assert_eq!(other.count::<User>(), 1);
    assert_eq!(other.count::<Message>(), 0);
    assert_eq!(other.count::<Relationship>(), 0);
}

#[actix_web::test]
async fn the_layout_has_a_cacheable_stylesheet_and_a_navigation_for_each_visitor() {
    let blog = Blog::new().await;
    let css = blog.browser().get("/static/style.css").await;
    css.expect(200);
    assert_eq!(css.header("content-type"), Some("text/css; charset=utf-8"));
    assert_eq!(css.header("cache-control"), Some("public, max-age=86400"));
    assert!(!css.text().contains("://") && !css.text().contains("@import"));

    let html = html_page(&blog.browser().get("/").await, 200);
    assert!(html.contains("<link rel=\"stylesheet\" href=\"/static/style.css\">"));
    assert!(!html.contains("://"), "no external URL: {html}");
    for nav in [
        "href=\"/\">Public",
        "href=\"/users/\">Users",
        "Log in</a>",
        "Join</a>",
    ] {
        assert!(html.contains(nav), "{nav}: {html}");
    }
    assert!(!html.contains("Log out"));

    blog.user("alice");
    let admin = blog.user("root");
    blog.db
        .run_blocking(|conn| {
            User::update(
                conn,
                i64::from(admin),
                UserChanges {
                    admin: Some(true),
                    ..UserChanges::default()
                },
            )
        })
        .expect("an admin");
    let alice = blog.logged_in("alice").await;
    let html = html_page(&alice.get("/").await, 200);
    for nav in [
        "href=\"/private/\">Private timeline",
        "href=\"/post/\">Post",
        "Logged in as <a href=\"/users/alice/\">alice</a>",
        "href=\"/accounts/logout/\">Log out",
    ] {
        assert!(html.contains(nav), "{nav}: {html}");
    }
    assert!(!html.contains("/admin/") && !html.contains("Join</a>"));
    let root = blog.logged_in("root").await;
    let html = html_page(&root.get("/users/").await, 200);
    assert!(html.contains("href=\"/admin/\">Admin"), "{html}");
    root.get("/admin/").await.expect(200);
}

#[actix_web::test]
async fn the_api_and_the_admin_are_mounted() {
    let blog = Blog::new().await;
    let bob = blog.user("bob");
    blog.message(bob, "over the API", 1);
    let body = blog.browser().get("/api/message/").await.json_with(200);
    assert_eq!(body["objects"][0]["content"], "over the API");
    let resp = blog.browser().get("/admin/").await;
    resp.expect(302);
    assert_eq!(
        resp.header("location"),
        Some("/accounts/login/?next=%2Fadmin%2F")
    );
}

#[actix_web::test]
async fn no_filter_of_the_api_reaches_a_password_or_an_email() {
    let blog = Blog::new().await;
    let bob = blog.user("bob");
    blog.message(bob, "hello", 1);
    let client = blog.browser();
    // Every join from a registered resource to the user model, and the user resource itself
    // (which needs admin credentials for writes but lists for everyone).
    for prefix in ["", "user__", "from_user__", "to_user__"] {
        for (resource, valid) in [
            ("user", prefix.is_empty()),
            ("message", prefix == "user__"),
            (
                "relationship",
                prefix.starts_with("from") || prefix.starts_with("to"),
            ),
        ] {
            if !valid {
                continue;
            }
            for field in ["password", "email"] {
                let param = format!("{prefix}{field}__like");
                let resp = client.get(&format!("/api/{resource}/?{param}=%25")).await;
                assert_eq!(
                    resp.code(),
                    400,
                    "/api/{resource}/?{param}: {}",
                    resp.text()
                );
                assert!(resp.text().contains(&param), "{}", resp.text());
            }
        }
    }
}

#[actix_web::test]
async fn a_user_is_loaded_by_a_unique_text_field() {
    let blog = Blog::new().await;
    assert!(seed_demo(&blog.db, &blog.auth).expect("seeded"));
    let f = User::FIELDS;
    let (username, email) = (f.username.index(), f.email.index());
    let found = blog
        .db
        .run_blocking(|conn| User::load_unique(conn, username, "bob"))
        .expect("a lookup");
    assert_eq!(found.map(|u| u.username), Some("bob".to_owned()));
    let missing = blog
        .db
        .run_blocking(|conn| User::load_unique(conn, username, "Bob"))
        .expect("a lookup");
    assert!(missing.is_none(), "names compare exactly");
    // `email` is not declared unique: no lookup of fixed shape is generated for it.
    assert!(blog
        .db
        .run_blocking(|conn| User::load_unique(conn, email, "bob@example.com"))
        .is_err());
}

#[actix_web::test]
async fn the_user_resource_alone_keeps_addresses_private_and_messages_are_searchable() {
    let blog = Blog::new().await;
    let alice = blog.user("alice");
    let bob = blog.user("bob");
    blog.message(alice, "Hello from Alice", 1);
    blog.message(bob, "hello, Bob here", 2);
    let browser = blog.browser();
    // Only the user resource excludes `email`; every join into users obeys it.
    for probe in [
        "/api/message/?user__email__like=%25",
        "/api/relationship/?from_user__email__like=%25",
        "/api/relationship/?to_user__email=alice@example.com",
        "/api/message/?ordering=user__email",
    ] {
        let resp = browser.get(probe).await;
        assert_eq!(resp.code(), 400, "{probe}");
    }
    let found = |q: &'static str| {
        let browser = &browser;
        async move { browser.get(&format!("/api/message/?q={q}")).await.ids() }
    };
    assert_eq!(found("HELLO").await.len(), 2);
    assert_eq!(
        found("hello+bob").await.len(),
        1,
        "a word in the text, one in the username"
    );
    assert_eq!(found("alice+bob").await.len(), 0);
}

#[actix_web::test]
async fn messages_are_counted_by_author_and_never_grouped_by_an_address() {
    let blog = Blog::new().await;
    let alice = blog.user("alice");
    let bob = blog.user("bob");
    blog.message(alice, "one", 1);
    blog.message(alice, "two", 3);
    blog.message(bob, "three", 2);
    let browser = blog.browser();
    let resp = browser
        .get("/api/message/aggregate/?group=user&count&max=pub_date")
        .await;
    assert_eq!(resp.code(), 200);
    let groups = resp.json()["groups"].clone();
    let mut seen: Vec<(i64, i64, String)> = (groups.as_array().expect("groups").iter())
        .map(|g| {
            let max = g["max_pub_date"].as_str().unwrap_or_default();
            let user = g["user_id"].as_i64().unwrap_or(-1);
            (user, g["count"].as_i64().unwrap_or(-1), max.to_owned())
        })
        .collect();
    seen.sort();
    assert_eq!(seen.len(), 2, "{groups}");
    assert_eq!((seen[0].0, seen[0].1), (i64::from(alice), 2));
    assert!(seen[0].2.starts_with("2024-01-04"), "{seen:?}");
    assert_eq!((seen[1].0, seen[1].1), (i64::from(bob), 1));
    // The user resource keeps addresses private: no group or filter reaches them.
    for probe in [
        "/api/message/aggregate/?group=user__email&count",
        "/api/message/aggregate/?count&user__email__like=%25",
    ] {
        assert_eq!(browser.get(probe).await.code(), 400, "{probe}");
    }
}

impl Blog {
    /// A client logged in as `root`, an admin (created here).
    async fn admin(&self) -> Browser<'_> {
        let root = self.user("root");
        let changes = UserChanges {
            admin: Some(true),
            ..UserChanges::default()
        };
        self.db
            .run_blocking(|conn| User::update(conn, i64::from(root), changes))
            .expect("an admin");
        self.logged_in("root").await
    }

    /// How many messages are stored.
    fn messages(&self) -> i64 {
        self.db
            .run_blocking(|conn| Query::<Message>::new().count(conn))
            .expect("the messages")
    }
}

#[actix_web::test]
async fn a_blank_message_is_refused_by_the_api_and_beside_its_row_on_the_users_admin_page() {
    let blog = Blog::new().await;
    let alice_id = blog.user("alice");
    blog.message(alice_id, "first", 1);
    let resp = blog
        .browser()
        .send(
            plover_tests::json_request(
                actix_web::http::Method::POST,
                "/api/message/",
                &serde_json::json!({"content": "  "}),
            )
            .insert_header(plover_tests::basic("alice", "pw")),
        )
        .await;
    let body = resp.json_with(400);
    assert_eq!(body["fields"]["content"], "must not be blank", "{body}");

    let root = blog.admin().await;
    let page = format!("/admin/user/{alice_id}/");
    let token = root.csrf(&page).await;
    for blank in ["", " \t "] {
        let resp = root
            .post_form(
                &page,
                &[
                    ("csrf_token", &token),
                    ("username", "alice2"),
                    ("email", "alice@example.com"),
                    ("join_date", "2024-01-01T00:00"),
                    ("active", "1"),
                    ("message-0-content", "a second one"),
                    ("message-1-content", blank),
                    ("message-1-pub_date", "2024-02-01T10:00"),
                ],
            )
            .await;
        let html = html_page(&resp, 400);
        let row = &html[html.find("name=\"message-1-content\"").expect("the row")..];
        let row = &row[..row.find("</tr>").expect("the row's end")];
        assert!(row.contains("must not be blank"), "{html}");
        // The values typed are shown again.
        assert_eq!(
            input_value(&html, "message-0-content").as_deref(),
            Some("a second one")
        );
        assert_eq!(input_value(&html, "username").as_deref(), Some("alice2"));
        // Nothing written: no message, the user as it was.
        assert_eq!(blog.messages(), 1);
        let name = blog
            .db
            .run_blocking(|conn| User::load_pk(conn, i64::from(alice_id)))
            .expect("the user")
            .expect("alice")
            .username;
        assert_eq!(name, "alice");
    }
}

/// A message of [`ordered_through_the_author`]'s data set, with what its orderings read.
struct Row {
    id: i64,
    username: &'static str,
    joined: u32,
    minute: u32,
    content: String,
}

/// docs/performance.md#growth: a list ordered through the author (an `INNER JOIN` of the
/// users, whose resource hides none; on PostgreSQL read from each author's first messages
/// through a lateral join where the list has no conditions) gives the pages of the whole
/// order: first, numbered, followed by their links, descending, with ties in the author's
/// column, with a filter and with a search, each against the order computed here.
#[actix_web::test]
async fn pages_ordered_through_the_author_follow_the_whole_order() {
    let blog = Blog::new().await;
    // Names not in the order of their ids; two join days, so `user__join_date` has ties.
    let authors = [
        ("erin", 2),
        ("bob", 1),
        ("dave", 2),
        ("alice", 1),
        ("carol", 2),
    ];
    let mut ids = Vec::new();
    for (name, day) in authors {
        let id = blog.user(name);
        let date = format!("2024-01-0{day} 00:00:00");
        let sql = format!("UPDATE \"user\" SET join_date = '{date}' WHERE id = {id}");
        blog.db
            .run_blocking(|conn| conn.batch_execute(&sql))
            .expect("a join date");
        ids.push(id);
    }
    // 40 messages an author, in turn; minutes with ties; every seventh holds a rare word.
    let rows: Vec<Row> = (0..200u32)
        .map(|n| {
            let (username, joined) = authors[n as usize % 5];
            let rare = if n % 7 == 0 { " plover" } else { "" };
            Row {
                id: i64::from(n) + 1,
                username,
                joined,
                minute: (n * 13) % 30,
                content: format!("message {n}{rare}"),
            }
        })
        .collect();
    let values: Vec<String> = (rows.iter().zip(0..))
        .map(|(row, n)| {
            format!(
                "({}, {}, '{}', '2024-02-01 10:{:02}:00')",
                row.id,
                ids[n % 5],
                row.content,
                row.minute
            )
        })
        .collect();
    let insert = format!(
        "INSERT INTO message (id, user_id, content, pub_date) VALUES {}",
        values.join(", ")
    );
    blog.db
        .run_blocking(|conn| conn.batch_execute(&insert))
        .expect("the messages");
    let browser = blog.browser();
    type Order = fn(&Row, &Row) -> std::cmp::Ordering;
    type Kept = fn(&Row) -> bool;
    let cases: [(&str, Order, Kept); 8] = [
        (
            "ordering=user__username",
            |a, b| (a.username, a.id).cmp(&(b.username, b.id)),
            |_| true,
        ),
        (
            "ordering=-user__username",
            |a, b| b.username.cmp(a.username).then(a.id.cmp(&b.id)),
            |_| true,
        ),
        (
            "ordering=-user__username,-id",
            |a, b| (b.username, b.id).cmp(&(a.username, a.id)),
            |_| true,
        ),
        (
            "ordering=user__username,-pub_date",
            |a, b| {
                a.username
                    .cmp(b.username)
                    .then(b.minute.cmp(&a.minute))
                    .then(a.id.cmp(&b.id))
            },
            |_| true,
        ),
        (
            "ordering=user__join_date",
            |a, b| (a.joined, a.id).cmp(&(b.joined, b.id)),
            |_| true,
        ),
        (
            "ordering=-user__join_date,-id",
            |a, b| (b.joined, b.id).cmp(&(a.joined, a.id)),
            |_| true,
        ),
        (
            "ordering=-user__username&content__like=%25plover",
            |a, b| b.username.cmp(a.username).then(a.id.cmp(&b.id)),
            |row| row.content.contains("plover"),
        ),
        (
            "ordering=user__join_date&q=plover",
            |a, b| (a.joined, a.id).cmp(&(b.joined, b.id)),
            |row| row.content.contains("plover"),
        ),
    ];
    for (query, order, kept) in cases {
        let mut expected: Vec<&Row> = rows.iter().filter(|row| kept(row)).collect();
        expected.sort_by(|a, b| order(a, b));
        let expected: Vec<i64> = expected.iter().map(|row| row.id).collect();
        // Numbered pages of 7, each on its own.
        for page in 1..=expected.len().div_ceil(7) + 1 {
            let from = ((page - 1) * 7).min(expected.len());
            let got = browser
                .get(&format!("/api/message/?{query}&limit=7&page={page}"))
                .await
                .ids();
            assert_eq!(
                got,
                expected[from..(from + 7).min(expected.len())],
                "{query}, page {page}"
            );
        }
        // The links from the first page on: by number (a cursor needs the model's own keys).
        let mut link = format!("/api/message/?{query}&limit=9");
        let mut listed = Vec::new();
        while !link.is_empty() {
            let body = browser.get(&link).await.json_with(200);
            assert!(!link.contains("cursor="), "{link}");
            let objects = body["objects"].as_array().expect("the objects");
            listed.extend(objects.iter().map(|o| o["id"].as_i64().expect("an id")));
            link = body["meta"]["next"].as_str().unwrap_or_default().to_owned();
        }
        assert_eq!(listed, expected, "{query}, by the links");
    }
}
