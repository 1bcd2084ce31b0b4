// The public timeline, live: each message posted from now on appears at the top of the first
// page, a deleted one goes away. The page names the REST API's change feed of messages
// (data-feed, with the position read with the page, so that nothing falls in between); the
// browser's EventSource resumes it by itself after a network failure.
const live = document.querySelector("[data-feed]");
if (live) {
  const authors = new Map();
  const author = (id) => {
    if (!authors.has(id)) {
      const name = fetch(`/api/user/${id}/`)
        .then((r) => (r.ok ? r.json() : { username: "?" }))
        .then((user) => user.username);
      authors.set(id, name);
    }
    return authors.get(id);
  };
  // As the page writes times: "Jan 5, 2024 · 09:30" (UTC).
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const two = (n) => String(n).padStart(2, "0");
  const when = (text) => {
    const d = new Date(`${text}Z`);
    return `${months[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()} · ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}`;
  };
  const element = (tag, className, text) => {
    const e = document.createElement(tag);
    e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  // The same markup as the page's own messages (templates/_macros.html).
  const item = (message, name) => {
    const li = element("li", "card message");
    li.dataset.id = message.id;
    const meta = element("div", "meta");
    const link = element("a", "author");
    link.href = `/users/${encodeURIComponent(name)}/`;
    const avatar = element("span", "avatar", (name[0] || "?").toUpperCase());
    avatar.setAttribute("aria-hidden", "true");
    link.append(avatar, name);
    const time = element("time", "", when(message.pub_date));
    time.dateTime = message.pub_date;
    meta.append(link, time);
    li.append(meta, element("p", "content", message.content));
    return li;
  };
  const feed = new EventSource(live.dataset.feed);
  feed.addEventListener("created", async (e) => {
    const message = JSON.parse(e.data).object;
    const list = live.querySelector("ol.messages");
    if (!list) return location.reload(); // the first message: the page shows the list
    list.prepend(item(message, await author(message.user_id)));
    if (list.children.length > 20) list.lastElementChild.remove();
  });
  feed.addEventListener("deleted", (e) => {
    live.querySelector(`li[data-id="${JSON.parse(e.data).id}"]`)?.remove();
  });
  feed.addEventListener("reset", () => location.reload()); // too far behind: read the page again
}
