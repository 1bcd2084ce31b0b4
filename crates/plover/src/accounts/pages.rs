//! The pages of the account flows and the trait that renders them, which an application may
//! replace.

use askama::Template;

use crate::error::Error;

/// One input of an account form.
#[derive(Debug, Clone)]
pub struct FormInput {
    /// The field's name (`old_password`, `new_password1`, ...), also its `id`.
    pub name: &'static str,
    /// Its label.
    pub label: &'static str,
    /// The input's type: `password`, `text` or `email`.
    pub kind: &'static str,
    /// The `autocomplete` hint (`current-password`, `new-password`, `username`, `email`).
    pub autocomplete: &'static str,
    /// The value typed in, kept after a failed attempt (always empty for passwords).
    pub value: String,
    /// The message of this field, after a failed attempt.
    pub error: Option<String>,
}

/// The data of an account form page (`templates/accounts/form.html`): the password change,
/// reset request and reset forms.
#[derive(Debug, Template)]
#[template(path = "accounts/form.html")]
pub struct FormPage {
    /// Which page: `password_change`, `password_reset` or `password_reset_confirm`.
    pub page: &'static str,
    /// The page's title and heading.
    pub title: &'static str,
    /// A sentence under the heading.
    pub intro: &'static str,
    /// Where the form posts.
    pub action: String,
    /// The session's CSRF token, for the hidden `csrf_token` input.
    pub csrf_token: String,
    /// The inputs, in order.
    pub inputs: Vec<FormInput>,
    /// Messages about the whole form, after a failed attempt.
    pub errors: Vec<String>,
    /// The submit button's text.
    pub submit: &'static str,
}

/// The data of an account message page (`templates/accounts/message.html`): "your password
/// was changed", "check your mail", "this link is invalid".
#[derive(Debug, Template)]
#[template(path = "accounts/message.html")]
pub struct MessagePage {
    /// Which page: `password_change_done`, `password_reset_done`,
    /// `password_reset_invalid`, ...
    pub page: &'static str,
    /// The page's title and heading.
    pub title: &'static str,
    /// What happened.
    pub text: &'static str,
    /// A link onwards: its URL and text.
    pub link: Option<(String, &'static str)>,
}

/// The data of an account mail: the password reset link, or the sign-up confirmation link.
#[derive(Debug, Clone)]
pub struct AccountMail {
    /// Which mail: `password_reset` or `signup_confirm`.
    pub kind: &'static str,
    /// The user's username.
    pub username: String,
    /// The site's address (`https://example.com`).
    pub site: String,
    /// The link to follow.
    pub link: String,
    /// How long the link is valid, in hours.
    pub valid_hours: u64,
}

/// The HTML of the account flows' pages, set with
/// [`Auth::account_templates`](crate::accounts::Auth::account_templates). Each method gets the
/// page's data and returns its HTML; Plover keeps the status code and every check, a template
/// only decides what the page looks like. Both default to the crate's templates; forms need
/// the hidden `csrf_token` input and the inputs' names.
pub trait AccountTemplates: Send + Sync + 'static {
    /// A form page (`page.page` tells which).
    ///
    /// # Errors
    /// The template's error, answered as a 500.
    fn form(&self, page: &FormPage) -> Result<String, Error> {
        page.render()
            .map_err(|e| Error::Internal(format!("account form template: {e}")))
    }

    /// A message page (`page.page` tells which).
    ///
    /// # Errors
    /// The template's error, answered as a 500.
    fn message(&self, page: &MessagePage) -> Result<String, Error> {
        page.render()
            .map_err(|e| Error::Internal(format!("account message template: {e}")))
    }

    /// The subject and plain-text body of a mail (`mail.kind` tells which). The body must
    /// hold `mail.link`.
    ///
    /// # Errors
    /// The template's error: the mail is not sent, and the failure is logged.
    fn mail(&self, mail: &AccountMail) -> Result<(String, String), Error> {
        let AccountMail {
            username,
            site,
            link,
            valid_hours,
            ..
        } = mail;
        let site = site
            .split_once("://")
            .map_or(site.as_str(), |(_, host)| host);
        let hours = if *valid_hours == 1 {
            "1 hour".to_owned()
        } else {
            format!("{valid_hours} hours")
        };
        // Lines under 76 characters: an ASCII mail then goes as it is (7bit), links unbroken.
        Ok(if mail.kind == "signup_confirm" {
            (
                format!("Confirm your account on {site}"),
                format!(
                    "Hello {username},\n\nTo confirm your new account on {site},\nopen this \
                     link within {hours}:\n\n{link}\n\nIf you did not sign up, ignore this \
                     mail.\n"
                ),
            )
        } else {
            (
                format!("Password reset on {site}"),
                format!(
                    "Hello {username},\n\nSomeone asked to reset your password on {site}.\n\
                     To choose a new one, open this link within {hours}:\n\n{link}\n\n\
                     If it was not you, ignore this mail: your password stays as it is.\n"
                ),
            )
        })
    }
}

/// The crate's own templates.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultAccountTemplates;

impl AccountTemplates for DefaultAccountTemplates {}
