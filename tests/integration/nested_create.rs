//! docs/contract.md#nested-create: a create body carries the children of a writable nested
//! relation (`Resource::nested_children`); parent and children are written in one
//! transaction, or nothing, with the children's errors by path.

use actix_web::http::Method;
use actix_web::test::TestRequest;
use plover_tests::*;
use serde_json::{json, Value};

fn with_basic(req: TestRequest, (name, value): (&'static str, String)) -> TestRequest {
    req.insert_header((name, value))
}

/// The `fields` of a 400 answer.
fn refused(resp: &Resp) -> Value {
    let error = resp.json_with(400);
    assert_eq!(error["error"], "Validation failed", "{error}");
    error["fields"].clone()
}

#[actix_web::test]
async fn a_create_writes_the_object_and_its_children_and_answers_both() {
    let app = TestApp::new().await;
    let body = json!({"title": "parent", "children": [
        {"title": "a"}, {"title": "b", "priority": 5}, {"title": "c", "status": "closed"}
    ]});
    let resp = app.post("/api/ticket/", body).await;
    let created = resp.json_with(201);
    let id = created["id"].as_i64().expect("the parent's key");
    assert_eq!(created["title"], "parent");
    assert_eq!(
        resp.header("location"),
        Some(format!("/api/ticket/{id}/").as_str())
    );
    let children = created["children"].as_array().expect("the children");
    let titles: Vec<&str> = children
        .iter()
        .filter_map(|c| c["title"].as_str())
        .collect();
    assert_eq!(titles, ["a", "b", "c"]);
    assert_eq!(children[0]["priority"], 3, "the child's defaults");
    assert_eq!(children[1]["priority"], 5);
    assert_eq!(children[2]["status"], "closed");
    // Each child is stored under the new parent, as its resource shows it.
    for child in children {
        assert_eq!(child["parent_id"], id, "{child}");
        let stored = app
            .get(&format!("/api/ticket/{}/", child["id"]))
            .await
            .json_with(200);
        assert_eq!(&stored, child);
    }
    assert_eq!(app.count("ticket"), 4);
    // Create-only: a read of the parent does not show the relation.
    let read = app.get(&format!("/api/ticket/{id}/")).await.json_with(200);
    assert!(read.get("children").is_none(), "{read}");
    // Without the key, the answer shows no children.
    let alone = app.post("/api/ticket/", json!({"title": "alone"})).await;
    assert_eq!(alone.json_with(201)["children"], json!([]));
}

#[actix_web::test]
async fn the_children_in_a_create_answer_obey_the_apis_join_rules() {
    let app = TestApp::new().await;
    let body = |name: &str, active: bool| {
        json!({"username": name, "password": "pw", "email": "x@example.com",
               "active": active, "posts": [{"content": "hi"}]})
    };
    // The user resource registered first hides inactive users: the post's nested author is
    // null, though the child resource nests a user resource without hooks.
    let created = app
        .post("/api/user_posts/", body("dora", false))
        .await
        .json_with(201);
    assert!(created["posts"][0]["user"].is_null(), "{created}");
    let created = app
        .post("/api/user_posts/", body("eve", true))
        .await
        .json_with(201);
    assert_eq!(created["posts"][0]["user"]["username"], "eve", "{created}");
}

#[actix_web::test]
async fn a_failing_child_writes_nothing_and_is_reported_by_its_path() {
    let app = TestApp::new().await;
    app.post("/api/ticket/", json!({"title": "before"}))
        .await
        .expect(201);
    let before = app.count("ticket");
    let body = json!({"title": "parent", "children": [
        {"title": "a"}, {"title": "b"}, {"title": "   "}
    ]});
    let fields = refused(&app.post("/api/ticket/", body).await);
    assert_eq!(fields.as_object().map(|f| f.len()), Some(1), "{fields}");
    assert!(fields.get("children.2.title").is_some(), "{fields}");
    assert_eq!(app.count("ticket"), before, "nothing written");

    // A child refused by its model's rules while it is written (the vault grows past 12
    // characters at the fourth deposit): the parent, the children written before it and the
    // rules' own writes are rolled back, history included.
    let body = json!({"label": "vault", "deposits": [
        {"amount": 1}, {"amount": 2}, {"amount": 3}, {"amount": 4}
    ]});
    let fields = refused(&app.post("/api/vault_deposits/", body).await);
    assert_eq!(fields, json!({"deposits.3.amount": "the vault is full"}));
    assert_eq!(app.count("vault"), 0);
    assert_eq!(app.count("deposit"), 0);
    assert_eq!(app.count("plover_history"), 0);
}

#[actix_web::test]
async fn the_parents_and_the_childrens_mistakes_come_in_one_answer() {
    let app = TestApp::new().await;
    let body = json!({"title": "", "priority": 9, "children": [
        {"title": "fine"}, {"priority": 0}, {"title": "x", "nope": 1}
    ]});
    let fields = refused(&app.post("/api/ticket/", body).await);
    for key in [
        "title",
        "priority",
        "children.1.title",
        "children.1.priority",
        "children.2.nope",
    ] {
        assert!(fields.get(key).is_some(), "{key} in {fields}");
    }
    assert_eq!(fields["children.1.title"], "this field is required");
    assert_eq!(fields.as_object().map(|f| f.len()), Some(5), "{fields}");
    // A value that parses but breaks a constraint is named too, the parent's or a child's,
    // once there is a mistake to answer.
    let body = json!({"title": " ", "priority": "high", "children": [{"title": "  "}]});
    let fields = refused(&app.post("/api/ticket/", body).await);
    assert_eq!(
        fields,
        json!({"title": "must not be blank", "priority": "expected a 32-bit integer",
            "children.0.title": "must not be blank"})
    );
    let body = json!({"title": "ok", "children": [{"title": "  "}, {"priority": 2}]});
    let fields = refused(&app.post("/api/ticket/", body).await);
    assert_eq!(
        fields,
        json!({"children.0.title": "must not be blank", "children.1.title": "this field is required"})
    );
    assert_eq!(app.count("ticket"), 0);
}

#[actix_web::test]
async fn a_child_may_not_name_its_foreign_key() {
    let app = TestApp::new().await;
    app.post("/api/ticket/", json!({"title": "other"}))
        .await
        .expect(201);
    let body = json!({"title": "p", "children": [
        {"title": "a", "parent_id": 1}, {"title": "b"}, {"title": "c", "parent": null}
    ]});
    let fields = refused(&app.post("/api/ticket/", body).await);
    assert_eq!(
        fields,
        json!({"children.0.parent_id": "set by the parent", "children.2.parent": "set by the parent"})
    );
    // A required foreign key (a deposit's vault) is not required of the child.
    let body = json!({"label": "v", "deposits": [{"amount": 1, "vault_id": 5}, {"amount": 2}]});
    let fields = refused(&app.post("/api/vault_deposits/", body).await);
    assert_eq!(fields, json!({"deposits.0.vault_id": "set by the parent"}));
    assert_eq!(app.count("ticket"), 1);
    assert_eq!(app.count("vault"), 0);
}

#[actix_web::test]
async fn the_key_holds_an_array_of_objects_and_at_most_max_bulk_rows() {
    let app = TestApp::new().await;
    for value in [json!("x"), json!({"title": "a"}), json!(null), json!(3)] {
        let body = json!({"title": "p", "children": value});
        let fields = refused(&app.post("/api/ticket/", body).await);
        assert_eq!(fields, json!({"children": "must be an array of objects"}));
    }
    let body = json!({"title": "p", "children": [{"title": "a"}, "b", [1]]});
    let fields = refused(&app.post("/api/ticket/", body).await);
    assert_eq!(
        fields,
        json!({"children.1": "must be an object", "children.2": "must be an object"})
    );
    // More children than max_bulk_rows (1,000): 413, as a bulk create; exactly that many
    // are taken.
    let many = |n: usize| Value::Array(vec![json!({"title": "t"}); n]);
    let resp = app
        .post(
            "/api/ticket/",
            json!({"title": "p", "children": many(1001)}),
        )
        .await;
    assert_eq!(
        resp.json_with(413),
        json!({"error": "At most 1000 objects in one request"})
    );
    // Counted over a bulk create's objects together.
    let body =
        json!([{"title": "p", "children": many(600)}, {"title": "q", "children": many(401)}]);
    app.post("/api/ticket/", body).await.json_with(413);
    assert_eq!(app.count("ticket"), 0);
    let resp = app
        .post(
            "/api/ticket/",
            json!({"title": "p", "children": many(1000)}),
        )
        .await;
    assert_eq!(
        resp.json_with(201)["children"].as_array().map(Vec::len),
        Some(1000)
    );
    assert_eq!(app.count("ticket"), 1001);
}

#[actix_web::test]
async fn a_change_may_not_carry_children() {
    let app = TestApp::new().await;
    let id = app
        .post("/api/ticket/", json!({"title": "p"}))
        .await
        .json_with(201)["id"]
        .clone();
    let path = format!("/api/ticket/{id}/");
    for method in [Method::PUT, Method::PATCH] {
        let body = json!({"title": "q", "children": [{"title": "a"}]});
        let resp = app.send(json_request(method, &path, &body)).await;
        assert_eq!(
            refused(&resp),
            json!({"children": "nested objects are written only when the object is created"})
        );
    }
    assert_eq!(app.count("ticket"), 1);
    assert_eq!(app.get(&path).await.json_with(200)["title"], "p");
}

#[actix_web::test]
async fn each_child_goes_through_its_own_resources_hooks_owner_and_history() {
    let app = TestApp::new().await;
    // The child resource's save_object: 13 refused, 7 stored as 77; the parent is fine.
    let body = json!({"label": "v", "deposits": [{"amount": 7}, {"amount": 13}]});
    let fields = refused(&app.post("/api/vault_deposits/", body).await);
    assert_eq!(fields, json!({"deposits.1.amount": "unlucky"}));
    assert_eq!(app.count("deposit"), 0);
    let body = json!({"label": "v", "deposits": [{"amount": 7}, {"amount": 2}]});
    let created = app.post("/api/vault_deposits/", body).await.json_with(201);
    let vault = created["id"].as_i64().expect("the vault's key");
    let amounts: Vec<i64> = (created["deposits"].as_array().into_iter().flatten())
        .filter_map(|d| d["amount"].as_i64())
        .collect();
    assert_eq!(amounts, [77, 2]);
    // The child model's rules ran in the transaction (each deposit marks its vault).
    assert_eq!(
        app.query_text(&format!("SELECT label FROM vault WHERE id = {vault}")),
        Some("v+77+2".to_owned())
    );
    // History: the vault and each deposit, recorded as creates.
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM plover_history WHERE action = 'add'"),
        3
    );
    assert_eq!(
        app.query_i64(
            "SELECT COUNT(*) FROM plover_history WHERE action = 'add' AND object_table = 'deposit'"
        ),
        2
    );

    // The child resource's owner field: stamped with the authenticated user.
    let alice = app.user("alice", "pw");
    let body = json!({"username": "bob", "password": "secret", "email": "b@example.com",
        "followers": [{}]});
    let req = json_request(Method::POST, "/api/user_followed/", &body);
    let created = app
        .send(with_basic(req, basic("alice", "pw")))
        .await
        .json_with(201);
    let bob = created["id"].as_i64().expect("the user's key");
    let follow = &created["followers"][0];
    assert_eq!(follow["from_user_id"], alice, "{created}");
    assert_eq!(follow["to_user_id"], bob, "{created}");
    assert_eq!(
        app.query_i64(&format!(
            "SELECT COUNT(*) FROM relationship WHERE from_user_id = {alice} AND to_user_id = {bob}"
        )),
        1
    );
    // The parent's hooks ran too: the password is stored hashed.
    let stored = app.query_text(&format!("SELECT password FROM \"user\" WHERE id = {bob}"));
    assert!(stored.is_some_and(|p| p != "secret" && !p.is_empty()));
    // The owner field is the server's: a child naming it is stamped all the same, as on
    // any create.
    let body = json!({"username": "carol", "password": "x", "email": "c@example.com",
        "followers": [{"from_user_id": bob}]});
    let req = json_request(Method::POST, "/api/user_followed/", &body);
    let resp = app.send(with_basic(req, basic("alice", "pw"))).await;
    assert_eq!(resp.code(), 201, "{}", resp.text());
    assert_eq!(resp.json()["followers"][0]["from_user_id"], alice);
}

