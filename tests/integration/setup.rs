//! Set-up errors (docs/contract.md#registration and #database): misconfigurations fail before
//! the server serves.

use plover::prelude::*;
use plover_tests::*;

#[test]
fn unknown_sqlite_option_is_an_error() {
    let err = Database::from_url("sqlite:///tmp/x.db?max_conection=3").map(|_| ());
    let message = err.map_err(|e| e.to_string()).unwrap_err();
    assert!(message.contains("max_conection"), "{message}");
    assert!(Database::from_url("sqlite:///tmp/x.db?max_connections=3&threadlocals=1").is_ok());
}

#[test]
fn zero_connection_timeout_is_an_error() {
    let err = Database::from_url("sqlite:///tmp/x.db?connection_timeout=0").map(|_| ());
    assert!(err.is_err_and(|e| e.to_string().contains("connection_timeout")));
}

#[test]
#[should_panic(expected = "must not be empty")]
fn empty_prefix_panics() {
    let db = Database::from_url("sqlite://:memory:").unwrap();
    let _ = RestApi::new(db).prefix("/");
}

#[test]
#[should_panic(expected = "needs a `key` field")]
fn api_key_model_without_key_panics() {
    let _ = ApiKeyAuthentication::<AModel>::default();
}

// A misspelled field in an option is a compile error (tests/ui/misspelled_field_option.rs);
// what remains for set-up is a join through a field that is not a foreign key.
#[test]
#[should_panic(
    expected = "filter_exclude: `a_field__b_field`: `a_field` of amodel is not a foreign key"
)]
fn a_join_through_a_field_that_is_not_a_foreign_key_panics() {
    let db = Database::from_url("sqlite://:memory:").unwrap();
    let path = AModel::FIELDS.a_field.join(BModel::FIELDS.b_field);
    RestApi::new(db).register_resource(Resource::<AModel>::new().filter_exclude([path]));
}

// A join through a foreign key into a model it does not refer to.
#[test]
#[should_panic(
    expected = "filter_fields: `b__a_field`: `b` of cmodel refers to bmodel, not to amodel"
)]
fn a_join_into_another_model_panics() {
    let db = Database::from_url("sqlite://:memory:").unwrap();
    let path = CModel::FIELDS.b_id.join(AModel::FIELDS.a_field);
    RestApi::new(db).register_resource(Resource::<CModel>::new().filter_fields([path]));
}

#[test]
#[should_panic(expected = "already has a resource named 'amodel'")]
fn duplicate_names_panic() {
    let db = Database::from_url("sqlite://:memory:").unwrap();
    RestApi::new(db).register::<AModel>().register::<AModel>();
}

#[actix_web::test]
async fn blank_sql_is_a_no_op_on_every_engine() {
    let app = TestApp::new().await;
    app.db
        .run_blocking(|conn| conn.batch_execute("  \n"))
        .expect("blank SQL is accepted");
}

/// The cache and mmap sizes of a connection to the SQLite database at `url`.
fn sqlite_sizes(url: &str) -> (i64, i64) {
    use diesel::sql_types::BigInt;
    use diesel::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Cache {
        #[diesel(sql_type = BigInt)]
        cache_size: i64,
    }
    #[derive(diesel::QueryableByName)]
    struct Mmap {
        #[diesel(sql_type = BigInt)]
        mmap_size: i64,
    }
    let db = Database::from_url(url).expect("a valid URL");
    db.run_blocking(|conn| match conn {
        plover::db::Conn::Sqlite(c) => {
            let cache = diesel::sql_query("PRAGMA cache_size").get_result::<Cache>(*c)?;
            let mmap = diesel::sql_query("PRAGMA mmap_size").get_result::<Mmap>(*c)?;
            Ok((cache.cache_size, mmap.mmap_size))
        }
        #[allow(unreachable_patterns)]
        _ => unreachable!("an SQLite URL"),
    })
    .expect("the pragmas")
}

#[test]
fn sqlite_cache_and_mmap_sizes_are_options() {
    let dir = TempDir::new();
    let url = format!("sqlite://{}", dir.path().join("p.db").display());
    // Defaults: 1,000 KiB of page cache per connection (negative: KiB), no memory mapping.
    assert_eq!(sqlite_sizes(&url), (-1000, 0));
    let tuned = format!("{url}?cache_size=300&mmap_size=1048576");
    assert_eq!(sqlite_sizes(&tuned), (-300, 1048576));
    let bad = Database::from_url(&format!("{url}?cache_size=lots")).map(|_| ());
    assert!(bad.is_err_and(|e| e.to_string().contains("cache_size")));
}

#[test]
#[should_panic(expected = "`user` refers to `user`, not to `amodel`")]
fn a_foreign_key_lookup_through_another_model_panics() {
    let db = Database::from_url("sqlite://:memory:").unwrap();
    let auth = Auth::<User>::new(db);
    let mut admin = plover::admin::Admin::new(&auth);
    let lookup = plover::admin::ModelAdmin::<Message>::new()
        .foreign_key_lookup(Message::FIELDS.user_id, AModel::FIELDS.a_field);
    admin.register(lookup);
    let _ = admin.setup();
}

#[test]
#[should_panic(expected = "cannot search the write-only field `password`")]
fn a_foreign_key_lookup_on_a_write_only_field_panics() {
    let db = Database::from_url("sqlite://:memory:").unwrap();
    let auth = Auth::<User>::new(db);
    let mut admin = plover::admin::Admin::new(&auth);
    let lookup = plover::admin::ModelAdmin::<Message>::new()
        .foreign_key_lookup(Message::FIELDS.user_id, User::FIELDS.password);
    admin.register(lookup);
    let _ = admin.setup();
}

// A resource that requires If-Match cannot serve writes that name no one version.
#[test]
#[should_panic(expected = "requires If-Match on writes, which writes by filter and upserts")]
fn require_if_match_with_writes_by_filter_panics() {
    let db = Database::from_url("sqlite://:memory:").unwrap();
    RestApi::new(db).register_resource(
        Resource::<AModel>::new()
            .require_if_match(true)
            .filtered_writes(true),
    );
}

// An upsert needs a unique field to find rows by.
#[test]
#[should_panic(expected = "upserts (Resource::upsert) but has no field to find rows by")]
fn upsert_without_a_unique_field_panics() {
    let db = Database::from_url("sqlite://:memory:").unwrap();
    RestApi::new(db).register_resource(Resource::<AModel>::new().upsert(true));
}
