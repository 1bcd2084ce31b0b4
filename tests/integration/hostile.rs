//! Bounded cost at the level of requests (docs/contract.md#bounded-cost): bounded work per
//! parameter, engine limits that never surface as a 5xx, U+0000 in text, cursors, secrets that
//! no filter reaches, authentication that gives its connection back before it checks a
//! password, and the guard's refusals and headers. The socket-level bounds (timeouts,
//! unread responses, crash durability) are checked against the release binary by
//! `scripts/hostile.py` and `scripts/crash.py`.

use actix_web::http::Method;
use actix_web::test::TestRequest;
use actix_web::{web, App, HttpResponse};
use base64::Engine as _;
use plover::auth::{AuthRequest, Authenticator, Headers, UserAuthentication};
use plover::db::LazyConn;
use plover::prelude::{Authentication, Database, Resource, RestApi};
use plover::server::{Guard, ResponseMemory};
use plover_tests::*;
use serde_json::json;

const PW: &str = "pw";

/// A query string of `key=value` pairs.
fn query(pairs: &[(String, String)]) -> String {
    let mut out = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        out.append_pair(k, v);
    }
    out.finish()
}

/// `count` values `1,2,...` as one comma-separated text.
fn numbers(count: usize) -> String {
    (1..=count)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

// --- ordering --------------------------------------------------------------------------------

#[actix_web::test]
async fn an_ordering_naming_a_column_twice_is_400_everywhere() {
    let app = TestApp::new().await;
    for uri in [
        "/api/sample/?ordering=qty,qty",
        "/api/sample/?ordering=-id,id",
        "/api/message/?ordering=user,user_id",
    ] {
        assert_param_error(&app.get(uri).await, "ordering");
    }
    // Twenty-eight terms: refused at once instead of a query whose cost doubles per term.
    let long = vec!["qty"; 28].join(",");
    assert_param_error(
        &app.get(&format!("/api/sample/?ordering={long}")).await,
        "ordering",
    );
    // Every distinct column once is fine.
    app.get("/api/sample/?ordering=-qty,name,big,ratio,flag,body,remark,day,stamp,id")
        .await
        .expect(200);

    app.user_with("root", PW, true, true);
    let admin = app.browser();
    admin.login("root", PW).await.expect(302);
    let resp = admin.get("/admin/amodel/?ordering=a_field,-a_field").await;
    assert_eq!(resp.code(), 400, "{}", resp.text());
}

// --- limits on filters -----------------------------------------------------------------------

/// 64 distinct, valid filter conditions on `sample`.
fn sixty_four_conditions() -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    for field in ["id", "qty", "big", "ratio", "name", "body", "remark"] {
        let value = if ["name", "body", "remark"].contains(&field) {
            "x"
        } else {
            "0"
        };
        pairs.push((field.to_owned(), value.to_owned()));
        for op in ["eq", "ne", "lt", "lte", "gt", "gte", "in"] {
            pairs.push((format!("{field}__{op}"), value.to_owned()));
        }
    }
    for key in [
        "name__like",
        "name__ilike",
        "body__like",
        "body__ilike",
        "remark__like",
        "remark__ilike",
    ] {
        pairs.push((key.to_owned(), "%x%".to_owned()));
    }
    pairs.push(("id__is".to_owned(), "null".to_owned()));
    pairs.push(("remark__is".to_owned(), "null".to_owned()));
    pairs
}

#[actix_web::test]
async fn more_than_64_filter_conditions_is_400_naming_the_first_one_over() {
    let app = TestApp::new().await;
    let mut pairs = sixty_four_conditions();
    assert_eq!(pairs.len(), 64);
    app.get(&format!("/api/sample/?{}", query(&pairs)))
        .await
        .expect(200);
    pairs.push(("day__is".to_owned(), "null".to_owned()));
    assert_param_error(
        &app.get(&format!("/api/sample/?{}", query(&pairs))).await,
        "day__is",
    );
    // Repeating a key adds values, not conditions: 200 repetitions of one key are one condition.
    let repeated: Vec<_> = (0..200)
        .map(|n| ("qty__lt".to_owned(), n.to_string()))
        .collect();
    app.get(&format!("/api/sample/?{}", query(&repeated)))
        .await
        .expect(200);
}

