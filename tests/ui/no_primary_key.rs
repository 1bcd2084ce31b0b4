use plover::RestModel;

diesel::table! {
    tag (name) { name -> Text, weight -> Integer, }
}

#[derive(RestModel)]
#[diesel(table_name = tag)]
pub struct Tag {
    pub name: String,
    pub weight: i32,
}

fn main() {}
