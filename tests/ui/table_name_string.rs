use plover::RestModel;

diesel::table! {
    tag (id) { id -> Integer, label -> Text, }
}

#[derive(RestModel)]
#[diesel(table_name = "tag")]
pub struct Tag {
    pub id: i32,
    pub label: String,
}

fn main() {}
