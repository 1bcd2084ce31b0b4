//! docs/contract.md#idempotency-keys: a POST with `Idempotency-Key` creates once per key and
//! credentials; a repeat answers the first answer again, another request with the key is 422.

use std::time::Duration;

use actix_web::http::header::HeaderValue;
use actix_web::http::Method;
use actix_web::test::TestRequest;
use actix_web::App;
use plover::prelude::*;
use plover_tests::*;
use serde_json::{json, Value};

/// A POST of `body` to `uri` with `Idempotency-Key: key`.
fn keyed(uri: &str, key: &str, body: &Value) -> TestRequest {
    json_request(Method::POST, uri, body).insert_header(("Idempotency-Key", key.to_owned()))
}

fn sample(name: &str) -> Value {
    json!({"name": name, "qty": 1})
}

/// The rows of the key table (none when it was never made).
fn keys(app: &TestApp) -> i64 {
    app.count("plover_idempotency")
}

/// Asserts that `again` is `first` given again: status, body and Location alike, marked as a
/// replay (and `first` not).
#[track_caller]
fn assert_replay(first: &Resp, again: &Resp) {
    assert_eq!(again.code(), first.code(), "{}", again.text());
    assert_eq!(again.body, first.body);
    assert_eq!(again.header("location"), first.header("location"));
    assert_eq!(again.header("content-type"), Some("application/json"));
    assert_eq!(first.header("idempotent-replayed"), None);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
}

#[actix_web::test]
async fn a_repeat_answers_the_first_answer_and_creates_nothing() {
    let app = TestApp::new().await;
    let first = app
        .send(keyed("/api/tracked_open/", "order-1", &sample("a")))
        .await;
    let created = first.json_with(201);
    let location = format!("/api/tracked_open/{}/", created["id"]);
    assert_eq!(first.header("location"), Some(location.as_str()));
    for _ in 0..2 {
        let again = app
            .send(keyed("/api/tracked_open/", "order-1", &sample("a")))
            .await;
        assert_replay(&first, &again);
    }
    assert_eq!(app.count("sample"), 1);
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM plover_history WHERE action = 'add'"),
        1,
        "the history records one create"
    );
    assert_eq!(keys(&app), 1);
    // The table keeps hashes of the credentials and of the body, never them.
    let scope = app
        .query_text("SELECT scope FROM plover_idempotency")
        .expect("a scope");
    assert!(
        scope.len() == 64 && scope.bytes().all(|b| b.is_ascii_hexdigit()),
        "{scope}"
    );
    // Another key is another create; a POST without a key is never replayed.
    app.send(keyed("/api/tracked_open/", "order-2", &sample("b")))
        .await
        .expect(201);
    app.post("/api/tracked_open/", sample("c"))
        .await
        .expect(201);
    let resp = app.post("/api/tracked_open/", sample("c")).await;
    assert_eq!(resp.code(), 409, "without a key the create runs again");
    assert_eq!(app.count("sample"), 3);
}

#[actix_web::test]
async fn another_body_or_resource_with_the_key_is_422_and_writes_nothing() {
    let app = TestApp::new().await;
    app.send(keyed("/api/tracked_open/", "k", &sample("a")))
        .await
        .expect(201);
    let resp = app
        .send(keyed("/api/tracked_open/", "k", &sample("b")))
        .await;
    let error = resp.json_with(422);
    let message = error["error"].as_str().expect("an error message");
    assert!(message.contains("Idempotency-Key"), "{message}");
    // An invalid body too: the key answers before the input is read.
    let resp = app
        .send(keyed("/api/tracked_open/", "k", &json!({"qty": "many"})))
        .await;
    resp.json_with(422);
    // The same body on another resource.
    let resp = app.send(keyed("/api/lean/", "k", &sample("a"))).await;
    resp.json_with(422);
    assert_eq!(app.count("sample"), 1);
    assert_eq!(keys(&app), 1);
}

