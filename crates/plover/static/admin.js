// Plover admin: select-all, delete confirmation, and the foreign-key type-ahead.
// Everything works without it; it only makes the pages quicker to use.
document.addEventListener("DOMContentLoaded", () => {
  for (const all of document.querySelectorAll("[data-select-all]")) {
    all.addEventListener("change", () => {
      for (const box of all.closest("form").querySelectorAll("input[name=id]")) box.checked = all.checked;
    });
  }
  for (const button of document.querySelectorAll("[data-confirm]")) {
    button.addEventListener("click", (e) => { if (!confirm(button.dataset.confirm)) e.preventDefault(); });
  }
  for (const box of document.querySelectorAll("[data-lookup]")) {
    const url = box.dataset.lookup;
    const key = box.querySelector("input[type=number]");
    const q = box.querySelector(".lookup-q");
    const list = box.querySelector(".lookup-results");
    let page = 1, timer = null;
    const show = async (reset) => {
      if (reset) page = 1;
      const resp = await fetch(url + "?" + new URLSearchParams({ q: q.value, page }), { credentials: "same-origin" });
      if (!resp.ok) return;
      const data = await resp.json();
      list.replaceChildren();
      for (const o of data.objects) {
        const li = document.createElement("li");
        li.setAttribute("role", "option");
        li.textContent = o.text + " (#" + o.id + ")";
        li.addEventListener("mousedown", () => { key.value = o.id; q.value = o.text; list.hidden = true; });
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
  }
});
