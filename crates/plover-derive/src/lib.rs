//! `#[derive(RestModel)]`: field metadata, serializer, deserializer, and typed filter and
//! ordering tables for Plover, generated at compile time.
//!
//! The pipeline, as serde's derive: `attr` parses the attributes into typed values, `ast`
//! builds the model from the struct and them, `check` holds every rule of a model (`ast` calls
//! each as it reads the part it concerns, so that errors come in the order of the source), and
//! `expand` generates code from a model that passed them all. Every error is collected (`ctxt`),
//! points at the user's span and says what to write instead.

#![warn(unreachable_pub, missing_debug_implementations)]

mod ast;
mod attr;
mod check;
mod choice;
mod ctxt;
mod expand;
mod field;
mod names;
#[cfg(test)]
mod tests;
mod types;

use proc_macro::TokenStream;

/// Derives `plover::RestModel`; see the attribute reference in Plover's `docs/reference.md`.
#[proc_macro_derive(RestModel, attributes(rest, diesel))]
pub fn derive_rest_model(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    derive_rest_model_inner(input).into()
}

/// Derives `plover::model::Choice` for a plain enum: a field type stored as text (the
/// variant's name in snake case, or `#[rest(rename = "...")]`).
#[proc_macro_derive(Choice, attributes(rest))]
pub fn derive_choice(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    choice::derive(&input).into()
}

/// The derive on `proc_macro2` tokens, so that the expansion can be tested.
fn derive_rest_model_inner(input: syn::DeriveInput) -> proc_macro2::TokenStream {
    match ast::Model::from_input(&input) {
        Ok(model) => expand::expand(&model),
        // One mistake, one error: the model still gets an impl, so that the code using it
        // does not fail too.
        Err(mut errors) => {
            errors.extend(expand::fallback(&input));
            errors
        }
    }
}
