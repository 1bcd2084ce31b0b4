//! docs/contract.md#objects: the serialized object (keys, types and formats, foreign keys,
//! include_resources, fields/exclude, prepare_data, meta.model).

use actix_web::http::Method;
use actix_web::test::TestRequest;
use plover::prelude::*;
use plover_tests::*;
use serde_json::{json, Value};

fn keys(v: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = v
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

const SAMPLES: &str = r#"
INSERT INTO sample (id, name, qty, big, ratio, flag, body, remark, day, stamp) VALUES
    (1, 'full', -7, 9223372036854775807, 0.25, TRUE, 'b', 'r', '1999-12-31', '2001-02-03 04:05:06'),
    (2, 'nulls', 0, -9223372036854775808, 2.0, FALSE, '', NULL, NULL, '2020-01-02 03:04:05.678');
"#;

#[actix_web::test]
async fn every_scalar_type() {
    let app = TestApp::with_seed(SAMPLES).await;
    let full = app.get("/api/sample/1/").await.json_with(200);
    assert_eq!(
        full,
        json!({
            "id": 1, "name": "full", "qty": -7, "big": 9223372036854775807i64, "ratio": 0.25,
            "flag": true, "body": "b", "remark": "r", "day": "1999-12-31",
            "stamp": "2001-02-03 04:05:06",
        })
    );
    assert!(full["id"].is_i64() && full["qty"].is_i64() && full["big"].is_i64());
    assert!(full["ratio"].is_f64());
    assert!(full["flag"].is_boolean());

    let nulls = app.get("/api/sample/2/").await.json_with(200);
    assert_eq!(
        nulls,
        json!({
            "id": 2, "name": "nulls", "qty": 0, "big": i64::MIN, "ratio": 2.0, "flag": false,
            "body": "", "remark": null, "day": null, "stamp": "2020-01-02 03:04:05",
        })
    );
    // A float keeps its type even when integral; false is JSON false, NULL is JSON null.
    assert!(nulls["ratio"].is_f64());
    assert_eq!(nulls["flag"], Value::Bool(false));
    assert!(nulls["remark"].is_null() && nulls["day"].is_null());
}

#[actix_web::test]
async fn date_and_datetime_formats() {
    let app = TestApp::with_seed(
        "INSERT INTO hmodel VALUES (1, NULL, 'h', '2022-11-30 23:59:58.999', '2022-02-28'),
                                   (2, NULL, 'n', NULL, NULL);",
    )
    .await;
    assert_eq!(
        app.get("/api/hmodel/").await.objects(),
        vec![
            json!({"id": 1, "a_id": null, "h_field": "h", "h_date": "2022-11-30 23:59:58",
                   "h_day": "2022-02-28"}),
            json!({"id": 2, "a_id": null, "h_field": "n", "h_date": null, "h_day": null}),
        ]
    );
}

#[actix_web::test]
async fn plain_model_has_one_key_per_field() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'h\u{e9}llo \u{1F600}');").await;
    let a = app.get("/api/amodel/1/").await.json_with(200);
    assert_eq!(a, json!({"id": 1, "a_field": "héllo 😀"}));
}

#[actix_web::test]
async fn foreign_key_without_include_is_field_id() {
    let app = TestApp::with_seed(CHAINS).await;
    let d = app.get("/api/dmodel/2/").await.json_with(200);
    assert_eq!(d, json!({"id": 2, "c_id": 2, "d_field": "d2"}));
    assert_eq!(keys(&d), ["c_id", "d_field", "id"]);
}

#[actix_web::test]
async fn include_resources_nests_the_related_object() {
    let app = TestApp::with_seed(CHAINS).await;
    let b = app.get("/api/bmodel/1/").await.json_with(200);
    assert_eq!(
        b,
        json!({"id": 1, "a": {"id": 1, "a_field": "a1"}, "b_field": "b1"})
    );
    assert_eq!(keys(&b), ["a", "b_field", "id"]);
}

#[actix_web::test]
async fn include_resources_nests_twice() {
    let app = TestApp::with_seed(CHAINS).await;
    let expected = json!({
        "id": 2, "c_field": "c2",
        "b": {"id": 2, "b_field": "b2", "a": {"id": 2, "a_field": "a2"}},
    });
    assert_eq!(app.get("/api/cmodel/2/").await.json_with(200), expected);
    let listed = app.get("/api/cmodel/").await.objects();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[1], expected);
    assert_eq!(
        listed[0],
        json!({"id": 1, "c_field": "c1",
               "b": {"id": 1, "b_field": "b1", "a": {"id": 1, "a_field": "a1"}}})
    );
}

