//! The OpenAPI document of one API: a path pair per resource, the operations its verbs allow,
//! the statuses each can answer, and the security schemes of its authentication.

use actix_web::http::Method;
use utoipa::openapi::path::{HttpMethod, Operation, Parameter, ParameterIn};
use utoipa::openapi::request_body::RequestBody;
use utoipa::openapi::response::{Response, Responses};
use utoipa::openapi::schema::{Array, Object, OneOf, Type};
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, Http, HttpAuthScheme, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::{
    Components, Content, Header, Info, OpenApi, Paths, Ref, RefOr, Required, Schema, Tag,
};

use super::schema::{self, Way};
use super::{params, ChildDoc, ResourceDoc};
use crate::auth::Scheme;

const JSON: &str = "application/json";

/// The error statuses, each a shared response with the error body.
const ERRORS: [(u16, &str, &str); 12] = [
    (
        400,
        "BadRequest",
        "A parameter, a header or the body is not acceptable",
    ),
    (
        401,
        "Unauthorized",
        "Credentials are missing or wrong, or this verb takes none",
    ),
    (
        403,
        "Forbidden",
        "A check, the ownership rule or a missing model permission refused",
    ),
    (
        429,
        "TooManyRequests",
        "Too many failed logins, or requests over a rate limit, from this client \
         (Retry-After says when to try again)",
    ),
    (
        404,
        "NotFound",
        "No such record, or hidden from this client",
    ),
    (
        405,
        "MethodNotAllowed",
        "The verb is not served here; `Allow` lists those that are",
    ),
    (
        409,
        "Conflict",
        "A unique value is taken, or dependent rows forbid the delete",
    ),
    (413, "PayloadTooLarge", "The body is over the size limit"),
    (
        412,
        "PreconditionFailed",
        "`If-Match` names no current version of the object (it changed since it was read), \
         or `If-None-Match` names the current one; nothing was written",
    ),
    (
        422,
        "IdempotencyKeyReused",
        "The `Idempotency-Key` was used for another request (another body or resource) by \
         the same credentials; nothing was written",
    ),
    (
        428,
        "PreconditionRequired",
        "This resource takes writes only with `If-Match`",
    ),
    (
        503,
        "Unavailable",
        "The database is unreachable or the server is busy; try again",
    ),
];

fn schema_ref(name: &str) -> Ref {
    Ref::from_schema_name(name)
}

/// Content of the schema `schema` (JSON, or the 401's text).
fn content(schema: impl Into<RefOr<Schema>>) -> Content {
    Content::new(Some(schema))
}

/// A component name: letters, digits, `.`, `-` and `_` only.
fn component(name: &str, suffix: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{clean}{suffix}")
}

/// The headers of every response of a rate-limited operation (docs/security.md).
const RATE_HEADERS: [(&str, &str); 3] = [
    ("RateLimit-Limit", "Requests allowed in a window"),
    ("RateLimit-Remaining", "Requests left in this window"),
    ("RateLimit-Reset", "Seconds until the window ends"),
];

/// The `ETag` header of a response: the version of what it holds.
fn etag_header() -> Header {
    let mut header = Header::new(Object::with_type(Type::String));
    header.description = Some(
        "Strong entity tag of the body: send it back in `If-None-Match` to revalidate, in \
         `If-Match` to write only over this version"
            .to_owned(),
    );
    header
}

/// An optional (or `required`) request header holding entity tags.
fn tag_param(name: &str, required: bool, description: &str) -> Parameter {
    Parameter::builder()
        .name(name)
        .parameter_in(ParameterIn::Header)
        .required(if required {
            Required::True
        } else {
            Required::False
        })
        .schema(Some(Object::with_type(Type::String)))
        .description(Some(description))
        .build()
}

/// The optional `Idempotency-Key` of a POST (docs/contract.md#idempotency-keys).
fn idempotency_key() -> Parameter {
    Parameter::builder()
        .name("Idempotency-Key")
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .schema(Some(
            Object::builder()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(crate::query::MAX_IDEMPOTENCY_KEY_CHARS)),
        ))
        .description(Some(
            "A key the client makes for this create (a UUID, say): the create is made once; \
             the same request with the same key and credentials answers its first answer \
             again (`Idempotent-Replayed: true`) until the key expires, another request with \
             it is 422",
        ))
        .build()
}

