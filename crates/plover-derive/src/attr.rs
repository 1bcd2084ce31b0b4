//! The `#[rest(...)]` and `#[diesel(...)]` attributes, parsed into typed values.

use syn::meta::ParseNestedMeta;
use syn::{Attribute, Expr, LitInt, LitStr, Path, Type};

use crate::ctxt::Ctxt;

/// The keys of `#[rest(...)]`, one constant each.
pub(crate) mod key {
    pub(crate) const EXCLUDE: &str = "exclude";
    pub(crate) const NAME: &str = "name";
    pub(crate) const DISPLAY: &str = "display";
    pub(crate) const RULES: &str = "rules";
    pub(crate) const INDEX: &str = "index";
    pub(crate) const TABLE: &str = "table";
    pub(crate) const FK: &str = "fk";
    pub(crate) const DEFAULT: &str = "default";
    pub(crate) const READ_ONLY: &str = "read_only";
    pub(crate) const WRITE_ONLY: &str = "write_only";
    pub(crate) const PRIMARY_KEY: &str = "primary_key";
    pub(crate) const UNIQUE: &str = "unique";
    pub(crate) const MIN: &str = "min";
    pub(crate) const MAX: &str = "max";
    pub(crate) const MIN_LEN: &str = "min_len";
    pub(crate) const MAX_LEN: &str = "max_len";
    pub(crate) const NOT_BLANK: &str = "not_blank";
    pub(crate) const CHOICES: &str = "choices";
    pub(crate) const LONG: &str = "long";
    pub(crate) const SEARCH_INDEX: &str = "search_index";
    pub(crate) const PRIVATE: &str = "private";
    pub(crate) const USERNAME: &str = "username";
    pub(crate) const PASSWORD: &str = "password";
    pub(crate) const ACTIVE: &str = "active";
    pub(crate) const ADMIN: &str = "admin";
    pub(crate) const VERBOSE_NAME: &str = "verbose_name";
    pub(crate) const VERBOSE_NAME_PLURAL: &str = "verbose_name_plural";
    /// Of `#[diesel(...)]`.
    pub(crate) const TABLE_NAME: &str = "table_name";
}

/// Struct-level attribute keys.
pub(crate) const STRUCT_KEYS: &[&str] = &[
    key::EXCLUDE,
    key::NAME,
    key::DISPLAY,
    key::RULES,
    key::INDEX,
    key::TABLE,
    key::VERBOSE_NAME,
    key::VERBOSE_NAME_PLURAL,
];
/// Field-level attribute keys.
pub(crate) const FIELD_KEYS: &[&str] = &[
    key::FK,
    key::DEFAULT,
    key::READ_ONLY,
    key::WRITE_ONLY,
    key::EXCLUDE,
    key::PRIMARY_KEY,
    key::UNIQUE,
    key::INDEX,
    key::SEARCH_INDEX,
    key::NAME,
    key::MIN,
    key::MAX,
    key::MIN_LEN,
    key::MAX_LEN,
    key::NOT_BLANK,
    key::CHOICES,
    key::LONG,
    key::PRIVATE,
    key::USERNAME,
    key::PASSWORD,
    key::ACTIVE,
    key::ADMIN,
    key::VERBOSE_NAME,
];

/// The part a field plays in a user model (`#[rest(username)]`, ...): the derive implements
/// `UserModel` from them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum UserRole {
    Username,
    Password,
    Active,
    Admin,
}

impl UserRole {
    pub(crate) const ALL: [UserRole; 4] = [
        UserRole::Username,
        UserRole::Password,
        UserRole::Active,
        UserRole::Admin,
    ];

    /// The attribute's key.
    pub(crate) fn key(self) -> &'static str {
        match self {
            UserRole::Username => key::USERNAME,
            UserRole::Password => key::PASSWORD,
            UserRole::Active => key::ACTIVE,
            UserRole::Admin => key::ADMIN,
        }
    }
}

