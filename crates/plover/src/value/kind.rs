//! What the derive reads from a field's Rust type: its kind for the REST layer and its column
//! type for the schema.

/// The type of a model field, as far as the REST layer cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// `i32`: a 32-bit integer column.
    Int32,
    /// `i64`: a 64-bit integer column.
    Int64,
    /// `f32`/`f64`: a floating point column.
    Float,
    /// `bool`.
    Bool,
    /// `String`: a text column.
    Text,
    /// `chrono::NaiveDate`.
    Date,
    /// `chrono::NaiveDateTime`.
    DateTime,
}

impl FieldKind {
    /// Whether values of this kind are integers.
    pub fn is_integer(self) -> bool {
        matches!(self, FieldKind::Int32 | FieldKind::Int64)
    }
}

/// The column type of a field, as the derive reads it from the field's Rust type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlType {
    /// `i32`.
    Integer,
    /// `i64`.
    BigInt,
    /// `f32`.
    Real,
    /// `f64`.
    Double,
    /// `bool`.
    Boolean,
    /// `String`.
    Text,
    /// `chrono::NaiveDate`.
    Date,
    /// `chrono::NaiveDateTime`.
    Timestamp,
}

impl SqlType {
    /// The type's name in a column definition (the same on both engines).
    pub fn name(self) -> &'static str {
        match self {
            SqlType::Integer => "INTEGER",
            SqlType::BigInt => "BIGINT",
            SqlType::Real => "REAL",
            SqlType::Double => "DOUBLE PRECISION",
            SqlType::Boolean => "BOOLEAN",
            SqlType::Text => "TEXT",
            SqlType::Date => "DATE",
            SqlType::Timestamp => "TIMESTAMP",
        }
    }
}
