//! Errors (docs/contract.md#errors, and #request-bodies for bad input): error bodies, validation
//! errors, 404/405/409/413/503, the order of checks, `check_*` hooks and `get_query` scoping.

use actix_web::http::Method;
use actix_web::test::TestRequest;
use plover_tests::*;
use serde_json::{json, Value};

const ONE_MIB: usize = 1024 * 1024;

/// Asserts that an error body gives nothing of the implementation away.
fn assert_no_leak(resp: &Resp) {
    let text = resp.text().to_lowercase();
    for needle in [
        "diesel",
        "sqlite",
        "postgres",
        "select ",
        "insert ",
        "constraint",
        "panicked",
        "/work",
        "src/",
        ".rs",
        "backtrace",
    ] {
        assert!(!text.contains(needle), "{needle:?} in {text}");
    }
}

// --- bodies -------------------------------------------------------------------------------

#[actix_web::test]
async fn a_body_that_is_neither_an_object_nor_an_array_of_objects_is_400() {
    let app = TestApp::new().await;
    let raws: [&[u8]; 11] = [
        b"{\"a_field\": ",
        b"{not json}",
        b"[1, 2]",
        b"\"a string\"",
        b"42",
        b"null",
        b"true",
        b"",
        "\u{feff}{]".as_bytes(),
        b"{\"a_field\": \"\xff\xfe\"}",
        b"{\"a_field\": \"x\"} trailing",
    ];
    for raw in raws {
        let resp = app
            .send(raw_request(
                Method::POST,
                "/api/amodel/",
                "application/json",
                raw.to_vec(),
            ))
            .await;
        assert_error(&resp, 400);
        assert_no_leak(&resp);
    }
    // Without a JSON content type the raw body is still read as JSON (an empty array is an
    // empty bulk create: docs/contract.md#bulk-writes).
    let resp = app
        .send(raw_request(
            Method::POST,
            "/api/amodel/",
            "text/plain",
            "[{}, 1]",
        ))
        .await;
    assert_error(&resp, 400);
    let resp = app
        .send(raw_request(
            Method::POST,
            "/api/amodel/",
            "text/plain",
            "[]",
        ))
        .await;
    assert_eq!(resp.json_with(201), json!([]));
    let resp = app
        .send(raw_request(
            Method::POST,
            "/api/amodel/",
            "text/plain",
            r#"{"a_field": "plain"}"#,
        ))
        .await;
    assert_eq!(resp.json_with(201), json!({"id": 1, "a_field": "plain"}));
    assert_eq!(app.count("amodel"), 1);
}

#[actix_web::test]
async fn a_put_body_that_is_not_an_object_is_400() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'one');").await;
    for raw in ["[]", "\"x\"", "{"] {
        let resp = app
            .send(raw_request(
                Method::PUT,
                "/api/amodel/1/",
                "application/json",
                raw,
            ))
            .await;
        assert_error(&resp, 400);
    }
    assert_eq!(
        app.query_text("SELECT a_field FROM amodel"),
        Some("one".into())
    );
}

#[actix_web::test]
async fn deeply_nested_json_is_400() {
    let app = TestApp::new().await;
    let raw = format!("{{\"a_field\": {}{}}}", "[".repeat(5000), "]".repeat(5000));
    let resp = app
        .send(raw_request(
            Method::POST,
            "/api/amodel/",
            "application/json",
            raw,
        ))
        .await;
    assert_error(&resp, 400);
    assert_eq!(app.get("/api/amodel/").await.ids(), Vec::<i64>::new());
}

// --- validation errors --------------------------------------------------------------------

#[actix_web::test]
async fn unknown_keys_are_400_on_post_and_put() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'one');").await;
    let resp = app
        .post("/api/amodel/", json!({"a_field": "x", "a_feild": "typo"}))
        .await;
    assert_fields(&resp, &["a_feild"]);
    let resp = app
        .put("/api/amodel/1/", json!({"a_field": "new", "bogus": 1}))
        .await;
    assert_fields(&resp, &["bogus"]);
    // `message_length` is added by prepare_data: it is not a field.
    app.sql("INSERT INTO apikey VALUES (1, 'k', 's');");
    let resp = app
        .post(
            "/api/note/?key=k&secret=s",
            json!({"message": "m", "message_length": 1}),
        )
        .await;
    assert_fields(&resp, &["message_length"]);
    assert_eq!(app.count("amodel"), 1);
    assert_eq!(app.count("note"), 0);
    assert_eq!(
        app.query_text("SELECT a_field FROM amodel"),
        Some("one".into())
    );
}

