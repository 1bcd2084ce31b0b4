//! docs/contract.md#upsert: `PUT {prefix}/<name>/?on=<unique field>` updates the row each
//! object's value finds, or creates it, in one transaction.

use actix_web::http::Method;
use plover_tests::*;
use serde_json::{json, Value};

const SEED: &str = "INSERT INTO sample (id, name, qty, big, ratio, flag, body, stamp) VALUES \
    (1, 'kept', 1, 0, 0, FALSE, 'old', '2020-01-01 00:00:00'), \
    (2, 'secret', 2, 0, 0, FALSE, '', '2020-01-01 00:00:00')";

async fn upsert(app: &TestApp, uri: &str, body: Value) -> Resp {
    app.send(json_request(Method::PUT, uri, &body)).await
}

fn qty_of(app: &TestApp, name: &str) -> Option<i64> {
    let sql = format!("SELECT COUNT(*) FROM sample WHERE name = '{name}'");
    (app.query_i64(&sql) == 1)
        .then(|| app.query_i64(&format!("SELECT qty FROM sample WHERE name = '{name}'")))
}

#[actix_web::test]
async fn one_object_updates_the_row_it_names_or_creates_it() {
    let app = TestApp::with_seed(SEED).await;
    // An update: 200, only the keys sent change, the key and other fields stay.
    let resp = upsert(
        &app,
        "/api/upserted/?on=name",
        json!({"name": "kept", "qty": 10}),
    )
    .await;
    let object = resp.json_with(200);
    assert_eq!(
        (
            object["id"].clone(),
            object["qty"].clone(),
            object["body"].clone()
        ),
        (json!(1), json!(10), json!("old"))
    );
    assert_eq!(resp.header("location"), None);
    // A create: 201 with Location, defaults filled.
    let resp = upsert(
        &app,
        "/api/upserted/?on=name",
        json!({"name": "new", "qty": 3}),
    )
    .await;
    let object = resp.json_with(201);
    let id = object["id"].as_i64().expect("an id");
    assert_eq!(
        resp.header("location"),
        Some(format!("/api/upserted/{id}/").as_str())
    );
    assert_eq!(object["body"], "");
    assert_eq!(app.count("sample"), 3);
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM plover_history WHERE action = 'add'"),
        1
    );
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM plover_history WHERE action = 'change'"),
        1
    );
    // A create needs what a POST needs.
    let resp = upsert(&app, "/api/upserted/?on=name", json!({"name": "lacks qty"})).await;
    let error = resp.json_with(400);
    assert!(error["fields"].get("qty").is_some(), "{error}");
    assert_eq!(app.count("sample"), 3);
}

#[actix_web::test]
async fn an_array_is_one_transaction_answered_201_if_any_row_was_created() {
    let app = TestApp::with_seed(SEED).await;
    let body =
        json!([{"name": "kept", "qty": 7}, {"name": "a", "qty": 1}, {"name": "a", "qty": 2}]);
    let resp = upsert(&app, "/api/upserted/?on=name", body).await;
    let objects = resp.json_with(201);
    let qtys: Vec<i64> = objects
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["qty"].as_i64())
        .collect();
    assert_eq!(qtys, [7, 1, 2]);
    // The third object found the row the second created.
    assert_eq!(objects[1]["id"], objects[2]["id"]);
    assert_eq!(
        (qty_of(&app, "kept"), qty_of(&app, "a")),
        (Some(7), Some(2))
    );
    // Only updates: 200.
    let resp = upsert(
        &app,
        "/api/upserted/?on=name",
        json!([{"name": "a", "qty": 5}]),
    )
    .await;
    resp.json_with(200);
    // Bad objects: every error of the body by index, nothing written.
    let body = json!([{"name": "kept", "qty": 100}, {"qty": 1}, {"name": "c", "qty": "x"}]);
    let resp = upsert(&app, "/api/upserted/?on=name", body).await;
    let error = resp.json_with(400);
    let items = error["items"].as_object().expect("items");
    assert_eq!(items.keys().collect::<Vec<_>>(), ["1", "2"], "{error}");
    assert!(items["1"].get("name").is_some(), "{error}");
    assert!(items["2"].get("qty").is_some(), "{error}");
    // Then the rules of the rows: a create lacking a required field.
    let body = json!([{"name": "kept", "qty": 100}, {"name": "b"}, {"name": "d", "qty": 1}]);
    let resp = upsert(&app, "/api/upserted/?on=name", body).await;
    let error = resp.json_with(400);
    assert_eq!(
        error["items"],
        json!({"1": {"qty": "this field is required"}})
    );
    assert_eq!(qty_of(&app, "kept"), Some(7), "nothing written");
    assert_eq!(app.count("sample"), 3);
}

