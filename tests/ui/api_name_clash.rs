use plover::RestModel;

diesel::table! {
    author (id) { id -> Integer, }
}

diesel::table! {
    post (id) { id -> Integer, user_id -> Integer, user -> Text, }
}

#[derive(RestModel)]
#[diesel(table_name = author)]
pub struct Author {
    pub id: i32,
}

#[derive(RestModel)]
#[diesel(table_name = post)]
pub struct Post {
    pub id: i32,
    #[rest(fk = Author)]
    pub user_id: i32,
    pub user: String,
}

fn main() {}
