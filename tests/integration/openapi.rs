//! The API describes itself (docs/contract.md#api-description): `{prefix}/openapi.json` and
//! `{prefix}/docs/`, checked against the registrations and against what the server accepts;
//! PATCH.

use actix_web::http::Method;
use actix_web::test::{self, TestRequest};
use actix_web::App;
use plover::model::{FieldKind, FieldMeta};
use plover::openapi::spec::path::{HttpMethod, Operation};
use plover::prelude::*;
use plover_tests::*;
use serde_json::{json, Value};

const OPS: [&str; 10] = [
    "eq", "ne", "lt", "lte", "gt", "gte", "in", "is", "like", "ilike",
];

/// A filter value the field's type accepts.
fn sample_value(field: &FieldMeta, op: &str) -> &'static str {
    if op == "is" {
        return "null";
    }
    match field.kind() {
        FieldKind::Int32 | FieldKind::Int64 => "1",
        FieldKind::Float => "1.5",
        FieldKind::Bool => "true",
        // A choice field takes only its choices.
        FieldKind::Text => field.constraints().choices.first().copied().unwrap_or("x"),
        FieldKind::Date => "2020-01-02",
        FieldKind::DateTime => "2020-01-02 03:04:05",
    }
}

/// The query parameter names of an operation: an object parameter in form style, exploded,
/// stands for one parameter per property.
fn parameter_names(op: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for p in op["parameters"].as_array().into_iter().flatten() {
        match p["schema"]["properties"].as_object() {
            Some(properties) if p["explode"] == true => names.extend(properties.keys().cloned()),
            _ => names.extend(p["name"].as_str().map(str::to_owned)),
        }
    }
    names
}

