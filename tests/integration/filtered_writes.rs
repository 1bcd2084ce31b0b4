//! docs/contract.md#writes-by-filter: `PATCH` and `DELETE` on a list path write every row the
//! filters match, each under a single write's checks and rules, in one transaction, at most
//! `max_affected` rows, or nothing.

use actix_web::http::Method;
use actix_web::test::TestRequest;
use plover_tests::*;
use serde_json::{json, Value};

async fn write(app: &TestApp, method: Method, uri: &str, body: Value) -> Resp {
    app.send(json_request(method, uri, &body)).await
}

fn a_fields(app: &TestApp) -> Vec<String> {
    (1..=5)
        .filter_map(|id| app.query_text(&format!("SELECT a_field FROM amodel WHERE id = {id}")))
        .collect()
}

const FIVE: &str = "INSERT INTO amodel (id, a_field) VALUES \
    (1, 'red'), (2, 'red'), (3, 'blue'), (4, 'hidden'), (5, 'green')";

#[actix_web::test]
async fn patch_changes_every_matching_row_the_scope_shows_and_records_each() {
    let app = TestApp::with_seed(FIVE).await;
    let resp = write(
        &app,
        Method::PATCH,
        "/api/a_bulk/?a_field__in=red,hidden",
        json!({"a_field": "pink"}),
    )
    .await;
    assert_eq!(resp.json_with(200), json!({"updated": 2}));
    // The hidden row is out of the resource's scope: untouched, though the filter names it.
    assert_eq!(a_fields(&app), ["pink", "pink", "blue", "hidden", "green"]);
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM plover_history WHERE action = 'change'"),
        2
    );
    // `or` groups select rows as they do on the list.
    let resp = write(
        &app,
        Method::PATCH,
        "/api/a_bulk/?or=(a_field=blue,a_field=green)",
        json!({"a_field": "grey"}),
    )
    .await;
    assert_eq!(resp.json_with(200), json!({"updated": 2}));
    assert_eq!(a_fields(&app), ["pink", "pink", "grey", "hidden", "grey"]);
    // No row matches: nothing to do.
    let resp = write(
        &app,
        Method::PATCH,
        "/api/a_bulk/?a_field=none",
        json!({"a_field": "x"}),
    )
    .await;
    assert_eq!(resp.json_with(200), json!({"updated": 0}));
}

#[actix_web::test]
async fn delete_removes_every_matching_row_and_what_depends_on_it() {
    let app = TestApp::with_seed(FIVE).await;
    app.sql("INSERT INTO bmodel (id, a_id, b_field) VALUES (1, 1, 'child')");
    let resp = app.delete("/api/a_bulk/?a_field=red").await;
    assert_eq!(resp.json_with(200), json!({"deleted": 2}));
    assert_eq!(a_fields(&app), ["blue", "hidden", "green"]);
    assert_eq!(app.count("bmodel"), 0, "recursive, as a single DELETE");
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM plover_history WHERE action = 'delete'"),
        2
    );
    // Without recursion, a dependent row refuses the whole request.
    app.sql("INSERT INTO bmodel (id, a_id, b_field) VALUES (2, 3, 'child')");
    let resp = app
        .delete("/api/a_bulk_norec/?a_field__in=blue,green")
        .await;
    assert_error(&resp, 409);
    assert_eq!(
        a_fields(&app),
        ["blue", "hidden", "green"],
        "nothing deleted"
    );
}

#[actix_web::test]
async fn more_rows_than_max_affected_or_no_filter_writes_nothing() {
    let app = TestApp::with_seed(FIVE).await;
    app.sql("INSERT INTO amodel (id, a_field) VALUES (6, 'red'), (7, 'red')");
    // Four red rows, at most three.
    let resp = write(
        &app,
        Method::PATCH,
        "/api/a_bulk/?a_field=red",
        json!({"a_field": "x"}),
    )
    .await;
    let error = assert_error(&resp, 400);
    assert!(error.contains("more than 3"), "{error}");
    let resp = app.delete("/api/a_bulk/?a_field=red").await;
    assert_error(&resp, 400);
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM amodel WHERE a_field = 'red'"),
        4
    );
    // No filter at all, and list parameters that do not select rows.
    for uri in [
        "/api/a_bulk/",
        "/api/a_bulk/?ordering=id",
        "/api/a_bulk/?a_field=red&limit=1",
    ] {
        assert_error(&app.delete(uri).await, 400);
        let resp = write(&app, Method::PATCH, uri, json!({"a_field": "x"})).await;
        assert_error(&resp, 400);
    }
    // A filter the resource refuses, and a bad body.
    assert_error(&app.delete("/api/a_bulk/?nope=1").await, 400);
    let resp = write(&app, Method::PATCH, "/api/a_bulk/?id=1", json!({"nope": 1})).await;
    assert!(resp.json_with(400)["fields"].get("nope").is_some());
    assert_eq!(app.count("amodel"), 7);
    assert_eq!(app.count("plover_history"), 0);
}