#[actix_web::test]
async fn values_of_the_wrong_type_are_400() {
    let app = TestApp::new().await;
    let cases: Vec<(&str, Value)> = vec![
        ("qty", json!("abc")),
        ("qty", json!("5")),
        ("qty", json!(2.0)),
        ("qty", json!(1.5)),
        ("qty", json!([1])),
        ("qty", json!({"n": 1})),
        ("qty", json!(true)),
        ("qty", json!(2147483648i64)),
        ("qty", json!(-2147483649i64)),
        ("big", json!("many")),
        ("big", json!(9223372036854775808u64)),
        ("big", json!(1e3)),
        ("ratio", json!("half")),
        ("ratio", json!(true)),
        ("flag", json!("maybe")),
        ("flag", json!("true")),
        ("flag", json!(1)),
        ("flag", json!([true])),
        ("name", json!(123)),
        ("name", json!(["x"])),
        ("body", json!({"x": 1})),
        ("remark", json!(5)),
        ("day", json!("not-a-date")),
        ("day", json!("2020-02-30")),
        ("day", json!("2020-01-01 00:00:00")),
        ("day", json!("2020-1-1")),
        ("day", json!(20200101)),
        ("stamp", json!("yesterday")),
        ("stamp", json!("2020-13-01 00:00:00")),
        ("stamp", json!("2020-01-01 10:00")),
        ("stamp", json!(1234567890)),
    ];
    for (field, value) in cases {
        let mut data = json!({"name": "n", "qty": 1});
        data[field] = value.clone();
        let resp = app.post("/api/sample/", data).await;
        assert_fields(&resp, &[field]);
        assert_eq!(app.count("sample"), 0, "{field} = {value}");
    }
}

#[actix_web::test]
async fn garbage_dates_are_400() {
    let app = TestApp::new().await;
    for field in ["h_date", "h_day"] {
        let resp = app
            .post("/api/hmodel/", json!({"h_field": "x", field: "not-a-date"}))
            .await;
        assert_fields(&resp, &[field]);
    }
    assert_eq!(app.count("hmodel"), 0);
}

#[actix_web::test]
async fn null_for_a_non_nullable_field_is_400() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'one');").await;
    for (path, data, field) in [
        ("/api/amodel/", json!({"a_field": null}), "a_field"),
        ("/api/sample/", json!({"name": "n", "qty": null}), "qty"),
        (
            "/api/sample/",
            json!({"name": "n", "qty": 1, "flag": null}),
            "flag",
        ),
        (
            "/api/sample/",
            json!({"name": "n", "qty": 1, "stamp": null}),
            "stamp",
        ),
        (
            "/api/bmodel/",
            json!({"a_id": null, "b_field": "b"}),
            "a_id",
        ),
    ] {
        assert_fields(&app.post(path, data).await, &[field]);
    }
    assert_fields(
        &app.put("/api/amodel/1/", json!({"a_field": null})).await,
        &["a_field"],
    );
    assert_eq!(app.count("sample") + app.count("bmodel"), 0);
    assert_eq!(
        app.query_text("SELECT a_field FROM amodel"),
        Some("one".into())
    );
    // Null for nullable fields is fine.
    let s = app
        .post(
            "/api/sample/",
            json!({"name": "n", "qty": 1, "remark": null, "day": null}),
        )
        .await
        .json_with(201);
    assert_eq!(
        (s["remark"].clone(), s["day"].clone()),
        (json!(null), json!(null))
    );
}

