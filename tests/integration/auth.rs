//! docs/contract.md#authentication: the default read-only authentication, `Authentication`,
//! `UserAuthentication`, `AdminAuthentication`, `ApiKeyAuthentication`, the exact 401 and
//! `RestrictOwnerResource`.

use actix_web::http::Method;
use actix_web::test::TestRequest;
use plover_tests::*;
use serde_json::json;

fn with(req: TestRequest, header: (&'static str, String)) -> TestRequest {
    req.insert_header(header)
}

// --- default: read-only -------------------------------------------------------------------

#[actix_web::test]
async fn default_auth_is_read_only_whatever_the_credentials() {
    let app = TestApp::new().await;
    app.user_with("root", "pw", true, true);
    let alice = app.user("alice", "pw");
    let bob = app.user("bob", "pw");
    app.sql(&format!(
        "INSERT INTO relationship VALUES (1, {alice}, {bob});"
    ));
    assert_eq!(app.get("/api/relationship/").await.ids(), [1]);
    app.get("/api/relationship/1/").await.expect(200);
    let body = json!({"from_user_id": alice, "to_user_id": alice});
    for creds in [None, Some(basic("root", "pw")), Some(basic("alice", "pw"))] {
        let requests = [
            json_request(Method::POST, "/api/relationship/", &body),
            json_request(Method::PUT, "/api/relationship/1/", &body),
            TestRequest::delete().uri("/api/relationship/1/"),
        ];
        for req in requests {
            let req = match &creds {
                Some(c) => with(req, c.clone()),
                None => req,
            };
            assert_401(&app.send(req).await);
        }
    }
    assert_eq!(app.count("relationship"), 1);
    assert_eq!(app.query_i64("SELECT to_user_id FROM relationship"), bob);
}

// --- Authentication(protected_methods) ----------------------------------------------------

#[actix_web::test]
async fn authentication_protects_only_its_methods() {
    let app = TestApp::new().await;
    app.user_with("root", "pw", true, true);
    // sample: Authentication([DELETE]).
    let created = app
        .post("/api/sample/", json!({"name": "n", "qty": 1}))
        .await;
    created.expect(201);
    let edited = app.put("/api/sample/1/", json!({"qty": 2})).await;
    assert_eq!(edited.json_with(200)["qty"], json!(2));
    assert_401(&app.delete("/api/sample/1/").await);
    assert_401(
        &app.send(with(
            TestRequest::delete().uri("/api/sample/1/"),
            basic("root", "pw"),
        ))
        .await,
    );
    assert_eq!(app.count("sample"), 1);
    // amodel: Authentication([]) lets everyone do everything.
    app.post("/api/amodel/", json!({"a_field": "a"}))
        .await
        .expect(201);
    app.put("/api/amodel/1/", json!({"a_field": "b"}))
        .await
        .expect(200);
    app.delete("/api/amodel/1/").await.expect(200);
    assert_eq!(app.count("amodel"), 0);
}

#[actix_web::test]
async fn a_custom_authenticator_is_asked_for_every_request() {
    let app = TestApp::with_seed("INSERT INTO emodel VALUES (1, 'e1');").await;
    app.get("/api/audited/").await.expect(200);
    app.get("/api/audited/1/").await.expect(200);
    app.put("/api/audited/1/", json!({"e_field": "x"}))
        .await
        .expect(200);
    let resp = app
        .send(with(
            TestRequest::get().uri("/api/audited/1/"),
            ("x-deny", "1".into()),
        ))
        .await;
    assert_401(&resp);
    let log: Vec<String> = app
        .log
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.starts_with("authorize"))
        .cloned()
        .collect();
    assert_eq!(
        log,
        [
            "authorize:GET",
            "authorize:GET",
            "authorize:PUT",
            "authorize:GET"
        ]
    );
}

// --- UserAuthentication -------------------------------------------------------------------

