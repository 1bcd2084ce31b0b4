use plover::RestModel;

// A user model without a password field, whose flags are on the wrong types.
#[derive(Debug, RestModel)]
#[diesel(table_name = member)]
#[rest(table)]
pub struct Member {
    pub id: i32,
    #[rest(username)]
    pub name: Option<String>,
    #[rest(active)]
    pub active: i32,
    #[rest(admin, username)]
    pub staff: bool,
}

// A password hash that would be shown, and two usernames.
#[derive(Debug, RestModel)]
#[diesel(table_name = account)]
#[rest(table)]
pub struct Account {
    pub id: i32,
    #[rest(username)]
    pub login: String,
    #[rest(username)]
    pub email: String,
    #[rest(password, private)]
    pub hash: String,
}

fn main() {}