/// A response header whose value is a whole number.
fn integer_header(description: &str) -> Header {
    let mut header = Header::new(Object::with_type(Type::Integer));
    header.description = Some(description.to_owned());
    header
}

/// The description of the API with prefix `prefix` and name `name`.
pub(crate) fn document(prefix: &str, name: &str, resources: &[ResourceDoc<'_>]) -> OpenApi {
    let mut components = Components::new();
    components
        .schemas
        .insert("Error".into(), RefOr::T(schema::error()));
    for (status, component, description) in ERRORS {
        let text = || Header::new(Object::with_type(Type::String));
        let response = match status {
            // The 401 of flask-peewee, a plain page with the challenge
            // (docs/contract.md#authentication).
            401 => Response::builder()
                .description(description)
                .content(
                    "text/html; charset=utf-8",
                    content(Object::with_type(Type::String)),
                )
                .header("WWW-Authenticate", text()),
            405 => Response::builder()
                .description(description)
                .content(JSON, content(schema_ref("Error")))
                .header("Allow", text()),
            429 | 503 => Response::builder()
                .description(description)
                .content(JSON, content(schema_ref("Error")))
                .header("Retry-After", integer_header("Seconds to wait")),
            _ => Response::builder()
                .description(description)
                .content(JSON, content(schema_ref("Error"))),
        };
        components
            .responses
            .insert(component.into(), RefOr::T(response.build()));
    }
    let not_modified = Response::builder()
        .description("Not modified: the version named in `If-None-Match` is current")
        .header("ETag", etag_header());
    components
        .responses
        .insert("NotModified".into(), RefOr::T(not_modified.build()));
    let mut paths = Paths::new();
    let mut tags = Vec::new();
    let mut schemes_used = Vec::new();
    for doc in resources {
        add_resource(prefix, doc, &mut components, &mut paths);
        let mut tag = Tag::new(doc.name);
        if !doc.shape.meta.doc.is_empty() {
            tag.description = Some(doc.shape.meta.doc.to_owned());
        }
        tags.push(tag);
        for scheme in &doc.auth.schemes {
            if !schemes_used.contains(scheme) {
                schemes_used.push(*scheme);
            }
        }
    }
    for scheme in schemes_used {
        for (name, scheme) in security_schemes(scheme) {
            components
                .security_schemes
                .insert(name.into(), RefOr::T(scheme));
        }
    }
    let mut doc = OpenApi::new(Info::new(name, "1"), paths);
    doc.components = Some(components);
    doc.tags = Some(tags);
    doc
}

/// The named security schemes of a way to authenticate.
fn security_schemes(scheme: Scheme) -> Vec<(&'static str, SecurityScheme)> {
    let api_key = |value: ApiKey| SecurityScheme::ApiKey(value);
    match scheme {
        Scheme::Basic => vec![(
            "basic",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Basic)),
        )],
        Scheme::Bearer => vec![(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        )],
        Scheme::ApiKey => vec![
            ("key", api_key(ApiKey::Query(ApiKeyValue::new("key")))),
            ("secret", api_key(ApiKey::Query(ApiKeyValue::new("secret")))),
            (
                "keyHeader",
                api_key(ApiKey::Header(ApiKeyValue::new("key"))),
            ),
            (
                "secretHeader",
                api_key(ApiKey::Header(ApiKeyValue::new("secret"))),
            ),
        ],
    }
}

/// The alternatives that satisfy `scheme` (an API key is a key and a secret from one place).
fn requirements(scheme: Scheme) -> Vec<SecurityRequirement> {
    let none: [&str; 0] = [];
    match scheme {
        Scheme::Basic => vec![SecurityRequirement::new("basic", none)],
        Scheme::Bearer => vec![SecurityRequirement::new("bearer", none)],
        Scheme::ApiKey => vec![
            SecurityRequirement::new("key", none).add("secret", none),
            SecurityRequirement::new("keyHeader", none).add("secretHeader", none),
        ],
    }
}

/// What one operation does and answers.
struct Op<'a> {
    method: Method,
    /// On the detail path (else the list path).
    detail: bool,
    id: &'a str,
    summary: String,
    params: Vec<Parameter>,
    body: Option<&'a str>,
    success: (u16, Response),
    /// A second success status (an upsert's 201 beside its 200).
    also: Option<(u16, Response)>,
    errors: Vec<u16>,
}

