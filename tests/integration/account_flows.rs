//! The account flows (docs/accounts.md): password change (other sessions end, this one
//! stays), password reset by mail, sign-up.

use std::time::Duration;

use plover::mail::{Mailer, MemoryBackend, Message};
use plover_tests::TestApp;

const CHANGE: &str = "/accounts/password_change/";

#[actix_web::test]
async fn a_password_change_ends_the_other_sessions_and_keeps_this_one() {
    let app = TestApp::new().await;
    app.user("alice", "old secret");
    let (here, elsewhere) = (app.browser(), app.browser());
    here.login("alice", "old secret").await.expect(302);
    elsewhere.login("alice", "old secret").await.expect(302);

    let token = here.csrf(CHANGE).await;
    let change = |old: &'static str, new1: &'static str, new2: &'static str| {
        let token = token.clone();
        let here = &here;
        async move {
            here.post_form(
                CHANGE,
                &[
                    ("old_password", old),
                    ("new_password1", new1),
                    ("new_password2", new2),
                    ("csrf_token", &token),
                ],
            )
            .await
        }
    };
    let wrong_old = change("not it", "new secret", "new secret").await;
    wrong_old.expect(200);
    assert!(wrong_old
        .text()
        .contains("old password was entered incorrectly"));
    let mismatch = change("old secret", "new secret", "other secret").await;
    mismatch.expect(200);
    assert!(mismatch.text().contains("The two password fields didn"));
    assert_eq!(elsewhere.whoami().await, "alice", "nothing changed yet");

    let done = change("old secret", "new secret", "new secret").await;
    done.expect(302);
    assert_eq!(
        done.header("location"),
        Some("/accounts/password_change/done/")
    );
    assert_eq!(here.whoami().await, "alice", "this session stays logged in");
    here.get("/accounts/password_change/done/")
        .await
        .expect(200);
    assert_eq!(elsewhere.whoami().await, "", "the other session ended");

    let fresh = app.browser();
    fresh.login("alice", "old secret").await.expect(200);
    fresh.login("alice", "new secret").await.expect(302);
}

#[actix_web::test]
async fn the_password_change_needs_a_login_and_the_csrf_token() {
    let app = TestApp::new().await;
    app.user("alice", "old secret");
    let anonymous = app.browser();
    let resp = anonymous.get(CHANGE).await;
    resp.expect(302);
    assert_eq!(
        resp.header("location"),
        Some("/accounts/login/?next=%2Faccounts%2Fpassword_change%2F")
    );
    let browser = app.browser();
    browser.login("alice", "old secret").await.expect(302);
    let forged = browser
        .post_form(
            CHANGE,
            &[
                ("old_password", "old secret"),
                ("new_password1", "new secret"),
                ("new_password2", "new secret"),
            ],
        )
        .await;
    forged.expect(403);
    assert_eq!(browser.whoami().await, "alice");
    app.browser().login("alice", "old secret").await.expect(302);
}

const RESET: &str = "/accounts/password_reset/";
const SIGNUP: &str = "/accounts/signup/";

/// An application whose account mail goes to the returned outbox, with sign-up on.
async fn mailing_app(
    configure: impl FnOnce(
        plover::accounts::Auth<microblog::User>,
    ) -> plover::accounts::Auth<microblog::User>,
) -> (TestApp, MemoryBackend) {
    let outbox = MemoryBackend::default();
    let mailer = Mailer::new(outbox.clone(), "Site <noreply@example.com>");
    let app = TestApp::with_auth(|auth| configure(auth.mailer(mailer).signup(true))).await;
    (app, outbox)
}

/// The path of the one link under `/accounts/{kind}/` in `mail`.
fn link(mail: &Message, kind: &str) -> String {
    let start = mail
        .text
        .find(&format!("/accounts/{kind}/"))
        .unwrap_or_else(|| panic!("a {kind} link in {:?}", mail.text));
    let rest = &mail.text[start..];
    rest[..rest.find(char::is_whitespace).unwrap_or(rest.len())].to_owned()
}

/// `path` with the last character of its token changed.
fn tampered(path: &str) -> String {
    let mut chars: Vec<char> = path.trim_end_matches('/').chars().collect();
    let last = chars.last_mut().expect("a token");
    *last = if *last == 'A' { 'B' } else { 'A' };
    format!("{}/", chars.into_iter().collect::<String>())
}

async fn ask_reset(browser: &plover_tests::Browser<'_>, typed: &str) -> plover_tests::Resp {
    let token = browser.csrf(RESET).await;
    browser
        .post_form(
            RESET,
            &[("username_or_email", typed), ("csrf_token", &token)],
        )
        .await
}

async fn set_password(
    browser: &plover_tests::Browser<'_>,
    path: &str,
    new1: &str,
    new2: &str,
) -> plover_tests::Resp {
    let token = browser.csrf("/accounts/login/").await;
    browser
        .post_form(
            path,
            &[
                ("new_password1", new1),
                ("new_password2", new2),
                ("csrf_token", &token),
            ],
        )
        .await
}