#[actix_web::test]
async fn an_in_list_over_1000_values_is_400_also_across_repetitions() {
    let app = TestApp::with_seed(
        "INSERT INTO sample (id, name, qty, body, stamp) VALUES (7, 'n', 1, '', '2020-01-01 00:00:00');",
    )
    .await;
    let ok = app
        .get(&format!("/api/sample/?id__in={}", numbers(1000)))
        .await;
    assert_eq!(ok.ids(), vec![7]);
    assert_param_error(
        &app.get(&format!("/api/sample/?id__in={}", numbers(1001)))
            .await,
        "id__in",
    );
    let split = format!("/api/sample/?id__in={}&id__in=1001", numbers(1000));
    assert_param_error(&app.get(&split).await, "id__in");
    // Long lists of integers (SQLite reads them as one JSON array): `in` and repeated `ne`.
    let without = |from: usize, to: usize| {
        let pairs: Vec<String> = (from..=to).map(|n| format!("id__ne={n}")).collect();
        format!("/api/sample/?{}", pairs.join("&"))
    };
    assert_eq!(app.get(&without(1, 100)).await.ids(), Vec::<i64>::new());
    assert_eq!(app.get(&without(8, 107)).await.ids(), vec![7]);
    let near = format!(
        "/api/sample/?id__in={}",
        numbers(100).replace(",7,", ",70000,")
    );
    assert_eq!(app.get(&near).await.ids(), Vec::<i64>::new());
}

#[actix_web::test]
async fn more_than_4000_filter_values_in_all_is_400_naming_the_key_that_passes_it() {
    let app = TestApp::new().await;
    let mut pairs: Vec<(String, String)> = ["id__in", "qty__in", "big__in", "name__in"]
        .iter()
        .map(|k| (k.to_string(), numbers(1000)))
        .collect();
    app.get(&format!("/api/sample/?{}", query(&pairs)))
        .await
        .expect(200);
    pairs.push(("body__in".to_owned(), "a".to_owned()));
    assert_param_error(
        &app.get(&format!("/api/sample/?{}", query(&pairs))).await,
        "body__in",
    );
}

#[actix_web::test]
async fn a_filter_value_over_10000_characters_is_400() {
    let app = TestApp::new().await;
    // Characters, not bytes: 10,000 two-byte characters pass.
    let at_limit = format!("%{}%", "é".repeat(9_998));
    let pairs = vec![("name__like".to_owned(), at_limit)];
    app.get(&format!("/api/sample/?{}", query(&pairs)))
        .await
        .expect(200);
    let over = vec![("name__like".to_owned(), "%".repeat(10_001))];
    assert_param_error(
        &app.get(&format!("/api/sample/?{}", query(&over))).await,
        "name__like",
    );
}

#[actix_web::test]
async fn more_than_16_patterns_in_one_request_is_400() {
    let app = TestApp::with_seed(
        "INSERT INTO sample (id, name, qty, body, remark, stamp) VALUES (1, 'abc', 5, 'xyz', 'r', '2020-01-01 00:00:00');",
    )
    .await;
    // 16 patterns over three keys, repeated: served.
    let mut pairs: Vec<(String, String)> = (0..8)
        .map(|_| ("name__ilike".to_owned(), "%b%".to_owned()))
        .chain((0..6).map(|_| ("body__like".to_owned(), "%y%".to_owned())))
        .chain((0..2).map(|_| ("remark__like".to_owned(), "%".to_owned())))
        .collect();
    pairs.pop();
    pairs.push(("name__like".to_owned(), "a%".to_owned()));
    let served = app.get(&format!("/api/sample/?{}", query(&pairs))).await;
    assert_eq!(
        served.json_with(200)["objects"].as_array().map(Vec::len),
        Some(1)
    );
    // The 17th pattern, wherever it comes, is 400 naming its key.
    pairs.push(("body__ilike".to_owned(), "%".to_owned()));
    assert_param_error(
        &app.get(&format!("/api/sample/?{}", query(&pairs))).await,
        "body__ilike",
    );
    // Other operators do not count.
    let others: Vec<(String, String)> = (0..40)
        .map(|i| ("name__ne".to_owned(), format!("v{i}")))
        .collect();
    app.get(&format!("/api/sample/?{}", query(&others)))
        .await
        .expect(200);
}

