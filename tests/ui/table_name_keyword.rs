use plover::RestModel;

// The default table name, the struct's name in lowercase, is a Rust keyword.
#[derive(RestModel)]
pub struct Type {
    pub id: i32,
    pub title: String,
}

fn main() {}