#[actix_web::test]
async fn a_reset_link_sets_the_password_once_and_ends_every_session() {
    let (app, outbox) = mailing_app(|auth| auth).await;
    app.user("alice", "old secret");
    let elsewhere = app.browser();
    elsewhere.login("alice", "old secret").await.expect(302);

    let browser = app.browser();
    let asked = ask_reset(&browser, "ALICE@example.com").await;
    asked.expect(302);
    assert_eq!(
        asked.header("location"),
        Some("/accounts/password_reset/done/")
    );
    browser
        .get("/accounts/password_reset/done/")
        .await
        .expect(200);
    let mails = outbox.take();
    assert_eq!(mails.len(), 1, "one mail");
    assert_eq!(mails[0].to, "alice@example.com");
    let path = link(&mails[0], "reset");
    assert!(
        mails[0]
            .text
            .contains(&format!("http://localhost:8080{path}")),
        "{}",
        mails[0].text
    );

    browser.get(&tampered(&path)).await.expect(400);
    browser.get(&path).await.expect(200);
    let mismatch = set_password(&browser, &path, "new secret", "other").await;
    mismatch.expect(200);
    assert!(mismatch.text().contains("didn"));
    let forged = tampered(&path);
    set_password(&browser, &forged, "new secret", "new secret")
        .await
        .expect(400);
    assert_eq!(elsewhere.whoami().await, "alice", "nothing changed yet");

    let set = set_password(&browser, &path, "new secret", "new secret").await;
    set.expect(302);
    assert_eq!(set.header("location"), Some("/accounts/login/"));
    assert_eq!(elsewhere.whoami().await, "", "every session ended");
    app.browser().login("alice", "old secret").await.expect(200);
    app.browser().login("alice", "new secret").await.expect(302);

    browser.get(&path).await.expect(400);
    set_password(&browser, &path, "third", "third")
        .await
        .expect(400);
    app.browser().login("alice", "new secret").await.expect(302);
}

#[actix_web::test]
async fn a_reset_request_answers_alike_and_mails_an_account_three_times_an_hour() {
    let (app, outbox) = mailing_app(|auth| auth).await;
    app.user("alice", "secret");
    app.user_with("sleeper", "secret", false, false);
    app.user_with("nopass", "", true, false);
    let browser = app.browser();
    for typed in [
        "nobody",
        "nobody@example.com",
        "sleeper",
        "nopass",
        "",
        "%@example.com",
    ] {
        let asked = ask_reset(&browser, typed).await;
        asked.expect(302);
        assert_eq!(
            asked.header("location"),
            Some("/accounts/password_reset/done/")
        );
    }
    assert!(
        outbox.take().is_empty(),
        "no mail for unknown, inactive or password-less accounts"
    );
    for _ in 0..5 {
        ask_reset(&browser, "alice").await.expect(302);
    }
    assert_eq!(outbox.take().len(), 3, "three mails an hour");
    let forged = browser
        .post_form(RESET, &[("username_or_email", "alice")])
        .await;
    forged.expect(403);
}

#[actix_web::test]
async fn reset_requests_are_throttled_per_address() {
    let limits = plover::accounts::LoginLimits {
        per_address: 2,
        ..Default::default()
    };
    let (app, _outbox) = mailing_app(|auth| auth.login_limits(limits)).await;
    let browser = app.browser();
    ask_reset(&browser, "a").await.expect(302);
    ask_reset(&browser, "b").await.expect(302);
    let refused = ask_reset(&browser, "c").await;
    refused.expect(429);
    assert!(refused.header("retry-after").is_some());
}

#[actix_web::test]
async fn an_expired_reset_link_is_refused() {
    let (app, outbox) = mailing_app(|auth| auth.reset_link_lifetime(Duration::ZERO)).await;
    app.user("alice", "secret");
    let browser = app.browser();
    ask_reset(&browser, "alice").await.expect(302);
    let path = link(&outbox.take()[0], "reset");
    std::thread::sleep(Duration::from_millis(1100));
    browser.get(&path).await.expect(400);
    set_password(&browser, &path, "new", "new")
        .await
        .expect(400);
    app.browser().login("alice", "secret").await.expect(302);
}

async fn sign_up(
    browser: &plover_tests::Browser<'_>,
    name: &str,
    email: &str,
) -> plover_tests::Resp {
    let token = browser.csrf(SIGNUP).await;
    browser
        .post_form(
            SIGNUP,
            &[
                ("username", name),
                ("email", email),
                ("password1", "pass word"),
                ("password2", "pass word"),
                ("csrf_token", &token),
            ],
        )
        .await
}

#[actix_web::test]
async fn a_sign_up_makes_an_inactive_user_that_its_link_activates_once() {
    let (app, outbox) = mailing_app(|auth| auth).await;
    app.user("alice", "secret");
    let browser = app.browser();
    let taken = sign_up(&browser, "Alice", "a@example.com").await;
    taken.expect(200);
    assert!(taken.text().contains("a user named"), "{}", taken.text());
    sign_up(&browser, "newbie", "not an address")
        .await
        .expect(200);
    assert_eq!(app.count("user"), 1, "nothing written");

    let done = sign_up(&browser, "newbie", "newbie@example.com").await;
    done.expect(302);
    assert_eq!(done.header("location"), Some("/accounts/signup/done/"));
    browser.get("/accounts/signup/done/").await.expect(200);
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM \"user\" WHERE username = 'newbie' AND NOT active"),
        1
    );
    app.browser().login("newbie", "pass word").await.expect(200);

    let mails = outbox.take();
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].to, "newbie@example.com");
    let path = link(&mails[0], "confirm");
    browser.get(&tampered(&path)).await.expect(400);
    let confirmed = browser.get(&path).await;
    confirmed.expect(302);
    assert_eq!(confirmed.header("location"), Some("/accounts/login/"));
    browser.get(&path).await.expect(400);
    app.browser().login("newbie", "pass word").await.expect(302);
}

#[actix_web::test]
async fn the_mailed_flows_are_mounted_only_with_a_mailer() {
    let app = TestApp::new().await;
    app.browser().get(RESET).await.expect(404);
    app.browser().get(SIGNUP).await.expect(404);
    let (app, _outbox) = mailing_app(|auth| auth.signup(false)).await;
    app.browser().get(RESET).await.expect(200);
    app.browser().get(SIGNUP).await.expect(404);
}