#[actix_web::test]
async fn a_long_repeated_filter_stays_inside_the_engines_expression_limits() {
    let app = TestApp::with_seed(
        "INSERT INTO sample (id, name, qty, body, stamp) VALUES (1, 'n', 5, '', '2020-01-01 00:00:00');",
    )
    .await;
    // 1,000 values of `lt` combine with OR: as a chain, 1,000 levels deep (SQLite's limit);
    // as a balanced tree, ten.
    let pairs: Vec<_> = (0..1000)
        .map(|n| ("qty__lt".to_owned(), (n - 993).to_string()))
        .collect();
    let resp = app.get(&format!("/api/sample/?{}", query(&pairs))).await;
    assert_eq!(resp.ids(), vec![1], "5 < 5 is false, 5 < 6 is true");
    let ne: Vec<_> = (0..1000)
        .map(|n| ("qty__ne".to_owned(), n.to_string()))
        .filter(|(_, v)| v != "5")
        .collect();
    assert_eq!(
        app.get(&format!("/api/sample/?{}", query(&ne))).await.ids(),
        vec![1]
    );
}

#[actix_web::test]
async fn an_admin_bulk_action_over_1000_rows_is_400_and_deletes_nothing() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'a1');").await;
    app.user_with("root", PW, true, true);
    let admin = app.browser();
    admin.login("root", PW).await.expect(302);
    let token = admin.csrf("/admin/").await;
    let ids: Vec<String> = (1..=1001).map(|n| n.to_string()).collect();
    let mut fields: Vec<(&str, &str)> = ids.iter().map(|id| ("id", id.as_str())).collect();
    fields.push(("action", "delete"));
    fields.push(("confirm", "yes"));
    fields.push(("csrf_token", &token));
    let resp = admin.post_form("/admin/amodel/", &fields).await;
    assert_eq!(resp.code(), 400, "{}", resp.text());
    assert_eq!(app.count("amodel"), 1);
}

// --- U+0000 ----------------------------------------------------------------------------------

#[actix_web::test]
async fn text_holding_u0000_is_400_in_filters_bodies_forms_keys_and_lookups() {
    let app = TestApp::with_seed("INSERT INTO apikey VALUES (1, 'k', 's');").await;
    assert_param_error(&app.get("/api/sample/?name=a%00b").await, "name");
    assert_param_error(&app.get("/api/sample/?name__in=a,b%00").await, "name__in");
    let resp = app
        .post("/api/sample/", json!({"name": "a\u{0}b", "qty": 1}))
        .await;
    assert_fields(&resp, &["name"]);
    assert_eq!(app.count("sample"), 0);
    let resp = app
        .send(TestRequest::get().uri("/api/note/?key=k%00&secret=s"))
        .await;
    assert_param_error(&resp, "key");

    app.user_with("root", PW, true, true);
    let admin = app.browser();
    admin.login("root", PW).await.expect(302);
    let token = admin.csrf("/admin/amodel/add/").await;
    let resp = admin
        .post_form(
            "/admin/amodel/add/",
            &[("a_field", "a\u{0}b"), ("csrf_token", &token)],
        )
        .await;
    assert_eq!(resp.code(), 400, "{}", resp.text());
    assert_eq!(app.count("amodel"), 0);
    let resp = admin.get("/admin/message/lookup/user/?q=%00").await;
    assert_param_error(&resp, "q");
}

// --- cursors ---------------------------------------------------------------------------------

fn cursor(json: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
}

#[actix_web::test]
async fn a_cursor_out_of_its_columns_range_or_at_the_last_page_number_is_400() {
    let app = TestApp::new().await;
    // `?ordering=qty` pages by (qty, id); qty is a 32-bit column.
    for token in [
        cursor("[2, [4294967296, 1]]"),
        cursor("[2, [1, 1e400]]"),
        cursor(&format!("[{}, [1, 1]]", i64::MAX)),
        cursor("[2, [1]]"),
        "not-base64!".to_owned(),
    ] {
        let resp = app
            .get(&format!("/api/cursor/?ordering=qty&cursor={token}"))
            .await;
        assert_param_error(&resp, "cursor");
    }
    let resp = app
        .get(&format!(
            "/api/cursor/?ordering=qty&cursor={}",
            cursor("[5, [1, 1]]")
        ))
        .await;
    assert_eq!(resp.json_with(200)["meta"]["page"], 5);
    // A page number near the end of the range is an empty page, not a wrapped link.
    let resp = app.get(&format!("/api/sample/?page={}", i64::MAX)).await;
    let body = resp.json_with(200);
    assert_eq!(body["meta"]["next"], "");
    assert!(body["meta"]["previous"]
        .as_str()
        .is_some_and(|p| p.contains(&(i64::MAX - 1).to_string())));
}