#[actix_web::test]
async fn missing_required_fields_are_400_under_the_field_name() {
    let app = TestApp::new().await;
    for (path, data, fields) in [
        ("/api/amodel/", json!({}), &["a_field"][..]),
        ("/api/sample/", json!({"name": "n"}), &["qty"][..]),
        ("/api/sample/", json!({"qty": 1}), &["name"][..]),
        ("/api/sample/", json!({}), &["name", "qty"][..]),
        ("/api/bmodel/", json!({"b_field": "orphan"}), &["a"][..]),
        ("/api/cmodel/", json!({}), &["b", "c_field"][..]),
        (
            "/api/hmodel/",
            json!({"h_day": "2020-01-01"}),
            &["h_field"][..],
        ),
        (
            "/api/amodel/",
            json!({"bogus": 1}),
            &["a_field", "bogus"][..],
        ),
    ] {
        assert_fields(&app.post(path, data).await, fields);
    }
    // A required field given with the wrong type is reported once, as sent.
    assert_fields(
        &app.post("/api/bmodel/", json!({"a_id": "x", "b_field": "b"}))
            .await,
        &["a_id"],
    );
    for table in ["amodel", "sample", "bmodel", "cmodel", "hmodel"] {
        assert_eq!(app.count(table), 0, "{table}");
    }
}

#[actix_web::test]
async fn a_foreign_key_to_a_missing_row_is_400_under_the_key_sent() {
    let app = TestApp::with_seed(CHAINS).await;
    for key in ["a_id", "a"] {
        let resp = app
            .post("/api/bmodel/", json!({key: 987654321, "b_field": "x"}))
            .await;
        assert_fields(&resp, &[key]);
    }
    assert_fields(
        &app.post("/api/fmodel/", json!({"e_id": 5, "f_field": "f"}))
            .await,
        &["e_id"],
    );
    assert_fields(
        &app.post("/api/fmodel/", json!({"e": 5, "f_field": "f"}))
            .await,
        &["e"],
    );
    assert_fields(&app.put("/api/bmodel/1/", json!({"a": 3})).await, &["a"]);
    assert_fields(
        &app.put("/api/dmodel/1/", json!({"c_id": 3})).await,
        &["c_id"],
    );
    assert_eq!(app.count("bmodel"), 2);
    assert_eq!(app.count("fmodel"), 0);
    assert_eq!(app.query_i64("SELECT a_id FROM bmodel WHERE id = 1"), 1);
    assert_eq!(app.query_i64("SELECT c_id FROM dmodel WHERE id = 1"), 1);
}

#[actix_web::test]
async fn validation_messages_name_the_problem() {
    let app = TestApp::new().await;
    let fields = assert_fields(
        &app.post(
            "/api/sample/",
            json!({"name": "n", "qty": "x", "flag": null, "bogus": 1}),
        )
        .await,
        &["bogus", "flag", "qty"],
    );
    assert_eq!(fields["bogus"], json!("unknown field"));
    assert_eq!(fields["flag"], json!("this field may not be null"));
    assert_eq!(fields["qty"], json!("expected a 32-bit integer"));
    let fields = assert_fields(&app.post("/api/amodel/", json!({})).await, &["a_field"]);
    assert_eq!(fields["a_field"], json!("this field is required"));
}

// --- 409 ----------------------------------------------------------------------------------

#[actix_web::test]
async fn unique_violations_are_409_and_write_nothing() {
    let app = TestApp::with_seed(
        "INSERT INTO sample (id, name, qty, stamp) VALUES (1, 'one', 1, '2020-01-01 00:00:00'),
                                                          (2, 'two', 2, '2020-01-01 00:00:00');",
    )
    .await;
    let resp = app
        .post("/api/sample/", json!({"name": "one", "qty": 3}))
        .await;
    assert_conflict_on(&resp, "name");
    assert_no_leak(&resp);
    assert_eq!(app.count("sample"), 2);
    let resp = app
        .put("/api/sample/2/", json!({"name": "one", "qty": 9}))
        .await;
    assert_conflict_on(&resp, "name");
    assert_no_leak(&resp);
    assert_eq!(
        app.query_text("SELECT name || qty FROM sample WHERE id = 2"),
        Some("two2".into())
    );
    // Unique usernames and API keys too.
    app.user_with("root", "pw", true, true);
    let resp = app
        .send(
            json_request(
                Method::POST,
                "/api/user/",
                &json!({"username": "root", "email": "x@y.z"}),
            )
            .insert_header(basic("root", "pw")),
        )
        .await;
    assert_conflict_on(&resp, "username");
    app.sql("INSERT INTO apikey VALUES (1, 'k', 's');");
    let resp = app
        .send(
            json_request(
                Method::POST,
                "/api/apikey/",
                &json!({"key": "k", "secret": "other"}),
            )
            .insert_header(basic("root", "pw")),
        )
        .await;
    assert_conflict_on(&resp, "key");
    assert_eq!(app.count("apikey"), 1);
}

