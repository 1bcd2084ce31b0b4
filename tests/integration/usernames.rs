//! Usernames (docs/security.md): stored NFKC-normalised, found by any compatibility form, and
//! no new or renamed name that looks like another user's, through REST and the admin.

use actix_web::test::TestRequest;
use futures_util::future::join_all;
use plover::prelude::*;
use plover_tests::{basic, fresh_database, TestApp};
use serde_json::{json, Value};

const PW: &str = "pw";

async fn create_user(app: &TestApp, username: &str) -> (u16, Value) {
    let resp = app
        .send(
            TestRequest::post()
                .uri("/api/user/")
                .insert_header(basic("root", PW))
                .set_json(json!({"username": username, "password": "x", "email": "e@x"})),
        )
        .await;
    let body = serde_json::from_slice(&resp.body).unwrap_or(Value::Null);
    (resp.code(), body)
}

#[actix_web::test]
async fn usernames_are_stored_nfkc_and_found_by_any_compatibility_form() {
    let app = TestApp::new().await;
    app.user_with("root", PW, true, true);
    let (code, body) = create_user(&app, "ｂｏｂ").await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["username"], "bob");
    assert_eq!(
        app.query_text("SELECT username FROM \"user\" WHERE id = (SELECT MAX(id) FROM \"user\")")
            .as_deref(),
        Some("bob")
    );
    // The login finds the stored name from its full-width form too.
    let browser = app.browser();
    browser.login("ｂｏｂ", "x").await.expect(302);
    assert_eq!(browser.whoami().await, "bob");
}

#[actix_web::test]
async fn a_name_that_looks_like_another_users_is_409_naming_the_field() {
    let app = TestApp::new().await;
    app.user_with("root", PW, true, true);
    assert_eq!(create_user(&app, "alice").await.0, 201);
    for lookalike in [
        "Alice",
        "ALICE",
        "alic\u{0435}",
        "al\u{0456}ce",
        "a\u{200b}lice",
    ] {
        let (code, body) = create_user(&app, lookalike).await;
        assert_eq!(code, 409, "{lookalike:?}: {body}");
        assert!(
            body["fields"]["username"]
                .as_str()
                .is_some_and(|m| m.contains("alice")),
            "{body}"
        );
    }
    assert_eq!(app.count("user"), 2, "nothing written");
    assert_eq!(create_user(&app, "alicia").await.0, 201);
    // A rename onto a look-alike is refused too; keeping one's own name is not a conflict.
    let id = app.query_i64("SELECT id FROM \"user\" WHERE username = 'alicia'");
    let rename = |name: &str| {
        TestRequest::put()
            .uri(&format!("/api/user/{id}/"))
            .insert_header(basic("root", PW))
            .set_json(json!({"username": name}))
    };
    assert_eq!(app.send(rename("ALICE")).await.code(), 409);
    assert_eq!(app.send(rename("Aliсe")).await.code(), 409);
    assert_eq!(app.send(rename("alicia")).await.code(), 200);
}

#[actix_web::test]
async fn the_admin_shows_a_look_alike_name_beside_the_field() {
    let app = TestApp::new().await;
    app.user_with("root", PW, true, true);
    app.user("alice", PW);
    let admin = app.browser();
    admin.login("root", PW).await.expect(302);
    let token = admin.csrf("/admin/user/add/").await;
    let resp = admin
        .post_form(
            "/admin/user/add/",
            &[
                ("username", "alic\u{0435}"),
                ("email", "m@example.com"),
                ("new_password", "s3cret pass"),
                ("active", "1"),
                ("csrf_token", &token),
            ],
        )
        .await;
    assert_eq!(resp.code(), 409, "{}", resp.text());
    assert!(resp.text().contains("id=\"e-username\""), "{}", resp.text());
    assert_eq!(app.count("user"), 2);
}

/// Ten spellings of one name (case, compatibility forms, confusables, surrounding spaces),
/// created at once, round after round: exactly one account each round, and every other
/// create is the 409 naming the field (on PostgreSQL, each create and rename takes the
/// usernames' lock before it looks for a look-alike).
#[actix_web::test]
async fn concurrent_creates_of_look_alike_names_leave_exactly_one_account() {
    let app = TestApp::new().await;
    app.user_with("root", PW, true, true);
    // root's credentials are checked once first, as a client's usually are already.
    assert_eq!(create_user(&app, "zed").await.0, 201);
    for round in 0..8 {
        let name = format!("carol{}", ["a", "b", "c", "d", "e", "f", "g", "h"][round]);
        let spellings = [
            name.clone(),
            name.to_uppercase(),
            format!(" {name}"),
            format!("{name} "),
            name.replacen('a', "\u{0430}", 1), // Cyrillic а
            name.replacen('o', "\u{043e}", 1), // Cyrillic о
            name.replacen('l', "1", 1),
            name.replacen('c', "\u{ff43}", 1), // full-width c
            format!("C{}", &name[1..]),
            name.replacen('r', "\u{200b}r", 1), // zero-width space
        ];
        let answers = join_all(spellings.iter().map(|s| create_user(&app, s))).await;
        let created = answers.iter().filter(|(code, _)| *code == 201).count();
        assert_eq!(created, 1, "round {round}: {answers:?}");
        for (code, body) in answers.iter().filter(|(code, _)| *code != 201) {
            assert_eq!(*code, 409, "round {round}: {body}");
            assert!(body["fields"]["username"].is_string(), "{body}");
        }
    }
    assert_eq!(app.count("user"), 10, "root, zed and one account per round");
}

