use plover::RestModel;

diesel::table! {
    tag (id) { id -> Integer, label -> Text, }
}

#[derive(RestModel)]
#[diesel(table_name = tag)]
pub struct Tag {
    #[rest(default = 1)]
    pub id: i32,
    pub label: String,
}

fn main() {}