/// A 409 of a unique violation: the error, and `fields` naming the one field.
#[track_caller]
fn assert_conflict_on(resp: &Resp, field: &str) {
    let body = resp.json_with(409);
    assert!(
        body["error"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    let fields = body["fields"].as_object().expect("fields");
    assert_eq!(fields.keys().collect::<Vec<_>>(), [field], "{body}");
    assert_no_leak(resp);
}

// --- 413 ----------------------------------------------------------------------------------

#[actix_web::test]
async fn bodies_over_the_limit_are_413() {
    let app = TestApp::new().await;
    let big = json!({"a_field": "x".repeat(ONE_MIB + 10)});
    let resp = app.post("/api/amodel/", big).await;
    assert_error(&resp, 413);
    let form = format!("data={}", "x".repeat(ONE_MIB + 10));
    let resp = app
        .send(raw_request(
            Method::POST,
            "/api/amodel/",
            "application/x-www-form-urlencoded",
            form,
        ))
        .await;
    assert_error(&resp, 413);
    let resp = app
        .send(multipart_request(
            Method::POST,
            "/api/amodel/",
            &[("data", &"y".repeat(ONE_MIB + 10))],
        ))
        .await;
    assert_error(&resp, 413);
    app.sql("INSERT INTO amodel VALUES (1, 'one');");
    let resp = app
        .put("/api/amodel/1/", json!({"a_field": "z".repeat(ONE_MIB)}))
        .await;
    assert_error(&resp, 413);
    assert_eq!(
        app.query_text("SELECT a_field FROM amodel"),
        Some("one".into())
    );
    assert_eq!(app.count("amodel"), 1);
}

#[actix_web::test]
async fn a_body_just_under_the_limit_is_accepted() {
    let app = TestApp::new().await;
    let value = "y".repeat(ONE_MIB - 100);
    let resp = app.post("/api/amodel/", json!({"a_field": value})).await;
    resp.expect(201);
    assert_eq!(
        app.query_i64("SELECT length(a_field) FROM amodel WHERE id = 1"),
        (ONE_MIB - 100) as i64
    );
}

#[actix_web::test]
async fn the_body_limit_is_configurable() {
    let app = TestApp::new().await;
    let exact = format!("{{\"a_field\": \"{}\"}}", "x".repeat(SMALL_BODY_LIMIT - 15));
    assert_eq!(exact.len(), SMALL_BODY_LIMIT);
    let resp = app
        .send(raw_request(
            Method::POST,
            "/small/amodel/",
            "application/json",
            exact.clone(),
        ))
        .await;
    resp.expect(201);
    let over = exact.replacen('x', "xx", 1);
    let resp = app
        .send(raw_request(
            Method::POST,
            "/small/amodel/",
            "application/json",
            over.clone(),
        ))
        .await;
    assert_error(&resp, 413);
    // The same body is fine under the default limit.
    let resp = app
        .send(raw_request(
            Method::POST,
            "/api/amodel/",
            "application/json",
            over,
        ))
        .await;
    resp.expect(201);
    assert_eq!(app.count("amodel"), 2);
}

#[actix_web::test]
async fn a_body_over_the_limit_is_413_whatever_else_is_wrong() {
    let app = TestApp::with_seed("INSERT INTO apikey VALUES (1, 'k', 's');").await;
    // No credentials for a protected verb.
    let resp = app
        .post("/api/message/", json!({"content": "x".repeat(ONE_MIB)}))
        .await;
    assert_error(&resp, 413);
    // Not JSON at all.
    let resp = app
        .send(raw_request(
            Method::POST,
            "/api/amodel/",
            "application/json",
            "{".repeat(ONE_MIB + 1),
        ))
        .await;
    assert_error(&resp, 413);
    // Valid API-key form fields in an oversized form are not read for authentication.
    let data = json!({"message": "z".repeat(ONE_MIB)}).to_string();
    let resp = app
        .send(form_request(
            Method::POST,
            "/api/note/",
            &[("key", "k"), ("secret", "s"), ("data", &data)],
        ))
        .await;
    assert_error(&resp, 413);
    // A verb the path does not serve.
    let resp = app
        .put("/api/amodel/", json!({"a_field": "x".repeat(ONE_MIB)}))
        .await;
    assert_error(&resp, 413);
    assert_eq!(
        app.count("note") + app.count("amodel") + app.count("message"),
        0
    );
}

#[actix_web::test]
async fn an_unknown_path_is_404_before_its_body_is_read() {
    // The order of checks (docs/contract.md#order-of-checks): the path first, so an oversized
    // body to a path that names no resource is 404, not 413.
    let app = TestApp::new().await;
    for path in ["/api/doesnotexist/", "/api/amodel/1/extra/"] {
        let resp = app
            .post(path, json!({"a_field": "x".repeat(ONE_MIB)}))
            .await;
        assert_error(&resp, 404);
    }
}

// --- 404 / 405 ----------------------------------------------------------------------------

#[actix_web::test]
async fn unknown_paths_under_a_prefix_are_404_json() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'one');").await;
    for path in [
        "/api/doesnotexist/",
        "/api/doesnotexist/1/",
        "/api/amodel/1/extra/",
        "/api/amodel/1/extra",
        "/api/",
        "/api",
        "/api//",
        "/api//1/",
        "/api/amodel//",
        "/api/amodel/1//",
        "/api/amodel//1/",
        "/api/amodel1/",
        "/v2/amodel/",
        "/small/sample/",
    ] {
        let resp = app.get(path).await;
        assert_eq!(assert_error(&resp, 404), "Not found", "{path}");
    }
    let resp = app.get("/nowhere/").await;
    assert_eq!(resp.code(), 404);
    // The key is percent-decoded, as actix's `Path` does; the list and detail take their
    // paths with or without the trailing slash.
    for path in ["/api/amodel/%31/", "/api/amodel/1", "/api/amodel"] {
        assert_eq!(app.get(path).await.code(), 200, "{path}");
    }
}