/// The component names of one resource's schemas (docs/contract.md#api-description).
struct ResourceSchemas {
    /// One object, as read.
    object: String,
    /// A create's body: one object or an array of them.
    create_body: String,
    /// A create's answer: one object (with its nested children) or an array of them.
    created_body: String,
    /// An update's body (all keys optional).
    update: String,
    /// A list's envelope.
    list: String,
    /// An upsert's body: one update object or an array of them.
    upsert_body: String,
}

/// The resource's paths and operations, and its schemas under `components`.
fn add_resource(
    prefix: &str,
    doc: &ResourceDoc<'_>,
    components: &mut Components,
    paths: &mut Paths,
) {
    let name = doc.name;
    let schemas = add_schemas(doc, components);
    let list_path = format!("{prefix}/{name}/");
    let detail_path = format!("{prefix}/{name}/{{pk}}/");
    let ops = crud_ops(doc, &schemas)
        .into_iter()
        .chain(filtered_ops(doc, &schemas));
    for op in ops {
        let (path, served) = if op.detail {
            (&detail_path, &doc.detail)
        } else {
            (&list_path, &doc.list)
        };
        if !served.contains(&op.method) {
            continue;
        }
        let Some(http) = http_method(&op.method) else {
            continue;
        };
        paths.add_path_operation(path, vec![http], operation(doc, op));
    }
    if doc.aggregate.contains(&Method::GET) {
        add_aggregate(prefix, doc, components, paths);
    }
    if doc.changes {
        add_feed(prefix, doc, paths);
    }
}

/// `GET {prefix}/{name}/changes/`, the change feed of a resource that serves one
/// (docs/changes.md).
fn add_feed(prefix: &str, doc: &ResourceDoc<'_>, paths: &mut Paths) {
    let name = doc.name;
    let stream = Object::builder()
        .schema_type(Type::String)
        .description(Some(
            "Server-Sent Events: `id: <event id>`, `event: created|updated|deleted|left|reset`, \
             `data: {\"id\": <key>, \"object\": <the object as GET shows it, or null>}`; a \
             comment line every 15 s without events",
        ))
        .build();
    let op = Op {
        method: Method::GET,
        detail: false,
        id: "changes",
        summary: format!("The change feed of {name} objects, resumable (Server-Sent Events)"),
        params: params::feed(doc),
        body: None,
        success: (
            200,
            Response::builder()
                .description("A stream of events that stays open")
                .content(
                    "text/event-stream",
                    content(RefOr::T(Schema::Object(stream))),
                )
                .build(),
        ),
        also: None,
        errors: vec![400, 403, 429, 503],
    };
    let path = format!("{prefix}/{name}/changes/");
    paths.add_path_operation(path, vec![HttpMethod::Get], operation(doc, op));
}

/// Registers the resource's schemas under `components`; answers their names.
fn add_schemas(doc: &ResourceDoc<'_>, components: &mut Components) -> ResourceSchemas {
    let name = doc.name;
    let object = component(name, "");
    let create = component(name, ".create");
    let update = component(name, ".update");
    let list = component(name, ".list");
    components
        .schemas
        .insert(object.clone(), RefOr::T(schema::read_object(&doc.shape)));
    let (create_one, created_one) = add_create_schemas(doc, &object, components);
    components
        .schemas
        .insert(create.clone(), RefOr::T(create_one));
    // A create takes one object or an array of them (docs/contract.md#bulk-writes).
    let max_items = doc.plan.limits.max_bulk_rows;
    let create_body = component(name, ".create_body");
    let bulk = format!("At most {max_items} objects, created in one transaction or none");
    components.schemas.insert(
        create_body.clone(),
        RefOr::T(one_or_many(&create, max_items, bulk)),
    );
    let created_body = component(name, ".created");
    let created_many = "The objects created, in the order sent".to_owned();
    components.schemas.insert(
        created_body.clone(),
        RefOr::T(one_or_many(&created_one, max_items, created_many)),
    );
    let update_one = schema::write_object(&doc.shape, doc.writable, doc.owner, false);
    components
        .schemas
        .insert(update.clone(), RefOr::T(update_one));
    components
        .schemas
        .insert(list.clone(), RefOr::T(envelope(&object)));
    let upsert_body = component(name, ".upsert_body");
    components.schemas.insert(
        upsert_body.clone(),
        RefOr::T(one_or_many(
            &update,
            max_items,
            format!("At most {max_items} objects, each holding the `on` field"),
        )),
    );
    ResourceSchemas {
        object,
        create_body,
        created_body,
        update,
        list,
        upsert_body,
    }
}

