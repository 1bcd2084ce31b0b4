//! Rate limits (docs/reference.md, "Rate limits"): per address, per user, one budget across an
//! API, and counts in the database shared by two processes.

use std::time::Duration;

use actix_web::test::TestRequest;
use actix_web::App;
use plover::prelude::*;
use plover::rest::RateLimit;
use plover_tests::*;

/// A service with `/api/amodel/` and `/api/bmodel/` open to all, rate-limited by `limit` on
/// `amodel` alone (`api_wide` false) or on the whole API.
async fn limited(db: &Database, limit: RateLimit, api_wide: bool) -> TestService {
    let open = || Authentication::new(vec![]);
    let mut api = RestApi::new(db.clone());
    if api_wide {
        api = api.rate_limit(limit.clone());
        api.register_resource(Resource::<AModel>::new().auth(open()));
    } else {
        api.register_resource(Resource::<AModel>::new().auth(open()).rate_limit(limit));
    }
    api.register_resource(Resource::<BModel>::new().auth(open()));
    TestService::new(App::new().configure(api.setup())).await
}

fn database() -> (Database, Store) {
    let (db, store) = fresh_database("");
    db.run_blocking(|conn| plover::schema::create_tables(conn, &models()))
        .expect("schema");
    (db, store)
}

fn get_from(uri: &str, ip: &str) -> TestRequest {
    TestRequest::get()
        .uri(uri)
        .peer_addr(format!("{ip}:40000").parse().expect("an address"))
}

fn header_u64(resp: &Resp, name: &str) -> u64 {
    resp.header(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("a numeric {name} header"))
}

#[actix_web::test]
async fn a_client_over_its_limit_is_429_and_every_response_says_where_it_stands() {
    let (db, _store) = database();
    let service = limited(&db, RateLimit::new(3, Duration::from_secs(3600)), false).await;
    for remaining in [2, 1, 0] {
        let resp = service.send(get_from("/api/amodel/", "127.0.0.2")).await;
        resp.expect(200);
        assert_eq!(header_u64(&resp, "ratelimit-limit"), 3);
        assert_eq!(header_u64(&resp, "ratelimit-remaining"), remaining);
        assert!((1..=3600).contains(&header_u64(&resp, "ratelimit-reset")));
    }
    let over = service.send(get_from("/api/amodel/1/", "127.0.0.2")).await;
    assert_eq!(over.code(), 429);
    assert_eq!(header_u64(&over, "ratelimit-remaining"), 0);
    assert_eq!(
        header_u64(&over, "retry-after"),
        header_u64(&over, "ratelimit-reset")
    );
    assert!(over.json()["error"]
        .as_str()
        .is_some_and(|e| e.contains("Too many requests")));
    // Another address has its own budget; another resource has no limit.
    service
        .send(get_from("/api/amodel/", "127.0.0.3"))
        .await
        .expect(200);
    let other = service.send(get_from("/api/bmodel/", "127.0.0.2")).await;
    other.expect(200);
    assert_eq!(other.header("ratelimit-limit"), None);
}

#[actix_web::test]
async fn an_api_wide_limit_is_one_budget_across_its_resources() {
    let (db, _store) = database();
    let service = limited(&db, RateLimit::new(2, Duration::from_secs(3600)), true).await;
    service
        .send(get_from("/api/amodel/", "127.0.0.2"))
        .await
        .expect(200);
    service
        .send(get_from("/api/bmodel/", "127.0.0.2"))
        .await
        .expect(200);
    assert_eq!(
        service
            .send(get_from("/api/amodel/", "127.0.0.2"))
            .await
            .code(),
        429
    );
}

#[actix_web::test]
async fn a_limit_by_user_counts_each_user_apart_from_one_address() {
    let app = TestApp::new().await;
    app.user("alice", "pw");
    app.user("bob", "pw");
    let mut api = RestApi::new(app.db.clone());
    api.register_resource(
        Resource::<AModel>::new()
            .auth(UserAuthentication::with_methods(
                &app.auth,
                vec![actix_web::http::Method::GET],
            ))
            .rate_limit(RateLimit::new(2, Duration::from_secs(3600)).by_user()),
    );
    let service = TestService::new(App::new().configure(api.setup())).await;
    let as_user =
        |name: &str| get_from("/api/amodel/", "127.0.0.2").insert_header(basic(name, "pw"));
    for _ in 0..2 {
        service.send(as_user("alice")).await.expect(200);
    }
    assert_eq!(service.send(as_user("alice")).await.code(), 429);
    service.send(as_user("bob")).await.expect(200);
}

#[actix_web::test]
async fn counts_in_the_database_hold_across_two_processes() {
    let (db, store) = database();
    // Two processes: each its own pool and its own `RateLimit`, one database.
    let other = Database::from_url(&store.url()).expect("the same database");
    let limit = || RateLimit::new(5, Duration::from_secs(3600)).in_database();
    let (first, second) = (
        limited(&db, limit(), false).await,
        limited(&other, limit(), false).await,
    );
    let mut codes = Vec::new();
    for i in 0..8 {
        let service = if i % 2 == 0 { &first } else { &second };
        codes.push(
            service
                .send(get_from("/api/amodel/", "127.0.0.2"))
                .await
                .code(),
        );
    }
    assert_eq!(codes, [200, 200, 200, 200, 200, 429, 429, 429]);
    // The in-process store of a third one knows nothing of them.
    let third = limited(&other, RateLimit::new(5, Duration::from_secs(3600)), false).await;
    third
        .send(get_from("/api/amodel/", "127.0.0.2"))
        .await
        .expect(200);
}

#[actix_web::test]
async fn the_description_lists_429_and_the_headers_where_a_limit_counts() {
    let (db, _store) = database();
    let service = limited(&db, RateLimit::new(3, Duration::from_secs(3600)), false).await;
    let doc = service
        .send(TestRequest::get().uri("/api/openapi.json"))
        .await
        .json();
    let list = |name: &str| doc["paths"][format!("/api/{name}/")]["get"]["responses"].clone();
    let limited_list = list("amodel");
    assert!(limited_list.get("429").is_some(), "{limited_list}");
    for header in ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"] {
        assert_eq!(
            limited_list["200"]["headers"][header]["schema"]["type"], "integer",
            "{limited_list}"
        );
    }
    let open_list = list("bmodel");
    assert!(open_list.get("429").is_none(), "{open_list}");
    let headers = open_list["200"]["headers"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    assert!(
        headers.keys().all(|h| !h.starts_with("RateLimit")),
        "{open_list}"
    );
    assert!(doc["components"]["responses"]["TooManyRequests"]["headers"]
        .get("Retry-After")
        .is_some());
}