// --- order of checks ----------------------------------------------------------------------

#[actix_web::test]
async fn unknown_path_comes_before_405() {
    let app = TestApp::new().await;
    for method in [Method::PATCH, Method::PUT, Method::DELETE] {
        let resp = app
            .send(
                TestRequest::default()
                    .method(method)
                    .uri("/api/doesnotexist/"),
            )
            .await;
        assert_error(&resp, 404);
    }
}

#[actix_web::test]
async fn verb_not_allowed_comes_before_authentication() {
    let app = TestApp::with_seed(
        "INSERT INTO apikey VALUES (1, 'k', 's');
         INSERT INTO note VALUES (1, 'n', '2020-01-01 00:00:00');",
    )
    .await;
    // apikey protects every verb but serves no PUT; /v2/note serves no PUT or DELETE.
    let resp = app.put("/api/apikey/1/", json!({"secret": "x"})).await;
    assert_error(&resp, 405);
    let resp = app.delete("/v2/note/1/").await;
    assert_error(&resp, 405);
    let resp = app.put("/v2/note/1/", json!({"message": "x"})).await;
    assert_error(&resp, 405);
    // The read-only default auth: a verb the path does not serve is still 405.
    let resp = app.post("/api/relationship/1/", json!({})).await;
    assert_error(&resp, 405);
    // 405 does not call the authenticator.
    let resp = app
        .send(
            TestRequest::default()
                .method(Method::PATCH)
                .uri("/api/audited/1/"),
        )
        .await;
    assert_error(&resp, 405);
    assert_eq!(*app.log.lock().unwrap(), Vec::<String>::new());
}

#[actix_web::test]
async fn authentication_comes_before_the_record_lookup_and_input() {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    app.user_with("root", "pw", true, true);
    assert_401(&app.put("/api/message/999/", json!({"content": "x"})).await);
    assert_401(&app.delete("/api/message/999/").await);
    let resp = app
        .send(
            TestRequest::delete()
                .uri("/api/user/999/")
                .insert_header(basic("alice", "pw")),
        )
        .await;
    assert_401(&resp);
    // Bad input is not looked at before authentication.
    let resp = app
        .send(raw_request(
            Method::POST,
            "/api/message/",
            "application/json",
            "{oops",
        ))
        .await;
    assert_401(&resp);
    assert_401(&app.post("/api/relationship/", json!({"bogus": 1})).await);
    let resp = app
        .send(
            json_request(
                Method::PUT,
                &format!("/api/user/{alice}/"),
                &json!({"active": "no"}),
            )
            .insert_header(basic("alice", "pw")),
        )
        .await;
    assert_401(&resp);
}