/// An application with an admin user and an API key: every list answers with credentials.
async fn app_with_credentials() -> (TestApp, (&'static str, String)) {
    let app = TestApp::new().await;
    app.user_with("root", "rootpw", true, true);
    app.sql("INSERT INTO apikey (key, secret) VALUES ('k', 's')");
    (app, basic("root", "rootpw"))
}

#[actix_web::test]
async fn every_registration_and_verb_is_described() {
    let (app, _) = app_with_credentials().await;
    let mut checked = 0;
    for (prefix, registrations) in &app.registrations {
        let doc = app
            .get(&format!("{prefix}/openapi.json"))
            .await
            .json_with(200);
        assert_eq!(doc["openapi"], "3.1.0");
        let paths = doc["paths"].as_object().expect("paths");
        let described = |path: &str| -> Vec<String> {
            let mut verbs: Vec<String> = paths
                .get(path)
                .and_then(Value::as_object)
                .map(|item| item.keys().map(|m| m.to_uppercase()).collect())
                .unwrap_or_default();
            verbs.sort();
            verbs
        };
        let names = |methods: &[Method]| -> Vec<String> {
            let mut names: Vec<String> = methods.iter().map(|m| m.to_string()).collect();
            names.sort();
            names
        };
        for reg in registrations {
            let list = format!("{prefix}/{}/", reg.name);
            let detail = format!("{prefix}/{}/{{pk}}/", reg.name);
            assert_eq!(described(&list), names(&reg.list), "{list}");
            assert_eq!(described(&detail), names(&reg.detail), "{detail}");
            let aggregate = format!("{prefix}/{}/aggregate/", reg.name);
            assert_eq!(described(&aggregate), names(&reg.aggregate), "{aggregate}");
            let changes = format!("{prefix}/{}/changes/", reg.name);
            assert_eq!(described(&changes), names(&reg.changes), "{changes}");
            checked += 1;
        }
        // Nothing else: a path for each of a registration's paths that serves a verb.
        let served: usize = registrations
            .iter()
            .map(|reg| {
                [&reg.list, &reg.detail, &reg.aggregate, &reg.changes]
                    .iter()
                    .filter(|verbs| !verbs.is_empty())
                    .count()
            })
            .sum();
        assert_eq!(paths.len(), served, "{prefix}: {:?}", paths.keys());
    }
    assert!(checked > 20, "only {checked} registrations");
}

#[actix_web::test]
async fn every_filter_the_server_takes_is_described_and_no_other() {
    let (app, admin) = app_with_credentials().await;
    let mut accepted = 0;
    for (prefix, registrations) in &app.registrations {
        let doc = app
            .get(&format!("{prefix}/openapi.json"))
            .await
            .json_with(200);
        for reg in registrations {
            let list = format!("{prefix}/{}/", reg.name);
            let Some(op) = doc["paths"][&list].get("get") else {
                continue;
            };
            let documented = parameter_names(op);
            let base = url(&list, &[("key", "k"), ("secret", "s")]);
            let resp = app
                .send(TestRequest::get().uri(&base).insert_header(admin.clone()))
                .await;
            if resp.code() != 200 {
                continue; // a list its hooks refuse (403) says nothing of its filters
            }
            // Own fields, and the fields one foreign key away.
            let mut candidates: Vec<(String, &FieldMeta)> = Vec::new();
            for field in reg.meta.fields() {
                candidates.push((field.name().to_owned(), field));
                if let Some(target) = field.target() {
                    for related in target.fields() {
                        let stem = format!("{}__{}", field.name(), related.name());
                        candidates.push((stem, related));
                    }
                }
            }
            for (stem, field) in candidates {
                for op_name in OPS {
                    let param = format!("{stem}__{op_name}");
                    let value = sample_value(field, op_name);
                    let uri = url(&list, &[(&param, value), ("key", "k"), ("secret", "s")]);
                    let resp = app
                        .send(TestRequest::get().uri(&uri).insert_header(admin.clone()))
                        .await;
                    let takes = match resp.code() {
                        200 => true,
                        400 => false,
                        other => panic!("{uri}: {other} {}", resp.text()),
                    };
                    assert_eq!(
                        documented.contains(&param),
                        takes,
                        "{uri} answers {}: described {}",
                        resp.code(),
                        documented.contains(&param)
                    );
                    if op_name == "eq" {
                        // `key` and `secret` are an API key's credentials, never a filter.
                        let bare = takes && !["key", "secret"].contains(&stem.as_str());
                        assert_eq!(documented.contains(&stem), bare, "{list}?{stem}");
                    }
                    accepted += usize::from(takes);
                }
            }
        }
    }
    assert!(accepted > 500, "only {accepted} filters accepted");
}

#[actix_web::test]
async fn objects_and_bodies_follow_the_resource_options() {
    let app = TestApp::new().await;
    let doc = app.get("/api/openapi.json").await.json_with(200);
    let schemas = &doc["components"]["schemas"];

    // `user`: password and email excluded; `id` read-only.
    let user = &schemas["user"];
    let keys: Vec<&str> = user["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert!(
        !keys.contains(&"password") && !keys.contains(&"email"),
        "{keys:?}"
    );
    assert_eq!(user["properties"]["id"]["readOnly"], true);
    // The password can be written, never read.
    let create = &schemas["user.create"];
    assert_eq!(create["properties"]["password"]["writeOnly"], true);
    assert_eq!(create["additionalProperties"], false);
    let required: Vec<&str> = create["required"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(required.contains(&"username"), "{required:?}");
    assert!(schemas["user.update"].get("required").is_none());

    // `message`: the owner is stamped by the server; `user` is the nested user object.
    let message = &schemas["message"]["properties"];
    assert_eq!(message["user"]["type"], "object");
    assert!(message["user"]["properties"].get("password").is_none());
    assert!(message.get("user_id").is_none());
    assert!(schemas["message.create"]["properties"]
        .get("user_id")
        .is_none());

    // Nullable types, date and date-time patterns (`sample`).
    let sample = &schemas["sample"]["properties"];
    let nullable =
        sample.as_object().unwrap().values().any(|p| {
            p["type"] == json!(["string", "null"]) || p["type"] == json!(["integer", "null"])
        });
    assert!(nullable, "{sample}");
    let written = &schemas["sample.create"]["properties"];
    let patterns: Vec<&str> = written
        .as_object()
        .unwrap()
        .values()
        .filter_map(|p| p["pattern"].as_str())
        .collect();
    assert!(patterns.iter().any(|p| p.contains("[ T]")), "{patterns:?}");

    // Security: Basic on `message` writes, none on its reads; the API key pair on `note`.
    let message_ops = &doc["paths"]["/api/message/"];
    assert_eq!(message_ops["post"]["security"], json!([{"basic": []}]));
    assert!(message_ops["get"].get("security").is_none());
    assert!(message_ops["get"]["responses"].get("401").is_none());
    let note = &doc["paths"]["/api/note/"]["get"]["security"];
    assert_eq!(
        note,
        &json!([{"key": [], "secret": []}, {"keyHeader": [], "secretHeader": []}])
    );
    // A read-only API's writes always answer 401, and say so.
    let relationship = &doc["paths"]["/api/relationship/"]["post"];
    assert!(relationship["responses"].get("401").is_some());
    assert!(relationship.get("security").is_none());
    // Every error status has a shared response with the error body; 304 has none.
    let responses = doc["components"]["responses"].as_object().unwrap();
    assert_eq!(responses.len(), 13, "{:?}", responses.keys());
    assert!(responses["NotModified"].get("content").is_none());
    assert!(responses["NotModified"]["headers"].get("ETag").is_some());
    // A create takes an optional Idempotency-Key (at most 255 characters), may answer 422,
    // and marks a replay.
    let create = &doc["paths"]["/api/sample/"]["post"];
    let key = create["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "Idempotency-Key")
        .expect("an Idempotency-Key parameter");
    assert_eq!(
        (&key["in"], &key["required"]),
        (&json!("header"), &json!(false))
    );
    assert_eq!(key["schema"]["maxLength"], 255);
    assert!(create["responses"].get("422").is_some(), "{create}");
    assert!(create["responses"]["201"]["headers"]
        .get("Idempotent-Replayed")
        .is_some());
    let read = &doc["paths"]["/api/sample/{pk}/"]["get"];
    assert!(read["responses"].get("422").is_none(), "{read}");
    // Basic authentication's failed logins are throttled: its operations may answer 429.
    let message_post = &doc["paths"]["/api/message/"]["post"]["responses"];
    assert!(message_post.get("429").is_some(), "{message_post}");
    assert!(doc["paths"]["/api/note/"]["post"]["responses"]
        .get("429")
        .is_none());
    for (name, response) in responses {
        if name == "NotModified" {
            continue;
        }
        if name == "Unauthorized" {
            // The 401 is a plain page with the Basic challenge (docs/contract.md#authentication).
            assert!(response["content"]
                .get("text/html; charset=utf-8")
                .is_some());
            assert!(response["headers"].get("WWW-Authenticate").is_some());
            continue;
        }
        let schema = &response["content"]["application/json"]["schema"]["$ref"];
        assert_eq!(schema, "#/components/schemas/Error", "{name}");
    }
    for status in ["400", "403", "404", "409", "413", "503"] {
        assert!(doc["paths"]["/api/amodel/{pk}/"]["put"]["responses"]
            .get(status)
            .is_some());
    }
}

#[actix_web::test]
async fn keyset_lists_describe_the_cursor_and_doc_comments_become_descriptions() {
    let app = TestApp::new().await;
    let doc = app.get("/api/openapi.json").await.json_with(200);
    let cursor = parameter_names(&doc["paths"]["/api/cursor/"]["get"]);
    assert!(cursor.contains(&"cursor".to_owned()));
    let plain = parameter_names(&doc["paths"]["/api/sample/"]["get"]);
    assert!(!plain.contains(&"cursor".to_owned()));
    for name in ["limit", "page", "ordering"] {
        assert!(plain.contains(&name.to_owned()), "{name}");
    }
    // `Vault`'s `label` is documented `/// Text.` in the fixture.
    let label = &doc["components"]["schemas"]["vault"]["properties"]["label"];
    assert_eq!(label["description"], "Text.", "{label}");
    // Titles: the names people read, the identifiers in words by default.
    assert_eq!(label["title"], "Label", "{label}");
    assert_eq!(doc["components"]["schemas"]["vault"]["title"], "Vault");
    let amodel = &doc["components"]["schemas"]["amodel"];
    assert_eq!(amodel["title"], "A model", "{amodel}");
    assert_eq!(amodel["properties"]["a_field"]["title"], "A field");
    assert_eq!(amodel["properties"]["id"]["title"], "ID");
}

#[actix_web::test]
async fn the_reference_page_is_self_contained_html() {
    let app = TestApp::new().await;
    let doc = app.get("/v2/openapi.json").await.json_with(200);
    for path in ["/v2/docs/", "/v2/docs"] {
        let page = app.get(path).await;
        page.expect(200);
        assert_eq!(
            page.header("content-type"),
            Some("text/html; charset=utf-8")
        );
        assert!(page
            .header("content-security-policy")
            .is_some_and(|p| p.contains("default-src 'none'")));
        let html = page.text();
        assert!(!html.contains("<script"), "no script");
        assert_eq!(page.header("x-frame-options"), Some("DENY"));
        for item in doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                let id = op["operationId"].as_str().unwrap();
                assert!(html.contains(id), "{id}");
            }
        }
    }
}

#[actix_web::test]
async fn the_reference_page_shows_the_keys_of_a_create_body() {
    let app = TestApp::new().await;
    let html = app.get("/api/docs/").await.text();
    // The ticket's create: one object (its keys, its nested children) or an array of them.
    let start = html.find("id=\"ticket.create\"").expect("ticket.create");
    let section = &html[start..];
    let section = &section[..section.find("</section>").unwrap_or(section.len())];
    for key in [
        "<code>title</code>",
        "<code>priority</code>",
        "<code>children</code>",
    ] {
        assert!(section.contains(key), "{key} in {section}");
    }
    assert!(section.contains("<p>or</p>"), "{section}");
}

#[actix_web::test]
async fn the_description_answers_get_and_head_only() {
    let app = TestApp::new().await;
    for path in ["/api/openapi.json", "/api/docs/"] {
        let head = app
            .send(TestRequest::default().method(Method::HEAD).uri(path))
            .await;
        // The server drops a HEAD's body on the wire; here it answers as GET does.
        head.expect(200);
        let post = app.send(json_request(Method::POST, path, &json!({}))).await;
        assert_error(&post, 405);
        assert_eq!(post.header("allow"), Some("GET, HEAD"));
    }
}

#[actix_web::test]
async fn an_application_adds_its_own_operations() {
    let (db, _store) = fresh_database("");
    let api = RestApi::new(db)
        .prefix("/ext")
        .openapi(|doc| {
            let mut op = Operation::new();
            op.operation_id = Some("health".into());
            op.summary = Some("Whether the <server> is up".into());
            doc.paths
                .add_path_operation("/health", vec![HttpMethod::Get], op);
            doc.info.title = "Extended".into();
        })
        .setup();
    let service = test::init_service(App::new().configure(api)).await;
    let req = TestRequest::get().uri("/ext/openapi.json").to_request();
    let doc: Value = test::call_and_read_body_json(&service, req).await;
    assert_eq!(doc["info"]["title"], "Extended");
    assert_eq!(doc["paths"]["/health"]["get"]["operationId"], "health");
    let req = TestRequest::get().uri("/ext/docs/").to_request();
    let html = test::call_and_read_body(&service, req).await;
    let html = String::from_utf8(html.to_vec()).unwrap();
    assert!(html.contains("Whether the &lt;server&gt; is up"), "{html}");
}

#[actix_web::test]
async fn patch_is_the_partial_update_where_a_resource_allows_it() {
    let app = TestApp::new().await;
    app.user("poster", "pw");
    let creds = basic("poster", "pw");
    let created = app
        .send(
            json_request(
                Method::POST,
                "/api/patchable/",
                &json!({"name": "a", "qty": 1}),
            )
            .insert_header(creds.clone()),
        )
        .await
        .json_with(201);
    let id = created["id"].as_i64().unwrap();
    let path = format!("/api/patchable/{id}/");

    // Authentication applies as to PUT: nothing is written without credentials.
    let refused = app
        .send(json_request(Method::PATCH, &path, &json!({"qty": 5})))
        .await;
    assert_401(&refused);
    assert_eq!(app.get(&path).await.json_with(200)["qty"], 1);

    // Only the keys sent change; validation is PUT's.
    let patched = app
        .send(json_request(Method::PATCH, &path, &json!({"qty": 7})).insert_header(creds.clone()))
        .await
        .json_with(200);
    assert_eq!(patched["qty"], 7);
    assert_eq!(patched["name"], "a");
    let bad = app
        .send(
            json_request(Method::PATCH, &path, &json!({"qty": "seven"}))
                .insert_header(creds.clone()),
        )
        .await;
    assert_fields(&bad, &["qty"]);
    assert_eq!(app.get(&path).await.json_with(200)["qty"], 7);

    // A resource that does not list PATCH answers 405 without it in `Allow`.
    let amodel = app
        .post("/api/amodel/", json!({"a_field": "x"}))
        .await
        .json_with(201);
    let resp = app
        .send(json_request(
            Method::PATCH,
            &format!("/api/amodel/{}/", amodel["id"]),
            &json!({"a_field": "y"}),
        ))
        .await;
    assert_error(&resp, 405);
    assert!(!resp.header("allow").unwrap_or_default().contains("PATCH"));
    // The one that does lists it.
    let resp = app
        .send(json_request(Method::POST, &path, &json!({})).insert_header(creds))
        .await;
    assert_error(&resp, 405);
    assert!(resp.header("allow").unwrap_or_default().contains("PATCH"));
}

#[actix_web::test]
async fn conditional_requests_are_described() {
    let app = TestApp::new().await;
    let doc = app.get("/api/openapi.json").await.json_with(200);
    let header = |op: &Value, name: &str| {
        let params = op["parameters"].as_array().cloned().unwrap_or_default();
        (params.into_iter()).find(|p| p["in"] == "header" && p["name"] == name)
    };
    let sample = &doc["paths"]["/api/sample/{pk}/"];
    for op in [&sample["get"], &doc["paths"]["/api/sample/"]["get"]] {
        assert!(header(op, "If-None-Match").is_some(), "{op}");
        assert_eq!(
            op["responses"]["304"]["$ref"],
            "#/components/responses/NotModified"
        );
        assert!(op["responses"]["200"]["headers"].get("ETag").is_some());
    }
    for verb in ["put", "delete"] {
        let if_match = header(&sample[verb], "If-Match").expect("If-Match");
        assert_eq!(if_match["required"], false, "{verb}");
        assert!(sample[verb]["responses"].get("412").is_some(), "{verb}");
        assert!(sample[verb]["responses"].get("428").is_none(), "{verb}");
    }
    assert!(sample["put"]["responses"]["200"]["headers"]
        .get("ETag")
        .is_some());
    // A resource that needs If-Match says so.
    let guarded = &doc["paths"]["/api/guarded/{pk}/"];
    for verb in ["put", "patch", "delete"] {
        let if_match = header(&guarded[verb], "If-Match").expect("If-Match");
        assert_eq!(if_match["required"], true, "{verb}");
        assert!(guarded[verb]["responses"].get("428").is_some(), "{verb}");
    }
    // An API without ETags describes none, and still takes If-Match.
    let small = app.get("/small/openapi.json").await.json_with(200);
    let amodel = &small["paths"]["/small/amodel/{pk}/"];
    assert!(header(&amodel["get"], "If-None-Match").is_none());
    assert!(amodel["get"]["responses"].get("304").is_none());
    assert!(amodel["get"]["responses"]["200"].get("headers").is_none());
    assert!(header(&amodel["put"], "If-Match").is_some());
}

/// Whether a query parameter's schema admits its empty value (`name=`), for each way a tool
/// may read it: a text parameter as the empty text; a list (form style, not exploded) as an
/// empty list and as a list of one empty text. `None` where a pattern decides.
fn empty_readings(schema: &Value) -> Vec<Option<bool>> {
    if let Some(branches) = schema["anyOf"].as_array() {
        // Branches of one type: a reading is admitted when some branch admits it.
        let each: Vec<Vec<Option<bool>>> = branches.iter().map(empty_readings).collect();
        return (0..each[0].len())
            .map(|i| {
                let all: Vec<Option<bool>> = each.iter().map(|r| r[i]).collect();
                match (all.contains(&Some(true)), all.contains(&None)) {
                    (true, _) => Some(true),
                    (false, true) => None,
                    (false, false) => Some(false),
                }
            })
            .collect();
    }
    let text = |schema: &Value| -> Option<bool> {
        if schema["type"] != "string" {
            return Some(false);
        }
        if let Some(values) = schema["enum"].as_array() {
            return Some(values.contains(&json!("")));
        }
        if schema["minLength"].as_u64().unwrap_or(0) > 0 {
            return Some(false);
        }
        schema.get("pattern").is_none().then_some(true)
    };
    if schema["type"] == "array" {
        let min = schema["minItems"].as_u64().unwrap_or(0);
        let max = schema["maxItems"].as_u64().unwrap_or(u64::MAX);
        let one = if min <= 1 && max >= 1 {
            text(&schema["items"])
        } else {
            Some(false)
        };
        return vec![Some(min == 0), one];
    }
    vec![text(schema)]
}

/// Every query parameter of every GET operation with an empty value (`name=`): the server
/// takes it (200) exactly when the description admits it, however a tool reads it (the
/// default order for `ordering=`; a 400 for `fields=`, `group=`, `cursor=`, `limit=`...).
#[actix_web::test]
async fn an_empty_parameter_is_taken_exactly_where_the_description_admits_it() {
    let (app, admin) = app_with_credentials().await;
    let mut checked = 0;
    for (prefix, _) in &app.registrations {
        let doc = app
            .get(&format!("{prefix}/openapi.json"))
            .await
            .json_with(200);
        for (path, item) in doc["paths"].as_object().into_iter().flatten() {
            let Some(op) = item.get("get") else { continue };
            let aggregate = path.ends_with("/aggregate/");
            if !path.ends_with('/') || path.contains('{') && !aggregate {
                continue;
            }
            for p in op["parameters"].as_array().into_iter().flatten() {
                let name = p["name"].as_str().unwrap_or_default();
                if p["in"] != "query" || p["explode"] == true || ["key", "secret"].contains(&name) {
                    continue;
                }
                let readings = empty_readings(&p["schema"]);
                if readings.contains(&None) {
                    continue; // a pattern decides (`q`, `or`, `not`)
                }
                let mut pairs = vec![(name, ""), ("key", "k"), ("secret", "s")];
                if aggregate && name != "count" {
                    pairs.push(("count", ""));
                }
                let uri = url(path, &pairs);
                let resp = app
                    .send(TestRequest::get().uri(&uri).insert_header(admin.clone()))
                    .await;
                let takes = match resp.code() {
                    200 => true,
                    400 => false,
                    _ => continue, // a list its hooks refuse says nothing of its parameters
                };
                // Taken: every reading admits it; refused: none does.
                let agree = readings.iter().all(|r| *r == Some(takes));
                assert!(
                    agree,
                    "{uri} answers {}: {readings:?} {}",
                    resp.code(),
                    p["schema"]
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 50, "only {checked} parameters checked");
}