#[actix_web::test]
async fn a_model_rule_or_a_hook_refusing_one_row_writes_nothing() {
    let app = TestApp::with_seed(FIVE).await;
    let resp = write(
        &app,
        Method::PATCH,
        "/api/a_bulk/?a_field=red",
        json!({"a_field": "reject-me"}),
    )
    .await;
    let error = resp.json_with(400);
    assert!(error["fields"].get("a_field").is_some(), "{error}");
    assert!(
        error["error"].as_str().unwrap().contains("key 1"),
        "{error}"
    );
    assert_eq!(a_fields(&app), ["red", "red", "blue", "hidden", "green"]);
    // A body that breaks a field constraint is the body's 400, no row's.
    app.sql("INSERT INTO ticket (id, title, priority, status, body, secret_note, opened) VALUES (1, 't', 3, 'open', '', '', '2020-01-01')");
    let resp = write(
        &app,
        Method::PATCH,
        "/api/ticket/?id=1",
        json!({"priority": 9}),
    )
    .await;
    let error = resp.json_with(400);
    assert_eq!(error["error"], "Validation failed", "{error}");
    assert!(error["fields"].get("priority").is_some(), "{error}");
    // `check_put`/`check_delete` refuse rows whose h_field starts with "locked".
    app.sql(
        "INSERT INTO hmodel (id, h_field) VALUES (1, 'open-1'), (2, 'locked-2'), (3, 'open-3')",
    );
    let resp = write(
        &app,
        Method::PATCH,
        "/api/h_bulk/?id__gte=1",
        json!({"h_field": "open"}),
    )
    .await;
    assert_error(&resp, 403);
    assert_error(&app.delete("/api/h_bulk/?id__gte=1").await, 403);
    assert_eq!(app.count("hmodel"), 3);
    assert_eq!(
        app.query_text("SELECT h_field FROM hmodel WHERE id = 1")
            .as_deref(),
        Some("open-1")
    );
    let resp = app.delete("/api/h_bulk/?h_field__like=open%25").await;
    assert_eq!(resp.json_with(200), json!({"deleted": 2}));
}

#[actix_web::test]
async fn an_owner_writes_only_when_every_matched_row_is_theirs() {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let bob = app.user("bob", "pw");
    app.sql(&format!(
        "INSERT INTO message (id, user_id, content, pub_date) VALUES \
         (1, {alice}, 'a1', '2020-01-01 00:00:00'), (2, {alice}, 'a2', '2020-01-02 00:00:00'), \
         (3, {bob}, 'b1', '2020-01-03 00:00:00')"
    ));
    let as_alice = |method: Method, uri: &str, body: &Value| {
        json_request(method, uri, body).insert_header(basic("alice", "pw"))
    };
    let body = json!({"content": "edited"});
    let resp = app
        .send(as_alice(
            Method::PATCH,
            "/api/msg_bulk/?pub_date__gte=2020-01-01",
            &body,
        ))
        .await;
    assert_error(&resp, 403);
    let resp = app
        .send(as_alice(
            Method::DELETE,
            "/api/msg_bulk/?id__gte=1",
            &Value::Null,
        ))
        .await;
    assert_error(&resp, 403);
    assert_eq!(app.count("message"), 3);
    let uri = format!("/api/msg_bulk/?user={alice}");
    let resp = app.send(as_alice(Method::PATCH, &uri, &body)).await;
    assert_eq!(resp.json_with(200), json!({"updated": 2}));
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM message WHERE content = 'edited'"),
        2
    );
    // Without credentials: 401, as a single write.
    let resp = app.send(TestRequest::delete().uri(&uri)).await;
    assert_401(&resp);
}

#[actix_web::test]
async fn the_verbs_are_served_only_where_enabled() {
    let app = TestApp::with_seed(FIVE).await;
    // `amodel` serves no writes by filter: its list path allows GET and POST only.
    let resp = app.delete("/api/amodel/?a_field=red").await;
    assert_error(&resp, 405);
    let allow = resp.header("allow").unwrap_or_default().to_owned();
    assert!(
        !allow.contains("DELETE") && allow.contains("POST"),
        "{allow}"
    );
    // `a_bulk` lists them in Allow.
    let resp = write(&app, Method::PUT, "/api/a_bulk/?a_field=red", json!({})).await;
    assert_error(&resp, 405);
    let allow = resp.header("allow").unwrap_or_default().to_owned();
    assert!(
        allow.contains("PATCH") && allow.contains("DELETE"),
        "{allow}"
    );
    assert_eq!(app.count("amodel"), 5);
}