#[actix_web::test]
async fn a_bulk_creates_objects_carry_children_too() {
    let app = TestApp::new().await;
    let body = json!([
        {"title": "a", "children": [{"title": "a1"}, {"title": "a2"}]},
        {"title": "b"},
    ]);
    let created = app.post("/api/ticket/", body).await.json_with(201);
    let created = created.as_array().expect("the objects");
    assert_eq!(created.len(), 2);
    let a = created[0]["id"].clone();
    let kids = created[0]["children"].as_array().expect("a's children");
    assert_eq!(kids.len(), 2);
    assert!(kids.iter().all(|k| k["parent_id"] == a), "{kids:?}");
    assert_eq!(created[1]["children"], json!([]));
    assert_eq!(app.count("ticket"), 4);
    // Errors under the object's index, by path; nothing written.
    let body = json!([
        {"title": "ok", "children": [{"title": "fine"}]},
        {"title": "ok", "priority": "high", "children": [{"title": "fine"}, {}]},
        {"title": "ok", "children": [{"title": "x", "parent_id": 1}]},
    ]);
    let error = app.post("/api/ticket/", body).await.json_with(400);
    let items = &error["items"];
    assert_eq!(
        items
            .as_object()
            .map(|i| i.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["1".to_owned(), "2".to_owned()]),
        "{error}"
    );
    assert!(items["1"].get("priority").is_some(), "{error}");
    assert!(items["1"].get("children.1.title").is_some(), "{error}");
    assert_eq!(
        items["2"],
        json!({"children.0.parent_id": "set by the parent"})
    );
    // A child refused while written (the rules of deposits): under its object's index.
    let body = json!([
        {"label": "v", "deposits": [{"amount": 1}]},
        {"label": "vault", "deposits": [{"amount": 1}, {"amount": 2}, {"amount": 3}, {"amount": 4}]},
    ]);
    let error = app.post("/api/vault_deposits/", body).await.json_with(400);
    assert_eq!(
        error["items"],
        json!({"1": {"deposits.3.amount": "the vault is full"}})
    );
    assert_eq!(app.count("ticket"), 4);
    assert_eq!(app.count("vault"), 0);
    assert_eq!(app.count("deposit"), 0);
}

#[actix_web::test]
async fn the_api_description_shows_the_relation_on_creates_only() {
    let app = TestApp::new().await;
    let doc = app.get("/api/openapi.json").await.json_with(200);
    let schemas = &doc["components"]["schemas"];
    let children = &schemas["ticket.create"]["properties"]["children"];
    assert_eq!(children["type"], "array", "{children}");
    assert_eq!(
        children["items"]["$ref"],
        "#/components/schemas/ticket.children.create"
    );
    assert_eq!(children["maxItems"], 1000);
    let child = &schemas["ticket.children.create"];
    assert!(child["properties"].get("title").is_some(), "{child}");
    assert!(
        child["properties"].get("parent_id").is_none(),
        "the parent sets it: {child}"
    );
    assert!(schemas["ticket.update"]["properties"]
        .get("children")
        .is_none());
    assert!(schemas["ticket"]["properties"].get("children").is_none());
    let answer = &schemas["ticket.created_object"]["properties"]["children"];
    assert_eq!(
        answer["items"]["$ref"],
        "#/components/schemas/ticket.children"
    );
    let created = serde_json::to_string(&schemas["ticket.created"]).unwrap_or_default();
    assert!(created.contains("ticket.created_object"), "{created}");
}
