// Plover admin: select-all and the foreign-key type-ahead (in forms,
// in the index's filter form and in its facets' search boxes). Everything works without it; it only
// makes the pages quicker to use.

// A paginated type-ahead, made an ARIA combobox (the list-autocomplete pattern): what is typed in
// the search input `q` is looked up at `url()` (the admin's JSON lookup, a page at a time) and
// listed in `list` as options. The arrow keys move through them (aria-activedescendant names the
// one shown chosen, focus stays in the input), Enter chooses it, Escape closes the list; a click
// chooses too. Choosing a row calls `pick(row)`; the last options of a page turn to the next or
// the previous one. A polite status line says how many rows a search found.
let lookups = 0;
const typeahead = (q, list, url, pick) => {
  const id = list.id || (list.id = "lookup-" + ++lookups);
  const status = document.createElement("span");
  status.className = "visually-hidden";
  status.setAttribute("role", "status");
  list.after(status);
  q.setAttribute("role", "combobox");
  q.setAttribute("aria-autocomplete", "list");
  q.setAttribute("aria-controls", id);
  q.setAttribute("aria-expanded", "false");
  q.autocomplete = "off";
  if (!list.hasAttribute("aria-label")) list.setAttribute("aria-label", q.getAttribute("aria-label") || "Results");
  let page = 1, timer = null, latest = 0, active = -1, leaving = null;
  const choices = new Map(); // option element -> what choosing it does
  const options = () => [...list.querySelectorAll("[role=option]")];
  // Shows option `i` (clamped; -1 for none) as the active one.
  const highlight = (i) => {
    const all = options();
    active = i < 0 || all.length === 0 ? -1 : Math.min(i, all.length - 1);
    all.forEach((o, n) => o.setAttribute("aria-selected", String(n === active)));
    if (active < 0) { q.removeAttribute("aria-activedescendant"); return; }
    q.setAttribute("aria-activedescendant", all[active].id);
    all[active].scrollIntoView({ block: "nearest" });
  };
  const open = (yes) => {
    list.hidden = !yes || options().length === 0;
    q.setAttribute("aria-expanded", String(!list.hidden));
    if (list.hidden) highlight(-1);
  };
  // Closes the list; answers still on their way are then ignored.
  const close = () => { latest++; open(false); };
  const option = (text, className, choose) => {
    const li = document.createElement("li");
    li.id = id + "-" + list.childElementCount;
    li.setAttribute("role", "option");
    li.setAttribute("aria-selected", "false");
    if (className) li.className = className;
    li.textContent = text;
    li.addEventListener("mousedown", (e) => { e.preventDefault(); choose(); });
    choices.set(li, choose);
    list.append(li);
  };
  // Fetches the current page (the first with `reset`) and lists it; `first` makes its first
  // option the active one (the list was opened with an arrow key).
  const show = async (reset, first) => {
    if (reset) page = 1;
    const asked = ++latest;
    const resp = await fetch(url() + "?" + new URLSearchParams({ q: q.value, page }), { credentials: "same-origin" });
    if (!resp.ok) return;
    const data = await resp.json();
    if (asked !== latest) return; // a later search has been sent, or the list closed: that wins
    list.replaceChildren();
    choices.clear();
    for (const o of data.objects) {
      option(o.text + " (#" + o.id + ")", "", () => { pick(o); q.value = o.text; close(); });
    }
    if (page > 1) option("← Previous results", "lookup-page", () => { page--; show(false, true); });
    if (data.has_next) option("More results →", "lookup-page", () => { page++; show(false, true); });
    const n = data.objects.length;
    status.textContent = n === 0 ? "No matches." : n + (n === 1 ? " match" : " matches") + (data.has_next ? " on this page." : ".");
    open(true);
    highlight(first ? 0 : -1);
  };
  q.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => show(true, false), 150); });
  // Leaving closes the list (a moment later, so that a click in it still lands); coming back
  // before that moment keeps it.
  q.addEventListener("focus", () => { clearTimeout(leaving); show(true, false); });
  q.addEventListener("blur", () => { leaving = setTimeout(close, 150); });
  q.addEventListener("keydown", (e) => {
    const all = options();
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (list.hidden) show(false, true);
      else if (e.key === "ArrowDown") highlight(Math.min(active + 1, all.length - 1));
      else highlight(active <= 0 ? all.length - 1 : active - 1);
    } else if (e.key === "Enter" && !list.hidden) {
      e.preventDefault(); // choosing is not sending the form
      if (active >= 0) choices.get(all[active])?.();
      else close();
    } else if (e.key === "Escape") {
      if (!list.hidden) e.preventDefault(); // closes the list, keeps what is typed
      close();
    }
  });
};

document.addEventListener("DOMContentLoaded", () => {
  // On a narrow screen the facets start closed under their toggle (the summary), so that the
  // first screen shows rows; they open with a click or Enter. Wider, they stay open beside them.
  if (matchMedia("(max-width: 720px)").matches) {
    for (const panel of document.querySelectorAll("details.facets")) panel.open = false;
  }
  for (const all of document.querySelectorAll("[data-select-all]")) {
    all.addEventListener("change", () => {
      for (const box of all.closest("form").querySelectorAll("input[name=id]")) box.checked = all.checked;
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
  // Facets' search boxes: the search is a type-ahead on the foreign key's lookup, and the
  // chosen row opens the index filtered by it (the facet's "All" link with the key added), as
  // the facet's links do. Without the script the box is a form that lists the matches as links.
  for (const form of document.querySelectorAll("form.facet-search[data-lookup]")) {
    const q = form.querySelector(".lookup-q"), list = form.querySelector(".lookup-results");
    if (!q || !list) continue;
    typeahead(q, list, () => form.dataset.lookup, (o) => {
      const url = new URL(form.dataset.all, location.href);
      url.searchParams.append(form.dataset.field, o.id);
      location.assign(url.href);
    });
  }
  // Checklists: the filter box shows the boxes whose value or text holds what is typed, and
  // the headings with one of them.
  for (const list of document.querySelectorAll("[data-checklist]")) {
    const filter = list.querySelector("[data-checklist-filter]"), row = list.querySelector(".checklist-filter");
    if (!filter || !row) continue;
    row.hidden = false;
    filter.addEventListener("input", () => {
      const q = filter.value.trim().toLowerCase();
      for (const group of list.querySelectorAll("[data-checklist-group]")) {
        const heading = group.querySelector("legend")?.textContent ?? "";
        let shown = 0;
        for (const item of group.querySelectorAll("[data-checklist-item]")) {
          const text = `${heading} ${item.dataset.checklistItem} ${item.textContent}`.toLowerCase();
          item.hidden = q !== "" && !text.includes(q);
          if (!item.hidden) shown += 1;
        }
        group.hidden = shown === 0;
      }
    });
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
