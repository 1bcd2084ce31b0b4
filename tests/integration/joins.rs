//! docs/contract.md#joins-respect-the-targets-rules: a join into another model obeys the
//! resource registered for that model in the same API, for rows (its `get_query` scope) and for
//! fields (what it lets clients filter).

use plover_tests::*;

/// Alice (active) and Carol (inactive: the user resource's `get_query` hides her), a message
/// each, and a relationship from each to the other.
async fn alice_and_hidden_carol() -> (TestApp, i64, i64) {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let carol = app.user_with("carol", "pw", false, false);
    app.sql(&format!(
        "INSERT INTO message VALUES (1, {alice}, 'from alice', '2020-01-01 00:00:00'),
            (2, {carol}, 'from carol', '2020-01-02 00:00:00');
         INSERT INTO relationship VALUES (1, {alice}, {carol}), (2, {carol}, {alice});"
    ));
    (app, alice, carol)
}

#[actix_web::test]
async fn a_hidden_user_cannot_be_found_through_a_join() {
    let (app, _, carol) = alice_and_hidden_carol().await;
    assert_eq!(app.get("/api/user/?username=carol").await.ids(), [0_i64; 0]);
    let carol_id = carol.to_string();
    for (key, value) in [
        ("user__username", "carol"),
        ("user__username__like", "car%"),
        ("user__username__ilike", "CAROL"),
        ("user__username__in", "carol,nobody"),
        ("user__id", carol_id.as_str()),
    ] {
        let got = app.get(&url("/api/message/", &[(key, value)])).await.ids();
        assert_eq!(got, [0_i64; 0], "{key}={value}");
    }
    // Alice's stay findable; the plain foreign key compares the column itself, no join.
    assert_eq!(
        app.get("/api/message/?user__username=alice").await.ids(),
        [1]
    );
    let got = app
        .get(&url("/api/message/", &[("user", &carol_id)]))
        .await
        .ids();
    assert_eq!(got, [2]);
    // Through another resource and a second foreign key to the same model.
    let got = app
        .get("/api/relationship/?to_user__username__like=%25")
        .await
        .ids();
    assert_eq!(got, [2], "only the relationship to alice");
    // Inside an OR of values: the hidden row matches none of them.
    let got = app
        .get("/api/message/?user__username__in=alice,carol")
        .await
        .ids();
    assert_eq!(got, [1]);
}

#[actix_web::test]
async fn an_included_object_whose_row_is_hidden_is_null() {
    let (app, alice, _) = alice_and_hidden_carol().await;
    let objects = app.get("/api/message/?ordering=id").await.objects();
    assert_eq!(objects.len(), 2, "the messages themselves are not hidden");
    assert_eq!(objects[0]["user"]["id"], alice);
    assert!(objects[1]["user"].is_null(), "{}", objects[1]);
    let detail = app.get("/api/message/2/").await.json();
    assert!(detail["user"].is_null(), "{detail}");
    let objects = app.get("/api/relationship/?ordering=id").await.objects();
    assert!(objects[0]["to_user"].is_null(), "{}", objects[0]);
    assert_eq!(objects[1]["to_user"]["id"], alice);
    // Included through a user resource of its own that hides nobody: the registered user
    // resource still hides Carol.
    let objects = app.get("/api/msgplainuser/?ordering=id").await.objects();
    assert_eq!(objects[0]["user"]["username"], "alice");
    assert!(objects[1]["user"].is_null(), "{}", objects[1]);
    let detail = app.get("/api/msgplainuser/2/").await.json();
    assert!(detail["user"].is_null(), "{detail}");
}

#[actix_web::test]
async fn a_field_the_target_resource_refuses_is_refused_through_every_join() {
    let (app, _, _) = alice_and_hidden_carol().await;
    // `msgfk` allows every join through `user` and names no excluded path; the user resource
    // hides `email` and `password`, so no join reaches them.
    for key in [
        "user__email",
        "user__email__like",
        "user__password",
        "user__password__ne",
    ] {
        let resp = app.get(&url("/api/msgfk/", &[(key, "x")])).await;
        assert_param_error(&resp, key);
    }
    // `dchain` includes a CModel resource that refuses `c_field`: so does the join.
    let resp = app.get("/api/dchain/?c__c_field=x").await;
    assert_param_error(&resp, "c__c_field");
    assert_eq!(app.get("/api/dchain/?c__id=1").await.code(), 200);
}

