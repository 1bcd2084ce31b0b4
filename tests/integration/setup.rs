//! Set-up errors (SPEC.md sections 1 and 11): misconfigurations fail before the server serves.

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

#[test]
#[should_panic(expected = "has no field `nope`")]
fn unknown_field_in_options_panics() {
    let db = Database::from_url("sqlite://:memory:").unwrap();
    RestApi::new(db).register_resource(Resource::<AModel>::new().exclude(["nope"]));
}

#[test]
#[should_panic(expected = "already has a resource named 'amodel'")]
fn duplicate_names_panic() {
    let db = Database::from_url("sqlite://:memory:").unwrap();
    RestApi::new(db).register::<AModel>().register::<AModel>();
}
