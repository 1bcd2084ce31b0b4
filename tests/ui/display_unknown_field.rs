use plover::RestModel;

diesel::table! {
    note (id) { id -> Integer, message -> Text, }
}

#[derive(RestModel)]
#[diesel(table_name = note)]
#[rest(display = "{mesage}")]
pub struct Note {
    pub id: i32,
    pub message: String,
}

fn main() {}
