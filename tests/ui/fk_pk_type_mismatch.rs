use plover::RestModel;

diesel::table! {
    user (id) { id -> BigInt, username -> Text, }
}

diesel::table! {
    message (id) { id -> Integer, user_id -> Integer, }
}

diesel::allow_tables_to_appear_in_same_query!(user, message);

#[derive(RestModel)]
#[diesel(table_name = user)]
pub struct User {
    pub id: i64,
    pub username: String,
}

#[derive(RestModel)]
#[diesel(table_name = message)]
pub struct Message {
    pub id: i32,
    #[rest(fk = User)]
    pub user_id: i32,
}

fn main() {}
