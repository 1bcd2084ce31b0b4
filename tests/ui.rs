//! Compile-error tests of `#[derive(RestModel)]`.
//!
//! Regenerate the pinned `.stderr` files with
//! `TRYBUILD=overwrite cargo test -p plover-tests --test ui`, then read every one of them.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("ui/pass_all_attributes.rs");
    t.pass("ui/pass_no_implicit_prelude.rs");
    t.compile_fail("ui/unknown_struct_key.rs");
    t.compile_fail("ui/unknown_field_key.rs");
    t.compile_fail("ui/read_only_and_write_only.rs");
    t.compile_fail("ui/exclude_missing_field.rs");
    t.compile_fail("ui/unsupported_type.rs");
    t.compile_fail("ui/not_a_field_type.rs");
    t.compile_fail("ui/field_constraints_misuse.rs");
    t.compile_fail("ui/choice_misuse.rs");
    t.compile_fail("ui/user_model_misuse.rs");
    t.compile_fail("ui/fk_not_a_model.rs");
    t.compile_fail("ui/fk_not_integer.rs");
    t.compile_fail("ui/table_name_keyword.rs");
    t.compile_fail("ui/no_primary_key.rs");
    t.compile_fail("ui/enum_model.rs");
    t.compile_fail("ui/tuple_struct.rs");
    t.compile_fail("ui/unsupported_primary_key.rs");
    t.compile_fail("ui/empty_struct.rs");
    t.compile_fail("ui/fk_pk_type_mismatch.rs");
    t.compile_fail("ui/two_primary_keys.rs");
    t.compile_fail("ui/default_on_primary_key.rs");
    t.compile_fail("ui/api_name_clash.rs");
    t.compile_fail("ui/table_name_string.rs");
    t.compile_fail("ui/display_unknown_field.rs");
    t.compile_fail("ui/repeated_key.rs");
    t.compile_fail("ui/index_unknown_column.rs");
    t.compile_fail("ui/misspelled_field_option.rs");
    t.compile_fail("ui/verbose_name_misuse.rs");
}
