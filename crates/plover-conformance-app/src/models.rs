//! The models of APP.md section 2 beyond the microblog's four.

use plover::{Choice, RestModel};

/// The diesel schema of these models.
#[allow(missing_docs)]
pub mod schema {
    diesel::table! {
        /// AModel.
        amodel (id) { id -> Integer, a_field -> Text, }
    }
    diesel::table! {
        /// BModel.
        bmodel (id) { id -> Integer, a_id -> Integer, b_field -> Text, }
    }
    diesel::table! {
        /// CModel.
        cmodel (id) { id -> Integer, b_id -> Integer, c_field -> Text, }
    }
    diesel::table! {
        /// DModel.
        dmodel (id) { id -> Integer, c_id -> Integer, d_field -> Text, }
    }
    diesel::table! {
        /// EModel.
        emodel (id) { id -> Integer, e_field -> Text, }
    }
    diesel::table! {
        /// FModel.
        fmodel (id) { id -> Integer, e_id -> Nullable<Integer>, f_field -> Text, }
    }
    diesel::table! {
        /// HModel.
        hmodel (id) {
            id -> Integer,
            a_id -> Nullable<Integer>,
            h_field -> Text,
            h_date -> Nullable<Timestamp>,
            h_day -> Nullable<Date>,
        }
    }
    diesel::table! {
        /// API keys.
        apikey (id) { id -> Integer, key -> Text, secret -> Text, }
    }
    diesel::table! {
        /// Every scalar type.
        sample (id) {
            id -> Integer,
            name -> Text,
            qty -> Integer,
            big -> BigInt,
            ratio -> Double,
            flag -> Bool,
            body -> Text,
            remark -> Nullable<Text>,
            day -> Nullable<Date>,
            stamp -> Timestamp,
        }
    }
}

/// Head of the A <- B <- C <- D chain.
#[derive(Debug, RestModel)]
#[diesel(table_name = amodel)]
#[rest(display = "{a_field}", rules)]
pub struct AModel {
    /// Primary key.
    pub id: i32,
    /// Text.
    pub a_field: String,
}

/// APP.md section 2: an `a_field` that starts with `reject-` is a field error, for every
/// writer (REST and the admin).
impl plover::model::Rules for AModel {
    fn validate(
        _conn: &mut plover::db::Conn<'_>,
        changes: &AModelChanges,
        _existing: Option<&AModel>,
    ) -> Result<(), plover::Error> {
        match &changes.a_field {
            Some(text) if text.starts_with("reject-") => Err(plover::Error::field(
                "a_field",
                "must not start with \"reject-\"",
            )),
            _ => Ok(()),
        }
    }
}

/// Refers to an AModel.
#[derive(Debug, RestModel)]
#[diesel(table_name = bmodel)]
#[rest(display = "{b_field}")]
pub struct BModel {
    /// Primary key.
    pub id: i32,
    /// The AModel.
    #[rest(fk = AModel)]
    pub a_id: i32,
    /// Text.
    pub b_field: String,
}

/// Refers to a BModel.
#[derive(Debug, RestModel)]
#[diesel(table_name = cmodel)]
#[rest(display = "{c_field}")]
pub struct CModel {
    /// Primary key.
    pub id: i32,
    /// The BModel.
    #[rest(fk = BModel)]
    pub b_id: i32,
    /// Text.
    pub c_field: String,
}

/// Refers to a CModel.
#[derive(Debug, RestModel)]
#[diesel(table_name = dmodel)]
#[rest(display = "{d_field}")]
pub struct DModel {
    /// Primary key.
    pub id: i32,
    /// The CModel.
    #[rest(fk = CModel)]
    pub c_id: i32,
    /// Text.
    pub d_field: String,
}

/// Referred to by FModel through a nullable key.
#[derive(Debug, RestModel)]
#[diesel(table_name = emodel)]
#[rest(display = "{e_field}")]
pub struct EModel {
    /// Primary key.
    pub id: i32,
    /// Text.
    pub e_field: String,
}

