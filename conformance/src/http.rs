//! The server's HTTP behaviour (`spec/protocol.md` §6.1–§6.3): binding, the handling order
//! (Origin, auth, routing, body, parse), the status and body matrix, the body cap at exactly the
//! limit and one byte over, chunked, slow and stalled bodies, and the content type and compact
//! body of every answer.
//!
//! Where the versions differ (routing before auth and 403 in v1, auth first and 404 now), the
//! expectation follows the version the catalog shows.

use std::net::Ipv4Addr;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::ctx::{Ctx, Expect, Version, Who};
use crate::files::is_compact;
use crate::raw::{self, Framing, Header, Probe, Response};

const BINDING: &str = "protocol.md §6.1";
const ORDER: &str = "protocol.md §6.2";
const MATRIX: &str = "protocol.md §6.3";

/// The largest request body a server reads, inclusive.
pub(crate) const MAX_REQUEST_BYTES: usize = 131_072;

const UNAUTHORIZED: &str = "Unknown or revoked session";
const UNSUPPORTED: &str = "Unsupported request";

/// A valid request that changes nothing.
const SESSION_INFO: &str = r#"{"operation":"session_info","args":{}}"#;

fn unauthorized() -> Expect {
    Expect::error(401, UNAUTHORIZED)
}

/// What an authenticated request to anything but `POST /call` gets in this version.
fn refused_route(version: Version) -> Expect {
    match version {
        Version::V1_2 | Version::V1_3 => Expect::error(404, UNSUPPORTED),
        Version::V1 => Expect::error(403, UNSUPPORTED),
    }
}

fn section(version: Version) -> String {
    format!("{ORDER} ({})", version.name())
}

/// `SESSION_INFO` padded with spaces to `length` bytes.
fn padded(length: usize) -> Vec<u8> {
    let mut body = SESSION_INFO.as_bytes().to_vec();
    body.resize(length, b' ');
    body
}