#[actix_web::test]
async fn user_auth_reads_are_open_and_writes_need_credentials() {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    app.sql(&format!(
        "INSERT INTO message VALUES (1, {alice}, 'hi', '2020-01-01 00:00:00');"
    ));
    assert_eq!(app.get("/api/message/").await.ids(), [1]);
    app.get("/api/message/1/").await.expect(200);
    assert_401(&app.post("/api/message/", json!({"content": "x"})).await);
    assert_401(&app.put("/api/message/1/", json!({"content": "x"})).await);
    assert_401(&app.delete("/api/message/1/").await);
    let resp = app
        .send(with(
            json_request(Method::POST, "/api/message/", &json!({"content": "x"})),
            basic("alice", "pw"),
        ))
        .await;
    let m = resp.json_with(201);
    assert_eq!(m["user"]["id"], json!(alice));
    assert_eq!(m["content"], json!("x"));
    assert_eq!(app.count("message"), 2);
}

#[actix_web::test]
async fn user_auth_refuses_wrong_credentials() {
    let app = TestApp::new().await;
    app.user("alice", "pw");
    app.user_with("sleeper", "pw", false, false);
    app.user_with("nopw", "", true, false);
    for (user, password) in [
        ("alice", "wrong"),
        ("alice", "pw "),
        ("alice", "PW"),
        ("alice", ""),
        ("Alice", "pw"),
        ("ghost", "pw"),
        ("sleeper", "pw"),
        ("nopw", ""),
        ("nopw", "x"),
    ] {
        let resp = app
            .send(with(
                json_request(Method::POST, "/api/message/", &json!({"content": "x"})),
                basic(user, password),
            ))
            .await;
        assert_401(&resp);
    }
    assert_eq!(app.count("message"), 0);
    assert_eq!(
        app.query_text("SELECT password FROM \"user\" WHERE username = 'nopw'"),
        Some(String::new())
    );
}

#[actix_web::test]
async fn malformed_authorization_headers_are_401() {
    let app = TestApp::new().await;
    app.user("alice", "pw");
    let headers = [
        "Basic".to_owned(),
        "Basic ".to_owned(),
        "Basic !!!not-base64!!!".to_owned(),
        basic_raw(b"no-colon-here").1,
        basic_raw(b":").1,
        basic_raw(b":pw").1,
        basic_raw(b"alice").1,
        basic_raw(b"alice:pw").1.replace("Basic", "Bearer"),
        "Digest username=\"alice\"".to_owned(),
        "NTLM TlRMTVNTUAAB".to_owned(),
    ];
    for header in headers {
        let resp = app
            .send(with(
                json_request(Method::POST, "/api/message/", &json!({"content": "x"})),
                ("Authorization", header.clone()),
            ))
            .await;
        assert_401(&resp);
    }
    assert_eq!(app.count("message"), 0);
}

#[actix_web::test]
async fn basic_credentials_are_utf8_split_at_the_first_colon() {
    let app = TestApp::new().await;
    let jose = app.user("jos\u{e9}", "pa:ss:w\u{f6}rd");
    let resp = app
        .send(with(
            json_request(Method::POST, "/api/message/", &json!({"content": "ok"})),
            basic("jos\u{e9}", "pa:ss:w\u{f6}rd"),
        ))
        .await;
    assert_eq!(resp.json_with(201)["user"]["id"], json!(jose));
    // The same bytes in Latin-1 are not these credentials.
    let resp = app
        .send(with(
            json_request(Method::POST, "/api/message/", &json!({"content": "no"})),
            basic_raw(b"jos\xe9:pa:ss:w\xf6rd"),
        ))
        .await;
    assert_401(&resp);
    assert_eq!(app.count("message"), 1);
}

#[actix_web::test]
async fn the_401_response_is_exact() {
    let app = TestApp::new().await;
    assert_401(&app.post("/api/message/", json!({"content": "x"})).await);
}