/// What the struct's attributes say.
#[derive(Default)]
pub(crate) struct StructAttrs {
    pub(crate) table: Option<Path>,
    /// A `table_name` was given but is not a path (already reported).
    pub(crate) table_malformed: bool,
    /// `exclude = "a, b"`: each name with the literal it came from.
    pub(crate) exclude: Vec<(String, LitStr)>,
    pub(crate) name: Option<LitStr>,
    /// `display = "{field} ..."`: the text of a row in the admin.
    pub(crate) display: Option<LitStr>,
    /// `rules`: the model implements `plover::model::Rules`.
    pub(crate) rules: bool,
    /// `index = "a, b"` (repeatable): an index over these fields, in this order.
    pub(crate) indexes: Vec<LitStr>,
    /// `table`: the derive declares the diesel `table!` named by `table_name`.
    pub(crate) generate_table: bool,
    /// `verbose_name = "..."`: the model's name for people (checked by `check`).
    pub(crate) verbose_name: Option<Expr>,
    /// `verbose_name_plural = "..."`.
    pub(crate) verbose_name_plural: Option<Expr>,
}

/// How a field gets a value when a POST does not give one.
pub(crate) enum Default {
    /// It is required (unless nullable).
    None,
    /// `#[rest(default)]`: the database fills it in.
    Database,
    /// `#[rest(default = expr)]`: the expression, evaluated at insert time.
    Expr(Expr),
}

/// What a field's attributes say.
pub(crate) struct FieldAttrs {
    pub(crate) fk: Option<Type>,
    pub(crate) default: Default,
    /// `#[rest(write_only)]` (or its older spelling `exclude`).
    pub(crate) exclude: bool,
    /// `#[rest(read_only)]`: serialized, never written by a client.
    pub(crate) read_only: bool,
    pub(crate) primary_key: bool,
    /// `#[rest(unique)]`: the column has a unique index.
    pub(crate) unique: bool,
    /// `#[rest(index)]`: the column has an index of its own.
    pub(crate) index: bool,
    pub(crate) name: Option<LitStr>,
    /// `min = n` and `max = n`: the literal, read, with its tokens for errors.
    pub(crate) min: Option<(Number, Expr)>,
    pub(crate) max: Option<(Number, Expr)>,
    /// `min_len = n`, `max_len = n`.
    pub(crate) min_len: Option<LitInt>,
    pub(crate) max_len: Option<LitInt>,
    /// `not_blank`, `long`, `search_index`: the key, for errors.
    pub(crate) not_blank: Option<Path>,
    pub(crate) long: Option<Path>,
    pub(crate) search_index: Option<Path>,
    /// `choices = ["a", "b"]`.
    pub(crate) choices: Option<(Vec<LitStr>, Expr)>,
    /// `private`.
    pub(crate) private: bool,
    /// `username`, `password`, `active` or `admin`, with the key for errors.
    pub(crate) user_role: Option<(UserRole, Path)>,
    /// `verbose_name = "..."`: the field's name for people (checked by `check`).
    pub(crate) verbose_name: Option<Expr>,
}

/// A number literal of `min` or `max`.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Number {
    Int(i64),
    Float(f64),
}

/// `-?<int or float literal>`.
fn number(expr: &Expr) -> syn::Result<Number> {
    use syn::{Lit, UnOp};
    let wrong = || syn::Error::new_spanned(expr, "expected a number literal, e.g. `min = 1`");
    let (negative, lit) = match expr {
        Expr::Lit(lit) => (false, &lit.lit),
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => match &*u.expr {
            Expr::Lit(lit) => (true, &lit.lit),
            _ => return Err(wrong()),
        },
        _ => return Err(wrong()),
    };
    let sign = if negative { "-" } else { "" };
    match lit {
        Lit::Int(i) => format!("{sign}{}", i.base10_digits())
            .parse()
            .map(Number::Int)
            .map_err(|_| syn::Error::new_spanned(expr, "the bound does not fit an i64")),
        Lit::Float(f) => format!("{sign}{}", f.base10_digits())
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .map(Number::Float)
            .ok_or_else(wrong),
        _ => Err(wrong()),
    }
}