#[actix_web::test]
async fn keys_belong_to_users_api_keys_and_addresses() {
    let app =
        TestApp::with_seed("INSERT INTO apikey VALUES (1, 'k1', 's1'), (2, 'k2', 's2');").await;
    app.user("alice", "pw");
    app.user("bob", "pw");
    // Two users with one key: two creates; each one's repeat answers its own.
    let as_user = |user: &str, name: &str| {
        keyed("/api/patchable/", "shared", &sample(name)).insert_header(basic(user, "pw"))
    };
    let alice = app.send(as_user("alice", "by-alice")).await;
    let bob = app.send(as_user("bob", "by-bob")).await;
    assert_eq!(alice.json_with(201)["name"], "by-alice");
    assert_eq!(bob.json_with(201)["name"], "by-bob");
    assert_replay(&alice, &app.send(as_user("alice", "by-alice")).await);
    assert_replay(&bob, &app.send(as_user("bob", "by-bob")).await);
    // Authentication comes first: wrong credentials never see a stored answer.
    let resp = app
        .send(
            keyed("/api/patchable/", "shared", &sample("by-alice"))
                .insert_header(basic("alice", "wrong")),
        )
        .await;
    assert_eq!(resp.code(), 401);
    // Two API keys from one address.
    let note = |api_key: &str, secret: &str| {
        keyed(
            &format!("/api/note/?key={api_key}&secret={secret}"),
            "shared",
            &json!({"message": "hello"}),
        )
    };
    let first = app.send(note("k1", "s1")).await;
    first.expect(201);
    app.send(note("k2", "s2")).await.expect(201);
    assert_replay(&first, &app.send(note("k1", "s1")).await);
    assert_eq!(app.count("note"), 2);
    // Two anonymous clients: by address.
    let from = |ip: &str| app.browser().from_address(ip);
    let (one, two) = (from("127.0.0.2"), from("127.0.0.3"));
    let first = one
        .send(keyed("/api/tracked_open/", "shared", &sample("from-2")))
        .await;
    first.expect(201);
    two.send(keyed("/api/tracked_open/", "shared", &sample("from-3")))
        .await
        .expect(201);
    let again = one
        .send(keyed("/api/tracked_open/", "shared", &sample("from-2")))
        .await;
    assert_replay(&first, &again);
    assert_eq!(app.count("sample"), 4);
}

#[actix_web::test]
async fn twenty_concurrent_repeats_create_once_and_answer_alike() {
    let app = TestApp::new().await;
    let sends = (0..20).map(|_| app.send(keyed("/api/tracked_open/", "burst", &sample("once"))));
    let answers = futures_util::future::join_all(sends).await;
    assert_eq!(app.count("sample"), 1);
    assert_eq!(keys(&app), 1);
    let made: Vec<&Resp> = answers
        .iter()
        .filter(|r| r.header("idempotent-replayed").is_none())
        .collect();
    assert_eq!(made.len(), 1, "one request made the create");
    for resp in &answers {
        assert_eq!(resp.code(), 201, "{}", resp.text());
        assert_eq!(resp.body, made[0].body);
        assert_eq!(resp.header("location"), made[0].header("location"));
    }
}

#[actix_web::test]
async fn a_failed_create_keeps_no_key_and_its_retry_creates() {
    let app = TestApp::with_seed(
        "INSERT INTO sample (id, name, qty, big, ratio, flag, body, stamp) \
         VALUES (1, 'taken', 1, 0, 0, FALSE, '', '2020-01-01 00:00:00')",
    )
    .await;
    // The create fails in its transaction, after the key was claimed: the key goes with it.
    let resp = app
        .send(keyed("/api/tracked_open/", "retry", &sample("taken")))
        .await;
    assert_eq!(resp.code(), 409, "{}", resp.text());
    assert_eq!(keys(&app), 0);
    // A bad body fails before the transaction: nothing kept either.
    let resp = app
        .send(keyed("/api/tracked_open/", "retry", &json!({"name": "x"})))
        .await;
    resp.json_with(400);
    assert_eq!(keys(&app), 0);
    app.sql("DELETE FROM sample WHERE id = 1");
    let resp = app
        .send(keyed("/api/tracked_open/", "retry", &sample("taken")))
        .await;
    assert_eq!(resp.json_with(201)["name"], "taken");
    assert_eq!(resp.header("idempotent-replayed"), None);
    assert_eq!((app.count("sample"), keys(&app)), (1, 1));
}

#[actix_web::test]
async fn a_bulk_create_with_a_key_creates_once() {
    let app = TestApp::new().await;
    let body = json!([sample("a"), sample("b")]);
    let first = app.send(keyed("/api/tracked_open/", "bulk", &body)).await;
    assert_eq!(first.json_with(201).as_array().map(Vec::len), Some(2));
    assert_replay(
        &first,
        &app.send(keyed("/api/tracked_open/", "bulk", &body)).await,
    );
    assert_eq!(app.count("sample"), 2);
    // A failed bulk create keeps no key.
    let bad = json!([sample("c"), sample("c")]);
    let resp = app.send(keyed("/api/tracked_open/", "bulk-2", &bad)).await;
    resp.json_with(400);
    assert_eq!((app.count("sample"), keys(&app)), (2, 1));
}

#[actix_web::test]
async fn a_bad_key_is_400_naming_the_header_after_authentication() {
    let app = TestApp::new().await;
    let long = "k".repeat(256);
    for key in [long.as_str(), "", "caf\u{e9}"] {
        // A non-ASCII key goes as its UTF-8 bytes.
        let value = HeaderValue::from_bytes(key.as_bytes()).expect("a header value");
        let req = json_request(Method::POST, "/api/tracked_open/", &sample("a"))
            .insert_header(("Idempotency-Key", value));
        let error = app.send(req).await.json_with(400);
        let message = error["error"].as_str().expect("an error message");
        assert!(message.contains("Idempotency-Key"), "{key:?}: {message}");
    }
    assert_eq!(app.count("sample"), 0);
    // 255 characters are a key.
    let resp = app
        .send(keyed("/api/tracked_open/", &"k".repeat(255), &sample("a")))
        .await;
    resp.expect(201);
    assert_eq!(app.count("sample"), 1);
    // Authentication answers first.
    let resp = app
        .send(keyed("/api/patchable/", &long, &sample("b")))
        .await;
    assert_eq!(resp.code(), 401);
}

