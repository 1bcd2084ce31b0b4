use plover::RestModel;

diesel::table! {
    user (id) { id -> Integer, username -> Text, }
}

diesel::table! {
    message (id) { id -> Integer, username -> Text, }
}

diesel::allow_tables_to_appear_in_same_query!(user, message);

#[derive(RestModel)]
#[diesel(table_name = user)]
pub struct User {
    pub id: i32,
    pub username: String,
}

#[derive(RestModel)]
#[diesel(table_name = message)]
pub struct Message {
    pub id: i32,
    #[rest(fk = User)]
    pub username: String,
}

fn main() {}