/// `["a", "b"]`: the text literals, at least one, none repeated.
fn choices(expr: &Expr) -> syn::Result<Vec<LitStr>> {
    let wrong = || {
        syn::Error::new_spanned(
            expr,
            "choices takes a list of text literals, e.g. `choices = [\"open\", \"closed\"]`",
        )
    };
    let Expr::Array(array) = expr else {
        return Err(wrong());
    };
    let mut out: Vec<LitStr> = Vec::new();
    for elem in &array.elems {
        let Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(lit),
            ..
        }) = elem
        else {
            return Err(wrong());
        };
        if out.iter().any(|o| o.value() == lit.value()) {
            return Err(syn::Error::new_spanned(lit, "this choice is listed twice"));
        }
        out.push(lit.clone());
    }
    if out.is_empty() {
        return Err(wrong());
    }
    Ok(out)
}

pub(crate) const PRIVATE_AND_WRITE_ONLY: &str = "a field cannot be both private and write_only: \
     keep `private` for a value only the admin (or a resource that shows it) reads and writes, \
     or `write_only` for a secret clients write but never see (a password)";

pub(crate) const READ_AND_WRITE_ONLY: &str = "a field cannot be both read_only and write_only: \
     keep `read_only` for a value clients see but never write, or `write_only` for one they \
     write but never see";

/// The keys met so far in one struct's or one field's attributes: a key given twice is an
/// error at its second span (else the last one would silently win).
#[derive(Default)]
struct Seen(Vec<String>);

impl Seen {
    /// Records the key of `meta`; an error if it was met before.
    fn first(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let Some(key) = meta.path.get_ident().map(ToString::to_string) else {
            return Ok(());
        };
        if self.0.contains(&key) {
            return Err(meta.error(format!("`{key}` is given twice; keep one")));
        }
        self.0.push(key);
        Ok(())
    }
}

fn unknown(meta: &ParseNestedMeta<'_>, keys: &[&str]) -> syn::Error {
    let key = meta
        .path
        .get_ident()
        .map_or_else(|| "this key".to_owned(), |i| format!("`{i}`"));
    meta.error(format!(
        "unknown rest attribute {key}; expected one of: {}",
        keys.join(", ")
    ))
}

pub(crate) fn struct_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> StructAttrs {
    let mut out = StructAttrs::default();
    let mut seen = Seen::default();
    for attr in attrs {
        if attr.path().is_ident("diesel") {
            // diesel's own derives check the rest of this attribute; a malformed table name
            // is ours to report.
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident(key::TABLE_NAME) {
                    let value = meta.value()?;
                    match value.parse::<Path>() {
                        Ok(path) => out.table = Some(path),
                        Err(_) => {
                            let found: Expr = value.parse()?;
                            cx.error(
                                found,
                                "table_name takes the path of a diesel `table!`, e.g. \
                                 #[diesel(table_name = post)], not a string",
                            );
                            out.table_malformed = true;
                        }
                    }
                } else if meta.input.peek(syn::Token![=]) {
                    let _: Expr = meta.value()?.parse()?;
                } else if meta.input.peek(syn::token::Paren) {
                    let _ = meta.parse_nested_meta(|_| Ok(()));
                }
                Ok(())
            });
        } else if attr.path().is_ident("rest") {
            let result = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident(key::INDEX) {
                    out.indexes.push(meta.value()?.parse()?);
                    return Ok(());
                }
                seen.first(&meta)?;
                if meta.path.is_ident(key::EXCLUDE) {
                    let lit: LitStr = meta.value()?.parse()?;
                    for name in lit
                        .value()
                        .split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                    {
                        out.exclude.push((name.to_owned(), lit.clone()));
                    }
                } else if meta.path.is_ident(key::NAME) {
                    out.name = Some(meta.value()?.parse()?);
                } else if meta.path.is_ident(key::DISPLAY) {
                    out.display = Some(meta.value()?.parse()?);
                } else if meta.path.is_ident(key::RULES) {
                    out.rules = true;
                } else if meta.path.is_ident(key::TABLE) {
                    out.generate_table = true;
                } else if meta.path.is_ident(key::VERBOSE_NAME) {
                    out.verbose_name = Some(meta.value()?.parse()?);
                } else if meta.path.is_ident(key::VERBOSE_NAME_PLURAL) {
                    out.verbose_name_plural = Some(meta.value()?.parse()?);
                } else {
                    return Err(unknown(&meta, STRUCT_KEYS));
                }
                Ok(())
            });
            if let Err(e) = result {
                cx.syn_error(e);
            }
        }
    }
    out
}