/// One object of the schema `one`, or an array of at most `max_items` of them.
fn one_or_many(one: &str, max_items: usize, description: String) -> Schema {
    let many = Array::builder()
        .items(schema_ref(one))
        .max_items(Some(max_items))
        .description(Some(description));
    Schema::OneOf(OneOf::builder().item(schema_ref(one)).item(many).build())
}

/// The schema of one object a create takes, and the name of the schema of what it answers for
/// one: the object (`object`), or with nested children, the object and the children created
/// (never shown otherwise), registered under `components`.
fn add_create_schemas(
    doc: &ResourceDoc<'_>,
    object: &str,
    components: &mut Components,
) -> (Schema, String) {
    let name = doc.name;
    let mut create_one = schema::write_object(&doc.shape, doc.writable, doc.owner, true);
    if doc.children.is_empty() {
        return (create_one, object.to_owned());
    }
    let created_one = component(name, ".created_object");
    let mut answer = schema::read_object(&doc.shape);
    for (key, child) in &doc.children {
        let (child_create, child_object) = add_child(name, key, child, components);
        let max = doc.plan.limits.max_bulk_rows;
        if let Schema::Object(create_one) = &mut create_one {
            let children = Array::builder()
                .items(schema_ref(&child_create))
                .max_items(Some(max))
                .description(Some(format!(
                    "Created with the object, in its transaction (at most {max} in one \
                     request); the parent sets their foreign key"
                )));
            create_one
                .properties
                .insert(key.to_string(), children.into());
        }
        if let Schema::Object(answer) = &mut answer {
            let children = Array::builder()
                .items(schema_ref(&child_object))
                .description(Some("The children created, in the order sent"));
            answer.properties.insert(key.to_string(), children.into());
        }
    }
    components
        .schemas
        .insert(created_one.clone(), RefOr::T(answer));
    (create_one, created_one)
}

/// The operations on one object or the list: list, create, read, update (PUT and PATCH, one
/// operation under two verbs) and delete.
fn crud_ops<'a>(doc: &ResourceDoc<'_>, schemas: &'a ResourceSchemas) -> Vec<Op<'a>> {
    let name = doc.name;
    let one = || {
        Response::builder()
            .description("The object")
            .content(JSON, content(schema_ref(&schemas.object)))
            .build()
    };
    let pk = doc.shape.meta.pk_field();
    let pk_param = Parameter::builder()
        .name("pk")
        .parameter_in(ParameterIn::Path)
        .required(Required::True)
        .schema(Some(schema::value(pk.kind, false, Way::In).build()))
        .description(Some("The primary key"))
        .build();
    let mut delete_errors = vec![400, 403, 404, 413, 503];
    if !doc.delete_recursive {
        delete_errors.push(409);
    }
    let change = |method, id| Op {
        method,
        detail: true,
        id,
        summary: format!("Change one {name} object (only the keys sent)"),
        params: vec![pk_param.clone()],
        body: Some(&schemas.update),
        success: (200, one()),
        also: None,
        errors: vec![400, 403, 404, 409, 413, 503],
    };
    vec![
        Op {
            method: Method::GET,
            detail: false,
            id: "list",
            summary: format!("List {name} objects: filters, ordering, pages"),
            params: params::list(doc),
            body: None,
            success: (
                200,
                Response::builder()
                    .description("A page of objects")
                    .content(JSON, content(schema_ref(&schemas.list)))
                    .build(),
            ),
            also: None,
            errors: vec![400, 403, 413, 503],
        },
        Op {
            method: Method::POST,
            detail: false,
            id: "create",
            summary: format!("Create one {name} object, or several in one transaction"),
            params: vec![idempotency_key()],
            body: Some(&schemas.create_body),
            success: (201, created(&schemas.created_body)),
            also: None,
            errors: vec![400, 403, 409, 413, 422, 503],
        },
        Op {
            method: Method::GET,
            detail: true,
            id: "read",
            summary: format!("One {name} object"),
            params: vec![pk_param.clone(), params::fields(&doc.shape)],
            body: None,
            success: (200, one()),
            also: None,
            errors: vec![400, 403, 404, 413, 503],
        },
        change(Method::PUT, "update"),
        change(Method::PATCH, "patch"),
        Op {
            method: Method::DELETE,
            detail: true,
            id: "delete",
            summary: format!("Delete one {name} object and what depends on it"),
            params: vec![pk_param],
            body: None,
            success: (
                200,
                Response::builder()
                    .description("Deleted")
                    .content(JSON, content(written("deleted")))
                    .build(),
            ),
            also: None,
            errors: delete_errors,
        },
    ]
}

