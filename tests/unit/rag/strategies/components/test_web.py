import socket

import pytest

from rag.components import load_components
from rag.core import CredentialError, validate_tree
from rag.credentials import WebSearchAPIKey
from rag.strategies.components import SearxngWebRetriever, WebSearchAPIRetriever, WebSearchError, url_chunk_id

from .support import RecordingHTTPServer

pytestmark = pytest.mark.unit

KEY = "sk-live-SECRET-0123456789abcdef"
QUESTION = "eiffel tower height"


@pytest.fixture
def server():
    with RecordingHTTPServer() as running:
        yield running


def with_key(retriever, *, provider="brave", base_url=None):
    credentials = {"search": WebSearchAPIKey(api_key=KEY, provider=provider, base_url=base_url)}
    retriever.set_credential_resolver(lambda name: credentials[name])
    return retriever


def api_retriever(provider, server, **params):
    """A retriever whose key is bound to the recording server (a key goes nowhere else)."""
    return with_key(WebSearchAPIRetriever(provider=provider, credential="search", base_url=server.base_url, **params),
                    provider=provider, base_url=server.base_url)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_chunk_ids_are_stable_distinct_negative_63_bit_hashes_of_the_url():
    first, second = url_chunk_id("https://a.example/x"), url_chunk_id("https://a.example/y")
    assert first == url_chunk_id("https://a.example/x") and first != second
    assert all(-(2**63) <= value < 0 for value in (first, second))


class TestSearxng:
    RESULTS = {"results": [
        {"url": "https://en.wikipedia.org/wiki/Eiffel_Tower", "title": "Eiffel Tower", "content": "330 m tall."},
        {"url": "https://en.wikipedia.org/wiki/Eiffel_Tower", "title": "Duplicate", "content": "skipped"},
        {"title": "No URL", "content": "skipped"},
        {"url": "https://www.toureiffel.paris/en", "title": "Official site", "content": "Tickets &amp; <b>hours</b>"},
        {"url": "https://example.org/3", "title": "Third", "content": "c"},
        {"url": "https://example.org/4", "title": "Fourth", "content": "d"},
    ]}

    def test_sends_the_json_api_query_and_turns_results_into_web_chunks(self, server):
        server.reply(self.RESULTS)
        retriever = SearxngWebRetriever(base_url=server.base_url + "/", language="fr", categories="general,science")

        outcome = retriever.search(QUESTION)

        [request] = server.requests
        assert (request.method, request.path) == ("GET", "/search")
        assert request.query == {"q": [QUESTION], "format": ["json"], "language": ["fr"],
                                 "categories": ["general,science"]}
        chunks = [hit.chunk for hit in outcome.hits]
        assert [chunk.metadata["url"] for chunk in chunks] == [
            "https://en.wikipedia.org/wiki/Eiffel_Tower", "https://www.toureiffel.paris/en",
            "https://example.org/3", "https://example.org/4"]
        assert chunks[0].id == url_chunk_id("https://en.wikipedia.org/wiki/Eiffel_Tower")
        assert (chunks[0].document_id, chunks[0].position) == (-1, 0)
        assert chunks[0].text == "Eiffel Tower\n330 m tall."
        assert chunks[1].text == "Official site\nTickets & hours"
        assert chunks[0].metadata == {"url": "https://en.wikipedia.org/wiki/Eiffel_Tower", "title": "Eiffel Tower",
                                      "source": "web", "provider": "searxng"}
        assert [hit.score for hit in outcome.hits] == [1.0, 0.75, 0.5, 0.25]
        assert outcome.details == {"provider": "searxng", "endpoint": f"{server.base_url}/search", "results": 6,
                                   "kept": 4}

    def test_top_k_of_the_call_overrides_the_parameter(self, server):
        server.reply(self.RESULTS)
        outcome = SearxngWebRetriever(base_url=server.base_url, top_k=5).search(QUESTION, top_k=2)
        assert [hit.score for hit in outcome.hits] == [1.0, 0.5]
        with pytest.raises(ValueError, match="top_k must be ≥ 1"):
            SearxngWebRetriever(base_url=server.base_url).search(QUESTION, top_k=0)

    def test_a_refused_json_format_says_how_to_enable_it(self, server):
        server.reply("Forbidden", status=403)
        with pytest.raises(WebSearchError, match=r"SearXNG at .* answered HTTP 403 \(is the json format"):
            SearxngWebRetriever(base_url=server.base_url).search(QUESTION)

    def test_an_answer_that_is_not_json_is_a_readable_error(self, server):
        server.reply("<html>hello</html>")
        with pytest.raises(WebSearchError, match="answered with something that is not JSON"):
            SearxngWebRetriever(base_url=server.base_url).search(QUESTION)

    def test_no_results_is_an_empty_outcome(self, server):
        server.reply({"results": []})
        assert SearxngWebRetriever(base_url=server.base_url).search(QUESTION).hits == []