#[actix_web::test]
async fn other_verbs_ignore_the_header() {
    let app = TestApp::with_seed(
        "INSERT INTO sample (id, name, qty, big, ratio, flag, body, stamp) \
         VALUES (1, 'one', 1, 0, 0, FALSE, '', '2020-01-01 00:00:00')",
    )
    .await;
    for qty in [2, 3] {
        let req = json_request(Method::PUT, "/api/guarded/1/", &json!({"qty": qty}))
            .insert_header(("If-Match", "*"))
            .insert_header(("Idempotency-Key", "put"));
        let resp = app.send(req).await;
        assert_eq!(resp.json_with(200)["qty"], qty);
        assert_eq!(resp.header("idempotent-replayed"), None);
    }
    let long = "k".repeat(300);
    let req = TestRequest::get()
        .uri("/api/sample/1/")
        .insert_header(("Idempotency-Key", long));
    app.send(req).await.expect(200);
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM sample WHERE qty = 3"),
        1
    );
}

#[actix_web::test]
async fn an_expired_key_is_ignored_and_removed() {
    let (db, _store) = fresh_database("");
    db.run_blocking(|conn| plover::schema::create_tables(conn, &models()))
        .expect("schema");
    let mut api = RestApi::new(db.clone())
        .default_auth(Authentication::new(vec![]))
        .idempotency_ttl(Duration::from_millis(300));
    api.register::<AModel>();
    let service = TestService::new(App::new().configure(api.setup())).await;
    let post = |key: &str| keyed("/api/amodel/", key, &json!({"a_field": "x"}));
    let first = service.send(post("old")).await;
    let id = first.json_with(201)["id"].clone();
    assert_replay(&first, &service.send(post("old")).await);
    std::thread::sleep(Duration::from_millis(400));
    // Expired: the same key creates again.
    let again = service.send(post("old")).await;
    assert_ne!(again.json_with(201)["id"], id);
    assert_eq!(again.header("idempotent-replayed"), None);
    assert_eq!(
        scalar(&db, "SELECT COUNT(*) FROM amodel").as_deref(),
        Some("2")
    );
    // Another key of this client, later, removes the expired ones.
    std::thread::sleep(Duration::from_millis(400));
    service.send(post("new")).await.expect(201);
    let kept = scalar(&db, "SELECT idem_key FROM plover_idempotency");
    assert_eq!(kept.as_deref(), Some("new"));
    assert_eq!(
        scalar(&db, "SELECT COUNT(*) FROM plover_idempotency").as_deref(),
        Some("1")
    );
}

#[actix_web::test]
async fn a_user_made_after_a_deleted_one_never_gets_its_stored_answers() {
    let app = TestApp::new().await;
    let first = app.user("carol", "pw");
    let post =
        || keyed("/api/patchable/", "retry-1", &sample("made")).insert_header(basic("carol", "pw"));
    app.send(post()).await.expect(201);
    // Carol and what she made are deleted; a new user joins under her name.
    // (Not `app.sql`, which moves PostgreSQL's sequences back to the largest id.)
    let delete = format!("DELETE FROM sample; DELETE FROM \"user\" WHERE id = {first}");
    app.db.run_blocking(|c| c.batch_execute(&delete)).unwrap();
    let second = app.user("carol", "pw");
    // Tables Plover makes never give an id again (SQLite: AUTOINCREMENT).
    assert_ne!(second, first, "the deleted user's id was given again");
    // The same key and body from the new user: a create of her own, not the stored answer.
    let resp = app.send(post()).await;
    assert_eq!(resp.header("idempotent-replayed"), None, "{}", resp.text());
    resp.expect(201);
    assert_eq!(app.count("sample"), 1);

    // A table made without AUTOINCREMENT gives an id again: another user on the first one's id
    // (written here by hand) does not get the answer stored under it either.
    app.sql(&format!(
        "DELETE FROM sample; INSERT INTO \"user\" (id, username, password, email, join_date, \
         active, admin) SELECT {first}, 'dave', password, email, join_date, active, admin \
         FROM \"user\" WHERE id = {second}"
    ));
    let resp = app
        .send(
            keyed("/api/patchable/", "retry-1", &sample("made")).insert_header(basic("dave", "pw")),
        )
        .await;
    assert_eq!(resp.header("idempotent-replayed"), None, "{}", resp.text());
    resp.expect(201);
}