/// A create's answer (the schema `created_body`), with `Location` and `Idempotent-Replayed`.
fn created(created_body: &str) -> Response {
    let mut replayed = Header::new(Object::with_type(Type::String));
    replayed.description = Some(
        "`true` when this is the stored answer of an earlier request with the same \
         `Idempotency-Key`"
            .to_owned(),
    );
    Response::builder()
        .description(
            "Created: the object, with `Location` its path; or for an array, the objects \
             (no `Location`)",
        )
        .content(JSON, content(schema_ref(created_body)))
        .header("Location", Header::new(Object::with_type(Type::String)))
        .header("Idempotent-Replayed", replayed)
        .build()
}

/// `{"<key>": <the number of objects written>}`.
fn written(key: &str) -> Object {
    Object::builder()
        .schema_type(Type::Object)
        .property(key, Object::with_type(Type::Integer))
        .required(key)
        .build()
}

/// The operations on the list path that write every object the filters match (update and
/// delete), and the upsert.
fn filtered_ops<'a>(doc: &ResourceDoc<'_>, schemas: &'a ResourceSchemas) -> [Op<'a>; 3] {
    let name = doc.name;
    let max_affected = doc.max_affected.unwrap_or_default();
    let by_filter = |method, id, what: &str, key: &str, body| Op {
        method,
        detail: false,
        id,
        summary: format!(
            "{what} every {name} object the filters match (at least one filter; at most \
             {max_affected} objects, else 400 and nothing written), in one transaction"
        ),
        params: params::conditions(doc),
        body,
        success: (
            200,
            Response::builder()
                .description(format!("The number of objects {}", key))
                .content(JSON, content(written(key)))
                .build(),
        ),
        also: None,
        errors: vec![400, 403, 409, 413, 503],
    };
    let upserted = Response::builder()
        .description(
            "The object, or for an array the objects, as written; 201 when any was created \
             (`Location` for one object), else 200",
        )
        .content(JSON, content(schema_ref(&schemas.created_body)))
        .build();
    let mut upserted_created = upserted.clone();
    upserted_created.headers.insert(
        "Location".to_owned(),
        RefOr::T(Header::new(Object::with_type(Type::String))),
    );
    [
        by_filter(
            Method::PATCH,
            "update_matching",
            "Change",
            "updated",
            Some(&schemas.update),
        ),
        by_filter(Method::DELETE, "delete_matching", "Delete", "deleted", None),
        Op {
            method: Method::PUT,
            detail: false,
            id: "upsert",
            summary: format!(
                "Change the {name} objects that the `on` field's values find, or create them, \
                 in one transaction"
            ),
            params: vec![params::upsert_on(&doc.upsert_on)],
            body: Some(&schemas.upsert_body),
            success: (200, upserted),
            also: Some((201, upserted_created)),
            errors: vec![400, 403, 409, 413, 503],
        },
    ]
}

/// The schemas of the children of the relation `key` of resource `name`: the create body of
/// one child and the object of one; answers their component names.
fn add_child(
    name: &str,
    key: &str,
    child: &ChildDoc<'_>,
    components: &mut Components,
) -> (String, String) {
    let create = component(&format!("{name}.{key}"), ".create");
    let object = component(&format!("{name}.{key}"), "");
    let body = schema::write_object(&child.shape, child.writable, child.owner, true);
    components.schemas.insert(create.clone(), RefOr::T(body));
    let read = schema::read_object(&child.shape);
    components.schemas.insert(object.clone(), RefOr::T(read));
    (create, object)
}

