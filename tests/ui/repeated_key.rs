use plover::RestModel;

diesel::table! {
    account (id) { id -> Integer, name -> Text, }
}

#[derive(RestModel)]
#[diesel(table_name = account)]
#[rest(display = "{name}", display = "{id}")]
pub struct Account {
    pub id: i32,
    #[rest(unique)]
    #[rest(name = "label", unique)]
    pub name: String,
}

// The model is still usable by the code around it: the mistakes above are the only errors.
fn main() {
    let _ = <Account as RestModel>::meta();
    let changes = AccountChanges {
        name: Some("x".into()),
    };
    let _ = changes.name;
}
