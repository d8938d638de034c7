//! The OpenAI-compatible wire format, and which failures are worth another
//! try. A binding moves the bytes (`fetch`, a host call) and hands the
//! answer here, so every binding builds the same requests, reads the same
//! answers and classifies a failure the same way, whether an endpoint
//! answered with a status or a host's function threw one.
//!
//! - `/chat/completions`: [`chat_body`] and [`chat_answer`];
//! - `/embeddings`: [`embeddings_body`] and [`embeddings_answer`];
//! - a model hook that threw, or a `fetch` that failed: [`thrown`],
//!   [`unreachable`].
//!
//! A status is worth retrying when the same request may succeed later: 408
//! (the server timed out), 429 (rate limited) and every 5xx; any other (400,
//! 401, 404, ...) fails the same way again. `Retry-After` is read in whole
//! seconds (RFC 9110 `delay-seconds`; an HTTP date is not honoured), at most
//! [`MAX_RETRY_AFTER_MS`].

use std::fmt::Write;

use serde_json::Value;

use crate::budget::Usage;
use crate::error::{Error, ErrorCode, Result};
use crate::ports::{LlmFailure, LlmRequest, LlmResponse};

/// The longest wait a provider's `Retry-After` asks that is honoured.
pub const MAX_RETRY_AFTER_MS: u32 = 60_000;

/// How much of an error answer's body an error message quotes.
const SNIPPET_CHARS: usize = 300;

/// A chat request's `temperature`, when the host sets one: 0 to 2.
pub fn temperature(t: Option<f64>) -> Result<Option<f64>> {
    match t {
        Some(t) if !(0.0..=2.0).contains(&t) => {
            Err(Error::invalid("llm.temperature must be a number from 0 to 2"))
        }
        t => Ok(t),
    }
}

/// Whether a request that ended with `status` may succeed if sent again.
pub fn retryable_status(status: u16) -> bool {
    status == 408 || status == 429 || status >= 500
}

/// A `Retry-After` header's wait, in ms: whole seconds only.
pub fn retry_after_ms(header: &str) -> Option<u32> {
    let secs = header.trim().parse::<u32>().ok()?;
    Some(secs.saturating_mul(1000).min(MAX_RETRY_AFTER_MS))
}

/// A failure the host's model hook threw: a `status` on it is classified as
/// an HTTP answer's would be; without one (a network error, a host bug) it
/// is retried, since most are transient. A wait the host passes on is
/// capped as a `Retry-After` header's is.
pub fn thrown(status: Option<u16>, retry_after_ms: Option<u32>, description: &str) -> LlmFailure {
    let error = Error::new(ErrorCode::Llm, format!("the LLM hook failed: {description}"));
    LlmFailure {
        error,
        retryable: status.is_none_or(retryable_status),
        retry_after_ms: retry_after_ms.map(|ms| ms.min(MAX_RETRY_AFTER_MS)),
    }
}

/// The request never got an answer (the network, CORS, an abort): retried.
pub fn unreachable(description: &str) -> LlmFailure {
    LlmFailure::retryable(Error::new(ErrorCode::Llm, format!("fetch failed: {description}")))
}

/// The provider's token counts: OpenAI's names, or the library's own
/// camelCase ones (a plain hook's `{ content, usage }`). `field` reads one
/// number of the answer's `usage` object.
pub fn usage(field: &dyn Fn(&str) -> Option<f64>) -> Option<Usage> {
    let count = |k: &str| field(k).filter(|n| n.is_finite() && *n >= 0.0).map(|n| n as u64);
    let input = count("prompt_tokens").or_else(|| count("inputTokens"))?;
    let output = count("completion_tokens").or_else(|| count("outputTokens")).unwrap_or(0);
    Some(Usage { calls: 1, input_tokens: input, output_tokens: output })
}

fn usage_of(answer: &Value) -> Option<Usage> {
    let usage = answer.get("usage").filter(|u| u.is_object())?;
    self::usage(&|k| usage.get(k).and_then(Value::as_f64))
}

/// `s` as a JSON string.
fn quoted(s: &str) -> String {
    // A `str` always serializes.
    serde_json::to_string(s).unwrap_or_default()
}

/// The JSON body of a `/chat/completions` request.
pub fn chat_body(model: &str, temperature: Option<f64>, request: &LlmRequest) -> String {
    let mut body = format!("{{\"model\":{},\"messages\":[", quoted(model));
    for (i, m) in request.messages.iter().enumerate() {
        let comma = if i == 0 { "" } else { "," };
        let _ = write!(body, "{comma}{{\"role\":{},\"content\":{}}}", quoted(&m.role), quoted(&m.content));
    }
    body.push(']');
    if let Some(n) = request.max_tokens {
        let _ = write!(body, ",\"max_tokens\":{n}");
    }
    if let Some(t) = temperature {
        let _ = write!(body, ",\"temperature\":{t}");
    }
    if request.json {
        body.push_str(r#","response_format":{"type":"json_object"}"#);
    }
    body.push('}');
    body
}

/// What an HTTP endpoint answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpAnswer<'a> {
    pub status: u16,
    pub body: &'a str,
    /// The `Retry-After` header, when there is one.
    pub retry_after: Option<&'a str>,
}