/// Surrounding whitespace is not part of a name: every writer stores the name trimmed (as
/// DRF's `CharField` does), a name that is only whitespace is 400, and a login finds the user
/// whatever spaces surround the name typed.
#[actix_web::test]
async fn usernames_are_trimmed_by_every_writer_and_at_login() {
    let app = TestApp::new().await;
    app.user_with("root", PW, true, true);
    // REST create and rename.
    let (code, body) = create_user(&app, " alice\t").await;
    assert_eq!(
        (code, body["username"].as_str()),
        (201, Some("alice")),
        "{body}"
    );
    for taken in ["alice ", " alice", "\u{3000}alice"] {
        let (code, body) = create_user(&app, taken).await;
        assert_eq!(code, 409, "{taken:?}: {body}");
    }
    for blank in ["   ", "\u{3000}"] {
        let (code, body) = create_user(&app, blank).await;
        assert_eq!(code, 400, "{blank:?}: {body}");
        assert!(body["fields"]["username"].is_string(), "{body}");
    }
    let (_, bob) = create_user(&app, "bob").await;
    let resp = app
        .send(
            TestRequest::put()
                .uri(&format!("/api/user/{}/", bob["id"]))
                .insert_header(basic("root", PW))
                .set_json(json!({"username": "  robert "})),
        )
        .await;
    assert_eq!(resp.json_with(200)["username"], "robert");
    // The admin's add form.
    let admin = app.browser();
    admin.login("root", PW).await.expect(302);
    let token = admin.csrf("/admin/user/add/").await;
    let fields = |name| {
        [
            ("username", name),
            ("email", "m@example.com"),
            ("new_password", "s3cret pass"),
            ("active", "1"),
            ("csrf_token", token.as_str()),
        ]
    };
    assert_eq!(
        admin
            .post_form("/admin/user/add/", &fields(" dave "))
            .await
            .code(),
        303
    );
    assert_eq!(
        admin
            .post_form("/admin/user/add/", &fields("dave  "))
            .await
            .code(),
        409
    );
    // The writer of createsuperuser and sign-up views, on Plover's own user model.
    let (db, _store) = fresh_database("");
    let auth = Auth::<plover::accounts::User>::new(db.clone()).cost(4);
    let made = db
        .run_blocking(|c| {
            // Other tests of this process serve a change feed of this model: its writes record
            // events from then on, in this database too (docs/changes.md).
            let tables = [
                plover::accounts::User::meta(),
                plover::changes::ChangeEvent::meta(),
            ];
            plover::schema::create_tables(c, &tables)?;
            auth.create_user(c, " erin ", "a long passphrase", true)
        })
        .expect("created");
    assert_eq!(made.username, "erin");
    let again = db.run_blocking(|c| auth.create_user(c, "erin\u{a0}", "a long passphrase", true));
    assert!(again.is_err(), "{again:?}");
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM \"user\" WHERE username <> TRIM(username)"),
        0
    );
    // Logins: the form and Basic credentials find the trimmed name.
    let browser = app.browser();
    browser.login(" dave\t", "s3cret pass").await.expect(302);
    assert_eq!(browser.whoami().await, "dave");
    let resp = app
        .send(
            TestRequest::post()
                .uri("/api/message/")
                .insert_header(basic(" root", PW))
                .set_json(json!({"content": "hello"})),
        )
        .await;
    assert_eq!(resp.code(), 201, "{}", resp.text());
}

#[actix_web::test]
async fn a_bulk_create_refuses_names_like_the_tables_and_the_bodys_own() {
    let app = TestApp::new().await;
    app.user_with("root", PW, true, true);
    app.user("alice", PW);
    let before = app.count("user");
    let body = json!([
        {"username": "carol", "password": "x", "email": "c@x"},
        {"username": "Car\u{043e}l", "password": "x", "email": "c2@x"},
        {"username": "ALICE", "password": "x", "email": "a@x"},
        {"username": "dave", "password": "x", "email": "d@x"},
    ]);
    let resp = app
        .send(
            TestRequest::post()
                .uri("/api/user/")
                .insert_header(basic("root", PW))
                .set_json(body),
        )
        .await;
    let body: Value = serde_json::from_slice(&resp.body).unwrap_or(Value::Null);
    assert_eq!(resp.code(), 400, "{body}");
    let items = body["items"].as_object().expect("items by index");
    let mut failed: Vec<&str> = items.keys().map(String::as_str).collect();
    failed.sort_unstable();
    assert_eq!(failed, ["1", "2"], "{body}");
    for (index, name) in [("1", "carol"), ("2", "alice")] {
        assert!(
            items[index]["username"]
                .as_str()
                .is_some_and(|m| m.contains(&format!("a user named '{name}' exists"))),
            "{body}"
        );
    }
    assert_eq!(app.count("user"), before, "nothing written");
}