// --- secrets ---------------------------------------------------------------------------------

#[actix_web::test]
async fn the_password_hash_is_unreachable_from_every_resource_and_join() {
    let app = TestApp::new().await;
    app.user("alice", PW);
    let bob = app.user("bob", PW);
    let auth = basic("alice", PW);
    app.send(
        TestRequest::post()
            .uri("/v2/follow/")
            .insert_header(auth.clone())
            .set_json(json!({"to_user_id": bob})),
    )
    .await
    .expect(201);
    for (uri, param) in [
        (
            "/v2/follow/?to_user__password__like=%242b%25",
            "to_user__password__like",
        ),
        ("/v2/follow/?from_user__password=x", "from_user__password"),
        (
            "/v2/follow/?to_user__email__like=%25",
            "to_user__email__like",
        ),
        ("/v2/follow/?from_user__email=x", "from_user__email"),
    ] {
        let resp = app
            .send(TestRequest::get().uri(uri).insert_header(auth.clone()))
            .await;
        assert_param_error(&resp, param);
    }
    // Through the read-only relationship API and the nested user, and as an ordering.
    assert_param_error(
        &app.get("/api/relationship/?to_user__password__like=%25")
            .await,
        "to_user__password__like",
    );
    assert_param_error(&app.get("/api/user/?ordering=password").await, "ordering");
    // Never serialized, nested or not.
    for uri in ["/api/relationship/", "/v2/follow/"] {
        let resp = app
            .send(TestRequest::get().uri(uri).insert_header(auth.clone()))
            .await;
        assert!(!resp.text().contains("$2"), "{}", resp.text());
    }
}

mod unsafe_user {
    //! A user model whose password field is not write-only.
    use plover::prelude::*;

    diesel::table! {
        leaky (id) { id -> Integer, username -> Text, password -> Text, }
    }

    /// Its hash could be listed and searched.
    #[derive(Debug, Clone, RestModel)]
    #[diesel(table_name = leaky)]
    pub struct Leaky {
        pub id: i32,
        pub username: String,
        pub password: String,
    }

    impl UserModel for Leaky {
        fn username(&self) -> &str {
            &self.username
        }
        fn password_hash(&self) -> &str {
            &self.password
        }
        fn password_hash_mut(&mut self) -> &mut String {
            &mut self.password
        }
    }
}

#[test]
#[should_panic(expected = "must be write-only: mark it #[rest(write_only)]")]
fn an_accounts_component_refuses_a_user_model_with_a_readable_password() {
    let db = plover::db::Database::from_url("sqlite://unused.db").expect("a URL");
    let _ = plover::accounts::Auth::<unsafe_user::Leaky>::new(db);
}

// --- authentication outside the pool --------------------------------------------------------

/// The headers of a request with these Basic credentials.
fn basic_headers(username: &str, password: &str) -> Headers {
    let (name, value) = basic(username, password);
    assert_eq!(name, "Authorization");
    [(
        actix_web::http::header::HeaderName::from_static("authorization"),
        value.parse().expect("a header value"),
    )]
    .into_iter()
    .collect()
}

#[actix_web::test]
async fn basic_authentication_gives_the_connection_back_before_the_password_check() {
    let app = TestApp::with_options("", "max_connections=1&connection_timeout=0.5").await;
    app.user("alice", PW);
    let checker = UserAuthentication::new(&app.auth);
    let db = app.db.clone();
    let outcome = actix_web::web::block(move || {
        let headers = basic_headers("alice", "wrong");
        let req = AuthRequest {
            method: &Method::POST,
            client: None,
            headers: &headers,
            query: &[],
            form: &[],
        };
        let mut lazy = LazyConn::new(&db);
        let refused = checker.authorize(&req, &mut lazy).is_err();
        // The one connection of the pool is free again: another checkout gets it at once.
        let free = db.run_blocking(|_| Ok(())).is_ok();
        (refused, free, format!("{lazy:?}"))
    })
    .await
    .expect("the blocking task");
    assert_eq!(
        outcome,
        (
            true,
            true,
            "LazyConn { checked_out: false, writes: false }".into()
        )
    );
}