#[actix_web::test]
async fn nested_resources_apply_their_own_exclude() {
    let app = TestApp::with_seed(CHAINS).await;
    // dchain: D includes C, which includes B (excluding b_field), which includes A.
    let d = app.get("/api/dchain/1/").await.json_with(200);
    assert_eq!(
        d,
        json!({
            "id": 1, "d_field": "d1",
            "c": {"id": 1, "c_field": "c1", "b": {"id": 1, "a": {"id": 1, "a_field": "a1"}}},
        })
    );
    assert_eq!(keys(&d["c"]["b"]), ["a", "id"]);
}

#[actix_web::test]
async fn several_rows_share_a_nested_object() {
    let app = TestApp::with_seed(
        "INSERT INTO amodel VALUES (1, 'a1'), (2, 'a2');
         INSERT INTO bmodel VALUES (1, 2, 'x'), (2, 1, 'y'), (3, 2, 'z');",
    )
    .await;
    let a1 = json!({"id": 1, "a_field": "a1"});
    let a2 = json!({"id": 2, "a_field": "a2"});
    assert_eq!(
        app.get("/api/bmodel/").await.objects(),
        vec![
            json!({"id": 1, "a": a2, "b_field": "x"}),
            json!({"id": 2, "a": a1, "b_field": "y"}),
            json!({"id": 3, "a": a2, "b_field": "z"}),
        ]
    );
}

#[actix_web::test]
async fn null_foreign_key_with_and_without_include() {
    let app = TestApp::with_seed(
        "INSERT INTO emodel VALUES (1, 'e1');
         INSERT INTO fmodel VALUES (1, NULL, 'lonely'), (2, 1, 'paired');
         INSERT INTO amodel VALUES (1, 'a1');
         INSERT INTO hmodel (id, a_id, h_field) VALUES (1, NULL, 'h1'), (2, 1, 'h2');",
    )
    .await;
    let f = app.get("/api/fmodel/").await.objects();
    assert_eq!(
        f,
        vec![
            json!({"id": 1, "e": null, "f_field": "lonely"}),
            json!({"id": 2, "e": {"id": 1, "e_field": "e1"}, "f_field": "paired"}),
        ]
    );
    assert_eq!(keys(&f[0]), ["e", "f_field", "id"]);
    let h = app.get("/api/hmodel/").await.objects();
    assert_eq!(h[0]["a_id"], Value::Null);
    assert_eq!(h[1]["a_id"], json!(1));
    assert_eq!(keys(&h[0]), ["a_id", "h_date", "h_day", "h_field", "id"]);
}

#[actix_web::test]
async fn excluded_fields_never_appear_also_nested() {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let bob = app.user("bob", "pw");
    app.sql(&format!(
        "INSERT INTO message VALUES (1, {alice}, 'hi', '2020-05-06 07:08:09');
         INSERT INTO relationship VALUES (1, {alice}, {bob});"
    ));
    let user = json!({"id": alice, "username": "alice", "join_date": "2020-01-01 00:00:00",
                      "active": true, "admin": false});
    assert_eq!(
        app.get(&format!("/api/user/{alice}/")).await.json_with(200),
        user
    );
    let m = app.get("/api/message/1/").await.json_with(200);
    assert_eq!(
        m,
        json!({"id": 1, "user": user, "content": "hi", "pub_date": "2020-05-06 07:08:09"})
    );
    assert_eq!(app.get("/api/message/").await.objects(), vec![m]);
    // A sibling foreign key that is not included stays `<field>_id`.
    let rel = app.get("/api/relationship/1/").await.json_with(200);
    assert_eq!(keys(&rel), ["from_user_id", "id", "to_user"]);
    assert_eq!(rel["from_user_id"], json!(alice));
    assert_eq!(
        keys(&rel["to_user"]),
        ["active", "admin", "id", "join_date", "username"]
    );
    let body = app.get("/api/relationship/").await.text();
    assert!(!body.contains("password") && !body.contains("email") && !body.contains("$2"));
}

