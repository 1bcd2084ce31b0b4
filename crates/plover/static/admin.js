// Plover admin: select-all, the bulk delete's confirmation, and the foreign-key type-ahead (in forms and
// in the index's filter form). Everything works without it; it only makes the pages quicker to use.

// A paginated type-ahead: what is typed in the search input `q` is looked up at `url()` (the
// admin's JSON lookup, a page at a time) and listed in `list`; a click on a row calls `pick(row)`.
const typeahead = (q, list, url, pick) => {
  let page = 1, timer = null, latest = 0;
  const show = async (reset) => {
    if (reset) page = 1;
    const asked = ++latest;
    const resp = await fetch(url() + "?" + new URLSearchParams({ q: q.value, page }), { credentials: "same-origin" });
    if (!resp.ok) return;
    const data = await resp.json();
    if (asked !== latest) return; // a later search has been sent: its answer wins
    list.replaceChildren();
    for (const o of data.objects) {
      const li = document.createElement("li");
      li.setAttribute("role", "option");
      li.textContent = o.text + " (#" + o.id + ")";
      li.addEventListener("mousedown", () => { pick(o); q.value = o.text; list.hidden = true; });
      list.append(li);
    }
    const nav = document.createElement("li");
    if (page > 1) { const p = document.createElement("button"); p.type = "button"; p.textContent = "← Previous";
      p.className = "secondary"; p.addEventListener("mousedown", (e) => { e.preventDefault(); page--; show(false); }); nav.append(p); }
    if (data.has_next) { const n = document.createElement("button"); n.type = "button"; n.textContent = "Next →";
      n.className = "secondary"; n.addEventListener("mousedown", (e) => { e.preventDefault(); page++; show(false); }); nav.append(n); }
    if (nav.childElementCount) list.append(nav);
    list.hidden = list.childElementCount === 0;
  };
  q.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => show(true), 150); });
  q.addEventListener("focus", () => show(true));
  q.addEventListener("blur", () => setTimeout(() => { list.hidden = true; }, 150));
};

document.addEventListener("DOMContentLoaded", () => {
  for (const all of document.querySelectorAll("[data-select-all]")) {
    all.addEventListener("change", () => {
      for (const box of all.closest("form").querySelectorAll("input[name=id]")) box.checked = all.checked;
    });
  }
  for (const button of document.querySelectorAll("[data-confirm]")) {
    // Only for the action it names (the bulk delete), when the form's select has another.
    const chosen = () => button.form?.querySelector("select[name=action]")?.value;
    button.addEventListener("click", (e) => {
      if (button.dataset.confirmAction && chosen() !== button.dataset.confirmAction) return;
      if (!confirm(button.dataset.confirm)) e.preventDefault();
    });
  }
  // Forms: the chosen row's key goes into the number input of the field.
  for (const box of document.querySelectorAll("div.lookup[data-lookup]")) {
    const key = box.querySelector("input[type=number]");
    typeahead(box.querySelector(".lookup-q"), box.querySelector(".lookup-results"),
      () => box.dataset.lookup, (o) => { key.value = o.id; });
  }
  // The filter form: a key whose option names a lookup shows the search; the chosen row's
  // key is the filter value.
  for (const form of document.querySelectorAll(".filter-form")) {
    const select = form.querySelector("select[name=_fk]"), value = form.querySelector("input[name=_fv]");
    const box = form.querySelector(".filter-lookup");
    if (!select || !value || !box) continue;
    const q = box.querySelector(".lookup-q"), list = box.querySelector(".lookup-results");
    const lookup = () => select.selectedOptions[0]?.dataset.lookup;
    const update = () => { box.hidden = !lookup(); q.value = ""; list.hidden = true; };
    select.addEventListener("change", update);
    update();
    typeahead(q, list, lookup, (o) => { value.value = o.id; });
  }
  // Inlines: "Add another" copies the template row, numbered after the rows there are (the
  // server takes at most data-max rows).
  for (const group of document.querySelectorAll("[data-inline]")) {
    const add = group.querySelector("[data-inline-add]"), body = group.querySelector("tbody");
    const template = group.querySelector("template");
    if (!add || !body || !template) continue;
    let next = Number(group.dataset.next) || 0;
    const max = Number(group.dataset.max) || 0;
    add.hidden = false;
    add.addEventListener("click", () => {
      if (max && body.querySelectorAll("tr.inline-row").length >= max) { add.disabled = true; return; }
      const rows = template.content.cloneNode(true);
      for (const el of rows.querySelectorAll("[name], [id], [for], [aria-describedby]")) {
        for (const attr of ["name", "id", "for", "aria-describedby"]) {
          const value = el.getAttribute(attr);
          if (value !== null) el.setAttribute(attr, value.replaceAll("__n__", String(next)));
        }
      }
      for (const label of rows.querySelectorAll("label")) label.textContent = label.textContent.replaceAll("__n__", String(next));
      next += 1;
      const first = rows.querySelector("input, select, textarea");
      body.append(rows);
      first?.focus();
    });
  }
});
