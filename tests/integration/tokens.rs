//! Bearer tokens stored as digests with revocation (issued in code and in the admin), API-key
//! secrets stored hashed, and CORS (docs/reference.md, "Authentication").

use actix_web::http::Method;
use actix_web::test::TestRequest;
use actix_web::App;
use plover::admin::{Admin, ModelAdmin, TokenPanel};
use plover::auth::{hash_secret, BearerAuthentication, Token};
use plover::prelude::*;
use plover_tests::*;
use serde_json::json;

/// `/api/message/` written with bearer tokens of the test app's users, and the admin with the
/// token panel and the tokens' model admin.
async fn bearer_app(app: &TestApp) -> TestService {
    let mut api = RestApi::new(app.db.clone());
    api.register_resource(
        Resource::<Message>::new()
            .owner_field(Message::FIELDS.user_id)
            .auth(BearerAuthentication::new(&app.auth)),
    );
    let mut admin = Admin::new(&app.auth);
    admin
        .register(ModelAdmin::<Token>::new())
        .register_panel("Bearer tokens", TokenPanel::new(&app.auth));
    let (api, admin, accounts) = (api.setup(), admin.setup(), app.auth.setup());
    TestService::new(
        App::new()
            .wrap(app.auth.session_middleware())
            .configure(accounts)
            .configure(api)
            .configure(admin),
    )
    .await
}

fn post_with(token: &str) -> TestRequest {
    TestRequest::post()
        .uri("/api/message/")
        .insert_header(("Authorization", format!("Bearer {token}")))
        .set_json(json!({"content": "hello"}))
}

#[actix_web::test]
async fn a_bearer_token_authenticates_its_user_until_it_is_revoked() {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let service = bearer_app(&app).await;
    let token = app
        .db
        .run_blocking(|conn| app.auth.issue_token(conn, alice, "laptop"))
        .expect("a token");
    // Only the digest is stored.
    assert_eq!(
        app.query_text("SELECT digest FROM plover_token"),
        Some(hash_secret(&token))
    );
    let created = service.send(post_with(&token)).await.json_with(201);
    assert_eq!(created["user_id"], alice, "the token's user is the owner");
    for wrong in [&token[1..], "", &hash_secret(&token)] {
        assert_eq!(
            service.send(post_with(wrong)).await.code(),
            401,
            "{wrong:?}"
        );
    }
    app.sql("UPDATE plover_token SET revoked = true;");
    let refused = service.send(post_with(&token)).await;
    assert_eq!(refused.code(), 401);
    // The challenge names the scheme the resource takes (RFC 6750).
    assert_eq!(
        refused.header("www-authenticate"),
        Some("Bearer realm=\"api\"")
    );
    app.sql("UPDATE plover_token SET revoked = false;");
    app.sql(&format!(
        "UPDATE \"user\" SET active = false WHERE id = {alice};"
    ));
    assert_eq!(
        service.send(post_with(&token)).await.code(),
        401,
        "inactive user"
    );
}

#[actix_web::test]
async fn the_admin_issues_a_token_shows_it_once_and_revokes_it() {
    let app = TestApp::new().await;
    app.user_with("root", "pw", true, true);
    let alice = app.user("alice", "pw");
    let service = bearer_app(&app).await;
    let admin = service.browser();
    admin.login("root", "pw").await.expect(302);
    let token = admin.csrf("/admin/").await;
    admin
        .post_form(
            "/admin/bearer-tokens/issue/",
            &[("username", "alice"), ("csrf_token", &token)],
        )
        .await
        .expect(303);
    let page = admin.get("/admin/").await.text();
    let shown = page
        .split("it is not shown again): ")
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .expect("the new token on the dashboard")
        .to_owned();
    assert!(
        !admin.get("/admin/").await.text().contains(&shown),
        "shown once"
    );
    service.send(post_with(&shown)).await.expect(201);
    // Revoked in the tokens' form.
    let id = app.query_i64("SELECT id FROM plover_token");
    let url = format!("/admin/token/{id}/");
    let csrf = admin.csrf(&url).await;
    admin
        .post_form(
            &url,
            &[
                ("user_id", &alice.to_string()),
                ("name", "revoked by the admin"),
                ("revoked", "1"),
                ("csrf_token", &csrf),
            ],
        )
        .await
        .expect(303);
    assert_eq!(service.send(post_with(&shown)).await.code(), 401);
}

#[actix_web::test]
async fn api_key_secrets_can_be_stored_hashed() {
    let app = TestApp::new().await;
    app.sql(&format!(
        "INSERT INTO apikey (key, secret) VALUES ('k1', '{}');",
        hash_secret("s3cret")
    ));
    let mut api = RestApi::new(app.db.clone());
    api.register_resource(Resource::<Note>::new().auth(
        ApiKeyAuthentication::<ApiKey>::new(vec![Method::GET, Method::POST]).hashed_secrets(),
    ));
    let service = TestService::new(App::new().configure(api.setup())).await;
    let get = |secret: &str| TestRequest::get().uri(&format!("/api/note/?key=k1&secret={secret}"));
    service.send(get("s3cret")).await.expect(200);
    assert_eq!(service.send(get("wrong")).await.code(), 401);
    // The stored digest is no secret.
    let digest = hash_secret("s3cret").replace('$', "%24");
    assert_eq!(service.send(get(&digest)).await.code(), 401);
}

#[actix_web::test]
async fn cors_lets_the_listed_origins_call_the_api() {
    let app = TestApp::new().await;
    let mut api = RestApi::new(app.db.clone()).cors_origins(["https://app.example"]);
    api.register::<AModel>();
    let service = TestService::new(App::new().configure(api.setup())).await;
    let preflight = service
        .send(
            TestRequest::default()
                .method(Method::OPTIONS)
                .uri("/api/amodel/")
                .insert_header(("Origin", "https://app.example"))
                .insert_header(("Access-Control-Request-Method", "POST"))
                .insert_header(("Access-Control-Request-Headers", "authorization")),
        )
        .await;
    assert_eq!(preflight.code(), 200);
    assert_eq!(
        preflight.header("access-control-allow-origin"),
        Some("https://app.example")
    );
    let get = service
        .send(
            TestRequest::get()
                .uri("/api/amodel/")
                .insert_header(("Origin", "https://app.example")),
        )
        .await;
    get.expect(200);
    assert_eq!(
        get.header("access-control-allow-origin"),
        Some("https://app.example")
    );
    assert!(get
        .header("access-control-expose-headers")
        .is_some_and(|h| h.to_ascii_lowercase().contains("ratelimit-remaining")));
    // Another origin gets no CORS headers; a request without Origin is served as before.
    let other = service
        .send(
            TestRequest::get()
                .uri("/api/amodel/")
                .insert_header(("Origin", "https://evil.example")),
        )
        .await;
    assert_eq!(other.header("access-control-allow-origin"), None);
    service
        .send(TestRequest::get().uri("/api/amodel/"))
        .await
        .expect(200);
}