#[actix_web::test]
async fn fields_and_exclude_options() {
    let app = TestApp::with_seed(SAMPLES).await;
    assert_eq!(
        app.get("/api/slim/1/").await.json_with(200),
        json!({"id": 1, "name": "full", "qty": -7})
    );
    assert_eq!(
        app.get("/api/lean/1/").await.json_with(200),
        json!({"id": 1, "name": "full", "qty": -7, "big": 9223372036854775807i64,
               "ratio": 0.25, "flag": true, "day": "1999-12-31"})
    );
    // Also in POST and PUT responses.
    let created = app
        .post("/api/slim/", json!({"name": "new", "qty": 2, "flag": true}))
        .await;
    assert_eq!(
        created.json_with(201),
        json!({"id": 3, "name": "new", "qty": 2})
    );
    let edited = app
        .put("/api/lean/3/", json!({"body": "hidden"}))
        .await
        .json_with(200);
    assert_eq!(
        keys(&edited),
        ["big", "day", "flag", "id", "name", "qty", "ratio"]
    );
    assert_eq!(
        app.query_text("SELECT body FROM sample WHERE id = 3"),
        Some("hidden".into())
    );

    // apikey: fields = id, key.
    app.user_with("root", "pw", true, true);
    app.sql("INSERT INTO apikey VALUES (1, 'pub', 'very-secret');");
    let resp = app
        .send(
            TestRequest::get()
                .uri("/api/apikey/")
                .insert_header(basic("root", "pw")),
        )
        .await;
    assert_eq!(resp.objects(), vec![json!({"id": 1, "key": "pub"})]);
    assert!(!resp.text().contains("very-secret"));
}

#[actix_web::test]
async fn model_level_exclude() {
    let app = TestApp::with_seed("INSERT INTO vault VALUES (1, 'v', '1234');").await;
    assert_eq!(
        app.get("/api/vault/1/").await.json_with(200),
        json!({"id": 1, "label": "v"})
    );
    let created = app.post("/api/vault/", json!({"label": "w"})).await;
    assert_eq!(created.json_with(201), json!({"id": 2, "label": "w"}));
    assert!(!app.get("/api/vault/").await.text().contains("1234"));
}

#[actix_web::test]
async fn prepare_data_adds_keys_per_registration() {
    let app = TestApp::with_seed(
        "INSERT INTO apikey VALUES (1, 'k', 's');
         INSERT INTO note VALUES (1, 'h\u{e9}llo', '2020-01-01 10:00:00');",
    )
    .await;
    let expected =
        json!({"id": 1, "message": "héllo", "created": "2020-01-01 10:00:00", "message_length": 5});
    let detail = app.get("/api/note/1/?key=k&secret=s").await.json_with(200);
    assert_eq!(detail, expected);
    let listed = app.get("/api/note/?key=k&secret=s").await.objects();
    assert_eq!(listed, vec![expected]);
    let created = app
        .post("/api/note/?key=k&secret=s", json!({"message": "abc"}))
        .await
        .json_with(201);
    assert_eq!(created["message_length"], json!(3));
    // The same model registered without the hook (/v2/note/) has no extra key.
    assert_eq!(
        app.get("/v2/note/1/").await.json_with(200),
        json!({"id": 1, "message": "héllo", "created": "2020-01-01 10:00:00"})
    );
}

#[actix_web::test]
async fn meta_model_is_the_resource_name() {
    let app = TestApp::with_seed(SAMPLES).await;
    for (path, name) in [
        ("/api/amodel/", "amodel"),
        ("/api/sample/", "sample"),
        ("/api/slim/", "slim"),
        ("/api/message/", "message"),
        ("/v2/follow/", "follow"),
        ("/v2/note/", "note"),
    ] {
        let body = app.get(path).await.json_with(200);
        assert_eq!(body["meta"]["model"], json!(name), "{path}");
    }
}

#[actix_web::test]
async fn list_objects_equal_detail_objects() {
    let app = TestApp::with_seed(SAMPLES).await;
    let listed = app.get("/api/sample/").await.objects();
    let details = vec![
        app.get("/api/sample/1/").await.json_with(200),
        app.get("/api/sample/2/").await.json_with(200),
    ];
    assert_eq!(listed, details);
}

#[actix_web::test]
async fn every_json_response_has_the_json_content_type() {
    let app = TestApp::new().await;
    let requests = [
        json_request(Method::POST, "/api/amodel/", &json!({"a_field": "x"})),
        TestRequest::get().uri("/api/amodel/"),
        TestRequest::get().uri("/api/amodel/1/"),
        json_request(Method::PUT, "/api/amodel/1/", &json!({"a_field": "y"})),
        TestRequest::delete().uri("/api/amodel/1/"),
        TestRequest::get().uri("/api/amodel/1/"),
        TestRequest::get().uri("/api/nowhere/"),
        TestRequest::put().uri("/api/amodel/"),
        TestRequest::get().uri("/api/amodel/?id=x"),
    ];
    let mut statuses = Vec::new();
    for req in requests {
        let resp = app.send(req).await;
        assert_eq!(resp.header("content-type"), Some("application/json"));
        assert!(resp.json().is_object());
        statuses.push(resp.code());
    }
    assert_eq!(statuses, [201, 200, 200, 200, 200, 404, 404, 405, 400]);
}