/// Nullable reference to an EModel.
#[derive(Debug, RestModel)]
#[diesel(table_name = fmodel)]
#[rest(display = "{f_field}")]
pub struct FModel {
    /// Primary key.
    pub id: i32,
    /// The EModel, if any.
    #[rest(fk = EModel)]
    pub e_id: Option<i32>,
    /// Text.
    pub f_field: String,
}

/// Nullable reference, dates, and the `check_*` hooks.
#[derive(Debug, RestModel)]
#[diesel(table_name = hmodel)]
#[rest(display = "{h_field}")]
pub struct HModel {
    /// Primary key.
    pub id: i32,
    /// The AModel, if any.
    #[rest(fk = AModel)]
    pub a_id: Option<i32>,
    /// Text.
    pub h_field: String,
    /// A date-time.
    pub h_date: Option<chrono::NaiveDateTime>,
    /// A date.
    pub h_day: Option<chrono::NaiveDate>,
}

/// An API key pair.
#[derive(Debug, RestModel)]
#[diesel(table_name = apikey)]
#[rest(display = "{key}")]
pub struct ApiKey {
    /// Primary key.
    pub id: i32,
    /// The public key (unique).
    #[rest(unique)]
    pub key: String,
    /// The secret.
    pub secret: String,
}

/// Every scalar type.
#[derive(Debug, RestModel)]
#[diesel(table_name = sample)]
#[rest(display = "{name}")]
pub struct Sample {
    /// Primary key.
    pub id: i32,
    /// Unique name. The three text fields have search indexes: a search (`q`) reads them on
    /// SQLite, as it reads trigram indexes on PostgreSQL.
    #[rest(unique, search_index)]
    pub name: String,
    /// 32-bit integer.
    pub qty: i32,
    /// 64-bit integer.
    #[rest(default = 0)]
    pub big: i64,
    /// Double.
    #[rest(default = 0.0)]
    pub ratio: f64,
    /// Boolean.
    #[rest(default = false)]
    pub flag: bool,
    /// Text with a default.
    #[rest(default = String::new(), search_index)]
    pub body: String,
    /// Nullable text.
    #[rest(search_index)]
    pub remark: Option<String>,
    /// Nullable date.
    pub day: Option<chrono::NaiveDate>,
    /// Date-time, now by default.
    #[rest(default = plover::value::now())]
    pub stamp: chrono::NaiveDateTime,
}

/// Every model of the conformance app (the microblog's four and these), for
/// [`plover::schema`].
pub fn models() -> Vec<&'static plover::model::ModelMeta> {
    use plover::RestModel as _;
    let mut out = microblog::models().to_vec();
    out.extend([
        AModel::meta(),
        BModel::meta(),
        CModel::meta(),
        DModel::meta(),
        EModel::meta(),
        FModel::meta(),
        HModel::meta(),
        ApiKey::meta(),
        Sample::meta(),
        Ticket::meta(),
    ]);
    out.extend(plover::permissions::models());
    out
}

/// Whether a ticket is being worked on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Choice)]
pub enum Status {
    /// Not done yet.
    Open,
    /// Done.
    Closed,
}

/// A ticket: field constraints, a choice, long text, a private note, today's date and a parent.
#[derive(Debug, RestModel)]
#[diesel(table_name = ticket)]
#[rest(table, display = "{title}")]
pub struct Ticket {
    /// Primary key.
    pub id: i32,
    /// What is wrong, in a line.
    #[rest(not_blank, max_len = 100)]
    pub title: String,
    /// 1 (lowest) to 5.
    #[rest(min = 1, max = 5, default = 3)]
    pub priority: i32,
    /// Open or closed.
    #[rest(default = Status::Open)]
    pub status: Status,
    /// The whole story.
    #[rest(long, default = String::new())]
    pub body: String,
    /// Staff only: never in the API.
    #[rest(private, default = String::new())]
    pub secret_note: String,
    /// When it was opened.
    #[rest(default = plover::value::today())]
    pub opened: chrono::NaiveDate,
    /// The ticket this one belongs to.
    #[rest(fk = Ticket)]
    pub parent_id: Option<i32>,
}