class TestSearchAPIs:
    def test_brave_sends_the_key_as_subscription_token_and_reads_web_results(self, server):
        server.reply({"web": {"results": [
            {"url": "https://b.example/1", "title": "<strong>Eiffel</strong> Tower",
             "description": "It is <strong>330</strong> m."},
            {"url": "https://b.example/2", "title": "Second", "description": "two"},
        ]}})

        outcome = api_retriever("brave", server, top_k=3).search(QUESTION)

        [request] = server.requests
        assert (request.method, request.path) == ("GET", "/res/v1/web/search")
        assert request.query == {"q": [QUESTION], "count": ["3"]}
        assert request.headers["x-subscription-token"] == KEY
        assert [hit.chunk.text for hit in outcome.hits] == ["Eiffel Tower\nIt is 330 m.", "Second\ntwo"]
        assert outcome.hits[0].chunk.metadata["provider"] == "brave"
        assert [hit.score for hit in outcome.hits] == [1.0, 0.5]

    def test_tavily_posts_the_query_with_a_bearer_key(self, server):
        server.reply({"results": [{"url": "https://t.example/1", "title": "T", "content": "tavily content"}]})

        outcome = api_retriever("tavily", server, top_k=4).search(QUESTION)

        [request] = server.requests
        assert (request.method, request.path) == ("POST", "/search")
        assert request.body == {"query": QUESTION, "max_results": 4}
        assert request.headers["authorization"] == f"Bearer {KEY}"
        assert [(hit.chunk.text, hit.chunk.metadata["provider"]) for hit in outcome.hits] == [
            ("T\ntavily content", "tavily")]

    def test_serper_posts_the_query_with_an_api_key_header_and_reads_organic_results(self, server):
        server.reply({"organic": [{"link": "https://s.example/1", "title": "S", "snippet": "serper snippet"}]})

        outcome = api_retriever("serper", server).search(QUESTION)

        [request] = server.requests
        assert (request.method, request.path) == ("POST", "/search")
        assert request.body == {"q": QUESTION, "num": 5}
        assert request.headers["x-api-key"] == KEY
        assert [(hit.chunk.metadata["url"], hit.chunk.text) for hit in outcome.hits] == [
            ("https://s.example/1", "S\nserper snippet")]

    def test_the_credentials_base_url_is_used_when_the_retriever_has_none(self, server):
        server.reply({"organic": []})
        retriever = with_key(WebSearchAPIRetriever(provider="serper", credential="search"), provider="serper",
                             base_url=server.base_url)
        assert retriever.search(QUESTION).details["endpoint"] == f"{server.base_url}/search"
        assert len(server.requests) == 1

    def test_an_http_error_is_readable_and_never_shows_the_key(self, server):
        server.reply({"message": f"invalid token {KEY}"}, status=401)
        with pytest.raises(WebSearchError) as caught:
            api_retriever("brave", server).search(QUESTION)
        message = str(caught.value)
        assert message.startswith("Brave Search at http://127.0.0.1:")
        # The server's own words stay in the log: a server a pipeline names could echo anything.
        assert message.endswith("answered HTTP 401") and "invalid token" not in message
        assert KEY not in message and caught.value.__cause__ is None

    def test_a_timeout_is_readable(self, server):
        server.reply({"results": []}, delay=1.0)
        with pytest.raises(WebSearchError, match=r"^Tavily at .* did not answer within 0.2 s$"):
            api_retriever("tavily", server, timeout=0.2).search(QUESTION)

    def test_an_unreachable_server_is_readable_and_never_shows_the_key(self):
        address = f"http://127.0.0.1:{free_port()}"
        retriever = with_key(WebSearchAPIRetriever(provider="serper", credential="search", base_url=address),
                             provider="serper", base_url=address)
        with pytest.raises(WebSearchError) as caught:
            retriever.search(QUESTION)
        # The network error's details go to the log only.
        assert str(caught.value) == f"could not reach Serper at {address}"
        assert caught.value.__cause__ is None

    def test_a_key_is_never_sent_to_a_server_it_is_not_bound_to(self, server):
        # The key belongs to Brave's own endpoint; the retriever points elsewhere.
        retriever = with_key(WebSearchAPIRetriever(provider="brave", credential="search", base_url=server.base_url),
                             provider="brave")
        with pytest.raises(CredentialError, match=r"may be sent only to https://api\.search\.brave\.com:443, not to "
                                                  r"http://127\.0\.0\.1:\d+$"):
            retriever.search(QUESTION)
        assert server.requests == []

    def test_a_credential_for_another_provider_is_refused_before_any_request(self, server):
        retriever = with_key(WebSearchAPIRetriever(provider="brave", credential="search", base_url=server.base_url),
                             provider="tavily")
        with pytest.raises(CredentialError, match="'search' is a tavily key, but this retriever searches with brave"):
            retriever.search(QUESTION)
        assert server.requests == []

    def test_without_a_credential_store_the_error_names_the_credential(self):
        with pytest.raises(CredentialError, match="needs the credential 'search'"):
            WebSearchAPIRetriever(provider="brave", credential="search").search(QUESTION)

    def test_the_credential_is_required_and_marked_as_one(self):
        _, errors = validate_tree({"component": "WebSearchAPIRetriever", "params": {"provider": "brave"}},
                                  registry=load_components())
        assert [str(error) for error in errors] == ["params.credential: is required"]
        assert WebSearchAPIRetriever.get_schema()["properties"]["credential"]["x-credential"] is True