/// Hooks whose `prepare_data` shows what a `Sample` carries in the fields its resource hides.
struct Peek {
    reads: bool,
}

impl plover::rest::Hooks<Sample> for Peek {
    fn prepare_data(
        &self,
        _cx: &plover::rest::Context<'_>,
        obj: &Sample,
        data: &mut plover::rest::Data<'_>,
    ) {
        let day = obj.day.map(|d| d.to_string());
        let seen = json!([
            obj.big,
            obj.ratio,
            obj.flag,
            obj.body,
            obj.remark,
            day,
            obj.stamp.to_string()
        ]);
        data.insert("seen", seen);
    }

    fn reads_hidden_fields(&self) -> bool {
        self.reads
    }
}

/// A list loads only the columns it shows when its hooks read no others (or it has none):
/// what it sends is the same, and `prepare_data` then sees the hidden fields at their default.
#[actix_web::test]
async fn a_list_loads_the_hidden_fields_only_for_hooks_that_read_them() {
    let (db, _store) = fresh_database("");
    db.run_blocking(|conn| {
        plover::schema::create_tables(conn, &[Sample::meta()])?;
        conn.batch_execute(SAMPLES)
    })
    .expect("seeded");
    let f = Sample::FIELDS;
    let hidden = [f.big, f.ratio, f.flag, f.body, f.remark, f.day, f.stamp];
    let mut api = RestApi::new(db);
    api.register_resource(Resource::<Sample>::new().name("plain").exclude(hidden))
        .register_resource(
            Resource::<Sample>::new()
                .name("reads")
                .exclude(hidden)
                .hooks(Peek { reads: true }),
        )
        .register_resource(
            Resource::<Sample>::new()
                .name("blind")
                .exclude(hidden)
                .hooks(Peek { reads: false }),
        );
    let api = api.setup();
    let service = actix_web::test::init_service(actix_web::App::new().configure(api)).await;
    let get = |uri: &str| TestRequest::get().uri(uri).to_request();
    let mut bodies = Vec::new();
    for path in ["plain", "reads", "blind"] {
        for uri in [
            format!("/api/{path}/?ordering=id"),
            format!("/api/{path}/?qty__gte=0&ordering=-name"),
            format!("/api/{path}/1/"),
        ] {
            let body: Value = actix_web::test::call_and_read_body_json(&service, get(&uri)).await;
            bodies.push((uri, body));
        }
    }
    let objects = |at: usize| -> Vec<Value> {
        match bodies[at].1.get("objects") {
            Some(objects) => objects.as_array().cloned().unwrap_or_default(),
            None => vec![bodies[at].1.clone()],
        }
    };
    // Without hooks: the shown fields, right, in lists and details alike.
    assert_eq!(
        objects(0),
        vec![
            json!({"id": 1, "name": "full", "qty": -7}),
            json!({"id": 2, "name": "nulls", "qty": 0})
        ]
    );
    assert_eq!(
        objects(1),
        vec![json!({"id": 2, "name": "nulls", "qty": 0})]
    );
    assert_eq!(
        objects(2),
        vec![json!({"id": 1, "name": "full", "qty": -7})]
    );
    // Hooks that read hidden fields get them whole, in lists and details.
    let full = json!([
        i64::MAX,
        0.25,
        true,
        "b",
        "r",
        "1999-12-31",
        "2001-02-03 04:05:06"
    ]);
    assert_eq!(objects(3)[0]["seen"], full);
    assert_eq!(
        objects(4)[0]["seen"],
        json!([
            i64::MIN,
            2.0,
            false,
            "",
            null,
            null,
            "2020-01-02 03:04:05.678"
        ])
    );
    assert_eq!(objects(5)[0]["seen"], full);
    // Hooks that say they do not: a list leaves those columns out, a detail still loads them.
    let defaults = json!([0, 0.0, false, "", null, null, "1970-01-01 00:00:00"]);
    assert_eq!(objects(6)[0]["seen"], defaults);
    assert_eq!(objects(7)[0]["seen"], defaults);
    assert_eq!(objects(8)[0]["seen"], full);
    for at in [3, 6] {
        assert_eq!(objects(at)[1]["name"], json!("nulls"), "{}", bodies[at].0);
    }
}
