import pytest

from rag.llms import GRAMMAR_LIMITS, FunctionCallError, LLMError, OpenAICompatibleLLM
from tests.support.scripted_openai import ScriptedError, chat_response, chat_stream, tool_call_response

pytestmark = pytest.mark.unit

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
MESSAGES = [{"role": "user", "content": "pick a number"}]


def llm(server, **params):
    return OpenAICompatibleLLM(base_url=server.base_url, model="scripted-model", **params)


def test_generate_sends_the_messages_and_settings(scripted_openai):
    scripted_openai.enqueue("/v1/chat/completions", chat_response("forty-two"))
    assert llm(scripted_openai, temperature=0.5, max_tokens=7).generate(MESSAGES) == "forty-two"
    body = scripted_openai.requests_to("/v1/chat/completions")[0].body
    assert body["messages"] == MESSAGES and body["temperature"] == 0.5 and body["max_tokens"] == 7


def test_stream_yields_each_delta_in_order(scripted_openai):
    scripted_openai.enqueue("/v1/chat/completions", chat_stream(["Hel", "lo", " world"]))
    assert list(llm(scripted_openai).stream(MESSAGES)) == ["Hel", "lo", " world"]
    assert scripted_openai.requests_to("/v1/chat/completions")[0].body["stream"] is True


def test_function_calls_use_tools_when_the_server_supports_them(scripted_openai):
    scripted_openai.enqueue("/v1/chat/completions", tool_call_response("answer", {"n": 3}))
    assert llm(scripted_openai).call_function(MESSAGES, SCHEMA) == {"n": 3}
    body = scripted_openai.requests_to("/v1/chat/completions")[0].body
    assert body["tools"][0]["function"]["parameters"] == SCHEMA
    assert body["tool_choice"] == {"type": "function", "function": {"name": "answer"}}


def test_grammar_limits_are_not_sent_to_a_hosted_model_nor_checked(scripted_openai):
    limited = {"type": "object", "required": ["reason"],
               "properties": {"reason": {"type": "string", GRAMMAR_LIMITS: {"maxLength": 10}}}}
    scripted_openai.enqueue("/v1/chat/completions", tool_call_response("answer", {"reason": "a reason well over ten"}))
    assert llm(scripted_openai).call_function(MESSAGES, limited) == {"reason": "a reason well over ten"}
    sent = scripted_openai.requests_to("/v1/chat/completions")[0].body["tools"][0]["function"]["parameters"]
    assert sent == {"type": "object", "required": ["reason"], "properties": {"reason": {"type": "string"}}}


def test_a_server_that_refuses_tools_gets_a_json_only_prompt_from_then_on(scripted_openai):
    scripted_openai.enqueue("/v1/chat/completions", ScriptedError(400, {"error": {"message": "tools not supported"}}))
    scripted_openai.enqueue("/v1/chat/completions", chat_response('{"n": 5}'))
    scripted_openai.enqueue("/v1/chat/completions", chat_response('```json\n{"n": 6}\n```'))
    model = llm(scripted_openai)
    assert model.call_function(MESSAGES, SCHEMA) == {"n": 5}
    assert model.call_function(MESSAGES, SCHEMA) == {"n": 6}
    requests = scripted_openai.requests_to("/v1/chat/completions")
    assert "tools" in requests[0].body and "tools" not in requests[1].body and "tools" not in requests[2].body
    assert requests[1].body["messages"][0]["role"] == "system"
    assert '"required": ["n"]' in requests[1].body["messages"][0]["content"]


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ('{"n": ', "not valid JSON"),
        ('[1, 2]', "not an object"),
        ({"n": "three"}, "n: 'three' is not of type 'integer'"),
        ({}, "'n' is a required property"),
        ("", "empty"),
    ],
)
def test_malformed_arguments_are_refused_with_the_reason(scripted_openai, arguments, problem):
    scripted_openai.enqueue("/v1/chat/completions", tool_call_response("answer", arguments))
    with pytest.raises(FunctionCallError, match=problem):
        llm(scripted_openai).call_function(MESSAGES, SCHEMA)


def test_retries_feed_the_problems_back_until_the_answer_is_usable(scripted_openai):
    scripted_openai.enqueue("/v1/chat/completions", tool_call_response("answer", '{"n": oops'))
    scripted_openai.enqueue("/v1/chat/completions", tool_call_response("answer", {"n": 99}))
    scripted_openai.enqueue("/v1/chat/completions", tool_call_response("answer", {"n": 4}))
    result, attempts = llm(scripted_openai).call_function_with_retries(
        MESSAGES, SCHEMA, check=lambda answer: [] if answer["n"] < 10 else ["n must be below 10"], max_trials=3)
    assert result == {"n": 4}
    assert [bool(attempt.problems) for attempt in attempts] == [True, True, False]
    third = scripted_openai.requests_to("/v1/chat/completions")[2].body["messages"]
    assert "n must be below 10" in third[-1]["content"]


def test_server_errors_are_readable_and_never_carry_the_key(scripted_openai):
    from rag.credentials import OpenAIAPIKey

    key = "sk-live-very-secret-1234"
    scripted_openai.enqueue("/v1/chat/completions", ScriptedError(401, {"error": {"message": f"bad key {key}"}}))
    model = llm(scripted_openai, credential="mine")
    model.set_credential_resolver({"mine": OpenAIAPIKey(api_key=key, base_url=scripted_openai.base_url)}.__getitem__)
    with pytest.raises(LLMError) as failure:
        model.generate(MESSAGES)
    assert "answered HTTP 401" in str(failure.value) and key not in str(failure.value)
    assert scripted_openai.requests_to("/v1/chat/completions")[0].headers["authorization"] == f"Bearer {key}"
