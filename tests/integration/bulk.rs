//! docs/contract.md#bulk-writes: a POST of a JSON array creates every object in one
//! transaction, or none, with each object's errors by its index.

use plover_tests::*;
use serde_json::{json, Value};

fn sample(name: &str, qty: i64) -> Value {
    json!({"name": name, "qty": qty})
}

#[actix_web::test]
async fn an_array_creates_every_object_in_order_with_defaults_and_history() {
    let app = TestApp::new().await;
    let body = json!([sample("a", 1), sample("b", 2), {"name": "c", "qty": 3, "flag": true}]);
    let resp = app.post("/api/tracked_open/", body).await;
    let created = resp.json_with(201);
    let created = created.as_array().expect("an array of objects");
    let names: Vec<&str> = created.iter().filter_map(|o| o["name"].as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(created[2]["flag"], true);
    assert_eq!(created[0]["body"], "", "defaults filled");
    assert_eq!(
        resp.header("location"),
        None,
        "many objects, no one Location"
    );
    let ids: Vec<i64> = created.iter().filter_map(|o| o["id"].as_i64()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    for (id, object) in ids.iter().zip(created) {
        let stored = app.get(&format!("/api/sample/{id}/")).await.json_with(200);
        assert_eq!(&stored, object);
    }
    // One history entry per object, in the same transaction.
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM plover_history WHERE action = 'add'"),
        3
    );
    // An empty array creates nothing.
    let resp = app.post("/api/tracked_open/", json!([])).await;
    assert_eq!(resp.json_with(201), json!([]));
    assert_eq!(app.count("sample"), 3);
}

#[actix_web::test]
async fn one_bad_object_writes_nothing_and_every_error_is_reported_by_index() {
    let app = TestApp::new().await;
    app.sql("INSERT INTO sample (id, name, qty, big, ratio, flag, body, stamp) VALUES (1, 'taken', 1, 0, 0, FALSE, '', '2020-01-01 00:00:00')");
    // Parsing: a missing required field, a value of the wrong type, an unknown key.
    let body = json!([sample("ok", 1), {"name": "no qty"}, {"name": "x", "qty": "many"}, {"name": "y", "qty": 1, "nope": 1}]);
    let resp = app.post("/api/tracked_open/", body).await;
    let error = resp.json_with(400);
    let items = error["items"].as_object().expect("items");
    assert_eq!(items.keys().collect::<Vec<_>>(), ["1", "2", "3"], "{error}");
    assert!(items["1"].get("qty").is_some(), "{error}");
    assert!(items["2"].get("qty").is_some(), "{error}");
    assert!(items["3"].get("nope").is_some(), "{error}");
    // The database's rules: a taken unique value, twice the same value, a missing reference.
    let body = json!([
        sample("fine", 1),
        sample("taken", 2),
        sample("twice", 3),
        sample("twice", 4)
    ]);
    let error = app.post("/api/tracked_open/", body).await.json_with(400);
    assert_eq!(
        error["items"],
        json!({"1": {"name": "this value is already taken"}, "3": {"name": "this value is already taken"}}),
    );
    let body = json!([{"b": 99, "c_field": "x"}]);
    let error = app.post("/api/cmodel/", body).await.json_with(400);
    assert!(error["items"]["0"].get("b").is_some(), "{error}");
    // Nothing was written, history included.
    assert_eq!(app.count("sample"), 1);
    assert_eq!(app.count("cmodel"), 0);
    assert_eq!(app.count("plover_history"), 0);
}

#[actix_web::test]
async fn the_body_is_objects_and_at_most_max_bulk_rows_of_them() {
    let app = TestApp::new().await;
    for body in [json!([sample("a", 1), 2]), json!([[]]), json!("text")] {
        let message = assert_error(&app.post("/api/tracked_open/", body.clone()).await, 400);
        assert!(message.contains("object"), "{body}: {message}");
    }
    let too_many: Vec<Value> = (0..1001).map(|i| sample(&format!("s{i}"), i)).collect();
    let resp = app.post("/api/tracked_open/", Value::Array(too_many)).await;
    let message = assert_error(&resp, 413);
    assert!(message.contains("1000"), "{message}");
    let most: Vec<Value> = (0..1000).map(|i| sample(&format!("s{i}"), i)).collect();
    let resp = app.post("/api/tracked_open/", Value::Array(most)).await;
    assert_eq!(resp.json_with(201).as_array().map(Vec::len), Some(1000));
    assert_eq!(app.count("sample"), 1000);
}

#[actix_web::test]
async fn an_owner_resource_stamps_every_object_and_authentication_comes_first() {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let body = json!([{"content": "one"}, {"content": "two", "user": 12345}]);
    assert_401(&app.post("/api/message/", body.clone()).await);
    let req = json_request(actix_web::http::Method::POST, "/api/message/", &body)
        .insert_header(basic("alice", "pw"));
    let created = app.send(req).await.json_with(201);
    let users: Vec<&Value> = (created.as_array().into_iter().flatten())
        .map(|o| &o["user"]["id"])
        .collect();
    assert_eq!(users, [&json!(alice), &json!(alice)]);
}

#[actix_web::test]
async fn the_description_takes_an_object_or_an_array() {
    let app = TestApp::new().await;
    let doc = app.get("/api/openapi.json").await.json_with(200);
    let post = &doc["paths"]["/api/sample/"]["post"];
    let body = &post["requestBody"]["content"]["application/json"]["schema"]["$ref"];
    assert_eq!(body, "#/components/schemas/sample.create_body");
    let one_of = &doc["components"]["schemas"]["sample.create_body"]["oneOf"];
    assert_eq!(one_of[0]["$ref"], "#/components/schemas/sample.create");
    assert_eq!(
        one_of[1]["items"]["$ref"],
        "#/components/schemas/sample.create"
    );
    assert_eq!(one_of[1]["maxItems"], 1000);
    assert!(post["responses"].get("413").is_some());
    let error = &doc["components"]["schemas"]["Error"]["properties"];
    assert!(error.get("items").is_some(), "{error}");
}