/// `GET {prefix}/{name}/aggregate/` of a resource that serves it.
fn add_aggregate(
    prefix: &str,
    doc: &ResourceDoc<'_>,
    components: &mut Components,
    paths: &mut Paths,
) {
    let name = doc.name;
    let groups = component(name, ".aggregate");
    components
        .schemas
        .insert(groups.clone(), RefOr::T(aggregate_groups()));
    let op = Op {
        method: Method::GET,
        detail: false,
        id: "aggregate",
        summary: format!(
            "Aggregate {name} objects: count, sum, avg, min and max per group, after the filters"
        ),
        params: params::aggregate(doc),
        body: None,
        success: (
            200,
            Response::builder()
                .description("The groups, ordered by their fields")
                .content(JSON, content(schema_ref(&groups)))
                .build(),
        ),
        also: None,
        errors: vec![400, 403, 413, 503],
    };
    let path = format!("{prefix}/{name}/aggregate/");
    paths.add_path_operation(path, vec![HttpMethod::Get], operation(doc, op));
}

/// The answer of an aggregate (docs/contract.md#aggregates).
fn aggregate_groups() -> Schema {
    let group = Object::builder()
        .schema_type(Type::Object)
        .description(Some(
            "One group: the value of each field of `group` under its key (a foreign key's id \
             under its key in objects), `count`, and `<function>_<field>` for each function",
        ))
        .build();
    Schema::Object(
        Object::builder()
            .schema_type(Type::Object)
            .property(
                "groups",
                Array::builder()
                    .items(group)
                    .max_items(Some(1000))
                    .description(Some("At most 1,000 groups, ordered by their fields")),
            )
            .required("groups")
            .build(),
    )
}

fn http_method(method: &Method) -> Option<HttpMethod> {
    Some(match *method {
        Method::GET => HttpMethod::Get,
        Method::POST => HttpMethod::Post,
        Method::PUT => HttpMethod::Put,
        Method::PATCH => HttpMethod::Patch,
        Method::DELETE => HttpMethod::Delete,
        _ => return None,
    })
}

/// The OpenAPI operation of `op`: its parameters, body, answers and security, with what the
/// resource's options add (entity tags, rate limits, authentication).
fn operation(doc: &ResourceDoc<'_>, op: Op<'_>) -> Operation {
    let protected = is_protected(doc, &op.method);
    let read = op.method == Method::GET;
    let (status, mut success) = op.success;
    let mut params = op.params;
    let mut errors = op.errors;
    add_conditions(
        doc,
        &op.method,
        op.detail,
        &mut success,
        &mut params,
        &mut errors,
    );
    if doc.rate_limited {
        for (name, description) in RATE_HEADERS {
            success
                .headers
                .insert(name.to_owned(), RefOr::T(integer_header(description)));
        }
    }
    if protected {
        errors.push(401);
        // Failed password checks are throttled per client (docs/security.md).
        if doc.auth.schemes.contains(&crate::auth::Scheme::Basic) {
            errors.push(429);
        }
    }
    if doc.rate_limited {
        errors.push(429);
    }
    if doc.permissions {
        // ModelPermissions: a user is needed whatever the authentication protects.
        errors.extend([401, 403]);
    }
    let mut operation = Operation::new();
    operation.tags = Some(vec![doc.name.to_owned()]);
    operation.operation_id = Some(format!("{}.{}", doc.name, op.id));
    operation.summary = Some(op.summary);
    operation.parameters = (!params.is_empty()).then(|| params.into_iter().map(RefOr::T).collect());
    operation.request_body = op.body.map(|name| {
        RefOr::T(
            RequestBody::builder()
                .required(Some(Required::True))
                .content(JSON, content(schema_ref(name)))
                .build(),
        )
    });
    let not_modified = read && doc.etags;
    operation.responses = responses((status, success), op.also, errors, not_modified);
    if protected && doc.auth.protected_methods.is_some() {
        add_security(doc, &mut operation);
    }
    operation
}

/// Whether `method` needs credentials on the resource (PATCH is PUT for authentication, as
/// for everything else).
fn is_protected(doc: &ResourceDoc<'_>, method: &Method) -> bool {
    let as_auth = if *method == Method::PATCH {
        Method::PUT
    } else {
        method.clone()
    };
    doc.auth
        .protected_methods
        .as_ref()
        .is_none_or(|methods| methods.contains(&as_auth))
}

