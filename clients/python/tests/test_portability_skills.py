"""Scope export/import and Skills through the Python client against a real powercontext server (see server.py)."""

from __future__ import annotations

import http.server
import io
import threading
import time
import unittest
import uuid

from powercontext import APIError, Client, ExportIncompleteError

from .server import Server

server: Server


def setUpModule() -> None:
    global server
    server = Server().start()


def tearDownModule() -> None:
    server.stop()


def new_scope() -> str:
    return "py-" + uuid.uuid4().hex[:12]


class _Stream(http.server.BaseHTTPRequestHandler):
    """Answers every GET with ``body`` as application/x-ndjson (a stream cut before its trailer, say)."""

    body = b""

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


class PortabilityTest(unittest.TestCase):
    def setUp(self) -> None:
        self.pc = Client(server.url, token=server.token, operation_deadline=30, poll_interval=0.05)

    def _exported(self) -> tuple[str, bytes]:
        scope = new_scope()
        self.pc.capture_source(scope, "The user prefers metric units.")
        self.pc.capture_source(scope, "用户每天早上八点开会。")
        self.pc.flush_memory(scope)
        buf = io.BytesIO()
        n = self.pc.export_scope(scope, buf)
        self.assertEqual(n, len(buf.getvalue()))
        return scope, buf.getvalue()

    def test_export_then_import_as_another_scope_reads_the_same_memory(self) -> None:
        scope, stream = self._exported()
        lines = stream.splitlines()
        self.assertIn(b'"type":"header"', lines[0])
        self.assertIn(b'"type":"trailer"', lines[-1])

        target = new_scope()
        result = self.pc.import_scope(target, io.BytesIO(stream))
        self.assertEqual((result.scope_id, result.source_scope_id), (target, scope))
        self.assertEqual(result.counts.sources, 2)
        self.assertGreaterEqual(result.counts.revisions, 1)
        self.assertTrue(result.operation_id)
        before, after = self.pc.get_memory(scope), self.pc.get_memory(target)
        self.assertEqual(after.revision, before.revision)
        self.assertEqual(after.entries, before.entries)
        self.assertEqual([s.content for s in self.pc.list_sources(target).items],
                         [s.content for s in self.pc.list_sources(scope).items])

        # The target is no longer empty: a second import is refused (bytes work as well as a file).
        with self.assertRaises(APIError) as ctx:
            self.pc.import_scope(target, stream)
        self.assertEqual((ctx.exception.status, ctx.exception.code), (409, "scope_not_empty"))

    def test_a_stream_without_its_trailer_is_refused_by_server_and_client(self) -> None:
        _, stream = self._exported()
        cut = b"".join(stream.splitlines(keepends=True)[:-1])
        with self.assertRaises(APIError) as ctx:
            self.pc.import_scope(new_scope(), cut)
        self.assertEqual((ctx.exception.status, ctx.exception.code), (422, "import_truncated"))

        # Client-side: a server whose export stream stops before the trailer.
        _Stream.body = cut
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Stream)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{httpd.server_address[1]}"
            buf = io.BytesIO()
            with self.assertRaises(ExportIncompleteError) as inc:
                Client(url).export_scope("s", buf)
            self.assertEqual(inc.exception.written, len(cut))
            self.assertEqual(buf.getvalue(), cut)
        finally:
            httpd.shutdown()
            httpd.server_close()

    def test_export_errors_map_to_api_error(self) -> None:
        with self.assertRaises(APIError) as ctx:
            Client(server.url, token="wrong").export_scope(new_scope(), io.BytesIO())
        self.assertEqual((ctx.exception.status, ctx.exception.code), (401, "unauthorized"))


class SkillsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.pc = Client(server.url, token=server.token, operation_deadline=30, poll_interval=0.05)

    def test_an_approved_lesson_becomes_a_packaged_skill(self) -> None:
        scope = new_scope()
        self.assertEqual(self.pc.list_skills(scope), [])
        self.pc.capture_source(scope, "Retrying the flaky test twice hid a real race. Always run with -race.",
                               metadata={"kind": "task-outcome"})
        self.pc.incubate_experience(scope)
        cand = self.pc.list_experience_candidates(scope, status="pending")[0]
        self.pc.approve_candidate(cand.candidate_id, cand.state_version)

        deadline = time.monotonic() + 30
        skills = self.pc.list_skills(scope)
        while not skills and time.monotonic() < deadline:
            time.sleep(0.1)
            skills = self.pc.list_skills(scope)
        self.assertEqual(len(skills), 1, "no skill packaged within 30 s")
        skill = skills[0]
        self.assertEqual((skill.scope_id, skill.current_revision), (scope, 1))
        revisions = self.pc.list_skill_revisions(scope, skill.name)
        self.assertEqual([r.revision for r in revisions], [1])
        self.assertEqual(revisions[0].source_candidate_ids, [cand.candidate_id])
        self.assertEqual(len(revisions[0].tree_digest), 64)

        target = self.pc.register_skill_target(scope, "claude_code", "ci").target
        pub = self.pc.publish_skill(target.target_id, skill.name)
        self.assertEqual((pub.skill_name, pub.desired_state, pub.desired_revision, pub.observed_revision),
                         (skill.name, "published", 1, None))
        self.assertEqual([p.skill_name for p in self.pc.list_skill_publications(target.target_id)], [skill.name])
        self.assertEqual(self.pc.publish_skill(target.target_id, skill.name, unpublish=True).desired_state,
                         "unpublished")
        self.assertEqual(self.pc.list_skill_revisions(scope, "no-such-skill"), [])

    def test_register_list_and_revoke_a_target(self) -> None:
        scope = new_scope()
        reg = self.pc.register_skill_target(scope, "claude_code", "laptop")
        self.assertTrue(reg.enrollment_token)
        t = reg.target
        self.assertEqual((t.scope_id, t.agent_kind, t.display_name, t.enrolled), (scope, "claude_code", "laptop",
                                                                                    False))
        self.assertIsNotNone(t.enrollment_expires_at)
        self.assertIsNone(t.revoked_at)
        listed = self.pc.list_skill_targets(scope)
        self.assertEqual([x.target_id for x in listed], [t.target_id])  # the token is shown once: not here
        self.assertEqual(self.pc.list_skill_publications(t.target_id), [])

        revoked = self.pc.revoke_skill_target(t.target_id)
        self.assertIsNotNone(revoked.revoked_at)
        with self.assertRaises(APIError) as ctx:
            self.pc.register_skill_target(scope, "Not A Kind", "x")
        self.assertEqual((ctx.exception.status, ctx.exception.code), (422, "invalid_request"))


if __name__ == "__main__":
    unittest.main()