#[actix_web::test]
async fn save_object_hashes_passwords() {
    let app = TestApp::new().await;
    app.user_with("root", "pw", true, true);
    let root = |req: TestRequest| with(req, basic("root", "pw"));
    let resp = app
        .send(root(json_request(
            Method::POST,
            "/api/user/",
            &json!({"username": "carol", "email": "c@x.y", "password": "first"}),
        )))
        .await;
    let carol = resp.json_with(201);
    assert_eq!(
        carol,
        json!({"id": 2, "username": "carol", "join_date": carol["join_date"], "active": true,
               "admin": false})
    );
    let stored = app
        .query_text("SELECT password FROM \"user\" WHERE id = 2")
        .unwrap();
    assert!(
        stored.starts_with("$2") && !stored.contains("first"),
        "{stored}"
    );
    let post_as = |password: &str| {
        with(
            json_request(Method::POST, "/api/message/", &json!({"content": "m"})),
            basic("carol", password),
        )
    };
    app.send(post_as("first")).await.expect(201);
    let resp = app
        .send(root(json_request(
            Method::PUT,
            "/api/user/2/",
            &json!({"password": "second"}),
        )))
        .await;
    assert!(resp.json_with(200).get("password").is_none());
    assert_401(&app.send(post_as("first")).await);
    app.send(post_as("second")).await.expect(201);
    // A PUT without a password keeps it.
    app.send(root(json_request(
        Method::PUT,
        "/api/user/2/",
        &json!({"email": "n@x.y"}),
    )))
    .await
    .expect(200);
    app.send(post_as("second")).await.expect(201);
}

#[actix_web::test]
async fn passwords_over_72_bytes_are_400_and_empty_ones_unusable() {
    let app = TestApp::new().await;
    app.user_with("root", "pw", true, true);
    let long = "é".repeat(37);
    assert_eq!(long.len(), 74);
    let resp = app
        .send(with(
            json_request(
                Method::POST,
                "/api/user/",
                &json!({"username": "long", "email": "l@x.y", "password": long}),
            ),
            basic("root", "pw"),
        ))
        .await;
    assert_fields(&resp, &["password"]);
    assert_eq!(app.count("user"), 1);
    let resp = app
        .send(with(
            json_request(
                Method::POST,
                "/api/user/",
                &json!({"username": "empty", "email": "e@x.y", "password": ""}),
            ),
            basic("root", "pw"),
        ))
        .await;
    resp.expect(201);
    let resp = app
        .send(with(
            json_request(Method::POST, "/api/message/", &json!({"content": "m"})),
            basic("empty", ""),
        ))
        .await;
    assert_401(&resp);
}

// --- AdminAuthentication ------------------------------------------------------------------

#[actix_web::test]
async fn admin_auth_refuses_non_admins_with_the_same_401() {
    let app = TestApp::new().await;
    app.user_with("root", "pw", true, true);
    let alice = app.user("alice", "pw");
    app.user_with("sleepy-admin", "pw", false, true);
    let new_user = json!({"username": "x", "email": "x@y.z"});
    for creds in [
        basic("alice", "pw"),
        basic("sleepy-admin", "pw"),
        basic("root", "bad"),
    ] {
        let requests = [
            json_request(Method::POST, "/api/user/", &new_user),
            json_request(
                Method::PUT,
                &format!("/api/user/{alice}/"),
                &json!({"admin": true}),
            ),
            TestRequest::delete().uri(&format!("/api/user/{alice}/")),
        ];
        for req in requests {
            assert_401(&app.send(with(req, creds.clone())).await);
        }
    }
    assert_eq!(app.count("user"), 3);
    assert_eq!(
        app.query_i64(&format!("SELECT admin FROM \"user\" WHERE id = {alice}")),
        0
    );
    // GET is not protected on /api/user/.
    assert_eq!(
        app.get(&format!("/api/user/{alice}/")).await.json_with(200)["username"],
        json!("alice")
    );
}

