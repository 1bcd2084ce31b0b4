"""Schemathesis hooks for the positive-data run of scripts/openapi.py: they leave out the
generated requests that break a rule of the API which JSON Schema cannot state, each written
in the operation's description:

- `ordering` names a column once (`a,-a` is a 400): the schema says `uniqueItems`, which
  tells `a` from `-a`;
- an aggregate asks for at least one of `count`, `sum`, `avg`, `min` and `max`: parameters
  cannot be required only together;
- `cursor` comes from a `next` link: no schema tells a token the server made from another.
"""
import schemathesis

FUNCTIONS = ("count", "sum", "avg", "min", "max")


@schemathesis.hook
def map_query(ctx, query):
    """The request with the rules above kept: a column named twice in `ordering` named once,
    `count` added to an aggregate that asks for nothing, no `cursor`."""
    query = dict(query or {})
    if "ordering" in query:
        value = query["ordering"]
        terms = value if isinstance(value, list) else str(value).split(",")
        seen, kept = set(), []
        for term in terms:
            if str(term).lstrip("-") not in seen:
                seen.add(str(term).lstrip("-"))
                kept.append(term)
        query["ordering"] = kept if isinstance(value, list) else ",".join(kept)
    query.pop("cursor", None)
    path = ctx.operation.path if ctx.operation is not None else ""
    if path.endswith("/aggregate/") and not any(f in query for f in FUNCTIONS):
        query["count"] = ""
    return query
