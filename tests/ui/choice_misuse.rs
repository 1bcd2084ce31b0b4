use plover::Choice;

#[derive(Choice)]
pub struct NotAnEnum {
    pub open: bool,
}

#[derive(Choice)]
pub enum WithData {
    Open(String),
    #[rest(rename = "open")]
    Reopened,
}

fn main() {}
