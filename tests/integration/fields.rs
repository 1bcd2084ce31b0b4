//! Fields that say what they accept (docs/reference.md, "Field constraints" and "Choices"): the
//! conformance app's Ticket, on every writer, in filters, in the schema's CHECKs and in the API
//! description.

use actix_web::test::TestRequest;
use plover_tests::*;
use serde_json::json;

fn refused_by_the_database(app: &TestApp, sql: &str) -> bool {
    let sql = sql.to_owned();
    app.db.run_blocking(move |c| c.batch_execute(&sql)).is_err()
}

#[actix_web::test]
async fn a_post_gets_the_defaults_and_every_field_out_of_bounds_is_named_at_once() {
    let app = TestApp::new().await;
    let created = app
        .post("/api/ticket/", json!({"title": "Printer on fire"}))
        .await
        .json_with(201);
    assert_eq!(created["priority"], 3);
    assert_eq!(created["status"], "open");
    assert_eq!(created["body"], "");
    assert_eq!(
        created["opened"],
        plover::value::today().format("%Y-%m-%d").to_string()
    );
    let resp = app
        .post(
            "/api/ticket/",
            json!({"title": " \t ", "priority": 9, "status": "pending"}),
        )
        .await;
    let fields = assert_fields(&resp, &["priority", "status", "title"]);
    assert_eq!(fields["title"], "must not be blank");
    assert_eq!(fields["priority"], "must be between 1 and 5");
    assert_eq!(fields["status"], "must be one of: open, closed");
    let long = "x".repeat(101);
    let resp = app.post("/api/ticket/", json!({"title": long})).await;
    assert_eq!(
        assert_fields(&resp, &["title"])["title"],
        "must have at most 100 characters"
    );
    // 100 characters of four bytes each are 100 characters.
    app.post("/api/ticket/", json!({"title": "😀".repeat(100)}))
        .await
        .expect(201);
    assert_eq!(app.count("ticket"), 2);
}

#[actix_web::test]
async fn an_update_out_of_bounds_writes_nothing() {
    let app = TestApp::new().await;
    let id = app
        .post("/api/ticket/", json!({"title": "t", "priority": 5}))
        .await
        .json_with(201)["id"]
        .clone();
    let uri = format!("/api/ticket/{id}/");
    for body in [
        json!({"priority": 0}),
        json!({"priority": 6, "title": "u"}),
        json!({"status": "Closed"}),
    ] {
        let resp = app
            .send(TestRequest::patch().uri(&uri).set_json(&body))
            .await;
        assert_eq!(resp.code(), 400, "{body}");
        let resp = app.put(&uri, body.clone()).await;
        assert_eq!(resp.code(), 400, "{body}");
    }
    assert_eq!(
        app.query_text("SELECT title || '/' || priority || '/' || status FROM ticket")
            .as_deref(),
        Some("t/5/open")
    );
    app.send(
        TestRequest::patch()
            .uri(&uri)
            .set_json(json!({"status": "closed", "priority": 1})),
    )
    .await
    .expect(200);
    assert_eq!(app.get(&uri).await.json_with(200)["status"], "closed");
}