impl HttpAnswer<'_> {
    fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    fn snippet(&self) -> String {
        self.body.chars().take(SNIPPET_CHARS).collect()
    }
}

/// A `/chat/completions` answer: `choices[0].message.content` (`null` is
/// an empty answer) and `usage`, or the failure, classified.
pub fn chat_answer(answer: HttpAnswer<'_>) -> std::result::Result<LlmResponse, LlmFailure> {
    if !answer.ok() {
        let error = Error::new(
            ErrorCode::Llm,
            format!("HTTP {} from the LLM endpoint: {}", answer.status as u32, answer.snippet()),
        );
        return Err(LlmFailure {
            error,
            retryable: retryable_status(answer.status),
            retry_after_ms: answer.retry_after.and_then(retry_after_ms),
        });
    }
    let json: Value = serde_json::from_str(answer.body).map_err(|_| {
        // A proxy's page cut short: the next answer may be whole.
        LlmFailure::retryable(Error::new(ErrorCode::Llm, "the LLM endpoint answered with invalid JSON"))
    })?;
    let content = json.get("choices").and_then(|c| c.get(0)).and_then(|c| c.get("message"));
    let content = content.and_then(|m| m.get("content"));
    let content = match content {
        Some(Value::Null) => Some(String::new()),
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    match content {
        Some(content) => Ok(LlmResponse { content, usage: usage_of(&json) }),
        None => Err(LlmFailure::fatal(Error::new(
            ErrorCode::Llm,
            "the LLM endpoint's answer has no choices[0].message.content",
        ))),
    }
}

/// The JSON body of an `/embeddings` request.
pub fn embeddings_body(model: &str, texts: &[String]) -> String {
    let input: Vec<String> = texts.iter().map(|t| quoted(t)).collect();
    format!("{{\"model\":{},\"input\":[{}]}}", quoted(model), input.join(","))
}

fn embedder_error(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::Embedder, message)
}