#[actix_web::test]
async fn record_lookup_comes_before_check_hooks() {
    let app = TestApp::new().await;
    app.user("alice", "pw");
    app.user("bob", "pw");
    app.sql(
        "INSERT INTO message VALUES (1, 1, 'mine', '2020-01-01 00:00:00');
         INSERT INTO hmodel (id, h_field) VALUES (1, 'locked');",
    );
    // bob owns nothing: a missing message is 404, not the owner's 403.
    let resp = app
        .send(
            json_request(Method::PUT, "/api/message/999/", &json!({"content": "x"}))
                .insert_header(basic("bob", "pw")),
        )
        .await;
    assert_eq!(resp.json_with(404), json!({"error": "Not found"}));
    let resp = app
        .send(
            TestRequest::delete()
                .uri("/api/message/999/")
                .insert_header(basic("bob", "pw")),
        )
        .await;
    assert_eq!(resp.json_with(404), json!({"error": "Not found"}));
    assert_eq!(
        app.put("/api/hmodel/2/", json!({"h_field": "x"}))
            .await
            .json_with(404),
        json!({"error": "Not found"})
    );
}

#[actix_web::test]
async fn check_hooks_come_before_input_validation() {
    let app = TestApp::new().await;
    app.user("alice", "pw");
    app.user("bob", "pw");
    app.sql(
        "INSERT INTO message VALUES (1, 1, 'mine', '2020-01-01 00:00:00');
         INSERT INTO hmodel (id, h_field) VALUES (1, 'locked');",
    );
    let resp = app
        .send(
            json_request(Method::PUT, "/api/message/1/", &json!({"bogus": 1}))
                .insert_header(basic("bob", "pw")),
        )
        .await;
    assert_eq!(resp.json_with(403), json!({"error": "Forbidden"}));
    let resp = app
        .send(
            raw_request(Method::PUT, "/api/message/1/", "application/json", "[")
                .insert_header(basic("bob", "pw")),
        )
        .await;
    assert_eq!(resp.json_with(403), json!({"error": "Forbidden"}));
    let resp = app.put("/api/hmodel/1/", json!({"h_field": null})).await;
    assert_eq!(resp.json_with(403), json!({"error": "Forbidden"}));
    let resp = app
        .send(
            json_request(Method::POST, "/v2/note/", &json!({"nope": 1}))
                .insert_header(basic("alice", "pw")),
        )
        .await;
    assert_eq!(resp.json_with(403), json!({"error": "Forbidden"}));
    // The owner gets to the validation.
    let resp = app
        .send(
            json_request(Method::PUT, "/api/message/1/", &json!({"bogus": 1}))
                .insert_header(basic("alice", "pw")),
        )
        .await;
    assert_fields(&resp, &["bogus"]);
    assert_eq!(
        app.query_text("SELECT content FROM message"),
        Some("mine".into())
    );
}

// --- check_* hooks ------------------------------------------------------------------------

#[actix_web::test]
async fn check_hooks_returning_false_are_403_forbidden() {
    let app = TestApp::with_seed(
        "INSERT INTO hmodel (id, h_field) VALUES (1, 'private'), (2, 'locked-a'), (3, 'free');",
    )
    .await;
    let forbidden = json!({"error": "Forbidden"});
    assert_eq!(app.get("/api/hmodel/1/").await.json_with(403), forbidden);
    assert_eq!(
        app.put("/api/hmodel/2/", json!({"h_field": "x"}))
            .await
            .json_with(403),
        forbidden
    );
    assert_eq!(app.delete("/api/hmodel/2/").await.json_with(403), forbidden);
    // The list calls check_get without an object: the private row is listed.
    assert_eq!(app.get("/api/hmodel/").await.ids(), [1, 2, 3]);
    // check_put sees the stored object, not the new values.
    assert_eq!(
        app.put("/api/hmodel/3/", json!({"h_field": "locked-now"}))
            .await
            .json_with(200)["h_field"],
        json!("locked-now")
    );
    assert_eq!(
        app.put("/api/hmodel/3/", json!({"h_field": "free"}))
            .await
            .json_with(403),
        forbidden
    );
    assert_eq!(app.delete("/api/hmodel/3/").await.json_with(403), forbidden);
    assert_eq!(app.count("hmodel"), 3);
    assert_eq!(
        app.query_text("SELECT string_agg(h_field, ',' ORDER BY id) FROM hmodel"),
        Some("private,locked-a,locked-now".into())
    );
}

