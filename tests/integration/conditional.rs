//! docs/contract.md#conditional-requests: strong `ETag`s on reads and updates, 304 on a
//! matching `If-None-Match`, 412 on a stale `If-Match` with nothing written, `If-Match: *`,
//! 428 where a resource needs `If-Match`, and no tags where an API turns them off.

use actix_web::http::Method;
use actix_web::test::TestRequest;
use plover_tests::*;
use serde_json::{json, Value};

const SEED: &str = "INSERT INTO sample (id, name, qty, big, ratio, flag, body, remark, day, stamp)
    VALUES (1, 'one', 1, 10, 0.5, TRUE, 'b', NULL, NULL, '2020-01-01 10:00:00'),
           (2, 'two', 2, 20, 1.5, FALSE, 'b', NULL, NULL, '2020-01-02 10:00:00');";

fn tag(resp: &Resp) -> String {
    let tag = resp.header("etag").expect("an ETag").to_owned();
    assert!(
        tag.starts_with('"') && tag.ends_with('"'),
        "a strong tag: {tag}"
    );
    tag
}

fn with(req: TestRequest, headers: &[(&'static str, &str)]) -> TestRequest {
    headers
        .iter()
        .fold(req, |req, (name, value)| req.insert_header((*name, *value)))
}

async fn get(app: &TestApp, uri: &str, headers: &[(&'static str, &str)]) -> Resp {
    app.send(with(TestRequest::get().uri(uri), headers)).await
}

async fn write(
    app: &TestApp,
    method: actix_web::http::Method,
    uri: &str,
    body: Value,
    headers: &[(&'static str, &str)],
) -> Resp {
    app.send(with(json_request(method, uri, &body), headers))
        .await
}

fn name_of(app: &TestApp, id: i64) -> Option<String> {
    app.query_text(&format!("SELECT name FROM sample WHERE id = {id}"))
}

#[actix_web::test]
async fn reads_carry_a_strong_tag_and_revalidate_with_304() {
    let app = TestApp::with_seed(SEED).await;
    for uri in [
        "/api/sample/1/",
        "/api/sample/",
        "/api/sample/?ordering=-qty",
        "/api/sample/aggregate/?count",
    ] {
        let first = get(&app, uri, &[]).await;
        first.expect(200);
        let etag = tag(&first);
        assert_eq!(tag(&get(&app, uri, &[]).await), etag, "{uri}: stable");
        let weak = format!("W/{etag}");
        let listed = format!("\"other\", {etag}");
        for sent in [etag.as_str(), weak.as_str(), listed.as_str(), "*"] {
            let resp = get(&app, uri, &[("if-none-match", sent)]).await;
            assert_eq!(resp.code(), 304, "{uri} If-None-Match: {sent}");
            assert!(resp.text().is_empty(), "{uri}: a 304 has no body");
            assert_eq!(tag(&resp), etag);
        }
        let resp = get(&app, uri, &[("if-none-match", "\"other\"")]).await;
        assert_eq!(resp.code(), 200, "{uri}");
        assert_eq!(resp.json(), first.json());
    }
    // Another representation, another tag: other rows, other fields, a changed row.
    let list = tag(&get(&app, "/api/sample/", &[]).await);
    assert_ne!(
        tag(&get(&app, "/api/sample/?ordering=-qty", &[]).await),
        list
    );
    let one = tag(&get(&app, "/api/sample/1/", &[]).await);
    assert_ne!(tag(&get(&app, "/api/sample/1/?fields=id", &[]).await), one);
    app.sql("UPDATE sample SET qty = 5 WHERE id = 1");
    let resp = get(&app, "/api/sample/1/", &[("if-none-match", &one)]).await;
    assert_eq!(resp.code(), 200, "changed: the old tag no longer matches");
    assert_ne!(tag(&resp), one);
    assert_ne!(tag(&get(&app, "/api/sample/", &[]).await), list);
    // Errors carry none.
    let resp = get(&app, "/api/sample/99/", &[]).await;
    assert_eq!((resp.code(), resp.header("etag")), (404, None));
}

#[actix_web::test]
async fn a_stale_if_match_is_412_and_writes_nothing() {
    let app = TestApp::with_seed(SEED).await;
    let uri = "/api/guarded/1/";
    let read = tag(&get(&app, uri, &[]).await);
    use actix_web::http::Method;
    // Two writers read the same version; the first writes, the second is refused.
    let first = write(
        &app,
        Method::PUT,
        uri,
        json!({"name": "first"}),
        &[("if-match", &read)],
    )
    .await;
    first.expect(200);
    let after_first = tag(&first);
    assert_eq!(
        tag(&get(&app, uri, &[]).await),
        after_first,
        "the write's tag is the GET's"
    );
    for (method, body) in [
        (Method::PUT, json!({"name": "second"})),
        (Method::PATCH, json!({"name": "second"})),
        (Method::DELETE, Value::Null),
    ] {
        let resp = write(&app, method.clone(), uri, body, &[("if-match", &read)]).await;
        assert_error(&resp, 412);
        assert_eq!(
            name_of(&app, 1).as_deref(),
            Some("first"),
            "{method}: nothing written"
        );
    }
    // A weak tag never matches If-Match; a list does when one of its tags is current.
    let weak = format!("W/{after_first}");
    let resp = write(
        &app,
        Method::PATCH,
        uri,
        json!({"name": "x"}),
        &[("if-match", &weak)],
    )
    .await;
    assert_error(&resp, 412);
    let listed = format!("{read}, {after_first}");
    let resp = write(
        &app,
        Method::PATCH,
        uri,
        json!({"name": "third"}),
        &[("if-match", &listed)],
    )
    .await;
    resp.expect(200);
    assert_eq!(name_of(&app, 1).as_deref(), Some("third"));
    // `*` takes any existing row; a row that is gone stays 404.
    let resp = write(
        &app,
        Method::PUT,
        uri,
        json!({"name": "any"}),
        &[("if-match", "*")],
    )
    .await;
    resp.expect(200);
    let resp = write(
        &app,
        Method::PUT,
        "/api/guarded/99/",
        json!({"name": "x"}),
        &[("if-match", "*")],
    )
    .await;
    assert_error(&resp, 404);
    // Where both are sent, If-Match decides.
    let current = tag(&get(&app, uri, &[]).await);
    for sent in [current.as_str(), "*"] {
        let headers = [("if-match", "*"), ("if-none-match", sent)];
        let resp = write(&app, Method::PUT, uri, json!({"name": "y"}), &headers).await;
        resp.expect(200);
    }
    // If-None-Match alone on a write (a resource that does not need If-Match): 412 where it
    // names the current version, or `*` (the row exists).
    let sample = "/api/sample/1/";
    let current = tag(&get(&app, sample, &[]).await);
    for sent in [current.as_str(), "*"] {
        let headers = [("if-none-match", sent)];
        let resp = write(&app, Method::PUT, sample, json!({"name": "z"}), &headers).await;
        assert_error(&resp, 412);
    }
    // The current tag deletes.
    let current = tag(&get(&app, uri, &[]).await);
    let resp = write(
        &app,
        Method::DELETE,
        uri,
        Value::Null,
        &[("if-match", &current)],
    )
    .await;
    resp.expect(200);
    assert_eq!(name_of(&app, 1), None);
}

#[actix_web::test]
async fn a_resource_that_needs_if_match_answers_428_without_it() {
    let app = TestApp::with_seed(SEED).await;
    use actix_web::http::Method;
    for method in [Method::PUT, Method::PATCH, Method::DELETE] {
        let resp = write(
            &app,
            method.clone(),
            "/api/guarded/2/",
            json!({"name": "x"}),
            &[],
        )
        .await;
        let message = assert_error(&resp, 428);
        assert!(message.contains("If-Match"), "{method}: {message}");
        assert_eq!(name_of(&app, 2).as_deref(), Some("two"), "{method}");
    }
    // Reads and creates need nothing; other resources take unconditional writes.
    get(&app, "/api/guarded/2/", &[]).await.expect(200);
    let body = json!({"name": "new", "qty": 1, "big": 1, "ratio": 1.0, "flag": true, "body": "b", "stamp": "2020-01-01 00:00:00"});
    write(&app, Method::POST, "/api/guarded/", body, &[])
        .await
        .expect(201);
    write(
        &app,
        Method::PUT,
        "/api/sample/2/",
        json!({"name": "free"}),
        &[],
    )
    .await
    .expect(200);
}

#[actix_web::test]
async fn concurrent_writers_with_one_tag_make_one_write() {
    let app = TestApp::with_seed(SEED).await;
    let uri = "/api/guarded/1/";
    let read = tag(&get(&app, uri, &[]).await);
    let writes = (0..8).map(|i| {
        let (app, read) = (&app, read.clone());
        async move {
            let body = json!({"name": format!("writer {i}")});
            let headers = [("if-match", read.as_str())];
            write(app, actix_web::http::Method::PUT, uri, body, &headers)
                .await
                .code()
        }
    });
    let mut codes = futures_util::future::join_all(writes).await;
    codes.sort_unstable();
    assert_eq!(codes, [200, 412, 412, 412, 412, 412, 412, 412]);
}

#[actix_web::test]
async fn an_api_without_etags_sends_none_and_still_honours_if_match() {
    let app = TestApp::with_seed("INSERT INTO amodel (id, a_field) VALUES (1, 'a');").await;
    let resp = get(&app, "/small/amodel/1/", &[("if-none-match", "*")]).await;
    assert_eq!((resp.code(), resp.header("etag")), (200, None));
    let body = json!({"a_field": "b"});
    let resp = write(
        &app,
        actix_web::http::Method::PUT,
        "/small/amodel/1/",
        body,
        &[("if-match", "\"stale\"")],
    )
    .await;
    assert_error(&resp, 412);
    let a_field = app.query_text("SELECT a_field FROM amodel WHERE id = 1");
    assert_eq!(a_field.as_deref(), Some("a"));
}

#[actix_web::test]
async fn a_body_that_breaks_a_field_constraint_is_400_whatever_its_condition() {
    let app = TestApp::new().await;
    let created = app
        .post("/api/ticket/", json!({"title": "first"}))
        .await
        .json_with(201);
    let uri = format!("/api/ticket/{}/", created["id"]);
    let old = tag(&get(&app, &uri, &[]).await);
    write(&app, Method::PUT, &uri, json!({"title": "second"}), &[])
        .await
        .expect(200);
    // The tag is stale, but the body could never be written: its 400 comes first.
    for body in [json!({"priority": 9}), json!({"title": " "})] {
        let resp = write(&app, Method::PUT, &uri, body, &[("if-match", &old)]).await;
        assert!(resp.json_with(400)["fields"].is_object());
    }
    let resp = write(
        &app,
        Method::PUT,
        &uri,
        json!({"priority": 2}),
        &[("if-match", &old)],
    )
    .await;
    assert_error(&resp, 412);
}
