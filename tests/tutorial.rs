//! Keeps `docs/tutorial.md` true to the code it quotes.
//!
//! Every fenced block right after a `<!-- file: PATH -->` line must appear, line for line
//! (trailing whitespace ignored), as a contiguous run of lines of PATH (relative to the
//! repository root); there must be at least 10 such blocks. Every relative Markdown link outside
//! code blocks must name an existing file. Blocks without a marker are not checked.

use std::fs;
use std::path::{Path, PathBuf};

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The marked excerpts of `doc`: the file each names, and the block's lines.
fn excerpts(doc: &str) -> Vec<(String, Vec<&str>)> {
    let mut lines = doc.lines();
    let mut found = Vec::new();
    while let Some(line) = lines.next() {
        let marker = line.trim().strip_prefix("<!-- file: ");
        let Some(path) = marker.and_then(|rest| rest.strip_suffix(" -->")) else {
            continue;
        };
        let fence = lines.next().unwrap_or_default();
        assert!(fence.starts_with("```"), "{path}: no code block");
        let block = lines.by_ref().take_while(|l| !l.starts_with("```"));
        found.push((path.trim().to_owned(), block.map(str::trim_end).collect()));
    }
    found
}

#[test]
fn every_excerpt_is_a_contiguous_run_of_its_file() {
    let doc = read(&root().join("docs/tutorial.md"));
    let excerpts = excerpts(&doc);
    assert!(excerpts.len() >= 10, "only {} excerpts", excerpts.len());
    for (path, block) in excerpts {
        let text = read(&root().join(&path));
        let file: Vec<&str> = text.lines().map(str::trim_end).collect();
        assert!(
            !block.is_empty() && file.windows(block.len()).any(|run| run == block),
            "the excerpt starting {:?} is not a contiguous run of lines of {path}",
            block.first().copied().unwrap_or_default()
        );
    }
}

#[test]
fn every_relative_link_names_an_existing_file() {
    let doc = read(&root().join("docs/tutorial.md"));
    let mut in_code = false;
    let mut checked = 0;
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        }
        if in_code {
            continue;
        }
        for rest in line.split("](").skip(1) {
            let target = rest.split(')').next().unwrap_or_default();
            let file = target.split('#').next().unwrap_or_default();
            if file.is_empty() || file.contains("://") || file.starts_with("mailto:") {
                continue;
            }
            let path = root().join("docs").join(file);
            assert!(path.exists(), "broken link to {target:?}: no such file");
            checked += 1;
        }
    }
    assert!(checked > 0, "no relative link found");
}
