//! docs/contract.md#endpoints, #request-bodies and #deletes: the five endpoints, trailing
//! slashes, 405, incoming data in its three encodings, partial updates, recursive deletes and
//! transactions.

use actix_web::http::Method;
use actix_web::test::TestRequest;
use plover_tests::*;
use serde_json::json;

fn allow(resp: &Resp) -> Vec<String> {
    let mut verbs: Vec<String> = resp
        .header("allow")
        .expect("an Allow header")
        .split(',')
        .map(|v| v.trim().to_owned())
        .collect();
    verbs.sort();
    verbs
}

// --- the five endpoints -------------------------------------------------------------------

#[actix_web::test]
async fn post_is_201_with_object_and_location() {
    let app = TestApp::new().await;
    let resp = app.post("/api/amodel/", json!({"a_field": "x"})).await;
    assert_eq!(resp.json_with(201), json!({"id": 1, "a_field": "x"}));
    assert_eq!(resp.header("location"), Some("/api/amodel/1/"));
    let resp = app.post("/api/amodel/", json!({"a_field": "y"})).await;
    assert_eq!(resp.json_with(201), json!({"id": 2, "a_field": "y"}));
    assert_eq!(resp.header("location"), Some("/api/amodel/2/"));
    assert_eq!(app.count("amodel"), 2);
}

#[actix_web::test]
async fn location_uses_the_resource_name_and_prefix() {
    let app = TestApp::with_seed(CHAINS).await;
    let alice = app.user("alice", "pw");
    let bob = app.user("bob", "pw");
    let resp = app
        .send(
            json_request(Method::POST, "/v2/follow/", &json!({"to_user_id": bob}))
                .insert_header(basic("alice", "pw")),
        )
        .await;
    assert_eq!(
        resp.json_with(201),
        json!({"id": 1, "from_user_id": alice, "to_user_id": bob})
    );
    assert_eq!(resp.header("location"), Some("/v2/follow/1/"));
    let resp = app.post("/api/slim/", json!({"name": "n", "qty": 1})).await;
    assert_eq!(resp.header("location"), Some("/api/slim/1/"));
}

#[actix_web::test]
async fn get_detail_is_the_serialized_object() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (7, 'seven');").await;
    let resp = app.get("/api/amodel/7/").await;
    assert_eq!(resp.json_with(200), json!({"id": 7, "a_field": "seven"}));
}

#[actix_web::test]
async fn get_list_is_the_envelope() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'one'), (2, 'two');").await;
    let resp = app.get("/api/amodel/").await;
    assert_eq!(
        resp.json_with(200),
        json!({
            "meta": {"model": "amodel", "page": 1, "previous": "", "next": ""},
            "objects": [{"id": 1, "a_field": "one"}, {"id": 2, "a_field": "two"}],
        })
    );
}

#[actix_web::test]
async fn post_then_get_and_list_agree() {
    let app = TestApp::new().await;
    let created = app
        .post("/api/sample/", json!({"name": "n", "qty": 3}))
        .await
        .json_with(201);
    assert_eq!(app.get("/api/sample/1/").await.json_with(200), created);
    assert_eq!(app.get("/api/sample/").await.objects(), vec![created]);
}

#[actix_web::test]
async fn put_is_200_with_the_edited_object() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (7, 'seven');").await;
    let resp = app.put("/api/amodel/7/", json!({"a_field": "new"})).await;
    assert_eq!(resp.json_with(200), json!({"id": 7, "a_field": "new"}));
    assert_eq!(resp.header("location"), None);
    assert_eq!(
        app.query_text("SELECT a_field FROM amodel WHERE id = 7"),
        Some("new".into())
    );
}

#[actix_web::test]
async fn delete_is_200_deleted_1() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (7, 'seven'), (8, 'eight');").await;
    let resp = app.delete("/api/amodel/7/").await;
    assert_eq!(resp.json_with(200), json!({"deleted": 1}));
    assert_eq!(app.count("amodel"), 1);
    assert_error(&app.get("/api/amodel/7/").await, 404);
    let again = app.delete("/api/amodel/7/").await;
    assert_eq!(again.json_with(404), json!({"error": "Not found"}));
    assert_eq!(app.get("/api/amodel/").await.ids(), vec![8]);
}

