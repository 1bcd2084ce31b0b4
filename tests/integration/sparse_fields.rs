//! docs/contract.md#sparse-fields: `?fields=` keeps only the keys named, dotted names reach into
//! included objects, and names the objects do not show are 400.

use plover_tests::*;
use serde_json::{json, Value};

async fn messages() -> TestApp {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    app.sql(&format!(
        "INSERT INTO message VALUES (1, {alice}, 'one', '2020-01-01 00:00:00'),
            (2, {alice}, 'two', '2020-01-02 00:00:00'), (3, {alice}, 'three', '2020-01-03 00:00:00');"
    ));
    app
}

fn keys(object: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = object
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    keys
}

#[actix_web::test]
async fn only_the_keys_named_in_lists_and_details() {
    let app = messages().await;
    let objects = app.get("/api/message/?fields=id,content").await.objects();
    assert_eq!(objects.len(), 3);
    assert_eq!(objects[0], json!({"id": 1, "content": "one"}));
    let one = app.get("/api/message/2/?fields=content").await.json();
    assert_eq!(one, json!({"content": "two"}));
    // Order of the output is the resource's, whatever the order of the names.
    let text = app.get("/api/message/1/?fields=content,id").await.text();
    assert_eq!(text, r#"{"id":1,"content":"one"}"#);
}

#[actix_web::test]
async fn dotted_names_reach_into_included_objects() {
    let app = messages().await;
    let objects = app
        .get("/api/message/?fields=id,user.username&limit=1")
        .await
        .objects();
    assert_eq!(objects[0], json!({"id": 1, "user": {"username": "alice"}}));
    let whole = app.get("/api/message/1/?fields=user").await.json();
    assert_eq!(keys(&whole), ["user"]);
    assert!(
        whole["user"]["username"] == "alice" && whole["user"]["id"].is_i64(),
        "{whole}"
    );
    // Named alone and dotted: whole.
    let both = app.get("/api/message/1/?fields=user,user.id").await.json();
    assert!(whole == both, "{both}");
}

#[actix_web::test]
async fn names_the_objects_do_not_show_are_400() {
    let app = messages().await;
    for names in [
        "",
        "id,",
        "nosuch",
        "user_id",
        "password",
        "user.password",
        "user.email",
        "user.nosuch",
        "content.x",
        "user.",
        "ID",
    ] {
        let resp = app.get(&url("/api/message/", &[("fields", names)])).await;
        assert_param_error(&resp, "fields");
        let resp = app.get(&url("/api/message/1/", &[("fields", names)])).await;
        assert_param_error(&resp, "fields");
    }
    // The user resource excludes `email` and `password`.
    let resp = app.get("/api/user/?fields=id,email").await;
    assert_param_error(&resp, "fields");
}

#[actix_web::test]
async fn pages_keep_the_fields_and_cursors_still_work() {
    let app = messages().await;
    let body = app.get("/api/message/?fields=content&limit=1").await.json();
    let next = body["meta"]["next"].as_str().unwrap_or_default().to_owned();
    assert!(next.contains("fields=content"), "{next}");
    let second = app.get(&next).await.objects();
    assert_eq!(second, [json!({"content": "two"})]);
}

#[actix_web::test]
async fn cursor_pages_read_the_ordering_that_fields_leave_out() {
    let rows: Vec<String> = (1..=7)
        .map(|n| {
            format!(
                "({n}, 'n{n}', {}, 0, 0.0, TRUE, '', NULL, NULL, '2020-01-01 00:00:00')",
                n % 3
            )
        })
        .collect();
    let app = TestApp::with_seed(&format!(
        "INSERT INTO sample (id, name, qty, big, ratio, flag, body, remark, day, stamp) VALUES {};",
        rows.join(", ")
    ))
    .await;
    let mut seen = Vec::new();
    let mut link = "/api/cursor/?fields=id&ordering=-qty".to_owned();
    while !link.is_empty() {
        let body = app.get(&link).await.json_with(200);
        for object in body["objects"].as_array().into_iter().flatten() {
            assert_eq!(keys(object), ["id"]);
            seen.push(object["id"].as_i64().unwrap_or_default());
        }
        link = body["meta"]["next"].as_str().unwrap_or_default().to_owned();
        assert!(link.is_empty() || link.contains("cursor="), "{link}");
    }
    assert_eq!(seen, [2, 5, 1, 4, 7, 3, 6]);
}