#[expect(clippy::too_many_lines, reason = "the rules of one group, in the order they run")]
pub(crate) async fn check(ctx: &mut Ctx) {
    let port = ctx.first.port;
    let version = ctx.version;
    let problem = if !raw::accepts(Ipv4Addr::LOCALHOST, port).await {
        Some(format!("nothing accepts on 127.0.0.1:{port}"))
    } else if raw::accepts(Ipv4Addr::new(127, 0, 0, 2), port).await {
        Some(format!(
            "127.0.0.2:{port} accepts connections: the server is not bound to 127.0.0.1 only"
        ))
    } else {
        None
    };
    ctx.verdict("bind.loopback-only", BINDING, "the server listens on 127.0.0.1 only", problem);

    let valid = |ctx: &Ctx| ctx.authed(Who::First, SESSION_INFO);
    let bare =
        || Probe::post(SESSION_INFO).header(Header::plain("content-type", "application/json"));
    let token = ctx.first.token.expose().to_owned();
    let auth = |wire: String, shown: &str| Header::secret("authorization", wire, shown);

    // 1. Origin.
    let probe = valid(ctx).header(Header::plain("origin", "http://example.com"));
    ctx.expect(
        "origin.refused",
        ORDER,
        "a non-empty Origin is refused with 403 Unsupported request",
        vec![(Who::First, probe, Expect::error(403, UNSUPPORTED))],
    )
    .await;
    let probe = bare().header(Header::plain("origin", "http://example.com"));
    ctx.expect(
        "origin.before-auth",
        ORDER,
        "Origin is checked before the token",
        vec![(Who::First, probe, Expect::error(403, UNSUPPORTED))],
    )
    .await;
    let probe = valid(ctx).header(Header::plain("origin", ""));
    ctx.expect(
        "origin.empty-allowed",
        ORDER,
        "an empty Origin is let through",
        vec![(Who::First, probe, Expect::Success)],
    )
    .await;

    // 2. Auth.
    let other = if token == "0123456789abcdef".repeat(4) {
        "f".repeat(64)
    } else {
        "0123456789abcdef".repeat(4)
    };
    let mut changed = token.clone();
    let last = changed.pop().unwrap_or('0');
    changed.push(if last == '0' { '1' } else { '0' });
    let truncated = token[..token.len().saturating_sub(1)].to_owned();
    let cases: Vec<(&str, &str, Option<Header>)> = vec![
        ("auth.missing", "a request without authorization is refused with 401", None),
        ("auth.empty", "an empty authorization is refused with 401", Some(auth(String::new(), ""))),
        (
            "auth.wrong-token",
            "a well-formed token of no session is refused with 401",
            Some(auth(format!("Bearer {other}"), "Bearer <a well-formed token of no session>")),
        ),
        (
            "auth.changed-digit",
            "the token with its last digit changed is refused with 401",
            Some(auth(format!("Bearer {changed}"), "Bearer <token with its last digit changed>")),
        ),
        (
            "auth.truncated",
            "the token without its last digit is refused with 401",
            Some(auth(format!("Bearer {truncated}"), "Bearer <token without its last digit>")),
        ),
        (
            "auth.extended",
            "the token with one more digit is refused with 401",
            Some(auth(format!("Bearer {token}0"), "Bearer <token>0")),
        ),
        (
            "auth.lowercase-bearer",
            "`bearer <token>` (lowercase) is refused with 401",
            Some(auth(format!("bearer {token}"), "bearer <token>")),
        ),
        (
            "auth.double-space",
            "`Bearer  <token>` (two spaces) is refused with 401",
            Some(auth(format!("Bearer  {token}"), "Bearer  <token>")),
        ),
        (
            "auth.basic-scheme",
            "`Basic <token>` is refused with 401",
            Some(auth(format!("Basic {token}"), "Basic <token>")),
        ),
    ];
    for (id, rule, header) in cases {
        let probe = match header {
            Some(header) => bare().header(header),
            None => bare(),
        };
        ctx.expect(id, ORDER, rule, vec![(Who::First, probe, unauthorized())]).await;
    }
    let probe = bare().header(auth(token.clone(), "<token>"));
    ctx.expect(
        "auth.bare-token",
        ORDER,
        "a bare token without `Bearer ` is accepted (the reference's quirk)",
        vec![(Who::First, probe, Expect::Success)],
    )
    .await;

    // Auth against routing: the version decides.
    let unauthenticated = vec![
        (Who::First, bare().at("GET", "/elsewhere").framing(Framing::None), ()),
        (Who::First, bare().at("PUT", "/call"), ()),
        (Who::First, bare().at("POST", "/call/"), ()),
    ];
    let expected = match version {
        Version::V1_2 | Version::V1_3 => unauthorized(),
        Version::V1 => Expect::error(403, UNSUPPORTED),
    };
    let rule = match version {
        Version::V1_2 | Version::V1_3 => {
            "without a valid token, any method and path is 401 (auth before routing)"
        }
        Version::V1 => "without a valid token, another method or path is 403 (routing before auth)",
    };
    let probes = unauthenticated
        .into_iter()
        .map(|(who, probe, ())| (who, probe, expected.clone()))
        .collect();
    ctx.expect("order.unauthenticated-route", &section(version), rule, probes).await;

    // 3. Routing.
    let refused = refused_route(version);
    let status = match version {
        Version::V1_2 | Version::V1_3 => 404,
        Version::V1 => 403,
    };
    let routes: Vec<(&str, &str, &str, Framing)> = vec![
        ("route.method-get", "GET", "/call", Framing::None),
        ("route.method-put", "PUT", "/call", Framing::Whole),
        ("route.other-path", "POST", "/other", Framing::Whole),
        ("route.trailing-slash", "POST", "/call/", Framing::Whole),
        ("route.path-case", "POST", "/CALL", Framing::Whole),
        ("route.root", "POST", "/", Framing::Whole),
    ];
    for (id, method, target, framing) in routes {
        let probe = valid(ctx).at(method, target).framing(framing);
        let rule = format!("an authenticated {method} {target} is {status} Unsupported request");
        ctx.expect(id, &section(version), &rule, vec![(Who::First, probe, refused.clone())]).await;
    }
    let absolute = format!("http://127.0.0.1:{port}/call");
    let probe = valid(ctx).at("POST", &absolute);
    let rule = format!("an absolute-form request target is not the path /call ({status})");
    ctx.expect(
        "route.absolute-form",
        &section(version),
        &rule,
        vec![(Who::First, probe, refused.clone())],
    )
    .await;
    let probe = valid(ctx).at("POST", "/call?x=1");
    match version {
        Version::V1_2 | Version::V1_3 => {
            ctx.expect(
                "route.query",
                &section(version),
                "POST /call?x=1 is the tool route (the path ends at `?`)",
                vec![(Who::First, probe, Expect::Success)],
            )
            .await;
        }
        Version::V1 => {
            ctx.expect(
                "route.query",
                &section(version),
                "POST /call?x=1 is refused with 403 (the path must be exactly /call)",
                vec![(Who::First, probe, refused.clone())],
            )
            .await;
        }
    }

    // 4. Body.
    let probe = valid(ctx);
    let at_limit = Probe { body: padded(MAX_REQUEST_BYTES), ..probe.clone() };
    ctx.expect(
        "body.at-limit",
        MATRIX,
        "a body of exactly 131072 bytes is accepted",
        vec![(Who::First, at_limit.clone(), Expect::Success)],
    )
    .await;
    let over = Probe { body: padded(MAX_REQUEST_BYTES + 1), ..probe.clone() };
    ctx.expect(
        "body.over-limit",
        MATRIX,
        "a body of 131073 bytes is 400 Request too large",
        vec![(Who::First, over.clone(), Expect::error(400, "Request too large"))],
    )
    .await;
    ctx.expect(
        "body.chunked-at-limit",
        ORDER,
        "a chunked body of exactly 131072 bytes is accepted (counted while streaming)",
        vec![(Who::First, at_limit.framing(Framing::Chunked(16 * 1024)), Expect::Success)],
    )
    .await;
    ctx.expect(
        "body.chunked-over-limit",
        ORDER,
        "a chunked body of 131073 bytes is 400 Request too large (Content-Length is not trusted)",
        vec![(
            Who::First,
            over.framing(Framing::Chunked(16 * 1024)),
            Expect::error(400, "Request too large"),
        )],
    )
    .await;
    let text_plain = Probe::post(SESSION_INFO)
        .header(ctx.first.bearer())
        .header(Header::plain("content-type", "text/plain"));
    let no_type = Probe::post(SESSION_INFO).header(ctx.first.bearer());
    ctx.expect(
        "body.content-type-ignored",
        ORDER,
        "the request content-type is not checked",
        vec![(Who::First, text_plain, Expect::Success), (Who::First, no_type, Expect::Success)],
    )
    .await;
    let slow = valid(ctx).framing(Framing::Slow { pieces: 4, pause: Duration::from_millis(150) });
    ctx.expect(
        "body.slow",
        MATRIX,
        "a body that arrives slowly but within the limit is answered",
        vec![(Who::First, slow, Expect::Success)],
    )
    .await;

    // 5. Parse.
    let not_json = ctx.authed(Who::First, "this is not JSON");
    ctx.expect(
        "parse.not-json",
        MATRIX,
        "a body that is not JSON is 400 {\"ok\":false,\"error\":<message>}",
        vec![(Who::First, not_json, Expect::AnyError(400))],
    )
    .await;
    let empty = ctx.authed(Who::First, "");
    ctx.expect(
        "parse.empty",
        MATRIX,
        "an empty body is 400 {\"ok\":false,\"error\":<message>}",
        vec![(Who::First, empty, Expect::AnyError(400))],
    )
    .await;
    let truncated_json = ctx.authed(Who::First, r#"{"operation":"session_info","args":{"#);
    ctx.expect(
        "parse.truncated",
        MATRIX,
        "truncated JSON is 400 {\"ok\":false,\"error\":<message>}",
        vec![(Who::First, truncated_json, Expect::AnyError(400))],
    )
    .await;

    // Invocation failures.
    if ctx.lists("terminal_read") {
        let probe = ctx.authed(
            Who::First,
            r#"{"operation":"terminal_read","args":{"nodeId":"conformance-absent-node"}}"#,
        );
        ctx.expect(
            "status.operation-failed",
            MATRIX,
            "an operation that fails is 400 {\"ok\":false,\"error\":<message>}",
            vec![(Who::First, probe, Expect::AnyError(400))],
        )
        .await;
    } else {
        ctx.skip(
            "status.operation-failed",
            MATRIX,
            "an operation that fails is 400 {\"ok\":false,\"error\":<message>}",
            "terminal_read is not listed",
        );
    }
}

/// The stalled-body probe's description, its answer and how long the answer took.
pub(crate) type Stall = JoinHandle<(String, Result<Response, String>, Duration)>;

/// How soon a strict server's 408 comes: the 15 s receive limit and 5 s of margin.
const PROMPT_STALL: Duration = Duration::from_secs(20);

const STALLED: &str = "body.stalled";
const STALLED_PROMPT: &str = "body.stalled-prompt";

/// Starts the stalled-body probe: the head and 10 bytes of a longer body, then nothing. `None`
/// when `--only`/`--skip` leave out both stalled-body rules.
pub(crate) fn start_stall(ctx: &Ctx, limit: Duration) -> Option<Stall> {
    if !ctx.selected(STALLED) && !ctx.selected(STALLED_PROMPT) {
        return None;
    }
    let port = ctx.first.port;
    let probe = ctx.authed(Who::First, SESSION_INFO).framing(Framing::Stall { sent: 10 });
    Some(tokio::spawn(async move {
        let started = tokio::time::Instant::now();
        let answer = raw::exchange(port, &probe, limit).await;
        (probe.describe(), answer, started.elapsed())
    }))
}

/// Records the stalled-body rules: `body.stalled` (the 408 within the probe's limit, by default
/// the 90 s bound of §6.3 and a margin) and, strict, `body.stalled-prompt` (within 20 s).
pub(crate) async fn finish_stall(ctx: &mut Ctx, stall: Option<Stall>, limit: Duration) {
    const RULE: &str = "a request not fully received is answered 408 with Connection: close within the 90 s bound of the reference's framework";
    const PROMPT: &str = "a request not fully received within 15 s is answered 408 as the limit passes (within 20 s of its start)";
    let Some(stall) = stall else { return };
    let Ok((sent, answer, took)) = stall.await else {
        ctx.fail(STALLED, MATRIX, RULE, "the probe task failed");
        return;
    };
    let problem = match &answer {
        Err(error) => Some(format!("{error} (waited up to {} s)", limit.as_secs())),
        Ok(response) if response.status != 408 => {
            Some(format!("expected HTTP 408, got HTTP {}", response.status))
        }
        Ok(response)
            if !response
                .header("connection")
                .is_some_and(|value| value.eq_ignore_ascii_case("close")) =>
        {
            Some("the 408 has no `Connection: close`".to_owned())
        }
        Ok(_) => None,
    };
    let answered = problem.is_none();
    match problem {
        None => ctx.pass(STALLED, MATRIX, RULE),
        Some(problem) => {
            let received = answer.map_or_else(|error| error, |response| response.describe());
            ctx.fail_with(STALLED, MATRIX, RULE, &problem, &sent, &received);
        }
    }
    let prompt = if !answered {
        Some("no 408 came (see body.stalled)".to_owned())
    } else if took > PROMPT_STALL {
        Some(format!("the 408 came after {:.1} s", took.as_secs_f64()))
    } else {
        None
    };
    ctx.verdict(STALLED_PROMPT, MATRIX, PROMPT, prompt);
}

/// The rules over every answer the run saw.
pub(crate) fn check_every_answer(ctx: &mut Ctx) {
    let wrong_type = ctx
        .seen
        .iter()
        .find(|seen| seen.response.header("content-type") != Some("application/json"));
    match wrong_type {
        None => ctx.pass(
            "http.content-type",
            BINDING,
            "every answer carries content-type: application/json (no charset)",
        ),
        Some(seen) => {
            let (sent, received) = (seen.probe.clone(), seen.response.describe());
            let note = format!("content-type {:?}", seen.response.header("content-type"));
            ctx.fail_with(
                "http.content-type",
                BINDING,
                "every answer carries content-type: application/json (no charset)",
                &note,
                &sent,
                &received,
            );
        }
    }
    let loose = ctx
        .seen
        .iter()
        .find(|seen| !is_compact(&seen.response.body) || seen.response.json().is_none());
    match loose {
        None => ctx.pass("http.compact-body", BINDING, "every answer's body is compact JSON"),
        Some(seen) => {
            let (sent, received) = (seen.probe.clone(), seen.response.describe());
            ctx.fail_with(
                "http.compact-body",
                BINDING,
                "every answer's body is compact JSON",
                "not compact JSON",
                &sent,
                &received,
            );
        }
    }
}