#[actix_web::test]
async fn check_get_false_for_the_list_is_403() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'one');").await;
    assert_eq!(
        app.get("/api/nolist/").await.json_with(403),
        json!({"error": "Forbidden"})
    );
    assert_eq!(
        app.get("/api/nolist/1/").await.json_with(200),
        json!({"id": 1, "a_field": "one"})
    );
}

#[actix_web::test]
async fn check_post_false_is_403_and_writes_nothing() {
    let app = TestApp::new().await;
    app.user("alice", "pw");
    let resp = app
        .send(
            json_request(Method::POST, "/v2/note/", &json!({"message": "m"}))
                .insert_header(basic("alice", "pw")),
        )
        .await;
    assert_eq!(resp.json_with(403), json!({"error": "Forbidden"}));
    assert_eq!(app.count("note"), 0);
}

#[actix_web::test]
async fn check_get_is_called_once_per_list_and_with_the_object_for_a_detail() {
    let app =
        TestApp::with_seed("INSERT INTO emodel VALUES (1, 'e1'), (2, 'private'), (3, 'e3');").await;
    let take = |app: &TestApp| std::mem::take(&mut *app.log.lock().unwrap());
    assert_eq!(app.get("/api/audited/").await.ids(), [1, 2, 3]);
    assert_eq!(take(&app), ["authorize:GET", "check_get:list"]);
    app.get("/api/audited/1/").await.expect(200);
    assert_eq!(take(&app), ["authorize:GET", "check_get:1"]);
    app.get("/api/audited/2/").await.expect(403);
    assert_eq!(take(&app), ["authorize:GET", "check_get:2"]);
    app.get("/api/audited/9/").await.expect(404);
    assert_eq!(take(&app), ["authorize:GET"]);
    app.post("/api/audited/", json!({"e_field": "new"}))
        .await
        .expect(201);
    assert_eq!(take(&app), ["authorize:POST", "check_post"]);
    app.put("/api/audited/4/", json!({"e_field": "newer"}))
        .await
        .expect(200);
    assert_eq!(take(&app), ["authorize:PUT", "check_put:4"]);
    app.delete("/api/audited/4/").await.expect(200);
    assert_eq!(take(&app), ["authorize:DELETE", "check_delete:4"]);
    // A refused authentication stops before any hook.
    let resp = app
        .send(
            TestRequest::get()
                .uri("/api/audited/")
                .insert_header(("x-deny", "1")),
        )
        .await;
    assert_401(&resp);
    assert_eq!(take(&app), ["authorize:GET"]);
}

// --- get_query ----------------------------------------------------------------------------

#[actix_web::test]
async fn get_query_hides_rows_from_every_verb() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'shown'), (2, 'hidden');").await;
    assert_eq!(app.get("/api/scoped/").await.ids(), [1]);
    assert_eq!(
        app.get("/api/scoped/?a_field=hidden").await.ids(),
        Vec::<i64>::new()
    );
    let not_found = json!({"error": "Not found"});
    assert_eq!(app.get("/api/scoped/2/").await.json_with(404), not_found);
    assert_eq!(
        app.put("/api/scoped/2/", json!({"a_field": "x"}))
            .await
            .json_with(404),
        not_found
    );
    assert_eq!(app.delete("/api/scoped/2/").await.json_with(404), not_found);
    assert_eq!(
        app.query_text("SELECT a_field FROM amodel WHERE id = 2"),
        Some("hidden".into())
    );
    // The same row through a registration without the hook.
    assert_eq!(
        app.get("/api/amodel/2/").await.json_with(200),
        json!({"id": 2, "a_field": "hidden"})
    );
    // Visible rows are served as usual.
    assert_eq!(
        app.put("/api/scoped/1/", json!({"a_field": "still"}))
            .await
            .json_with(200),
        json!({"id": 1, "a_field": "still"})
    );
}

