//! docs/admin.md#groups-and-permissions: a group's permissions, and a user's groups and direct
//! permissions, edited as checklists on their admin pages: saved with the row in one
//! transaction, as the difference, in the history; a value that is no choice refused beside
//! the list with nothing written; read-only, or absent, for a user without the rights.

use actix_web::http::Method;
use actix_web::test::TestRequest;
use plover::db::Conn;
use plover::history::HistoryEntry;
use plover::permissions::{self, Group, GroupPermission, Holder, UserGroup, UserPermission};
use plover::query::Op;
use plover::views::Query;
use plover::Error;
use plover_tests::{basic, input_value, Browser, Resp, TestApp};

const TICKETS: &str = "INSERT INTO ticket (id, title, priority, status, body, secret_note, opened)
     VALUES (1, 't1', 1, 'open', '', 's', '2020-01-01')";

/// An app with a ticket and the group `support` holding `granted`; its key.
async fn support_with(granted: &[&str]) -> (TestApp, i64) {
    let app = TestApp::with_seed(TICKETS).await;
    let group = app
        .db
        .run_blocking(|c| {
            let group = permissions::create_group(c, "support")?;
            for name in granted {
                permissions::grant(c, Holder::Group(group.id), name)?;
            }
            Ok(group.id)
        })
        .expect("the group");
    (app, group)
}

async fn signed_in<'a>(app: &'a TestApp, user: &str, admin: bool) -> Browser<'a> {
    app.user_with(user, "pw", true, admin);
    let browser = app.browser();
    browser.login(user, "pw").await.expect(302);
    browser
}

/// POSTs `fields` to the form at `uri` with the session's CSRF token and the version of the
/// row the form shows, both read from it.
async fn save(browser: &Browser<'_>, uri: &str, fields: &[(&str, &str)]) -> Resp {
    let page = browser.get(uri).await.expect(200).text();
    let token = input_value(&page, "csrf_token").expect("a CSRF token");
    let version = input_value(&page, "_version").unwrap_or_default();
    let mut all = fields.to_vec();
    all.extend([
        ("csrf_token", token.as_str()),
        ("_version", version.as_str()),
    ]);
    browser.post_form(uri, &all).await
}

