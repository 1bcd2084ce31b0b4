use plover::RestModel;

diesel::table! {
    message (id) { id -> Integer, user_id -> Integer, content -> Text, }
}

pub struct NotAModel {
    pub id: i32,
}

#[derive(RestModel)]
#[diesel(table_name = message)]
pub struct Message {
    pub id: i32,
    #[rest(fk = NotAModel)]
    pub user_id: i32,
    pub content: String,
}

fn main() {}