#[actix_web::test]
async fn missing_record_is_404_for_every_detail_verb() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'one');").await;
    for resp in [
        app.get("/api/amodel/2/").await,
        app.put("/api/amodel/2/", json!({"a_field": "x"})).await,
        app.delete("/api/amodel/2/").await,
        app.get("/api/amodel/99999999999999999999/").await,
        app.get("/api/amodel/abc/").await,
        app.get("/api/amodel/-1/").await,
    ] {
        assert_eq!(resp.json_with(404), json!({"error": "Not found"}));
    }
    assert_eq!(app.count("amodel"), 1);
}

#[actix_web::test]
async fn head_is_get() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'one');").await;
    let resp = app
        .send(
            TestRequest::default()
                .method(Method::HEAD)
                .uri("/api/amodel/1/"),
        )
        .await;
    resp.expect(200);
    assert_eq!(resp.header("content-type"), Some("application/json"));
    let resp = app
        .send(
            TestRequest::default()
                .method(Method::HEAD)
                .uri("/api/amodel/"),
        )
        .await;
    resp.expect(200);
    let resp = app
        .send(
            TestRequest::default()
                .method(Method::HEAD)
                .uri("/api/amodel/2/"),
        )
        .await;
    resp.expect(404);
}

// --- trailing slash -----------------------------------------------------------------------

#[actix_web::test]
async fn paths_without_trailing_slash_answer_the_same() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'one');").await;
    let with = app.get("/api/amodel/?a_field=one").await.json_with(200);
    let without = app.get("/api/amodel?a_field=one").await.json_with(200);
    assert_eq!(with, without);
    assert_eq!(
        app.get("/api/amodel/1").await.json_with(200),
        json!({"id": 1, "a_field": "one"})
    );

    let resp = app.post("/api/amodel", json!({"a_field": "two"})).await;
    assert_eq!(resp.json_with(201), json!({"id": 2, "a_field": "two"}));
    assert_eq!(resp.header("location"), Some("/api/amodel/2/"));
    let resp = app.put("/api/amodel/2", json!({"a_field": "deux"})).await;
    assert_eq!(resp.json_with(200), json!({"id": 2, "a_field": "deux"}));
    let resp = app.delete("/api/amodel/1").await;
    assert_eq!(resp.json_with(200), json!({"deleted": 1}));
    assert_eq!(app.get("/api/amodel").await.ids(), vec![2]);
}

// --- 405 ----------------------------------------------------------------------------------

#[actix_web::test]
async fn verbs_a_path_does_not_serve_are_405_with_allow() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'one');").await;
    let put_list = app.put("/api/amodel/", json!({"a_field": "x"})).await;
    assert_error(&put_list, 405);
    assert_eq!(allow(&put_list), ["GET", "POST"]);
    let delete_list = app.delete("/api/amodel/").await;
    assert_error(&delete_list, 405);
    assert_eq!(allow(&delete_list), ["GET", "POST"]);
    let post_detail = app.post("/api/amodel/1/", json!({"a_field": "x"})).await;
    assert_error(&post_detail, 405);
    assert_eq!(allow(&post_detail), ["DELETE", "GET", "PUT"]);
    let patch = app
        .send(json_request(
            Method::PATCH,
            "/api/amodel/1/",
            &json!({"a_field": "x"}),
        ))
        .await;
    assert_error(&patch, 405);
    assert_eq!(allow(&patch), ["DELETE", "GET", "PUT"]);
    let options = app
        .send(
            TestRequest::default()
                .method(Method::OPTIONS)
                .uri("/api/amodel/"),
        )
        .await;
    assert_error(&options, 405);
    assert_eq!(allow(&options), ["GET", "POST"]);
    assert_eq!(app.count("amodel"), 1);
    assert_eq!(
        app.query_text("SELECT a_field FROM amodel"),
        Some("one".into())
    );
}