pub(crate) fn field_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> FieldAttrs {
    let mut out = FieldAttrs {
        fk: None,
        default: Default::None,
        exclude: false,
        read_only: false,
        primary_key: false,
        unique: false,
        index: false,
        name: None,
        min: None,
        max: None,
        min_len: None,
        max_len: None,
        not_blank: None,
        long: None,
        search_index: None,
        choices: None,
        private: false,
        user_role: None,
        verbose_name: None,
    };
    let mut seen = Seen::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("rest")) {
        let result = attr.parse_nested_meta(|meta| {
            seen.first(&meta)?;
            if meta.path.is_ident(key::FK) {
                out.fk = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident(key::DEFAULT) {
                out.default = if meta.input.peek(syn::Token![=]) {
                    Default::Expr(meta.value()?.parse()?)
                } else {
                    Default::Database
                };
            } else if meta.path.is_ident(key::WRITE_ONLY) || meta.path.is_ident(key::EXCLUDE) {
                // Accepted in bodies and forms, never serialized, filtered or ordered.
                if out.read_only {
                    return Err(meta.error(READ_AND_WRITE_ONLY));
                }
                if out.private {
                    return Err(meta.error(PRIVATE_AND_WRITE_ONLY));
                }
                out.exclude = true;
            } else if meta.path.is_ident(key::PRIVATE) {
                if out.exclude {
                    return Err(meta.error(PRIVATE_AND_WRITE_ONLY));
                }
                out.private = true;
            } else if meta.path.is_ident(key::READ_ONLY) {
                if out.exclude {
                    return Err(meta.error(READ_AND_WRITE_ONLY));
                }
                out.read_only = true;
            } else if meta.path.is_ident(key::PRIMARY_KEY) {
                out.primary_key = true;
            } else if meta.path.is_ident(key::UNIQUE) {
                out.unique = true;
            } else if meta.path.is_ident(key::INDEX) {
                out.index = true;
            } else if meta.path.is_ident(key::NAME) {
                out.name = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident(key::MIN) || meta.path.is_ident(key::MAX) {
                let expr: Expr = meta.value()?.parse()?;
                let bound = Some((number(&expr)?, expr));
                if meta.path.is_ident(key::MIN) {
                    out.min = bound;
                } else {
                    out.max = bound;
                }
            } else if meta.path.is_ident(key::MIN_LEN) {
                out.min_len = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident(key::MAX_LEN) {
                out.max_len = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident(key::NOT_BLANK) {
                out.not_blank = Some(meta.path.clone());
            } else if meta.path.is_ident(key::VERBOSE_NAME) {
                out.verbose_name = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident(key::LONG) {
                out.long = Some(meta.path.clone());
            } else if meta.path.is_ident(key::SEARCH_INDEX) {
                out.search_index = Some(meta.path.clone());
            } else if meta.path.is_ident(key::CHOICES) {
                let expr: Expr = meta.value()?.parse()?;
                out.choices = Some((choices(&expr)?, expr));
            } else if let Some(role) = UserRole::ALL
                .into_iter()
                .find(|r| meta.path.is_ident(r.key()))
            {
                if let Some((other, _)) = out.user_role {
                    return Err(meta.error(format!(
                        "a field plays one part in a user model: it is `{}` already",
                        other.key()
                    )));
                }
                out.user_role = Some((role, meta.path.clone()));
            } else {
                return Err(unknown(&meta, FIELD_KEYS));
            }
            Ok(())
        });
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
    out
}