#[actix_web::test]
async fn get_query_hides_inactive_users_even_from_an_admin() {
    let app = TestApp::new().await;
    app.user_with("root", "pw", true, true);
    let sleeper = app.user_with("sleeper", "pw", false, false);
    assert_eq!(
        app.get("/api/user/?username=sleeper").await.ids(),
        Vec::<i64>::new()
    );
    let path = format!("/api/user/{sleeper}/");
    assert_error(&app.get(&path).await, 404);
    let resp = app
        .send(
            json_request(Method::PUT, &path, &json!({"active": true}))
                .insert_header(basic("root", "pw")),
        )
        .await;
    assert_eq!(resp.json_with(404), json!({"error": "Not found"}));
    let resp = app
        .send(
            TestRequest::delete()
                .uri(&path)
                .insert_header(basic("root", "pw")),
        )
        .await;
    assert_eq!(resp.json_with(404), json!({"error": "Not found"}));
    assert_eq!(
        app.query_i64(&format!("SELECT active FROM \"user\" WHERE id = {sleeper}")),
        0
    );
}

// --- 503 ----------------------------------------------------------------------------------

#[actix_web::test]
async fn an_unreachable_database_is_503_json() {
    let app = TestApp::unreachable().await;
    let resp = app.get("/api/amodel/").await;
    assert_error(&resp, 503);
    assert_no_leak(&resp);
    // Unreachable, not busy: the client learns which, and when to try again.
    assert_eq!(resp.json(), json!({"error": "Database unavailable"}));
    assert_eq!(resp.header("retry-after"), Some("1"));
    let resp = app.post("/api/amodel/", json!({"a_field": "x"})).await;
    assert_error(&resp, 503);
    // What needs no database still answers.
    assert_error(&app.get("/api/nowhere/").await, 404);
}

#[actix_web::test]
async fn an_exhausted_pool_is_a_busy_503_with_retry_after() {
    let app = TestApp::with_options(
        "INSERT INTO amodel VALUES (1, 'one');",
        "max_connections=1&connection_timeout=0.3",
    )
    .await;
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let db = app.db.clone();
    let holder = std::thread::spawn(move || {
        db.run_blocking(|_conn| {
            held_tx.send(()).unwrap();
            release_rx.recv().unwrap();
            Ok(())
        })
        .unwrap();
    });
    held_rx.recv().unwrap();
    let resp = app.get("/api/amodel/").await;
    assert_error(&resp, 503);
    assert_no_leak(&resp);
    // Every connection in use: the server is busy (not the database unavailable), and says
    // when to try again.
    assert_eq!(
        resp.json(),
        json!({"error": "The server is busy; try again"})
    );
    assert_eq!(resp.header("retry-after"), Some("1"));
    let resp = app.post("/api/amodel/", json!({"a_field": "x"})).await;
    assert_eq!(
        resp.json_with(503)["error"],
        "The server is busy; try again"
    );
    release_tx.send(()).unwrap();
    holder.join().unwrap();
    assert_eq!(app.get("/api/amodel/").await.ids(), [1]);
}

#[actix_web::test]
async fn a_wrong_type_on_a_required_key_is_reported_as_such() {
    let app = TestApp::new().await;
    let resp = app
        .post("/api/bmodel/", json!({"a": "abc", "b_field": "x"}))
        .await;
    let fields = assert_fields(&resp, &["a"]);
    assert_eq!(fields.len(), 1, "{fields:?}");
    assert_ne!(fields["a"], "this field is required");
}

#[actix_web::test]
async fn a_malformed_multipart_body_comes_after_405_and_401() {
    let app = TestApp::new().await;
    let broken = || {
        raw_request(
            Method::PUT,
            "/api/relationship/",
            "multipart/form-data; boundary=nope",
            b"garbage".to_vec(),
        )
    };
    assert_error(&app.send(broken()).await, 405);
    let post = raw_request(
        Method::POST,
        "/api/relationship/",
        "multipart/form-data; boundary=nope",
        b"garbage".to_vec(),
    );
    assert_401(&app.send(post).await);
    let post = raw_request(
        Method::POST,
        "/api/amodel/",
        "multipart/form-data; boundary=nope",
        b"garbage".to_vec(),
    );
    assert_error(&app.send(post).await, 400);
}
