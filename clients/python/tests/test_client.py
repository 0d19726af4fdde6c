"""The Python client against a real powercontext server (see server.py)."""

from __future__ import annotations

import socket
import unittest
import uuid

from powercontext import (
    APIError,
    Client,
    ConnectionFailedError,
    Eviction,
    ExperienceIncubationOperationResult,
    IncubateResult,
    OperationPendingError,
    OperationRecord,
)

from .server import Server

server: Server


def setUpModule() -> None:
    global server
    server = Server().start()


def tearDownModule() -> None:
    server.stop()


def new_scope() -> str:
    return "py-" + uuid.uuid4().hex[:12]


class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.pc = Client(server.url, token=server.token, operation_deadline=30, poll_interval=0.05)

    def test_capture_is_idempotent_per_source_id_and_keeps_unicode(self) -> None:
        scope = new_scope()
        first = self.pc.capture_source(scope, "用户喜欢简洁的中文回答。", source_id="msg-1",
                                       metadata={"channel": "聊天"})
        self.assertTrue(first.created)
        self.assertEqual(first.journal_position, 1)
        again = self.pc.capture_source(scope, "用户喜欢简洁的中文回答。", source_id="msg-1")
        self.assertFalse(again.created)
        self.assertEqual(again.journal_position, 1)
        second = self.pc.capture_source(scope, "The user works in Shanghai.")
        self.assertEqual(second.journal_position, 2)

        page = self.pc.list_sources(scope, limit=1)
        self.assertEqual([s.content for s in page.items], ["用户喜欢简洁的中文回答。"])
        self.assertEqual(page.items[0].metadata, {"channel": "聊天"})
        self.assertEqual(page.items[0].created_at.tzinfo is not None, True)
        self.assertEqual(page.next_after, 1)
        rest = self.pc.list_sources(scope, after=page.next_after)
        self.assertEqual([s.journal_position for s in rest.items], [2])
        self.assertIsNone(rest.next_after)

    def test_flush_polls_the_operation_then_memory_reads_and_searches(self) -> None:
        scope = new_scope()
        self.pc.capture_source(scope, "The user prefers metric units.")
        self.pc.capture_source(scope, "用户每天早上八点开会。")
        seen: list[OperationRecord] = []
        result = self.pc.flush_memory(scope, on_progress=seen.append)
        self.assertEqual(result.status, "processed")
        self.assertEqual(result.processed_source_count, 2)
        self.assertEqual(result.current_cursor, 2)
        self.assertIsNotNone(result.memory)
        self.assertIsNotNone(result.operation_id)
        # respond-async: the server answered 202 first and the client polled.
        self.assertGreaterEqual(len(seen), 1)
        self.assertEqual(seen[0].operation_id, result.operation_id)
        self.assertIn(seen[0].status, ("queued", "running", "retry_wait"))

        memory = self.pc.get_memory(scope)
        self.assertEqual(memory.revision, result.memory.revision)
        contents = " ".join(e.content for e in memory.entries)
        self.assertIn("metric", contents)
        self.assertIn("八点", contents)
        found = self.pc.search_memory(scope, "八点")
        self.assertEqual(len(found.entries), 1)
        self.assertTrue(all(p >= 1 for p in found.entries[0].source_positions))

        # Nothing new: idle, answered at once.
        idle = self.pc.flush_memory(scope)
        self.assertEqual(idle.status, "idle")
        self.assertEqual(idle.processed_source_count, 0)

        op = self.pc.get_operation(result.operation_id)
        self.assertEqual(op.status, "succeeded")
        self.assertEqual(op.kind, "memory_flush")
        self.assertEqual(op.result.current_cursor, 2)
        self.assertEqual((op.result.embeddings.computed, op.result.embeddings.missing), (2, 0))
        listed = self.pc.list_operations(scope_id=scope, kind="memory_flush")
        self.assertIn(result.operation_id, [o.operation_id for o in listed.items])

    def test_incubate_experience_proposes_pending_candidates_for_review(self) -> None:
        scope = new_scope()
        # Nothing captured: idle, answered at once, no operation.
        self.assertEqual(self.pc.incubate_experience(scope), IncubateResult("idle", 0, 0, 0, 0, 0, None))
        # A Source that is not a task outcome: the window is processed, but it proposes nothing.
        self.pc.capture_source(scope, "The user prefers metric units.")
        plain = self.pc.incubate_experience(scope)
        self.assertEqual((plain.status, plain.previous_cursor, plain.current_cursor, plain.high_watermark),
                         ("processed", 0, 1, 1))
        self.assertEqual((plain.processed_source_count, plain.candidate_count), (1, 0))
        self.assertIsNotNone(plain.operation_id)
        self.assertEqual(self.pc.list_experience_candidates(scope), [])

        # A task outcome (metadata kind "task-outcome") proposes one pending lesson citing it.
        outcome = "Retrying the flaky test twice hid a real race. Always run with -race."
        captured = self.pc.capture_source(scope, outcome, metadata={"kind": "task-outcome"})
        seen: list[OperationRecord] = []
        result = self.pc.incubate_experience(scope, on_progress=seen.append)
        self.assertEqual(result.status, "processed")
        self.assertEqual((result.previous_cursor, result.current_cursor, result.high_watermark), (1, 2, 2))
        self.assertEqual((result.processed_source_count, result.candidate_count), (1, 1))
        self.assertIsNotNone(result.operation_id)
        # respond-async: the server answered 202 first and the client polled.
        self.assertGreaterEqual(len(seen), 1)
        self.assertEqual((seen[0].operation_id, seen[0].kind), (result.operation_id, "experience_incubation"))
        self.assertIn(seen[0].status, ("queued", "running", "retry_wait"))

        op = self.pc.get_operation(result.operation_id)
        self.assertEqual((op.kind, op.status), ("experience_incubation", "succeeded"))
        self.assertIsInstance(op.result, ExperienceIncubationOperationResult)
        self.assertEqual(op.result.candidate_count, 1)
        listed = self.pc.list_operations(scope_id=scope, kind="experience_incubation")
        self.assertEqual({o.operation_id for o in listed.items}, {plain.operation_id, result.operation_id})

        pending = self.pc.list_experience_candidates(scope, status="pending")
        self.assertEqual(len(pending), 1)
        cand = pending[0]
        self.assertEqual((cand.scope_id, cand.operation_id, cand.status), (scope, result.operation_id, "pending"))
        self.assertEqual(cand.cited_positions, [captured.journal_position])
        self.assertIn("race", cand.lesson)
        approved = self.pc.approve_candidate(cand.candidate_id, cand.state_version)
        self.assertEqual((approved.status, approved.state_version), ("approved", cand.state_version + 1))
        with self.assertRaises(APIError) as ctx:
            self.pc.approve_candidate(cand.candidate_id, cand.state_version)  # stale: already approved
        self.assertEqual((ctx.exception.status, ctx.exception.code), (409, "candidate_conflict"))
        self.assertEqual(self.pc.list_experience_candidates(scope, status="pending"), [])
        lessons = [i for i in self.pc.get_context(scope, q="race").items if i.type == "lesson"]
        self.assertEqual([i.candidate_id for i in lessons], [cand.candidate_id])

        # Nothing new since: idle at the cursor, no operation.
        self.assertEqual(self.pc.incubate_experience(scope), IncubateResult("idle", 2, 2, 2, 0, 0, None))

    def test_incubate_deadline_raises_pending_then_wait_operation_finishes(self) -> None:
        scope = new_scope()
        self.pc.capture_source(scope, "Pinning the base image fixed the build.", metadata={"kind": "task-outcome"})
        impatient = Client(server.url, token=server.token, operation_deadline=0)
        with self.assertRaises(OperationPendingError) as ctx:
            impatient.incubate_experience(scope)
        done = self.pc.wait_operation(ctx.exception.operation_id)
        self.assertEqual((done.kind, done.status), ("experience_incubation", "succeeded"))
        self.assertEqual(done.result.candidate_count, 1)
        self.assertEqual(len(self.pc.list_experience_candidates(scope, status="pending")), 1)

    def test_memory_history_diff_and_context(self) -> None:
        scope = new_scope()
        self.pc.capture_source(scope, "Staging uses PostgreSQL 16.")
        self.pc.capture_source(scope, "用户每天早上八点开会。")
        first = self.pc.flush_memory(scope)
        self.pc.capture_source(scope, "Alice owns the billing service.")
        second = self.pc.flush_memory(scope)
        self.assertEqual(second.memory.revision, first.memory.revision + 1)

        page = self.pc.list_memory_revisions(scope, limit=1)
        self.assertEqual([r.revision for r in page.items], [second.memory.revision])
        self.assertEqual((page.items[0].window_after, page.items[0].window_through), (2, 3))
        self.assertEqual(page.items[0].operation_id, second.operation_id)
        self.assertEqual(page.items[0].evicted, Eviction(0, []))
        self.assertIsNotNone(page.next_cursor)
        rest = self.pc.list_memory_revisions(scope, cursor=page.next_cursor)
        self.assertEqual([r.revision for r in rest.items], [first.memory.revision])
        self.assertIsNone(rest.next_cursor)

        old = self.pc.get_memory(scope, revision=first.memory.revision)
        self.assertEqual(old.revision, first.memory.revision)
        self.assertNotIn("Alice", " ".join(e.content for e in old.entries))
        with self.assertRaises(APIError) as ctx:
            self.pc.get_memory(scope, revision=99)
        self.assertEqual((ctx.exception.status, ctx.exception.code), (404, "revision_not_found"))

        # Entry ids: given in order from 1 and kept from revision to revision.
        current = self.pc.get_memory(scope)
        self.assertEqual([e.entry_id for e in current.entries], [1, 2, 3])
        self.assertEqual([(e.entry_id, e.content) for e in old.entries],
                         [(e.entry_id, e.content) for e in current.entries[:2]])
        self.assertEqual(current.evicted, Eviction(0, []))

        diff = self.pc.diff_memory(scope)
        self.assertEqual((diff.from_, diff.to), (first.memory.revision, second.memory.revision))
        self.assertIn("Alice", " ".join(e.content for e in diff.added))
        self.assertEqual([e.entry_id for e in diff.added], [3])
        self.assertEqual(diff.removed, [])
        everything = self.pc.diff_memory(scope, from_=0)
        self.assertEqual(len(everything.added), len(self.pc.get_memory(scope).entries))

        found = self.pc.search_memory(scope, "八点")
        self.assertEqual(len(found.entries), 1)
        self.assertIsNotNone(found.entries[0].score)
        # The server embeds entries with its built-in local embedder: hybrid by default, both scores.
        self.assertEqual((found.mode, found.degraded), ("hybrid", False))
        self.assertIsNotNone(found.entries[0].scores.fts)
        self.assertIsNotNone(found.entries[0].scores.semantic)
        fts = self.pc.search_memory(scope, "PostgreSQL", mode="fts")
        self.assertEqual(fts.mode, "fts")
        self.assertIsNone(fts.entries[0].scores.semantic)
        # A misspelt word: no full-text match; the local vectors (lexical, typo-tolerant) find it.
        self.assertEqual(self.pc.search_memory(scope, "PostgreSLQ", mode="fts").entries, [])
        typo = self.pc.search_memory(scope, "PostgreSLQ", mode="semantic", limit=1)
        self.assertEqual(typo.mode, "semantic")
        self.assertIn("PostgreSQL", typo.entries[0].content)
        with self.assertRaises(APIError) as ctx:
            self.pc.search_memory(scope, "x", mode="vector")
        self.assertEqual((ctx.exception.status, ctx.exception.field), (422, "mode"))

        context = self.pc.get_context(scope, q="八点 开会", max_tokens=500)
        self.assertEqual(context.revision, second.memory.revision)
        self.assertLessEqual(context.used_tokens, 500)
        self.assertEqual(context.used_tokens, sum(i.tokens for i in context.items))
        self.assertEqual(context.items[0].type, "memory")
        self.assertIn("八点", context.items[0].content)
        self.assertEqual(context.items[0].entry_id, found.entries[0].entry_id)
        self.assertEqual((context.mode, context.degraded), ("hybrid", False))
        self.assertIsNotNone(context.items[0].scores)
        semantic = self.pc.get_context(scope, q="PostgreSLQ", mode="semantic")
        self.assertEqual(semantic.mode, "semantic")
        self.assertIn("PostgreSQL", semantic.items[0].content)
        tight = self.pc.get_context(scope, max_tokens=1)
        self.assertEqual(tight.items, [])
        self.assertGreater(tight.omitted, 0)
        with self.assertRaises(APIError) as ctx:
            self.pc.get_context(scope, max_tokens=0)
        self.assertEqual(ctx.exception.status, 422)

    def test_diff_changed_pairs_use_the_wire_names(self) -> None:
        # A changed entry is a (from_, to) pair like the wire's {"from", "to"} and the TypeScript client's.
        scope = new_scope()
        self.pc.capture_source(scope, "Staging uses PostgreSQL 16.")
        first = self.pc.flush_memory(scope)
        self.pc.capture_source(scope, "Staging uses PostgreSQL 17.")
        second = self.pc.flush_memory(scope)
        diff = self.pc.diff_memory(scope, from_=first.memory.revision, to=second.memory.revision)
        self.assertEqual((diff.from_, diff.to), (first.memory.revision, second.memory.revision))
        self.assertEqual(len(diff.changed), 1)
        change = diff.changed[0]
        self.assertEqual((change.from_.content, change.to.content),
                         ("Staging uses PostgreSQL 16.", "Staging uses PostgreSQL 17."))
        self.assertEqual(change.from_.entry_id, change.to.entry_id)

    def test_forget_source_and_erase_scope(self) -> None:
        scope = new_scope() + "/sub"
        self.pc.capture_source(scope, "The user prefers metric units.", source_id="m/1")
        self.pc.flush_memory(scope)
        forgotten = self.pc.forget_source(scope, "m/1")
        self.assertEqual(forgotten.journal_position, 1)
        self.assertIsNotNone(forgotten.operation_id)
        op = self.pc.wait_operation(forgotten.operation_id)
        self.assertEqual((op.kind, op.status), ("memory_redact", "succeeded"))
        self.assertEqual(op.result.type, "memory_redact")
        self.assertEqual(self.pc.get_memory(scope).entries, [])
        with self.assertRaises(APIError) as ctx:
            self.pc.forget_source(scope, "nope")
        self.assertEqual((ctx.exception.status, ctx.exception.code), (404, "source_not_found"))
        erased = self.pc.erase_scope(scope)
        self.assertEqual(erased.scope_id, scope)
        op = self.pc.wait_operation(erased.operation_id)
        self.assertEqual((op.kind, op.status), ("scope_erase", "succeeded"))
        self.assertEqual(self.pc.list_sources(scope).items, [])

    def test_deadline_raises_pending_then_wait_operation_finishes(self) -> None:
        scope = new_scope()
        self.pc.capture_source(scope, "A fact to flush.")
        impatient = Client(server.url, token=server.token, operation_deadline=0)
        with self.assertRaises(OperationPendingError) as ctx:
            impatient.flush_memory(scope)
        op_id = ctx.exception.operation_id
        self.assertTrue(op_id)
        done = self.pc.wait_operation(op_id)
        self.assertEqual(done.status, "succeeded")

    def test_submit_flush_answers_202_with_the_operation(self) -> None:
        scope = new_scope()
        self.pc.capture_source(scope, "Another fact.")
        status, body = self.pc.submit_flush(scope, wait=0)
        self.assertEqual(status, 202)
        self.assertEqual(body["status_url"], "/v1/operations/" + body["operation_id"])
        self.pc.wait_operation(body["operation_id"])

    def test_stale_version_is_an_operation_conflict(self) -> None:
        scope = new_scope()
        self.pc.capture_source(scope, "Fact.")
        result = self.pc.flush_memory(scope)
        op = self.pc.get_operation(result.operation_id)
        with self.assertRaises(APIError) as ctx:
            self.pc.cancel_operation(op.operation_id, op.state_version)  # succeeded: cannot be cancelled
        err = ctx.exception
        self.assertEqual((err.status, err.code), (409, "operation_conflict"))
        self.assertEqual(err.details["actual_version"], op.state_version)
        self.assertEqual(err.details["status"], "succeeded")
        self.assertTrue(err.request_id)
        with self.assertRaises(APIError) as ctx:
            self.pc.skip_operation(op.operation_id, op.state_version)  # only a failed window can be skipped
        self.assertEqual((ctx.exception.status, ctx.exception.code), (409, "operation_conflict"))

    def test_errors_carry_code_field_and_request_id(self) -> None:
        with self.assertRaises(APIError) as ctx:
            self.pc.capture_source("", "x")
        self.assertEqual((ctx.exception.status, ctx.exception.code, ctx.exception.field),
                         (422, "invalid_request", "scope_id"))
        with self.assertRaises(APIError) as ctx:
            self.pc.get_operation("no-such-operation")
        self.assertEqual((ctx.exception.status, ctx.exception.code), (404, "operation_not_found"))
        with self.assertRaises(APIError) as ctx:
            self.pc.approve_candidate("no-such-candidate", 1)
        self.assertEqual(ctx.exception.code, "candidate_not_found")
        with self.assertRaises(APIError) as ctx:
            Client(server.url, token="wrong").get_memory("s")
        self.assertEqual((ctx.exception.status, ctx.exception.code), (401, "unauthorized"))
        self.assertTrue(ctx.exception.request_id)
        self.assertFalse(ctx.exception.temporary)

    def test_unreachable_server_is_a_connection_error(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with self.assertRaises(ConnectionFailedError) as ctx:
            Client(f"http://127.0.0.1:{port}", timeout=2).get_memory("s")
        self.assertIsInstance(ctx.exception, ConnectionError)

    def test_runtime_and_experience_reads(self) -> None:
        health = self.pc.ready()
        self.assertTrue(health.serving)
        self.assertEqual(health.checks["database"], "ok")
        members = self.pc.members()
        self.assertEqual([m.role for m in members], ["all"])
        self.assertEqual(self.pc.list_experience_candidates(new_scope()), [])
        memory = self.pc.get_memory(new_scope())
        self.assertIsNone(memory.revision)
        self.assertEqual(memory.entries, [])


if __name__ == "__main__":
    unittest.main()
