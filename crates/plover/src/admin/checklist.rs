//! Checklists (docs/admin.md#groups-and-permissions): the rows of a child model that tie a
//! parent to one of a list of choices (a group's permissions, a user's groups), edited on the
//! parent's add and edit pages as checkboxes under headings, and saved with the parent in one
//! transaction.
//!
//! The boxes of a checklist named `name` are inputs `name` whose value is the choice's; an
//! editable checklist also sends an empty `name` (a hidden input), so that a form with no box
//! ticked is told from a form without the checklist, which changes nothing. A save writes the
//! difference: a child row for each newly ticked choice, a delete of each row unticked, each
//! through the child's write path (its rules, the history, the permissions stamp). A value
//! that is no choice is an error beside the checklist, and nothing is written.

use std::collections::BTreeSet;

use serde_json::Value;

use super::form::{parse_input, refusal};
use super::page::plain_text;
use super::prepared::{ChecklistModel, Cx, Parts, PreparedAdmin, Ticked};
use super::rights::{require, Rights};
use super::views::{ChecklistBox, ChecklistGroup, ChecklistView, InlineView};
use crate::db::{cancel, Conn};
use crate::error::Error;
use crate::history::{self, Entry};
use crate::model::row::Row;
use crate::model::{Field, RestModel};
use crate::query::{Filter, Op, Order, Param, Select};

/// One box of a checklist: the value its input sends and its text.
#[derive(Debug, Clone)]
pub(crate) struct Choice {
    pub(crate) value: String,
    pub(crate) label: String,
}

/// The choices under one heading (`None`: a list without headings).
#[derive(Debug, Clone)]
pub(crate) struct Choices {
    pub(crate) heading: Option<String>,
    pub(crate) choices: Vec<Choice>,
}