#[actix_web::test]
async fn allowed_methods_restricts_the_verbs() {
    let app = TestApp::with_seed(
        "INSERT INTO amodel VALUES (1, 'one'); INSERT INTO apikey VALUES (1, 'k', 's');",
    )
    .await;
    let post = app.post("/api/readonly_a/", json!({"a_field": "x"})).await;
    assert_error(&post, 405);
    assert_eq!(allow(&post), ["GET"]);
    let put = app.put("/api/readonly_a/1/", json!({"a_field": "x"})).await;
    assert_error(&put, 405);
    assert_eq!(allow(&put), ["GET"]);
    let delete = app.delete("/api/readonly_a/1/").await;
    assert_eq!(allow(&delete), ["GET"]);
    assert_eq!(
        app.get("/api/readonly_a/1/").await.json_with(200),
        json!({"id": 1, "a_field": "one"})
    );

    // apikey serves GET, POST and DELETE: its detail path serves GET and DELETE.
    app.user_with("root", "pw", true, true);
    let put = app
        .send(
            json_request(Method::PUT, "/api/apikey/1/", &json!({"secret": "x"}))
                .insert_header(basic("root", "pw")),
        )
        .await;
    assert_error(&put, 405);
    assert_eq!(allow(&put), ["DELETE", "GET"]);
    assert_eq!(app.count("amodel"), 1);
    assert_eq!(
        app.query_text("SELECT secret FROM apikey"),
        Some("s".into())
    );
}

// --- incoming data ------------------------------------------------------------------------

