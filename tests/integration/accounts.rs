//! The accounts component (docs/contract.md#accounts): session login and logout, `next`, CSRF,
//! `login_required`, session renewal, expiry and the session of a deactivated user.

use std::time::Duration;

use actix_web::http::Method;
use actix_web::test::TestRequest;
use plover_tests::{form_request, input_value, TestApp};

const FAILED: &str = "Incorrect username or password.";

#[actix_web::test]
async fn login_form_has_labelled_fields_a_csrf_token_and_next() {
    let app = TestApp::new().await;
    let browser = app.browser();
    let page = browser
        .get("/accounts/login/?next=%2Fprivate%2F%3Fa%3D1%26b%3D%22two%22")
        .await;
    page.expect(200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let html = page.text();
    for field in ["username", "password"] {
        assert!(
            html.contains(&format!("<label for=\"{field}\">")),
            "{field}"
        );
        assert!(
            html.contains(&format!("id=\"{field}\" name=\"{field}\"")),
            "{field}"
        );
    }
    let token = input_value(&html, "csrf_token").expect("a CSRF token");
    assert!(token.len() >= 32, "{token}");
    // The next field is prefilled, HTML-escaped.
    assert!(!html.contains("b=\"two"), "{html}");
    assert_eq!(
        input_value(&html, "next").as_deref(),
        Some("/private/?a=1&b=\"two\"")
    );
    assert!(
        browser.cookie().is_some(),
        "the token lives in a session cookie"
    );
    // The same session gets the same token.
    assert_eq!(browser.csrf("/accounts/login/").await, token);
}

#[actix_web::test]
async fn login_redirects_to_the_default_and_sets_a_safe_cookie() {
    let app = TestApp::new().await;
    app.user("alice", "pw");
    let browser = app.browser();
    assert_eq!(browser.whoami().await, "");
    let resp = browser.login("alice", "pw").await;
    resp.expect(302);
    assert_eq!(resp.header("location"), Some("/"));
    assert_eq!(browser.whoami().await, "alice");

    let cookie = resp.header("set-cookie").expect("a session cookie");
    let attrs: Vec<String> = cookie
        .split(';')
        .skip(1)
        .map(|a| a.trim().to_ascii_lowercase())
        .collect();
    assert!(cookie.starts_with("plover_session="), "{cookie}");
    assert!(attrs.contains(&"httponly".into()), "{cookie}");
    assert!(attrs.contains(&"samesite=lax".into()), "{cookie}");
    assert!(
        attrs.contains(&format!("max-age={}", 14 * 24 * 3600)),
        "{cookie}"
    );
    assert!(!attrs.contains(&"secure".into()), "{cookie}");
}

#[actix_web::test]
async fn the_session_cookie_is_encrypted() {
    let app = TestApp::new().await;
    let id = app.user("alice", "pw");
    let browser = app.browser();
    browser.login("alice", "pw").await.expect(302);
    let value = browser.cookie().expect("a session cookie");
    let decoded: Vec<Vec<u8>> = value
        .split(['.', '|', '=', '%'])
        .filter_map(|chunk| {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(chunk.trim_end_matches('='))
                .or_else(|_| {
                    base64::engine::general_purpose::URL_SAFE_NO_PAD
                        .decode(chunk.trim_end_matches('='))
                })
                .ok()
        })
        .collect();
    for raw in std::iter::once(value.clone().into_bytes()).chain(decoded) {
        let text = String::from_utf8_lossy(&raw);
        assert!(!text.contains("alice"), "{text}");
        assert!(!text.contains("plover."), "readable session keys: {text}");
        assert!(!text.contains(&format!(":{id}")), "{text}");
    }
}

#[actix_web::test]
async fn next_is_honoured_only_for_same_site_paths_and_sent_encoded() {
    let app = TestApp::new().await;
    app.user("alice", "pw");
    let cases = [
        ("/private/?a=1&b=two", "/private/?a=1&b=two"),
        ("/private/?y=a b", "/private/?y=a%20b"),
        ("/caf\u{e9}/", "/caf%C3%A9/"),
        ("/a\\b", "/a%5Cb"),
        ("http://evil.example/", "/"),
        ("https://evil.example/x", "/"),
        ("//evil.example/", "/"),
        ("/\\evil.example", "/"),
        ("\\\\evil.example", "/"),
        ("javascript:alert(1)", "/"),
        ("http:/evil.example/", "/"),
        (" /private/", "/"),
        ("/\t/evil.example", "/"),
        ("/private/\r\nSet-Cookie: x=1", "/"),
        ("", "/"),
    ];
    for (next, expected) in cases {
        let browser = app.browser();
        let token = browser.csrf("/accounts/login/").await;
        let resp = browser
            .post_form(
                "/accounts/login/",
                &[
                    ("username", "alice"),
                    ("password", "pw"),
                    ("next", next),
                    ("csrf_token", &token),
                ],
            )
            .await;
        resp.expect(302);
        assert_eq!(resp.header("location"), Some(expected), "{next:?}");
        assert_eq!(browser.whoami().await, "alice");
    }
}

#[actix_web::test]
async fn next_may_come_from_the_query_string() {
    let app = TestApp::new().await;
    app.user("alice", "pw");
    let browser = app.browser();
    let token = browser.csrf("/accounts/login/").await;
    let resp = browser
        .post_form(
            "/accounts/login/?next=%2Fprivate%2F",
            &[
                ("username", "alice"),
                ("password", "pw"),
                ("csrf_token", &token),
            ],
        )
        .await;
    assert_eq!(resp.expect(302).header("location"), Some("/private/"));
}

#[actix_web::test]
async fn failed_logins_show_the_form_with_one_message_and_keep_the_username() {
    let app = TestApp::new().await;
    app.user("alice", "right");
    app.user_with("sleepy", "right", false, false);
    for (username, password) in [
        ("alice", "wrong"),
        ("nobody", "right"),
        ("sleepy", "right"),
        ("", ""),
        ("alice", ""),
    ] {
        let browser = app.browser();
        let resp = browser.login(username, password).await;
        resp.expect(200);
        let html = resp.text();
        assert!(html.contains(FAILED), "{username}: {html}");
        assert_eq!(input_value(&html, "username").as_deref(), Some(username));
        assert!(
            input_value(&html, "password").is_none(),
            "the password is never sent back"
        );
        assert!(input_value(&html, "csrf_token").is_some());
        assert_eq!(browser.whoami().await, "", "{username}");
    }
}

#[actix_web::test]
async fn the_username_is_escaped_in_the_form() {
    let app = TestApp::new().await;
    let browser = app.browser();
    let name = "<script>x</script>\"";
    let html = browser.login(name, "pw").await.text();
    assert!(!html.contains("<script>x"), "{html}");
    assert_eq!(input_value(&html, "username").as_deref(), Some(name));
}

#[actix_web::test]
async fn login_posts_without_this_sessions_csrf_token_are_403() {
    let app = TestApp::new().await;
    app.user("alice", "pw");
    let creds = [("username", "alice"), ("password", "pw")];

    // No token.
    let browser = app.browser();
    browser.csrf("/accounts/login/").await;
    browser
        .post_form("/accounts/login/", &creds)
        .await
        .expect(403);
    assert_eq!(browser.whoami().await, "");

    // A forged token, and an empty one.
    for forged in ["forged", ""] {
        let browser = app.browser();
        browser.csrf("/accounts/login/").await;
        let mut fields = creds.to_vec();
        fields.push(("csrf_token", forged));
        browser
            .post_form("/accounts/login/", &fields)
            .await
            .expect(403);
        assert_eq!(browser.whoami().await, "");
    }

    // Another session's token; and a token without any session.
    let other = app.browser();
    let token = other.csrf("/accounts/login/").await;
    let mut fields = creds.to_vec();
    fields.push(("csrf_token", &token));
    let browser = app.browser();
    browser.csrf("/accounts/login/").await;
    browser
        .post_form("/accounts/login/", &fields)
        .await
        .expect(403);
    let cookieless = app.browser();
    cookieless
        .post_form("/accounts/login/", &fields)
        .await
        .expect(403);
    assert_eq!(browser.whoami().await, "");
    assert_eq!(cookieless.whoami().await, "");
}

#[actix_web::test]
async fn login_renews_the_session() {
    let app = TestApp::new().await;
    app.user("alice", "pw");
    app.user("bob", "pw");
    let browser = app.browser();
    let old_token = browser.csrf("/accounts/login/").await;
    let old_cookie = browser.cookie();
    browser.login("alice", "pw").await.expect(302);
    assert_ne!(browser.cookie(), old_cookie);

    // The token issued before the login is refused after it.
    let resp = browser
        .post_form(
            "/accounts/login/",
            &[
                ("username", "bob"),
                ("password", "pw"),
                ("csrf_token", &old_token),
            ],
        )
        .await;
    resp.expect(403);
    assert_eq!(browser.whoami().await, "alice");
    assert_ne!(browser.csrf("/accounts/login/").await, old_token);

    // The cookie from before the login does not carry it.
    let stale = app.browser();
    stale.set_cookie(old_cookie);
    assert_eq!(stale.whoami().await, "");
}

#[actix_web::test]
async fn logging_in_as_another_user_switches_and_the_form_shows_who_is_logged_in() {
    let app = TestApp::new().await;
    app.user("alice", "pw");
    app.user("bob", "pw");
    let browser = app.browser();
    browser.login("alice", "pw").await.expect(302);
    let html = browser.get("/accounts/login/").await.expect(200).text();
    assert!(
        html.contains("logged in as <strong>alice</strong>"),
        "{html}"
    );
    assert!(html.contains("name=\"password\""));
    browser.login("bob", "pw").await.expect(302);
    assert_eq!(browser.whoami().await, "bob");
}

#[actix_web::test]
async fn logout_clears_the_session_without_a_token_and_redirects_safely() {
    let app = TestApp::new().await;
    app.user("alice", "pw");
    for (method, uri, expected) in [
        (Method::GET, "/accounts/logout/", "/"),
        (Method::POST, "/accounts/logout/", "/"),
        (
            Method::GET,
            "/accounts/logout/?next=%2Fprivate%2F",
            "/private/",
        ),
        (
            Method::GET,
            "/accounts/logout/?next=%2F%2Fevil.example",
            "/",
        ),
    ] {
        let browser = app.browser();
        browser.login("alice", "pw").await.expect(302);
        let resp = browser
            .send(TestRequest::default().method(method.clone()).uri(uri))
            .await;
        resp.expect(302);
        assert_eq!(resp.header("location"), Some(expected), "{method} {uri}");
        assert_eq!(browser.cookie(), None, "the cookie is removed");
        assert_eq!(browser.whoami().await, "");
        browser.get("/private/").await.expect(302);
    }
}

#[actix_web::test]
async fn login_required_redirects_with_next_and_comes_back() {
    let app = TestApp::new().await;
    app.user("alice", "pw");
    let browser = app.browser();
    let resp = browser.get("/private/?x=1&y=a%20b").await;
    resp.expect(302);
    let location = resp.header("location").expect("a Location").to_owned();
    let (path, query) = location.split_once('?').expect("a query");
    assert_eq!(path, "/accounts/login/");
    let next: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    assert_eq!(next, [("next".into(), "/private/?x=1&y=a%20b".into())]);

    let page = browser.get(&location).await.expect(200).text();
    let prefilled = input_value(&page, "next").expect("a next field");
    assert_eq!(prefilled, "/private/?x=1&y=a%20b");
    let token = input_value(&page, "csrf_token").expect("a token");
    let resp = browser
        .post_form(
            &location,
            &[
                ("username", "alice"),
                ("password", "pw"),
                ("next", "/private/?x=1&y=a%20b"),
                ("csrf_token", &token),
            ],
        )
        .await;
    assert_eq!(
        resp.expect(302).header("location"),
        Some("/private/?x=1&y=a%20b")
    );
    let page = browser
        .get("/private/?x=1&y=a%20b")
        .await
        .expect(200)
        .text();
    assert!(page.contains("[private:alice]"), "{page}");
}

#[actix_web::test]
async fn a_deactivated_or_deleted_users_session_is_anonymous() {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let bob = app.user("bob", "pw");
    let (a, b) = (app.browser(), app.browser());
    a.login("alice", "pw").await.expect(302);
    b.login("bob", "pw").await.expect(302);
    app.sql(&format!(
        "UPDATE \"user\" SET active = false WHERE id = {alice};"
    ));
    app.sql(&format!("DELETE FROM \"user\" WHERE id = {bob};"));
    for browser in [&a, &b] {
        assert_eq!(browser.whoami().await, "");
        browser.get("/private/").await.expect(302);
    }
    // Active again: the session ended with the deactivation; a new login is needed.
    app.sql(&format!(
        "UPDATE \"user\" SET active = true WHERE id = {alice};"
    ));
    assert_eq!(a.whoami().await, "");
    a.login("alice", "pw").await.expect(302);
    assert_eq!(a.whoami().await, "alice");
}

#[actix_web::test]
async fn sessions_expire() {
    let app = TestApp::with_session_lifetime(Duration::ZERO).await;
    app.user("alice", "pw");
    let browser = app.browser();
    browser.login("alice", "pw").await.expect(302);
    assert_eq!(browser.whoami().await, "", "a login past its lifetime");
    browser.get("/private/").await.expect(302);
}

#[actix_web::test]
async fn a_tampered_cookie_is_anonymous() {
    let app = TestApp::new().await;
    app.user("alice", "pw");
    let browser = app.browser();
    browser.login("alice", "pw").await.expect(302);
    let value = browser.cookie().expect("a cookie");
    let mut bytes = value.into_bytes();
    let i = bytes.len() / 2;
    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
    browser.set_cookie(Some(String::from_utf8(bytes).expect("ASCII")));
    assert_eq!(browser.whoami().await, "");
    browser.get("/private/").await.expect(302);
}

#[actix_web::test]
async fn a_failed_database_is_a_failed_login_not_an_error() {
    let app = TestApp::unreachable().await;
    let browser = app.browser();
    let resp = browser.login("alice", "pw").await;
    resp.expect(200);
    assert!(resp.text().contains(FAILED));
}

#[actix_web::test]
async fn a_malformed_login_body_is_400() {
    let app = TestApp::new().await;
    let browser = app.browser();
    browser.csrf("/accounts/login/").await;
    let resp = browser
        .send(
            form_request(Method::POST, "/accounts/login/", &[])
                .set_payload("username=a&username=b"),
        )
        .await;
    assert_eq!(resp.code(), 400);
}