#[actix_web::test]
async fn a_choice_filter_takes_only_its_choices() {
    let app = TestApp::new().await;
    for (title, status) in [("a", "open"), ("b", "closed"), ("c", "open")] {
        app.post("/api/ticket/", json!({"title": title, "status": status}))
            .await
            .expect(201);
    }
    let titles = |body: serde_json::Value| -> Vec<String> {
        body["objects"]
            .as_array()
            .expect("objects")
            .iter()
            .map(|o| o["title"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(
        titles(
            app.get("/api/ticket/?status=open&ordering=title")
                .await
                .json_with(200)
        ),
        ["a", "c"]
    );
    assert_eq!(
        titles(
            app.get("/api/ticket/?status__in=closed,open&ordering=-title")
                .await
                .json_with(200)
        ),
        ["c", "b", "a"]
    );
    for bad in ["status=pending", "status__in=open,shut", "status__ne=OPEN"] {
        let resp = app.get(&format!("/api/ticket/?{bad}")).await;
        assert_param_error(&resp, bad.split('=').next().unwrap_or_default());
    }
}

#[actix_web::test]
async fn the_schema_checks_what_the_fields_declare() {
    let app = TestApp::new().await;
    let insert = |values: &str| {
        format!(
            "INSERT INTO ticket (title, priority, status, body, secret_note, opened) \
             VALUES ({values})"
        )
    };
    assert!(!refused_by_the_database(
        &app,
        &insert("'ok', 5, 'closed', '', '', '2026-01-01'")
    ));
    for values in [
        "'ok', 0, 'open', '', '', '2026-01-01'",
        "'ok', 6, 'open', '', '', '2026-01-01'",
        "'ok', 3, 'pending', '', '', '2026-01-01'",
        "'  ', 3, 'open', '', '', '2026-01-01'",
        "'', 3, 'open', '', '', '2026-01-01'",
    ] {
        assert!(refused_by_the_database(&app, &insert(values)), "{values}");
    }
    let long = format!("'{}', 3, 'open', '', '', '2026-01-01'", "é".repeat(101));
    assert!(refused_by_the_database(&app, &insert(&long)));
    let just = format!("'{}', 3, 'open', '', '', '2026-01-01'", "é".repeat(100));
    assert!(!refused_by_the_database(&app, &insert(&just)));
    assert_eq!(app.count("ticket"), 2);
}

#[actix_web::test]
async fn the_description_carries_the_constraints() {
    let app = TestApp::new().await;
    let doc = app.get("/api/openapi.json").await.json_with(200);
    let schemas = &doc["components"]["schemas"];
    let name = schemas
        .as_object()
        .expect("schemas")
        .keys()
        .find(|k| {
            k.to_lowercase().contains("ticket")
                && schemas[k.as_str()]["properties"]["priority"]["minimum"].is_number()
        })
        .cloned()
        .expect("a ticket schema with the constraints");
    let props = &schemas[name.as_str()]["properties"];
    assert_eq!(props["priority"]["minimum"], 1);
    assert_eq!(props["priority"]["maximum"], 5);
    assert_eq!(props["title"]["maxLength"], 100);
    assert_eq!(props["status"]["enum"], json!(["open", "closed"]));
}

#[actix_web::test]
async fn a_private_field_is_never_in_the_api_also_through_joins() {
    let app = TestApp::new().await;
    let resp = app
        .post("/api/ticket/", json!({"title": "t", "secret_note": "psst"}))
        .await;
    assert_eq!(
        assert_fields(&resp, &["secret_note"])["secret_note"],
        "this field cannot be written here"
    );
    app.sql(
        "INSERT INTO ticket (id, title, priority, status, body, secret_note, opened, parent_id) \
         VALUES (1, 'parent', 3, 'open', '', 'alice@example.com', '2026-01-01', NULL), \
                (2, 'child', 3, 'open', '', '', '2026-01-01', 1)",
    );
    let object = app.get("/api/ticket/1/").await.json_with(200);
    assert!(object.get("secret_note").is_none(), "{object}");
    for bad in [
        "secret_note=alice@example.com",
        "secret_note__like=alice%",
        "parent__secret_note__like=alice%",
        "parent__parent__secret_note=x",
    ] {
        let resp = app.get(&format!("/api/ticket/?{bad}")).await;
        assert_eq!(resp.code(), 400, "{bad}");
    }
    let resp = app.get("/api/ticket/?ordering=secret_note").await;
    assert_eq!(resp.code(), 400);
    let doc = app.get("/api/openapi.json").await.json_with(200);
    let text = doc.to_string();
    assert!(!text.contains("secret_note"), "the description names it");
}

#[actix_web::test]
async fn a_resource_that_shows_a_private_field_shows_it_alone() {
    use actix_web::App;
    use plover::prelude::*;
    let (db, _store) = fresh_database("");
    db.run_blocking(|conn| plover::schema::create_tables(conn, &models()))
        .expect("schema");
    let open = || Authentication::new(vec![]);
    let t = Ticket::FIELDS;
    let mut api = RestApi::new(db.clone());
    api.register_resource(Resource::<Ticket>::new().auth(open()))
        .register_resource(
            Resource::<Ticket>::new()
                .name("staff")
                .show([t.secret_note])
                .auth(open()),
        );
    let service = TestService::new(App::new().configure(api.setup())).await;
    let post = |uri: &str, body: serde_json::Value| TestRequest::post().uri(uri).set_json(body);
    let created = service
        .send(post(
            "/api/staff/",
            json!({"title": "parent", "secret_note": "alice@example.com"}),
        ))
        .await
        .json_with(201);
    assert_eq!(created["secret_note"], "alice@example.com");
    service
        .send(post(
            "/api/staff/",
            json!({"title": "child", "parent": created["id"]}),
        ))
        .await
        .expect(201);
    let get = |uri: &str| service.send(TestRequest::get().uri(uri));
    let found = get("/api/staff/?secret_note__like=alice%")
        .await
        .json_with(200);
    assert_eq!(found["objects"].as_array().map(Vec::len), Some(1));
    get("/api/staff/?ordering=-secret_note").await.expect(200);
    // Through a join, even on the resource that shows it; and nowhere else.
    assert_eq!(get("/api/staff/?parent__secret_note=x").await.code(), 400);
    assert_eq!(get("/api/ticket/?secret_note=x").await.code(), 400);
    let plain = get(&format!("/api/ticket/{}/", created["id"]))
        .await
        .json_with(200);
    assert!(plain.get("secret_note").is_none());
}