#[actix_web::test]
async fn post_and_put_with_an_urlencoded_data_field() {
    let app = TestApp::new().await;
    let resp = app
        .send(form_request(
            Method::POST,
            "/api/amodel/",
            &[("data", r#"{"a_field": "from a form & more"}"#)],
        ))
        .await;
    assert_eq!(
        resp.json_with(201),
        json!({"id": 1, "a_field": "from a form & more"})
    );
    let resp = app
        .send(form_request(
            Method::PUT,
            "/api/amodel/1/",
            &[("data", r#"{"a_field": "édité"}"#)],
        ))
        .await;
    assert_eq!(resp.json_with(200), json!({"id": 1, "a_field": "édité"}));
    assert_eq!(
        app.query_text("SELECT a_field FROM amodel WHERE id = 1"),
        Some("édité".into())
    );
}

#[actix_web::test]
async fn post_and_put_with_a_multipart_data_field() {
    let app = TestApp::new().await;
    let resp = app
        .send(multipart_request(
            Method::POST,
            "/api/bmodel/",
            &[("data", r#"{"a_field": "ignored"}"#)],
        ))
        .await;
    // Unknown key for bmodel: the multipart body was read and validated.
    assert_fields(&resp, &["a_field", "a", "b_field"]);
    app.sql("INSERT INTO amodel VALUES (1, 'a1');");
    let resp = app
        .send(multipart_request(
            Method::POST,
            "/api/bmodel/",
            &[
                ("other", "x"),
                ("data", r#"{"a_id": 1, "b_field": "multi"}"#),
            ],
        ))
        .await;
    assert_eq!(
        resp.json_with(201),
        json!({"id": 1, "a": {"id": 1, "a_field": "a1"}, "b_field": "multi"})
    );
    let resp = app
        .send(multipart_request(
            Method::PUT,
            "/api/bmodel/1/",
            &[("data", r#"{"b_field": "part"}"#)],
        ))
        .await;
    assert_eq!(
        resp.json_with(200),
        json!({"id": 1, "a": {"id": 1, "a_field": "a1"}, "b_field": "part"})
    );
}

#[actix_web::test]
async fn form_bodies_without_a_usable_data_field_are_400() {
    let app = TestApp::new().await;
    for fields in [
        &[("a_field", "x")][..],
        &[("data", "{oops")][..],
        &[("data", "[1]")][..],
        &[("data", "\"text\"")][..],
    ] {
        let resp = app
            .send(form_request(Method::POST, "/api/amodel/", fields))
            .await;
        assert_error(&resp, 400);
        let resp = app
            .send(multipart_request(Method::POST, "/api/amodel/", fields))
            .await;
        assert_error(&resp, 400);
    }
    assert_eq!(app.count("amodel"), 0);
}

#[actix_web::test]
async fn foreign_keys_as_field_id_or_field() {
    let app = TestApp::with_seed(CHAINS).await;
    let by_id = app
        .post("/api/bmodel/", json!({"a_id": 1, "b_field": "x"}))
        .await;
    assert_eq!(
        by_id.json_with(201),
        json!({"id": 3, "a": {"id": 1, "a_field": "a1"}, "b_field": "x"})
    );
    let by_name = app
        .post("/api/bmodel/", json!({"a": 2, "b_field": "y"}))
        .await;
    assert_eq!(
        by_name.json_with(201),
        json!({"id": 4, "a": {"id": 2, "a_field": "a2"}, "b_field": "y"})
    );
    let d = app
        .post("/api/dmodel/", json!({"c": 2, "d_field": "z"}))
        .await;
    assert_eq!(
        d.json_with(201),
        json!({"id": 3, "c_id": 2, "d_field": "z"})
    );
    let moved = app.put("/api/dmodel/3/", json!({"c_id": 1})).await;
    assert_eq!(
        moved.json_with(200),
        json!({"id": 3, "c_id": 1, "d_field": "z"})
    );
    let moved = app.put("/api/bmodel/3/", json!({"a": 2})).await;
    assert_eq!(
        moved.json_with(200),
        json!({"id": 3, "a": {"id": 2, "a_field": "a2"}, "b_field": "x"})
    );
}

#[actix_web::test]
async fn nullable_foreign_key_is_set_and_cleared() {
    let app = TestApp::with_seed("INSERT INTO emodel VALUES (1, 'e1');").await;
    let f = app.post("/api/fmodel/", json!({"f_field": "f"})).await;
    assert_eq!(
        f.json_with(201),
        json!({"id": 1, "e": null, "f_field": "f"})
    );
    let set = app.put("/api/fmodel/1/", json!({"e_id": 1})).await;
    assert_eq!(
        set.json_with(200),
        json!({"id": 1, "e": {"id": 1, "e_field": "e1"}, "f_field": "f"})
    );
    let cleared = app.put("/api/fmodel/1/", json!({"e": null})).await;
    assert_eq!(
        cleared.json_with(200),
        json!({"id": 1, "e": null, "f_field": "f"})
    );
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM fmodel WHERE e_id IS NULL"),
        1
    );
}

#[actix_web::test]
async fn put_is_a_partial_update() {
    let app = TestApp::new().await;
    let full = json!({
        "name": "n", "qty": 3, "big": 44, "ratio": 0.5, "flag": true, "body": "keep",
        "remark": "r", "day": "2020-02-03", "stamp": "2020-02-03 04:05:06",
    });
    let created = app.post("/api/sample/", full.clone()).await.json_with(201);
    let mut expected = full.clone();
    expected["id"] = json!(1);
    assert_eq!(created, expected);

    let resp = app.put("/api/sample/1/", json!({"qty": 4})).await;
    expected["qty"] = json!(4);
    assert_eq!(resp.json_with(200), expected);
    assert_eq!(app.get("/api/sample/1/").await.json_with(200), expected);

    let resp = app.put("/api/sample/1/", json!({})).await;
    assert_eq!(resp.json_with(200), expected);

    let resp = app
        .put("/api/sample/1/", json!({"remark": null, "flag": false}))
        .await;
    expected["remark"] = json!(null);
    expected["flag"] = json!(false);
    assert_eq!(resp.json_with(200), expected);
}

#[actix_web::test]
async fn primary_key_in_a_body_is_ignored() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'one'), (2, 'two');").await;
    let resp = app
        .post("/api/amodel/", json!({"id": 1, "a_field": "three"}))
        .await;
    assert_eq!(resp.json_with(201), json!({"id": 3, "a_field": "three"}));
    let resp = app
        .put("/api/amodel/1/", json!({"id": 2, "a_field": "uno"}))
        .await;
    assert_eq!(resp.json_with(200), json!({"id": 1, "a_field": "uno"}));
    assert_eq!(
        app.get("/api/amodel/").await.objects(),
        vec![
            json!({"id": 1, "a_field": "uno"}),
            json!({"id": 2, "a_field": "two"}),
            json!({"id": 3, "a_field": "three"}),
        ]
    );
    // Even a primary key of the wrong type is ignored, not validated.
    let resp = app
        .post("/api/amodel/", json!({"id": "x", "a_field": "four"}))
        .await;
    assert_eq!(resp.json_with(201), json!({"id": 4, "a_field": "four"}));
}

#[actix_web::test]
async fn defaults_are_applied_on_post() {
    let app = TestApp::new().await;
    let before = chrono::Utc::now().naive_utc() - chrono::Duration::seconds(2);
    let s = app
        .post("/api/sample/", json!({"name": "n", "qty": 1}))
        .await
        .json_with(201);
    let stamp = chrono::NaiveDateTime::parse_from_str(
        s["stamp"].as_str().expect("a stamp"),
        "%Y-%m-%d %H:%M:%S",
    )
    .expect("the date-time format");
    assert!(stamp >= before && stamp <= chrono::Utc::now().naive_utc());
    let mut expected = json!({
        "id": 1, "name": "n", "qty": 1, "big": 0, "ratio": 0.0, "flag": false, "body": "",
        "remark": null, "day": null,
    });
    expected["stamp"] = s["stamp"].clone();
    assert_eq!(s, expected);
}

#[actix_web::test]
async fn date_values_in_bodies_accept_the_filter_forms() {
    let app = TestApp::new().await;
    for (sent, stored) in [
        ("2020-01-02 03:04:05", "2020-01-02 03:04:05"),
        ("2020-01-02T03:04:05", "2020-01-02 03:04:05"),
        ("2020-01-02T03:04:05.750", "2020-01-02 03:04:05"),
        ("2020-01-02", "2020-01-02 00:00:00"),
    ] {
        let h = app
            .post("/api/hmodel/", json!({"h_field": sent, "h_date": sent}))
            .await
            .json_with(201);
        assert_eq!(h["h_date"], json!(stored), "{sent}");
    }
    // Fractional seconds are stored (and compared): only the third row is after 03:04:05.
    let later = app
        .get(&url(
            "/api/hmodel/",
            &[("h_date__gt", "2020-01-02 03:04:05")],
        ))
        .await;
    assert_eq!(later.ids(), vec![3]);
    let h = app
        .post(
            "/api/hmodel/",
            json!({"h_field": "d", "h_day": "2021-03-04"}),
        )
        .await
        .json_with(201);
    assert_eq!(h["h_day"], json!("2021-03-04"));
}

#[actix_web::test]
async fn integers_floats_and_texts_round_trip_exactly() {
    let app = TestApp::new().await;
    let data = json!({
        "name": "line1\nline2 \"quoted\" 'single' \\ back ✓ 日本語 😀", "qty": -2147483648,
        "big": 9223372036854775807i64, "ratio": -3.0625, "flag": true, "body": "",
        "remark": "Robert'); DROP TABLE sample;--", "day": "1999-12-31",
        "stamp": "2001-02-03 04:05:06",
    });
    let s = app.post("/api/sample/", data.clone()).await.json_with(201);
    let mut expected = data;
    expected["id"] = json!(1);
    assert_eq!(s, expected);
    assert_eq!(app.get("/api/sample/1/").await.json_with(200), expected);
    let s = app
        .post(
            "/api/sample/",
            json!({"name": "min", "qty": 2147483647, "big": i64::MIN}),
        )
        .await
        .json_with(201);
    assert_eq!(s["big"], json!(i64::MIN));
    assert_eq!(s["qty"], json!(2147483647));
}

// --- recursive delete ---------------------------------------------------------------------

#[actix_web::test]
async fn delete_removes_dependents_through_non_null_foreign_keys() {
    let app = TestApp::with_seed(CHAINS).await;
    let resp = app.delete("/api/amodel/1/").await;
    assert_eq!(resp.json_with(200), json!({"deleted": 1}));
    for table in ["amodel", "bmodel", "cmodel", "dmodel"] {
        assert_eq!(
            app.query_i64(&format!("SELECT COUNT(*) FROM {table} WHERE id = 1")),
            0,
            "{table} row 1"
        );
        assert_eq!(
            app.query_i64(&format!("SELECT COUNT(*) FROM {table} WHERE id = 2")),
            1,
            "{table} row 2 is unrelated"
        );
    }
}

#[actix_web::test]
async fn delete_in_the_middle_of_the_chain_keeps_what_it_refers_to() {
    let app = TestApp::with_seed(CHAINS).await;
    assert_eq!(
        app.delete("/api/bmodel/1/").await.json_with(200),
        json!({"deleted": 1})
    );
    assert_eq!(app.get("/api/amodel/").await.ids(), vec![1, 2]);
    assert_eq!(app.get("/api/bmodel/").await.ids(), vec![2]);
    assert_eq!(app.get("/api/cmodel/").await.ids(), vec![2]);
    assert_eq!(app.get("/api/dmodel/").await.ids(), vec![2]);
}

#[actix_web::test]
async fn delete_nulls_nullable_foreign_keys() {
    let app = TestApp::with_seed(&format!(
        "{CHAINS}
         INSERT INTO hmodel (id, a_id, h_field) VALUES (1, 1, 'h1'), (2, 2, 'h2'), (3, NULL, 'h3');"
    ))
    .await;
    app.delete("/api/amodel/1/").await.expect(200);
    assert_eq!(
        app.get("/api/hmodel/").await.objects(),
        vec![
            json!({"id": 1, "a_id": null, "h_field": "h1", "h_date": null, "h_day": null}),
            json!({"id": 2, "a_id": 2, "h_field": "h2", "h_date": null, "h_day": null}),
            json!({"id": 3, "a_id": null, "h_field": "h3", "h_date": null, "h_day": null}),
        ]
    );
    assert_eq!(app.count("bmodel"), 1);
}

#[actix_web::test]
async fn deleting_a_user_deletes_its_messages_and_relationships() {
    let app = TestApp::new().await;
    app.user_with("root", "pw", true, true);
    let alice = app.user("alice", "pw");
    let bob = app.user("bob", "pw");
    app.sql(&format!(
        "INSERT INTO message (id, user_id, content, pub_date) VALUES
            (1, {alice}, 'a', '2020-01-01 00:00:00'), (2, {bob}, 'b', '2020-01-01 00:00:00');
         INSERT INTO relationship (id, from_user_id, to_user_id) VALUES
            (1, {alice}, {bob}), (2, {bob}, {alice}), (3, {bob}, {bob});"
    ));
    let resp = app
        .send(
            TestRequest::delete()
                .uri(&format!("/api/user/{alice}/"))
                .insert_header(basic("root", "pw")),
        )
        .await;
    assert_eq!(resp.json_with(200), json!({"deleted": 1}));
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM message"), 1);
    assert_eq!(
        app.query_i64(&format!(
            "SELECT COUNT(*) FROM message WHERE user_id = {bob}"
        )),
        1
    );
    assert_eq!(app.query_i64("SELECT id FROM relationship"), 3);
    assert_eq!(app.count("relationship"), 1);
}

#[actix_web::test]
async fn delete_recursive_false_refuses_with_409_when_rows_depend() {
    let app = TestApp::with_seed(
        "INSERT INTO emodel VALUES (1, 'e1'), (2, 'e2');
         INSERT INTO fmodel VALUES (1, 1, 'f1');",
    )
    .await;
    // The dependent row's foreign key is nullable: still a 409, nothing nulled or deleted.
    assert_error(&app.delete("/api/emodel/1/").await, 409);
    assert_eq!(app.count("emodel"), 2);
    assert_eq!(app.query_i64("SELECT e_id FROM fmodel WHERE id = 1"), 1);
    // Without dependents the delete goes through.
    assert_eq!(
        app.delete("/api/emodel/2/").await.json_with(200),
        json!({"deleted": 1})
    );
    assert_eq!(app.get("/api/emodel/").await.ids(), vec![1]);
}

#[actix_web::test]
async fn a_recursive_delete_that_fails_deletes_nothing() {
    // A table Plover does not know refers to amodel: the final DELETE of the AModel row fails,
    // after the dependent B, C and D rows were deleted in the same transaction.
    let app = TestApp::with_seed(&format!(
        "{CHAINS}
         CREATE TABLE foreign_ref (id INTEGER PRIMARY KEY, a_id INTEGER NOT NULL REFERENCES amodel(id));
         INSERT INTO foreign_ref VALUES (1, 1);"
    ))
    .await;
    // The blocking rows are dependents: 409, as for delete_recursive = false.
    assert_error(&app.delete("/api/amodel/1/").await, 409);
    for table in ["amodel", "bmodel", "cmodel", "dmodel"] {
        assert_eq!(app.count(table), 2, "{table}");
    }
}

#[actix_web::test]
async fn failed_writes_write_nothing() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'a1');").await;
    // POST: the foreign key is checked in the transaction, before anything is inserted.
    let resp = app
        .post("/api/bmodel/", json!({"a_id": 99, "b_field": "x"}))
        .await;
    assert_fields(&resp, &["a_id"]);
    assert_eq!(app.count("bmodel"), 0);
    // PUT: one valid and one invalid change: neither is saved.
    app.sql(
        "INSERT INTO sample (id, name, qty, body, stamp) VALUES (1, 'n', 5, 'before', '2020-01-01 00:00:00');",
    );
    let resp = app
        .put("/api/sample/1/", json!({"body": "after", "qty": "NaN"}))
        .await;
    assert_fields(&resp, &["qty"]);
    let resp = app
        .put(
            "/api/sample/1/",
            json!({"body": "after", "name": "m", "bogus": 1}),
        )
        .await;
    assert_fields(&resp, &["bogus"]);
    assert_eq!(
        app.query_text("SELECT body || '/' || name || '/' || qty FROM sample"),
        Some("before/n/5".into())
    );
}

#[actix_web::test]
async fn delete_recursive_false_refuses_through_non_null_foreign_keys_too() {
    let app = TestApp::with_seed(&format!(
        "{CHAINS}
         INSERT INTO amodel VALUES (3, 'a3'), (4, 'a4');
         INSERT INTO hmodel (id, a_id, h_field) VALUES (1, 3, 'h');"
    ))
    .await;
    // a_norec: AModel with delete_recursive = false. bmodel refers to a1 (non-null key),
    // hmodel to a3 (nullable key).
    assert_error(&app.delete("/api/a_norec/1/").await, 409);
    assert_error(&app.delete("/api/a_norec/3/").await, 409);
    for table in ["amodel", "bmodel", "cmodel", "dmodel"] {
        assert_eq!(
            app.query_i64(&format!("SELECT COUNT(*) FROM {table} WHERE id = 1")),
            1
        );
    }
    assert_eq!(app.query_i64("SELECT a_id FROM hmodel"), 3);
    assert_eq!(
        app.delete("/api/a_norec/4/").await.json_with(200),
        json!({"deleted": 1})
    );
    assert_eq!(app.get("/api/amodel/").await.ids(), [1, 2, 3]);
}

#[actix_web::test]
async fn location_uses_the_primary_key_even_when_it_is_not_serialized() {
    let app = TestApp::new().await;
    let resp = app
        .post("/api/noid/", json!({"name": "n1", "qty": 3}))
        .await;
    assert_eq!(resp.json_with(201), json!({"name": "n1", "qty": 3}));
    let id = app.query_i64("SELECT id FROM sample WHERE name = 'n1'");
    assert_eq!(
        resp.header("Location"),
        Some(format!("/api/noid/{id}/").as_str())
    );
}

#[actix_web::test]
async fn default_auth_set_after_registration_applies() {
    let app = TestApp::new().await;
    let resp = app.post("/small/emodel/", json!({"e_field": "x"})).await;
    assert_eq!(resp.json_with(201)["e_field"], "x");
}

#[actix_web::test]
async fn concurrent_writes_that_check_foreign_keys_all_succeed() {
    // Each POST reads (the foreign-key check) before it writes: on SQLite the transaction must
    // take the write lock up front, or concurrent writers fail instead of waiting.
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'a1');").await;
    let posts = (0..24).map(|i| {
        app.post(
            "/api/bmodel/",
            json!({"a_id": 1, "b_field": format!("b{i}")}),
        )
    });
    let statuses: Vec<u16> = futures_util::future::join_all(posts)
        .await
        .iter()
        .map(Resp::code)
        .collect();
    assert_eq!(statuses, vec![201; 24]);
    assert_eq!(app.count("bmodel"), 24);
}