/// Where a checklist's choices come from (the permissions of the program, the groups...).
pub(crate) type ChoiceList = fn(&mut Conn<'_>) -> Result<Vec<Choices>, Error>;

/// The child model `C` edited as a checklist: its rows whose field `owner` holds the parent's
/// key, one per ticked choice, the choice in its field `value`.
pub(crate) struct Checklist<C: RestModel> {
    /// The name of its inputs (`permissions`).
    pub(crate) name: &'static str,
    /// Its legend (`Permissions`).
    pub(crate) title: &'static str,
    /// What one choice is, for the message of a value that is none (`permission`).
    pub(crate) noun: &'static str,
    pub(crate) owner: Field<C>,
    pub(crate) value: Field<C>,
    pub(crate) choices: ChoiceList,
}

impl<C: RestModel> Checklist<C> {
    /// Whether the user may tick and untick: add and delete the child rows.
    fn editable(cx: &Cx<'_>) -> bool {
        let rights = Rights::of(cx.held, C::meta().name);
        rights.add && rights.delete
    }

    /// The rows of `parent`, key ascending.
    fn stored(&self, conn: &mut Conn<'_>, parent: i64) -> Result<Vec<C>, Error> {
        C::load(
            conn,
            &Select {
                filters: vec![Filter {
                    path: vec![self.owner.index()],
                    op: Op::Eq,
                    values: vec![Param::Int(parent)],
                }],
                order: vec![Order::asc(C::meta().pk)],
                ..Select::default()
            },
        )
    }

    /// The choice a row holds, as its box's value.
    fn value_of(&self, row: &C) -> String {
        plain_text(&row.field_json(self.value.index()))
    }

    /// Adds the row of `parent` holding `value`, recorded in the history.
    fn add(&self, cx: &Cx<'_>, conn: &mut Conn<'_>, parent: i64, value: &str) -> Result<(), Error> {
        let meta = C::meta();
        let field = &meta.fields[self.value.index()];
        let json = parse_input(field, value).map_err(|m| Error::field(field.name, m))?;
        let mut changes = C::Changes::default();
        for (idx, value) in [
            (self.owner.index(), Value::from(parent)),
            (self.value.index(), json),
        ] {
            C::set_json(&mut changes, idx, &value)
                .map_err(|m| Error::field(meta.fields[idx].name, m))?;
        }
        conn.transaction(|conn| {
            let row = crate::model::save::<C>(conn, changes, None)?;
            history::record(conn, Entry::of(&cx.req.actor, None, Some(&row)).as_slice())
        })
    }
}

impl<C: RestModel> ChecklistModel for Checklist<C> {
    fn name(&self) -> &str {
        self.name
    }

    fn parse(&self, cx: &Cx<'_>) -> Result<Option<Ticked>, Error> {
        let mut sent = (cx.req.form.iter())
            .filter(|(key, _)| key == self.name)
            .map(|(_, value)| value.trim())
            .peekable();
        if sent.peek().is_none() {
            return Ok(None);
        }
        require(Self::editable(cx))?;
        Ok(Some(Ticked {
            values: sent.filter(|v| !v.is_empty()).map(str::to_owned).collect(),
            error: None,
        }))
    }

    fn save(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        parent: Option<i64>,
        ticked: &mut Ticked,
    ) -> Result<(), Error> {
        let offered: BTreeSet<String> = ((self.choices)(conn)?.into_iter())
            .flat_map(|c| c.choices)
            .map(|c| c.value)
            .collect();
        if let Some(unknown) = ticked.values.iter().find(|v| !offered.contains(*v)) {
            ticked.error = Some(format!("There is no such {}: '{unknown}'.", self.noun));
            return Ok(());
        }
        let Some(parent) = parent else {
            return Ok(());
        };
        let stored = self.stored(conn, parent)?;
        let unticked: Vec<i64> = (stored.iter())
            .filter(|row| !ticked.values.contains(&self.value_of(row)))
            .map(RestModel::pk)
            .collect();
        if !unticked.is_empty() {
            history::delete::<C>(conn, &cx.req.actor, &unticked, true)?;
        }
        let held: BTreeSet<String> = stored.iter().map(|row| self.value_of(row)).collect();
        for value in ticked.values.difference(&held) {
            cancel::stop_if_client_gone()?; // a client that left gets nothing more
            if let Err(e) = self.add(cx, conn, parent, value) {
                let refused = refusal(C::meta(), e)?;
                let message = refused.fields.into_values().next().or(refused.message);
                ticked.error = Some(message.unwrap_or_else(|| "Refused.".into()));
                return Ok(());
            }
        }
        Ok(())
    }

    fn view(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        parent: Option<i64>,
        ticked: Option<&Ticked>,
        shown_only: bool,
    ) -> Result<Option<ChecklistView>, Error> {
        let editable = Self::editable(cx) && !shown_only;
        if !editable && !Rights::of(cx.held, C::meta().name).view {
            return Ok(None);
        }
        let chosen: BTreeSet<String> = match (ticked, parent) {
            (Some(ticked), _) => ticked.values.clone(),
            (None, Some(parent)) => (self.stored(conn, parent)?.iter())
                .map(|row| self.value_of(row))
                .collect(),
            (None, None) => BTreeSet::new(),
        };
        let groups = ((self.choices)(conn)?.into_iter())
            .map(|group| ChecklistGroup {
                heading: group.heading,
                boxes: (group.choices.into_iter())
                    .map(|choice| ChecklistBox {
                        checked: chosen.contains(&choice.value),
                        value: choice.value,
                        label: choice.label,
                    })
                    .collect(),
            })
            .collect();
        Ok(Some(ChecklistView {
            name: self.name.to_owned(),
            title: self.title.to_owned(),
            groups,
            read_only: !editable,
            error: ticked.and_then(|t| t.error.clone()),
        }))
    }
}

impl PreparedAdmin {
    /// Whether the forms edit more than the model's fields: inlines or checklists, saved
    /// with the row in one transaction.
    pub(super) fn has_parts(&self) -> bool {
        !self.forms.inlines.is_empty() || !self.forms.checklists.is_empty()
    }

    /// The inlines' rows and the checklists' values of a submitted form (400 or 403 for a
    /// form that may not be sent).
    pub(super) fn parse_parts(&self, cx: &Cx<'_>) -> Result<Parts, Error> {
        Ok(Parts {
            inlines: self.parse_inlines(cx)?,
            checklists: (self.forms.checklists.iter())
                .map(|checklist| checklist.parse(cx))
                .collect::<Result<_, _>>()?,
        })
    }

    /// Writes each checklist sent, `parent` being the row saved (`None`: it could not be).
    pub(super) fn save_checklists(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        parent: Option<i64>,
        ticked: &mut [Option<Ticked>],
    ) -> Result<(), Error> {
        for (checklist, ticked) in self.forms.checklists.iter().zip(ticked) {
            if let Some(ticked) = ticked {
                checklist.save(cx, conn, parent, ticked)?;
            }
        }
        Ok(())
    }

    /// The tables of the inlines and the checklists of the form of `row` (`None`: the add
    /// page), or after a failed submit, as `sent`.
    pub(super) fn part_views(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        row: Option<&dyn Row>,
        sent: Option<&Parts>,
    ) -> Result<(Vec<InlineView>, Vec<ChecklistView>), Error> {
        let inlines = self.inline_views(cx, conn, row, sent.map(|s| s.inlines.as_slice()))?;
        let parent = row.map(|row| row.pk());
        let mut checklists = Vec::with_capacity(self.forms.checklists.len());
        for (i, checklist) in self.forms.checklists.iter().enumerate() {
            let ticked = sent
                .and_then(|s| s.checklists.get(i))
                .and_then(Option::as_ref);
            if let Some(view) = checklist.view(cx, conn, parent, ticked, self.shown_only(cx))? {
                checklists.push(view);
            }
        }
        Ok((inlines, checklists))
    }
}
