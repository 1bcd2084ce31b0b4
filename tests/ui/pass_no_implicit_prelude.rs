//! Hygiene: the derives' code names everything by absolute path, so that models compile in a
//! module without the prelude (`#[no_implicit_prelude]`), where `Option`, `String`, `From`,
//! `Debug` and the other prelude names are not in scope. (Without `#[rest(table)]`: the
//! `table!` it declares is diesel's macro, whose code needs the prelude.)

#[no_implicit_prelude]
mod models {
    /// A fixed set of values.
    #[derive(::core::fmt::Debug, ::plover::Choice)]
    pub enum Mood {
        Calm,
        #[rest(rename = "on-edge")]
        OnEdge,
    }

    /// A user of its own, with every part a user model has.
    #[derive(::plover::RestModel)]
    #[diesel(table_name = member)]
    #[rest(display = "{login}", rules)]
    pub struct Member {
        pub id: i64,
        #[rest(username, max_len = 30, not_blank)]
        pub login: ::std::string::String,
        #[rest(password)]
        pub hash: ::std::string::String,
        #[rest(active, default = true)]
        pub enabled: bool,
        #[rest(admin, default = false)]
        pub staff: bool,
        #[rest(min = 0, max = 10, index)]
        pub rank: ::core::option::Option<i32>,
        pub mood: Mood,
    }

    impl ::plover::model::Rules for Member {}

    /// A post of a member, with a foreign key, constraints and choices.
    #[derive(::plover::RestModel)]
    #[diesel(table_name = note)]
    #[rest(exclude = "secret", index = "author, -score")]
    pub struct Note {
        #[rest(primary_key)]
        pub pk: i32,
        #[rest(fk = Member, name = "author")]
        pub member_id: i64,
        #[rest(long, choices = ["a", "b"], default = ::std::string::String::new())]
        pub body: ::std::string::String,
        #[rest(read_only, default)]
        pub score: f64,
        #[rest(unique, private)]
        pub code: ::core::option::Option<::std::string::String>,
        pub secret: ::std::string::String,
        pub day: ::core::option::Option<::chrono::NaiveDate>,
    }
}

fn main() {
    use plover::RestModel;
    assert_eq!(models::Member::meta().name(), "member");
    assert_eq!(models::Note::meta().field("author").map(|(_, f)| f.column()), Some("member_id"));
    assert_eq!(<models::Mood as plover::model::Choice>::CHOICES, ["calm", "on-edge"]);
}
