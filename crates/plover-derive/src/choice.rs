//! `#[derive(Choice)]`: a plain enum as a field type stored as text.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields, LitStr};

use crate::ctxt::Ctxt;

/// The `plover::model::Choice` impl of `input`, or the errors, each at its span.
pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let mut cx = Ctxt::default();
    let Data::Enum(data) = &input.data else {
        cx.error(
            &input.ident,
            "Choice can only be derived for an enum whose variants carry no data, e.g. \
             `enum Status { Open, Closed }`",
        );
        return cx.check().err().unwrap_or_default();
    };
    if !input.generics.params.is_empty() {
        cx.error(
            &input.generics,
            "Choice cannot be derived for a generic enum",
        );
    }
    let mut variants = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for variant in &data.variants {
        if !matches!(variant.fields, Fields::Unit) {
            cx.error(
                &variant.fields,
                "a choice carries no data: remove the fields, or store them in other model fields",
            );
        }
        let name = match rename(&mut cx, &variant.attrs) {
            Some(lit) => lit.value(),
            None => snake_case(&variant.ident.to_string()),
        };
        if names.contains(&name) {
            cx.error(
                &variant.ident,
                format!("two variants are stored as `{name}`; rename one with #[rest(rename = \"...\")]"),
            );
        }
        names.push(name);
        variants.push(&variant.ident);
    }
    if variants.is_empty() {
        cx.error(&input.ident, "a choice needs at least one variant");
    }
    if let Err(errors) = cx.check() {
        return errors;
    }
    let ident = &input.ident;
    let first = variants[0];
    quote! {
        #[automatically_derived]
        impl ::plover::model::Choice for #ident {
            const CHOICES: &'static [&'static str] = &[#(#names),*];

            fn choice(&self) -> &'static str {
                match self {
                    #(#ident::#variants => #names,)*
                }
            }

            fn from_choice(text: &str) -> ::core::option::Option<Self> {
                match text {
                    #(#names => ::core::option::Option::Some(#ident::#variants),)*
                    _ => ::core::option::Option::None,
                }
            }

            fn first() -> Self {
                #ident::#first
            }
        }
    }
}

/// `#[rest(rename = "...")]` of a variant.
fn rename(cx: &mut Ctxt, attrs: &[syn::Attribute]) -> Option<LitStr> {
    let mut out = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("rest")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let lit: LitStr = meta.value()?.parse()?;
                if lit.value().is_empty() {
                    return Err(syn::Error::new_spanned(
                        &lit,
                        "a choice cannot be stored as empty text",
                    ));
                }
                out = Some(lit);
                Ok(())
            } else {
                Err(meta.error("a choice's variant takes only `rename = \"...\"`"))
            }
        });
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
    out
}

/// `OnHold` -> `on_hold`, `HTTPError` -> `http_error`.
fn snake_case(ident: &str) -> String {
    let chars: Vec<char> = ident.chars().collect();
    let mut out = String::with_capacity(ident.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                out.push('_');
            }
        }
        out.extend(c.to_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn snake_case() {
        for (ident, name) in [
            ("Open", "open"),
            ("OnHold", "on_hold"),
            ("HTTPError", "http_error"),
            ("V2Beta", "v2_beta"),
            ("already_snake", "already_snake"),
        ] {
            assert_eq!(super::snake_case(ident), name);
        }
    }
}