#[actix_web::test]
async fn a_list_orders_through_joins_that_filters_may_take() {
    let app = TestApp::new().await;
    let bob = app.user("bob", "pw");
    let alice = app.user("alice", "pw");
    let carol = app.user_with("carol", "pw", false, false);
    app.sql(&format!(
        "INSERT INTO message VALUES (1, {bob}, 'b1', '2020-01-01 00:00:00'),
            (2, {alice}, 'a1', '2020-01-02 00:00:00'), (3, {carol}, 'c1', '2020-01-03 00:00:00'),
            (4, {bob}, 'b2', '2020-01-04 00:00:00'), (5, {alice}, 'a2', '2020-01-05 00:00:00');"
    ));
    let ids = |query: &'static str| {
        let app = &app;
        async move { app.get(&format!("/api/message/?{query}")).await.ids() }
    };
    // Carol is hidden by the user resource: her message orders as NULL (first ascending, last
    // descending), the primary key breaking ties.
    assert_eq!(ids("ordering=user__username").await, [3, 2, 5, 1, 4]);
    assert_eq!(ids("ordering=-user__username").await, [1, 4, 2, 5, 3]);
    assert_eq!(ids("ordering=-user__username,-id").await, [4, 1, 5, 2, 3]);
    assert_eq!(
        ids("ordering=user__username&content__like=%251").await,
        [3, 2, 1]
    );
    // Pages of a joined ordering follow on from each other.
    let first = app
        .get("/api/message/?ordering=user__username&limit=2")
        .await
        .json();
    assert_eq!(
        first["meta"]["next"]
            .as_str()
            .map(|n| n.contains("ordering")),
        Some(true)
    );
    let next = first["meta"]["next"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(app.get(&next).await.ids(), [5, 1]);
    // What filters may not take, ordering may not either.
    for ordering in [
        "user__email",
        "user__password",
        "-user__email",
        "user__nope",
    ] {
        let resp = app.get(&format!("/api/message/?ordering={ordering}")).await;
        assert_param_error(&resp, "ordering");
    }
    let resp = app
        .get("/api/message/?ordering=user__username,-user__username")
        .await;
    assert_param_error(&resp, "ordering");
}

#[actix_web::test]
async fn orderings_and_filters_join_at_most_eight_foreign_keys_deep() {
    let app = TestApp::with_seed(
        "INSERT INTO amodel (id, a_field) VALUES (1, 'z'), (2, 'a');
         INSERT INTO bmodel (id, a_id, b_field) VALUES (1, 1, 'b1'), (2, 2, 'b2');
         INSERT INTO cmodel (id, b_id, c_field) VALUES (1, 1, 'c1'), (2, 2, 'c2');
         INSERT INTO dmodel (id, c_id, d_field) VALUES (1, 1, 'd1'), (2, 2, 'd2');",
    )
    .await;
    let got = app
        .get("/api/dmodel/?ordering=c__b__a__a_field")
        .await
        .ids();
    assert_eq!(got, [2, 1]);
    let got = app
        .get("/api/dmodel/?ordering=-c__b__a__a_field")
        .await
        .ids();
    assert_eq!(got, [1, 2]);
    let eight = "parent__".repeat(8);
    let resp = app.get(&format!("/api/ticket/?{eight}id=1")).await;
    assert_eq!(resp.code(), 200);
    let resp = app.get(&format!("/api/ticket/?ordering={eight}id")).await;
    assert_eq!(resp.code(), 200);
    let nine = "parent__".repeat(9);
    let key = format!("{nine}id");
    assert_param_error(&app.get(&format!("/api/ticket/?{key}=1")).await, &key);
    let resp = app.get(&format!("/api/ticket/?ordering={nine}id")).await;
    assert_param_error(&resp, "ordering");
    // A path thousands of joins long is refused before any rule walks it.
    let deep = "parent__".repeat(5_000);
    let key = format!("{deep}id");
    assert_param_error(&app.get(&format!("/api/ticket/?{key}=1")).await, &key);
    let resp = app.get(&format!("/api/ticket/?ordering={deep}id")).await;
    assert_param_error(&resp, "ordering");
}