/// Credentials the cache of verified ones recognizes need no password check: the connection
/// that found the user stays with the request, which writes on it.
#[actix_web::test]
async fn basic_authentication_keeps_the_connection_for_known_credentials() {
    let app = TestApp::with_options("", "max_connections=1&connection_timeout=0.5").await;
    app.user("alice", PW);
    let checker = UserAuthentication::new(&app.auth);
    let db = app.db.clone();
    let outcome = actix_web::web::block(move || {
        let headers = basic_headers("alice", PW);
        let req = AuthRequest {
            method: &Method::POST,
            client: None,
            headers: &headers,
            query: &[],
            form: &[],
        };
        let mut first = LazyConn::new(&db);
        let checked = checker.authorize(&req, &mut first).is_ok();
        let first = format!("{first:?}");
        let mut second = LazyConn::new(&db);
        let known = checker.authorize(&req, &mut second).is_ok();
        (checked, first, known, format!("{second:?}"))
    })
    .await
    .expect("the blocking task");
    assert_eq!(
        outcome,
        (
            true,
            "LazyConn { checked_out: false, writes: false }".into(),
            true,
            "LazyConn { checked_out: true, writes: false }".into()
        )
    );
}

// --- the guard -------------------------------------------------------------------------------

async fn guarded() -> TestService {
    TestService::new(
        App::new()
            .wrap(Guard::default())
            .route(
                "/page",
                web::get().to(|| async {
                    HttpResponse::Ok()
                        .content_type("text/html; charset=utf-8")
                        .body("<p>hi</p>")
                }),
            )
            .route(
                "/data",
                web::get().to(|| async { HttpResponse::Ok().json(1) }),
            ),
    )
    .await
}