#[actix_web::test]
async fn admin_auth_accepts_admins() {
    let app = TestApp::new().await;
    app.user_with("root", "pw", true, true);
    let root = |req: TestRequest| with(req, basic("root", "pw"));
    let resp = app
        .send(root(json_request(
            Method::POST,
            "/api/user/",
            &json!({"username": "dave", "email": "d@x.y"}),
        )))
        .await;
    let dave = resp.json_with(201);
    assert_eq!(
        (dave["admin"].clone(), dave["active"].clone()),
        (json!(false), json!(true))
    );
    let resp = app
        .send(root(json_request(
            Method::PUT,
            "/api/user/2/",
            &json!({"username": "david"}),
        )))
        .await;
    assert_eq!(resp.json_with(200)["username"], json!("david"));
    let resp = app
        .send(root(TestRequest::delete().uri("/api/user/2/")))
        .await;
    assert_eq!(resp.json_with(200), json!({"deleted": 1}));
    assert_eq!(app.count("user"), 1);
}

#[actix_web::test]
async fn admin_auth_can_protect_get() {
    let app = TestApp::with_seed("INSERT INTO apikey VALUES (1, 'k', 's');").await;
    app.user_with("root", "pw", true, true);
    app.user("alice", "pw");
    assert_401(&app.get("/api/apikey/").await);
    assert_401(&app.get("/api/apikey/1/").await);
    assert_401(
        &app.send(with(
            TestRequest::get().uri("/api/apikey/"),
            basic("alice", "pw"),
        ))
        .await,
    );
    let resp = app
        .send(with(
            TestRequest::get().uri("/api/apikey/"),
            basic("root", "pw"),
        ))
        .await;
    assert_eq!(resp.ids(), [1]);
}

// --- ApiKeyAuthentication -----------------------------------------------------------------

const KEYS: &str = "INSERT INTO apikey VALUES (1, 'k1', 's1'), (2, 'k2', 's2');
                    INSERT INTO note VALUES (1, 'n1', '2020-01-01 00:00:00');";

#[actix_web::test]
async fn api_key_is_required_for_every_protected_method() {
    let app = TestApp::with_seed(KEYS).await;
    assert_401(&app.get("/api/note/").await);
    assert_401(&app.get("/api/note/1/").await);
    assert_401(&app.post("/api/note/", json!({"message": "x"})).await);
    assert_401(&app.put("/api/note/1/", json!({"message": "x"})).await);
    assert_401(&app.delete("/api/note/1/").await);
    // Basic credentials are not API keys.
    app.user_with("root", "pw", true, true);
    assert_401(
        &app.send(with(
            TestRequest::get().uri("/api/note/"),
            basic("root", "pw"),
        ))
        .await,
    );
    assert_eq!(
        app.query_text("SELECT message FROM note"),
        Some("n1".into())
    );
}

#[actix_web::test]
async fn api_key_in_the_query_string() {
    let app = TestApp::with_seed(KEYS).await;
    assert_eq!(app.get("/api/note/?key=k1&secret=s1").await.ids(), [1]);
    let resp = app
        .post("/api/note/?key=k2&secret=s2", json!({"message": "q"}))
        .await;
    assert_eq!(resp.json_with(201)["message"], json!("q"));
    let resp = app
        .put(
            "/api/note/2/?key=k1&secret=s1",
            json!({"message": "edited"}),
        )
        .await;
    assert_eq!(resp.json_with(200)["message"], json!("edited"));
    let resp = app.delete("/api/note/2/?secret=s1&key=k1").await;
    assert_eq!(resp.json_with(200), json!({"deleted": 1}));
}

