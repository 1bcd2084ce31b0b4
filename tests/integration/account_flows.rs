//! The account flows (docs/accounts.md): password change (other sessions end, this one stays).

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
