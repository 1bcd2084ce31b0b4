use plover::RestModel;

diesel::table! {
    account (id) { id -> Integer, username -> Text, password -> Text, }
}

#[derive(RestModel)]
#[diesel(table_name = account)]
#[rest(exclude = "pasword")]
pub struct Account {
    pub id: i32,
    pub username: String,
    pub password: String,
}

fn main() {}
