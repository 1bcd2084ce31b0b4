//! Collects errors so that every mistake is reported at once, each at its own span.

use std::fmt::Display;

use proc_macro2::TokenStream;
use quote::ToTokens;

#[derive(Default)]
pub(crate) struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    pub(crate) fn error(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    pub(crate) fn syn_error(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// `Ok(())` when nothing was reported, else every error as `compile_error!`s.
    pub(crate) fn check(self) -> Result<(), TokenStream> {
        if self.errors.is_empty() {
            return Ok(());
        }
        Err(self
            .errors
            .into_iter()
            .map(|e| e.to_compile_error())
            .collect())
    }
}