#[actix_web::test]
async fn the_guard_forbids_framing_of_html_and_sniffing_of_everything() {
    let service = guarded().await;
    let page = service.send(TestRequest::get().uri("/page")).await;
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
    assert_eq!(
        page.header("content-security-policy"),
        Some("frame-ancestors 'none'")
    );
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    let data = service.send(TestRequest::get().uri("/data")).await;
    assert_eq!(data.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(data.header("x-frame-options"), None);
    let missing = service.send(TestRequest::get().uri("/nope")).await;
    assert_eq!(missing.header("x-content-type-options"), Some("nosniff"));
}

#[actix_web::test]
async fn the_guard_answers_upgrades_and_connect_at_once() {
    let service = guarded().await;
    let upgrade = service
        .send(
            TestRequest::get()
                .uri("/data")
                .insert_header(("Connection", "Upgrade"))
                .insert_header(("Upgrade", "websocket")),
        )
        .await;
    assert_error(&upgrade, 400);
    let connect = service
        .send(TestRequest::default().method(Method::CONNECT).uri("/data"))
        .await;
    assert_error(&connect, 400);
}

#[actix_web::test]
async fn large_responses_waiting_for_their_clients_share_a_bounded_budget() {
    let memory = ResponseMemory::new(300 << 10);
    let service = actix_web::test::init_service(
        App::new()
            .wrap(Guard::default().response_memory(memory.clone()))
            .route(
                "/big",
                web::get().to(|| async { HttpResponse::Ok().body(vec![b'x'; 200 << 10]) }),
            )
            .route("/small", web::get().to(|| async { "ok" })),
    )
    .await;
    let call_from = |uri: &str, ip: &str| {
        let peer = format!("{ip}:40000").parse().expect("an address");
        let req = TestRequest::get().uri(uri).peer_addr(peer).to_request();
        actix_web::test::call_service(&service, req)
    };
    let call = |uri: &str| call_from(uri, "127.0.0.2");
    // A client that does not read: its body stays reserved.
    let unread = call("/big").await;
    assert_eq!(unread.status(), 200);
    assert_eq!(memory.held(), 200 << 10);
    // A second large body for another client does not fit: shed at once, its memory dropped.
    let shed = call_from("/big", "127.0.0.3").await;
    assert_eq!(shed.status(), 503);
    assert_eq!(
        shed.headers().get("retry-after").map(|v| v.as_bytes()),
        Some(&b"1"[..])
    );
    let body: serde_json::Value = actix_web::test::read_body_json(shed).await;
    assert_eq!(body, json!({"error": "The server is busy; try again"}));
    assert_eq!(memory.held(), 200 << 10);
    // Small answers are not counted.
    assert_eq!(call("/small").await.status(), 200);
    // The slow client goes away (sent, or dropped by the send timeout): the budget is back.
    drop(unread);
    assert_eq!(memory.held(), 0);
    let read = actix_web::test::read_body(call("/big").await).await;
    assert_eq!(read.len(), 200 << 10);
    assert_eq!(memory.held(), 0);
}

#[actix_web::test]
async fn one_client_holds_at_most_its_share_of_the_response_budget() {
    // A budget of 1 MiB, a quarter of it per client address.
    let memory = ResponseMemory::new(1 << 20).client_share(0.25);
    let service = actix_web::test::init_service(
        App::new()
            .wrap(Guard::default().response_memory(memory.clone()))
            .route(
                "/big",
                web::get().to(|| async { HttpResponse::Ok().body(vec![b'x'; 200 << 10]) }),
            ),
    )
    .await;
    let call = |ip: &str| {
        let peer = format!("{ip}:40000").parse().expect("an address");
        let req = TestRequest::get().uri("/big").peer_addr(peer).to_request();
        actix_web::test::call_service(&service, req)
    };
    // 127.0.0.2 does not read: its first body is held; a second one would pass its share.
    let unread = call("127.0.0.2").await;
    assert_eq!(unread.status(), 200);
    let refused = call("127.0.0.2").await;
    assert_eq!(refused.status(), 429);
    assert_eq!(
        refused.headers().get("retry-after").map(|v| v.as_bytes()),
        Some(&b"1"[..])
    );
    assert_eq!(memory.held(), 200 << 10);
    // Other clients are served meanwhile, from the rest of the budget.
    let others = [call("127.0.0.3").await, call("127.0.0.4").await];
    assert!(others.iter().all(|r| r.status() == 200));
    assert_eq!(memory.held(), 600 << 10);
    drop(others);
    drop(unread);
    assert_eq!(memory.held(), 0);
    assert_eq!(
        call("127.0.0.2").await.status(),
        200,
        "its share is free again"
    );
}

#[actix_web::test]
async fn streamed_responses_hold_each_large_piece_until_the_connection_takes_it() {
    use actix_web::body::MessageBody;
    use actix_web::web::Bytes;

    const PIECE: usize = 200 << 10;
    let memory = ResponseMemory::new(300 << 10);
    let service = actix_web::test::init_service(
        App::new()
            .wrap(Guard::default().response_memory(memory.clone()))
            .route(
                "/stream",
                web::get().to(|| async {
                    let pieces =
                        (0..3).map(|_| Ok::<_, std::io::Error>(Bytes::from(vec![b'x'; PIECE])));
                    HttpResponse::Ok().streaming(futures_util::stream::iter(pieces))
                }),
            ),
    )
    .await;
    let call =
        || actix_web::test::call_service(&service, TestRequest::get().uri("/stream").to_request());
    // The next slice of a body, as the connection takes it.
    async fn next<B: MessageBody>(
        body: &mut std::pin::Pin<Box<B>>,
    ) -> Option<Result<Bytes, B::Error>> {
        std::future::poll_fn(|cx| body.as_mut().poll_next(cx)).await
    }

    // Nothing is held before the body is read; a piece is held from its first slice taken...
    let reading = call().await;
    assert_eq!(reading.status(), 200);
    assert_eq!(memory.held(), 0);
    let mut reading = Box::pin(reading.into_body());
    let slice = next(&mut reading)
        .await
        .and_then(Result::ok)
        .expect("a slice");
    assert_eq!(slice.len(), 64 << 10);
    assert_eq!(memory.held(), PIECE);

    // ...so another streamed response's piece does not fit: that body ends with an error (the
    // connection is closed), and holds nothing.
    let shed = call().await;
    assert_eq!(shed.status(), 200);
    let mut shed = Box::pin(shed.into_body());
    assert!(matches!(next(&mut shed).await, Some(Err(_))));
    assert_eq!(memory.held(), PIECE);

    // Read to its end, the first body gives its pieces back one by one.
    let mut read = slice.len();
    while let Some(slice) = next(&mut reading).await {
        read += slice.expect("a slice").len();
        assert!(memory.held() <= PIECE);
    }
    assert_eq!(read, 3 * PIECE);
    assert_eq!(memory.held(), 0);
}

// --- multipart framing (found by fuzzing) ------------------------------------------------------

#[actix_web::test]
async fn a_multipart_body_the_parser_would_choke_on_is_400() {
    let app = TestApp::new().await;
    let cases: [(&str, &str); 3] = [
        // Panicked in the parser: a line `--` with a boundary under four characters.
        (
            "multipart/form-data; boundary=",
            "--\nContent-Disposition: form-data; name=\"data\"\n\n{}\n----\n",
        ),
        (
            "multipart/form-data; boundary=b",
            "--b\nContent-Disposition: form-data; name=\"data\"\n\n{}\n--\n--b--\n",
        ),
        // Never answered: the close delimiter missing after a final line break.
        (
            "multipart/form-data; boundary=bbbb",
            "--bbbb\r\nContent-Disposition: form-data; name=\"data\"\r\n\r\n{}\r\n",
        ),
    ];
    for (content_type, body) in cases {
        let resp = app
            .send(
                TestRequest::post()
                    .uri("/api/amodel/")
                    .insert_header(("Content-Type", content_type))
                    .set_payload(body),
            )
            .await;
        assert_error(&resp, 400);
    }
    assert_eq!(app.count("amodel"), 0);
}

// --- work that outlives its client ------------------------------------------------------------

/// A real server (Plover's `Server`, on a loopback port) with `/api/sample/` over a database of
/// one connection holding 400 rows of 64 KiB of `x`; `options` go into the database URL.
/// Returns the port, the database and what keeps it.
async fn slow_sample_server(options: &str) -> (u16, Database, Store) {
    let (db, store) = fresh_database(&format!("max_connections=1&{options}"));
    // The rows are written by a connection without the budget under test, which a loaded
    // machine could spend on 25 MB of inserts.
    let setup = Database::from_url(&store.url()).expect("the same database");
    setup
        .run_blocking(|conn| plover::schema::create_tables(conn, &models()))
        .expect("schema");
    // Each body holds every trigram of `slow_query`'s pattern (`xxx`, `xxy`, `xyz`) without
    // matching it, so the body's search index (a trigram index on PostgreSQL) rules no row out.
    let filler = if on_postgres() {
        "repeat('x', 65536) || 'y-xyz'"
    } else {
        "replace(hex(zeroblob(32768)), '0', 'x') || 'y-xyz'"
    };
    let rows: Vec<String> = (0..400)
        .map(|i| format!("('s{i}', 1, {filler}, '2020-01-01 00:00:00')"))
        .collect();
    let insert = format!(
        "INSERT INTO sample (name, qty, body, stamp) VALUES {};",
        rows.join(",")
    );
    setup
        .run_blocking(move |conn| conn.batch_execute(&insert))
        .expect("rows");
    let mut api = RestApi::new(db.clone());
    api.register_resource(Resource::<Sample>::new().auth(Authentication::new(vec![])));
    let api = api.setup();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = listener.local_addr().expect("an address").port();
    let server = plover::server::Server::new(move || App::new().configure(api.clone()))
        .workers(1)
        .listen(listener)
        .expect("listening")
        .run();
    actix_web::rt::spawn(server);
    (port, db, store)
}

/// 16 `ilike` patterns, each of which compares about 1,000 characters at every position of
/// every row before it fails: minutes of work, a fraction of a second per row.
fn slow_query() -> String {
    let pattern = format!("%{}yz%", "x".repeat(1000));
    let pairs: Vec<(String, String)> = (0..16)
        .map(|_| ("body__ilike".to_owned(), pattern.clone()))
        .collect();
    format!("/api/sample/?{}", query(&pairs))
}

/// Sends `GET path` on a new connection and reads the status, in a blocking thread; with
/// `hang_up_after`, closes the connection after that long without reading.
async fn raw_get(port: u16, path: String, hang_up_after: Option<std::time::Duration>) -> u16 {
    web::block(move || {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("a connection");
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .expect("sent");
        if let Some(after) = hang_up_after {
            std::thread::sleep(after);
            return 0;
        }
        let mut head = [0u8; 12];
        s.read_exact(&mut head).expect("a status line");
        String::from_utf8_lossy(&head[9..12]).parse().unwrap_or(0)
    })
    .await
    .expect("the client thread")
}

#[actix_web::test]
async fn a_disconnected_clients_query_stops_and_gives_its_connection_back() {
    // No time budget to speak of: only the disconnect can stop the query.
    let (port, _db, _store) = slow_sample_server("statement_timeout=600000").await;
    let hang_up = std::time::Duration::from_millis(500);
    raw_get(port, slow_query(), Some(hang_up)).await;
    // The pool's only connection is free again within a second or so: the next request gets
    // it (without the cancel it would wait for minutes, and get 503 after the pool's 5 s).
    let started = std::time::Instant::now();
    let status = raw_get(port, "/api/sample/?limit=1".into(), None).await;
    let waited = started.elapsed();
    eprintln!("the next request waited {waited:?} for the connection");
    assert_eq!(status, 200);
    assert!(waited < std::time::Duration::from_secs(3), "{waited:?}");
}

#[actix_web::test]
async fn a_reset_connections_query_stops_and_gives_its_connection_back() {
    // actix drops a request's future when a read finds its connection reset; the work runs on
    // without it, and must stop all the same.
    let (port, _db, _store) = slow_sample_server("statement_timeout=600000").await;
    let slow = slow_query();
    web::block(move || {
        use std::io::Write;
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("a connection");
        // A quick request, then the slow one: closed with the quick one's response unread,
        // the socket resets the connection rather than closing it.
        write!(
            s,
            "GET /api/sample/?limit=1 HTTP/1.1\r\nHost: x\r\n\r\n\
             GET {slow} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .expect("sent");
        std::thread::sleep(std::time::Duration::from_millis(500));
    })
    .await
    .expect("the client thread");
    let started = std::time::Instant::now();
    let status = raw_get(port, "/api/sample/?limit=1".into(), None).await;
    let waited = started.elapsed();
    eprintln!("the next request waited {waited:?} for the connection");
    assert_eq!(status, 200);
    assert!(waited < std::time::Duration::from_secs(3), "{waited:?}");
}

#[actix_web::test]
async fn a_statement_past_its_time_budget_is_503_with_retry_after() {
    let (port, _db, _store) = slow_sample_server("statement_timeout=500").await;
    let started = std::time::Instant::now();
    let status = raw_get(port, slow_query(), None).await;
    let took = started.elapsed();
    assert_eq!(status, 503);
    assert!(took < std::time::Duration::from_secs(4), "{took:?}");
    assert_eq!(
        raw_get(port, "/api/sample/?limit=1".into(), None).await,
        200
    );
}

/// An application whose database lets requests' reads hold `read_memory` bytes, with `rows`
/// samples whose `body` is `bytes` long (and ends with the row's id: each is another text).
async fn long_bodies(read_memory: usize, rows: usize, bytes: usize) -> TestApp {
    let app = TestApp::with_options("", &format!("read_memory={read_memory}")).await;
    let text = if app.is_postgres() {
        format!("repeat('x', {bytes})")
    } else {
        format!("printf('%.{bytes}c', 'x')")
    };
    let values: Vec<String> = (1..=rows)
        .map(|id| {
            format!(
                "({id}, 'long{id}', {id}, 0, 0, false, {text} || '{id}', '2020-01-01 00:00:00')"
            )
        })
        .collect();
    app.sql(&format!(
        "INSERT INTO sample (id, name, qty, big, ratio, flag, body, stamp) VALUES {};",
        values.join(", ")
    ));
    app
}

#[actix_web::test]
async fn reads_past_the_read_budget_stop_before_the_answer_is_built_and_give_it_back() {
    // 16 bodies of 512 KiB (8 MiB) against a budget of 4 MiB.
    let app = long_bodies(4 << 20, 16, 512 << 10).await;
    // An aggregate grouped by the long text, and its least and greatest values: each row's
    // body three times. It stops at the budget: 503 to retry, as a response past the
    // response-memory budget is.
    for uri in [
        "/api/sample/aggregate/?group=id,body&min=body&max=body",
        "/api/sample/aggregate/?group=body&count",
        "/api/sample/?limit=16",
        "/api/sample/?limit=16&fields=body",
    ] {
        let resp = app.get(uri).await;
        let text = resp.text();
        assert_eq!(resp.code(), 503, "{uri}: {}", &text[..text.len().min(200)]);
        assert_eq!(resp.header("retry-after"), Some("1"), "{uri}");
    }
    // What fits is read, again and again: each request gave its reservation back.
    for _ in 0..4 {
        let page = app.get("/api/sample/?limit=6").await.json_with(200);
        assert_eq!(page["objects"].as_array().map(Vec::len), Some(6));
        let groups = app
            .get("/api/sample/aggregate/?group=qty&max=body&qty__lte=6")
            .await
            .json_with(200);
        assert_eq!(groups["groups"].as_array().map(Vec::len), Some(6));
    }
}
