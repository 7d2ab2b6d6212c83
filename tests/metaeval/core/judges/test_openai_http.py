"""The OpenAI-compatible judge against a local stub server: answers, retries, errors, the key."""
from __future__ import annotations

import json

import pytest

from metaeval.core.judges.base import Judge, JudgeConfigError, JudgeError
from metaeval.core.judges.openai_http import MAX_RETRY_AFTER, OpenAIJudge

KEY = "sk-test-secret-123"
MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "Text A: GOOD\nText B: BAD"}]


def judge(stub, sleeps=None, **settings):
    waits = [] if sleeps is None else sleeps
    options = {"timeout": 2.0, "retries": 3, "environ": {"JUDGE_KEY": KEY}, "sleep": waits.append, "seed": 1}
    options.update(settings)
    return OpenAIJudge(stub.url, "stub-model", "JUDGE_KEY", **options)


def test_answer_payload_and_bearer_key(stub):
    client = judge(stub, temperature=0.5, max_tokens=3)
    assert isinstance(client, Judge)
    assert client.complete(MESSAGES) == "A"
    request = stub.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    assert request["json"] == {"model": "stub-model", "messages": MESSAGES, "temperature": 0.5, "max_tokens": 3,
                               "seed": 1}
    described = client.describe()
    assert described["api_key_env"] == "JUDGE_KEY" and described["model"] == "stub-model"
    assert KEY not in json.dumps(described) and KEY not in repr(client)


def test_key_from_the_process_environment(stub, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY_ENV_TEST", "from-env")
    OpenAIJudge(stub.url, "m", "JUDGE_KEY_ENV_TEST").complete(MESSAGES)
    assert stub.requests[0]["headers"]["Authorization"] == "Bearer from-env"


def test_missing_key_variable_is_named(stub):
    with pytest.raises(JudgeConfigError, match="environment variable NO_SUCH_VAR is not set"):
        OpenAIJudge(stub.url, "m", "NO_SUCH_VAR", environ={})
    with pytest.raises(JudgeConfigError, match="http"):
        OpenAIJudge("localhost:1", "m")


def test_no_key_no_header(stub):
    OpenAIJudge(stub.url, "m").complete(MESSAGES)
    assert "Authorization" not in stub.requests[0]["headers"]


def test_429_with_retry_after_then_success(stub):
    stub.script.append(("status", 429, {"Retry-After": "7"}, "slow down"))
    sleeps: list[float] = []
    assert judge(stub, sleeps).complete(MESSAGES) == "A"
    assert sleeps == [7.0] and len(stub.requests) == 2


def test_retry_after_http_date_and_cap(stub):
    client = judge(stub)
    assert client.delay(0, 10_000) == MAX_RETRY_AFTER
    stub.script.append(("status", 503, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, ""))
    sleeps: list[float] = []
    assert judge(stub, sleeps).complete(MESSAGES) == "A"
    assert sleeps == [0.0]  # a date in the past: retry at once


def test_500_then_success_with_exponential_jittered_backoff(stub):
    stub.script.extend([("status", 500, {}, "oops"), ("status", 502, {}, ""), ("status", 500, {}, "")])
    sleeps: list[float] = []
    assert judge(stub, sleeps, backoff=1.0).complete(MESSAGES) == "A"
    assert len(sleeps) == 3
    for attempt, wait in enumerate(sleeps):
        assert 0.5 * 2 ** attempt <= wait < 2 ** attempt
    again: list[float] = []
    stub.script.extend([("status", 500, {}, "")] * 3)
    judge(stub, again, backoff=1.0).complete(MESSAGES)
    assert again == sleeps  # seeded jitter


def test_timeout_then_success(stub):
    stub.script.append(("sleep", 0.6))
    sleeps: list[float] = []
    assert judge(stub, sleeps, timeout=0.2).complete(MESSAGES) == "A"
    assert len(sleeps) == 1 and len(stub.requests) == 2


def test_connection_error_is_retried():
    sleeps: list[float] = []
    client = OpenAIJudge("http://127.0.0.1:9/v1", "m", retries=2, timeout=0.5, sleep=sleeps.append)
    with pytest.raises(JudgeError, match="3 attempts failed; last: connection error"):
        client.complete(MESSAGES)
    assert len(sleeps) == 2


def test_retries_exhausted(stub):
    stub.script.extend([("status", 500, {}, "down")] * 4)
    sleeps: list[float] = []
    with pytest.raises(JudgeError, match="4 attempts failed; last: HTTP 500: down"):
        judge(stub, sleeps).complete(MESSAGES)
    assert len(sleeps) == 3 and len(stub.requests) == 4


@pytest.mark.parametrize(("body", "message"), [
    ("not json", "the reply is not JSON"),
    (json.dumps({"choices": []}), r"no choices\[0\]\.message\.content"),
    (json.dumps({"id": "x"}), r"no choices\[0\]\.message\.content"),
    (json.dumps({"choices": [{"message": {"content": None}}]}), "NoneType, not text"),
])
def test_malformed_replies_are_retried_then_fail(stub, body, message):
    stub.script.extend([("raw", body)] * 2)
    with pytest.raises(JudgeError, match=message):
        judge(stub, retries=1).complete(MESSAGES)
    assert len(stub.requests) == 2
    stub.script.append(("raw", body))
    assert judge(stub, retries=1).complete(MESSAGES) == "A"  # one malformed reply, then a good one


@pytest.mark.parametrize("code", [400, 401, 403, 404])
def test_other_4xx_is_not_retried(stub, code):
    stub.script.append(("status", code, {}, '{"error": "invalid api key"}'))
    sleeps: list[float] = []
    with pytest.raises(JudgeError, match=f"HTTP {code} \\(not retried\\)"):
        judge(stub, sleeps).complete(MESSAGES)
    assert sleeps == [] and len(stub.requests) == 1


@pytest.mark.parametrize("code", [301, 302, 307, 308])
def test_a_redirect_is_never_followed(stub, code):
    """A redirect could point the request (and its key) elsewhere: it ends the call, not retried, not followed."""
    stub.script.append(("status", code, {"Location": "http://169.254.169.254/latest/meta-data/"}, ""))
    sleeps: list[float] = []
    with pytest.raises(JudgeError, match=f"HTTP {code}: redirects are not followed"):
        judge(stub, sleeps).complete(MESSAGES)
    assert sleeps == [] and len(stub.requests) == 1


def test_restricted_to_public_addresses_the_stub_on_loopback_is_never_contacted(stub):
    client = judge(stub, allow_private=False)
    with pytest.raises(JudgeError, match="127.0.0.1 is at 127.0.0.1, a loopback, private"):
        client.complete(MESSAGES)
    assert not stub.requests and client.describe()["allow_private"] is False
    assert judge(stub).complete(MESSAGES) == "A"  # the command line's default reaches it
