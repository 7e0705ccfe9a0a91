"""The engine from Python: ingest, search and ask over the demo handbook and
a folder of your own files, with the extractive generator and an
OpenAI-compatible server on loopback."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import pytest

import groundcite
from fake_openai import FakeOpenAI

QUESTION = "How long does reimbursement take?"


def test_search_hits_are_passages(demo_index: groundcite.Index) -> None:
    hits = demo_index.search(QUESTION, k=3)
    assert 1 <= len(hits) <= 3
    assert all(0.0 <= h.score <= 1.0 for h in hits)
    assert hits[0].score == max(h.score for h in hits)
    assert any("30 days" in h.text for h in hits)
    assert all(h.source_url.startswith("https://") for h in hits)
    # Hits go to check() and render_prompt() as they are.
    prompt = groundcite.render_prompt(QUESTION, hits)
    assert [p.id for p in prompt.passages] == [h.id for h in hits]
    n = next(i for i, h in enumerate(hits, 1) if "30 days" in h.text)
    report = groundcite.check(hits, f"Reimbursements settle within 30 days of approval [{n}].", question=QUESTION)
    assert report.grounded, report.to_dict()
    assert report.sources[0].url == hits[n - 1].source_url
    assert hits[0].to_dict()["id"] == hits[0].id


def test_ask_with_the_extractive_generator(demo_index: groundcite.Index) -> None:
    answer = demo_index.ask(QUESTION)
    assert not answer.refused
    assert "30 days" in answer.answer
    # Stated in the sources; relevance is not judged without a model, so
    # the answer is not certified as grounded.
    assert answer.supported and answer.status == "ok"
    relevance = answer.answers_question
    assert not answer.grounded and relevance is not None and relevance["verdict"] == "unchecked"
    assert answer.generator == "extractive"
    assert answer.retrieval == "lexical"
    assert answer.sources and answer.sources[0].url.startswith("https://")
    whole = answer.to_dict()
    assert whole["answer"] == answer.answer and whole["question"] == QUESTION
    assert whole["passages"] == answer.passages
    assert str(answer) == answer.answer


def test_an_off_topic_question_is_refused_with_help(demo_index: groundcite.Index) -> None:
    answer = demo_index.ask("What is the Wi-Fi password in the San Francisco office?")
    assert answer.refused
    assert answer.refusal is not None and answer.refusal["reason"]
    assert answer.sources == []


def test_ask_through_an_openai_compatible_server(demo_index: groundcite.Index, fake_openai: FakeOpenAI) -> None:
    generator = groundcite.openai_compatible(fake_openai.base_url, "fake", api_key_required=False)
    answer = demo_index.ask(QUESTION, generator=generator)
    assert answer.generator != "extractive"
    assert not answer.refused, answer.to_dict()
    assert answer.status == "ok" and answer.cited
    assert fake_openai.requests, "the server was called"
    # The contract went out: rules, numbered passages, the question.
    messages = fake_openai.requests[0]["messages"]
    assert "Not covered by the provided documents." in messages[0]["content"]
    assert messages[-1]["content"].endswith(QUESTION)


def test_an_id_never_sent_regenerates_once_then_refuses(demo_index: groundcite.Index) -> None:
    with FakeOpenAI(bad_id=True) as server:
        generator = groundcite.openai_compatible(server.base_url, "fake", api_key_required=False, structured="off")
        answer = demo_index.ask(QUESTION, generator=generator)
        assert len(server.requests) == 2  # the answer, then one regeneration
    assert answer.regenerated
    assert answer.refused or answer.bad_ids == []
    assert answer.status != "unverified" or answer.refused


def test_the_gil_is_released_while_asking(demo_index: groundcite.Index, fake_openai: FakeOpenAI) -> None:
    # The fake server answers from a Python thread of this process: if ask()
    # held the GIL while waiting for it, the server could not answer and the
    # call would time out. Several asks at once also share one index.
    generator = groundcite.openai_compatible(fake_openai.base_url, "fake", api_key_required=False, timeout_secs=20)
    results: list[groundcite.Answer] = []
    errors: list[BaseException] = []

    def one() -> None:
        try:
            results.append(demo_index.ask(QUESTION, generator=generator))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len({r.answer for r in results}) == 1


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_ingest_a_folder_incrementally(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "leave.md", "# Annual leave\n\nStaff get 25 days of annual leave a year.\n")
    write(docs, "travel.md", "# Travel\n\nBook trains through the travel desk.\n")
    write(docs, "notes.bin", "\x00\x01")
    index = groundcite.Index(tmp_path / "index")
    template, prefix = "https://intranet.example/{path}/", f"{docs}/"
    first = index.ingest([docs], url_template=template, strip_prefix=prefix)
    assert (first.files_seen, first.indexed, first.skipped, first.errors) == (3, 2, 1, [])
    assert len(index) == first.chunks_in_index > 0
    (hit, *_) = index.search("annual leave days")
    assert hit.source_url.startswith("https://intranet.example/leave")
    answer = index.ask("How many days of annual leave do staff get?")
    assert "25 days" in answer.answer and answer.supported

    again = index.ingest([docs], url_template=template, strip_prefix=prefix)
    assert (again.indexed, again.unchanged) == (0, 2)
    # Other URL options change every file's chunks: all are re-indexed.
    assert index.ingest([docs]).indexed == 2
    assert index.ingest([docs], url_template=template, strip_prefix=prefix).indexed == 2
    write(docs, "leave.md", "# Annual leave\n\nStaff get 27 days of annual leave a year.\n")
    (docs / "travel.md").unlink()
    third = index.ingest([docs], url_template=template, strip_prefix=prefix)
    assert (third.indexed, third.removed) == (1, 1)
    answer = index.ask("How many days of annual leave do staff get?")
    assert "27 days" in answer.answer  # the engine saw the new run


def test_config_reaches_the_engine(tmp_path: Path) -> None:
    index = groundcite.Index(tmp_path / "index", config={"top_k": 2})
    index.ingest_demo()
    answer = index.ask(QUESTION)
    assert len(answer.passages) <= 2
    answer = index.ask(QUESTION, top_k=1)
    assert len(answer.passages) == 1


def test_ask_stream_shows_sentences_then_the_answer(demo_index: groundcite.Index, fake_openai: FakeOpenAI) -> None:
    generator = groundcite.openai_compatible(fake_openai.base_url, "fake", api_key_required=False, structured="off")
    events = list(demo_index.ask_stream(QUESTION, generator=generator))
    final = events[-1]
    assert isinstance(final, groundcite.Answer)
    assert not final.refused and final.status == "ok"
    shown = [e for e in events[:-1] if isinstance(e, groundcite.StreamedSentence)]
    assert shown and len(shown) == len(events) - 1  # no retraction
    for s in shown:
        assert final.answer.encode()[s.start : s.end].decode() == s.text
        assert all(1 <= c <= len(final.passages) for c in s.citations)
    assert fake_openai.requests[0]["stream"] is True
    assert shown[0].to_dict()["text"] == shown[0].text


def test_ask_stream_withdraws_what_it_showed(demo_index: groundcite.Index) -> None:
    # The first reply has a good sentence, then one citing an id never
    # sent: the first is shown, the answer is regenerated, and what was
    # shown is withdrawn before the final answer.
    with FakeOpenAI(trailing_bad_id=True) as server:
        generator = groundcite.openai_compatible(server.base_url, "fake", api_key_required=False, structured="off")
        events = list(demo_index.ask_stream(QUESTION, generator=generator))
        assert len(server.requests) == 2
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "StreamedSentence"
    (retraction,) = [e for e in events if isinstance(e, groundcite.Retraction)]
    assert retraction.count == kinds.index("Retraction") and retraction.reason == "regenerated"
    final = events[-1]
    assert isinstance(final, groundcite.Answer) and final.regenerated and final.bad_ids == []


def test_ask_stream_with_the_extractive_generator(demo_index: groundcite.Index) -> None:
    events = list(demo_index.ask_stream(QUESTION))
    final = events[-1]
    assert isinstance(final, groundcite.Answer) and "30 days" in final.answer
    assert any(isinstance(e, groundcite.StreamedSentence) for e in events)


def test_ask_stream_raises_what_goes_wrong(demo_index: groundcite.Index) -> None:
    generator = groundcite.openai_compatible("http://127.0.0.1:9/v1", "none", api_key_required=False, max_retries=0)
    stream = demo_index.ask_stream(QUESTION, generator=generator)
    with pytest.raises(groundcite.GeneratorError) as e:
        list(stream)
    assert e.value.code == "llm_connect"
    assert list(stream) == []  # finished
    with pytest.raises(groundcite.BadRequestError):
        demo_index.ask_stream(" ")


def test_ctrl_c_interrupts_a_slow_answer(demo_index: groundcite.Index) -> None:
    # The model server holds the request; a SIGINT arrives meanwhile: ask()
    # raises KeyboardInterrupt at once instead of waiting for the model.
    with FakeOpenAI(hold=True) as server:
        generator = groundcite.openai_compatible(server.base_url, "fake", api_key_required=False, structured="off")

        def interrupt() -> None:
            while not server.requests:  # the request is waiting at the server
                threading.Event().wait(0.01)
            signal.raise_signal(signal.SIGINT)

        threading.Thread(target=interrupt, daemon=True).start()
        try:
            with pytest.raises(KeyboardInterrupt):
                demo_index.ask(QUESTION, generator=generator)
            assert server.hold is not None and not server.hold.is_set(), "interrupted before any answer"
            server.requests.clear()
            threading.Thread(target=interrupt, daemon=True).start()
            stream: groundcite.AskStream | None = None
            with pytest.raises(KeyboardInterrupt):
                # The task sends the request as soon as the stream exists:
                # the signal may come before next() is reached.
                stream = demo_index.ask_stream(QUESTION, generator=generator)
                next(stream)
            if stream is not None:
                assert list(stream) == []  # the interrupted answer is abandoned
        finally:
            assert server.hold is not None
            server.hold.set()


def test_ingest_reports_its_progress(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    for i in range(3):
        write(docs, f"page-{i}.md", f"# Page {i}\n\nPage {i} says {i} things.\n")
    events: list[dict[str, object]] = []
    index = groundcite.Index(tmp_path / "index")
    index.ingest([docs], progress=events.append)
    stages = [e["stage"] for e in events]
    assert stages[0] == "started" and events[0]["total_files"] == 3
    files = [e for e in events if e["stage"] == "file"]
    assert [e["done"] for e in files] == [1, 2, 3] and all(e["total"] == 3 for e in files)
    assert {str(e["path"]).rsplit("/", 1)[-1] for e in files} == {"page-0.md", "page-1.md", "page-2.md"}
    assert stages[-1] == "committing"

    # An exception in the callback stops its calls and is raised after the
    # run, which completes.
    write(docs, "page-3.md", "# Page 3\n\nPage 3 is new.\n")
    calls: list[dict[str, object]] = []

    def failing(event: dict[str, object]) -> None:
        calls.append(event)
        raise RuntimeError("the progress bar broke")

    with pytest.raises(RuntimeError, match="progress bar broke"):
        index.ingest([docs], progress=failing)
    assert len(calls) == 1
    assert index.search("Page 3 is new")[0].id.startswith("page-3.md")
    assert groundcite.Index(tmp_path / "demo").ingest_demo(progress=None).indexed > 0