/// An `/embeddings` answer: one vector per input, in the order of each
/// item's `index` (the array's order when there is none).
pub fn embeddings_answer(answer: HttpAnswer<'_>) -> Result<Vec<Vec<f32>>> {
    if !answer.ok() {
        return Err(embedder_error(format!(
            "HTTP {} from the embeddings endpoint: {}",
            answer.status as u32,
            answer.snippet()
        )));
    }
    let json: Value = serde_json::from_str(answer.body)
        .map_err(|_| embedder_error("the embeddings endpoint answered with invalid JSON"))?;
    let data = json
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| embedder_error("the embeddings response has no `data` array"))?;
    let bad = || embedder_error("each vector must be a Float32Array or an array of numbers");
    let mut items: Vec<(f64, Vec<f32>)> = Vec::with_capacity(data.len());
    for (i, item) in data.iter().enumerate() {
        let index = item.get("index").and_then(Value::as_f64).unwrap_or(i as f64);
        let numbers = item.get("embedding").and_then(Value::as_array).ok_or_else(bad)?;
        let mut vector = Vec::with_capacity(numbers.len());
        for n in numbers {
            vector.push(n.as_f64().ok_or_else(bad)? as f32);
        }
        items.push((index, vector));
    }
    crate::order::sort_by(&mut items, |a, b| a.0.total_cmp(&b.0));
    Ok(items.into_iter().map(|(_, v)| v).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::LlmMessage;

    fn http<'a>(status: u16, body: &'a str, retry_after: Option<&'a str>) -> HttpAnswer<'a> {
        HttpAnswer { status, body, retry_after }
    }

    fn failure(status: u16) -> LlmFailure {
        chat_answer(http(status, "{}", None)).unwrap_err()
    }

    #[test]
    fn a_408_is_retried_whether_an_endpoint_answers_it_or_a_hook_throws_it() {
        for status in [408, 429, 500, 503] {
            assert!(failure(status).retryable, "HTTP {status}");
            assert!(thrown(Some(status), None, "x").retryable, "thrown {status}");
        }
        for status in [400, 401, 404, 422] {
            assert!(!failure(status).retryable, "HTTP {status}");
            assert!(!thrown(Some(status), None, "x").retryable, "thrown {status}");
        }
        assert!(thrown(None, None, "network down").retryable);
        assert!(unreachable("reset").retryable);
        assert_eq!(thrown(Some(408), None, "timed out").error.message, "the LLM hook failed: timed out");
        assert_eq!(thrown(Some(429), Some(5_000), "busy").retry_after_ms, Some(5_000));
        assert_eq!(thrown(Some(503), Some(600_000), "down").retry_after_ms, Some(MAX_RETRY_AFTER_MS));
    }

    #[test]
    fn temperature_is_zero_to_two() {
        assert_eq!(temperature(None).unwrap(), None);
        assert_eq!(temperature(Some(2.0)).unwrap(), Some(2.0));
        for t in [-0.1, 2.5, f64::NAN] {
            assert_eq!(temperature(Some(t)).unwrap_err().code, ErrorCode::InvalidInput);
        }
    }

    #[test]
    fn retry_after_is_whole_seconds_capped_at_a_minute() {
        let wait = |h: &str| chat_answer(http(429, "", Some(h))).unwrap_err().retry_after_ms;
        assert_eq!(wait(" 2 "), Some(2_000));
        assert_eq!(wait("0"), Some(0));
        assert_eq!(wait("3600"), Some(MAX_RETRY_AFTER_MS));
        assert_eq!(wait("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(wait("-1"), None);
        assert_eq!(failure(503).retry_after_ms, None);
    }

    #[test]
    fn the_chat_body_is_openais() {
        let request = LlmRequest {
            messages: vec![LlmMessage { role: "user".into(), content: "hi \"there\"".into() }],
            json: true,
            max_tokens: Some(1024),
        };
        assert_eq!(
            chat_body("m-1", Some(0.5), &request),
            r#"{"model":"m-1","messages":[{"role":"user","content":"hi \"there\""}],"max_tokens":1024,"temperature":0.5,"response_format":{"type":"json_object"}}"#
        );
        let plain = LlmRequest { json: false, max_tokens: None, ..request };
        assert_eq!(
            chat_body("m-1", None, &plain),
            r#"{"model":"m-1","messages":[{"role":"user","content":"hi \"there\""}]}"#
        );
    }

    #[test]
    fn a_chat_answer_gives_its_content_and_usage() {
        let body = r#"{"choices":[{"message":{"content":"ok"}}],"usage":{"prompt_tokens":12,"completion_tokens":3}}"#;
        let answer = chat_answer(http(200, body, None)).unwrap();
        assert_eq!(answer.content, "ok");
        assert_eq!(answer.usage, Some(Usage { calls: 1, input_tokens: 12, output_tokens: 3 }));
        let null = chat_answer(http(200, r#"{"choices":[{"message":{"content":null}}]}"#, None)).unwrap();
        assert_eq!((null.content.as_str(), null.usage), ("", None));
        let garbage = chat_answer(http(200, "<html>", None)).unwrap_err();
        assert!(garbage.retryable);
        let empty = chat_answer(http(200, r#"{"choices":[]}"#, None)).unwrap_err();
        assert!(!empty.retryable);
        let long = "x".repeat(1000);
        let e = chat_answer(http(500, &long, None)).unwrap_err();
        assert_eq!(e.error.message.len(), "HTTP 500 from the LLM endpoint: ".len() + SNIPPET_CHARS);
    }

    #[test]
    fn usage_takes_openais_names_or_camel_case_and_no_negative_counts() {
        let from = |pairs: &[(&str, f64)]| {
            let pairs = pairs.to_vec();
            usage(&move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| *v))
        };
        assert_eq!(
            from(&[("inputTokens", 5.0)]),
            Some(Usage { calls: 1, input_tokens: 5, output_tokens: 0 })
        );
        assert_eq!(from(&[("prompt_tokens", -1.0)]), None);
        assert_eq!(from(&[("completion_tokens", 4.0)]), None);
    }

    #[test]
    fn embeddings_follow_each_items_index() {
        let texts = vec!["a".to_string(), "b".to_string()];
        assert_eq!(embeddings_body("e-1", &texts), r#"{"model":"e-1","input":["a","b"]}"#);
        let body = r#"{"data":[{"index":1,"embedding":[0.5,1]},{"index":0,"embedding":[2,0]}]}"#;
        assert_eq!(embeddings_answer(http(200, body, None)).unwrap(), vec![vec![2.0, 0.0], vec![0.5, 1.0]]);
        let bad =
            [(200, r#"{"data":{}}"#), (200, "nope"), (200, r#"{"data":[{"embedding":["x"]}]}"#), (429, "")];
        for (status, body) in bad {
            let e = embeddings_answer(http(status, body, None)).unwrap_err();
            assert_eq!(e.code, ErrorCode::Embedder, "{body}");
        }
    }
}