#[actix_web::test]
async fn api_key_in_headers() {
    let app = TestApp::with_seed(KEYS).await;
    let keyed = |req: TestRequest| {
        req.insert_header(("key", "k1"))
            .insert_header(("secret", "s1"))
    };
    assert_eq!(
        app.send(keyed(TestRequest::get().uri("/api/note/")))
            .await
            .ids(),
        [1]
    );
    let resp = app
        .send(keyed(json_request(
            Method::POST,
            "/api/note/",
            &json!({"message": "h"}),
        )))
        .await;
    resp.expect(201);
    let resp = app
        .send(keyed(TestRequest::delete().uri("/api/note/2/")))
        .await;
    assert_eq!(resp.json_with(200), json!({"deleted": 1}));
}

#[actix_web::test]
async fn api_key_in_form_fields() {
    let app = TestApp::with_seed(KEYS).await;
    let resp = app
        .send(form_request(
            Method::POST,
            "/api/note/",
            &[
                ("key", "k1"),
                ("secret", "s1"),
                ("data", r#"{"message": "form"}"#),
            ],
        ))
        .await;
    assert_eq!(resp.json_with(201)["message"], json!("form"));
    let resp = app
        .send(multipart_request(
            Method::PUT,
            "/api/note/2/",
            &[
                ("data", r#"{"message": "multi"}"#),
                ("secret", "s2"),
                ("key", "k2"),
            ],
        ))
        .await;
    assert_eq!(resp.json_with(200)["message"], json!("multi"));
}

#[actix_web::test]
async fn api_key_wrong_pairs_are_401() {
    let app = TestApp::with_seed(KEYS).await;
    let pairs: [&[(&str, &str)]; 7] = [
        &[("key", "k1"), ("secret", "s1x")],
        &[("key", "k1"), ("secret", "s2")],
        &[("key", "k2"), ("secret", "s1")],
        &[("key", "k1")],
        &[("secret", "s1")],
        &[("key", ""), ("secret", "")],
        &[("key", "K1"), ("secret", "s1")],
    ];
    // Each pair from an address of its own: wrong pairs are throttled per address and key.
    for (i, pair) in pairs.into_iter().enumerate() {
        let peer: std::net::SocketAddr = format!("127.0.1.{i}:40000").parse().expect("an address");
        let body = json!({"message": "x"});
        let req = json_request(Method::POST, &url("/api/note/", pair), &body);
        assert_401(&app.send(req.peer_addr(peer)).await);
        let mut req = json_request(Method::POST, "/api/note/", &body);
        for (k, v) in pair {
            req = req.insert_header((*k, *v));
        }
        assert_401(&app.send(req.peer_addr(peer)).await);
        let mut fields = pair.to_vec();
        fields.push(("data", r#"{"message": "x"}"#));
        let req = form_request(Method::POST, "/api/note/", &fields);
        assert_401(&app.send(req.peer_addr(peer)).await);
    }
    assert_eq!(app.count("note"), 1);
}

#[actix_web::test]
async fn api_key_sources_are_never_mixed() {
    let app = TestApp::with_seed(KEYS).await;
    // Key in the query, secret in a header.
    let resp = app
        .send(
            TestRequest::get()
                .uri("/api/note/?key=k1")
                .insert_header(("secret", "s1")),
        )
        .await;
    assert_401(&resp);
    // Key in a header, secret in the form.
    let resp = app
        .send(
            form_request(
                Method::POST,
                "/api/note/",
                &[("secret", "s1"), ("data", r#"{"message": "x"}"#)],
            )
            .insert_header(("key", "k1")),
        )
        .await;
    assert_401(&resp);
    // Key in the query, secret in the form.
    let resp = app
        .send(form_request(
            Method::POST,
            "/api/note/?key=k1",
            &[("secret", "s1"), ("data", r#"{"message": "x"}"#)],
        ))
        .await;
    assert_401(&resp);
    assert_eq!(app.count("note"), 1);
}

#[actix_web::test]
async fn api_key_the_first_complete_source_is_used() {
    let app = TestApp::with_seed(KEYS).await;
    // A complete but wrong pair in the query hides a right pair in the headers.
    let resp = app
        .send(
            TestRequest::get()
                .uri("/api/note/?key=k1&secret=wrong")
                .insert_header(("key", "k1"))
                .insert_header(("secret", "s1")),
        )
        .await;
    assert_401(&resp);
    // An incomplete query pair is skipped: the headers are used.
    let resp = app
        .send(
            TestRequest::get()
                .uri("/api/note/?key=nope")
                .insert_header(("key", "k2"))
                .insert_header(("secret", "s2")),
        )
        .await;
    assert_eq!(resp.ids(), [1]);
    // A complete wrong pair in the headers hides a right pair in the form.
    let resp = app
        .send(
            form_request(
                Method::POST,
                "/api/note/",
                &[
                    ("key", "k1"),
                    ("secret", "s1"),
                    ("data", r#"{"message": "x"}"#),
                ],
            )
            .insert_header(("key", "k1"))
            .insert_header(("secret", "bad")),
        )
        .await;
    assert_401(&resp);
    // A right pair in the query wins over a wrong one in the form.
    let resp = app
        .send(form_request(
            Method::POST,
            "/api/note/?key=k1&secret=s1",
            &[
                ("key", "k1"),
                ("secret", "bad"),
                ("data", r#"{"message": "q"}"#),
            ],
        ))
        .await;
    resp.expect(201);
    assert_eq!(app.count("note"), 2);
}

// --- RestrictOwnerResource ----------------------------------------------------------------

async fn owners() -> (TestApp, i64, i64) {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let bob = app.user("bob", "pw");
    app.user_with("root", "pw", true, true);
    (app, alice, bob)
}

#[actix_web::test]
async fn post_stamps_the_authenticated_user_as_owner() {
    let (app, alice, bob) = owners().await;
    for payload in [
        json!({"content": "a", "user_id": bob}),
        json!({"content": "b", "user": bob}),
        json!({"content": "c", "user": 999}),
        json!({"content": "d", "user_id": "not even a number"}),
        json!({"content": "e"}),
    ] {
        let resp = app
            .send(with(
                json_request(Method::POST, "/api/message/", &payload),
                basic("alice", "pw"),
            ))
            .await;
        assert_eq!(resp.json_with(201)["user"]["id"], json!(alice), "{payload}");
    }
    assert_eq!(
        app.query_i64(&format!(
            "SELECT COUNT(*) FROM message WHERE user_id = {alice}"
        )),
        5
    );
    assert_eq!(app.count("message"), 5);
}

#[actix_web::test]
async fn only_the_owner_may_put_or_delete() {
    let (app, alice, bob) = owners().await;
    app.sql(&format!(
        "INSERT INTO message VALUES (1, {alice}, 'mine', '2020-01-01 00:00:00');"
    ));
    let forbidden = json!({"error": "Forbidden"});
    for who in ["bob", "root"] {
        let resp = app
            .send(with(
                json_request(
                    Method::PUT,
                    "/api/message/1/",
                    &json!({"content": "hacked"}),
                ),
                basic(who, "pw"),
            ))
            .await;
        assert_eq!(resp.json_with(403), forbidden, "{who}");
        let resp = app
            .send(with(
                TestRequest::delete().uri("/api/message/1/"),
                basic(who, "pw"),
            ))
            .await;
        assert_eq!(resp.json_with(403), forbidden, "{who}");
    }
    assert_eq!(
        app.query_text("SELECT content FROM message"),
        Some("mine".into())
    );
    // The owner key in a PUT body is ignored: alice cannot give the message away.
    let resp = app
        .send(with(
            json_request(
                Method::PUT,
                "/api/message/1/",
                &json!({"content": "edited", "user_id": bob}),
            ),
            basic("alice", "pw"),
        ))
        .await;
    let m = resp.json_with(200);
    assert_eq!(
        (m["content"].clone(), m["user"]["id"].clone()),
        (json!("edited"), json!(alice))
    );
    let resp = app
        .send(with(
            TestRequest::delete().uri("/api/message/1/"),
            basic("alice", "pw"),
        ))
        .await;
    assert_eq!(resp.json_with(200), json!({"deleted": 1}));
    assert_eq!(app.count("message"), 0);
}

#[actix_web::test]
async fn a_custom_owner_field() {
    let (app, alice, bob) = owners().await;
    let carol = app.user("carol", "pw");
    let resp = app
        .send(with(
            json_request(
                Method::POST,
                "/v2/follow/",
                &json!({"to_user_id": carol, "from_user_id": bob}),
            ),
            basic("alice", "pw"),
        ))
        .await;
    assert_eq!(
        resp.json_with(201),
        json!({"id": 1, "from_user_id": alice, "to_user_id": carol})
    );
    for who in ["bob", "carol"] {
        let resp = app
            .send(with(
                json_request(Method::PUT, "/v2/follow/1/", &json!({"to_user_id": bob})),
                basic(who, "pw"),
            ))
            .await;
        assert_error(&resp, 403);
        let resp = app
            .send(with(
                TestRequest::delete().uri("/v2/follow/1/"),
                basic(who, "pw"),
            ))
            .await;
        assert_error(&resp, 403);
    }
    let resp = app
        .send(with(
            json_request(Method::PUT, "/v2/follow/1/", &json!({"to_user_id": bob})),
            basic("alice", "pw"),
        ))
        .await;
    assert_eq!(
        resp.json_with(200),
        json!({"id": 1, "from_user_id": alice, "to_user_id": bob})
    );
    // /v2's default authentication is UserAuthentication: reads are open.
    assert_eq!(app.get("/v2/follow/").await.ids(), [1]);
    assert_401(&app.post("/v2/follow/", json!({"to_user_id": bob})).await);
    let resp = app
        .send(with(
            TestRequest::delete().uri("/v2/follow/1/"),
            basic("alice", "pw"),
        ))
        .await;
    assert_eq!(resp.json_with(200), json!({"deleted": 1}));
}

/// Wrong API-key pairs are throttled as wrong passwords are: the 6th failure for one key
/// from one address is 429 with `Retry-After` (even with the right secret), other addresses
/// go on, and the 51st failure from one address, whatever the keys, is 429 too.
#[actix_web::test]
async fn wrong_api_key_secrets_are_throttled_per_address() {
    let app = TestApp::with_seed(KEYS).await;
    let get = |ip: &str, key: &str, secret: &str| {
        TestRequest::get()
            .uri(&url("/api/note/", &[("key", key), ("secret", secret)]))
            .peer_addr(format!("{ip}:40000").parse().expect("an address"))
    };
    for i in 0..5 {
        assert_401(&app.send(get("127.0.0.2", "k1", &format!("guess{i}"))).await);
    }
    let resp = app.send(get("127.0.0.2", "k1", "s1")).await;
    assert_eq!(resp.code(), 429, "{}", resp.text());
    let wait: u64 = resp
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .expect("a Retry-After in seconds");
    assert!((55..=60).contains(&wait), "about a minute: {wait}");
    assert_eq!(app.send(get("127.0.0.3", "k1", "s1")).await.ids(), [1]);
    assert_eq!(app.send(get("127.0.0.2", "k2", "s2")).await.ids(), [1]);
    for i in 0..50 {
        let resp = app
            .send(get("127.0.0.4", &format!("key{i}"), "guess"))
            .await;
        assert_eq!(resp.code(), 401, "attempt {i}");
    }
    assert_eq!(app.send(get("127.0.0.4", "k2", "s2")).await.code(), 429);
    assert_eq!(app.send(get("127.0.0.5", "k2", "s2")).await.ids(), [1]);
}