/// Reads with `work` on the app's database.
fn read<R>(app: &TestApp, work: impl FnOnce(&mut Conn<'_>) -> Result<R, Error>) -> R {
    app.db.run_blocking(work).expect("a read")
}

/// The group's grants, by name.
fn grants(app: &TestApp, group: i64) -> Vec<String> {
    let f = GroupPermission::FIELDS;
    let query = Query::<GroupPermission>::new().filter(f.group_id, Op::Eq, group);
    let mut names: Vec<String> = (read(app, |c| query.all(c)).into_iter())
        .map(|g| g.permission)
        .collect();
    names.sort();
    names
}

/// The key of the group's grant of `permission`.
fn grant_id(app: &TestApp, permission: &str) -> i64 {
    let f = GroupPermission::FIELDS;
    let query = Query::<GroupPermission>::new().filter(f.permission, Op::Eq, permission);
    read(app, |c| query.get_or_404(c)).id
}

/// The history's entries of the table `table`, as `action text by user`, sorted.
fn history(app: &TestApp, table: &str) -> Vec<String> {
    let f = HistoryEntry::FIELDS;
    let query = Query::<HistoryEntry>::new().filter(f.object_table, Op::Eq, table);
    let mut entries: Vec<String> = (read(app, |c| query.all(c)).into_iter())
        .map(|e| {
            let by = e.username.unwrap_or_default();
            format!("{} {} by {by}", e.action, e.object_text)
        })
        .collect();
    entries.sort();
    entries
}

/// The permissions stamp.
fn stamp(app: &TestApp) -> i64 {
    app.query_i64("SELECT stamp FROM plover_permission_stamp")
}

/// What a refused save must leave as it was: the grants, memberships and groups, the number
/// of history entries and the permissions stamp.
fn snapshot(app: &TestApp) -> String {
    let groups = read(app, |c| Query::<Group>::new().all(c));
    let grants = read(app, |c| Query::<GroupPermission>::new().all(c));
    let direct = read(app, |c| Query::<UserPermission>::new().all(c));
    let members = read(app, |c| Query::<UserGroup>::new().all(c));
    format!(
        "{groups:?} {grants:?} {direct:?} {members:?} {} {}",
        app.count("plover_history"),
        stamp(app)
    )
}

#[actix_web::test]
async fn ticking_and_unticking_writes_exactly_those_grants_in_the_history() {
    let (app, group) = support_with(&["ticket.view", "ticket.change"]).await;
    let root = signed_in(&app, "root", true).await;
    let uri = format!("/admin/group/{group}/");
    let page = root.get(&uri).await.expect(200).text();
    assert!(page.contains("<legend>Permissions</legend>"), "{page}");
    assert!(page.contains("<legend>ticket</legend>"), "grouped by model");
    assert!(
        page.contains("value=\"ticket.change\" checked"),
        "held: ticked"
    );
    assert!(
        page.contains("value=\"ticket.delete\">"),
        "not held: not ticked"
    );
    assert!(
        page.contains("data-checklist-filter"),
        "a filter box for the script"
    );
    let kept = grant_id(&app, "ticket.view");
    let stamp_before = stamp(&app);

    let fields = [
        ("name", "support desk"),
        ("permissions", ""),
        ("permissions", "ticket.view"),
        ("permissions", "ticket.delete"),
    ];
    save(&root, &uri, &fields).await.expect(303);
    assert_eq!(grants(&app, group), ["ticket.delete", "ticket.view"]);
    assert_eq!(
        grant_id(&app, "ticket.view"),
        kept,
        "a grant left ticked is not written again"
    );
    assert_eq!(
        history(&app, "plover_group_permission"),
        ["add ticket.delete by root", "delete ticket.change by root"]
    );
    assert_eq!(
        history(&app, "plover_group"),
        ["change support desk by root"]
    );
    assert!(
        stamp(&app) > stamp_before,
        "the permissions stamp is raised"
    );

    // A form without the checklist changes no grant; one with every box unticked drops all.
    save(&root, &uri, &[("name", "support")]).await.expect(303);
    assert_eq!(grants(&app, group), ["ticket.delete", "ticket.view"]);
    save(&root, &uri, &[("name", "support"), ("permissions", "")])
        .await
        .expect(303);
    assert!(grants(&app, group).is_empty());
}

#[actix_web::test]
async fn the_add_page_saves_the_group_with_its_grants() {
    let app = TestApp::new().await;
    let root = signed_in(&app, "root", true).await;
    let me = app.query_i64("SELECT id FROM \"user\" WHERE username = 'root'");
    let page = root
        .get(&format!("/admin/user/{me}/"))
        .await
        .expect(200)
        .text();
    assert!(
        page.contains("There is nothing to choose yet."),
        "no group yet"
    );
    let fields = [
        ("name", "accounting"),
        ("permissions", ""),
        ("permissions", "ticket.view"),
        ("permissions", "user.view"),
    ];
    save(&root, "/admin/group/add/", &fields).await.expect(303);
    let group = app.query_i64("SELECT id FROM plover_group WHERE name = 'accounting'");
    assert_eq!(grants(&app, group), ["ticket.view", "user.view"]);
}

#[actix_web::test]
async fn a_forged_permission_is_an_error_beside_the_list_and_nothing_is_written() {
    let (app, group) = support_with(&["ticket.view"]).await;
    let root = signed_in(&app, "root", true).await;
    let before = snapshot(&app);
    let uri = format!("/admin/group/{group}/");
    let fields = [
        ("name", "renamed"),
        ("permissions", ""),
        ("permissions", "ticket.delete"),
        ("permissions", "ticket.fly"),
    ];
    let resp = save(&root, &uri, &fields).await;
    assert_eq!(resp.code(), 400);
    let page = resp.text();
    assert!(
        page.contains("There is no such permission: &#39;ticket.fly&#39;."),
        "{page}"
    );
    assert!(
        page.contains("aria-describedby=\"e-permissions\""),
        "{page}"
    );
    assert!(
        page.contains("value=\"ticket.delete\" checked"),
        "what was ticked is kept"
    );
    assert_eq!(snapshot(&app), before);
    // On the add page, no group either.
    let fields = [("name", "new"), ("permissions", "nosuch.view")];
    assert_eq!(save(&root, "/admin/group/add/", &fields).await.code(), 400);
    assert_eq!(snapshot(&app), before);
}

#[actix_web::test]
async fn the_boxes_need_the_rights_on_the_grants() {
    let (app, group) = support_with(&["ticket.view"]).await;
    let uri = format!("/admin/group/{group}/");
    let staff = signed_in(&app, "staff", false).await;
    let staff_id = app.query_i64("SELECT id FROM \"user\" WHERE username = 'staff'");
    let grant = |name: &str| {
        app.db
            .run_blocking(|c| permissions::grant(c, Holder::User(staff_id), name))
            .expect("grant");
    };
    // The group's page without a right on its grants: no list.
    grant("group.change");
    let page = staff.get(&uri).await.expect(200).text();
    assert!(!page.contains("name=\"permissions\""), "{page}");
    // Allowed to view them: shown, disabled, not sent; a forged list is 403.
    grant("grouppermission.view");
    let page = staff.get(&uri).await.expect(200).text();
    assert!(
        page.contains("value=\"ticket.view\" checked disabled"),
        "{page}"
    );
    assert!(!page.contains("type=\"hidden\" name=\"permissions\""));
    let before = snapshot(&app);
    let forged = [("name", "support"), ("permissions", "group.delete")];
    assert_eq!(save(&staff, &uri, &forged).await.code(), 403);
    assert_eq!(snapshot(&app), before);
    // Saving the group without the list is allowed.
    save(&staff, &uri, &[("name", "support 2")])
        .await
        .expect(303);
    assert_eq!(grants(&app, group), ["ticket.view"]);
    // Allowed to add and delete grants: ticked and unticked.
    grant("grouppermission.add");
    grant("grouppermission.delete");
    let fields = [
        ("name", "support"),
        ("permissions", ""),
        ("permissions", "ticket.change"),
    ];
    save(&staff, &uri, &fields).await.expect(303);
    assert_eq!(grants(&app, group), ["ticket.change"]);
}

/// A request of `user` (password `pw`) for ticket 1 of `/v3`, whose resources need model
/// permissions.
fn ticket_as(user: &str) -> TestRequest {
    TestRequest::default()
        .method(Method::GET)
        .uri("/v3/ticket/1/")
        .insert_header(basic(user, "pw"))
}

#[actix_web::test]
async fn another_process_sees_a_grant_ticked_in_the_admin_on_its_next_request() {
    let (app, group) = support_with(&[]).await;
    let staff = app.user("staff", "pw");
    app.db
        .run_blocking(|c| permissions::add_to_group(c, staff, group))
        .expect("a member");
    let other = app.another_process(|auth| auth).await;
    assert_eq!(other.send(ticket_as("staff")).await.code(), 403);
    assert_eq!(other.send(ticket_as("staff")).await.code(), 403);
    let root = signed_in(&app, "root", true).await;
    let uri = format!("/admin/group/{group}/");
    let ticked = [
        ("name", "support"),
        ("permissions", ""),
        ("permissions", "ticket.view"),
    ];
    save(&root, &uri, &ticked).await.expect(303);
    assert_eq!(other.send(ticket_as("staff")).await.code(), 200);
    let unticked = [("name", "support"), ("permissions", "")];
    save(&root, &uri, &unticked).await.expect(303);
    assert_eq!(other.send(ticket_as("staff")).await.code(), 403);
}

#[actix_web::test]
async fn a_users_page_edits_its_groups_and_direct_permissions() {
    let (app, group) = support_with(&["ticket.change"]).await;
    let root = signed_in(&app, "root", true).await;
    let staff = app.user("staff", "pw");
    let uri = format!("/admin/user/{staff}/");
    let page = root.get(&uri).await.expect(200).text();
    assert!(
        !page.contains("There is nothing to choose yet."),
        "a group exists"
    );
    assert!(page.contains("<legend>Groups</legend>"), "{page}");
    assert!(page.contains("<legend>User permissions</legend>"), "{page}");
    assert!(page.contains(&format!("value=\"{group}\">")), "{page}");
    let group_value = group.to_string();
    let fields = [
        ("active", "1"),
        ("groups", ""),
        ("groups", group_value.as_str()),
        ("user_permissions", ""),
        ("user_permissions", "ticket.view"),
    ];
    save(&root, &uri, &fields).await.expect(303);
    let groups_of = || {
        let query = Query::<UserGroup>::new().filter(UserGroup::FIELDS.user_id, Op::Eq, staff);
        (read(&app, |c| query.all(c)).into_iter())
            .map(|m| m.group_id)
            .collect::<Vec<_>>()
    };
    let direct = || {
        let f = UserPermission::FIELDS;
        let query = Query::<UserPermission>::new().filter(f.user_id, Op::Eq, staff);
        (read(&app, |c| query.all(c)).into_iter())
            .map(|m| m.permission)
            .collect::<Vec<_>>()
    };
    assert_eq!(groups_of(), [group]);
    assert_eq!(direct(), ["ticket.view"]);
    assert_eq!(
        history(&app, "plover_user_permission"),
        ["add ticket.view by root"]
    );
    assert_eq!(history(&app, "plover_user_group").len(), 1);
    let page = root.get(&uri).await.expect(200).text();
    assert!(
        page.contains(&format!("value=\"{group}\" checked")),
        "{page}"
    );

    // A group that does not exist: refused, nothing written.
    let before = snapshot(&app);
    let forged = [("active", "1"), ("groups", "999999")];
    let resp = save(&root, &uri, &forged).await;
    assert_eq!(resp.code(), 400);
    assert!(resp
        .text()
        .contains("There is no such group: &#39;999999&#39;."));
    assert_eq!(snapshot(&app), before);
    // Unticked: the membership goes, the direct grant stays (its list was not sent).
    save(&root, &uri, &[("active", "1"), ("groups", "")])
        .await
        .expect(303);
    assert!(groups_of().is_empty());
    assert_eq!(direct(), ["ticket.view"]);
}
