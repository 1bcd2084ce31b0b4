use plover::RestModel;

diesel::table! {
    account (id) { id -> Integer, token -> Text, }
}

#[derive(RestModel)]
#[diesel(table_name = account)]
pub struct Account {
    pub id: i32,
    #[rest(read_only, write_only)]
    pub token: String,
}

fn main() {}