/// Conditional requests (docs/contract.md#conditional-requests): the `ETag` of an answer,
/// `If-None-Match` on reads, `If-Match` (and its statuses) on writes of one object.
fn add_conditions(
    doc: &ResourceDoc<'_>,
    method: &Method,
    detail: bool,
    success: &mut Response,
    params: &mut Vec<Parameter>,
    errors: &mut Vec<u16>,
) {
    let read = *method == Method::GET;
    let write = detail && matches!(*method, Method::PUT | Method::PATCH | Method::DELETE);
    if doc.etags && (read || (write && *method != Method::DELETE)) {
        success
            .headers
            .insert("ETag".to_owned(), RefOr::T(etag_header()));
    }
    if read && doc.etags {
        params.push(tag_param(
            "If-None-Match",
            false,
            "Entity tags of versions the client holds (or `*`): 304 without a body when one is \
             current",
        ));
    }
    if write {
        params.push(tag_param(
            "If-Match",
            doc.require_if_match,
            "Entity tags (the `ETag` of a GET of the object without `fields`), or `*`: the \
             write happens only over one of these versions, else 412",
        ));
        errors.push(412);
        if doc.require_if_match {
            errors.push(428);
        }
    }
}

/// The answers of an operation: the success (and a second success status, which takes its
/// headers), 304 where a read can answer it, and each error status once, as shared responses.
fn responses(
    (status, success): (u16, Response),
    also: Option<(u16, Response)>,
    mut errors: Vec<u16>,
    not_modified: bool,
) -> Responses {
    let mut responses = Responses::new();
    if let Some((status, mut also)) = also {
        also.headers.extend(success.headers.clone());
        responses
            .responses
            .insert(status.to_string(), RefOr::T(also));
    }
    responses
        .responses
        .insert(status.to_string(), RefOr::T(success));
    if not_modified {
        responses.responses.insert(
            "304".to_owned(),
            RefOr::Ref(Ref::from_response_name("NotModified")),
        );
    }
    errors.sort_unstable();
    errors.dedup();
    for status in errors {
        if let Some((_, component, _)) = ERRORS.iter().find(|(s, _, _)| *s == status) {
            responses.responses.insert(
                status.to_string(),
                RefOr::Ref(Ref::from_response_name(*component)),
            );
        }
    }
    responses
}

/// The credentials a protected operation accepts: the resource's schemes, or a description
/// when it accepts none (it always answers 401).
fn add_security(doc: &ResourceDoc<'_>, operation: &mut Operation) {
    let security: Vec<SecurityRequirement> = doc
        .auth
        .schemes
        .iter()
        .flat_map(|s| requirements(*s))
        .collect();
    if security.is_empty() {
        operation.description =
            Some("No credentials are accepted for this verb: it always answers 401.".into());
    } else {
        operation.security = Some(security);
    }
}

/// The list envelope (docs/contract.md#lists) around objects of the schema `object`.
fn envelope(object: &str) -> Schema {
    let text = || Object::with_type(Type::String);
    let link = |what: &str| {
        Object::builder()
            .schema_type(Type::String)
            .description(Some(format!(
                "The path and query of the {what} page, or `\"\"` when there is none"
            )))
            .build()
    };
    let counted = |what: &str| {
        Object::builder()
            .schema_type(Type::Integer)
            .minimum(Some(0))
            .description(Some(what))
    };
    let meta = Object::builder()
        .schema_type(Type::Object)
        .property("model", text())
        .required("model")
        .property("page", Object::with_type(Type::Integer))
        .required("page")
        .property("previous", link("previous"))
        .required("previous")
        .property("next", link("next"))
        .required("next")
        .property(
            "count",
            counted("The rows the filters match (with `count`)"),
        )
        .property("pages", counted("The pages they fill (with `count`)"))
        .property(
            "changes_cursor",
            counted(
                "The last change-feed event the page's snapshot includes (with `changes=cursor`)",
            ),
        )
        .build();
    Schema::Object(
        Object::builder()
            .schema_type(Type::Object)
            .property("meta", meta)
            .required("meta")
            .property("objects", Array::new(schema_ref(object)))
            .required("objects")
            .build(),
    )
}