#[actix_web::test]
async fn a_row_the_scope_hides_is_never_updated() {
    let app = TestApp::with_seed(SEED).await;
    let resp = upsert(
        &app,
        "/api/upserted/?on=name",
        json!({"name": "secret", "qty": 99}),
    )
    .await;
    // Not found through the scope, so a create, which the unique index refuses.
    assert!(matches!(resp.code(), 400 | 409), "{}", resp.text());
    assert_eq!(qty_of(&app, "secret"), Some(2));
}

#[actix_web::test]
async fn on_must_name_a_unique_field_the_resource_filters_and_writes() {
    let app = TestApp::with_seed(SEED).await;
    for uri in [
        "/api/upserted/",
        "/api/upserted/?on=qty",
        "/api/upserted/?on=id",
        "/api/upserted/?on=nope",
        "/api/upserted/?on=name&qty=1",
    ] {
        let resp = upsert(&app, uri, json!({"name": "kept", "qty": 5})).await;
        assert_error(&resp, 400);
    }
    // Without upsert, PUT on the list path is not served.
    let resp = upsert(&app, "/api/amodel/?on=a_field", json!({"a_field": "x"})).await;
    assert_error(&resp, 405);
    // Bodies: not objects, and more objects than max_bulk_rows.
    let resp = upsert(&app, "/api/upserted/?on=name", json!([1, 2])).await;
    assert_error(&resp, 400);
    let many: Vec<Value> = (0..1001)
        .map(|i| json!({"name": format!("n{i}"), "qty": 1}))
        .collect();
    let resp = upsert(&app, "/api/upserted/?on=name", Value::Array(many)).await;
    assert_error(&resp, 413);
    assert_eq!(qty_of(&app, "kept"), Some(1));
    assert_eq!(app.count("sample"), 2);
}

#[actix_web::test]
async fn the_conformance_sample_upserts_and_writes_by_filter() {
    let app = TestApp::with_seed(SEED).await;
    let resp = upsert(
        &app,
        "/api/sample/?on=name",
        json!({"name": "kept", "qty": 4}),
    )
    .await;
    assert_eq!(resp.json_with(200)["qty"], 4);
    let resp = app
        .send(json_request(
            Method::PATCH,
            "/api/sample/?qty__gte=2",
            &json!({"flag": true}),
        ))
        .await;
    assert_eq!(resp.json_with(200), json!({"updated": 2}));
    // Its DELETE needs credentials, by filter as one by one.
    let resp = app.delete("/api/sample/?qty__gte=2").await;
    assert_eq!(resp.code(), 401);
    assert_eq!(app.count("sample"), 2);
}

/// Racers that upsert one new value at once: every one succeeds, exactly one creates (201),
/// the others update (200), one row holds the value, and the history has one `add`.
#[actix_web::test]
async fn concurrent_upserts_of_one_new_value_create_it_once_and_update_it() {
    const RACERS: i64 = 6;
    let app = TestApp::with_seed(SEED).await;
    for round in 0..10 {
        let name = format!("race{round}");
        let puts = (0..RACERS).map(|qty| {
            let body = json!({"name": name, "qty": qty});
            let app = &app;
            async move { upsert(app, "/api/upserted/?on=name", body).await }
        });
        let resps = futures_util::future::join_all(puts).await;
        let mut codes: Vec<u16> = resps.iter().map(Resp::code).collect();
        codes.sort_unstable();
        let mut expected = vec![200; RACERS as usize - 1];
        expected.push(201);
        assert_eq!(codes, expected, "round {round}: {:?}", resps[0].text());
        let qty = qty_of(&app, &name).expect("one row");
        assert!((0..RACERS).contains(&qty), "{qty}");
        let id = app.query_i64(&format!("SELECT id FROM sample WHERE name = '{name}'"));
        let actions = |action: &str| {
            app.query_i64(&format!(
                "SELECT COUNT(*) FROM plover_history WHERE action = '{action}' \
                 AND object_id = {id}"
            ))
        };
        assert_eq!((actions("add"), actions("change")), (1, RACERS - 1));
    }
}
